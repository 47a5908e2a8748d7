// Lane semantics of the 236 fixed-width SIMD instructions of WebAssembly 3.0 over a 128-bit value
// (spec "Numerics" and "Vector instructions"): one inline function per instruction, named after its text form.
#pragma once

// Implementation paths (on one machine all give bit-identical results, NaNs included; tests/wasm/exec/simd_test.cpp runs each):
//   portable  GCC vector extensions and lane loops only; compiled on every target, and on x86 when
//             SPRAWLING_SIMD_PORTABLE is defined before this header (the test does, to run it here).
//   x86       the portable code plus SSE2 intrinsics (x86-64's baseline) where they beat it.
//   x86+SSE4.1  a few kernels (rounding, swizzle, popcnt, q15mulr, narrow_u) compiled out of line in
//             simd.cpp for SSE4.1 and chosen at run time (__builtin_cpu_supports); sse41_enabled() says
//             whether they are in use and set_sse41_enabled(false) forces the x86 baseline.
// The two header paths live in differently named inline namespaces so both can be linked into one test.
//
// NaN results (the spec allows any canonical or, given a non-canonical NaN operand, arithmetic NaN):
// add sub mul div sqrt return what the CPU's own vector instruction makes, as the scalar operators
// do (on x86 a NaN operand's payload quieted, else the negative default NaN): that is one
// instruction in machine code, where canonicalizing every lane cost the compiled tier up to 1.8x on
// vectorized float loops. Which payload wins when both operands of a lane are NaNs follows the
// operand order the compiler chose, as for the scalar operators. min max ceil floor trunc nearest
// return the positive canonical NaN (f32 0x7FC00000, f64 0x7FF8000000000000) in that lane,
// whatever the operands' payloads and on every path and machine. demote and promote convert
// each lane as their scalar forms f32.demote_f64 and f64.promote_f32 do (a C++ conversion: the NaN
// quieted, its payload's high bits kept), as Wasmtime and V8 do on x86-64, so a NaN's payload read
// back by integer code gives the same answer on every engine. abs, neg, pmin, pmax, splat, lanes,
// loads and stores are bit operations or selections and keep a NaN's bits exactly.
//
// Scalar operands and results travel as the slot's bit pattern: i32 and f32 as std::uint32_t, i64 and f64
// as std::uint64_t (so a signalling NaN is never touched by an x87 or a float conversion). Lane
// immediates are masked to the lane count and shuffle indexes to 0..31, which the validator already
// guarantees; memory helpers take a pointer valid for the access width (bounds are the caller's).

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if !defined(SPRAWLING_SIMD_PORTABLE) && defined(__x86_64__) && defined(__SSE2__)
#define SPRAWLING_SIMD_X86 1
#include <emmintrin.h>
#else
#define SPRAWLING_SIMD_X86 0
#endif

