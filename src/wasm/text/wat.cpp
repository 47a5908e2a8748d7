// wat_to_binary and the loader helpers: one module (or bare fields) in, its binary out.
#include "wasm/text/wat.hpp"

#include "wasm/text/lexer.hpp"
#include "wasm/text/module_parser.hpp"

#include <string>

namespace sprawling::wasm::text {

std::string TextError::to_string() const {
  return message + " at " + std::to_string(line) + ":" + std::to_string(column);
}

std::expected<WatModuleBytes, TextError> wat_to_module_bytes(std::string_view source, const WatOptions& options) {
  auto tokens = tokenize(source);
  if (!tokens) return std::unexpected(std::move(tokens.error()));
  Cursor cursor(tokens->list);
  if (cursor.at_form("module")) {
    auto module = parse_module_form(cursor, options);
    if (!module) return std::unexpected(std::move(module.error()));
    if (!cursor.at(TokenKind::Eof)) return std::unexpected(unexpected(cursor.peek(), "end of input"));
    if (module->form == ModuleText::Form::Quote) return wat_to_module_bytes(module->quote, options);
    return WatModuleBytes{.bytes = std::move(module->bytes),
                          .form = module->form == ModuleText::Form::Binary ? WatForm::Binary : WatForm::Fields};
  }
  auto bytes = compile_fields(cursor, /*bare=*/true, options, {});
  if (!bytes) return std::unexpected(std::move(bytes.error()));
  return WatModuleBytes{.bytes = std::move(*bytes), .form = WatForm::Fields};
}

std::expected<std::vector<std::uint8_t>, TextError> wat_to_binary(std::string_view source, const WatOptions& options) {
  auto module = wat_to_module_bytes(source, options);
  if (!module) return std::unexpected(std::move(module.error()));
  return std::move(module->bytes);
}

bool looks_like_wat(std::span<const std::uint8_t> bytes) noexcept {
  if (bytes.size() >= 4 && bytes[0] == 0x00 && bytes[1] == 'a' && bytes[2] == 's' && bytes[3] == 'm') return false;
  std::size_t i = 0;
  const std::size_t n = bytes.size();
  // A UTF-8 byte order mark is not part of the text.
  if (n >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) i = 3;
  while (i < n) {
    const std::uint8_t c = bytes[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++i;
    } else if (c == ';' && i + 1 < n && bytes[i + 1] == ';') {
      while (i < n && bytes[i] != '\n') ++i;
    } else if (c == '(' && i + 1 < n && bytes[i + 1] == ';') {
      int depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (bytes[i] == '(' && i + 1 < n && bytes[i + 1] == ';') {
          ++depth;
          i += 2;
        } else if (bytes[i] == ';' && i + 1 < n && bytes[i + 1] == ')') {
          --depth;
          i += 2;
        } else {
          ++i;
        }
      }
    } else {
      return c == '(';
    }
  }
  return false;
}

std::expected<std::vector<std::uint8_t>, std::string> load_module_bytes(std::span<const std::uint8_t> bytes) {
  if (!looks_like_wat(bytes)) return std::vector<std::uint8_t>(bytes.begin(), bytes.end());
  std::size_t skip = 0;
  if (bytes.size() >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) skip = 3;
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + skip, bytes.size() - skip);
  auto binary = wat_to_binary(text, WatOptions{.debug_names = true});
  if (!binary) return std::unexpected(binary.error().to_string());
  return std::move(*binary);
}

}  // namespace sprawling::wasm::text
