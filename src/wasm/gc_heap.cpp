// The store's heap of GC struct and array objects (gc_heap.hpp): allocation charged to the
// store's account, and a mark-sweep collection from conservative roots.
#include "wasm/gc_heap.hpp"

#include "wasm/store_impl.hpp"

#include <algorithm>
#include <cstring>

namespace sprawling::wasm {

std::int64_t GcHeap::index_of(std::uint64_t handle) const noexcept {
  if (!gcref::is_object(handle)) return -1;
  const std::uint64_t low = (handle & 0xFFFFFFFFu) >> 1;
  if (low == 0 || low > objects_.size()) return -1;
  const GcObject& o = objects_[low - 1];
  if (!o.live || (o.generation & 0x7FFFFFFFu) != static_cast<std::uint32_t>(handle >> 32)) return -1;
  return static_cast<std::int64_t>(low - 1);
}

GcObject* GcHeap::get(std::uint64_t handle) noexcept {
  const std::int64_t i = index_of(handle);
  return i < 0 ? nullptr : &objects_[static_cast<std::size_t>(i)];
}

void GcHeap::mark_word(std::uint64_t word, std::vector<std::uint32_t>& work) {
  // An externref holding an anyref (extern.convert_any) keeps it alive too.
  const std::int64_t i = index_of(word & ~gcref::kExternBit);
  if (i < 0 || objects_[static_cast<std::size_t>(i)].marked) return;
  objects_[static_cast<std::size_t>(i)].marked = true;
  work.push_back(static_cast<std::uint32_t>(i));
}

void GcHeap::reference_words(std::vector<std::span<const std::uint64_t>>& out) const {
  for (const GcObject& o : objects_) {
    if (o.live && o.bytes != 0) out.emplace_back(o.data.get(), (o.bytes + 7) / 8);
  }
}

void GcHeap::collect(std::span<const std::span<const std::uint64_t>> roots) {
  ++collections_;
  std::vector<std::uint32_t> work;
  for (const auto& span : roots)
    for (const std::uint64_t w : span) mark_word(w, work);
  while (!work.empty()) {
    const GcObject& o = objects_[work.back()];
    work.pop_back();
    const FuncType& t = *o.type;
    if (t.is_struct()) {
      std::uint64_t at = 0;
      for (const FieldType& f : t.fields) {
        if (f.packed == FieldType::Packed::None && f.type.is_ref()) mark_word(o.data.get()[at / 8], work);
        at += f.packed == FieldType::Packed::None && f.type == ValType::V128 ? 16 : 8;
      }
    } else if (t.fields[0].packed == FieldType::Packed::None && t.fields[0].type.is_ref()) {
      for (std::uint32_t k = 0; k < o.length; ++k) mark_word(o.data.get()[k], work);
    }
  }
  for (std::uint32_t i = 0; i < objects_.size(); ++i) {
    GcObject& o = objects_[i];
    if (!o.live) continue;
    if (o.marked) {
      o.marked = false;
      continue;
    }
    live_bytes_ -= kObjectBytes + o.bytes;
    o.live = false;
    ++o.generation;
    o.data.reset();
    o.bytes = 0;
    --live_count_;
    free_.push_back(i);
  }
  since_collect_ = 0;
  live_after_collect_ = live_bytes_;
}

std::uint64_t GcHeap::make(const FuncType* type, std::uint32_t length, std::uint64_t bytes,
                           std::span<const std::span<const std::uint64_t>> roots, ResourceAccount& account) {
  if (bytes > kMaxObjectBytes) return 0;
  bytes = (bytes + 7) & ~std::uint64_t{7};
  const std::uint64_t need = kObjectBytes + bytes;
  if (live_bytes_ + need > charged_bytes_) {
    // The heap would grow: collect first when enough was allocated since the last collection
    // (at least as much as survived it), or when the account refuses the growth.
    bool collected = false;
    if (since_collect_ >= std::max(live_after_collect_, kCollectEvery)) {
      collect(roots);
      collected = true;
    }
    if (live_bytes_ + need > charged_bytes_ && !account.take(live_bytes_ + need - charged_bytes_)) {
      if (collected) return 0;
      collect(roots);
      if (live_bytes_ + need > charged_bytes_ && !account.take(live_bytes_ + need - charged_bytes_)) return 0;
    }
    charged_bytes_ = std::max(charged_bytes_, live_bytes_ + need);
  }
  std::unique_ptr<std::uint64_t, FreeDeleter> data;
  if (bytes != 0) {
    // calloc: large zeroed blocks come from fresh pages, touched only when written.
    data.reset(static_cast<std::uint64_t*>(std::calloc(bytes / 8, 8)));
    if (!data) return 0;
  }
  std::uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    if (objects_.size() >= 0x7FFFFFFE) return 0;  // handles keep the index in 31 bits
    index = static_cast<std::uint32_t>(objects_.size());
    objects_.emplace_back();
  }
  GcObject& o = objects_[index];
  o.type = type;
  o.live = true;
  o.marked = false;
  o.length = length;
  o.bytes = bytes;
  o.data = std::move(data);
  live_bytes_ += need;
  since_collect_ += need;
  ++live_count_;
  return (std::uint64_t{o.generation & 0x7FFFFFFFu} << 32) | ((std::uint64_t{index} + 1) << 1);
}

}  // namespace sprawling::wasm

