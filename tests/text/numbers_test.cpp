// Numeric literals: integer ranges and `_` rules, and float rounding — hex floats rounded bit
// by bit (ties to even, subnormals, overflow), decimal floats, inf, nan and nan payloads.
#include "wasm/text/numbers.hpp"

#include <gtest/gtest.h>

namespace sprawling::wasm::text {
namespace {

std::uint64_t i32(std::string_view s) {
  auto r = parse_int(s, 32);
  EXPECT_TRUE(r.has_value()) << s;
  return r ? *r : 0xDEAD;
}
std::uint64_t i64(std::string_view s) {
  auto r = parse_int(s, 64);
  EXPECT_TRUE(r.has_value()) << s;
  return r ? *r : 0xDEAD;
}
std::uint32_t f32(std::string_view s) {
  auto r = parse_f32(s);
  EXPECT_TRUE(r.has_value()) << s;
  return r ? *r : 0xDEAD;
}
std::uint64_t f64(std::string_view s) {
  auto r = parse_f64(s);
  EXPECT_TRUE(r.has_value()) << s;
  return r ? *r : 0xDEAD;
}
template <typename R>
NumError error_of(const R& r) {
  EXPECT_FALSE(r.has_value());
  return r ? NumError{} : r.error();
}

TEST(IntLiterals, Ranges) {
  EXPECT_EQ(i32("0"), 0u);
  EXPECT_EQ(i32("4294967295"), 0xFFFFFFFFu);
  EXPECT_EQ(i32("-2147483648"), 0x80000000u);
  EXPECT_EQ(i32("-0x80000000"), 0x80000000u);
  EXPECT_EQ(i32("0xffff_ffff"), 0xFFFFFFFFu);
  EXPECT_EQ(i32("-1"), 0xFFFFFFFFu);
  EXPECT_EQ(i32("+7"), 7u);
  EXPECT_EQ(i32("1_000_000"), 1000000u);
  EXPECT_EQ(error_of(parse_int("4294967296", 32)), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_int("-2147483649", 32)), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_int("0x100000000", 32)), NumError::OutOfRange);

  EXPECT_EQ(i64("18446744073709551615"), 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(i64("-9223372036854775808"), 0x8000000000000000ull);
  EXPECT_EQ(error_of(parse_int("18446744073709551616", 64)), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_int("-9223372036854775809", 64)), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_int("0x1_0000_0000_0000_0000", 64)), NumError::OutOfRange);
}

TEST(IntLiterals, MalformedShapes) {
  for (const char* s : {"", "_1", "1_", "1__0", "0x", "0x_1", "0_x1", "+_1", "-", "1x", "0xg", "1.0", "0x1p1"}) {
    EXPECT_EQ(error_of(parse_int(s, 32)), NumError::Malformed) << s;
  }
  EXPECT_EQ(error_of(parse_unsigned("-1", 32)), NumError::Malformed);
  EXPECT_EQ(error_of(parse_unsigned("+1", 32)), NumError::Malformed);
  EXPECT_EQ(error_of(parse_unsigned("0x1_0000_0000", 32)), NumError::OutOfRange);
  EXPECT_EQ(*parse_unsigned("0xFFFF_FFFF", 32), 0xFFFFFFFFu);
}

TEST(FloatLiterals, Specials) {
  EXPECT_EQ(f32("inf"), 0x7F800000u);
  EXPECT_EQ(f32("-inf"), 0xFF800000u);
  EXPECT_EQ(f32("nan"), 0x7FC00000u);
  EXPECT_EQ(f32("-nan"), 0xFFC00000u);
  EXPECT_EQ(f32("nan:0x200000"), 0x7FA00000u);
  EXPECT_EQ(f32("-nan:0x7f_ffff"), 0xFFFFFFFFu);
  EXPECT_EQ(f64("nan"), 0x7FF8000000000000ull);
  EXPECT_EQ(f64("nan:0x1"), 0x7FF0000000000001ull);
  EXPECT_EQ(f64("+nan:0xf_ffff_ffff_ffff"), 0x7FFFFFFFFFFFFFFFull);
  EXPECT_EQ(error_of(parse_f32("nan:0x0")), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_f32("nan:0x80_0000")), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_f64("nan:0x10_0000_0000_0000")), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_f32("nan:1")), NumError::Malformed);
  EXPECT_EQ(error_of(parse_f32("nan:canonical")), NumError::Malformed);
  EXPECT_EQ(f32("-0"), 0x80000000u);
  EXPECT_EQ(f64("-0.0"), 0x8000000000000000ull);
}

TEST(FloatLiterals, HexRoundingF32) {
  EXPECT_EQ(f32("0x1p0"), 0x3F800000u);
  EXPECT_EQ(f32("0x1P+1"), 0x40000000u);
  EXPECT_EQ(f32("0x1.8p1"), 0x40400000u);
  EXPECT_EQ(f32("0x1."), 0x3F800000u);
  EXPECT_EQ(f32("0x1.fffffep127"), 0x7F7FFFFFu);
  // Exactly halfway between 1 and its successor: ties to even (down); above half: up.
  EXPECT_EQ(f32("0x1.000001p0"), 0x3F800000u);
  EXPECT_EQ(f32("0x1.000003p0"), 0x3F800002u);
  EXPECT_EQ(f32("0x1.00000100000000000001p0"), 0x3F800001u);
  EXPECT_EQ(f32("0x1.fffffefffffffffffp127"), 0x7F7FFFFFu);
  EXPECT_EQ(error_of(parse_f32("0x1.ffffffp127")), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_f32("0x1p128")), NumError::OutOfRange);
  // Subnormals: the smallest, a tie that rounds to zero, a tie that rounds to even (2).
  EXPECT_EQ(f32("0x1p-149"), 0x00000001u);
  EXPECT_EQ(f32("0x1p-150"), 0x00000000u);
  EXPECT_EQ(f32("0x1.8p-149"), 0x00000002u);
  EXPECT_EQ(f32("0x1.00000000001p-150"), 0x00000001u);
  EXPECT_EQ(f32("0x1.fffffcp-127"), 0x007FFFFFu);
  EXPECT_EQ(f32("0x1.fffffep-127"), 0x00800000u);  // rounds up into the normal range
  EXPECT_EQ(f32("0x1p-99999999999"), 0x00000000u);
  EXPECT_EQ(f32("0x0.0000000000000000000000000000000000001p0"), 0x00000002u);
}

