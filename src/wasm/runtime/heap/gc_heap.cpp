// The store's heap of struct, array and exception objects (gc_heap.hpp): allocation charged to
// the store's account, and a mark-sweep collection from the roots it is given (roots.cpp).
#include "wasm/runtime/heap/gc_heap.hpp"

#include "wasm/runtime/heap/exceptions.hpp"
#include "wasm/runtime/store_impl.hpp"

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

void GcHeap::collect(std::span<const std::span<const std::uint64_t>> roots) {
  ++collections_;
  std::vector<std::uint32_t> work;
  for (const auto& span : roots)
    for (const std::uint64_t w : span) mark_word(w, work);
  while (!work.empty()) {
    const GcObject& o = objects_[work.back()];
    work.pop_back();
    if (o.tag != nullptr) {  // an exception: its values, conservatively (no type says which are references)
      for (const std::uint64_t w : o.values()) mark_word(w, work);
      continue;
    }
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
    o.tag = nullptr;
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
  o.tag = nullptr;
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

std::uint64_t GcHeap::make_exception(const TagInst* tag, const std::uint64_t* values,
                                     std::span<const std::span<const std::uint64_t>> roots, ResourceAccount& account) {
  const std::uint64_t handle = make(nullptr, tag->slots, std::uint64_t{tag->slots} * 8, roots, account);
  if (handle == 0) return 0;
  GcObject& o = objects_[static_cast<std::size_t>(index_of(handle))];
  o.tag = tag;
  if (tag->slots != 0) std::memcpy(o.data.get(), values, std::size_t{tag->slots} * 8);
  return handle;
}

}  // namespace sprawling::wasm