namespace sprawling::wasm::simd {

static_assert(std::endian::native == std::endian::little, "the lane layout below assumes a little-endian host");

// A v128 value: 16 bytes in the spec's little-endian lane order; lo holds bytes 0..7 (lane 0 first).
// Two 64-bit slots of the interpreter's value stack, trivially copyable.
struct V128 {
  std::uint64_t lo;
  std::uint64_t hi;
  friend constexpr bool operator==(const V128&, const V128&) = default;
};
static_assert(sizeof(V128) == 16 && std::is_trivial_v<V128>);

// The canonical NaNs every NaN-producing lane holds (see the header comment).
inline constexpr std::uint32_t kCanonicalNanF32 = 0x7FC00000U;
inline constexpr std::uint64_t kCanonicalNanF64 = 0x7FF8000000000000ULL;

// Two consecutive slots (not necessarily 16-byte aligned) as a v128 and back.
[[nodiscard]] inline V128 from_slots(const std::uint64_t* slots) noexcept { return {slots[0], slots[1]}; }
inline void to_slots(std::uint64_t* slots, V128 v) noexcept {
  slots[0] = v.lo;
  slots[1] = v.hi;
}

// Whether the SSE4.1 kernels are in use (always false off x86-64); setting true is refused (stays
// false) on a CPU without SSE4.1. Tests turn it off to check the baseline path.
[[nodiscard]] bool sse41_enabled() noexcept;
void set_sse41_enabled(bool on) noexcept;
[[nodiscard]] bool cpu_has_sse41() noexcept;

namespace detail {
extern bool g_use_sse41;  // read on the hot path: one predictable branch before an out-of-line kernel

// The SSE4.1 kernels (simd.cpp); call only when g_use_sse41. They take and return a 16-byte vector
// type, which the x86-64 ABI passes in XMM registers: a V128 struct would travel in two general
// registers and pay a store-forwarding stall on the way back into an XMM register.
using Xmm = long long __attribute__((vector_size(16)));
namespace sse41 {
Xmm f32x4_ceil(Xmm a) noexcept;
Xmm f32x4_floor(Xmm a) noexcept;
Xmm f32x4_trunc(Xmm a) noexcept;
Xmm f32x4_nearest(Xmm a) noexcept;
Xmm f64x2_ceil(Xmm a) noexcept;
Xmm f64x2_floor(Xmm a) noexcept;
Xmm f64x2_trunc(Xmm a) noexcept;
Xmm f64x2_nearest(Xmm a) noexcept;
Xmm i8x16_swizzle(Xmm a, Xmm s) noexcept;
Xmm i8x16_popcnt(Xmm a) noexcept;
Xmm i16x8_q15mulr_sat_s(Xmm a, Xmm b) noexcept;
Xmm i16x8_narrow_i32x4_u(Xmm a, Xmm b) noexcept;
}  // namespace sse41

// GCC vector types; arithmetic is done on the unsigned ones so that wrap-around is defined.
using u8x16 = std::uint8_t __attribute__((vector_size(16)));
using i8x16 = std::int8_t __attribute__((vector_size(16)));
using u16x8 = std::uint16_t __attribute__((vector_size(16)));
using i16x8 = std::int16_t __attribute__((vector_size(16)));
using u32x4 = std::uint32_t __attribute__((vector_size(16)));
using i32x4 = std::int32_t __attribute__((vector_size(16)));
using u64x2 = std::uint64_t __attribute__((vector_size(16)));
using i64x2 = std::int64_t __attribute__((vector_size(16)));
using f32x4 = float __attribute__((vector_size(16)));
using f64x2 = double __attribute__((vector_size(16)));
}  // namespace detail

#if SPRAWLING_SIMD_X86
inline namespace x86 {
#else
inline namespace portable {
#endif

namespace impl {
using namespace detail;

template <class T>
[[nodiscard]] inline T as(V128 v) noexcept {
  return std::bit_cast<T>(v);
}
template <class T>
[[nodiscard]] inline V128 of(T t) noexcept {
  return std::bit_cast<V128>(t);
}
// Lane arrays for the operators that have no vector-extension spelling.
template <class L>
using Lanes = std::array<L, 16 / sizeof(L)>;
template <class L>
[[nodiscard]] inline Lanes<L> lanes(V128 v) noexcept {
  return as<Lanes<L>>(v);
}
#if SPRAWLING_SIMD_X86
[[nodiscard]] inline __m128i mi(V128 v) noexcept { return as<__m128i>(v); }
[[nodiscard]] inline V128 of_mi(__m128i m) noexcept { return of(m); }
#endif

// Bit-select on integer masks: m ? a : b per bit.
template <class U>
[[nodiscard]] inline U sel(U m, U a, U b) noexcept {
  return (a & m) | (b & ~m);
}
// All-ones in the lanes holding a NaN (exponent all ones, mantissa non-zero), on the bits. Without
// the sign bit the magnitude is non-negative, so a signed compare (one pcmpgtd) suffices.
[[nodiscard]] inline u32x4 nan_mask(u32x4 bits) noexcept {
  return reinterpret_cast<u32x4>(reinterpret_cast<i32x4>(bits & 0x7FFFFFFFU) > 0x7F800000);
}
[[nodiscard]] inline u64x2 nan_mask(u64x2 bits) noexcept {
  return reinterpret_cast<u64x2>(reinterpret_cast<i64x2>(bits & 0x7FFFFFFFFFFFFFFFULL) > 0x7FF0000000000000LL);
}
// Every NaN lane of r becomes the canonical NaN.
[[nodiscard]] inline V128 canon32(f32x4 r) noexcept {
  const auto bits = as<u32x4>(of(r));
  return of(sel(nan_mask(bits), u32x4{} + kCanonicalNanF32, bits));
}
[[nodiscard]] inline V128 canon64(f64x2 r) noexcept {
  const auto bits = as<u64x2>(of(r));
  return of(sel(nan_mask(bits), u64x2{} + kCanonicalNanF64, bits));
}
template <class F>
[[nodiscard]] inline F canon_scalar(F x) noexcept {
  if constexpr (sizeof(F) == 4) {
    return std::isnan(x) ? std::bit_cast<float>(kCanonicalNanF32) : x;
  } else {
    return std::isnan(x) ? std::bit_cast<double>(kCanonicalNanF64) : x;
  }
}

// Saturating narrowing of one wide lane.
template <class Narrow, class Wide>
[[nodiscard]] inline Narrow saturate(Wide x) noexcept {
  using L = std::numeric_limits<Narrow>;
  return static_cast<Narrow>(std::clamp<Wide>(x, static_cast<Wide>(L::min()), static_cast<Wide>(L::max())));
}

// trunc_sat of one lane: NaN -> 0, out of range -> the nearest bound.
template <class I, class F>
[[nodiscard]] inline I trunc_sat(F x) noexcept {
  if (std::isnan(x)) return 0;
  // 2^31 / 2^32 are exact in both formats; -2^31 is the one in-range lower bound that is exact.
  constexpr F hi = std::is_signed_v<I> ? F(2147483648.0) : F(4294967296.0);
  if (x >= hi) return std::numeric_limits<I>::max();
  if constexpr (std::is_signed_v<I>) {
    if (x < F(-2147483648.0)) return std::numeric_limits<I>::min();
  } else {
    if (x <= F(-1.0)) return 0;
  }
  return static_cast<I>(x);
}

template <class I>
[[nodiscard]] inline V128 trunc_sat_f64x2_zero(V128 a) noexcept {
  const auto x = lanes<double>(a);
  Lanes<I> r{};
  r[0] = trunc_sat<I>(x[0]);
  r[1] = trunc_sat<I>(x[1]);
  return of(r);
}

template <class L, class Fn>
[[nodiscard]] inline V128 map1(V128 a, Fn fn) noexcept {
  auto x = lanes<L>(a);
  for (auto& l : x) l = static_cast<L>(fn(l));
  return of(x);
}
template <class L, class Fn>
[[nodiscard]] inline V128 map2(V128 a, V128 b, Fn fn) noexcept {
  auto x = lanes<L>(a);
  const auto y = lanes<L>(b);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<L>(fn(x[i], y[i]));
  return of(x);
}
// Lanes of `From` at [first, first + N) widened to `To` (extend_low/high; sign by the types).
template <class To, class From>
[[nodiscard]] inline V128 extend(V128 a, std::size_t first) noexcept {
  const auto x = lanes<From>(a);
  Lanes<To> r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = To{x[first + i]};  // widening: sign- or zero-extends
  return of(r);
}
template <class To, class From>
[[nodiscard]] inline V128 extmul(V128 a, V128 b, std::size_t first) noexcept {
  const auto x = lanes<From>(a);
  const auto y = lanes<From>(b);
  Lanes<To> r{};
  // The products fit the wide type exactly (|x*y| <= 2^(2w-2) signed, < 2^(2w) unsigned).
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<To>(static_cast<To>(x[first + i]) * static_cast<To>(y[first + i]));
  return of(r);
}
template <class To, class From>
[[nodiscard]] inline V128 extadd_pairwise(V128 a) noexcept {
  const auto x = lanes<From>(a);
  Lanes<To> r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<To>(static_cast<To>(x[2 * i]) + static_cast<To>(x[2 * i + 1]));
  return of(r);
}
template <class Narrow, class Wide>
[[nodiscard]] inline V128 narrow(V128 a, V128 b) noexcept {
  const auto x = lanes<Wide>(a);
  const auto y = lanes<Wide>(b);
  Lanes<Narrow> r{};
  constexpr std::size_t n = x.size();
  for (std::size_t i = 0; i < n; ++i) {
    r[i] = saturate<Narrow>(x[i]);
    r[n + i] = saturate<Narrow>(y[i]);
  }
  return of(r);
}
template <class L>
[[nodiscard]] inline std::uint32_t all_true(V128 a) noexcept {
  const auto x = lanes<L>(a);
  return std::all_of(x.begin(), x.end(), [](L l) { return l != 0; }) ? 1U : 0U;
}
template <class L>
[[nodiscard]] inline std::uint32_t bitmask(V128 a) noexcept {
  const auto x = lanes<L>(a);
  std::uint32_t r = 0;
  for (std::size_t i = 0; i < x.size(); ++i) r |= static_cast<std::uint32_t>(x[i] < 0) << i;
  return r;
}
template <class L>
[[nodiscard]] inline V128 splat(L x) noexcept {
  Lanes<L> r;
  r.fill(x);
  return of(r);
}
template <class L>
[[nodiscard]] inline L extract(V128 a, unsigned lane) noexcept {
  return lanes<L>(a)[lane & (16 / sizeof(L) - 1)];
}
template <class L>
[[nodiscard]] inline V128 replace(V128 a, unsigned lane, L x) noexcept {
  auto r = lanes<L>(a);
  r[lane & (16 / sizeof(L) - 1)] = x;
  return of(r);
}
template <class L>
[[nodiscard]] inline L load_le(const std::uint8_t* p) noexcept {
  L x;
  std::memcpy(&x, p, sizeof(L));
  return x;
}
template <class L>
[[nodiscard]] inline V128 load_lane(const std::uint8_t* p, V128 v, unsigned lane) noexcept {
  return replace<L>(v, lane, load_le<L>(p));
}
template <class L>
inline void store_lane(std::uint8_t* p, V128 v, unsigned lane) noexcept {
  const L x = extract<L>(v, lane);
  std::memcpy(p, &x, sizeof(L));
}
// load8x8_s and friends: 8 bytes of narrow lanes, each widened.
template <class To, class From>
[[nodiscard]] inline V128 load_extend(const std::uint8_t* p) noexcept {
  Lanes<To> r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = To{load_le<From>(p + i * sizeof(From))};
  return of(r);
}

// fn applied to each F lane of a (the portable path of sqrt).
template <class F, class Fn>
[[nodiscard]] inline V128 per_lane(V128 a, Fn fn) noexcept {
  auto x = lanes<F>(a);
  for (auto& l : x) l = fn(l);
  return of(x);
}
// Float rounding per lane (the portable path of ceil/floor/trunc/nearest), NaN lanes canonical;
// nearbyint rounds half to even in the default rounding mode, which the engine never changes.
template <class F, class Fn>
[[nodiscard]] inline V128 fround(V128 a, Fn fn) noexcept {
  return per_lane<F>(a, [&](F x) { return canon_scalar(fn(x)); });
}
}  // namespace impl

// ---- constant, memory ----------------------------------------------------------------------------
[[nodiscard]] inline V128 v128_load(const std::uint8_t* p) noexcept { return impl::load_le<V128>(p); }
inline void v128_store(std::uint8_t* p, V128 v) noexcept { std::memcpy(p, &v, 16); }
[[nodiscard]] inline V128 v128_load8x8_s(const std::uint8_t* p) noexcept { return impl::load_extend<std::int16_t, std::int8_t>(p); }
[[nodiscard]] inline V128 v128_load8x8_u(const std::uint8_t* p) noexcept { return impl::load_extend<std::uint16_t, std::uint8_t>(p); }
[[nodiscard]] inline V128 v128_load16x4_s(const std::uint8_t* p) noexcept { return impl::load_extend<std::int32_t, std::int16_t>(p); }
[[nodiscard]] inline V128 v128_load16x4_u(const std::uint8_t* p) noexcept { return impl::load_extend<std::uint32_t, std::uint16_t>(p); }
[[nodiscard]] inline V128 v128_load32x2_s(const std::uint8_t* p) noexcept { return impl::load_extend<std::int64_t, std::int32_t>(p); }
[[nodiscard]] inline V128 v128_load32x2_u(const std::uint8_t* p) noexcept { return impl::load_extend<std::uint64_t, std::uint32_t>(p); }
[[nodiscard]] inline V128 v128_load8_splat(const std::uint8_t* p) noexcept { return impl::splat(*p); }
[[nodiscard]] inline V128 v128_load16_splat(const std::uint8_t* p) noexcept { return impl::splat(impl::load_le<std::uint16_t>(p)); }
[[nodiscard]] inline V128 v128_load32_splat(const std::uint8_t* p) noexcept { return impl::splat(impl::load_le<std::uint32_t>(p)); }
[[nodiscard]] inline V128 v128_load64_splat(const std::uint8_t* p) noexcept { return impl::splat(impl::load_le<std::uint64_t>(p)); }
[[nodiscard]] inline V128 v128_load32_zero(const std::uint8_t* p) noexcept { return {impl::load_le<std::uint32_t>(p), 0}; }
[[nodiscard]] inline V128 v128_load64_zero(const std::uint8_t* p) noexcept { return {impl::load_le<std::uint64_t>(p), 0}; }
[[nodiscard]] inline V128 v128_load8_lane(const std::uint8_t* p, V128 v, unsigned lane) noexcept { return impl::load_lane<std::uint8_t>(p, v, lane); }
[[nodiscard]] inline V128 v128_load16_lane(const std::uint8_t* p, V128 v, unsigned lane) noexcept { return impl::load_lane<std::uint16_t>(p, v, lane); }
[[nodiscard]] inline V128 v128_load32_lane(const std::uint8_t* p, V128 v, unsigned lane) noexcept { return impl::load_lane<std::uint32_t>(p, v, lane); }
[[nodiscard]] inline V128 v128_load64_lane(const std::uint8_t* p, V128 v, unsigned lane) noexcept { return impl::load_lane<std::uint64_t>(p, v, lane); }
inline void v128_store8_lane(std::uint8_t* p, V128 v, unsigned lane) noexcept { impl::store_lane<std::uint8_t>(p, v, lane); }
inline void v128_store16_lane(std::uint8_t* p, V128 v, unsigned lane) noexcept { impl::store_lane<std::uint16_t>(p, v, lane); }
inline void v128_store32_lane(std::uint8_t* p, V128 v, unsigned lane) noexcept { impl::store_lane<std::uint32_t>(p, v, lane); }
inline void v128_store64_lane(std::uint8_t* p, V128 v, unsigned lane) noexcept { impl::store_lane<std::uint64_t>(p, v, lane); }
// v128.const: the 16 immediate bytes in order.
[[nodiscard]] inline V128 v128_const(const std::uint8_t* bytes16) noexcept { return v128_load(bytes16); }

// ---- shuffle, swizzle, splat, lanes --------------------------------------------------------------
// i8x16.shuffle: lane i of the result is byte idx[i] of the 32 bytes a ++ b.
[[nodiscard]] inline V128 i8x16_shuffle(V128 a, V128 b, const std::uint8_t* idx16) noexcept {
  std::array<std::uint8_t, 32> ab;
  std::memcpy(ab.data(), &a, 16);
  std::memcpy(ab.data() + 16, &b, 16);
  impl::Lanes<std::uint8_t> r;
  for (std::size_t i = 0; i < 16; ++i) r[i] = ab[idx16[i] & 31U];
  return impl::of(r);
}
// i8x16.swizzle: lane i is a[s[i]], or 0 when s[i] >= 16.
[[nodiscard]] inline V128 i8x16_swizzle(V128 a, V128 s) noexcept {
#if SPRAWLING_SIMD_X86
  if (detail::g_use_sse41) return impl::of(detail::sse41::i8x16_swizzle(impl::as<detail::Xmm>(a), impl::as<detail::Xmm>(s)));
#endif
  const auto x = impl::lanes<std::uint8_t>(a);
  auto r = impl::lanes<std::uint8_t>(s);
  for (auto& l : r) l = l < 16 ? x[l] : std::uint8_t{0};
  return impl::of(r);
}
[[nodiscard]] inline V128 i8x16_splat(std::uint32_t x) noexcept { return impl::splat(static_cast<std::uint8_t>(x)); }
[[nodiscard]] inline V128 i16x8_splat(std::uint32_t x) noexcept { return impl::splat(static_cast<std::uint16_t>(x)); }
[[nodiscard]] inline V128 i32x4_splat(std::uint32_t x) noexcept { return impl::splat(x); }
[[nodiscard]] inline V128 i64x2_splat(std::uint64_t x) noexcept { return impl::splat(x); }
[[nodiscard]] inline V128 f32x4_splat(std::uint32_t bits) noexcept { return impl::splat(bits); }
[[nodiscard]] inline V128 f64x2_splat(std::uint64_t bits) noexcept { return impl::splat(bits); }
[[nodiscard]] inline std::uint32_t i8x16_extract_lane_s(V128 a, unsigned lane) noexcept {
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(impl::extract<std::int8_t>(a, lane)));
}
[[nodiscard]] inline std::uint32_t i8x16_extract_lane_u(V128 a, unsigned lane) noexcept { return impl::extract<std::uint8_t>(a, lane); }
[[nodiscard]] inline std::uint32_t i16x8_extract_lane_s(V128 a, unsigned lane) noexcept {
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(impl::extract<std::int16_t>(a, lane)));
}
[[nodiscard]] inline std::uint32_t i16x8_extract_lane_u(V128 a, unsigned lane) noexcept { return impl::extract<std::uint16_t>(a, lane); }
[[nodiscard]] inline std::uint32_t i32x4_extract_lane(V128 a, unsigned lane) noexcept { return impl::extract<std::uint32_t>(a, lane); }
[[nodiscard]] inline std::uint64_t i64x2_extract_lane(V128 a, unsigned lane) noexcept { return impl::extract<std::uint64_t>(a, lane); }
[[nodiscard]] inline std::uint32_t f32x4_extract_lane(V128 a, unsigned lane) noexcept { return impl::extract<std::uint32_t>(a, lane); }
[[nodiscard]] inline std::uint64_t f64x2_extract_lane(V128 a, unsigned lane) noexcept { return impl::extract<std::uint64_t>(a, lane); }
[[nodiscard]] inline V128 i8x16_replace_lane(V128 a, unsigned lane, std::uint32_t x) noexcept {
  return impl::replace(a, lane, static_cast<std::uint8_t>(x));
}
[[nodiscard]] inline V128 i16x8_replace_lane(V128 a, unsigned lane, std::uint32_t x) noexcept {
  return impl::replace(a, lane, static_cast<std::uint16_t>(x));
}
[[nodiscard]] inline V128 i32x4_replace_lane(V128 a, unsigned lane, std::uint32_t x) noexcept { return impl::replace(a, lane, x); }
[[nodiscard]] inline V128 i64x2_replace_lane(V128 a, unsigned lane, std::uint64_t x) noexcept { return impl::replace(a, lane, x); }
[[nodiscard]] inline V128 f32x4_replace_lane(V128 a, unsigned lane, std::uint32_t bits) noexcept { return impl::replace(a, lane, bits); }
[[nodiscard]] inline V128 f64x2_replace_lane(V128 a, unsigned lane, std::uint64_t bits) noexcept { return impl::replace(a, lane, bits); }

// ---- comparisons: all-ones lanes where true --------------------------------------------------------
#define SPRAWLING_SIMD_CMP(name, T, op)                                                   \
  [[nodiscard]] inline V128 name(V128 a, V128 b) noexcept {                               \
    return impl::of(impl::as<detail::T>(a) op impl::as<detail::T>(b));                    \
  }
SPRAWLING_SIMD_CMP(i8x16_eq, u8x16, ==)
SPRAWLING_SIMD_CMP(i8x16_ne, u8x16, !=)
SPRAWLING_SIMD_CMP(i8x16_lt_s, i8x16, <)
SPRAWLING_SIMD_CMP(i8x16_lt_u, u8x16, <)
SPRAWLING_SIMD_CMP(i8x16_gt_s, i8x16, >)
SPRAWLING_SIMD_CMP(i8x16_gt_u, u8x16, >)
SPRAWLING_SIMD_CMP(i8x16_le_s, i8x16, <=)
SPRAWLING_SIMD_CMP(i8x16_le_u, u8x16, <=)
SPRAWLING_SIMD_CMP(i8x16_ge_s, i8x16, >=)
SPRAWLING_SIMD_CMP(i8x16_ge_u, u8x16, >=)
SPRAWLING_SIMD_CMP(i16x8_eq, u16x8, ==)
SPRAWLING_SIMD_CMP(i16x8_ne, u16x8, !=)
SPRAWLING_SIMD_CMP(i16x8_lt_s, i16x8, <)
SPRAWLING_SIMD_CMP(i16x8_lt_u, u16x8, <)
SPRAWLING_SIMD_CMP(i16x8_gt_s, i16x8, >)
SPRAWLING_SIMD_CMP(i16x8_gt_u, u16x8, >)
SPRAWLING_SIMD_CMP(i16x8_le_s, i16x8, <=)
SPRAWLING_SIMD_CMP(i16x8_le_u, u16x8, <=)
SPRAWLING_SIMD_CMP(i16x8_ge_s, i16x8, >=)
SPRAWLING_SIMD_CMP(i16x8_ge_u, u16x8, >=)
SPRAWLING_SIMD_CMP(i32x4_eq, u32x4, ==)
SPRAWLING_SIMD_CMP(i32x4_ne, u32x4, !=)
SPRAWLING_SIMD_CMP(i32x4_lt_s, i32x4, <)
SPRAWLING_SIMD_CMP(i32x4_lt_u, u32x4, <)
SPRAWLING_SIMD_CMP(i32x4_gt_s, i32x4, >)
SPRAWLING_SIMD_CMP(i32x4_gt_u, u32x4, >)
SPRAWLING_SIMD_CMP(i32x4_le_s, i32x4, <=)
SPRAWLING_SIMD_CMP(i32x4_le_u, u32x4, <=)
SPRAWLING_SIMD_CMP(i32x4_ge_s, i32x4, >=)
SPRAWLING_SIMD_CMP(i32x4_ge_u, u32x4, >=)
SPRAWLING_SIMD_CMP(i64x2_eq, u64x2, ==)
SPRAWLING_SIMD_CMP(i64x2_ne, u64x2, !=)
SPRAWLING_SIMD_CMP(i64x2_lt_s, i64x2, <)
SPRAWLING_SIMD_CMP(i64x2_gt_s, i64x2, >)
SPRAWLING_SIMD_CMP(i64x2_le_s, i64x2, <=)
SPRAWLING_SIMD_CMP(i64x2_ge_s, i64x2, >=)
// Ordered comparisons are false and ne is true when either lane is NaN, as IEEE (and the spec) say.
SPRAWLING_SIMD_CMP(f32x4_eq, f32x4, ==)
SPRAWLING_SIMD_CMP(f32x4_ne, f32x4, !=)
SPRAWLING_SIMD_CMP(f32x4_lt, f32x4, <)
SPRAWLING_SIMD_CMP(f32x4_gt, f32x4, >)
SPRAWLING_SIMD_CMP(f32x4_le, f32x4, <=)
SPRAWLING_SIMD_CMP(f32x4_ge, f32x4, >=)
SPRAWLING_SIMD_CMP(f64x2_eq, f64x2, ==)
SPRAWLING_SIMD_CMP(f64x2_ne, f64x2, !=)
SPRAWLING_SIMD_CMP(f64x2_lt, f64x2, <)
SPRAWLING_SIMD_CMP(f64x2_gt, f64x2, >)
SPRAWLING_SIMD_CMP(f64x2_le, f64x2, <=)
SPRAWLING_SIMD_CMP(f64x2_ge, f64x2, >=)
#undef SPRAWLING_SIMD_CMP

// ---- bitwise ---------------------------------------------------------------------------------------
[[nodiscard]] inline V128 v128_not(V128 a) noexcept { return {~a.lo, ~a.hi}; }
[[nodiscard]] inline V128 v128_and(V128 a, V128 b) noexcept { return {a.lo & b.lo, a.hi & b.hi}; }
[[nodiscard]] inline V128 v128_andnot(V128 a, V128 b) noexcept { return {a.lo & ~b.lo, a.hi & ~b.hi}; }
[[nodiscard]] inline V128 v128_or(V128 a, V128 b) noexcept { return {a.lo | b.lo, a.hi | b.hi}; }
[[nodiscard]] inline V128 v128_xor(V128 a, V128 b) noexcept { return {a.lo ^ b.lo, a.hi ^ b.hi}; }
// Bits of a where c is 1, of b where c is 0.
[[nodiscard]] inline V128 v128_bitselect(V128 a, V128 b, V128 c) noexcept {
  return {(a.lo & c.lo) | (b.lo & ~c.lo), (a.hi & c.hi) | (b.hi & ~c.hi)};
}
[[nodiscard]] inline std::uint32_t v128_any_true(V128 a) noexcept { return (a.lo | a.hi) != 0 ? 1U : 0U; }

// ---- integer lanes ---------------------------------------------------------------------------------
#define SPRAWLING_SIMD_BIN(name, T, expr)                                                 \
  [[nodiscard]] inline V128 name(V128 va, V128 vb) noexcept {                             \
    const auto a = impl::as<detail::T>(va);                                               \
    const auto b = impl::as<detail::T>(vb);                                               \
    return impl::of(expr);                                                                \
  }
#define SPRAWLING_SIMD_UN(name, T, expr)                                                  \
  [[nodiscard]] inline V128 name(V128 va) noexcept {                                      \
    const auto a = impl::as<detail::T>(va);                                               \
    return impl::of(expr);                                                                \
  }
// abs wraps for the minimum (abs(-128) = -128); computed as (a ^ s) - s on unsigned lanes.
#define SPRAWLING_SIMD_ABS(name, S, U, bits)                                              \
  [[nodiscard]] inline V128 name(V128 va) noexcept {                                      \
    const auto s = reinterpret_cast<detail::U>(impl::as<detail::S>(va) >> (bits - 1));    \
    const auto a = impl::as<detail::U>(va);                                               \
    return impl::of((a ^ s) - s);                                                         \
  }
#define SPRAWLING_SIMD_SHIFTS(shape, S, U, bits)                                                                \
  [[nodiscard]] inline V128 shape##_shl(V128 a, std::uint32_t n) noexcept {                                     \
    return impl::of(impl::as<detail::U>(a) << static_cast<int>(n & (bits - 1)));                                \
  }                                                                                                             \
  [[nodiscard]] inline V128 shape##_shr_s(V128 a, std::uint32_t n) noexcept {                                   \
    return impl::of(impl::as<detail::S>(a) >> static_cast<int>(n & (bits - 1)));                                \
  }                                                                                                             \
  [[nodiscard]] inline V128 shape##_shr_u(V128 a, std::uint32_t n) noexcept {                                   \
    return impl::of(impl::as<detail::U>(a) >> static_cast<int>(n & (bits - 1)));                                \
  }

