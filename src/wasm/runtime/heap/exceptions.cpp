// Throwing: a new exception object in the store's one heap, from the roots every collection uses.
#include "wasm/runtime/heap/exceptions.hpp"

#include "wasm/runtime/heap/roots.hpp"

#include "wasm/runtime/store_impl.hpp"


namespace sprawling::wasm {

std::uint64_t Store::Impl::new_exception(const TagInst* tag, const std::uint64_t* values, const std::uint64_t* top) {
  HeapRoots r;
  auto gather = [&]() -> GcHeap::RootSpans {
    heap_roots(top, r);
    // The values of the exception being made are not in the heap yet: they are roots too.
    r.spans.emplace_back(values, tag->slots);
    return r.spans;
  };
  return gc.make_exception(tag, values, gather, account);
}

}  // namespace sprawling::wasm
