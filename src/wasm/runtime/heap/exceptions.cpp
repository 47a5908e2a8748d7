// The store's exception heap (exceptions.hpp): exception objects made, found by handle and
// collected.
#include "wasm/runtime/heap/exceptions.hpp"

#include "wasm/runtime/store_impl.hpp"

#include <algorithm>

namespace sprawling::wasm {

std::int64_t ExceptionHeap::index_of(std::uint64_t handle) const noexcept {
  const std::uint64_t low = handle & 0xFFFFFFFFu;
  if (low == 0 || low > objects_.size()) return -1;
  const ExnObject& o = objects_[low - 1];
  if (!o.live || o.generation != static_cast<std::uint32_t>(handle >> 32)) return -1;
  return static_cast<std::int64_t>(low - 1);
}

const ExnObject* ExceptionHeap::get(std::uint64_t handle) const noexcept {
  const std::int64_t i = index_of(handle);
  return i < 0 ? nullptr : &objects_[static_cast<std::size_t>(i)];
}

void ExceptionHeap::mark_word(std::uint64_t word, std::vector<std::uint32_t>& work) {
  const std::int64_t i = index_of(word);
  if (i < 0 || objects_[static_cast<std::size_t>(i)].marked) return;
  objects_[static_cast<std::size_t>(i)].marked = true;
  work.push_back(static_cast<std::uint32_t>(i));
}

void ExceptionHeap::collect(std::span<const std::span<const std::uint64_t>> roots) {
  ++collections_;
  std::vector<std::uint32_t> work;
  for (const auto& span : roots)
    for (const std::uint64_t w : span) mark_word(w, work);
  while (!work.empty()) {
    const std::uint32_t i = work.back();
    work.pop_back();
    for (const std::uint64_t w : objects_[i].values) mark_word(w, work);
  }
  for (std::uint32_t i = 0; i < objects_.size(); ++i) {
    ExnObject& o = objects_[i];
    if (!o.live) continue;
    if (o.marked) {
      o.marked = false;
      continue;
    }
    live_bytes_ -= kObjectBytes + o.values.size() * sizeof(std::uint64_t);
    o.live = false;
    ++o.generation;
    o.values = {};
    --live_count_;
    free_.push_back(i);
  }
  since_collect_ = 0;
  live_after_collect_ = live_bytes_;
}

std::uint64_t ExceptionHeap::make(const TagInst* tag, const std::uint64_t* values,
                                  std::span<const std::span<const std::uint64_t>> roots, ResourceAccount& account) {
  const std::uint64_t need = kObjectBytes + std::uint64_t{tag->slots} * sizeof(std::uint64_t);
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
  std::uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(objects_.size());
    objects_.emplace_back();
  }
  ExnObject& o = objects_[index];
  o.tag = tag;
  o.live = true;
  o.marked = false;
  o.values.assign(values, values + tag->slots);
  live_bytes_ += need;
  since_collect_ += need;
  ++live_count_;
  return (std::uint64_t{o.generation} << 32) | (std::uint64_t{index} + 1);
}

std::uint64_t Store::Impl::new_exception(const TagInst* tag, const std::uint64_t* values, const std::uint64_t* top) {
  // Roots: the value stack up to the throwing frame's end (every frame of every run below it),
  // the exception in flight, and globals and tables of exnref.
  std::vector<std::span<const std::uint64_t>> roots;
  roots.emplace_back(stack, static_cast<std::size_t>(top - stack));
  roots.emplace_back(&pending_exception, 1);
  for (const GlobalInst& g : globals)
    if (g.type.type == ValType::ExnRef) roots.emplace_back(&g.bits, 1);
  for (const TableInst& t : tables)
    if (t.type.element == ValType::ExnRef) roots.emplace_back(t.elements);
  gc.reference_words(roots);  // exnref fields of GC objects
  roots.emplace_back(host_roots);  // what the host holds (Store::RootScope)
  return exceptions.make(tag, values, roots, account);
}

}  // namespace sprawling::wasm
