// The WAT module parser's entry points. Two passes: field_parser.cpp reads every field into a
// small syntax tree (syntax_tree.hpp), encoder.cpp resolves the remaining $names and writes the
// sections; this file holds what both passes and the script parser share (errors, the module form).
#include "wasm/text/module_parser.hpp"

#include "wasm/text/syntax_tree.hpp"

#include <string>
#include <utility>

namespace sprawling::wasm::text {

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::Eof: return "end of input";
    case TokenKind::LParen: return "'('";
    case TokenKind::RParen: return "')'";
    default: break;
  }
  std::string_view text = token.text;
  if (text.size() > 40) return "\"" + std::string(text.substr(0, 40)) + "…\"";
  return "\"" + std::string(text) + "\"";
}

TextError error_at(const Token& token, std::string message) {
  return TextError{token.line, token.column, std::move(message)};
}

TextError unknown_operator(const Token& token) {
  // The token as written, unquoted (the reference interpreter's wording: "unknown operator get_local").
  std::string_view text = token.text;
  if (text.size() > 40) return error_at(token, "unknown operator " + std::string(text.substr(0, 40)) + "…");
  return error_at(token, "unknown operator " + std::string(text));
}

TextError unexpected(const Token& token, std::string_view expected) {
  bool unknown = false;
  switch (token.kind) {
    case TokenKind::Reserved: unknown = true; break;
    case TokenKind::Number: unknown = !tree::is_well_formed_number(token.text); break;
    case TokenKind::Keyword: unknown = !tree::is_known_keyword(token.text); break;
    default: break;
  }
  if (unknown) return unknown_operator(token);
  return error_at(token, "unexpected token " + describe(token) + ", expected " + std::string(expected));
}

std::string take_strings(Cursor& cursor) {
  std::string out;
  while (cursor.at(TokenKind::String)) out += string_bytes(cursor.next());
  return out;
}

std::expected<std::vector<std::uint8_t>, TextError> compile_fields(Cursor& cursor, bool bare, const WatOptions& options,
                                                                 std::string_view module_id) {
  auto ast = tree::parse_fields(cursor, options, bare);
  if (!ast) return std::unexpected(std::move(ast.error()));
  return tree::encode_module(*ast, options, module_id);
}

std::expected<ModuleText, TextError> parse_module_form(Cursor& cursor, const WatOptions& options) {
  ModuleText out;
  cursor.next();  // '('
  if (!cursor.at_keyword("module")) return std::unexpected(unexpected(cursor.peek(), "'module'"));
  cursor.next();
  if (cursor.at_keyword("definition")) {
    cursor.next();
    out.definition = true;
  }
  if (cursor.at(TokenKind::Id)) out.id = std::string(cursor.next().text);
  if (cursor.at_keyword("binary") || cursor.at_keyword("quote")) {
    const bool binary = cursor.next().text == "binary";
    std::string text = take_strings(cursor);
    if (!cursor.at(TokenKind::RParen)) return std::unexpected(unexpected(cursor.peek(), "a string or ')'"));
    cursor.next();
    if (binary) {
      out.form = ModuleText::Form::Binary;
      out.bytes.assign(text.begin(), text.end());
    } else {
      out.form = ModuleText::Form::Quote;
      out.quote = std::move(text);
    }
    return out;
  }
  auto bytes = compile_fields(cursor, false, options, out.id);
  if (!bytes) return std::unexpected(std::move(bytes.error()));
  if (!cursor.at(TokenKind::RParen)) return std::unexpected(unexpected(cursor.peek(), "')'"));
  cursor.next();
  out.form = ModuleText::Form::Fields;
  out.bytes = std::move(*bytes);
  return out;
}

}  // namespace sprawling::wasm::text
