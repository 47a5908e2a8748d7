// The internal code the translator emits and the interpreter runs: the instruction set (Op),
// its word layout, and the per-function product (CompiledFunc). See docs/interpreter.md.
//
// An instruction is a run of 32-bit words: word 0 is the handler's offset from the
// interpreter's base label (direct threading without 64-bit pointers), the rest are operands.
// Operands are frame slots (u32 index from the frame pointer), 32-bit immediates, or branch
// offsets (i32, in words, relative to the branch instruction's first word).
#pragma once

#include "wasm/opcodes.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace sprawling::wasm {

// Internal operations. The simple numeric ones are generated from opcodes.def (every row with
// no immediate and a plain signature): `Name` takes slots [dst a b] / [dst a]; the integer
// binary ones also have `NameImm` with [dst a imm32] (i64: imm sign-extended), the float
// arithmetic ones `NameImm` with [dst a bits] (f64: two words, low first).
#define SPRAWLING_INTERNAL_OPS(X)                                                                     \
  X(Unreachable)   /* [] */                                                                           \
  X(Br)            /* [off] */                                                                        \
  X(BrIf)          /* [cond off] */                                                                   \
  X(BrUnless)      /* [cond off] */                                                                   \
  X(BrTable)       /* [idx n off0..off(n-1) off_default] */                                           \
  X(Copy)          /* [dst src] */                                                                    \
  X(Copy2)         /* [dst0 src0 dst1 src1] */                                                        \
  X(Const32)       /* [dst imm] (zero-extended) */                                                    \
  X(Const64)       /* [dst lo hi] */                                                                  \
  X(Call)          /* [funcidx base post]; post = fuel of the segment after the call */              \
  X(CallIndirect)  /* [typeidx tableidx base idx post] */                                             \
  X(Return)        /* [] */                                                                           \
  X(Fuel)          /* [cost] */                                                                       \
  X(FuelCheck)     /* [cost visible] */                                                               \
  X(Select)        /* [dst a b cond] */                                                               \
  X(GlobalGet)     /* [dst globalidx] */                                                              \
  X(GlobalSet)     /* [globalidx src] */                                                              \
  X(TableGet)      /* [dst tableidx idx] */                                                           \
  X(TableSet)      /* [tableidx idx val] */                                                           \
  X(TableSize)     /* [dst tableidx] */                                                               \
  X(TableGrow)     /* [dst tableidx init n] */                                                        \
  X(TableFill)     /* [tableidx i val n] */                                                           \
  X(TableCopy)     /* [dsttable srctable d s n] */                                                    \
  X(TableInit)     /* [elemidx tableidx d s n] */                                                     \
  X(ElemDrop)      /* [elemidx] */                                                                    \
  X(MemorySize)    /* [dst] */                                                                        \
  X(MemoryGrow)    /* [dst delta] */                                                                  \
  X(MemoryFill)    /* [d val n] */                                                                    \
  X(MemoryCopy)    /* [d s n] */                                                                      \
  X(MemoryInit)    /* [dataidx d s n] */                                                              \
  X(DataDrop)      /* [dataidx] */                                                                    \
  X(RefIsNull)     /* [dst src] */                                                                    \
  X(RefFunc)       /* [dst funcidx] */                                                                \
  /* loads [dst addr offset]; f32/f64 loads use I32Load/I64Load */                                    \
  X(I32Load) X(I64Load) X(I32Load8S) X(I32Load8U) X(I32Load16S) X(I32Load16U)                          \
  X(I64Load8S) X(I64Load8U) X(I64Load16S) X(I64Load16U) X(I64Load32S) X(I64Load32U)                    \
  /* stores [addr val offset] */                                                                      \
  X(I32Store) X(I64Store) X(I32Store8) X(I32Store16) X(I64Store8) X(I64Store16) X(I64Store32)         \
  /* the same with the address u32(slot base + imm) folded in (the translator's lazy i32.add of a */   \
  /* constant): loads [dst base imm offset], stores [base imm val offset]; order as above */        \
  X(I32LoadAdd) X(I64LoadAdd) X(I32Load8SAdd) X(I32Load8UAdd) X(I32Load16SAdd) X(I32Load16UAdd)        \
  X(I64Load8SAdd) X(I64Load8UAdd) X(I64Load16SAdd) X(I64Load16UAdd) X(I64Load32SAdd) X(I64Load32UAdd)  \
  X(I32StoreAdd) X(I64StoreAdd) X(I32Store8Add) X(I32Store16Add) X(I64Store8Add) X(I64Store16Add)      \
  X(I64Store32Add)                                                                                    \
  /* the same with a constant address (clang's `i32.const 0; load offset=G` for globals): */        \
  /* loads [dst addr offset], stores [addr val offset] with addr an immediate; order as above */     \
  X(I32LoadAbs) X(I64LoadAbs) X(I32Load8SAbs) X(I32Load8UAbs) X(I32Load16SAbs) X(I32Load16UAbs)        \
  X(I64Load8SAbs) X(I64Load8UAbs) X(I64Load16SAbs) X(I64Load16UAbs) X(I64Load32SAbs) X(I64Load32UAbs)  \
  X(I32StoreAbs) X(I64StoreAbs) X(I32Store8Abs) X(I32Store16Abs) X(I64Store8Abs) X(I64Store16Abs)      \
  X(I64Store32Abs)                                                                                    \
  /* fused compare + branch: [a b off] and [a imm off]; Z: [a off] on a == 0 / a != 0 */             \
  SPRAWLING_FUSED_BRANCHES(X)

