// Lane semantics of the 20 relaxed SIMD instructions (relaxed_simd_opcodes.def): one fixed,
// deterministic choice each, so a module gives the same result on every run, machine and tier.
#pragma once

// The choice is Wasmtime's with `relaxed_simd_deterministic` (= the spec's deterministic profile):
//   relaxed_swizzle            = i8x16.swizzle (an index >= 16 gives 0)
//   relaxed_trunc_*            = the matching trunc_sat (NaN -> 0, out of range -> the nearest bound)
//   relaxed_madd / nmadd       = fused multiply-add, one rounding: fma(a, b, c) / fma(-a, b, c);
//                                a NaN lane is the canonical NaN, as every float op here
//   relaxed_laneselect         = v128.bitselect (every bit of the mask counts, not just the lane's top)
//   relaxed_min / max          = f32x4/f64x2 .min / .max (NaN-propagating, -0 < +0)
//   relaxed_q15mulr_s          = i16x8.q15mulr_sat_s (-32768 * -32768 saturates to 32767)
//   relaxed_dot_i8x16_i7x16_s  = both operands signed, pairwise sums wrapping to 16 bits
//   relaxed_dot_..._add_s      = that dot, then extadd_pairwise to i32, plus c (wrapping)

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "wasm/exec/simd.hpp"

namespace sprawling::wasm::simd {

#if SPRAWLING_SIMD_X86
inline namespace x86 {
#else
inline namespace portable {
#endif

namespace impl {
// fma per lane with b, c and a negated or not; NaN lanes canonical.
template <class F>
[[nodiscard]] inline V128 fused_madd(V128 a, V128 b, V128 c, bool negate) noexcept {
  auto x = lanes<F>(a);
  const auto y = lanes<F>(b);
  const auto z = lanes<F>(c);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = canon_scalar(std::fma(negate ? -x[i] : x[i], y[i], z[i]));
  return of(x);
}
// Signed i8 x signed i8 products summed in pairs into i16 lanes, wrapping.
[[nodiscard]] inline V128 dot_i8_pairs(V128 a, V128 b) noexcept {
  const auto x = lanes<std::int8_t>(a);
  const auto y = lanes<std::int8_t>(b);
  Lanes<std::uint16_t> r{};
  for (std::size_t i = 0; i < r.size(); ++i) {
    const int sum = x[2 * i] * y[2 * i] + x[2 * i + 1] * y[2 * i + 1];
    r[i] = static_cast<std::uint16_t>(static_cast<unsigned>(sum));  // wraps (only 2 * -128 * -128 does)
  }
  return of(r);
}
}  // namespace impl

[[nodiscard]] inline V128 i8x16_relaxed_swizzle(V128 a, V128 s) noexcept { return i8x16_swizzle(a, s); }
[[nodiscard]] inline V128 i32x4_relaxed_trunc_f32x4_s(V128 a) noexcept { return i32x4_trunc_sat_f32x4_s(a); }
[[nodiscard]] inline V128 i32x4_relaxed_trunc_f32x4_u(V128 a) noexcept { return i32x4_trunc_sat_f32x4_u(a); }
[[nodiscard]] inline V128 i32x4_relaxed_trunc_f64x2_s_zero(V128 a) noexcept { return i32x4_trunc_sat_f64x2_s_zero(a); }
[[nodiscard]] inline V128 i32x4_relaxed_trunc_f64x2_u_zero(V128 a) noexcept { return i32x4_trunc_sat_f64x2_u_zero(a); }
[[nodiscard]] inline V128 f32x4_relaxed_madd(V128 a, V128 b, V128 c) noexcept { return impl::fused_madd<float>(a, b, c, false); }
[[nodiscard]] inline V128 f32x4_relaxed_nmadd(V128 a, V128 b, V128 c) noexcept { return impl::fused_madd<float>(a, b, c, true); }
[[nodiscard]] inline V128 f64x2_relaxed_madd(V128 a, V128 b, V128 c) noexcept { return impl::fused_madd<double>(a, b, c, false); }
[[nodiscard]] inline V128 f64x2_relaxed_nmadd(V128 a, V128 b, V128 c) noexcept { return impl::fused_madd<double>(a, b, c, true); }
[[nodiscard]] inline V128 i8x16_relaxed_laneselect(V128 a, V128 b, V128 m) noexcept { return v128_bitselect(a, b, m); }
[[nodiscard]] inline V128 i16x8_relaxed_laneselect(V128 a, V128 b, V128 m) noexcept { return v128_bitselect(a, b, m); }
[[nodiscard]] inline V128 i32x4_relaxed_laneselect(V128 a, V128 b, V128 m) noexcept { return v128_bitselect(a, b, m); }
[[nodiscard]] inline V128 i64x2_relaxed_laneselect(V128 a, V128 b, V128 m) noexcept { return v128_bitselect(a, b, m); }
[[nodiscard]] inline V128 f32x4_relaxed_min(V128 a, V128 b) noexcept { return f32x4_min(a, b); }
[[nodiscard]] inline V128 f32x4_relaxed_max(V128 a, V128 b) noexcept { return f32x4_max(a, b); }
[[nodiscard]] inline V128 f64x2_relaxed_min(V128 a, V128 b) noexcept { return f64x2_min(a, b); }
[[nodiscard]] inline V128 f64x2_relaxed_max(V128 a, V128 b) noexcept { return f64x2_max(a, b); }
[[nodiscard]] inline V128 i16x8_relaxed_q15mulr_s(V128 a, V128 b) noexcept { return i16x8_q15mulr_sat_s(a, b); }
[[nodiscard]] inline V128 i16x8_relaxed_dot_i8x16_i7x16_s(V128 a, V128 b) noexcept { return impl::dot_i8_pairs(a, b); }
[[nodiscard]] inline V128 i32x4_relaxed_dot_i8x16_i7x16_add_s(V128 a, V128 b, V128 c) noexcept {
  return i32x4_add(i32x4_extadd_pairwise_i16x8_s(impl::dot_i8_pairs(a, b)), c);
}

}  // inline namespace x86 / portable

}  // namespace sprawling::wasm::simd
