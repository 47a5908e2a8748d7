// Internal to the text front end: the token cursor and the module parser that both
// wat_to_binary and the WAST script parser drive.
#pragma once

#include "wasm/text/lexer.hpp"
#include "wasm/text/wat.hpp"

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm::text {

class Cursor {
 public:
  explicit Cursor(const std::vector<Token>& tokens) : tokens_(tokens) {}

  [[nodiscard]] const Token& peek(std::size_t ahead = 0) const {
    const std::size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  [[nodiscard]] bool at(TokenKind kind) const { return peek().kind == kind; }
  [[nodiscard]] bool at_keyword(std::string_view kw) const {
    return peek().kind == TokenKind::Keyword && peek().text == kw;
  }
  // `(` followed by keyword `kw`.
  [[nodiscard]] bool at_form(std::string_view kw) const {
    return peek().kind == TokenKind::LParen && peek(1).kind == TokenKind::Keyword && peek(1).text == kw;
  }
  [[nodiscard]] std::size_t position() const { return pos_; }
  void reset(std::size_t pos) { pos_ = pos; }

 private:
  const std::vector<Token>& tokens_;
  std::size_t pos_ = 0;
};

// "unknown operator" for a token the lexer could not make sense of (reserved tokens, malformed
// numbers, unknown keywords), else "unexpected token"; `expected` names what would have fit.
[[nodiscard]] TextError unexpected(const Token& token, std::string_view expected);
[[nodiscard]] TextError error_at(const Token& token, std::string message);

// The text of a token for messages: "')'", "\"foo\"", "end of input".
[[nodiscard]] std::string describe(const Token& token);
// "unknown operator NAME" at the token.
[[nodiscard]] TextError unknown_operator(const Token& token);

// A `(module …)` as written in a script.
struct ModuleText {
  enum class Form : std::uint8_t { Fields, Binary, Quote };
  Form form = Form::Fields;
  std::string id;                  // `$name`, or empty
  bool definition = false;         // `(module definition …)`: a script's module compiled, not instantiated
  std::vector<std::uint8_t> bytes; // Fields (compiled) and Binary
  std::string quote;               // Quote: the concatenated strings
};

// Parses `(module definition? $id? …)` at the cursor (which must be at its '('): an ordinary module is
// compiled, a binary or quote one returned as written.
[[nodiscard]] std::expected<ModuleText, TextError> parse_module_form(Cursor& cursor, const WatOptions& options);

// Compiles module fields at the cursor up to (not including) the ')' closing the module, or to
// Eof when `bare` is set. `module_id` ($name or empty) goes into the name section when asked for.
[[nodiscard]] std::expected<std::vector<std::uint8_t>, TextError> compile_fields(Cursor& cursor, bool bare,
                                                                               const WatOptions& options,
                                                                               std::string_view module_id);

// Concatenates the String tokens at the cursor (for `binary` and `quote` modules).
[[nodiscard]] std::string take_strings(Cursor& cursor);

}  // namespace sprawling::wasm::text
