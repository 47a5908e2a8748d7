// is_valid_utf8: the one UTF-8 check of the project (module names, WAT names, WASI guest paths).
// In the lowest layer so that the text front end and the WASI host use it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace sprawling::wasm {

namespace detail {
template <class Bytes>
[[nodiscard]] constexpr bool utf8_well_formed(const Bytes& s) noexcept {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<std::uint8_t>(s[i]);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) {
      len = 2;
      cp = b0 & 0x1F;
      min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3;
      cp = b0 & 0x0F;
      min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4;
      cp = b0 & 0x07;
      min = 0x10000;
    } else {
      return false;  // a stray continuation byte, or 0xF8..0xFF
    }
    if (len > s.size() - i) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<std::uint8_t>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8.
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}
}  // namespace detail

// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
// https://webassembly.github.io/spec/core/binary/values.html#names
[[nodiscard]] constexpr bool is_valid_utf8(std::string_view s) noexcept {
  return detail::utf8_well_formed(s);
}
[[nodiscard]] constexpr bool is_valid_utf8(std::span<const std::uint8_t> s) noexcept {
  return detail::utf8_well_formed(s);
}

}  // namespace sprawling::wasm