#define SPRAWLING_FUSED_BRANCHES(X) \
  X(BrIfI32Eq) X(BrIfI32EqImm) X(BrUnlessI32Eq) X(BrUnlessI32EqImm) \
  X(BrIfI32Ne) X(BrIfI32NeImm) X(BrUnlessI32Ne) X(BrUnlessI32NeImm) \
  X(BrIfI32LtS) X(BrIfI32LtSImm) X(BrUnlessI32LtS) X(BrUnlessI32LtSImm) \
  X(BrIfI32LtU) X(BrIfI32LtUImm) X(BrUnlessI32LtU) X(BrUnlessI32LtUImm) \
  X(BrIfI32GtS) X(BrIfI32GtSImm) X(BrUnlessI32GtS) X(BrUnlessI32GtSImm) \
  X(BrIfI32GtU) X(BrIfI32GtUImm) X(BrUnlessI32GtU) X(BrUnlessI32GtUImm) \
  X(BrIfI32LeS) X(BrIfI32LeSImm) X(BrUnlessI32LeS) X(BrUnlessI32LeSImm) \
  X(BrIfI32LeU) X(BrIfI32LeUImm) X(BrUnlessI32LeU) X(BrUnlessI32LeUImm) \
  X(BrIfI32GeS) X(BrIfI32GeSImm) X(BrUnlessI32GeS) X(BrUnlessI32GeSImm) \
  X(BrIfI32GeU) X(BrIfI32GeUImm) X(BrUnlessI32GeU) X(BrUnlessI32GeUImm)

enum class Op : std::uint16_t {
#define X(Name) Name,
  SPRAWLING_INTERNAL_OPS(X)
#undef X
#define SPRAWLING_SIMPLE_OP(Name, A, R, Form) SPRAWLING_ENUM_##Form(Name)
#define SPRAWLING_ENUM_Un(Name) Num##Name,
#define SPRAWLING_ENUM_Bin(Name) Num##Name,
#define SPRAWLING_ENUM_BinImm(Name) Num##Name, Num##Name##Imm,
#define SPRAWLING_ENUM_BinFImm(Name) Num##Name, Num##Name##Imm,
#include "wasm/simple_ops.inc"
#undef SPRAWLING_ENUM_BinFImm
#undef SPRAWLING_ENUM_Un
#undef SPRAWLING_ENUM_Bin
#undef SPRAWLING_ENUM_BinImm
#undef SPRAWLING_SIMPLE_OP
  Count_
};

inline constexpr std::size_t kOpCount = static_cast<std::size_t>(Op::Count_);

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
