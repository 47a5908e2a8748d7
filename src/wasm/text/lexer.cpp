// The text-format lexer: maximal runs of idchars and strings become one token, which is how
// the spec (and its reference interpreter) turns `0drop` or `"a""b"` into a single bad token.
#include "wasm/text/lexer.hpp"

#include <string>

namespace sprawling::wasm::text {

namespace {

// https://webassembly.github.io/spec/core/text/values.html#text-idchar
constexpr bool is_idchar(char c) noexcept {
  if (c >= '0' && c <= '9') return true;
  if (c >= 'a' && c <= 'z') return true;
  if (c >= 'A' && c <= 'Z') return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
    case '.': case '/': case ':': case '<': case '=': case '>': case '?': case '@': case '\\':
    case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

constexpr int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::expected<std::vector<Token>, TextError> run() {
    std::vector<Token> tokens;
    tokens.reserve(src_.size() / 16 + 16);  // typical text has a token per 8-20 bytes; growth covers the rest
    for (;;) {
      if (auto err = skip_space(); !err.message.empty()) return std::unexpected(std::move(err));
      Token tok;
      tok.line = line_;
      tok.column = column();
      if (pos_ >= src_.size()) {
        tok.kind = TokenKind::Eof;
        tokens.push_back(tok);
        return tokens;
      }
      const char c = src_[pos_];
      if (c == '(') {
        tok.kind = TokenKind::LParen;
        tok.text = src_.substr(pos_, 1);
        ++pos_;
      } else if (c == ')') {
        tok.kind = TokenKind::RParen;
        tok.text = src_.substr(pos_, 1);
        ++pos_;
      } else if (c == '"' || is_idchar(c)) {
        auto r = chunk(tok);
        if (!r) return std::unexpected(std::move(r.error()));
      } else {
        return std::unexpected(error_here("unexpected character"));
      }
      tokens.push_back(tok);
    }
  }

 private:
  std::uint32_t column() const { return static_cast<std::uint32_t>(pos_ - line_start_ + 1); }

  TextError error_here(std::string msg) const { return TextError{line_, column(), std::move(msg)}; }

  void newline() {
    ++line_;
    line_start_ = pos_ + 1;
  }

  // Whitespace, `;; line` and nested `(; block ;)` comments. Returns an error with an empty message on success.
  TextError skip_space() {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n') {
        newline();
        ++pos_;
      } else if (c == ';' && pos_ + 1 < src_.size() && src_[pos_ + 1] == ';') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else if (c == '(' && pos_ + 1 < src_.size() && src_[pos_ + 1] == ';') {
        const auto start_line = line_;
        const auto start_col = column();
        pos_ += 2;
        int depth = 1;
        while (depth > 0) {
          if (pos_ >= src_.size()) return TextError{start_line, start_col, "unclosed comment"};
          if (src_[pos_] == '(' && pos_ + 1 < src_.size() && src_[pos_ + 1] == ';') {
            ++depth;
            pos_ += 2;
          } else if (src_[pos_] == ';' && pos_ + 1 < src_.size() && src_[pos_ + 1] == ')') {
            --depth;
            pos_ += 2;
          } else {
            if (src_[pos_] == '\n') newline();
            ++pos_;
          }
        }
      } else {
        break;
      }
    }
    return TextError{};
  }

