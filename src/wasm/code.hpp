// The internal code the translator emits and the interpreter runs: the per-function product
// (CompiledFunc). The instruction set (Op, word layouts) is declared in internal_ops.def and
// generated into internal_code.hpp. See docs/interpreter.md.
//
// An instruction is a run of 32-bit words: word 0 is the handler's offset from the
// interpreter's base label (direct threading without 64-bit pointers), the rest are operands.
// Operands are frame slots (u32 index from the frame pointer), 32-bit immediates, or branch
// offsets (i32, in words, relative to the branch instruction's first word).
#pragma once

#include "wasm/internal_code.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace sprawling::wasm {

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
};

}  // namespace sprawling::wasm
