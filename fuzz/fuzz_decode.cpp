// Fuzz target (a): arbitrary bytes through decode + validate and through compile (which also
// translates); both must agree on acceptance and never crash, leak or overrun.
#include "wasm/binary/decoder.hpp"
#include "wasm/icode/internal_verify.hpp"
#include "wasm/runtime/runtime.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sprawling::wasm::set_code_verification(true);  // every translation is checked (internal_verify.hpp)
  const std::span<const std::uint8_t> bytes(data, size);
  auto decoded = sprawling::wasm::decode_and_validate(bytes);
  auto compiled = sprawling::wasm::compile(bytes);
  if (decoded.has_value() != compiled.has_value()) {
    std::fprintf(stderr, "decode_and_validate %s but compile %s: %s\n", decoded ? "accepts" : "rejects",
                 compiled ? "accepts" : "rejects",
                 decoded ? compiled.error().message.c_str() : decoded.error().message.c_str());
    std::abort();
  }
  if (!decoded && decoded.error().offset > size) {
    std::fprintf(stderr, "error offset %zu past the end (%zu bytes): %s\n", decoded.error().offset, size,
                 decoded.error().message.c_str());
    std::abort();
  }
  return 0;
}
