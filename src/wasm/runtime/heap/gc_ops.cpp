// GC operations the interpreter and the compiled tier share (gc_ops.hpp): the reference test
// behind ref.test, ref.cast and br_on_cast, struct and array allocation from frame slots, and the
// array operations that charge fuel per element (the inline ones are in the header).
#include "wasm/runtime/heap/gc_ops.hpp"

#include "wasm/runtime/store_impl.hpp"

#include <cstring>

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

std::uint64_t gc_array_new_fixed(Store::Impl& s, const FuncType* type, std::uint32_t n, const std::uint64_t* values,
                                 const std::uint64_t* top, std::span<const std::span<const std::uint64_t>> extra) {
  const std::uint32_t size = element_bytes(type->fields[0]);
  const std::uint64_t h = s.new_gc_object(type, n, std::uint64_t{n} * size, top, extra);
  if (h == 0) return 0;
  GcObject* o = s.gc.get(h);
  for (std::uint32_t k = 0; k < n; ++k) {
    std::memcpy(o->at(std::uint64_t{k} * size), values, size);
    values += size == 16 ? 2 : 1;
  }
  return h;
}

namespace {

// `n` units, after the operation's bounds checks: the balance is checked after the charge and a
// spent one refilled (Store::Impl::refuel), whose refusal is the trap.
TrapKind charge(Store::Impl& store, GcFuel& fuel, std::uint64_t n) {
  if (!fuel.metered) return TrapKind::None;
  fuel.balance -= static_cast<std::int64_t>(n);
  if (fuel.balance > 0) return TrapKind::None;
  return store.refuel(fuel.balance, 0);
}

// Whether [at, at + n) leaves a range of `size` units; written so that it cannot wrap.
bool out_of(std::uint64_t size, std::uint64_t at, std::uint64_t n) { return at > size || n > size - at; }

}  // namespace

TrapKind gc_array_new(Store::Impl& store, GcFuel& fuel, const FuncType* type, std::uint32_t n,
                      const std::uint64_t* init, const std::uint64_t* top, std::uint64_t* dst,
                      std::span<const std::span<const std::uint64_t>> extra) {
  const std::uint32_t size = element_bytes(type->fields[0]);
  if (const TrapKind k = charge(store, fuel, n); k != TrapKind::None) return k;
  const std::uint64_t h = store.new_gc_object(type, n, std::uint64_t{n} * size, top, extra);
  if (h == 0) return TrapKind::GcHeapLimit;
  if (init != nullptr) {
    GcObject* o = store.gc.get(h);
    for (std::uint64_t k = 0; k < n; ++k) std::memcpy(o->at(k * size), init, size);
  }
  dst[0] = h;
  return TrapKind::None;
}

TrapKind gc_array_new_data(Store::Impl& store, GcFuel& fuel, const FuncType* type, std::span<const std::uint8_t> seg,
                           std::uint32_t offset, std::uint32_t n, const std::uint64_t* top, std::uint64_t* dst) {
  const std::uint32_t size = element_bytes(type->fields[0]);
  const std::uint64_t bytes = std::uint64_t{n} * size;
  if (out_of(seg.size(), offset, bytes)) return TrapKind::OutOfBoundsMemoryAccess;
  if (const TrapKind k = charge(store, fuel, n); k != TrapKind::None) return k;
  const std::uint64_t h = store.new_gc_object(type, n, bytes, top);
  if (h == 0) return TrapKind::GcHeapLimit;
  if (n != 0) std::memcpy(store.gc.get(h)->at(0), seg.data() + offset, bytes);
  dst[0] = h;
  return TrapKind::None;
}

