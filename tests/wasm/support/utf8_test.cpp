// is_valid_utf8 (src/wasm/support/utf8.hpp), the one UTF-8 check that module names, WAT names and WASI
// guest paths share: well-formed sequences pass, every ill-formed kind is refused.
#include "wasm/support/utf8.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace sprawling::wasm {
namespace {

TEST(Utf8, WellFormedSequencesPass) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("abc"));
  EXPECT_TRUE(is_valid_utf8("\xC2\x80"));                  // U+0080, the first two-byte value
  EXPECT_TRUE(is_valid_utf8("\xEF\xBF\xBF"));              // U+FFFF
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));          // U+10FFFF, the last scalar value
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9\xF0\x9F\x98\x80"));  // é then an emoji
  EXPECT_TRUE(is_valid_utf8("\xED\x9F\xBF\xEE\x80\x80"));  // U+D7FF and U+E000 around the surrogates
}

TEST(Utf8, IllFormedSequencesAreRefused) {
  EXPECT_FALSE(is_valid_utf8("\xC0\x80"));              // overlong NUL
  EXPECT_FALSE(is_valid_utf8("\xC1\xBF"));              // overlong
  EXPECT_FALSE(is_valid_utf8("\xE0\x9F\xBF"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xF0\x8F\xBF\xBF"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));          // surrogate U+D800
  EXPECT_FALSE(is_valid_utf8("\xED\xBF\xBF"));          // surrogate U+DFFF
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));      // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\x80"));                  // stray continuation
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));              // truncated at the end
  EXPECT_FALSE(is_valid_utf8("\xE2\x82x"));             // a non-continuation inside
  EXPECT_FALSE(is_valid_utf8("\xFE\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xF8\x88\x80\x80\x80"));  // five-byte form
}

TEST(Utf8, BytesAndCharactersGiveTheSameAnswer) {
  // The WASI host checks guest memory (bytes), the decoders check names (chars).
  for (std::string_view s : {"ok", "\xC3\xA9", "\xC0\x80", "\xE2\x82", "\xF4\x90\x80\x80"}) {
    const std::vector<std::uint8_t> bytes(s.begin(), s.end());
    EXPECT_EQ(is_valid_utf8(std::span<const std::uint8_t>(bytes)), is_valid_utf8(s)) << s;
  }
  static_assert(is_valid_utf8("\xC3\xA9") && !is_valid_utf8("\xC0\x80"), "usable at compile time");
}

}  // namespace
}  // namespace sprawling::wasm