SPRAWLING_SIMD_ABS(i8x16_abs, i8x16, u8x16, 8)
SPRAWLING_SIMD_ABS(i16x8_abs, i16x8, u16x8, 16)
SPRAWLING_SIMD_ABS(i32x4_abs, i32x4, u32x4, 32)
SPRAWLING_SIMD_ABS(i64x2_abs, i64x2, u64x2, 64)
SPRAWLING_SIMD_UN(i8x16_neg, u8x16, -a)
SPRAWLING_SIMD_UN(i16x8_neg, u16x8, -a)
SPRAWLING_SIMD_UN(i32x4_neg, u32x4, -a)
SPRAWLING_SIMD_UN(i64x2_neg, u64x2, -a)
SPRAWLING_SIMD_SHIFTS(i8x16, i8x16, u8x16, 8)
SPRAWLING_SIMD_SHIFTS(i16x8, i16x8, u16x8, 16)
SPRAWLING_SIMD_SHIFTS(i32x4, i32x4, u32x4, 32)
SPRAWLING_SIMD_SHIFTS(i64x2, i64x2, u64x2, 64)
SPRAWLING_SIMD_BIN(i8x16_add, u8x16, a + b)
SPRAWLING_SIMD_BIN(i16x8_add, u16x8, a + b)
SPRAWLING_SIMD_BIN(i32x4_add, u32x4, a + b)
SPRAWLING_SIMD_BIN(i64x2_add, u64x2, a + b)
SPRAWLING_SIMD_BIN(i8x16_sub, u8x16, a - b)
SPRAWLING_SIMD_BIN(i16x8_sub, u16x8, a - b)
SPRAWLING_SIMD_BIN(i32x4_sub, u32x4, a - b)
SPRAWLING_SIMD_BIN(i64x2_sub, u64x2, a - b)
SPRAWLING_SIMD_BIN(i16x8_mul, u16x8, a * b)
SPRAWLING_SIMD_BIN(i32x4_mul, u32x4, a * b)
SPRAWLING_SIMD_BIN(i64x2_mul, u64x2, a * b)
SPRAWLING_SIMD_BIN(i8x16_min_s, i8x16, a < b ? a : b)
SPRAWLING_SIMD_BIN(i8x16_min_u, u8x16, a < b ? a : b)
SPRAWLING_SIMD_BIN(i8x16_max_s, i8x16, a > b ? a : b)
SPRAWLING_SIMD_BIN(i8x16_max_u, u8x16, a > b ? a : b)
SPRAWLING_SIMD_BIN(i16x8_min_s, i16x8, a < b ? a : b)
SPRAWLING_SIMD_BIN(i16x8_min_u, u16x8, a < b ? a : b)
SPRAWLING_SIMD_BIN(i16x8_max_s, i16x8, a > b ? a : b)
SPRAWLING_SIMD_BIN(i16x8_max_u, u16x8, a > b ? a : b)
SPRAWLING_SIMD_BIN(i32x4_min_s, i32x4, a < b ? a : b)
SPRAWLING_SIMD_BIN(i32x4_min_u, u32x4, a < b ? a : b)
SPRAWLING_SIMD_BIN(i32x4_max_s, i32x4, a > b ? a : b)
SPRAWLING_SIMD_BIN(i32x4_max_u, u32x4, a > b ? a : b)
// Rounding average (a + b + 1) / 2 without overflow: (a | b) - ((a ^ b) >> 1).
#if SPRAWLING_SIMD_X86
[[nodiscard]] inline V128 i8x16_avgr_u(V128 a, V128 b) noexcept { return impl::of_mi(_mm_avg_epu8(impl::mi(a), impl::mi(b))); }
[[nodiscard]] inline V128 i16x8_avgr_u(V128 a, V128 b) noexcept { return impl::of_mi(_mm_avg_epu16(impl::mi(a), impl::mi(b))); }
#else
SPRAWLING_SIMD_BIN(i8x16_avgr_u, u8x16, (a | b) - ((a ^ b) >> 1))
SPRAWLING_SIMD_BIN(i16x8_avgr_u, u16x8, (a | b) - ((a ^ b) >> 1))
#endif

