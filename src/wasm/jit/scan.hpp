// The compiled tier's first pass (private to the jit): what each internal op needs from the
// emitter, the compile budget, and scan(), which reads a function's internal code into the
// instructions the emitter compiles or says why the function stays interpreted.
#pragma once

#include "wasm/icode/internal_code.hpp"
#include "wasm/jit/jit.hpp"
#include "wasm/syntax/opcodes.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sprawling::wasm::jit {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i64 = std::int64_t;

// ---------------------------------------------------------------- the internal code, decoded
// Decoding is internal_code.hpp's, generated from internal_ops.def: decode_instructions splits a
// function into instructions, visit_instruction hands the emitter each op as a template argument
// with its operands read into its layout's Args, info(Op) and layout_of(Op) say the rest. Nothing
// here knows a word index or an instruction length.

enum class VT : std::uint8_t { I32, I64, F32, F64 };

constexpr std::size_t idx(Op o) {
  return static_cast<std::size_t>(o);
}

constexpr std::optional<VT> vt_of(ValType v) {
  if (v == ValType::I32) return VT::I32;
  if (v == ValType::I64) return VT::I64;
  if (v == ValType::F32) return VT::F32;
  if (v == ValType::F64) return VT::F64;
  return std::nullopt;
}

// A numeric op's operator and types, from the wasm opcode its row names (opcodes.def's signature).
struct NumShape {
  Opcode opc = Opcode::Unreachable;
  VT a = VT::I32;  // operand type (both operands of a binary one)
  VT r = VT::I32;  // result type
  bool binary = false;
};
constexpr std::optional<NumShape> num_shape(Op o) {
  const OpInfo& oi = info(o);
  if (oi.family != OpFamily::Numeric || !oi.has_wasm) return std::nullopt;
  const OpcodeInfo& wi = info(oi.wasm);
  if (wi.sig == OpSig::Special) return std::nullopt;
  const SigTypes& st = sig_types(wi.sig);
  if (st.result_count != 1 || st.param_count < 1 || st.param_count > 2) return std::nullopt;
  const std::optional<VT> a = vt_of(st.params[0]);
  const std::optional<VT> r = vt_of(st.result);
  if (!a || !r || (st.param_count == 2 && st.params[1] != st.params[0])) return std::nullopt;
  return NumShape{oi.wasm, *a, *r, st.param_count == 2};
}

// What the emitter handles: whole families by their variant columns (loads, stores, fused
// branches, numeric ops of scalar types), the rest op by op. A new op outside these stays
// interpreted (scan() names it) until FunctionEmitter::instr emits it; listing an op here that
// instr does not emit is a compile error there.
constexpr bool handled(Op o) {
  const OpInfo& oi = info(o);
  switch (oi.family) {
    case OpFamily::Load:
    case OpFamily::Store: return oi.mem_base != Op::Count_;
    case OpFamily::FusedBranch: return oi.has_wasm;
    case OpFamily::Numeric: return num_shape(o).has_value();
    case OpFamily::Simd: return true;  // v128 moves inline; lanes inline or the interpreter's lane function
    case OpFamily::Gc: return true;    // i31, ref.eq, conversions inline; the rest gc_ops.hpp's operations in a helper
    default: break;
  }
  switch (o) {
    case Op::Unreachable:
    case Op::Br:
    case Op::BrIf:
    case Op::BrUnless:
    case Op::BrTable:
    case Op::Copy:
    case Op::Copy2:
    case Op::Const32:
    case Op::Const64:
    case Op::CanonF32:
    case Op::CanonF64:
    case Op::Call:
    case Op::CallIndirect:
    case Op::Return:
    case Op::Fuel:
    case Op::FuelCheck:
    case Op::Select:
    case Op::GlobalGet:
    case Op::GlobalSet:
    case Op::MemorySize:
    case Op::MemoryGrow:
    case Op::RefIsNull:
    case Op::RefFunc:
    case Op::TableGet:
    case Op::TableSet:
    case Op::TableSize:
    case Op::TableGrow:
    case Op::TableFill:
    case Op::TableCopy:
    case Op::TableInit:
    case Op::ElemDrop:
    case Op::DataDrop:
    case Op::MemoryFill:
    case Op::MemoryCopy:
    case Op::MemoryInit:
    case Op::MemAt:
    case Op::MemRestore:
    case Op::MemorySizeM:
    case Op::MemoryGrowM:
    case Op::MemoryFillM:
    case Op::MemoryCopyM:
    case Op::MemoryInitM: return true;
    case Op::CallRef:
    case Op::ReturnCall:
    case Op::ReturnCallIndirect:
    case Op::ReturnCallRef:
    case Op::RefAsNonNull:
    case Op::BrOnNull:
    case Op::BrOnNonNull: return true;
    case Op::Throw:
    case Op::ThrowRef: return true;
    default: return false;
  }
}

// The word index of op's first operand of `kind` (0: none; word 0 is the handler).
constexpr unsigned operand_word(Op o, OperandKind kind) {
  const LayoutInfo& l = layout_of(o);
  for (std::size_t i = 0; i < l.count; ++i)
    if (l.operands[i].kind == kind) return l.operands[i].word;
  return 0;
}

