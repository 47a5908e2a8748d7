// ByteReader: a cursor over a module binary that decodes bytes, LEB128 integers, floats and
// names with the spec's exact malformed-input rules, remembering the first error and its offset.
#pragma once

#include "wasm/binary/decoder.hpp"
#include "wasm/support/utf8.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace sprawling::wasm {

// Error-message building without <format> (GCC 12's library lacks it): concat("unknown global ", 3).
namespace detail {
inline void append(std::string& out, std::string_view v) {
  out += v;
}
template <class T>
requires std::is_integral_v<T>
void append(std::string& out, T v) {
  out += std::to_string(v);
}
}  // namespace detail
template <class... Args>
[[nodiscard]] std::string concat(const Args&... args) {
  std::string out;
  (detail::append(out, args), ...);
  return out;
}
[[nodiscard]] inline std::string hex_byte(unsigned value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  if (value > 0xFF) out = hex_byte(value >> 8);
  out += kDigits[(value >> 4) & 0xF];
  out += kDigits[value & 0xF];
  return out;
}

// Reads never throw and never run past the end: a failed read records the first error
// (later ones are ignored) and yields zero, so callers check ok() at convenient points.
// Offsets are absolute positions in the module binary.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}

  [[nodiscard]] std::size_t offset() const noexcept { return pos_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  [[nodiscard]] bool at_end() const noexcept { return pos_ >= bytes_.size(); }
  [[nodiscard]] std::size_t remaining() const noexcept { return at_end() ? 0 : bytes_.size() - pos_; }
  [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }
  void seek(std::size_t pos) noexcept { pos_ = pos; }

  [[nodiscard]] bool ok() const noexcept { return !error_.has_value(); }
  [[nodiscard]] const std::optional<CompileError>& error() const noexcept { return error_; }
  // Records an error unless one is already recorded; always returns false.
  bool fail(CompileError::Kind kind, std::size_t offset, std::string message) {
    if (!error_) error_ = CompileError{kind, std::move(message), offset};
    return false;
  }
  bool malformed(std::size_t offset, std::string message) {
    return fail(CompileError::Kind::Malformed, offset, std::move(message));
  }
  // What running out of bytes is called: "unexpected end" at the top level of the module,
  // "unexpected end of section or function" inside a section (the spec's two wordings).
  void set_eof_message(std::string_view message) noexcept { eof_message_ = message; }

  [[nodiscard]] std::optional<std::uint8_t> peek() const noexcept {
    if (!ok() || at_end()) return std::nullopt;
    return bytes_[pos_];
  }

  std::uint8_t u8() {
    if (!ok()) return 0;
    if (at_end()) {
      malformed(bytes_.size(), std::string(eof_message_));
      return 0;
    }
    return bytes_[pos_++];
  }

  // One-byte encodings (most indices and small constants) skip the general loop.
  std::uint32_t u32() {
    if (pos_ < bytes_.size() && bytes_[pos_] < 0x80 && ok()) return bytes_[pos_++];
    return static_cast<std::uint32_t>(uleb(32));
  }
  // Narrow LEB128 fields the spec reads as such: limits flags (u1), the functype form (s7).
  std::uint32_t u1() { return static_cast<std::uint32_t>(uleb(1)); }
  std::int32_t s7() { return static_cast<std::int32_t>(sleb(7)); }
  std::int32_t s32() {
    if (pos_ < bytes_.size() && bytes_[pos_] < 0x80 && ok()) {
      const std::uint8_t b = bytes_[pos_++];
      return (b & 0x40) != 0 ? static_cast<std::int32_t>(b) - 0x80 : static_cast<std::int32_t>(b);
    }
    return static_cast<std::int32_t>(sleb(32));
  }
  std::uint64_t u64() { return uleb(64); }
  std::int64_t s33() { return sleb(33); }
  std::int64_t s64() { return sleb(64); }

  std::uint32_t f32_bits() {
    std::uint32_t v = 0;
    const auto b = take(4);
    if (b.size() == 4) std::memcpy(&v, b.data(), 4);
    return v;
  }
  std::uint64_t f64_bits() {
    std::uint64_t v = 0;
    const auto b = take(8);
    if (b.size() == 8) std::memcpy(&v, b.data(), 8);
    return v;
  }

  // n raw bytes (empty on failure: "unexpected end…").
  std::span<const std::uint8_t> take(std::size_t n) {
    if (!ok()) return {};
    if (n > remaining()) {
      malformed(bytes_.size(), std::string(eof_message_));
      pos_ = bytes_.size();
      return {};
    }
    const auto out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  // A u32 length that must fit in the bytes left in the module ("length out of bounds").
  std::uint32_t length() {
    const std::size_t at = pos_;
    const std::uint32_t n = u32();
    if (ok() && n > remaining()) {
      malformed(at, "length out of bounds");
      return 0;
    }
    return n;
  }

  // name ::= vec(byte) holding UTF-8.
  std::string_view name() {
    const std::uint32_t n = length();
    const std::size_t at = pos_;
    const auto b = take(n);
    if (!ok()) return {};
    const std::string_view s(reinterpret_cast<const char*>(b.data()), b.size());
    if (!is_valid_utf8(s)) {
      malformed(at, "malformed UTF-8 encoding");
      return {};
    }
    return s;
  }

 private:
  // https://webassembly.github.io/spec/core/binary/values.html#integers: at most ceil(N/7) bytes
  // ("integer representation too long"), and the unused bits of the last byte must be zero
  // ("integer too large").
  std::uint64_t uleb(unsigned bits) {
    std::uint64_t result = 0;
    unsigned shift = 0;
    for (int left = static_cast<int>(bits);; left -= 7) {
      if (left <= 0) {
        malformed(pos_, "integer representation too long");
        return 0;
      }
      const std::size_t at = pos_;
      const std::uint8_t b = u8();
      if (!ok()) return 0;
      if (left < 7 && (b & 0x7F) >= (1u << left)) {
        malformed(at, "integer too large");
        return 0;
      }
      result |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      shift += 7;
      if ((b & 0x80) == 0) return result;
    }
  }

  // Signed: the unused bits of the last byte must all equal the sign bit.
  std::int64_t sleb(unsigned bits) {
    std::uint64_t result = 0;
    unsigned shift = 0;
    for (int left = static_cast<int>(bits);; left -= 7) {
      if (left <= 0) {
        malformed(pos_, "integer representation too long");
        return 0;
      }
      const std::size_t at = pos_;
      const std::uint8_t b = u8();
      if (!ok()) return 0;
      if (left < 7) {
        const auto mask = static_cast<std::uint8_t>((0xFFu << (left - 1)) & 0x7F);
        if ((b & mask) != 0 && (b & mask) != mask) {
          malformed(at, "integer too large");
          return 0;
        }
      }
      result |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      shift += 7;
      if ((b & 0x80) == 0) {
        if (shift < 64 && (b & 0x40) != 0) result |= ~std::uint64_t{0} << shift;
        return static_cast<std::int64_t>(result);
      }
    }
  }

  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  std::optional<CompileError> error_;
  std::string_view eof_message_ = "unexpected end";
};

}  // namespace sprawling::wasm
