// The spec's numeric semantics for every simple (non-memory, non-control) operator, one
// constexpr-dispatched template per shape: trapping div/rem and truncations, NaN-correct
// min/max, round-half-even nearest, bit-exact abs/neg/copysign, saturating conversions.
// https://webassembly.github.io/spec/core/exec/numerics.html
#pragma once

#include "wasm/syntax/opcodes.hpp"
#include "wasm/runtime/runtime.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace sprawling::wasm::num {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i32 = std::int32_t;
using i64 = std::int64_t;

template <class F>
using Bits = std::conditional_t<sizeof(F) == 4, u32, u64>;

template <class F>
inline constexpr Bits<F> kSignBit = Bits<F>{1} << (sizeof(F) * 8 - 1);
template <class F>
inline constexpr Bits<F> kQuietBit = static_cast<Bits<F>>(Bits<F>{1} << (std::numeric_limits<F>::digits - 2));

// NaN canonicalization (Features::nan_canonicalization): a NaN of either sign and any payload
// becomes the positive canonical quiet NaN; every other value keeps its bits.
[[nodiscard]] constexpr u32 nan_canonical_f32(u32 bits) noexcept {
  return (bits & 0x7FFFFFFFU) > 0x7F800000U ? 0x7FC00000U : bits;
}
[[nodiscard]] constexpr u64 nan_canonical_f64(u64 bits) noexcept {
  return (bits & 0x7FFFFFFFFFFFFFFFULL) > 0x7FF0000000000000ULL ? 0x7FF8000000000000ULL : bits;
}

// A NaN operand comes back quiet with its payload: an arithmetic NaN as the spec requires.
template <class F>
[[nodiscard]] inline F quiet(F x) noexcept {
  return std::bit_cast<F>(static_cast<Bits<F>>(std::bit_cast<Bits<F>>(x) | kQuietBit<F>));
}

template <class F>
[[nodiscard]] inline F fmin(F a, F b) noexcept {
  if (std::isnan(a) || std::isnan(b)) return a + b;  // propagates a quiet NaN
  if (a == b) return std::bit_cast<F>(static_cast<Bits<F>>(std::bit_cast<Bits<F>>(a) | std::bit_cast<Bits<F>>(b)));
  return a < b ? a : b;
}
template <class F>
[[nodiscard]] inline F fmax(F a, F b) noexcept {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::bit_cast<F>(static_cast<Bits<F>>(std::bit_cast<Bits<F>>(a) & std::bit_cast<Bits<F>>(b)));
  return a > b ? a : b;
}
template <class F>
[[nodiscard]] inline F fabs_bits(F a) noexcept {
  return std::bit_cast<F>(static_cast<Bits<F>>(std::bit_cast<Bits<F>>(a) & ~kSignBit<F>));
}
template <class F>
[[nodiscard]] inline F fneg_bits(F a) noexcept {
  return std::bit_cast<F>(static_cast<Bits<F>>(std::bit_cast<Bits<F>>(a) ^ kSignBit<F>));
}
template <class F>
[[nodiscard]] inline F fcopysign_bits(F a, F b) noexcept {
  return std::bit_cast<F>(static_cast<Bits<F>>((std::bit_cast<Bits<F>>(a) & ~kSignBit<F>) |
                                               (std::bit_cast<Bits<F>>(b) & kSignBit<F>)));
}
// Rounding functions: libm may hand back a signalling NaN unchanged, the spec wants it quiet.
template <class F, class Fn>
[[nodiscard]] inline F fround(F a, Fn fn) noexcept {
  if (std::isnan(a)) return quiet(a);
  return fn(a);
}

// Truncation bounds: the open interval (lo, hi) of floats that truncate into the integer type.
template <class I, class F>
struct TruncBounds;
template <class F>
struct TruncBounds<i32, F> {
  static constexpr F lo = static_cast<F>(-2147483649.0);  // f32: rounds to -2^31 and is excluded below
  static constexpr F hi = static_cast<F>(2147483648.0);
};
template <class F>
struct TruncBounds<u32, F> {
  static constexpr F lo = static_cast<F>(-1.0);
  static constexpr F hi = static_cast<F>(4294967296.0);
};
template <class F>
struct TruncBounds<i64, F> {
  static constexpr F lo = static_cast<F>(-9223372036854775808.0);
  static constexpr F hi = static_cast<F>(9223372036854775808.0);
};
template <class F>
struct TruncBounds<u64, F> {
  static constexpr F lo = static_cast<F>(-1.0);
  static constexpr F hi = static_cast<F>(18446744073709551616.0);
};

template <class I, class F>
[[nodiscard]] inline bool trunc_in_range(F x) noexcept {
  // -2^31 and -2^63 are exactly representable and valid; every other lower bound is exclusive.
  if constexpr (std::is_same_v<I, i32> && std::is_same_v<F, float>) {
    return x >= -2147483648.0f && x < 2147483648.0f;
  } else if constexpr (std::is_same_v<I, i64>) {
    return x >= TruncBounds<I, F>::lo && x < TruncBounds<I, F>::hi;
  } else {
    return x > TruncBounds<I, F>::lo && x < TruncBounds<I, F>::hi;
  }
}

