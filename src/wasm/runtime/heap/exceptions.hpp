// Exception handling's runtime objects: tag instances and the store's heap of exception objects
// (a tag and its values), which exnref values name by handle. See docs/interpreter.md, "Exceptions".
#pragma once

#include "wasm/syntax/types.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace sprawling::wasm {

struct ResourceAccount;

// A tag: its identity is the object (an imported tag is its exporter's), its type a function
// type without results whose parameters are the exception's values.
struct TagInst {
  FuncType type;
  std::uint32_t slots = 0;      // value_slots(type.params): the values' width in frame slots
  std::uint32_t index = 0;      // its index in the module that defined it (for messages)
};

struct ExnObject {
  const TagInst* tag = nullptr;
  std::uint32_t generation = 1;  // bumped when the object is freed: stale handles stop matching
  bool live = false;
  bool marked = false;
  std::vector<std::uint64_t> values;  // the tag's values, in frame-slot layout
};

// The exception objects of one store. A handle (the exnref's 64 bits) is (generation << 32) |
// (index + 1), never 0 (null). Objects die only in a collection, which a new exception triggers
// when the heap would otherwise grow: it marks from the roots (conservatively: any 64-bit word
// equal to a live handle keeps its object, and an object's values are scanned the same way) and
// frees the rest. The bytes the heap occupies at its largest are charged to the store's account
// (StoreLimits::max_store_bytes), so a guest throwing in a loop reuses a bounded heap and a guest
// that keeps too many exceptions alive is refused a new one (a trap), never the host's memory.
class ExceptionHeap {
 public:
  // Below this the heap grows without collecting (a collection scans the whole value stack).
  static constexpr std::uint64_t kCollectEvery = std::uint64_t{256} << 10;
  // What one object costs the account besides its values.
  static constexpr std::uint64_t kObjectBytes = sizeof(ExnObject);

  // A new exception of `tag` with `values` (tag->slots words); `roots` are every span of words
  // that may hold live handles. 0 when the account refuses the room even after a collection.
  [[nodiscard]] std::uint64_t make(const TagInst* tag, const std::uint64_t* values,
                                   std::span<const std::span<const std::uint64_t>> roots, ResourceAccount& account);
  // The object a handle names, or null (null handle, a freed object, not a handle).
  [[nodiscard]] const ExnObject* get(std::uint64_t handle) const noexcept;
  [[nodiscard]] std::size_t live_objects() const noexcept { return live_count_; }
  // Every live object's values, as roots for the GC heap's collection.
  void value_words(std::vector<std::span<const std::uint64_t>>& out) const {
    for (const ExnObject& o : objects_)
      if (o.live && !o.values.empty()) out.emplace_back(o.values);
  }
  [[nodiscard]] std::uint64_t charged_bytes() const noexcept { return charged_bytes_; }
  [[nodiscard]] std::uint64_t collections() const noexcept { return collections_; }

 private:
  void collect(std::span<const std::span<const std::uint64_t>> roots);
  void mark_word(std::uint64_t word, std::vector<std::uint32_t>& work);
  [[nodiscard]] std::int64_t index_of(std::uint64_t handle) const noexcept;

  std::vector<ExnObject> objects_;
  std::vector<std::uint32_t> free_;
  std::size_t live_count_ = 0;
  std::uint64_t live_bytes_ = 0;
  std::uint64_t charged_bytes_ = 0;
  std::uint64_t since_collect_ = 0;   // bytes allocated since the last collection
  std::uint64_t live_after_collect_ = 0;
  std::uint64_t collections_ = 0;
};

}  // namespace sprawling::wasm
