// The store's one heap: struct and array objects, which references in the any hierarchy name by
// handle, and exception objects, which exnrefs name by handle; the encoding of those references
// (i31, object handles, externalized host references). See docs/interpreter.md, "Garbage
// collection" and "Exceptions".
#pragma once

#include "wasm/syntax/types.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <type_traits>
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

// A struct, array or exception object: this header, then its data (16-byte aligned) in the same
// block. Struct fields take 8 bytes each (16 for v128; packed ones too), in order; array elements
// their storage size (i8 1, i16 2, i32/f32 4, i64/f64/references 8, v128 16), so array.new_data
// and array.copy are byte copies. An exception object (`tag` set, `type` null) holds its tag's
// values in frame-slot layout, `length` words. Trivial: the heap writes every field of a block it
// hands out.
struct alignas(16) GcObject {
  const FuncType* type;  // the canonical struct or array type
  const TagInst* tag;    // an exception object's tag
  std::uint32_t length;  // an array's element count
  std::uint32_t bytes;   // the data's size (at most GcHeap::kMaxObjectBytes)
  std::uint32_t slot;    // its index in the heap's handle table
  bool marked;
  bool live;  // a block of a size class's chunk that holds no object has this clear
  [[nodiscard]] std::uint8_t* at(std::uint64_t offset) const noexcept {
    return const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(this + 1)) + offset;
  }
  // An exception object's values.
  [[nodiscard]] std::span<const std::uint64_t> values() const noexcept {
    return {reinterpret_cast<const std::uint64_t*>(this + 1), length};
  }
};
static_assert(sizeof(GcObject) == 32);

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
// 0x7FFFFFFF) << 32) | ((slot + 1) << 1): bit 0 and bit 63 clear, never 0; its slot in the handle
// table names the object while the generation matches (a freed slot's generation moves on, so
// stale handles stop matching). Objects of up to kSmallBytes (header and data) live in chunks of
// one size class each (16-byte steps), allocated from the class's free list or by bumping its
// chunk; bigger ones are blocks of their own. Objects die only in a collection, which a new object
// triggers when the heap would otherwise grow: it marks from the roots (the one enumeration of
// roots.cpp: the value stack and every other place a reference may sit — conservatively: any
// 64-bit word equal to a live handle keeps its object) and from marked objects (a struct's or
// array's reference fields precisely, as their types say; an exception's values conservatively),
// then frees the rest, so a cycle through structs and exceptions is freed like any other garbage.
// A chunk left empty goes back to a pool any class takes chunks from. The heap's footprint (its
// chunks and big objects) at its peak is charged to the store's account
// (StoreLimits::max_store_bytes): a guest allocating or throwing in a loop reuses a bounded heap;
// one that keeps too much alive is refused the next object (a trap).
class GcHeap {
 public:
  static constexpr std::uint64_t kCollectEvery = std::uint64_t{1} << 20;
  // A collection is due once kGrowth times what survived the last one was allocated since.
  static constexpr std::uint64_t kGrowth = 2;
  static constexpr std::uint64_t kObjectBytes = sizeof(GcObject);
  // No single object above this, whatever the account allows (array.new of 2^32 v128s).
  static constexpr std::uint64_t kMaxObjectBytes = std::uint64_t{1} << 30;
  // Objects up to this (header and data) come from size-class chunks of kChunkBytes.
  static constexpr std::uint64_t kSmallBytes = 512;
  static constexpr std::uint64_t kChunkBytes = std::uint64_t{16} << 10;

  // A handle table entry: the object (null while free) and the generation its handles carry.
  struct Slot {
    GcObject* object;
    std::uint32_t generation;
  };
  // The table as machine code reads it to resolve a handle inline (the compiled tier's struct and
  // array accesses, as get does): its base and size, kept current as it grows.
  struct HandleTable {
    const Slot* base = nullptr;
    std::uint64_t size = 0;
  };
  static_assert(std::is_standard_layout_v<Slot> && std::is_standard_layout_v<HandleTable>);
  // The state make's fast path reads and writes, laid out for machine code too: the compiled
  // tier's struct and array allocations take a block from its class's free list (else the unused
  // blocks of the chunk the class bumps) and a free slot inline, exactly as make does, and call
  // their helper (make) only when there is no block or no slot.
  static constexpr std::size_t kClasses = kSmallBytes / 16;
  struct Inline {
    GcObject* free[kClasses] = {};      // per class: free blocks linked through their first word
    // Per class: the next unused block of the chunk it bumps and the end of that chunk's whole
    // blocks (equal, null without such a chunk): the chunk's `used` count while it bumps.
    std::uint8_t* bump[kClasses] = {};
    std::uint8_t* bump_end[kClasses] = {};
    std::uint32_t* free_slots = nullptr;  // the free handle-table slots, a stack of free_count
    std::uint64_t free_count = 0;
    std::uint64_t live_bytes = 0;     // the blocks of live objects
    std::uint64_t since_collect = 0;  // block bytes made since the last collection
    std::uint64_t live_count = 0;
  };
  static_assert(std::is_standard_layout_v<Inline>);
  // A small object's block size (header and data, 16-byte steps) and its size class: what
  // machine code that allocates inline computes at compile time for a struct type.
  [[nodiscard]] static constexpr std::uint64_t block_bytes(std::uint64_t bytes) noexcept {
    return (kObjectBytes + bytes + 15) & ~std::uint64_t{15};
  }
  [[nodiscard]] static constexpr std::size_t size_class(std::uint64_t block) noexcept {
    return static_cast<std::size_t>(block / 16) - 1;
  }

