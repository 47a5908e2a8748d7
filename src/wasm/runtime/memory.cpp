// Linear memory: reserved once with mmap (PROT_NONE), committed read-write page range by page
// range as it grows, so growth never copies and the base pointer never moves.
#include "wasm/runtime/store_impl.hpp"

#include <algorithm>
#include <cstring>
#include <sys/mman.h>

namespace sprawling::wasm {

MemoryInst::~MemoryInst() {
  if (base == nullptr) return;
  if (image_bytes != 0) drop_image();  // [snapshots] the pool holds zeroed anonymous memory only
  if (pool && pool->impl().give_memory(MemoryBlock{base, reserved, committed}, peak)) return;
  munmap(base, reserved);
}

bool MemoryInst::create(MemoryType t, std::uint64_t max_bytes, std::shared_ptr<ResourcePool> from,
                        ResourceAccount* charge_to) {
  type = t;
  // memory64: up to 2^48 pages declared, but the reservation is still capped by max_bytes.
  const std::uint64_t declared = t.limits.max.value_or(t.limits.is64 ? kMaxPages64 : kMaxPages);
  max_pages = std::min<std::uint64_t>(declared, max_bytes / kPageSize);
  if (t.limits.min > max_pages) return false;
  account = charge_to;
  if (account != nullptr && !account->take(t.limits.min * kPageSize)) return false;
  reserved = max_pages * kPageSize;
  pool = std::move(from);
  if (reserved != 0) {
    std::optional<MemoryBlock> recycled;
    if (pool) recycled = pool->impl().take_memory(reserved);
    if (recycled) {
      base = recycled->base;
      committed = recycled->committed;
    } else {
      void* p = mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) {
        reserved = 0;
        return false;
      }
      base = static_cast<std::uint8_t*>(p);
    }
  }
  const std::uint64_t initial = t.limits.min * kPageSize;  // min <= max_pages: no wrap
  if (!commit(initial)) return false;
  size = peak = initial;
  return true;
}

// Bytes past `size` are never reachable (every access is bounds-checked against size), so a
// recycled reservation may stay read-write beyond it; it is zero there.
bool MemoryInst::commit(std::uint64_t bytes) {
  if (bytes <= committed) return true;
  if (mprotect(base + committed, bytes - committed, PROT_READ | PROT_WRITE) != 0) return false;
  committed = bytes;
  return true;
}

std::int64_t MemoryInst::grow(std::uint64_t delta_pages) {
  const std::uint64_t old_pages = size / kPageSize;
  if (delta_pages > max_pages - old_pages) return -1;  // never wraps: old_pages <= max_pages
  if (delta_pages != 0) {
    const std::uint64_t add = delta_pages * kPageSize;
    if (account != nullptr && !account->take(add)) return -1;
    if (!commit(size + add)) {
      if (account != nullptr) account->used -= add;
      return -1;
    }
    size += add;
    peak = std::max(peak, size);
  }
  return static_cast<std::int64_t>(old_pages);
}

std::int64_t TableInst::grow(std::uint64_t n, std::uint64_t init) {
  const std::uint64_t old = elements.size();
  // n may be any u64 (a 64-bit table's table.grow): compared without wrapping, before any charge.
  if (old > max_elements || n > max_elements - old) return -1;
  if (account != nullptr && !account->take(n * sizeof(std::uint64_t))) return -1;
  elements.resize(old + n, init);
  return static_cast<std::int64_t>(old);
}

// ---------------------------------------------------------------- ResourcePool

ResourcePool::ResourcePool(std::size_t max_cached) : impl_(std::make_unique<Impl>()) { impl_->max_cached = max_cached; }
ResourcePool::~ResourcePool() = default;

ResourcePool::Impl::~Impl() {
  for (const StackBlock& b : stacks) {
    munmap(b.stack, b.stack_bytes);
    munmap(b.frames, b.frames_bytes);
  }
  for (const MemoryBlock& b : memories) munmap(b.base, b.reserved);
}

std::optional<StackBlock> ResourcePool::Impl::take_stack(std::size_t stack_bytes, std::size_t frames_bytes) {
  std::lock_guard lock(mutex);
  for (auto it = stacks.begin(); it != stacks.end(); ++it) {
    if (it->stack_bytes == stack_bytes && it->frames_bytes == frames_bytes) {
      StackBlock b = *it;
      stacks.erase(it);
      return b;
    }
  }
  return std::nullopt;
}

bool ResourcePool::Impl::give_stack(const StackBlock& b) {
  std::lock_guard lock(mutex);
  if (stacks.size() >= max_cached) return false;
  stacks.push_back(b);
  return true;
}

std::optional<MemoryBlock> ResourcePool::Impl::take_memory(std::uint64_t reserved) {
  std::lock_guard lock(mutex);
  for (auto it = memories.begin(); it != memories.end(); ++it) {
    if (it->reserved == reserved) {
      MemoryBlock b = *it;
      memories.erase(it);
      return b;
    }
  }
  return std::nullopt;
}

bool ResourcePool::Impl::give_memory(MemoryBlock b, std::uint64_t dirty) {
  {
    std::lock_guard lock(mutex);
    if (memories.size() >= max_cached) return false;
  }
  // Small memories are cheaper to clear than to fault in again; large ones go back to the kernel.
  constexpr std::uint64_t kClearLimit = std::uint64_t{1} << 20;
  if (dirty <= kClearLimit) {
    std::memset(b.base, 0, dirty);
  } else if (madvise(b.base, dirty, MADV_DONTNEED) != 0) {
    return false;
  }
  std::lock_guard lock(mutex);
  if (memories.size() >= max_cached) return false;
  memories.push_back(b);
  return true;
}

}  // namespace sprawling::wasm