// Saturating add/sub: SSE2 has them all; the portable lanes compute in int and clamp.
#if SPRAWLING_SIMD_X86
#define SPRAWLING_SIMD_SAT(name, intrinsic, L, W, op) \
  [[nodiscard]] inline V128 name(V128 a, V128 b) noexcept { return impl::of_mi(intrinsic(impl::mi(a), impl::mi(b))); }
#else
#define SPRAWLING_SIMD_SAT(name, intrinsic, L, W, op)                                                         \
  [[nodiscard]] inline V128 name(V128 a, V128 b) noexcept {                                                   \
    return impl::map2<L>(a, b, [](L x, L y) { return impl::saturate<L>(static_cast<W>(x) op static_cast<W>(y)); }); \
  }
#endif
SPRAWLING_SIMD_SAT(i8x16_add_sat_s, _mm_adds_epi8, std::int8_t, int, +)
SPRAWLING_SIMD_SAT(i8x16_add_sat_u, _mm_adds_epu8, std::uint8_t, int, +)
SPRAWLING_SIMD_SAT(i8x16_sub_sat_s, _mm_subs_epi8, std::int8_t, int, -)
SPRAWLING_SIMD_SAT(i8x16_sub_sat_u, _mm_subs_epu8, std::uint8_t, int, -)
SPRAWLING_SIMD_SAT(i16x8_add_sat_s, _mm_adds_epi16, std::int16_t, int, +)
SPRAWLING_SIMD_SAT(i16x8_add_sat_u, _mm_adds_epu16, std::uint16_t, int, +)
SPRAWLING_SIMD_SAT(i16x8_sub_sat_s, _mm_subs_epi16, std::int16_t, int, -)
SPRAWLING_SIMD_SAT(i16x8_sub_sat_u, _mm_subs_epu16, std::uint16_t, int, -)
#undef SPRAWLING_SIMD_SAT