  GcHeap() = default;
  GcHeap(const GcHeap&) = delete;
  GcHeap& operator=(const GcHeap&) = delete;
  ~GcHeap();

  // The roots of a collection, asked for only when make collects (most objects are made without
  // one): a reference to the caller's callable returning them, valid during the call to make.
  using RootSpans = std::span<const std::span<const std::uint64_t>>;
  class Roots {
   public:
    template <class F>
      requires std::is_invocable_r_v<RootSpans, F&>
    Roots(F& gather) noexcept  // NOLINT(google-explicit-constructor): a callable is the roots
        : object_(&gather), call_([](void* o) -> RootSpans { return (*static_cast<F*>(o))(); }) {}
    [[nodiscard]] RootSpans operator()() const { return call_(object_); }

   private:
    void* object_;
    RootSpans (*call_)(void*);
  };

  // A new zeroed object of `type` with `bytes` of data (length: an array's element count); 0
  // when refused (past kMaxObjectBytes, the account even after a collection, or the host's memory).
  // The common case is inline: a small object from its class's free list or its chunk's unused
  // blocks and a free slot; make_growing does the rest (a pooled or new chunk, a big block, a new
  // slot, and the collection that may come first).
  [[nodiscard]] std::uint64_t make(const FuncType* type, std::uint32_t length, std::uint64_t bytes, Roots roots,
                                   ResourceAccount& account) {
    if (bytes <= kSmallBytes && in_.free_count != 0) {
      const std::uint64_t rounded = (bytes + 7) & ~std::uint64_t{7};
      const std::uint64_t block = block_bytes(rounded);
      if (block <= kSmallBytes) {
        if (GcObject* o = take(block); o != nullptr) {
          const std::uint32_t slot = in_.free_slots[--in_.free_count];
          return publish(o, slot, type, length, rounded, block);
        }
      }
    }
    return make_growing(type, length, bytes, roots, account);
  }
  // The same with roots already gathered.
  [[nodiscard]] std::uint64_t make(const FuncType* type, std::uint32_t length, std::uint64_t bytes, RootSpans roots,
                                   ResourceAccount& account) {
    auto given = [roots] { return roots; };
    return make(type, length, bytes, Roots(given), account);
  }
  // A new exception object of `tag` with `values` (tag->slots words); 0 when refused, as make.
  [[nodiscard]] std::uint64_t make_exception(const TagInst* tag, const std::uint64_t* values, Roots roots,
                                             ResourceAccount& account);
  // The object a handle names, or null (null, an i31, a freed object, not a handle).
  [[nodiscard]] GcObject* get(std::uint64_t handle) const noexcept {
    if (!gcref::is_object(handle)) return nullptr;
    const std::uint64_t index = ((handle & 0xFFFFFFFFu) >> 1) - 1;  // handle 0 is not an object
    if (index >= table_.size) return nullptr;
    const Slot& s = table_.base[index];
    return s.generation == static_cast<std::uint32_t>(handle >> 32) ? s.object : nullptr;
  }
  // The exception object an exnref names, or null (null, a freed object, not an exception).
  [[nodiscard]] const GcObject* exception(std::uint64_t handle) const noexcept {
    const GcObject* o = get(handle);
    return o == nullptr || o->tag == nullptr ? nullptr : o;
  }
  [[nodiscard]] const HandleTable& handle_table() const noexcept { return table_; }
  [[nodiscard]] Inline& inline_state() noexcept { return in_; }
  [[nodiscard]] std::size_t live_objects() const noexcept { return in_.live_count; }
  [[nodiscard]] std::uint64_t charged_bytes() const noexcept { return charged_bytes_; }
  [[nodiscard]] std::uint64_t collections() const noexcept { return collections_; }

