// What a collection reads as roots: compiled frames (the native stack, conservatively), the
// references the host holds (Store::root, Store::RootScope), and the root set an allocation
// that may collect assembles (Store::Impl::new_gc_object).
#include "wasm/runtime/heap/roots.hpp"

#include "wasm/runtime/store_impl.hpp"

#include <vector>

namespace sprawling::wasm {

// The words of this thread's native stack from this frame up to `top` (the outermost jit::enter's
// frame) that could name a GC object — directly, or with bit 63 set (an externref wrapping one) —
// copied into `out`. Machine code keeps wasm values in registers and native stack slots; the
// callee-saved registers are spilled into this frame first, so a value a compiled frame left in
// one (saved by no callee yet) is seen too. Conservative, as the value-stack scan: a stray word
// equal to a live handle keeps its object. Not instrumented: the scan reads every frame between,
// redzones of instrumented frames included.
[[gnu::noinline, gnu::no_sanitize_address]] void native_stack_words(const void* top, std::vector<std::uint64_t>& out) {
  volatile std::uint64_t regs[6] = {};
#if defined(__x86_64__)
  asm volatile(
      "movq %%rbx, 0(%0)\n\t"
      "movq %%rbp, 8(%0)\n\t"
      "movq %%r12, 16(%0)\n\t"
      "movq %%r13, 24(%0)\n\t"
      "movq %%r14, 32(%0)\n\t"
      "movq %%r15, 40(%0)"
      :
      : "r"(regs)
      : "memory");
#else
  __builtin_unwind_init();  // every callee-saved register saved in this frame
#endif
  const auto from = reinterpret_cast<std::uintptr_t>(&regs[0]);
  const auto to = reinterpret_cast<std::uintptr_t>(top);
  if (to <= from) return;  // not this stack (cannot happen: the store runs on one thread at a time)
  for (std::uintptr_t at = from; at + 8 <= to; at += 8) {
    const std::uint64_t w = *reinterpret_cast<const volatile std::uint64_t*>(at);
    if (gcref::is_object(w & ~gcref::kExternBit)) out.push_back(w);
  }
}


void Store::Impl::heap_roots(const std::uint64_t* top, HeapRoots& out) const {
  // The value stack up to the allocating frame's end (every frame of every run below it),
  // globals, tables, element segments, the exception in flight, the references the host holds,
  // and compiled frames (the native stack, while machine code runs).
  if (native_roots_top != nullptr) native_stack_words(native_roots_top, out.native);
  out.spans.emplace_back(out.native);
  out.spans.emplace_back(host_roots);
  out.spans.emplace_back(stack, static_cast<std::size_t>(top - stack));
  out.spans.emplace_back(&pending_exception, 1);
  for (const GlobalInst& g : globals)
    if (g.type.type.is_ref()) out.spans.emplace_back(&g.bits, 1);
  for (const TableInst& t : tables) out.spans.emplace_back(t.elements);
  for (const auto& inst : instances)
    for (const auto& e : inst->elements) out.spans.emplace_back(e);
}

std::uint64_t Store::Impl::new_gc_object(const FuncType* type, std::uint32_t length, std::uint64_t bytes,
                                         const std::uint64_t* top, std::span<const std::span<const std::uint64_t>> extra) {
  // Roots are gathered only by a collection, which only an object that grows the heap triggers.
  HeapRoots r;
  auto gather = [&]() -> GcHeap::RootSpans {
    heap_roots(top, r);
    r.spans.insert(r.spans.end(), extra.begin(), extra.end());
    return r.spans;
  };
  return gc.make(type, length, bytes, gather, account);
}

void Store::root(std::uint64_t bits) {
  if (bits != 0) impl_->host_roots.push_back(bits);
}

std::size_t Store::host_roots() const noexcept {
  return impl_->host_roots.size();
}

Store::RootScope::RootScope(Store& store) noexcept : store_(store), mark_(store.impl().host_roots.size()) {}

Store::RootScope::~RootScope() {
  auto& roots = store_.impl().host_roots;
  if (roots.size() > mark_) roots.resize(mark_);
}

Store::AnyRef Store::any_ref_kind(std::uint64_t bits) noexcept {
  if (bits == 0) return AnyRef::Null;
  if ((bits & gcref::kExternBit) != 0) return AnyRef::Host;
  if (gcref::is_i31(bits)) return AnyRef::I31;
  const GcObject* o = impl_->gc.get(bits);
  if (o == nullptr) return AnyRef::Dangling;
  if (o->tag != nullptr) return AnyRef::Exception;
  return o->type->is_struct() ? AnyRef::Struct : AnyRef::Array;
}

}  // namespace sprawling::wasm