// Every branch target of the instruction at `at` (relative offsets: BRANCH words and the TARGETS
// tail), as absolute words; may wrap when the code is broken (the caller checks).
template <class F>
void for_each_target(Op o, const u32* code, u32 at, F&& f) {
  const LayoutInfo& l = layout_of(o);
  for (std::size_t i = 0; i < l.count; ++i) {
    const OperandInfo& operand = l.operands[i];
    if (operand.kind == OperandKind::Branch) f(at + code[at + operand.word]);
    if (operand.kind == OperandKind::Targets) {
      const u32 count = code[at + operand_word(o, OperandKind::Count)];
      for (u32 k = 0; k <= count; ++k) f(at + code[at + operand.word + k]);
    }
  }
}

// A scalar load or store in the plain address mode: what the translator puts between MemAt and
// MemRestore (an access to a memory other than an i32 memory 0; SIMD ones are refused before).
constexpr bool plain_scalar_access(Op o) {
  const OpInfo& oi = info(o);
  return (oi.family == OpFamily::Load || oi.family == OpFamily::Store) && oi.mem_base != Op::Count_ &&
         oi.mem_mode == MemMode::Plain;
}
// What may follow MemAt: a plain scalar access or a v128 one (v128.load*, v128.store, the lane
// loads and stores), each addressed through FunctionEmitter::address, which takes MemAt's pointer.
constexpr bool redirectable_access(Op o) {
  const Layout l = info(o).layout;
  return plain_scalar_access(o) || (info(o).family == OpFamily::Simd && (l == Layout::VLoad || l == Layout::VStore ||
                                                                        l == Layout::VLoadLane || l == Layout::VStoreLane));
}

// ---------------------------------------------------------------- the compile budget
// LLVM's time and memory grow faster than linearly with some shapes of a function: spans of
// branches nested inside one another (every nested metered loop header and `if` adds phis and
// dominator-tree depth), branch targets (a br_table of a million entries), locals and the
// values of its signature (every slot an SSA value live across the CFG). A function over any of
// these limits, or over the code size limit, stays interpreted with a reason naming the figure;
// the facts are read from the internal code before any IR exists (docs/compiled-tier.md, "The
// compile budget", has the measurements behind each limit).
struct CompileFacts {
  std::size_t code_bytes = 0;      // wasm code bytes of the body
  u32 nesting = 0;                 // branch spans open at the deepest point (blocks, loops, ifs that branch)
  std::size_t branch_targets = 0;  // each branch's distinct targets (every one a block LLVM keeps)
  std::size_t table_entries = 0;   // every branch's targets, each br_table entry counted
  std::size_t locals = 0;          // declared locals (parameters not included)
  std::size_t signature = 0;       // parameters + results
  std::size_t frame_slots = 0;     // locals, parameters and the deepest operand stack
  std::size_t slots_by_nesting = 0;  // frame_slots × nesting: the phis a slot changed inside every span may need
  std::size_t simd_ops = 0;          // v128 instructions: each is several IR instructions per wasm byte
  std::size_t gc_ops = 0;            // GC instructions: each a helper call (or an inline allocation and one) after a frame spill
  // In a module that uses GC, every call, GC and exception instruction may store the whole frame
  // for the collector first (the emitter's gc_spill_frame): such instructions × frame_slots, the
  // stores (and the SSA values live into them) LLVM then has to handle.
  std::size_t spilled_slots = 0;
};
using CompileBudget = CompileFacts;  // the limits, one per fact
inline constexpr CompileBudget kCompileBudget{.code_bytes = std::size_t{1} << 20,
                                              .nesting = 2000,
                                              .branch_targets = 30'000,
                                              .table_entries = 250'000,
                                              .locals = 4000,
                                              .signature = 1000,
                                              .frame_slots = 4000,
                                              .slots_by_nesting = 500'000,
                                              .simd_ops = 10'000,
                                              .gc_ops = 1000,
                                              .spilled_slots = 50'000};

// The lazy path (`--tier compile` without a cache entry) sets up an IR module and a lazy stub for
// every compilable function of the module up front, about 13 KB of memory each even for a
// function of a few bytes, so it takes only the first functions (by index) within this many and
// this much code;
// the rest stay interpreted with a reason. CPython (8,131 functions, 3.4 MB of code) fits whole.
struct LazyModuleBudget {
  std::size_t functions = 0;
  std::size_t code_bytes = 0;
};
inline constexpr LazyModuleBudget kLazyModuleBudget{.functions = 10'000, .code_bytes = std::size_t{8} << 20};

// Pass 1: the instructions of a function (after the metered entry check), or why it cannot be
// compiled.
struct Scan {
  std::vector<Instr> instrs;
  std::vector<u32> targets;
  std::string reason;
  CompileFacts facts;  // as far as the scan got (SPRAWLING_JIT_STATS=2 prints the largest)
};

// Pass 1 of one defined function (`defined`) of `module`, as translated (metered or not).
[[nodiscard]] Scan scan(const CompiledFunc& f, bool metered, const Module& module, std::size_t defined);

}  // namespace sprawling::wasm::jit
