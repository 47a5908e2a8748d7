// The internal code the translator emits and the interpreter runs: the per-function product
// (CompiledFunc). The instruction set (Op, word layouts) is declared in internal_ops.def and
// generated into internal_code.hpp. See docs/interpreter.md.
//
// An instruction is a run of 32-bit words: word 0 is the handler's offset from the
// interpreter's base label (direct threading without 64-bit pointers), the rest are operands.
// Operands are frame slots (u32 index from the frame pointer), 32-bit immediates, or branch
// offsets (i32, in words, relative to the branch instruction's first word).
#pragma once

#include "wasm/icode/internal_code.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace sprawling::wasm {

// A catch clause of a handler region: an exception of tag `tag` (the module's tagidx; kAnyTag:
// every exception) continues at code word `target` with its values in slots from `values` on
// and its exnref in slot `exn` (kNoSlot: not written).
struct CatchClause {
  static constexpr std::uint32_t kAnyTag = ~std::uint32_t{0};
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
  std::uint32_t tag = kAnyTag;
  std::uint32_t target = 0;
  std::uint32_t values = kNoSlot;
  std::uint32_t exn = kNoSlot;
};
// Code words [begin, end) where an exception is caught by `clauses[first_clause, +clause_count)`
// (try_table, a legacy try's body) or delegated (legacy try … delegate): to the region whose `id`
// is `delegate_to` (an enclosing one, searched next), or to the caller (kToCaller).
struct HandlerRegion {
  static constexpr std::uint32_t kNotDelegate = ~std::uint32_t{0};
  static constexpr std::uint32_t kToCaller = ~std::uint32_t{0} - 1;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::uint32_t id = 0;  // the region's number in opening order
  std::uint32_t delegate_to = kNotDelegate;
  std::uint32_t first_clause = 0;
  std::uint32_t clause_count = 0;
};

// One translated function. Frame layout: slots [0, params) are the arguments, [params, locals)
// the zero-initialised declared locals, [locals, frame_slots) the operand-stack temporaries.
// Results are left in slots [0, results) on return.
struct CompiledFunc {
  std::vector<std::uint32_t> code;
  std::uint32_t num_params = 0;
  std::uint32_t num_results = 0;
  std::uint32_t num_locals = 0;   // parameters included
  std::uint32_t frame_slots = 0;  // >= max(num_locals + max operand height, num_results)
  // (code word index, wasm byte offset) of each instruction that can trap, ascending; read on trap only.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> trap_sites;
  // Exception handling (read only while an exception unwinds): the try_table and legacy try
  // regions, in the order they close (an inner region before the one around it), and their clauses.
  std::vector<HandlerRegion> regions;
  std::vector<CatchClause> clauses;
};

}  // namespace sprawling::wasm