TEST(FloatLiterals, HexRoundingF64) {
  EXPECT_EQ(f64("0x1p-1074"), 0x0000000000000001ull);
  EXPECT_EQ(f64("0x1p-1075"), 0x0000000000000000ull);
  EXPECT_EQ(f64("0x1.fffffffffffffp1023"), 0x7FEFFFFFFFFFFFFFull);
  EXPECT_EQ(f64("0x1.fffffffffffff7ffffffp1023"), 0x7FEFFFFFFFFFFFFFull);
  EXPECT_EQ(error_of(parse_f64("0x1.fffffffffffff8p1023")), NumError::OutOfRange);
  EXPECT_EQ(f64("0x1.00000000000008p0"), 0x3FF0000000000000ull);
  EXPECT_EQ(f64("0x1.00000000000018p0"), 0x3FF0000000000002ull);
  EXPECT_EQ(f64("0x123456789ABCDEF0123p0"), 0x44723456789ABCDFull);
  // Found by differential fuzzing against wat2wasm 1.0.32, which truncates this one to …CDE;
  // the exact value is above the halfway point, so it rounds up (Python's float.fromhex agrees).
  EXPECT_EQ(f64("0x0123456789ABCdefp019"), 0x44A23456789ABCDFull);
}

TEST(FloatLiterals, Decimal) {
  EXPECT_EQ(f32("0.1"), 0x3DCCCCCDu);
  EXPECT_EQ(f32("1e-45"), 0x00000001u);
  EXPECT_EQ(f32("3.4028235e38"), 0x7F7FFFFFu);
  EXPECT_EQ(f32("340282356779733661637539395458142568447"), 0x7F7FFFFFu);
  EXPECT_EQ(error_of(parse_f32("340282356779733661637539395458142568448")), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_f32("1e39")), NumError::OutOfRange);
  EXPECT_EQ(f32("1e-50"), 0x00000000u);
  EXPECT_EQ(f32("1_000.000_1"), f32("1000.0001"));
  EXPECT_EQ(f32("1."), 0x3F800000u);
  EXPECT_EQ(f32("1.e1"), 0x41200000u);
  EXPECT_EQ(f32("1E+1"), 0x41200000u);
  EXPECT_EQ(f64("0.1"), 0x3FB999999999999Aull);
  EXPECT_EQ(f64("4.9e-324"), 0x0000000000000001ull);
  EXPECT_EQ(f64("2e-324"), 0x0000000000000000ull);
  EXPECT_EQ(f64("1e-400"), 0x0000000000000000ull);
  EXPECT_EQ(f64("0.000000000000000000000000000000000000000000000000000000000000000000000001e72"),
            0x3FF0000000000000ull);
  EXPECT_EQ(error_of(parse_f64("1e309")), NumError::OutOfRange);
  EXPECT_EQ(f64("0e99999999999"), 0x0000000000000000ull);
}

TEST(FloatLiterals, MalformedShapes) {
  for (const char* s : {".0", ".0e0", "0e", "0e+", "0.0e", "0.0e-", "0x", "1x", "0xg", "0x.", "0x0.g", "0x0p",
                        "0x0p+", "0x0pA", "0x.8p1", "_1", "1_", "1__0", "1_.0", "1._0", "1.0_", "1e_1", "1e1_", "1_e1",
                        "1.0e_+1", "0x_1", "0x1_p1", "0x1p_1", "0x1.0_", "infinity", "nan:0x", ""}) {
    EXPECT_EQ(error_of(parse_f64(s)), NumError::Malformed) << s;
    EXPECT_EQ(error_of(parse_f32(s)), NumError::Malformed) << s;
  }
}

TEST(V128Lanes, ShapesAndLanes) {
  EXPECT_FALSE(v128_shape("i32x8").has_value());
  const auto i16 = v128_shape("i16x8");
  ASSERT_TRUE(i16.has_value());
  EXPECT_EQ(i16->lanes, 8u);
  EXPECT_EQ(i16->bits, 16u);
  EXPECT_FALSE(i16->is_float);
  EXPECT_EQ(*parse_lane(*i16, "-1"), 0xFFFFu);
  EXPECT_EQ(error_of(parse_lane(*i16, "65536")), NumError::OutOfRange);
  EXPECT_EQ(error_of(parse_lane(*i16, "1.5")), NumError::Malformed);
  const auto f64x2 = v128_shape("f64x2");
  ASSERT_TRUE(f64x2.has_value());
  EXPECT_TRUE(f64x2->is_float);
  EXPECT_EQ(*parse_lane(*f64x2, "-inf"), 0xFFF0000000000000ull);
  std::array<std::uint8_t, 16> v{};
  put_lane(v, *i16, 7, 0xBEEF);
  EXPECT_EQ(v[14], 0xEFu);
  EXPECT_EQ(v[15], 0xBEu);
  put_lane(v, *f64x2, 0, 0x0102030405060708ull);
  EXPECT_EQ(v[0], 0x08u);
  EXPECT_EQ(v[7], 0x01u);
}

}  // namespace
}  // namespace sprawling::wasm::text
