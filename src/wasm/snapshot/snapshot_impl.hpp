// The inside of an instance snapshot (snapshot.hpp): what it holds, the translated code a
// snapshot file carries, and the restore steps Store::instantiate calls. Private to the engine.
#pragma once

#include "wasm/icode/code.hpp"
#include "wasm/snapshot/snapshot.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace sprawling::wasm {

// What a snapshot holds. Function references are stored as the instance's function index + 1
// (0 = null), never as host addresses, so an image can be restored into any Store.
struct InstanceSnapshot::Impl {
  std::shared_ptr<const CompiledModule> module;
  struct Global {
    std::uint64_t bits = 0;
    std::uint64_t bits_hi = 0;
  };
  std::vector<Global> globals;                      // defined globals
  std::vector<std::vector<std::uint32_t>> tables;   // defined tables' elements
  std::vector<std::uint8_t> elements_dropped;       // per element segment: 1 when dropped
  std::vector<std::uint8_t> datas_dropped;          // per data segment: 1 when dropped
  struct Memory {
    std::uint64_t size = 0;         // bytes (whole wasm pages)
    std::uint64_t image_bytes = 0;  // [0, image_bytes) is mapped from fd; the rest is zero
    std::uint64_t nonzero_pages = 0;
    int fd = -1;                    // a sealed memfd, or the verified snapshot file
    std::uint64_t offset = 0;       // where the image starts in fd (page-aligned)
  };
  std::vector<Memory> memories;     // defined memories
  // [snapshot code] The defined functions whose translated code a snapshot file holds (or, for
  // a captured snapshot, had been translated in this process at capture: the initialisation's),
  // in ascending order. save_snapshot writes both variants' code of each.
  std::vector<std::uint32_t> code_functions;
  ~Impl();
};

// [snapshot code] Translated code read from a snapshot file that this engine build wrote: a
// module it is attached to (load_snapshot) copies a function's code from the file on the
// function's first use instead of translating it (CompiledModule::Impl::code). Shared by every
// Store of the module; keeps its read-only mapping of the file.
struct PretranslatedCode;
// Defined function `defined`'s code in that variant from `code`, when the file holds it, its
// bytes match their checksum and (verification on, as in the tests) verify_code accepts it;
// nullopt otherwise, and the caller translates the function.
[[nodiscard]] std::optional<CompiledFunc> pretranslated_code(const PretranslatedCode& code, std::uint32_t defined,
                                                             bool metered);

// Sets the globals, tables and dropped segments of `instance` (just allocated by
// Store::instantiate from the snapshot's module, segments not yet applied) to the snapshot's.
void restore_instance_state(const InstanceSnapshot& snapshot, Instance& instance);

// Restores memory `index` of `snapshot` into `memory` (freshly created with the module's
// minimum): grows it to the captured size and maps the image over it copy-on-write.
// runtime.cpp's Store::instantiate calls it; false when the size is over the store's limits.
[[nodiscard]] bool restore_memory(const InstanceSnapshot& snapshot, std::size_t index, MemoryInst& memory);

}  // namespace sprawling::wasm
