// Exception handling's runtime objects: tag instances. Exception objects (a tag and its values)
// live in the store's one heap (gc_heap.hpp), which exnrefs name by handle. See
// docs/interpreter.md, "Exceptions".
#pragma once

#include "wasm/syntax/types.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace sprawling::wasm {

// A tag: its identity is the object (an imported tag is its exporter's), its type a function
// type without results whose parameters are the exception's values.
struct TagInst {
  FuncType type;
  std::uint32_t slots = 0;      // value_slots(type.params): the values' width in frame slots
  std::uint32_t index = 0;      // its index in the module that defined it (for messages)
};

}  // namespace sprawling::wasm
