// GC operations the interpreter and the compiled tier share (gc_ops.cpp). Private to the engine.
//
// Each struct and array instruction's semantics live here once: the checks in the spec's order
// and their trap kinds, the per-element fuel, the allocation and its roots, segment reads, the
// overlap-safe copy and packed reads. The interpreter's handlers (interpreter.cpp) and the
// compiled tier's helpers (runtime_calls.cpp) only fetch the operands from their frame slots and
// turn a returned trap kind into their own trap. The compiled tier emits the five accesses
// (struct.get/set, array.get/set, array.len) as machine code instead, the same checks in the same
// order (emitter.cpp, gc_object).
//
// The conventions: operands come as the frame slots carry them (an object handle, i32 indices and
// counts, a pointer to a value's slots: two for a v128); a function returns TrapKind::None or its
// trap and writes its result to `dst` (two slots for a v128) only when it succeeds. An allocating
// one may collect: its roots are the value stack below `top` (new_gc_object). The operations
// without fuel or allocation are inline, so that the interpreter's handlers stay as fast as when
// they were written out in place.
#pragma once

#include "wasm/runtime/store_impl.hpp"

#include <cstdint>
#include <cstring>
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
// array.new_fixed: a new array of `type` with the `n` elements at `values` (one slot each, two
// for v128); 0 when refused. `top` and `extra` as for gc_struct_new.
std::uint64_t gc_array_new_fixed(Store::Impl& s, const FuncType* type, std::uint32_t n, const std::uint64_t* values,
                                 const std::uint64_t* top, std::span<const std::span<const std::uint64_t>> extra = {});

// The fuel counter a bulk operation (array.new, new_default, new_data, new_elem, fill, copy,
// init_data, init_elem) charges: 1 unit per element after its bounds checks and before it
// allocates or writes, then a refill from the store's reserve when the balance is spent, as the
// interpreter charges bulk memory and table operations. The caller copies its counter in and the
// balance back out, so the interpreter's counter never has its address taken and stays in a
// register. Unmetered runs charge nothing.
struct GcFuel {
  std::int64_t balance;
  bool metered;
};

// array.new (init: the value's slots) and array.new_default (init null: all zero). `extra` as for
// gc_struct_new (constant expressions: instantiation's roots, no fuel).
[[nodiscard]] TrapKind gc_array_new(Store::Impl& store, GcFuel& fuel, const FuncType* type, std::uint32_t n,
                                    const std::uint64_t* init, const std::uint64_t* top, std::uint64_t* dst,
                                    std::span<const std::span<const std::uint64_t>> extra = {});
// array.new_data: `n` elements from data segment `seg` at byte `offset` ("out of bounds memory
// access" past its end).
[[nodiscard]] TrapKind gc_array_new_data(Store::Impl& store, GcFuel& fuel, const FuncType* type,
                                         std::span<const std::uint8_t> seg, std::uint32_t offset, std::uint32_t n,
                                         const std::uint64_t* top, std::uint64_t* dst);
// array.new_elem: `n` references from element segment `seg` at `offset` ("out of bounds table
// access" past its end).
[[nodiscard]] TrapKind gc_array_new_elem(Store::Impl& store, GcFuel& fuel, const FuncType* type,
                                         std::span<const std::uint64_t> seg, std::uint32_t offset, std::uint32_t n,
                                         const std::uint64_t* top, std::uint64_t* dst);
// array.fill: elements [d, d + n) of array `ref` (elements of `size` bytes) set to `value`.
[[nodiscard]] TrapKind gc_array_fill(Store::Impl& store, GcFuel& fuel, std::uint64_t ref, std::uint32_t d,
                                     const std::uint64_t* value, std::uint32_t n, std::uint32_t size);
// array.copy: `n` elements from array `sref` at `s` to array `dref` at `d`; the two ranges may
// overlap (the same array).
[[nodiscard]] TrapKind gc_array_copy(Store::Impl& store, GcFuel& fuel, std::uint64_t dref, std::uint32_t d,
                                     std::uint64_t sref, std::uint32_t s, std::uint32_t n, std::uint32_t size);