[[nodiscard]] inline V128 i8x16_popcnt(V128 a) noexcept {
#if SPRAWLING_SIMD_X86
  if (detail::g_use_sse41) return impl::of(detail::sse41::i8x16_popcnt(impl::as<detail::Xmm>(a)));
#endif
  // Per-byte SWAR count on each half (std::popcount per byte is a library call without -mpopcnt).
  auto count = [](std::uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    return (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  };
  return {count(a.lo), count(a.hi)};
}
// Q15 rounding multiply: (a * b + 2^14) >> 15, saturated (only -32768 * -32768 overflows).
[[nodiscard]] inline V128 i16x8_q15mulr_sat_s(V128 a, V128 b) noexcept {
#if SPRAWLING_SIMD_X86
  if (detail::g_use_sse41) return impl::of(detail::sse41::i16x8_q15mulr_sat_s(impl::as<detail::Xmm>(a), impl::as<detail::Xmm>(b)));
#endif
  return impl::map2<std::int16_t>(a, b, [](std::int16_t x, std::int16_t y) {
    return impl::saturate<std::int16_t>((std::int32_t{x} * std::int32_t{y} + 0x4000) >> 15);
  });
}

[[nodiscard]] inline std::uint32_t i8x16_all_true(V128 a) noexcept { return impl::all_true<std::uint8_t>(a); }
[[nodiscard]] inline std::uint32_t i16x8_all_true(V128 a) noexcept { return impl::all_true<std::uint16_t>(a); }
[[nodiscard]] inline std::uint32_t i32x4_all_true(V128 a) noexcept { return impl::all_true<std::uint32_t>(a); }
[[nodiscard]] inline std::uint32_t i64x2_all_true(V128 a) noexcept { return impl::all_true<std::uint64_t>(a); }
#if SPRAWLING_SIMD_X86
[[nodiscard]] inline std::uint32_t i8x16_bitmask(V128 a) noexcept {
  return static_cast<std::uint32_t>(_mm_movemask_epi8(impl::mi(a)));
}
[[nodiscard]] inline std::uint32_t i16x8_bitmask(V128 a) noexcept {
  const __m128i m = impl::mi(a);
  return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(m, m)) & 0xFF);
}
[[nodiscard]] inline std::uint32_t i32x4_bitmask(V128 a) noexcept {
  return static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(impl::mi(a))));
}
[[nodiscard]] inline std::uint32_t i64x2_bitmask(V128 a) noexcept {
  return static_cast<std::uint32_t>(_mm_movemask_pd(_mm_castsi128_pd(impl::mi(a))));
}
#else
[[nodiscard]] inline std::uint32_t i8x16_bitmask(V128 a) noexcept { return impl::bitmask<std::int8_t>(a); }
[[nodiscard]] inline std::uint32_t i16x8_bitmask(V128 a) noexcept { return impl::bitmask<std::int16_t>(a); }
[[nodiscard]] inline std::uint32_t i32x4_bitmask(V128 a) noexcept { return impl::bitmask<std::int32_t>(a); }
[[nodiscard]] inline std::uint32_t i64x2_bitmask(V128 a) noexcept { return impl::bitmask<std::int64_t>(a); }
#endif

