// WAT → binary: the text-format front end (WebAssembly 2.0, fixed-width SIMD included), plus the helpers
// that let every loader accept a `.wat` wherever it accepts a `.wasm`.
// https://webassembly.github.io/spec/core/text/index.html
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm::text {

// A text-format error. `message` starts with the spec testsuite's assert_malformed wording
// where it has one ("unknown operator", "unexpected token", "alignment", "constant out of
// range", "unknown type", "mismatching label", "inline function type", "duplicate func", …),
// detail after it.
struct TextError {
  std::size_t line = 0;    // 1-based
  std::size_t column = 0;  // 1-based, in bytes
  std::string message;

  // "<message> at <line>:<column>"
  [[nodiscard]] std::string to_string() const;
};

struct WatOptions {
  // Append a "name" custom section with the module's $id and the functions' $ids (without the
  // `$`), so traps can name the function (like wat2wasm --debug-names, without local names).
  bool debug_names = false;
  // memory64 (on, as in WebAssembly 3.0): memarg offsets and alignments may take 64 bits; off, as
  // in 2.0, a larger `offset=` is "i32 constant out of range".
  bool memory64 = true;
  // Typed function references (on, as in 3.0): an element list written `funcref (ref.func $f) …`
  // is encoded as expressions (type funcref), since 3.0 types a list of function indices
  // (ref func); off, as in 2.0 and wabt 1.0.32, as function indices (the same type there).
  bool function_references = true;
};

// One module: `(module $id? field*)`, `(module binary "…"*)`, `(module quote "…"*)`, or a bare
// sequence of module fields (as wat2wasm accepts). The binary follows wabt's encoding choices
// (canonical LEBs, inline block types where they fit, the legacy element-segment forms) so it
// matches wat2wasm byte for byte on the spec testsuite (with the default options).
[[nodiscard]] std::expected<std::vector<std::uint8_t>, TextError> wat_to_binary(std::string_view source,
                                                                              const WatOptions& options = {});

// How the bytes came to be: encoded by this parser from module fields, or given as the strings
// of `(module binary "…")` (directly or inside `(module quote …)`), which pass through as they
// are — those may be anything, malformed included; the decoder judges them.
enum class WatForm { Fields, Binary };
struct WatModuleBytes {
  std::vector<std::uint8_t> bytes;
  WatForm form = WatForm::Fields;
};
// wat_to_binary, also saying which form the module had.
[[nodiscard]] std::expected<WatModuleBytes, TextError> wat_to_module_bytes(std::string_view source,
                                                                        const WatOptions& options = {});

// True if `bytes` is not a binary module (no "\0asm" magic) and its first token after
// whitespace and comments is '('.
[[nodiscard]] bool looks_like_wat(std::span<const std::uint8_t> bytes) noexcept;

// Binary modules pass through unchanged; text modules are converted with debug names on (so
// traps in `sprawl run x.wat` name their function). The error is TextError::to_string().
[[nodiscard]] std::expected<std::vector<std::uint8_t>, std::string> load_module_bytes(std::span<const std::uint8_t> bytes);

}  // namespace sprawling::wasm::text