  // A string body starting after the opening quote; leaves pos_ after the closing quote.
  std::expected<void, TextError> string_body() {
    for (;;) {
      if (pos_ >= src_.size() || src_[pos_] == '\n') return std::unexpected(error_here("unclosed string"));
      const auto ch = static_cast<unsigned char>(src_[pos_]);
      if (ch == '"') {
        ++pos_;
        return {};
      }
      if (ch < 0x20 || ch == 0x7F) return std::unexpected(error_here("illegal control character in string"));
      if (ch != '\\') {
        ++pos_;
        continue;
      }
      const auto esc_col = column();
      ++pos_;
      if (pos_ >= src_.size()) return std::unexpected(error_here("unclosed string"));
      const char e = src_[pos_];
      switch (e) {
        case 't': case 'n': case 'r': case '"': case '\'': case '\\':
          ++pos_;
          break;
        case 'u': {
          ++pos_;
          if (pos_ >= src_.size() || src_[pos_] != '{')
            return std::unexpected(TextError{line_, esc_col, "illegal escape"});
          ++pos_;
          std::uint64_t cp = 0;
          std::size_t digits = 0;
          bool last_underscore = false;
          while (pos_ < src_.size() && (hex_value(src_[pos_]) >= 0 || src_[pos_] == '_')) {
            if (src_[pos_] == '_') {
              if (digits == 0 || last_underscore) return std::unexpected(TextError{line_, esc_col, "illegal escape"});
              last_underscore = true;
            } else {
              last_underscore = false;
              cp = cp * 16 + static_cast<std::uint64_t>(hex_value(src_[pos_]));
              if (cp > 0x10FFFF) cp = 0x110000;
              ++digits;
            }
            ++pos_;
          }
          if (digits == 0 || last_underscore || pos_ >= src_.size() || src_[pos_] != '}')
            return std::unexpected(TextError{line_, esc_col, "illegal escape"});
          ++pos_;
          if (cp >= 0x110000 || (cp >= 0xD800 && cp < 0xE000))
            return std::unexpected(TextError{line_, esc_col, "malformed UTF-8 encoding: \\u escape is not a Unicode scalar value"});
          break;
        }
        default:
          if (pos_ + 1 < src_.size() && hex_value(e) >= 0 && hex_value(src_[pos_ + 1]) >= 0) {
            pos_ += 2;
            break;
          }
          return std::unexpected(TextError{line_, esc_col, "illegal escape"});
      }
    }
  }

  std::expected<void, TextError> chunk(Token& tok) {
    const std::size_t start = pos_;
    bool has_string = false;
    bool has_idchars = false;
    std::size_t strings = 0;
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == '"') {
        ++pos_;
        if (auto r = string_body(); !r) return r;
        has_string = true;
        ++strings;
      } else if (is_idchar(c)) {
        ++pos_;
        has_idchars = true;
      } else {
        break;
      }
    }
    tok.text = src_.substr(start, pos_ - start);
    if (has_string) {
      tok.kind = (!has_idchars && strings == 1) ? TokenKind::String : TokenKind::Reserved;
      return {};
    }
    const char c0 = tok.text[0];
    if (c0 >= 'a' && c0 <= 'z') {
      tok.kind = TokenKind::Keyword;
    } else if (c0 == '$' && tok.text.size() > 1) {
      tok.kind = TokenKind::Id;
    } else if ((c0 >= '0' && c0 <= '9') ||
               ((c0 == '+' || c0 == '-') && tok.text.size() > 1)) {
      tok.kind = TokenKind::Number;
    } else {
      tok.kind = TokenKind::Reserved;
    }
    return {};
  }

  std::string_view src_;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1;
  std::size_t line_start_ = 0;
};

}  // namespace

std::expected<std::vector<Token>, TextError> tokenize(std::string_view source) { return Lexer(source).run(); }

std::string string_bytes(const Token& token) {
  std::string out;
  const std::string_view s = token.text.substr(1, token.text.size() - 2);
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out.push_back(s[i]);
      continue;
    }
    const char e = s[++i];
    switch (e) {
      case 't': out.push_back('\t'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case '"': out.push_back('"'); break;
      case '\'': out.push_back('\''); break;
      case '\\': out.push_back('\\'); break;
      case 'u': {
        i += 2;  // 'u' '{'
        std::uint32_t cp = 0;
        for (; s[i] != '}'; ++i) {
          if (s[i] != '_') cp = cp * 16 + static_cast<std::uint32_t>(hex_value(s[i]));
        }
        append_utf8(out, cp);
        break;
      }
      default:
        out.push_back(static_cast<char>(hex_value(e) * 16 + hex_value(s[i + 1])));
        ++i;
        break;
    }
  }
  return out;
}

}  // namespace sprawling::wasm::text
