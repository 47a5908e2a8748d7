// GC operations the interpreter and the compiled tier share (gc_ops.cpp). Private to the engine.
#pragma once

#include "wasm/runtime/store_impl.hpp"

#include <cstdint>
#include <span>

namespace sprawling::wasm {

// Whether reference `v` matches the heap type `target` (a
// module type index of `inst`, or kAbstractHeap | an abstract byte) with `flags` as the RefTest
// layout has them (bit 0: null matches; bits 8-15: the hierarchy's top).
bool gc_ref_test(GcHeap& heap, const InstanceImpl& inst, std::uint64_t v, std::uint32_t target, std::uint32_t flags);
// A new struct of `type`, its fields from `values` (frame-slot layout; null: all zero); 0 when
// refused. `top` as for new_gc_object.
std::uint64_t gc_struct_new(Store::Impl& s, const FuncType* type, const std::uint64_t* values, const std::uint64_t* top,
                            std::span<const std::span<const std::uint64_t>> extra = {});

}  // namespace sprawling::wasm
