// The text-format lexer: token kinds, positions, comments, strings and their escapes, the
// reserved-token rule (`0drop`, `"a""b"`), and lexical errors with their line:column.
#include "wasm/text/lexer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sprawling::wasm::text {
namespace {

// The tokens of src; a quoted identifier's text lives in the Tokens, so tests keep it whole.
Tokens lex_all(std::string_view src) {
  auto r = tokenize(src);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? std::move(*r) : Tokens{};
}

std::vector<Token> lex(std::string_view src) { return lex_all(src).list; }

TextError lex_error(std::string_view src) {
  auto r = tokenize(src);
  EXPECT_FALSE(r.has_value());
  return r ? TextError{} : r.error();
}

TEST(Lexer, KindsAndPositions) {
  const auto t = lex("(module $m\n  (func i32.add 42 -1.5 \"s\"))");
  ASSERT_EQ(t.size(), 12u);
  EXPECT_EQ(t[0].kind, TokenKind::LParen);
  EXPECT_EQ(t[1].kind, TokenKind::Keyword);
  EXPECT_EQ(t[1].text, "module");
  EXPECT_EQ(t[2].kind, TokenKind::Id);
  EXPECT_EQ(t[2].text, "$m");
  EXPECT_EQ(t[3].kind, TokenKind::LParen);
  EXPECT_EQ(t[3].line, 2u);
  EXPECT_EQ(t[3].column, 3u);
  EXPECT_EQ(t[5].text, "i32.add");
  EXPECT_EQ(t[5].column, 9u);
  EXPECT_EQ(t[6].kind, TokenKind::Number);
  EXPECT_EQ(t[7].kind, TokenKind::Number);
  EXPECT_EQ(t[7].text, "-1.5");
  EXPECT_EQ(t[8].kind, TokenKind::String);
  EXPECT_EQ(t[8].text, "\"s\"");
  EXPECT_EQ(t[9].kind, TokenKind::RParen);
  EXPECT_EQ(t[11].kind, TokenKind::Eof);
  EXPECT_EQ(t[11].line, 2u);
}

TEST(Lexer, CommentsAreSkippedAndNest) {
  const auto t = lex(";; line comment\n(; block (; nested ;) still ;) nop ;; tail");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].text, "nop");
  EXPECT_EQ(t[0].line, 2u);
  EXPECT_EQ(t[0].column, 32u);
}

TEST(Lexer, ReservedTokens) {
  // A run of idchars and strings that is not one token is a single reserved token.
  for (const char* src : {"\"a\"\"b\"", "$l\"a\"", "\"a\"x", "+", ".", "0\"a\""}) {
    const auto t = lex(src);
    ASSERT_EQ(t.size(), 2u) << src;
    EXPECT_EQ(t[0].kind, TokenKind::Reserved) << src;
    EXPECT_EQ(t[0].text, src);
  }
  // Digit-led runs are number tokens whatever follows; the parser rejects the malformed ones
  // ("unknown operator") where it expects a number.
  EXPECT_EQ(lex("0drop")[0].kind, TokenKind::Number);
  EXPECT_EQ(lex("0$l")[0].text, "0$l");
  // `$l$l` and `$l0` are plain identifiers.
  EXPECT_EQ(lex("$l$l")[0].kind, TokenKind::Id);
  EXPECT_EQ(lex("$l0")[0].kind, TokenKind::Id);
  EXPECT_EQ(lex("offset=4")[0].kind, TokenKind::Keyword);
  EXPECT_EQ(lex("nan:0x1")[0].kind, TokenKind::Keyword);
}

TEST(Lexer, StringEscapes) {
  const auto t = lex(R"("\t\n\r\"\'\\\00\ff\u{41}\u{1F600}\u{1_0}")");
  ASSERT_EQ(t[0].kind, TokenKind::String);
  const std::string bytes = string_bytes(t[0]);
  EXPECT_EQ(bytes, std::string("\t\n\r\"'\\\0\xff" "A" "\xF0\x9F\x98\x80" "\x10", 14));
}