template <class I, class F>
[[nodiscard]] inline TrapKind trunc(F x, I& out) noexcept {
  if (std::isnan(x)) [[unlikely]] return TrapKind::InvalidConversionToInteger;
  if (!trunc_in_range<I>(x)) [[unlikely]] return TrapKind::IntegerOverflow;
  out = static_cast<I>(x);
  return TrapKind::None;
}
template <class I, class F>
[[nodiscard]] inline I trunc_sat(F x) noexcept {
  if (std::isnan(x)) return 0;
  if (trunc_in_range<I>(x)) return static_cast<I>(x);
  return x < 0 ? std::numeric_limits<I>::min() : std::numeric_limits<I>::max();
}

// Binary operators: `a op b` into `r`; a non-None result is the trap.
// Integer operands arrive unsigned (u32/u64), floats as float/double.
template <Opcode op, class T, class R>
[[nodiscard]] inline TrapKind bin(T a, T b, R& r) noexcept {
  using S = std::make_signed_t<std::conditional_t<std::is_integral_v<T>, T, int>>;
  constexpr unsigned kBits = sizeof(T) * 8;
  using O = Opcode;
  if constexpr (op == O::I32Add || op == O::I64Add || op == O::F32Add || op == O::F64Add) r = a + b;
  else if constexpr (op == O::I32Sub || op == O::I64Sub || op == O::F32Sub || op == O::F64Sub) r = a - b;
  else if constexpr (op == O::I32Mul || op == O::I64Mul || op == O::F32Mul || op == O::F64Mul) r = a * b;
  else if constexpr (op == O::F32Div || op == O::F64Div) r = a / b;
  else if constexpr (op == O::I32DivS || op == O::I64DivS) {
    if (b == 0) [[unlikely]] return TrapKind::IntegerDivideByZero;
    if (static_cast<S>(a) == std::numeric_limits<S>::min() && static_cast<S>(b) == -1) [[unlikely]]
      return TrapKind::IntegerOverflow;
    r = static_cast<T>(static_cast<S>(a) / static_cast<S>(b));
  } else if constexpr (op == O::I32DivU || op == O::I64DivU) {
    if (b == 0) [[unlikely]] return TrapKind::IntegerDivideByZero;
    r = a / b;
  } else if constexpr (op == O::I32RemS || op == O::I64RemS) {
    if (b == 0) [[unlikely]] return TrapKind::IntegerDivideByZero;
    r = static_cast<S>(b) == -1 ? T{0} : static_cast<T>(static_cast<S>(a) % static_cast<S>(b));
  } else if constexpr (op == O::I32RemU || op == O::I64RemU) {
    if (b == 0) [[unlikely]] return TrapKind::IntegerDivideByZero;
    r = a % b;
  } else if constexpr (op == O::I32And || op == O::I64And) r = a & b;
  else if constexpr (op == O::I32Or || op == O::I64Or) r = a | b;
  else if constexpr (op == O::I32Xor || op == O::I64Xor) r = a ^ b;
  else if constexpr (op == O::I32Shl || op == O::I64Shl) r = static_cast<T>(a << (b & (kBits - 1)));
  else if constexpr (op == O::I32ShrS || op == O::I64ShrS) r = static_cast<T>(static_cast<S>(a) >> (b & (kBits - 1)));
  else if constexpr (op == O::I32ShrU || op == O::I64ShrU) r = a >> (b & (kBits - 1));
  else if constexpr (op == O::I32Rotl || op == O::I64Rotl) r = std::rotl(a, static_cast<int>(b & (kBits - 1)));
  else if constexpr (op == O::I32Rotr || op == O::I64Rotr) r = std::rotr(a, static_cast<int>(b & (kBits - 1)));
  else if constexpr (op == O::I32Eq || op == O::I64Eq || op == O::F32Eq || op == O::F64Eq) r = a == b;
  else if constexpr (op == O::I32Ne || op == O::I64Ne || op == O::F32Ne || op == O::F64Ne) r = a != b;
  else if constexpr (op == O::I32LtS || op == O::I64LtS) r = static_cast<S>(a) < static_cast<S>(b);
  else if constexpr (op == O::I32LtU || op == O::I64LtU || op == O::F32Lt || op == O::F64Lt) r = a < b;
  else if constexpr (op == O::I32GtS || op == O::I64GtS) r = static_cast<S>(a) > static_cast<S>(b);
  else if constexpr (op == O::I32GtU || op == O::I64GtU || op == O::F32Gt || op == O::F64Gt) r = a > b;
  else if constexpr (op == O::I32LeS || op == O::I64LeS) r = static_cast<S>(a) <= static_cast<S>(b);
  else if constexpr (op == O::I32LeU || op == O::I64LeU || op == O::F32Le || op == O::F64Le) r = a <= b;
  else if constexpr (op == O::I32GeS || op == O::I64GeS) r = static_cast<S>(a) >= static_cast<S>(b);
  else if constexpr (op == O::I32GeU || op == O::I64GeU || op == O::F32Ge || op == O::F64Ge) r = a >= b;
  else if constexpr (op == O::F32Min || op == O::F64Min) r = fmin(a, b);
  else if constexpr (op == O::F32Max || op == O::F64Max) r = fmax(a, b);
  else if constexpr (op == O::F32Copysign || op == O::F64Copysign) r = fcopysign_bits(a, b);
  else static_assert(op == O::Unreachable, "not a binary operator");
  return TrapKind::None;
}

