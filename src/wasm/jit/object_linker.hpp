// The engine's own linker for the code cache's objects (docs/compiled-tier.md, "Linkage"): the
// relocatable x86-64 ELF objects whole-module compilation writes, linked into one mapping of this
// process without the compiler plugin, so a run from the code cache never loads libLLVM (loading
// it costs a process about 16 ms of CPU, more than a small job's whole run). It links what
// LLVM's code generator emits for the small code model with PIC and nothing else: anything it
// does not know (a section or relocation kind, a symbol it cannot resolve) refuses the whole
// image with the reason, and the caller links it through the plugin (JITLink) as before.
#pragma once

#include "wasm/jit/runtime_calls.hpp"

#include <cstdint>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <functional>
#include <unordered_map>
#include <vector>

namespace sprawling::wasm::jit {

// Lookup by string_view without a copy.
struct SymbolHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using SymbolMap = std::unordered_map<std::string, void*, SymbolHash, std::equal_to<>>;

// What whole-module objects say of their frames (ModuleCode::set_frame_bounds): the largest
// value-stack frame of any object (.sprawling.frame_slots) and the largest native one
// (.stack_sizes), known only when every object gives both (an object whose .stack_sizes leaves
// out a function gives no native bound).
struct FrameBounds {
  bool known = false;
  std::uint64_t slots = 0;
  std::uint64_t native = 0;
};

struct LinkedObjects {
  // The mapping that holds the code (read+execute), constants (read-only) and data (read+write);
  // unmapped when the last copy goes.
  std::shared_ptr<void> memory;
  std::size_t memory_bytes = 0;
  // Every symbol an object defines with global or weak binding, by name.
  SymbolMap symbols;
  FrameBounds frames;
};

// Links `objects` (their bytes are read during the call only, at any alignment) against each
// other and `helpers`; an error says which object and what it could not link.
std::expected<LinkedObjects, std::string> link_objects(std::span<const std::span<const std::uint8_t>> objects,
                                                       std::span<const HelperSymbol> helpers);

// The frame bounds `objects` give (LinkedObjects::frames, for objects another linker links);
// unknown when one cannot be read.
FrameBounds frame_bounds(std::span<const std::span<const std::uint8_t>> objects);

// The names of the symbols `object` defines with global or weak binding (a hot set entry must
// define its function alone), or why its headers could not be read.
std::expected<std::vector<std::string>, std::string> global_definitions(std::span<const std::uint8_t> object);

}  // namespace sprawling::wasm::jit
