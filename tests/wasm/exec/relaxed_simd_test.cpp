// Tests of src/wasm/exec/relaxed_simd.hpp: each relaxed SIMD instruction's one deterministic choice, on
// the inputs where the relaxed spec allows several results (so a changed choice fails here), and
// the opcode table's 20 relaxed rows.
#include "wasm/syntax/opcodes.hpp"
#include "wasm/exec/relaxed_simd.hpp"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>

namespace {

using namespace sprawling::wasm::simd;

template <class L>
V128 lanes(std::initializer_list<L> l) {
  std::array<L, 16 / sizeof(L)> a{};
  std::size_t i = 0;
  for (L x : l) a.at(i++) = x;
  return std::bit_cast<V128>(a);
}

TEST(RelaxedSimd, SwizzleGivesZeroForEveryIndexFrom16) {
  const V128 a = lanes<std::uint8_t>({10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25});
  // 16, 0x80 and 0xFF: x86's pshufb would give a[0] for 16 and 0 only for the top bit.
  const V128 s = lanes<std::uint8_t>({0, 15, 16, 0x80, 0xFF, 31, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  EXPECT_EQ(i8x16_relaxed_swizzle(a, s),
            lanes<std::uint8_t>({10, 25, 0, 0, 0, 0, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}));
}

TEST(RelaxedSimd, TruncSaturatesAndGivesZeroForNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(i32x4_relaxed_trunc_f32x4_s(lanes<float>({nan, 3e9F, -3e9F, -1.5F})),
            lanes<std::int32_t>({0, 2147483647, -2147483647 - 1, -1}));
  EXPECT_EQ(i32x4_relaxed_trunc_f32x4_u(lanes<float>({nan, 5e9F, -1.5F, 7.9F})),
            lanes<std::uint32_t>({0, 4294967295U, 0, 7}));
  const double dnan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(i32x4_relaxed_trunc_f64x2_s_zero(lanes<double>({dnan, -1e10})),
            lanes<std::int32_t>({0, -2147483647 - 1, 0, 0}));
  const V128 want_u = lanes<std::uint32_t>({4294967295U, 0, 0, 0});
  EXPECT_EQ(i32x4_relaxed_trunc_f64x2_u_zero(lanes<double>({1e10, -0.5})), want_u);
}

TEST(RelaxedSimd, MaddIsFusedWithOneRounding) {
  // (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly when fused, 0 after rounding the product first.
  const float x = 1.0F + 0x1p-23F;
  const V128 fused = f32x4_relaxed_madd(lanes<float>({x, 2, 0, 1}), lanes<float>({x, 3, 5, 1}),
                                        lanes<float>({-(1.0F + 0x1p-22F), 1, -0.0F, 1}));
  EXPECT_EQ(fused, lanes<float>({0x1p-46F, 7, 0.0F, 2}));
  EXPECT_EQ(f32x4_relaxed_nmadd(lanes<float>({2, 1, 1, 1}), lanes<float>({3, 1, 1, 1}), lanes<float>({10, 1, 1, 1})),
            lanes<float>({4, 0, 0, 0}));
  const double y = 1.0 + 0x1p-52;
  EXPECT_EQ(f64x2_relaxed_madd(lanes<double>({y, 2}), lanes<double>({y, 3}), lanes<double>({-(1.0 + 0x1p-51), 1})),
            lanes<double>({0x1p-104, 7}));
  EXPECT_EQ(f64x2_relaxed_nmadd(lanes<double>({y, 2}), lanes<double>({y, 3}), lanes<double>({1.0 + 0x1p-51, 1})),
            lanes<double>({-0x1p-104, -5}));
  // A NaN lane is the canonical NaN, as every float operator's here.
  const V128 n = f32x4_relaxed_madd(lanes<std::uint32_t>({0xFFA00001, 0, 0, 0}), lanes<float>({1, 1, 1, 1}),
                                    lanes<float>({0, 0, 0, 0}));
  using U32x4 = std::array<std::uint32_t, 4>;
  EXPECT_EQ(std::bit_cast<U32x4>(n)[0], kCanonicalNanF32);
}

TEST(RelaxedSimd, LaneselectUsesEveryMaskBit) {
  const V128 a = lanes<std::uint64_t>({0xFFFF'FFFF'FFFF'FFFF, 0xFFFF'FFFF'FFFF'FFFF});
  const V128 b = lanes<std::uint64_t>({0, 0});
  // Masks that are not all-ones or all-zeros per lane: x86's blendv would look at the top bit only.
  const V128 m = lanes<std::uint64_t>({0x0F0F'0000'0000'0001, 0x8000'0000'0000'0000});
  for (const V128 r : {i8x16_relaxed_laneselect(a, b, m), i16x8_relaxed_laneselect(a, b, m),
                       i32x4_relaxed_laneselect(a, b, m), i64x2_relaxed_laneselect(a, b, m)}) {
    EXPECT_EQ(r, m);
  }
}

TEST(RelaxedSimd, MinMaxPropagateNanAndOrderZeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto min = std::bit_cast<std::array<std::uint32_t, 4>>(
      f32x4_relaxed_min(lanes<float>({nan, 1, -0.0F, 0.0F}), lanes<float>({1, nan, 0.0F, -0.0F})));
  EXPECT_EQ(min[0], kCanonicalNanF32);
  EXPECT_EQ(min[1], kCanonicalNanF32);
  EXPECT_EQ(min[2], 0x8000'0000U);  // -0
  EXPECT_EQ(min[3], 0x8000'0000U);
  const auto max = std::bit_cast<std::array<std::uint64_t, 2>>(
      f64x2_relaxed_max(lanes<double>({-0.0, std::numeric_limits<double>::quiet_NaN()}), lanes<double>({0.0, 1})));
  EXPECT_EQ(max[0], 0U);  // +0
  EXPECT_EQ(max[1], kCanonicalNanF64);
  EXPECT_EQ(f32x4_relaxed_max(lanes<float>({1, -2, 3, -4}), lanes<float>({0, -1, 4, -5})), lanes<float>({1, -1, 4, -4}));
  EXPECT_EQ(f64x2_relaxed_min(lanes<double>({1, -2}), lanes<double>({0, -1})), lanes<double>({0, -2}));
}

TEST(RelaxedSimd, Q15mulrSaturates) {
  EXPECT_EQ(i16x8_relaxed_q15mulr_s(lanes<std::int16_t>({-32768, 16384, -1, 0, 0, 0, 0, 0}),
                                    lanes<std::int16_t>({-32768, 16384, 1, 0, 0, 0, 0, 0})),
            lanes<std::int16_t>({32767, 8192, 0, 0, 0, 0, 0, 0}));
}

TEST(RelaxedSimd, DotTreatsBothOperandsAsSignedAndWraps) {
  // -128 * -127 twice is 32512 signed x signed (x86's pmaddubsw reads a as unsigned: 128 * -127).
  const V128 a = lanes<std::int8_t>({-128, -128, 127, 127, -128, -128, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0});
  const V128 b = lanes<std::int8_t>({-127, -127, 127, 127, -128, -128, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0});
  // 2 * 127^2 = 32258; 2 * (-128)^2 = 32768 wraps to -32768.
  EXPECT_EQ(i16x8_relaxed_dot_i8x16_i7x16_s(a, b), lanes<std::int16_t>({32512, 32258, -32768, 11, 0, 0, 0, 0}));
  // Pairs of those (wrapped) sums, widened and added to c.
  EXPECT_EQ(i32x4_relaxed_dot_i8x16_i7x16_add_s(a, b, lanes<std::int32_t>({1, 2, 3, 4})),
            lanes<std::int32_t>({32512 + 32258 + 1, -32768 + 11 + 2, 3, 4}));
}

TEST(RelaxedSimd, OpcodeTableHasTheTwentyRowsAtTheirSubOpcodes) {
  using sprawling::wasm::Opcode;
  using sprawling::wasm::info;
  EXPECT_EQ(info(Opcode::I8x16RelaxedSwizzle).code, 0x100);
  EXPECT_EQ(info(Opcode::I32x4RelaxedDotI8x16I7x16AddS).code, 0x113);
  EXPECT_EQ(info(Opcode::F32x4RelaxedMadd).text, "f32x4.relaxed_madd");
  EXPECT_EQ(sprawling::wasm::opcode_from_simd(0x10D), Opcode::F32x4RelaxedMin);
  EXPECT_FALSE(sprawling::wasm::opcode_from_simd(0x114).has_value());
  EXPECT_FALSE(sprawling::wasm::opcode_from_simd(0xFFFF).has_value());
}

}  // namespace