// Narrowing: signed wide lanes saturated to the narrow signed/unsigned range; a's lanes first.
#if SPRAWLING_SIMD_X86
[[nodiscard]] inline V128 i8x16_narrow_i16x8_s(V128 a, V128 b) noexcept { return impl::of_mi(_mm_packs_epi16(impl::mi(a), impl::mi(b))); }
[[nodiscard]] inline V128 i8x16_narrow_i16x8_u(V128 a, V128 b) noexcept { return impl::of_mi(_mm_packus_epi16(impl::mi(a), impl::mi(b))); }
[[nodiscard]] inline V128 i16x8_narrow_i32x4_s(V128 a, V128 b) noexcept { return impl::of_mi(_mm_packs_epi32(impl::mi(a), impl::mi(b))); }
#else
[[nodiscard]] inline V128 i8x16_narrow_i16x8_s(V128 a, V128 b) noexcept { return impl::narrow<std::int8_t, std::int16_t>(a, b); }
[[nodiscard]] inline V128 i8x16_narrow_i16x8_u(V128 a, V128 b) noexcept { return impl::narrow<std::uint8_t, std::int16_t>(a, b); }
[[nodiscard]] inline V128 i16x8_narrow_i32x4_s(V128 a, V128 b) noexcept { return impl::narrow<std::int16_t, std::int32_t>(a, b); }
#endif
[[nodiscard]] inline V128 i16x8_narrow_i32x4_u(V128 a, V128 b) noexcept {
#if SPRAWLING_SIMD_X86
  if (detail::g_use_sse41) return impl::of(detail::sse41::i16x8_narrow_i32x4_u(impl::as<detail::Xmm>(a), impl::as<detail::Xmm>(b)));
#endif
  return impl::narrow<std::uint16_t, std::int32_t>(a, b);
}

