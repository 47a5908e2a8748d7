// GC operations the interpreter and the compiled tier share (gc_ops.hpp): the reference test
// behind ref.test, ref.cast and br_on_cast, and struct allocation from frame slots.
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

}  // namespace sprawling::wasm
