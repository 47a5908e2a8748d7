// The text-format lexer: maximal runs of idchars and strings become one token, which is how
// the spec (and its reference interpreter) turns `0drop` or `"a""b"` into a single bad token.
#include "wasm/text/lexer.hpp"

#include "wasm/support/utf8.hpp"

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

// The bytes of a quoted string (quotes included in `quoted`) whose escapes the lexer checked.
std::string decode_string(std::string_view quoted) {
  std::string out;
  const std::string_view s = quoted.substr(1, quoted.size() - 2);
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

// The length of the UTF-8 sequence a lead byte announces (0: not a lead byte).
constexpr std::size_t utf8_length(unsigned char lead) noexcept {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

// The characters the 3.0 text format reserves besides idchars and strings: met as a token they
// are an unknown operator, inside an annotation they are allowed.
constexpr bool is_reserved_punct(char c) noexcept {
  return c == ',' || c == ';' || c == '[' || c == ']' || c == '{' || c == '}';
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::expected<Tokens, TextError> run() {
    Tokens out;
    std::vector<Token>& tokens = out.list;
    tokens.reserve(src_.size() / 16 + 16);  // typical text has a token per 8-20 bytes; growth covers the rest
    for (;;) {
      if (auto err = skip_space(); !err.message.empty()) return std::unexpected(std::move(err));
      Token tok;
      tok.line = line_;
      tok.column = column();
      if (pos_ >= src_.size()) {
        tok.kind = TokenKind::Eof;
        tokens.push_back(tok);
        out.names = std::move(names_);
        return out;
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

  // Whitespace, `;; line` and nested `(; block ;)` comments, and (between tokens, not inside an
  // annotation, where `(@` is plain text) annotations. Returns an error with an empty message on success.
  TextError skip_space(bool annotations = true) {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n') {
        newline();
        ++pos_;
      } else if (c == ';' && pos_ + 1 < src_.size() && src_[pos_ + 1] == ';') {
        // A line comment ends at a newline: LF, CR or CR LF.
        while (pos_ < src_.size() && src_[pos_] != '\n' && src_[pos_] != '\r') ++pos_;
      } else if (annotations && c == '(' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '@') {
        if (auto err = annotation(); !err.message.empty()) return err;
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

  // `(@id …)`: an annotation, which this engine reads past (it uses none). Its id is idchars or a
  // non-empty UTF-8 string; its body any balanced run of tokens, strings, comments and the
  // reserved punctuation. Starts at the `(`; leaves pos_ after the matching `)`.
  TextError annotation() {
    const TextError at_start{line_, column(), ""};
    pos_ += 2;
    if (pos_ < src_.size() && src_[pos_] == '"') {
      const std::size_t open = pos_++;
      if (!string_body()) return TextError{at_start.line, at_start.column, "empty annotation id (its string is malformed)"};
      const std::string id = decode_string(src_.substr(open, pos_ - open));
      if (id.empty()) return TextError{at_start.line, at_start.column, "empty annotation id"};
      if (!is_valid_utf8(id)) return TextError{at_start.line, at_start.column, "malformed UTF-8 encoding in an annotation id"};
    } else if (pos_ < src_.size() && is_idchar(src_[pos_])) {
      while (pos_ < src_.size() && is_idchar(src_[pos_])) ++pos_;
    } else {
      return TextError{at_start.line, at_start.column, "empty annotation id"};
    }
    int depth = 1;
    for (;;) {
      if (auto err = skip_space(/*annotations=*/false); !err.message.empty()) return err;
      if (pos_ >= src_.size()) return TextError{at_start.line, at_start.column, "unclosed annotation"};
      const auto ch = static_cast<unsigned char>(src_[pos_]);
      if (ch == '(') {
        ++depth;
        ++pos_;
      } else if (ch == ')') {
        ++pos_;
        if (--depth == 0) return TextError{};
      } else if (ch == '"') {
        ++pos_;
        if (auto r = string_body(); !r) return r.error();
      } else if (is_idchar(src_[pos_]) || is_reserved_punct(src_[pos_])) {
        ++pos_;
      } else if (ch >= 0x80) {
        const std::size_t len = utf8_length(ch);
        const bool well_formed = len != 0 && len <= src_.size() - pos_ && is_valid_utf8(src_.substr(pos_, len));
        return error_here(well_formed ? "illegal character (outside a string, text is ASCII)" : "malformed UTF-8 encoding");
      } else {
        return error_here("illegal character");
      }
    }
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
    std::size_t idchars = 0;
    std::size_t strings = 0;
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == '"') {
        ++pos_;
        if (auto r = string_body(); !r) {
          // `$"…` is an identifier whose name did not lex: say so first (the spec's wording).
          if (pos_ > start && src_[start] == '$' && idchars == 1 && strings == 0)
            return std::unexpected(TextError{tok.line, tok.column, "empty identifier (its string: " + r.error().message + ")"});
          return r;
        }
        has_string = true;
        ++strings;
      } else if (is_idchar(c)) {
        ++pos_;
        ++idchars;
      } else {
        break;
      }
    }
    tok.text = src_.substr(start, pos_ - start);
    if (has_string) {
      if (idchars == 1 && strings == 1 && tok.text[0] == '$' && tok.text[1] == '"') return quoted_id(tok);
      tok.kind = (idchars == 0 && strings == 1) ? TokenKind::String : TokenKind::Reserved;
      return {};
    }
    if (tok.text == "$") return std::unexpected(TextError{tok.line, tok.column, "empty identifier"});
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

  // `$"name"`: an identifier named by any non-empty UTF-8 string; its text becomes `$` + the
  // name's bytes, so `$"fh"` and `$fh` are one identifier.
  std::expected<void, TextError> quoted_id(Token& tok) {
    std::string name = decode_string(tok.text.substr(1));
    if (name.empty()) return std::unexpected(TextError{tok.line, tok.column, "empty identifier"});
    if (!is_valid_utf8(name)) return std::unexpected(TextError{tok.line, tok.column, "malformed UTF-8 encoding in an identifier"});
    names_.push_back(std::make_unique<std::string>("$" + name));
    tok.text = *names_.back();
    tok.kind = TokenKind::Id;
    return {};
  }

  std::string_view src_;
  std::vector<std::unique_ptr<std::string>> names_;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1;
  std::size_t line_start_ = 0;
};

}  // namespace

std::expected<Tokens, TextError> tokenize(std::string_view source) { return Lexer(source).run(); }

std::string string_bytes(const Token& token) { return decode_string(token.text); }

}  // namespace sprawling::wasm::text