TrapKind gc_array_new_elem(Store::Impl& store, GcFuel& fuel, const FuncType* type, std::span<const std::uint64_t> seg,
                           std::uint32_t offset, std::uint32_t n, const std::uint64_t* top, std::uint64_t* dst) {
  if (out_of(seg.size(), offset, n)) return TrapKind::OutOfBoundsTableAccess;
  if (const TrapKind k = charge(store, fuel, n); k != TrapKind::None) return k;
  const std::uint64_t h = store.new_gc_object(type, n, std::uint64_t{n} * 8, top);
  if (h == 0) return TrapKind::GcHeapLimit;
  if (n != 0) std::memcpy(store.gc.get(h)->at(0), seg.data() + offset, std::uint64_t{n} * 8);
  dst[0] = h;
  return TrapKind::None;
}

TrapKind gc_array_fill(Store::Impl& store, GcFuel& fuel, std::uint64_t ref, std::uint32_t d,
                       const std::uint64_t* value, std::uint32_t n, std::uint32_t size) {
  GcObject* o = store.gc.get(ref);
  if (o == nullptr) return TrapKind::NullArrayReference;
  if (out_of(o->length, d, n)) return TrapKind::OutOfBoundsArrayAccess;
  if (const TrapKind k = charge(store, fuel, n); k != TrapKind::None) return k;
  for (std::uint64_t k = 0; k < n; ++k) std::memcpy(o->at((d + k) * size), value, size);
  return TrapKind::None;
}

TrapKind gc_array_copy(Store::Impl& store, GcFuel& fuel, std::uint64_t dref, std::uint32_t d, std::uint64_t sref,
                       std::uint32_t s, std::uint32_t n, std::uint32_t size) {
  GcObject* dst = store.gc.get(dref);
  if (dst == nullptr) return TrapKind::NullArrayReference;
  const GcObject* src = store.gc.get(sref);
  if (src == nullptr) return TrapKind::NullArrayReference;
  if (out_of(dst->length, d, n) || out_of(src->length, s, n)) return TrapKind::OutOfBoundsArrayAccess;
  if (const TrapKind k = charge(store, fuel, n); k != TrapKind::None) return k;
  // memmove: array.copy within one array may overlap either way.
  if (n != 0) std::memmove(dst->at(std::uint64_t{d} * size), src->at(std::uint64_t{s} * size), std::uint64_t{n} * size);
  return TrapKind::None;
}

TrapKind gc_array_init_data(Store::Impl& store, GcFuel& fuel, std::uint64_t ref, std::uint32_t d,
                            std::span<const std::uint8_t> seg, std::uint32_t offset, std::uint32_t n,
                            std::uint32_t size) {
  GcObject* o = store.gc.get(ref);
  if (o == nullptr) return TrapKind::NullArrayReference;
  if (out_of(o->length, d, n)) return TrapKind::OutOfBoundsArrayAccess;
  const std::uint64_t bytes = std::uint64_t{n} * size;
  if (out_of(seg.size(), offset, bytes)) return TrapKind::OutOfBoundsMemoryAccess;
  if (const TrapKind k = charge(store, fuel, n); k != TrapKind::None) return k;
  if (n != 0) std::memcpy(o->at(std::uint64_t{d} * size), seg.data() + offset, bytes);
  return TrapKind::None;
}

TrapKind gc_array_init_elem(Store::Impl& store, GcFuel& fuel, std::uint64_t ref, std::uint32_t d,
                            std::span<const std::uint64_t> seg, std::uint32_t offset, std::uint32_t n) {
  GcObject* o = store.gc.get(ref);
  if (o == nullptr) return TrapKind::NullArrayReference;
  if (out_of(o->length, d, n)) return TrapKind::OutOfBoundsArrayAccess;
  if (out_of(seg.size(), offset, n)) return TrapKind::OutOfBoundsTableAccess;
  if (const TrapKind k = charge(store, fuel, n); k != TrapKind::None) return k;
  if (n != 0) std::memcpy(o->at(std::uint64_t{d} * 8), seg.data() + offset, std::uint64_t{n} * 8);
  return TrapKind::None;
}

}  // namespace sprawling::wasm