// Extension, extended multiply, pairwise add (low = lanes 0..n/2-1, high = the rest).
[[nodiscard]] inline V128 i16x8_extend_low_i8x16_s(V128 a) noexcept { return impl::extend<std::int16_t, std::int8_t>(a, 0); }
[[nodiscard]] inline V128 i16x8_extend_high_i8x16_s(V128 a) noexcept { return impl::extend<std::int16_t, std::int8_t>(a, 8); }
[[nodiscard]] inline V128 i16x8_extend_low_i8x16_u(V128 a) noexcept { return impl::extend<std::uint16_t, std::uint8_t>(a, 0); }
[[nodiscard]] inline V128 i16x8_extend_high_i8x16_u(V128 a) noexcept { return impl::extend<std::uint16_t, std::uint8_t>(a, 8); }
[[nodiscard]] inline V128 i32x4_extend_low_i16x8_s(V128 a) noexcept { return impl::extend<std::int32_t, std::int16_t>(a, 0); }
[[nodiscard]] inline V128 i32x4_extend_high_i16x8_s(V128 a) noexcept { return impl::extend<std::int32_t, std::int16_t>(a, 4); }
[[nodiscard]] inline V128 i32x4_extend_low_i16x8_u(V128 a) noexcept { return impl::extend<std::uint32_t, std::uint16_t>(a, 0); }
[[nodiscard]] inline V128 i32x4_extend_high_i16x8_u(V128 a) noexcept { return impl::extend<std::uint32_t, std::uint16_t>(a, 4); }
[[nodiscard]] inline V128 i64x2_extend_low_i32x4_s(V128 a) noexcept { return impl::extend<std::int64_t, std::int32_t>(a, 0); }
[[nodiscard]] inline V128 i64x2_extend_high_i32x4_s(V128 a) noexcept { return impl::extend<std::int64_t, std::int32_t>(a, 2); }
[[nodiscard]] inline V128 i64x2_extend_low_i32x4_u(V128 a) noexcept { return impl::extend<std::uint64_t, std::uint32_t>(a, 0); }
[[nodiscard]] inline V128 i64x2_extend_high_i32x4_u(V128 a) noexcept { return impl::extend<std::uint64_t, std::uint32_t>(a, 2); }
[[nodiscard]] inline V128 i16x8_extmul_low_i8x16_s(V128 a, V128 b) noexcept { return impl::extmul<std::int16_t, std::int8_t>(a, b, 0); }
[[nodiscard]] inline V128 i16x8_extmul_high_i8x16_s(V128 a, V128 b) noexcept { return impl::extmul<std::int16_t, std::int8_t>(a, b, 8); }
[[nodiscard]] inline V128 i16x8_extmul_low_i8x16_u(V128 a, V128 b) noexcept { return impl::extmul<std::uint16_t, std::uint8_t>(a, b, 0); }
[[nodiscard]] inline V128 i16x8_extmul_high_i8x16_u(V128 a, V128 b) noexcept { return impl::extmul<std::uint16_t, std::uint8_t>(a, b, 8); }
[[nodiscard]] inline V128 i32x4_extmul_low_i16x8_s(V128 a, V128 b) noexcept { return impl::extmul<std::int32_t, std::int16_t>(a, b, 0); }
[[nodiscard]] inline V128 i32x4_extmul_high_i16x8_s(V128 a, V128 b) noexcept { return impl::extmul<std::int32_t, std::int16_t>(a, b, 4); }
[[nodiscard]] inline V128 i32x4_extmul_low_i16x8_u(V128 a, V128 b) noexcept { return impl::extmul<std::uint32_t, std::uint16_t>(a, b, 0); }
[[nodiscard]] inline V128 i32x4_extmul_high_i16x8_u(V128 a, V128 b) noexcept { return impl::extmul<std::uint32_t, std::uint16_t>(a, b, 4); }
[[nodiscard]] inline V128 i64x2_extmul_low_i32x4_s(V128 a, V128 b) noexcept { return impl::extmul<std::int64_t, std::int32_t>(a, b, 0); }
[[nodiscard]] inline V128 i64x2_extmul_high_i32x4_s(V128 a, V128 b) noexcept { return impl::extmul<std::int64_t, std::int32_t>(a, b, 2); }
[[nodiscard]] inline V128 i64x2_extmul_low_i32x4_u(V128 a, V128 b) noexcept { return impl::extmul<std::uint64_t, std::uint32_t>(a, b, 0); }
[[nodiscard]] inline V128 i64x2_extmul_high_i32x4_u(V128 a, V128 b) noexcept { return impl::extmul<std::uint64_t, std::uint32_t>(a, b, 2); }
[[nodiscard]] inline V128 i16x8_extadd_pairwise_i8x16_s(V128 a) noexcept { return impl::extadd_pairwise<std::int16_t, std::int8_t>(a); }
[[nodiscard]] inline V128 i16x8_extadd_pairwise_i8x16_u(V128 a) noexcept { return impl::extadd_pairwise<std::uint16_t, std::uint8_t>(a); }
[[nodiscard]] inline V128 i32x4_extadd_pairwise_i16x8_s(V128 a) noexcept { return impl::extadd_pairwise<std::int32_t, std::int16_t>(a); }
[[nodiscard]] inline V128 i32x4_extadd_pairwise_i16x8_u(V128 a) noexcept { return impl::extadd_pairwise<std::uint32_t, std::uint16_t>(a); }
// Sum of the two signed 16x16 products per i32 lane, wrapping (only -32768^2 * 2 = 2^31 wraps).
[[nodiscard]] inline V128 i32x4_dot_i16x8_s(V128 a, V128 b) noexcept {
#if SPRAWLING_SIMD_X86
  return impl::of_mi(_mm_madd_epi16(impl::mi(a), impl::mi(b)));
#else
  const auto x = impl::lanes<std::int16_t>(a);
  const auto y = impl::lanes<std::int16_t>(b);
  impl::Lanes<std::uint32_t> r{};
  for (std::size_t i = 0; i < r.size(); ++i) {
    r[i] = static_cast<std::uint32_t>(std::int32_t{x[2 * i]} * y[2 * i]) +
           static_cast<std::uint32_t>(std::int32_t{x[2 * i + 1]} * y[2 * i + 1]);
  }
  return impl::of(r);
#endif
}
#undef SPRAWLING_SIMD_ABS
#undef SPRAWLING_SIMD_SHIFTS

// ---- floating-point lanes ---------------------------------------------------------------------------
// abs/neg are sign-bit operations and keep NaN payloads.
SPRAWLING_SIMD_UN(f32x4_abs, u32x4, a & 0x7FFFFFFFU)
SPRAWLING_SIMD_UN(f32x4_neg, u32x4, a ^ 0x80000000U)
SPRAWLING_SIMD_UN(f64x2_abs, u64x2, a & 0x7FFFFFFFFFFFFFFFULL)
SPRAWLING_SIMD_UN(f64x2_neg, u64x2, a ^ 0x8000000000000000ULL)
#undef SPRAWLING_SIMD_UN

// add/sub/mul/div/sqrt: the CPU's NaN in each lane, as the scalar operators (see the header comment).
#define SPRAWLING_SIMD_FARITH(shape, F)                                                                      \
  [[nodiscard]] inline V128 shape##_add(V128 a, V128 b) noexcept { return impl::of(impl::as<detail::F>(a) + impl::as<detail::F>(b)); } \
  [[nodiscard]] inline V128 shape##_sub(V128 a, V128 b) noexcept { return impl::of(impl::as<detail::F>(a) - impl::as<detail::F>(b)); } \
  [[nodiscard]] inline V128 shape##_mul(V128 a, V128 b) noexcept { return impl::of(impl::as<detail::F>(a) * impl::as<detail::F>(b)); } \
  [[nodiscard]] inline V128 shape##_div(V128 a, V128 b) noexcept { return impl::of(impl::as<detail::F>(a) / impl::as<detail::F>(b)); }
SPRAWLING_SIMD_FARITH(f32x4, f32x4)
SPRAWLING_SIMD_FARITH(f64x2, f64x2)
#undef SPRAWLING_SIMD_FARITH

#if SPRAWLING_SIMD_X86
[[nodiscard]] inline V128 f32x4_sqrt(V128 a) noexcept {
  return impl::of_mi(_mm_castps_si128(_mm_sqrt_ps(_mm_castsi128_ps(impl::mi(a)))));
}
[[nodiscard]] inline V128 f64x2_sqrt(V128 a) noexcept {
  return impl::of_mi(_mm_castpd_si128(_mm_sqrt_pd(_mm_castsi128_pd(impl::mi(a)))));
}
#else
[[nodiscard]] inline V128 f32x4_sqrt(V128 a) noexcept { return impl::per_lane<float>(a, [](float x) { return std::sqrt(x); }); }
[[nodiscard]] inline V128 f64x2_sqrt(V128 a) noexcept { return impl::per_lane<double>(a, [](double x) { return std::sqrt(x); }); }
#endif

