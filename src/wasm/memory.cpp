// Linear memory: reserved once with mmap (PROT_NONE), committed read-write page range by page
// range as it grows, so growth never copies and the base pointer never moves.
#include "wasm/store_impl.hpp"

#include <algorithm>
#include <sys/mman.h>

namespace sprawling::wasm {

MemoryInst::~MemoryInst() {
  if (base != nullptr) munmap(base, reserved);
}

bool MemoryInst::create(MemoryType t, std::uint64_t max_bytes) {
  type = t;
  const std::uint64_t declared = t.limits.max.value_or(kMaxPages);
  max_pages = static_cast<std::uint32_t>(std::min<std::uint64_t>(declared, max_bytes / kPageSize));
  if (t.limits.min > max_pages) return false;
  reserved = static_cast<std::uint64_t>(max_pages) * kPageSize;
  if (reserved != 0) {
    void* p = mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      reserved = 0;
      return false;
    }
    base = static_cast<std::uint8_t*>(p);
  }
  const std::uint64_t initial = static_cast<std::uint64_t>(t.limits.min) * kPageSize;
  if (initial != 0 && mprotect(base, initial, PROT_READ | PROT_WRITE) != 0) return false;
  size = peak = initial;
  return true;
}

std::int64_t MemoryInst::grow(std::uint32_t delta_pages) {
  const std::uint64_t old_pages = size / kPageSize;
  if (delta_pages > max_pages - old_pages) return -1;
  if (delta_pages != 0) {
    const std::uint64_t add = static_cast<std::uint64_t>(delta_pages) * kPageSize;
    if (mprotect(base + size, add, PROT_READ | PROT_WRITE) != 0) return -1;
    size += add;
    peak = std::max(peak, size);
  }
  return static_cast<std::int64_t>(old_pages);
}

}  // namespace sprawling::wasm
