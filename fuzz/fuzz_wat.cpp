// Fuzz target (b): arbitrary text through the WAT parser. Whatever it accepts and encodes must be
// a well-formed binary (the decoder may still find it invalid, as wat2wasm's output can be); the
// strings of `(module binary …)` pass through as written and are the decoder's to judge.
#include "wasm/binary/decoder.hpp"
#include "wasm/text/wat.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  auto binary = sprawling::wasm::text::wat_to_module_bytes(source);
  if (!binary) {
    if (binary.error().message.empty()) {
      std::fprintf(stderr, "a text error without a message at %zu:%zu\n", binary.error().line, binary.error().column);
      std::abort();
    }
    return 0;
  }
  // `(module binary "…")` bytes pass through as written: only what the parser encoded must be well formed.
  if (binary->form == sprawling::wasm::text::WatForm::Binary) return 0;
  auto module = sprawling::wasm::decode_and_validate(binary->bytes);
  if (!module && module.error().kind == sprawling::wasm::CompileError::Kind::Malformed) {
    std::fprintf(stderr, "the WAT parser accepted text whose binary is malformed: %s at 0x%zx\n",
                 module.error().message.c_str(), module.error().offset);
    std::abort();
  }
  return 0;
}
