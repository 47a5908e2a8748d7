// The store's one heap: struct and array objects, which references in the any hierarchy name by
// handle, and exception objects, which exnrefs name by handle; the encoding of those references
// (i31, object handles, externalized host references). See docs/interpreter.md, "Garbage
// collection" and "Exceptions".
#pragma once

#include "wasm/syntax/types.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <span>
#include <vector>

namespace sprawling::wasm {

struct ResourceAccount;
struct TagInst;

// A reference's 64 bits in the any hierarchy (anyref, eqref, i31ref, structref, arrayref, their
// concrete types): 0 is null; bit 63 set is a host reference brought in by any.convert_extern
// (the externref's bits with bit 63 set); else bit 0 set is an i31 (its 31 bits above bit 0);
// else an object handle of the store's GcHeap. extern.convert_any sets bit 63 of an anyref and
// any.convert_extern clears it again, so both conversions are free and round-trip exactly; an
// embedder's externref payloads therefore keep bit 63 clear (docs/interpreter.md).
namespace gcref {
inline constexpr std::uint64_t kExternBit = std::uint64_t{1} << 63;
[[nodiscard]] constexpr std::uint64_t from_i31(std::uint32_t v) noexcept { return (std::uint64_t{v & 0x7FFFFFFFu} << 1) | 1; }
[[nodiscard]] constexpr bool is_i31(std::uint64_t r) noexcept { return (r & kExternBit) == 0 && (r & 1) != 0; }
[[nodiscard]] constexpr std::uint32_t i31_u(std::uint64_t r) noexcept { return static_cast<std::uint32_t>(r >> 1) & 0x7FFFFFFFu; }
[[nodiscard]] constexpr std::uint32_t i31_s(std::uint64_t r) noexcept {
  const std::uint32_t u = i31_u(r);
  return (u & 0x40000000u) != 0 ? u | 0x80000000u : u;
}
[[nodiscard]] constexpr bool is_object(std::uint64_t r) noexcept { return r != 0 && (r & (kExternBit | 1)) == 0; }
// extern.convert_any / any.convert_extern (null stays null).
[[nodiscard]] constexpr std::uint64_t to_extern(std::uint64_t any) noexcept { return any == 0 ? 0 : any ^ kExternBit; }
[[nodiscard]] constexpr std::uint64_t to_any(std::uint64_t ext) noexcept { return ext == 0 ? 0 : ext ^ kExternBit; }
}  // namespace gcref

struct FreeDeleter {
  void operator()(std::uint64_t* p) const noexcept { std::free(p); }
};

// A struct, array or exception object. Struct fields take 8 bytes each (16 for v128; packed ones
// too), in order; array elements their storage size (i8 1, i16 2, i32/f32 4, i64/f64/references
// 8, v128 16), so array.new_data and array.copy are byte copies. An exception object (`tag` set,
// `type` null) holds its tag's values in frame-slot layout, `length` words.
struct GcObject {
  const FuncType* type = nullptr;  // the canonical struct or array type
  const TagInst* tag = nullptr;    // an exception object's tag
  std::uint32_t generation = 1;    // bumped when the object is freed: stale handles stop matching
  bool live = false;
  bool marked = false;
  std::uint32_t length = 0;     // an array's element count
  std::uint64_t bytes = 0;      // the data's size
  std::unique_ptr<std::uint64_t, FreeDeleter> data;  // zeroed at allocation
  [[nodiscard]] std::uint8_t* at(std::uint64_t offset) const noexcept {
    return reinterpret_cast<std::uint8_t*>(data.get()) + offset;
  }
  // An exception object's values.
  [[nodiscard]] std::span<const std::uint64_t> values() const noexcept { return {data.get(), length}; }
};

// Byte size of an array element or of a struct field's slot.
[[nodiscard]] constexpr std::uint32_t element_bytes(const FieldType& f) noexcept {
  if (f.packed == FieldType::Packed::I8) return 1;
  if (f.packed == FieldType::Packed::I16) return 2;
  if (f.type == ValType::V128) return 16;
  if (f.type == ValType::I32 || f.type == ValType::F32) return 4;
  return 8;
}
// Byte offset of struct field `i` and the struct's size: 8 per field, 16 per v128.
[[nodiscard]] inline std::uint64_t struct_field_offset(const FuncType& t, std::size_t i) noexcept {
  std::uint64_t at = 0;
  for (std::size_t k = 0; k < i; ++k) at += t.fields[k].type == ValType::V128 && t.fields[k].packed == FieldType::Packed::None ? 16 : 8;
  return at;
}

// The objects of one store, GC objects and exceptions alike. A handle is ((generation &
// 0x7FFFFFFF) << 32) | ((index + 1) << 1): bit 0 and bit 63 clear, never 0. Objects die only in a
// collection, which a new object triggers when the heap would otherwise grow: it marks from the
// roots (the one enumeration of roots.cpp: the value stack and every other place a reference may
// sit — conservatively: any 64-bit word equal to a live handle keeps its object) and from marked
// objects (a struct's or array's reference fields precisely, as their types say; an exception's
// values conservatively), then frees the rest, so a cycle through structs and exceptions is
// freed like any other garbage. The heap's peak size is charged to the store's account
// (StoreLimits::max_store_bytes): a guest allocating or throwing in a loop reuses a bounded heap;
// one that keeps too much alive is refused the next object (a trap).
class GcHeap {
 public:
  static constexpr std::uint64_t kCollectEvery = std::uint64_t{1} << 20;
  static constexpr std::uint64_t kObjectBytes = sizeof(GcObject);
  // No single object above this, whatever the account allows (array.new of 2^32 v128s).
  static constexpr std::uint64_t kMaxObjectBytes = std::uint64_t{1} << 30;

