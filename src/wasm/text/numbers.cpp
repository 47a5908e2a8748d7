// Numeric literal parsing. Decimal floats go through std::from_chars (correctly rounded in
// libstdc++); hex floats are rounded here bit by bit, because their exact rounding (ties to
// even, subnormals, overflow to "constant out of range") is part of the spec testsuite.
#include "wasm/text/numbers.hpp"

#include <bit>
#include <limits>
#include <type_traits>
#include <charconv>
#include <cstring>
#include <string>

namespace sprawling::wasm::text {

namespace {

int digit_value(char c, bool hex) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (hex) {
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  }
  return -1;
}

// Consumes `num` / `hexnum` (digits, single underscores between digits) at text[pos].
// Returns the digit characters without underscores; empty when there is no well-formed run.
// A trailing or doubled underscore makes the whole literal malformed (bad = true).
std::string take_digits(std::string_view text, std::size_t& pos, bool hex, bool& bad) {
  std::string out;
  bool last_underscore = false;
  while (pos < text.size()) {
    const char c = text[pos];
    if (c == '_') {
      if (out.empty() || last_underscore) {
        bad = true;
        return out;
      }
      last_underscore = true;
    } else if (digit_value(c, hex) >= 0) {
      out.push_back(c);
      last_underscore = false;
    } else {
      break;
    }
    ++pos;
  }
  if (last_underscore) bad = true;
  return out;
}

// Magnitude of a digit string in `base`, saturating: OutOfRange past 64 bits.
std::expected<std::uint64_t, NumError> accumulate(const std::string& digits, bool hex) noexcept {
  std::uint64_t v = 0;
  const std::uint64_t base = hex ? 16 : 10;
  for (char c : digits) {
    const auto d = static_cast<std::uint64_t>(digit_value(c, hex));
    if (v > (UINT64_MAX - d) / base) return std::unexpected(NumError::OutOfRange);
    v = v * base + d;
  }
  return v;
}

struct IntLiteral {
  bool negative = false;
  bool has_sign = false;
  std::uint64_t magnitude = 0;
};

std::expected<IntLiteral, NumError> parse_int_literal(std::string_view text) noexcept {
  IntLiteral lit;
  std::size_t pos = 0;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    lit.has_sign = true;
    lit.negative = text[pos] == '-';
    ++pos;
  }
  bool hex = false;
  if (text.substr(pos, 2) == "0x") {
    hex = true;
    pos += 2;
  }
  bool bad = false;
  const std::string digits = take_digits(text, pos, hex, bad);
  if (bad || digits.empty() || pos != text.size()) return std::unexpected(NumError::Malformed);
  auto v = accumulate(digits, hex);
  if (!v) return std::unexpected(v.error());
  lit.magnitude = *v;
  return lit;
}

// Float formats: kMant explicit mantissa bits, kExp exponent bits.
template <unsigned kMant, unsigned kExp>
struct Format {
  static constexpr unsigned mant_bits = kMant;
  static constexpr unsigned exp_bits = kExp;
  static constexpr int bias = (1 << (kExp - 1)) - 1;
  static constexpr int emax = bias;
  static constexpr int emin = 1 - bias;
  static constexpr std::uint64_t exp_mask = (std::uint64_t{1} << kExp) - 1;
  static constexpr std::uint64_t mant_mask = (std::uint64_t{1} << kMant) - 1;
  static constexpr std::uint64_t sign_bit = std::uint64_t{1} << (kMant + kExp);
};
using F32 = Format<23, 8>;
using F64 = Format<52, 11>;

// Rounds m * 2^e2 (m != 0; `sticky` = some nonzero bits below m were dropped) to the format.
template <typename F>
std::expected<std::uint64_t, NumError> round_binary(std::uint64_t m, std::int64_t e2, bool sticky) noexcept {
  constexpr int p = static_cast<int>(F::mant_bits) + 1;  // precision incl. the implicit bit
  const int msb = 63 - std::countl_zero(m);
  const std::int64_t e = msb + e2;  // value in [2^e, 2^(e+1))
  if (e > F::emax) return std::unexpected(NumError::OutOfRange);
  // The exponent of the last kept bit: p-1 below the msb, but never below the subnormal quantum.
  std::int64_t lsb_exp = e - (p - 1);
  if (lsb_exp < F::emin - (p - 1)) lsb_exp = F::emin - (p - 1);
  const std::int64_t shift = lsb_exp - e2;  // bits of m to drop
  std::uint64_t kept = 0;
  if (shift <= 0) {
    kept = m << static_cast<unsigned>(-shift);  // exact; -shift < p so it fits
  } else if (shift > 64) {
    kept = 0;
    // Everything is below half the quantum: rounds to zero.
  } else {
    const std::uint64_t dropped_mask = shift == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t dropped = m & dropped_mask;
    kept = shift == 64 ? 0 : (m >> shift);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    const bool above_half = dropped > half || (dropped == half && sticky);
    const bool at_half = dropped == half && !sticky;
    if (above_half || (at_half && (kept & 1))) ++kept;
  }
  // kept * 2^lsb_exp; normalise a carry into a new bit.
  if (kept == 0) return std::uint64_t{0};
  if (kept >> p) {
    kept >>= 1;
    ++lsb_exp;
  }
  const std::int64_t top = (63 - std::countl_zero(kept)) + lsb_exp;
  if (top > F::emax) return std::unexpected(NumError::OutOfRange);
  if ((kept >> (p - 1)) == 0) return kept;  // subnormal: biased exponent 0
  const auto biased = static_cast<std::uint64_t>(top + F::bias);
  return (biased << F::mant_bits) | (kept & F::mant_mask);
}