 private:
  // A chunk of one size class: `used` blocks of `block` bytes handed out so far (bump; for the
  // chunk its class bumps, in_.bump says, and sync_bumped writes it back).
  struct Chunk {
    std::uint8_t* memory;
    std::uint32_t block;
    std::uint32_t used;
  };
  // Whether enough was allocated since the last collection to collect before the heap grows:
  // kGrowth times what survived it (or kCollectEvery while that is small).
  [[nodiscard]] bool collect_due() const noexcept {
    return in_.since_collect >= std::max(kGrowth * live_after_collect_, kCollectEvery);
  }
  // A free block of a size class holds no object: its first word links to the next free block.
  [[nodiscard]] static GcObject* next_free(const GcObject* o) noexcept {
    std::uintptr_t next = 0;
    std::memcpy(&next, o, sizeof next);
    return reinterpret_cast<GcObject*>(next);
  }
  static void link_free(GcObject* o, const GcObject* next) noexcept {
    const auto bits = reinterpret_cast<std::uintptr_t>(next);
    std::memcpy(static_cast<void*>(o), &bits, sizeof bits);
  }
  // memset, called: inlined where GCC knows the size is small (make's fast path), it becomes a
  // `rep stosq` whose start-up cost was 40% of allocating a small struct.
  [[gnu::noinline]] static void zero(void* p, std::size_t n) noexcept { std::memset(p, 0, n); }
  // Block `o` (of `block` bytes, `bytes` of data rounded to 8) becomes a live zeroed object in
  // `slot`: its handle.
  std::uint64_t publish(GcObject* o, std::uint32_t slot, const FuncType* type, std::uint32_t length, std::uint64_t bytes,
                        std::uint64_t block) noexcept {
    o->type = type;
    o->tag = nullptr;
    o->length = length;
    o->bytes = static_cast<std::uint32_t>(bytes);
    o->slot = slot;
    o->marked = false;
    o->live = true;
    if (block <= kSmallBytes) zero(o->at(0), bytes);  // a big block comes zeroed (calloc)
    slots_[slot].object = o;
    in_.live_bytes += block;
    in_.since_collect += block;
    ++in_.live_count;
    return (std::uint64_t{slots_[slot].generation} << 32) | ((std::uint64_t{slot} + 1) << 1);
  }
  // A block of `block` bytes from its class's free list or the unused blocks of the chunk it
  // bumps, or null: what a small object takes without the heap growing.
  [[nodiscard]] GcObject* take(std::uint64_t block) noexcept {
    const std::size_t cls = size_class(block);
    if (GcObject* o = in_.free[cls]; o != nullptr) {
      in_.free[cls] = next_free(o);
      return o;
    }
    std::uint8_t* next = in_.bump[cls];
    if (next == in_.bump_end[cls]) return nullptr;
    in_.bump[cls] = next + block;
    return reinterpret_cast<GcObject*>(next);
  }
  // Chunk `index` (of chunks_) becomes the one its class bumps, from its block `used` on; the
  // chunk bumped before has its `used` count written back.
  void bump_from(std::size_t index) noexcept;
  // The `used` count of the chunk class `cls` bumps (if any) written back from in_.bump.
  void write_back_used(std::size_t cls) noexcept;
  // take, else a pooled chunk for the class (the footprint stays the same), or null.
  [[nodiscard]] GcObject* reuse(std::uint64_t block) noexcept;
  std::uint64_t make_growing(const FuncType* type, std::uint32_t length, std::uint64_t bytes, Roots roots,
                             ResourceAccount& account);
  // Charges `more` bytes of footprint (past the peak already charged) to the account.
  [[nodiscard]] bool grow(std::uint64_t more, ResourceAccount& account) noexcept;
  void collect(std::span<const std::span<const std::uint64_t>> roots);
  void mark_word(std::uint64_t word, std::vector<GcObject*>& work);
  void release(GcObject* o) noexcept;

  // A slot freed by a collection onto the stack of free ones (in_.free_slots).
  void push_free_slot(std::uint32_t slot);

  std::vector<Slot> slots_;
  HandleTable table_;                     // slots_'s data and size
  Inline in_;
  std::vector<std::uint32_t> free_slot_store_;  // in_.free_slots's storage (its size: the capacity)
  std::vector<Chunk> chunks_;
  std::vector<std::uint8_t*> pool_;       // empty chunks, of no class
  std::size_t bump_[kClasses] = {};       // per class: 1 + the index in chunks_ of the chunk it bumps, or 0
  std::vector<GcObject*> big_;            // objects above kSmallBytes, each its own block
  std::vector<GcObject*> work_;           // marked objects not yet traced (kept: its pages stay mapped)
  std::uint64_t footprint_ = 0;           // chunks (pooled ones too) and big objects
  std::uint64_t charged_bytes_ = 0;       // the footprint's peak, taken from the account
  std::uint64_t live_after_collect_ = 0;
  std::uint64_t collections_ = 0;
};
}  // namespace sprawling::wasm