TEST(Lexer, Errors) {
  auto e = lex_error("(data\n  \"abc");
  EXPECT_EQ(e.message, "unclosed string");
  EXPECT_EQ(e.line, 2u);
  EXPECT_EQ(e.column, 7u);

  e = lex_error("nop (; open (; nested ;)");
  EXPECT_EQ(e.message, "unclosed comment");
  EXPECT_EQ(e.line, 1u);
  EXPECT_EQ(e.column, 5u);

  e = lex_error("  \"\\q\"");
  EXPECT_EQ(e.message, "illegal escape");
  EXPECT_EQ(e.column, 4u);

  e = lex_error("\"\\u{D800}\"");
  EXPECT_EQ(e.message.rfind("malformed UTF-8 encoding", 0), 0u) << e.message;

  e = lex_error("(func) ; x");
  EXPECT_EQ(e.message, "unexpected character");
  EXPECT_EQ(e.column, 8u);

  e = lex_error("\"tab\there\"");
  EXPECT_EQ(e.message, "illegal control character in string");
}

TEST(Lexer, QuotedIdentifiersAreTheSameIdentifierAsTheirPlainSpelling) {
  const Tokens t = lex_all(R"((func $"fh" $fh $"\41B" $"\u{41}\u{42}" $" random \t stuff "))");
  ASSERT_EQ(t.list.size(), 9u);
  EXPECT_EQ(t.list[2].kind, TokenKind::Id);
  EXPECT_EQ(t.list[2].text, "$fh");
  EXPECT_EQ(t.list[3].text, "$fh");
  EXPECT_EQ(t.list[4].text, "$AB");
  EXPECT_EQ(t.list[5].text, "$AB");
  EXPECT_EQ(t.list[6].text, "$ random \t stuff ");
  EXPECT_EQ(t.list[6].column, 41u);
  // Moving the tokens keeps their views valid.
  Tokens moved = lex_all(R"($"a b")");
  const Tokens kept = std::move(moved);
  EXPECT_EQ(kept.list[0].text, "$a b");
  // Two strings, or idchars after the string, stay one reserved token.
  EXPECT_EQ(lex(R"($"a""b")")[0].kind, TokenKind::Reserved);
  EXPECT_EQ(lex(R"($"a"b)")[0].kind, TokenKind::Reserved);
}

TEST(Lexer, EmptyAndMalformedIdentifiersAreErrors) {
  // A lone `$` was a reserved token in 2.0; 3.0 names it an empty identifier.
  for (const char* src : {"(func $)", "(func $\"\")", "(func $ \"a\")", "(func $\"a\nb\")", "(func $\"a\tb\")"}) {
    const TextError e = lex_error(src);
    EXPECT_EQ(e.message.rfind("empty identifier", 0), 0u) << src << ": " << e.message;
    EXPECT_EQ(e.column, 7u) << src;
  }
  EXPECT_EQ(lex_error(R"((func $"\ef"))").message.rfind("malformed UTF-8", 0), 0u);
}

TEST(Lexer, AnnotationsAreReadPastAndChecked) {
  const auto t = lex("(module (@a x-y$yz\"aa\"-2 (b (c)) , ; ] [ }} {  (@ x) (; c ;) ;; line\n) (@\"id\") nop)");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[1].text, "module");
  EXPECT_EQ(t[2].text, "nop");
  EXPECT_EQ(t[2].line, 2u);
  EXPECT_EQ(lex("(@a\r)").size(), 1u);
  EXPECT_EQ(lex("( @a)")[1].kind, TokenKind::Reserved);  // not an annotation: an unknown operator

  for (const char* src : {"(@)", "(@ x)", "(@(@a)x)", "(@\"\")", "(@\"\n\")"}) {
    EXPECT_EQ(lex_error(src).message.rfind("empty annotation id", 0), 0u) << src;
  }
  EXPECT_EQ(lex_error("(@\"\\ef\")").message.rfind("malformed UTF-8", 0), 0u);
  EXPECT_EQ(lex_error("(@a \x01)").message, "illegal character");
  EXPECT_EQ(lex_error("(@a \x7f)").message, "illegal character");
  EXPECT_EQ(lex_error("(@a \x80)").message, "malformed UTF-8 encoding");
  EXPECT_EQ(lex_error("(@a Hei\xc3\x9f)").message.rfind("illegal character", 0), 0u);
  const TextError open = lex_error("\n  (@a (b)");
  EXPECT_EQ(open.message, "unclosed annotation");
  EXPECT_EQ(open.line, 2u);
  EXPECT_EQ(open.column, 3u);
}

TEST(Lexer, ALineCommentEndsAtACarriageReturnToo) {
  const auto t = lex(";; c\rnop;; d\r\ndrop");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].text, "nop");
  EXPECT_EQ(t[1].text, "drop");
}

}  // namespace
}  // namespace sprawling::wasm::text