// 0x hexnum ('.' hexfrac?)? ([pP] sign? num)?  — text starts after "0x".
template <typename F>
std::expected<std::uint64_t, NumError> parse_hex_float(std::string_view text) noexcept {
  std::size_t pos = 0;
  bool bad = false;
  const std::string int_digits = take_digits(text, pos, true, bad);
  if (bad || int_digits.empty()) return std::unexpected(NumError::Malformed);
  std::string frac_digits;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    frac_digits = take_digits(text, pos, true, bad);
    if (bad) return std::unexpected(NumError::Malformed);
  }
  std::int64_t exp = 0;
  if (pos < text.size() && (text[pos] == 'p' || text[pos] == 'P')) {
    ++pos;
    bool neg = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      neg = text[pos] == '-';
      ++pos;
    }
    const std::string exp_digits = take_digits(text, pos, false, bad);
    if (bad || exp_digits.empty()) return std::unexpected(NumError::Malformed);
    for (char c : exp_digits) {
      exp = exp * 10 + (c - '0');
      if (exp > 100'000'000) exp = 100'000'000;  // far beyond any format; keeps the arithmetic in range
    }
    if (neg) exp = -exp;
  }
  if (pos != text.size()) return std::unexpected(NumError::Malformed);

  // value = 0x<int_digits><frac_digits> * 16^-len(frac) * 2^exp; keep 60 bits plus a sticky bit.
  std::uint64_t m = 0;
  std::int64_t e2 = exp - 4 * static_cast<std::int64_t>(frac_digits.size());
  bool sticky = false;
  const std::string all = int_digits + frac_digits;
  for (char c : all) {
    const auto d = static_cast<std::uint64_t>(digit_value(c, true));
    if (m >> 56) {  // no room for 4 more bits: this digit only scales the value
      e2 += 4;
      sticky = sticky || d != 0;
    } else {
      m = m * 16 + d;
    }
  }
  if (m == 0) return std::uint64_t{0};
  return round_binary<F>(m, e2, sticky);
}

// num ('.' frac?)? ([eE] sign? num)?
template <typename F>
std::expected<std::uint64_t, NumError> parse_decimal_float(std::string_view text) noexcept {
  std::size_t pos = 0;
  bool bad = false;
  std::string clean = take_digits(text, pos, false, bad);
  if (bad || clean.empty()) return std::unexpected(NumError::Malformed);
  // Decimal exponent of the leading digit, to tell overflow from underflow when from_chars
  // reports a range error.
  std::int64_t lead_exp = -1;
  {
    const auto nz = clean.find_first_not_of('0');
    if (nz != std::string::npos) lead_exp = static_cast<std::int64_t>(clean.size() - nz) - 1;
  }
  bool all_zero = lead_exp < 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const std::string frac = take_digits(text, pos, false, bad);
    if (bad) return std::unexpected(NumError::Malformed);
    if (all_zero) {
      const auto nz = frac.find_first_not_of('0');
      if (nz != std::string::npos) {
        lead_exp = -static_cast<std::int64_t>(nz) - 1;
        all_zero = false;
      }
    }
    if (!frac.empty()) {
      clean.push_back('.');
      clean += frac;
    }
  }
  std::int64_t exp = 0;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    clean.push_back('e');
    bool neg = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      neg = text[pos] == '-';
      clean.push_back(text[pos]);
      ++pos;
    }
    const std::string exp_digits = take_digits(text, pos, false, bad);
    if (bad || exp_digits.empty()) return std::unexpected(NumError::Malformed);
    for (char c : exp_digits) {
      exp = exp * 10 + (c - '0');
      if (exp > 100'000'000) exp = 100'000'000;
    }
    if (neg) exp = -exp;
    clean += exp_digits;
  }
  if (pos != text.size()) return std::unexpected(NumError::Malformed);
  if (all_zero) return std::uint64_t{0};

  using Native = std::conditional_t<F::mant_bits == 23, float, double>;
  Native value{};
  const auto r = std::from_chars(clean.data(), clean.data() + clean.size(), value, std::chars_format::general);
  if (r.ec == std::errc::result_out_of_range) {
    if (lead_exp + exp >= 0) return std::unexpected(NumError::OutOfRange);
    return std::uint64_t{0};
  }
  if (r.ec != std::errc{} || r.ptr != clean.data() + clean.size()) return std::unexpected(NumError::Malformed);
  if (value == std::numeric_limits<Native>::infinity()) return std::unexpected(NumError::OutOfRange);
  if constexpr (F::mant_bits == 23) {
    return std::uint64_t{std::bit_cast<std::uint32_t>(value)};
  } else {
    return std::bit_cast<std::uint64_t>(value);
  }
}

