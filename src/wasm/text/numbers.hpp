// Text-format numeric literals: integers with `_` separators and hex, and floats (decimal,
// hex, inf, nan, nan:0x…) rounded exactly to f32/f64 bit patterns.
// https://webassembly.github.io/spec/core/text/values.html
#pragma once

#include <array>
#include <cstdint>
#include <expected>
#include <optional>
#include <string_view>

namespace sprawling::wasm::text {

enum class NumError : std::uint8_t {
  Malformed,   // not a literal of the expected shape ("unknown operator" in the testsuite's words)
  OutOfRange,  // well-formed but does not fit ("constant out of range")
};

// An unsigned literal (`u32`, `u64`: no sign) of at most `bits` bits.
[[nodiscard]] std::expected<std::uint64_t, NumError> parse_unsigned(std::string_view text, unsigned bits) noexcept;

// An `iN` literal: unsigned up to 2^N-1 or signed down to -2^(N-1); the result is its N-bit
// two's complement pattern, zero-extended.
[[nodiscard]] std::expected<std::uint64_t, NumError> parse_int(std::string_view text, unsigned bits) noexcept;

// An `f32`/`f64` literal as its IEEE bit pattern. Rounds to nearest, ties to even; a finite
// literal that rounds to infinity is OutOfRange, as is a nan payload of 0 or too wide.
[[nodiscard]] std::expected<std::uint32_t, NumError> parse_f32(std::string_view text) noexcept;
[[nodiscard]] std::expected<std::uint64_t, NumError> parse_f64(std::string_view text) noexcept;

// A `v128.const` lane shape: i8x16 i16x8 i32x4 i64x2 f32x4 f64x2.
// https://webassembly.github.io/spec/core/text/instructions.html#vector-instructions
struct V128Shape {
  unsigned lanes = 0;
  unsigned bits = 0;  // lane width
  bool is_float = false;
};
[[nodiscard]] std::optional<V128Shape> v128_shape(std::string_view keyword) noexcept;

// One lane literal of `shape` (an iN or fN literal of the lane width) as its bit pattern.
[[nodiscard]] std::expected<std::uint64_t, NumError> parse_lane(const V128Shape& shape, std::string_view text) noexcept;

// Writes lane `index` of `shape` (little-endian, lane 0 first) into the 16 bytes of a v128.
void put_lane(std::array<std::uint8_t, 16>& v128, const V128Shape& shape, unsigned index, std::uint64_t bits) noexcept;

}  // namespace sprawling::wasm::text
