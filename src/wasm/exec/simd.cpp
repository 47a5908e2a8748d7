// The run-time choice of SIMD kernels (SSE4.1 on x86-64 when the CPU has it) and those kernels,
// compiled for SSE4.1 out of line so the rest of the engine keeps x86-64's SSE2 baseline.
#include "wasm/exec/simd.hpp"

#if SPRAWLING_SIMD_X86
#include <smmintrin.h>
#endif

namespace sprawling::wasm::simd {

namespace {
bool detect_sse41() noexcept {
#if SPRAWLING_SIMD_X86
  __builtin_cpu_init();  // may run before the constructors that normally initialise the CPU model
  return __builtin_cpu_supports("sse4.1") != 0;
#else
  return false;
#endif
}
}  // namespace

// Dynamic initialisation: code running before it (another file's static constructor) sees false and
// takes the baseline path, which gives the same results.
bool detail::g_use_sse41 = detect_sse41();

bool cpu_has_sse41() noexcept {
  static const bool has = detect_sse41();
  return has;
}
bool sse41_enabled() noexcept { return detail::g_use_sse41; }
void set_sse41_enabled(bool on) noexcept { detail::g_use_sse41 = on && cpu_has_sse41(); }

#if SPRAWLING_SIMD_X86
namespace detail::sse41 {
namespace {
#define SPRAWLING_SSE41 __attribute__((target("sse4.1")))

SPRAWLING_SSE41 inline __m128i mi(Xmm v) noexcept { return v; }
SPRAWLING_SSE41 inline Xmm of(__m128i m) noexcept { return m; }
// NaN lanes become the canonical NaN (roundps/pd pass a quieted input NaN through).
SPRAWLING_SSE41 inline Xmm canon(__m128 r) noexcept {
  return of(_mm_castps_si128(_mm_blendv_ps(r, _mm_castsi128_ps(_mm_set1_epi32(static_cast<int>(kCanonicalNanF32))),
                                           _mm_cmpunord_ps(r, r))));
}
SPRAWLING_SSE41 inline Xmm canon(__m128d r) noexcept {
  return of(_mm_castpd_si128(_mm_blendv_pd(
      r, _mm_castsi128_pd(_mm_set1_epi64x(static_cast<long long>(kCanonicalNanF64))), _mm_cmpunord_pd(r, r))));
}
SPRAWLING_SSE41 inline __m128 ps(Xmm v) noexcept { return _mm_castsi128_ps(mi(v)); }
SPRAWLING_SSE41 inline __m128d pd(Xmm v) noexcept { return _mm_castsi128_pd(mi(v)); }
}  // namespace

constexpr int kCeil = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
constexpr int kFloor = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
constexpr int kTrunc = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

SPRAWLING_SSE41 Xmm f32x4_ceil(Xmm a) noexcept { return canon(_mm_round_ps(ps(a), kCeil)); }
SPRAWLING_SSE41 Xmm f32x4_floor(Xmm a) noexcept { return canon(_mm_round_ps(ps(a), kFloor)); }
SPRAWLING_SSE41 Xmm f32x4_trunc(Xmm a) noexcept { return canon(_mm_round_ps(ps(a), kTrunc)); }
SPRAWLING_SSE41 Xmm f32x4_nearest(Xmm a) noexcept { return canon(_mm_round_ps(ps(a), kNearest)); }
SPRAWLING_SSE41 Xmm f64x2_ceil(Xmm a) noexcept { return canon(_mm_round_pd(pd(a), kCeil)); }
SPRAWLING_SSE41 Xmm f64x2_floor(Xmm a) noexcept { return canon(_mm_round_pd(pd(a), kFloor)); }
SPRAWLING_SSE41 Xmm f64x2_trunc(Xmm a) noexcept { return canon(_mm_round_pd(pd(a), kTrunc)); }
SPRAWLING_SSE41 Xmm f64x2_nearest(Xmm a) noexcept { return canon(_mm_round_pd(pd(a), kNearest)); }

// pshufb zeroes a lane whose index has bit 7 set: a saturating +0x70 sets it for every index >= 16
// and keeps the low four bits of the others.
SPRAWLING_SSE41 Xmm i8x16_swizzle(Xmm a, Xmm s) noexcept {
  return of(_mm_shuffle_epi8(mi(a), _mm_adds_epu8(mi(s), _mm_set1_epi8(0x70))));
}
// Nibble lookup: popcount(x) = table[x & 15] + table[x >> 4].
SPRAWLING_SSE41 Xmm i8x16_popcnt(Xmm a) noexcept {
  const __m128i table = _mm_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m128i low = _mm_set1_epi8(0x0F);
  const __m128i x = mi(a);
  const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(x, low));
  const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(x, 4), low));
  return of(_mm_add_epi8(lo, hi));
}
// pmulhrsw is the Q15 rounding multiply but wraps -32768 * -32768 to -32768: saturate exactly the lanes
// where both operands are -32768 (the only overflow; every other product rounds to at least -32767).
SPRAWLING_SSE41 Xmm i16x8_q15mulr_sat_s(Xmm a, Xmm b) noexcept {
  const __m128i x = mi(a);
  const __m128i y = mi(b);
  const __m128i min = _mm_set1_epi16(static_cast<short>(0x8000));
  const __m128i both_min = _mm_and_si128(_mm_cmpeq_epi16(x, min), _mm_cmpeq_epi16(y, min));
  return of(_mm_xor_si128(_mm_mulhrs_epi16(x, y), both_min));
}
SPRAWLING_SSE41 Xmm i16x8_narrow_i32x4_u(Xmm a, Xmm b) noexcept { return of(_mm_packus_epi32(mi(a), mi(b))); }

#undef SPRAWLING_SSE41
}  // namespace detail::sse41
#endif

}  // namespace sprawling::wasm::simd