// array.init_data: `n` elements of array `ref` from `d` on, read from data segment `seg` at byte
// `offset`; the array's range is checked before the segment's.
[[nodiscard]] TrapKind gc_array_init_data(Store::Impl& store, GcFuel& fuel, std::uint64_t ref, std::uint32_t d,
                                          std::span<const std::uint8_t> seg, std::uint32_t offset, std::uint32_t n,
                                          std::uint32_t size);
// array.init_elem: as init_data, from element segment `seg` (8-byte references).
[[nodiscard]] TrapKind gc_array_init_elem(Store::Impl& store, GcFuel& fuel, std::uint64_t ref, std::uint32_t d,
                                          std::span<const std::uint64_t> seg, std::uint32_t offset, std::uint32_t n);

// Reads a field or element of `size` bytes at p into dst (two slots for 16): i8 and i16 sign-
// (struct.get_s, array.get_s) or zero-extended to the i32 slot, the others as stored.
inline void gc_read(std::uint64_t* dst, const std::uint8_t* p, std::uint32_t size, bool sign) noexcept {
  switch (size) {
    case 1:
      dst[0] = sign ? static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(*p))) : *p;
      break;
    case 2: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      dst[0] = sign ? static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int16_t>(v))) : v;
      break;
    }
    case 4: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      dst[0] = v;
      break;
    }
    case 8: std::memcpy(dst, p, 8); break;
    default: std::memcpy(dst, p, 16); break;
  }
}

// struct.get / struct.get_s: the field at byte `offset` (struct_field_offset) of struct `ref`.
[[nodiscard]] inline TrapKind gc_struct_get(GcHeap& heap, std::uint64_t ref, std::uint32_t offset, std::uint32_t size,
                                            bool sign, std::uint64_t* dst) noexcept {
  const GcObject* o = heap.get(ref);
  if (o == nullptr) [[unlikely]] return TrapKind::NullStructReference;
  gc_read(dst, o->at(offset), size, sign);
  return TrapKind::None;
}
// struct.set: the low `size` bytes of `value`'s slots (little-endian) into the field.
[[nodiscard]] inline TrapKind gc_struct_set(GcHeap& heap, std::uint64_t ref, std::uint32_t offset, std::uint32_t size,
                                            const std::uint64_t* value) noexcept {
  GcObject* o = heap.get(ref);
  if (o == nullptr) [[unlikely]] return TrapKind::NullStructReference;
  std::memcpy(o->at(offset), value, size);
  return TrapKind::None;
}
// array.get / array.get_s: element `i` of array `ref` (elements of `size` bytes).
[[nodiscard]] inline TrapKind gc_array_get(GcHeap& heap, std::uint64_t ref, std::uint32_t i, std::uint32_t size,
                                           bool sign, std::uint64_t* dst) noexcept {
  const GcObject* o = heap.get(ref);
  if (o == nullptr) [[unlikely]] return TrapKind::NullArrayReference;
  if (i >= o->length) [[unlikely]] return TrapKind::OutOfBoundsArrayAccess;
  gc_read(dst, o->at(std::uint64_t{i} * size), size, sign);
  return TrapKind::None;
}
// array.set: the low `size` bytes of `value`'s slots into element `i`.
[[nodiscard]] inline TrapKind gc_array_set(GcHeap& heap, std::uint64_t ref, std::uint32_t i, std::uint32_t size,
                                           const std::uint64_t* value) noexcept {
  GcObject* o = heap.get(ref);
  if (o == nullptr) [[unlikely]] return TrapKind::NullArrayReference;
  if (i >= o->length) [[unlikely]] return TrapKind::OutOfBoundsArrayAccess;
  std::memcpy(o->at(std::uint64_t{i} * size), value, size);
  return TrapKind::None;
}
// array.len.
[[nodiscard]] inline TrapKind gc_array_len(GcHeap& heap, std::uint64_t ref, std::uint64_t* dst) noexcept {
  const GcObject* o = heap.get(ref);
  if (o == nullptr) [[unlikely]] return TrapKind::NullArrayReference;
  dst[0] = o->length;
  return TrapKind::None;
}

}  // namespace sprawling::wasm