// min/max: NaN if either lane is NaN; -0 < +0. pmin/pmax: the spec's `b < a ? b : a` / `a < b ? b : a`,
// a pure selection (a NaN operand's bits pass through untouched when chosen).
#define SPRAWLING_SIMD_FMINMAX(shape, F, U, canon)                                                           \
  [[nodiscard]] inline V128 shape##_min(V128 va, V128 vb) noexcept {                                          \
    const auto a = impl::as<detail::F>(va), b = impl::as<detail::F>(vb);                                      \
    const auto ua = impl::as<detail::U>(va), ub = impl::as<detail::U>(vb);                                    \
    auto r = impl::sel(reinterpret_cast<detail::U>(a < b), ua, ub);                                           \
    r = impl::sel(reinterpret_cast<detail::U>(a == b), ua | ub, r);                                           \
    return impl::of(impl::sel(impl::nan_mask(ua) | impl::nan_mask(ub), detail::U{} + canon, r));    \
  }                                                                                                           \
  [[nodiscard]] inline V128 shape##_max(V128 va, V128 vb) noexcept {                                          \
    const auto a = impl::as<detail::F>(va), b = impl::as<detail::F>(vb);                                      \
    const auto ua = impl::as<detail::U>(va), ub = impl::as<detail::U>(vb);                                    \
    auto r = impl::sel(reinterpret_cast<detail::U>(a > b), ua, ub);                                           \
    r = impl::sel(reinterpret_cast<detail::U>(a == b), ua & ub, r);                                           \
    return impl::of(impl::sel(impl::nan_mask(ua) | impl::nan_mask(ub), detail::U{} + canon, r));    \
  }                                                                                                           \
  [[nodiscard]] inline V128 shape##_pmin(V128 va, V128 vb) noexcept {                                         \
    const auto a = impl::as<detail::F>(va), b = impl::as<detail::F>(vb);                                      \
    return impl::of(impl::sel(reinterpret_cast<detail::U>(b < a), impl::as<detail::U>(vb), impl::as<detail::U>(va))); \
  }                                                                                                           \
  [[nodiscard]] inline V128 shape##_pmax(V128 va, V128 vb) noexcept {                                         \
    const auto a = impl::as<detail::F>(va), b = impl::as<detail::F>(vb);                                      \
    return impl::of(impl::sel(reinterpret_cast<detail::U>(a < b), impl::as<detail::U>(vb), impl::as<detail::U>(va))); \
  }
SPRAWLING_SIMD_FMINMAX(f32x4, f32x4, u32x4, kCanonicalNanF32)
SPRAWLING_SIMD_FMINMAX(f64x2, f64x2, u64x2, kCanonicalNanF64)
#undef SPRAWLING_SIMD_FMINMAX
#undef SPRAWLING_SIMD_BIN

#if SPRAWLING_SIMD_X86
#define SPRAWLING_SIMD_ROUND(name, F, fn)                                                       \
  [[nodiscard]] inline V128 name(V128 a) noexcept {                                             \
    if (detail::g_use_sse41) return impl::of(detail::sse41::name(impl::as<detail::Xmm>(a)));    \
    return impl::fround<F>(a, [](F x) { return fn(x); });                                       \
  }
#else
#define SPRAWLING_SIMD_ROUND(name, F, fn) \
  [[nodiscard]] inline V128 name(V128 a) noexcept { return impl::fround<F>(a, [](F x) { return fn(x); }); }
#endif
SPRAWLING_SIMD_ROUND(f32x4_ceil, float, std::ceil)
SPRAWLING_SIMD_ROUND(f32x4_floor, float, std::floor)
SPRAWLING_SIMD_ROUND(f32x4_trunc, float, std::trunc)
SPRAWLING_SIMD_ROUND(f32x4_nearest, float, std::nearbyint)
SPRAWLING_SIMD_ROUND(f64x2_ceil, double, std::ceil)
SPRAWLING_SIMD_ROUND(f64x2_floor, double, std::floor)
SPRAWLING_SIMD_ROUND(f64x2_trunc, double, std::trunc)
SPRAWLING_SIMD_ROUND(f64x2_nearest, double, std::nearbyint)
#undef SPRAWLING_SIMD_ROUND

// ---- conversions -----------------------------------------------------------------------------------
[[nodiscard]] inline V128 i32x4_trunc_sat_f32x4_s(V128 a) noexcept {
#if SPRAWLING_SIMD_X86
  // cvttps2dq gives 0x80000000 for NaN and out of range: zero the NaNs, flip the positive overflows.
  const __m128 f = _mm_castsi128_ps(impl::mi(a));
  __m128i r = _mm_cvttps_epi32(f);
  r = _mm_xor_si128(r, _mm_castps_si128(_mm_cmpge_ps(f, _mm_set1_ps(2147483648.0F))));
  return impl::of_mi(_mm_and_si128(r, _mm_castps_si128(_mm_cmpord_ps(f, f))));
#else
  const auto x = impl::lanes<float>(a);
  impl::Lanes<std::int32_t> r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = impl::trunc_sat<std::int32_t>(x[i]);
  return impl::of(r);
#endif
}
[[nodiscard]] inline V128 i32x4_trunc_sat_f32x4_u(V128 a) noexcept {
  const auto x = impl::lanes<float>(a);
  impl::Lanes<std::uint32_t> r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = impl::trunc_sat<std::uint32_t>(x[i]);
  return impl::of(r);
}
[[nodiscard]] inline V128 i32x4_trunc_sat_f64x2_s_zero(V128 a) noexcept { return impl::trunc_sat_f64x2_zero<std::int32_t>(a); }
[[nodiscard]] inline V128 i32x4_trunc_sat_f64x2_u_zero(V128 a) noexcept { return impl::trunc_sat_f64x2_zero<std::uint32_t>(a); }
// Conversions to float round to nearest even (the hardware default, which the engine never changes).
[[nodiscard]] inline V128 f32x4_convert_i32x4_s(V128 a) noexcept {
  return impl::of(__builtin_convertvector(impl::as<detail::i32x4>(a), detail::f32x4));
}
[[nodiscard]] inline V128 f32x4_convert_i32x4_u(V128 a) noexcept {
  return impl::of(__builtin_convertvector(impl::as<detail::u32x4>(a), detail::f32x4));
}
[[nodiscard]] inline V128 f64x2_convert_low_i32x4_s(V128 a) noexcept {
  const auto x = impl::lanes<std::int32_t>(a);
  return impl::of(impl::Lanes<double>{static_cast<double>(x[0]), static_cast<double>(x[1])});
}
[[nodiscard]] inline V128 f64x2_convert_low_i32x4_u(V128 a) noexcept {
  const auto x = impl::lanes<std::uint32_t>(a);
  return impl::of(impl::Lanes<double>{static_cast<double>(x[0]), static_cast<double>(x[1])});
}
[[nodiscard]] inline V128 f32x4_demote_f64x2_zero(V128 a) noexcept {
  const auto x = impl::lanes<double>(a);
  return impl::of(impl::Lanes<float>{static_cast<float>(x[0]), static_cast<float>(x[1]), 0.0F, 0.0F});
}
[[nodiscard]] inline V128 f64x2_promote_low_f32x4(V128 a) noexcept {
  const auto x = impl::lanes<float>(a);
  return impl::of(impl::Lanes<double>{static_cast<double>(x[0]), static_cast<double>(x[1])});
}

}  // inline namespace x86 / portable
}  // namespace sprawling::wasm::simd
