// The store's heap of struct, array and exception objects (gc_heap.hpp): size-class chunks and big
// blocks, their footprint charged to the store's account, and a mark-sweep collection from the
// roots it is given (roots.cpp).
#include "wasm/runtime/heap/gc_heap.hpp"

#include "wasm/runtime/heap/exceptions.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

namespace sprawling::wasm {

GcHeap::~GcHeap() {
  for (const Chunk& c : chunks_) std::free(c.memory);
  for (std::uint8_t* m : pool_) std::free(m);
  for (GcObject* o : big_) std::free(o);
}

void GcHeap::write_back_used(std::size_t cls) noexcept {
  if (bump_[cls] == 0) return;
  Chunk& c = chunks_[bump_[cls] - 1];
  c.used = static_cast<std::uint32_t>((in_.bump[cls] - c.memory) / c.block);
}

void GcHeap::bump_from(std::size_t index) noexcept {
  const Chunk& c = chunks_[index];
  const std::size_t cls = size_class(c.block);
  write_back_used(cls);
  bump_[cls] = index + 1;
  in_.bump[cls] = c.memory + std::uint64_t{c.block} * c.used;
  in_.bump_end[cls] = c.memory + std::uint64_t{c.block} * (kChunkBytes / c.block);
}

GcObject* GcHeap::reuse(std::uint64_t block) noexcept {
  if (GcObject* o = take(block); o != nullptr) return o;
  if (pool_.empty()) return nullptr;
  chunks_.push_back({pool_.back(), static_cast<std::uint32_t>(block), 1});
  pool_.pop_back();
  bump_from(chunks_.size() - 1);
  return reinterpret_cast<GcObject*>(chunks_.back().memory);
}

bool GcHeap::grow(std::uint64_t more, ResourceAccount& account) noexcept {
  if (footprint_ + more > charged_bytes_) {
    if (!account.take(footprint_ + more - charged_bytes_)) return false;
    charged_bytes_ = footprint_ + more;
  }
  return true;
}

void GcHeap::mark_word(std::uint64_t word, std::vector<GcObject*>& work) {
  // An externref holding an anyref (extern.convert_any) keeps it alive too.
  GcObject* o = get(word & ~gcref::kExternBit);
  if (o == nullptr || o->marked) return;
  o->marked = true;
  work.push_back(o);
}

void GcHeap::push_free_slot(std::uint32_t slot) {
  if (in_.free_count == free_slot_store_.size()) {
    free_slot_store_.resize(std::max<std::size_t>(64, free_slot_store_.size() * 2));
    in_.free_slots = free_slot_store_.data();
  }
  in_.free_slots[in_.free_count++] = slot;
}

void GcHeap::release(GcObject* o) noexcept {
  Slot& s = slots_[o->slot];
  s.object = nullptr;
  s.generation = (s.generation + 1) & 0x7FFFFFFFu;
  push_free_slot(o->slot);
  o->live = false;
  in_.live_bytes -= block_bytes(o->bytes);
  --in_.live_count;
}

void GcHeap::collect(std::span<const std::span<const std::uint64_t>> roots) {
  ++collections_;
  std::vector<GcObject*>& work = work_;
  for (const auto& span : roots)
    for (const std::uint64_t w : span) mark_word(w, work);
  while (!work.empty()) {
    const GcObject& o = *work.back();
    work.pop_back();
    if (o.tag != nullptr) {  // an exception: its values, conservatively (no type says which are references)
      for (const std::uint64_t w : o.values()) mark_word(w, work);
      continue;
    }
    const FuncType& t = *o.type;
    if (t.is_struct()) {
      std::uint64_t at = 0;
      for (const FieldType& f : t.fields) {
        if (f.packed == FieldType::Packed::None && f.type.is_ref()) {
          std::uint64_t w;
          std::memcpy(&w, o.at(at), 8);
          mark_word(w, work);
        }
        at += f.packed == FieldType::Packed::None && f.type == ValType::V128 ? 16 : 8;
      }
    } else if (t.fields[0].packed == FieldType::Packed::None && t.fields[0].type.is_ref()) {
      for (std::uint32_t k = 0; k < o.length; ++k) {
        std::uint64_t w;
        std::memcpy(&w, o.at(std::uint64_t{k} * 8), 8);
        mark_word(w, work);
      }
    }
  }
  // Size-class chunks: the unmarked go, the free lists are made again, an emptied chunk is pooled.
  for (std::size_t cls = 0; cls < kClasses; ++cls) write_back_used(cls);  // the sweep reads `used`
  std::fill(std::begin(in_.free), std::end(in_.free), nullptr);
  std::fill(std::begin(bump_), std::end(bump_), std::size_t{0});
  std::fill(std::begin(in_.bump), std::end(in_.bump), nullptr);
  std::fill(std::begin(in_.bump_end), std::end(in_.bump_end), nullptr);
  std::size_t kept = 0;
  for (const Chunk& c : chunks_) {
    std::uint32_t live = 0;
    GcObject* free = nullptr;
    GcObject* tail = nullptr;  // the chunk's first free block: the list's last
    for (std::uint32_t i = 0; i < c.used; ++i) {
      auto* o = reinterpret_cast<GcObject*>(c.memory + std::uint64_t{c.block} * i);
      if (o->live && o->marked) {
        o->marked = false;
        ++live;
        continue;
      }
      if (o->live) release(o);
      link_free(o, free);
      if (free == nullptr) tail = o;
      free = o;
    }
    if (live == 0) {
      pool_.push_back(c.memory);
      continue;
    }
    const std::size_t cls = size_class(c.block);
    if (free != nullptr) {  // put in front of the class's list
      link_free(tail, in_.free[cls]);
      in_.free[cls] = free;
    }
    chunks_[kept] = c;
    if ((std::uint64_t{c.used} + 1) * c.block <= kChunkBytes) bump_from(kept);
    ++kept;
  }
  chunks_.resize(kept);
  std::erase_if(big_, [this](GcObject* o) {
    if (o->marked) {
      o->marked = false;
      return false;
    }
    footprint_ -= block_bytes(o->bytes);
    release(o);
    std::free(o);
    return true;
  });
  in_.since_collect = 0;
  live_after_collect_ = in_.live_bytes;
}

std::uint64_t GcHeap::make_growing(const FuncType* type, std::uint32_t length, std::uint64_t bytes, Roots roots,
                                   ResourceAccount& account) {
  if (bytes > kMaxObjectBytes) return 0;
  bytes = (bytes + 7) & ~std::uint64_t{7};
  const std::uint64_t block = block_bytes(bytes);
  if (in_.free_count == 0 && slots_.size() >= 0x7FFFFFFE) return 0;  // handles keep the slot in 31 bits
  const bool small = block <= kSmallBytes;
  GcObject* o = small ? reuse(block) : nullptr;
  if (o == nullptr) {
    // The heap grows by a chunk or a big block: collect first when enough was allocated since the
    // last collection (kGrowth times what survived it), or when the account refuses the growth.
    // The roots are gathered once, by the first collection.
    const std::uint64_t need = small ? kChunkBytes : block;
    std::optional<RootSpans> gathered;
    auto collect_now = [&] {
      if (!gathered) gathered = roots();
      collect(*gathered);
      if (small) o = reuse(block);
    };
    bool collected = false;
    if (collect_due()) {
      collect_now();
      collected = true;
    }
    if (o == nullptr && !grow(need, account)) {
      if (collected) return 0;
      collect_now();
      if (o == nullptr && !grow(need, account)) return 0;
    }
    if (o == nullptr) {
      // calloc: a big block's pages stay untouched until written; glibc aligns to 16.
      void* memory = small ? std::aligned_alloc(16, kChunkBytes) : std::calloc(1, block);
      if (memory == nullptr) return 0;
      footprint_ += need;
      o = static_cast<GcObject*>(memory);
      if (small) {
        chunks_.push_back({static_cast<std::uint8_t*>(memory), static_cast<std::uint32_t>(block), 1});
        bump_from(chunks_.size() - 1);
      } else {
        big_.push_back(o);
      }
    }
  }
  std::uint32_t slot;
  if (in_.free_count != 0) {
    slot = in_.free_slots[--in_.free_count];
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back({nullptr, 1});
    table_ = {slots_.data(), slots_.size()};
  }
  return publish(o, slot, type, length, bytes, block);
}

std::uint64_t GcHeap::make_exception(const TagInst* tag, const std::uint64_t* values, Roots roots,
                                     ResourceAccount& account) {
  const std::uint64_t handle = make(nullptr, tag->slots, std::uint64_t{tag->slots} * 8, roots, account);
  if (handle == 0) return 0;
  GcObject* o = get(handle);
  o->tag = tag;
  if (tag->slots != 0) std::memcpy(o->at(0), values, std::size_t{tag->slots} * 8);
  return handle;
}

}  // namespace sprawling::wasm