  // A new zeroed object of `type` with `bytes` of data (length: an array's element count); 0
  // when refused (past kMaxObjectBytes, the account even after a collection, or the host's memory).
  [[nodiscard]] std::uint64_t make(const FuncType* type, std::uint32_t length, std::uint64_t bytes,
                                   std::span<const std::span<const std::uint64_t>> roots, ResourceAccount& account);
  // Whether making an object of `bytes` may collect first (the heap would grow): only then does
  // make read its roots, so a caller may pass none otherwise.
  [[nodiscard]] bool may_collect(std::uint64_t bytes) const noexcept {
    return live_bytes_ + kObjectBytes + ((std::min(bytes, kMaxObjectBytes) + 7) & ~std::uint64_t{7}) > charged_bytes_;
  }
  // A new exception object of `tag` with `values` (tag->slots words); 0 when refused, as make.
  [[nodiscard]] std::uint64_t make_exception(const TagInst* tag, const std::uint64_t* values,
                                             std::span<const std::span<const std::uint64_t>> roots,
                                             ResourceAccount& account);
  // The object a handle names, or null (null, an i31, a freed object, not a handle).
  [[nodiscard]] GcObject* get(std::uint64_t handle) noexcept;
  // The exception object an exnref names, or null (null, a freed object, not an exception).
  [[nodiscard]] const GcObject* exception(std::uint64_t handle) const noexcept {
    const std::int64_t i = index_of(handle);
    return i < 0 || objects_[static_cast<std::size_t>(i)].tag == nullptr ? nullptr
                                                                         : &objects_[static_cast<std::size_t>(i)];
  }
  [[nodiscard]] std::size_t live_objects() const noexcept { return live_count_; }
  [[nodiscard]] std::uint64_t charged_bytes() const noexcept { return charged_bytes_; }
  [[nodiscard]] std::uint64_t collections() const noexcept { return collections_; }

 private:
  void collect(std::span<const std::span<const std::uint64_t>> roots);
  void mark_word(std::uint64_t word, std::vector<std::uint32_t>& work);
  [[nodiscard]] std::int64_t index_of(std::uint64_t handle) const noexcept;

  std::deque<GcObject> objects_;  // a deque: an object stays put while others are made
  std::vector<std::uint32_t> free_;
  std::size_t live_count_ = 0;
  std::uint64_t live_bytes_ = 0;
  std::uint64_t charged_bytes_ = 0;
  std::uint64_t since_collect_ = 0;
  std::uint64_t live_after_collect_ = 0;
  std::uint64_t collections_ = 0;
};

}  // namespace sprawling::wasm
