// Text-format numeric literals: integers with `_` separators and hex, and floats (decimal,
// hex, inf, nan, nan:0x…) rounded exactly to f32/f64 bit patterns.
// https://webassembly.github.io/spec/core/text/values.html
#pragma once

#include <cstdint>
#include <expected>
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

}  // namespace sprawling::wasm::text
