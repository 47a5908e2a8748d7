// Roots of the store's heaps outside the interpreter's value stack (roots.cpp). Private to the engine.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sprawling::wasm {

// The words of this thread's native stack from the caller's frame up to `top` (the outermost
// jit::enter's frame) that could name a GC object — directly, or with bit 63 set (an externref
// wrapping one) — appended to `out`. Conservative: a stray word equal to a live handle keeps its
// object.
void native_stack_words(const void* top, std::vector<std::uint64_t>& out);

// The roots of a collection of the store's heap, as Store::Impl::heap_roots enumerates them:
// spans of words that may hold live handles (some point into `native`, which it owns; keep a
// HeapRoots where it was filled).
struct HeapRoots {
  std::vector<std::span<const std::uint64_t>> spans;
  std::vector<std::uint64_t> native;
  HeapRoots() = default;
  HeapRoots(const HeapRoots&) = delete;
  HeapRoots& operator=(const HeapRoots&) = delete;
};

}  // namespace sprawling::wasm
