// The one gate between WASI host functions and guest linear memory: every read and write of
// guest memory goes through GuestMemory, which checks bounds (and alignment, as Wasmtime does)
// and turns a bad pointer into a trap of the guest, never into a host access out of bounds.
#pragma once

#include "wasi/result.hpp"
#include "wasm/runtime/host.hpp"

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

namespace sprawling::wasi {

class GuestMemory {
 public:
  explicit GuestMemory(wasm::MemoryView view) noexcept : view_(view) {}

  [[nodiscard]] std::uint64_t size() const noexcept { return view_.size; }

  // [ptr, ptr + len) as host bytes. The arithmetic is done in 64 bits, so ptr + len cannot wrap.
  [[nodiscard]] Result<std::span<std::uint8_t>> bytes(std::uint32_t ptr, std::uint64_t len,
                                                      std::uint32_t align = 1) const {
    if (align > 1 && ptr % align != 0) return trap("misaligned pointer passed to a WASI function");
    if (view_.base == nullptr || std::uint64_t{ptr} + len > view_.size) {
      return trap("out of bounds memory access in a WASI function");
    }
    return std::span<std::uint8_t>(view_.base + ptr, static_cast<std::size_t>(len));
  }

  // An array of `count` records of `elem_size` bytes; the total is checked without overflow.
  [[nodiscard]] Result<std::span<std::uint8_t>> array(std::uint32_t ptr, std::uint32_t count, std::uint32_t elem_size,
                                                      std::uint32_t align) const {
    return bytes(ptr, std::uint64_t{count} * elem_size, align);
  }

  // Little-endian scalar at a naturally aligned address (the host is little-endian like wasm).
  template <class T>
    requires std::is_trivially_copyable_v<T>
  [[nodiscard]] Result<T> load(std::uint32_t ptr) const {
    auto span = bytes(ptr, sizeof(T), alignof(T));
    if (!span) return std::unexpected(std::move(span).error());
    T value;
    std::memcpy(&value, span->data(), sizeof(T));
    return value;
  }

  template <class T>
    requires std::is_trivially_copyable_v<T>
  [[nodiscard]] Result<void> store(std::uint32_t ptr, T value) const {
    auto span = bytes(ptr, sizeof(T), alignof(T));
    if (!span) return std::unexpected(std::move(span).error());
    std::memcpy(span->data(), &value, sizeof(T));
    return {};
  }

  [[nodiscard]] Result<void> write(std::uint32_t ptr, std::span<const std::uint8_t> data) const {
    auto span = bytes(ptr, data.size());
    if (!span) return std::unexpected(std::move(span).error());
    if (!data.empty()) std::memcpy(span->data(), data.data(), data.size());
    return {};
  }

 private:
  wasm::MemoryView view_;
};

// Scalar access inside a span already obtained from GuestMemory (records such as filestat):
// the span was bounds-checked as a whole, these only place fields at fixed offsets within it.
template <class T>
  requires std::is_trivially_copyable_v<T>
inline void put(std::span<std::uint8_t> record, std::uint32_t offset, T value) noexcept {
  std::memcpy(record.data() + offset, &value, sizeof(T));
}
template <class T>
  requires std::is_trivially_copyable_v<T>
[[nodiscard]] inline T get(std::span<const std::uint8_t> record, std::uint32_t offset) noexcept {
  T value;
  std::memcpy(&value, record.data() + offset, sizeof(T));
  return value;
}

}  // namespace sprawling::wasi