template <typename F>
std::expected<std::uint64_t, NumError> parse_float(std::string_view text) noexcept {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  const std::uint64_t sign = negative ? F::sign_bit : 0;
  const std::uint64_t inf = F::exp_mask << F::mant_bits;
  if (text == "inf") return sign | inf;
  if (text == "nan") return sign | inf | (std::uint64_t{1} << (F::mant_bits - 1));
  if (text.starts_with("nan:0x")) {
    std::size_t pos = 6;
    bool bad = false;
    const std::string digits = take_digits(text, pos, true, bad);
    if (bad || digits.empty() || pos != text.size()) return std::unexpected(NumError::Malformed);
    auto payload = accumulate(digits, true);
    if (!payload || *payload == 0 || *payload > F::mant_mask) return std::unexpected(NumError::OutOfRange);
    return sign | inf | *payload;
  }
  if (text.empty() || digit_value(text[0], false) < 0) return std::unexpected(NumError::Malformed);
  std::expected<std::uint64_t, NumError> bits =
      text.starts_with("0x") ? parse_hex_float<F>(text.substr(2)) : parse_decimal_float<F>(text);
  if (!bits) return bits;
  return sign | *bits;
}

}  // namespace

std::expected<std::uint64_t, NumError> parse_unsigned(std::string_view text, unsigned bits) noexcept {
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) return std::unexpected(NumError::Malformed);
  auto lit = parse_int_literal(text);
  if (!lit) return std::unexpected(lit.error());
  if (bits < 64 && lit->magnitude >> bits) return std::unexpected(NumError::OutOfRange);
  return lit->magnitude;
}

std::expected<std::uint64_t, NumError> parse_int(std::string_view text, unsigned bits) noexcept {
  auto lit = parse_int_literal(text);
  if (!lit) return std::unexpected(lit.error());
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << bits) - 1);
  if (lit->negative) {
    const std::uint64_t min_magnitude = std::uint64_t{1} << (bits - 1);
    if (lit->magnitude > min_magnitude) return std::unexpected(NumError::OutOfRange);
    return (~lit->magnitude + 1) & mask;
  }
  if (bits < 64 && lit->magnitude > mask) return std::unexpected(NumError::OutOfRange);
  return lit->magnitude;
}

std::expected<std::uint32_t, NumError> parse_f32(std::string_view text) noexcept {
  auto bits = parse_float<F32>(text);
  if (!bits) return std::unexpected(bits.error());
  return static_cast<std::uint32_t>(*bits);
}

std::expected<std::uint64_t, NumError> parse_f64(std::string_view text) noexcept { return parse_float<F64>(text); }

std::optional<V128Shape> v128_shape(std::string_view keyword) noexcept {
  if (keyword == "i8x16") return V128Shape{16, 8, false};
  if (keyword == "i16x8") return V128Shape{8, 16, false};
  if (keyword == "i32x4") return V128Shape{4, 32, false};
  if (keyword == "i64x2") return V128Shape{2, 64, false};
  if (keyword == "f32x4") return V128Shape{4, 32, true};
  if (keyword == "f64x2") return V128Shape{2, 64, true};
  return std::nullopt;
}

std::expected<std::uint64_t, NumError> parse_lane(const V128Shape& shape, std::string_view text) noexcept {
  if (!shape.is_float) return parse_int(text, shape.bits);
  if (shape.bits == 64) return parse_f64(text);
  return parse_f32(text);
}

void put_lane(std::array<std::uint8_t, 16>& v128, const V128Shape& shape, unsigned index, std::uint64_t bits) noexcept {
  const unsigned bytes = shape.bits / 8;
  for (unsigned i = 0; i < bytes; ++i) v128[index * bytes + i] = static_cast<std::uint8_t>(bits >> (8 * i));
}

}  // namespace sprawling::wasm::text
