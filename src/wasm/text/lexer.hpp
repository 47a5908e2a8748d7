// The WebAssembly text-format lexer: source text → tokens with line:column, and string
// unescaping (https://webassembly.github.io/spec/core/text/lexical.html).
#pragma once

#include "wasm/text/wat.hpp"

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm::text {

enum class TokenKind : std::uint8_t {
  LParen,
  RParen,
  Keyword,   // starts with a-z: `module`, `i32.add`, `offset=4`, `nan:0x1`, `inf`
  Id,        // `$name` or `$"name"`: `text` is the canonical `$` + name bytes, so both spellings compare equal
  Number,    // starts with a digit or a sign: checked by whoever expects a number (so v128 lanes can reuse it)
  String,    // "…": `text` includes the quotes; decode with string_bytes()
  Reserved,  // any other run of idchars/strings, e.g. `0drop`, `"a""b"`, `$x"y"`: "unknown operator" wherever met
  Eof,
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  std::string_view text;
  std::uint32_t line = 1;
  std::uint32_t column = 1;
};

// The tokens of one source (the last one is Eof). A quoted identifier's canonical text has no
// place in the source, so it is kept here: the tokens' views stay valid as long as this lives
// (moving it keeps them valid too).
struct Tokens {
  std::vector<Token> list;
  std::vector<std::unique_ptr<std::string>> names;
};

// Splits the whole source into tokens. Comments, annotations (`(@id …)`, checked but ignored) and
// whitespace are dropped; an unclosed string, comment or annotation, a bad escape, an empty
// identifier or a stray character is an error.
[[nodiscard]] std::expected<Tokens, TextError> tokenize(std::string_view source);

// The bytes a String token denotes (escapes resolved). Precondition: token.kind == String
// (tokenize() already checked the escapes).
[[nodiscard]] std::string string_bytes(const Token& token);

}  // namespace sprawling::wasm::text