// Unary operators and conversions: `op a` into `r`.
template <Opcode op, class A, class R>
[[nodiscard]] inline TrapKind un(A a, R& r) noexcept {
  using O = Opcode;
  if constexpr (op == O::I32Eqz || op == O::I64Eqz) r = a == 0;
  else if constexpr (op == O::I32Clz || op == O::I64Clz) r = static_cast<R>(std::countl_zero(a));
  else if constexpr (op == O::I32Ctz || op == O::I64Ctz) r = static_cast<R>(std::countr_zero(a));
  else if constexpr (op == O::I32Popcnt || op == O::I64Popcnt) r = static_cast<R>(std::popcount(a));
  else if constexpr (op == O::I32Extend8S) r = static_cast<u32>(static_cast<i32>(static_cast<std::int8_t>(a)));
  else if constexpr (op == O::I32Extend16S) r = static_cast<u32>(static_cast<i32>(static_cast<std::int16_t>(a)));
  else if constexpr (op == O::I64Extend8S) r = static_cast<u64>(static_cast<i64>(static_cast<std::int8_t>(a)));
  else if constexpr (op == O::I64Extend16S) r = static_cast<u64>(static_cast<i64>(static_cast<std::int16_t>(a)));
  else if constexpr (op == O::I64Extend32S || op == O::I64ExtendI32S) r = static_cast<u64>(static_cast<i64>(static_cast<i32>(a)));
  else if constexpr (op == O::I64ExtendI32U) r = static_cast<u64>(a);
  else if constexpr (op == O::I32WrapI64) r = static_cast<u32>(a);
  else if constexpr (op == O::F32Abs || op == O::F64Abs) r = fabs_bits(a);
  else if constexpr (op == O::F32Neg || op == O::F64Neg) r = fneg_bits(a);
  else if constexpr (op == O::F32Ceil || op == O::F64Ceil) r = fround(a, [](A x) { return std::ceil(x); });
  else if constexpr (op == O::F32Floor || op == O::F64Floor) r = fround(a, [](A x) { return std::floor(x); });
  else if constexpr (op == O::F32Trunc || op == O::F64Trunc) r = fround(a, [](A x) { return std::trunc(x); });
  else if constexpr (op == O::F32Nearest || op == O::F64Nearest) r = fround(a, [](A x) { return std::nearbyint(x); });
  else if constexpr (op == O::F32Sqrt || op == O::F64Sqrt) r = std::sqrt(a);
  else if constexpr (op == O::I32TruncF32S || op == O::I32TruncF64S) {
    i32 v = 0;
    if (auto k = trunc<i32>(a, v); k != TrapKind::None) return k;
    r = static_cast<u32>(v);
  } else if constexpr (op == O::I32TruncF32U || op == O::I32TruncF64U) return trunc<u32>(a, r);
  else if constexpr (op == O::I64TruncF32S || op == O::I64TruncF64S) {
    i64 v = 0;
    if (auto k = trunc<i64>(a, v); k != TrapKind::None) return k;
    r = static_cast<u64>(v);
  } else if constexpr (op == O::I64TruncF32U || op == O::I64TruncF64U) return trunc<u64>(a, r);
  else if constexpr (op == O::I32TruncSatF32S || op == O::I32TruncSatF64S) r = static_cast<u32>(trunc_sat<i32>(a));
  else if constexpr (op == O::I32TruncSatF32U || op == O::I32TruncSatF64U) r = trunc_sat<u32>(a);
  else if constexpr (op == O::I64TruncSatF32S || op == O::I64TruncSatF64S) r = static_cast<u64>(trunc_sat<i64>(a));
  else if constexpr (op == O::I64TruncSatF32U || op == O::I64TruncSatF64U) r = trunc_sat<u64>(a);
  else if constexpr (op == O::F32ConvertI32S || op == O::F64ConvertI32S) r = static_cast<R>(static_cast<i32>(a));
  else if constexpr (op == O::F32ConvertI64S || op == O::F64ConvertI64S) r = static_cast<R>(static_cast<i64>(a));
  else if constexpr (op == O::F32ConvertI32U || op == O::F64ConvertI32U || op == O::F32ConvertI64U ||
                     op == O::F64ConvertI64U) r = static_cast<R>(a);
  else if constexpr (op == O::F32DemoteF64 || op == O::F64PromoteF32) r = static_cast<R>(a);
  else if constexpr (op == O::I32ReinterpretF32 || op == O::I64ReinterpretF64 || op == O::F32ReinterpretI32 ||
                     op == O::F64ReinterpretI64) r = std::bit_cast<R>(a);
  else static_assert(op == O::Unreachable, "not a unary operator");
  return TrapKind::None;
}

}  // namespace sprawling::wasm::num
