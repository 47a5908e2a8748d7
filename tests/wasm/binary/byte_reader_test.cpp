// ByteReader: LEB128 limits, the spec's malformed wordings, error offsets, names and UTF-8.
#include "wasm/binary/byte_reader.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace sprawling::wasm {
namespace {

using Bytes = std::vector<std::uint8_t>;

std::string error_of(const ByteReader& r) {
  return r.error() ? r.error()->message : std::string("(none)");
}

TEST(ByteReader, U32DecodesOneToFiveBytes) {
  const Bytes b = {0x05, 0xE5, 0x8E, 0x26, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x80, 0x80, 0x80, 0x80, 0x00};
  ByteReader r(b);
  EXPECT_EQ(r.u32(), 5u);
  EXPECT_EQ(r.u32(), 624485u);
  EXPECT_EQ(r.u32(), 0xFFFF'FFFFu);
  EXPECT_EQ(r.u32(), 0u);  // padded zero, five bytes: allowed
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.at_end());
}

TEST(ByteReader, U32SixBytesIsTooLongAtTheSixthByte) {
  const Bytes b = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  ByteReader r(b);
  EXPECT_EQ(r.u32(), 0u);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(error_of(r), "integer representation too long");
  EXPECT_EQ(r.error()->offset, 5u);
  EXPECT_EQ(r.error()->kind, CompileError::Kind::Malformed);
}

TEST(ByteReader, U32UnusedBitsOfTheLastByteMustBeZero) {
  const Bytes b = {0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F};
  ByteReader r(b);
  EXPECT_EQ(r.u8(), 1u);
  r.u32();
  EXPECT_EQ(error_of(r), "integer too large");
  EXPECT_EQ(r.error()->offset, 5u);
}

TEST(ByteReader, S32SignExtendsAndChecksTheLastByte) {
  {
    const Bytes b = {0x7F, 0x80, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x80, 0x80, 0x80, 0x80, 0x78};
    ByteReader r(b);
    EXPECT_EQ(r.s32(), -1);
    EXPECT_EQ(r.s32(), -128);
    EXPECT_EQ(r.s32(), 0x7FFF'FFFF);
    EXPECT_EQ(r.s32(), INT32_MIN);
    EXPECT_TRUE(r.ok());
  }
  {
    // 0x4F: bits above the sign bit differ from it.
    const Bytes b = {0xFF, 0xFF, 0xFF, 0xFF, 0x4F};
    ByteReader r(b);
    r.s32();
    EXPECT_EQ(error_of(r), "integer too large");
    EXPECT_EQ(r.error()->offset, 4u);
  }
}

TEST(ByteReader, S64TenthByteHoldsOnlyTheSign) {
  const Bytes ok = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7F};
  ByteReader r(ok);
  EXPECT_EQ(r.s64(), INT64_MIN);
  EXPECT_TRUE(r.ok());
  const Bytes bad = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  ByteReader r2(bad);
  r2.s64();
  EXPECT_EQ(error_of(r2), "integer too large");
  EXPECT_EQ(r2.error()->offset, 9u);
  const Bytes long_form = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  ByteReader r3(long_form);
  r3.s64();
  EXPECT_EQ(error_of(r3), "integer representation too long");
  EXPECT_EQ(r3.error()->offset, 10u);
}

TEST(ByteReader, S33CoversTypeIndicesAboveInt32) {
  const Bytes b = {0xFF, 0xFF, 0xFF, 0xFF, 0x0F};
  ByteReader r(b);
  EXPECT_EQ(r.s33(), 0xFFFF'FFFFll);
  EXPECT_TRUE(r.ok());
}

TEST(ByteReader, NarrowFieldsU1AndS7) {
  const Bytes flags = {0x02};
  ByteReader r(flags);
  r.u1();
  EXPECT_EQ(error_of(r), "integer too large");
  const Bytes flags_long = {0x81, 0x00};
  ByteReader r2(flags_long);
  r2.u1();
  EXPECT_EQ(error_of(r2), "integer representation too long");
  EXPECT_EQ(r2.error()->offset, 1u);
  const Bytes form = {0x60};
  ByteReader r3(form);
  EXPECT_EQ(r3.s7(), -0x20);
}

TEST(ByteReader, RunningOutSaysUnexpectedEndAtTheEnd) {
  const Bytes b = {0x80, 0x80};
  ByteReader r(b);
  r.u32();
  EXPECT_EQ(error_of(r), "unexpected end");
  EXPECT_EQ(r.error()->offset, 2u);
  ByteReader r2(b);
  r2.set_eof_message("unexpected end of section or function");
  r2.take(3);
  EXPECT_EQ(error_of(r2), "unexpected end of section or function");
}

TEST(ByteReader, TheFirstErrorSticks) {
  const Bytes b = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  ByteReader r(b);
  r.u32();
  r.malformed(0, "something else");
  EXPECT_EQ(error_of(r), "integer representation too long");
  EXPECT_EQ(r.u8(), 0u);  // reads after an error yield zero
}

TEST(ByteReader, LengthMustFitTheBytesLeft) {
  const Bytes b = {0x05, 0x61, 0x62};
  ByteReader r(b);
  EXPECT_EQ(r.length(), 0u);
  EXPECT_EQ(error_of(r), "length out of bounds");
  EXPECT_EQ(r.error()->offset, 0u);
}

TEST(ByteReader, NamesAreUtf8) {
  const Bytes good = {0x04, 0xF0, 0x9F, 0x98, 0x80, 0x02, 'o', 'k'};
  ByteReader r(good);
  EXPECT_EQ(r.name(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(r.name(), "ok");
  EXPECT_TRUE(r.ok());
  const Bytes bad = {0x02, 0xC0, 0x80};  // overlong NUL
  ByteReader r2(bad);
  r2.name();
  EXPECT_EQ(error_of(r2), "malformed UTF-8 encoding");
  EXPECT_EQ(r2.error()->offset, 1u);
}

TEST(ByteReader, FloatsAreLittleEndianBitPatterns) {
  const Bytes b = {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0xBF};
  ByteReader r(b);
  EXPECT_EQ(r.f32_bits(), 0x3F80'0000u);
  EXPECT_EQ(r.f64_bits(), 0xBFF0'0000'0000'0000ull);
}

}  // namespace
}  // namespace sprawling::wasm
