// Roots of the store's heaps outside the interpreter's value stack (roots.cpp). Private to the engine.
#pragma once

#include <cstdint>
#include <vector>

namespace sprawling::wasm {

// The words of this thread's native stack from the caller's frame up to `top` (the outermost
// jit::enter's frame) that could name a GC object — directly, or with bit 63 set (an externref
// wrapping one) — appended to `out`. Conservative: a stray word equal to a live handle keeps its
// object.
void native_stack_words(const void* top, std::vector<std::uint64_t>& out);

}  // namespace sprawling::wasm