namespace sprawling::wasm {

namespace {

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

}  // namespace

std::uint64_t Store::Impl::new_gc_object(const FuncType* type, std::uint32_t length, std::uint64_t bytes,
                                         const std::uint64_t* top, std::span<const std::span<const std::uint64_t>> extra) {
  // Roots are read only by a collection, which only an object that grows the heap triggers.
  if (!gc.may_collect(bytes)) return gc.make(type, length, bytes, {}, account);
  // Roots: the value stack up to the allocating frame's end (every frame of every run below it),
  // globals, tables, element segments, the exception in flight, exception objects' values, the
  // references the host holds, and compiled frames (the native stack, while machine code runs).
  std::vector<std::span<const std::uint64_t>> roots;
  std::vector<std::uint64_t> native;
  if (native_roots_top != nullptr) native_stack_words(native_roots_top, native);
  roots.emplace_back(native);
  roots.emplace_back(host_roots);
  roots.emplace_back(stack, static_cast<std::size_t>(top - stack));
  roots.emplace_back(&pending_exception, 1);
  for (const GlobalInst& g : globals)
    if (g.type.type.is_ref()) roots.emplace_back(&g.bits, 1);
  for (const TableInst& t : tables) roots.emplace_back(t.elements);
  for (const auto& inst : instances)
    for (const auto& e : inst->elements) roots.emplace_back(e);
  exceptions.value_words(roots);
  roots.insert(roots.end(), extra.begin(), extra.end());
  return gc.make(type, length, bytes, roots, account);
}

}  // namespace sprawling::wasm

namespace sprawling::wasm {

bool gc_ref_test(GcHeap& heap, const InstanceImpl& inst, std::uint64_t v, std::uint32_t target, std::uint32_t flags) {
  if (v == 0) return (flags & 1) != 0;
  const auto top = static_cast<std::uint8_t>(flags >> 8);
  const bool concrete = target < ValType::kAbstractHeap;
  const auto h = static_cast<std::uint8_t>(target & 0xFF);
  if (!concrete && target == (ValType::kAbstractHeap | top)) return true;  // any, func, extern, exn
  if (!concrete && heap_is_bottom(target)) return false;
  switch (top) {
    case ValType::kFunc: {
      // A concrete function type (the only other func-hierarchy heap type left).
      const auto* f = reinterpret_cast<const FuncInst*>(v);
      const FuncType* want = inst.types[target];
      return f->type == want || declared_subtype(*f->type, *want);
    }
    case ValType::kAny: {
      if ((v & gcref::kExternBit) != 0) return false;  // a host reference: only `any`
      if (gcref::is_i31(v)) return !concrete && (h == ValType::kI31 || h == ValType::kEq);
      const GcObject* o = heap.get(v);
      if (o == nullptr) return false;
      if (concrete) {
        const FuncType* want = inst.types[target];
        return o->type == want || declared_subtype(*o->type, *want);
      }
      if (h == ValType::kEq) return true;
      if (h == ValType::kStruct) return o->type->is_struct();
      if (h == ValType::kArray) return o->type->is_array();
      return false;
    }
    default: return false;  // extern, exn: only their top (above) or bottom
  }
}

std::uint64_t gc_struct_new(Store::Impl& s, const FuncType* type, const std::uint64_t* values, const std::uint64_t* top,
                            std::span<const std::span<const std::uint64_t>> extra) {
  const std::uint64_t bytes = struct_field_offset(*type, type->fields.size());
  const std::uint64_t h = s.new_gc_object(type, 0, bytes, top, extra);
  if (h == 0 || values == nullptr) return h;
  GcObject* o = s.gc.get(h);
  std::uint64_t at = 0;
  for (const FieldType& f : type->fields) {
    const std::uint32_t size = element_bytes(f);
    std::memcpy(o->at(at), values, size);  // little-endian: the low bytes of the slot
    values += size == 16 ? 2 : 1;
    at += size == 16 ? 16 : 8;
  }
  return h;
}

}  // namespace sprawling::wasm

namespace sprawling::wasm {

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
  return o->type->is_struct() ? AnyRef::Struct : AnyRef::Array;
}

}  // namespace sprawling::wasm
