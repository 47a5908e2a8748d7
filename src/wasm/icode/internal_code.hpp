// The internal instruction set as data, generated from internal_ops.def: the Op enum, one struct
// per word layout (word indices, typed Args, write/read), the op table, the variant maps, and a
// decoder that walks translated code generically (for the verifier, the disassembler, a compiled tier).
#pragma once

#include "wasm/syntax/opcodes.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sprawling::wasm {

// What a word (or word pair) after the handler word is; see the legend in internal_ops.def.
enum class OperandKind : std::uint8_t {
  Dst, Src, Base, Imm, Imm64, F32, F64, Func, Type, Table, Global, Elem, Data, Branch, Count, Targets, Fuel, Fall,
  VDst, VSrc, V128, Lane,
};

// A V128 operand's value (shape Q: four words, lowest first): bytes 0..7 in lo, 8..15 in hi.
struct Imm128 {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  friend constexpr bool operator==(const Imm128&, const Imm128&) = default;
};

enum class Layout : std::uint8_t {
#define SPRAWLING_LAYOUT(Name, Operands) Name,
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_LAYOUT
  Count_
};
inline constexpr std::size_t kLayoutCount = static_cast<std::size_t>(Layout::Count_);

enum class Op : std::uint16_t {
#define SPRAWLING_OP(Name, L, Family, Variant, Trap, Segment) Name,
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_OP
  Count_
};
inline constexpr std::size_t kOpCount = static_cast<std::size_t>(Op::Count_);

enum class OpFamily : std::uint8_t { Control, Fuel, Move, Call, Global, Table, Memory, Ref, Load, Store, FusedBranch, Numeric, Simd,
                                      MultiMemory, Exception, TypedRef, Gc };
// How a load/store finds its address (VMEM in internal_ops.def).
enum class MemMode : std::uint8_t { Plain, Add, Abs };
inline constexpr std::size_t kMemModeCount = 3;
// The second operand of a fused compare-branch or a numeric op: a slot or an inline constant.
enum class SecondOperand : std::uint8_t { Slot, Imm };
enum class BranchWhen : std::uint8_t { True, False };
enum class OpTrap : std::uint8_t { Traps, NoTrap };
enum class OpSegment : std::uint8_t { Ends, Flows };

// ---------------------------------------------------------------- layouts
// layout::Name::dst etc. are word indices (word 0 is the handler); Args holds the operands the
// translator supplies (TARGETS entries are appended separately, the FALL word is patched later).
namespace layout {
inline constexpr unsigned kTailFall = 1;     // the last word is FALL (present in metered code only)
inline constexpr unsigned kTailTargets = 2;  // the last operand is the TARGETS tail

// Word indices.
#define SPRAWLING_K(Kind, n, Shape) SPRAWLING_WORDS_##Shape(n)
#define SPRAWLING_WORDS_S(n) n,
#define SPRAWLING_WORDS_D(n) n, n##_hi_,
#define SPRAWLING_WORDS_T(n) n,
#define SPRAWLING_WORDS_F(n) n,
#define SPRAWLING_WORDS_Q(n) n, n##_w1_, n##_w2_, n##_w3_,
#define SPRAWLING_LAYOUT(Name, Operands) \
  struct Name##Words {                   \
    enum Word : std::uint32_t { op_word_, Operands end_ }; \
  };
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_LAYOUT
#undef SPRAWLING_K

// Operand fields.
#define SPRAWLING_K(Kind, n, Shape) SPRAWLING_ARGS_##Shape(n)
#define SPRAWLING_ARGS_S(n) std::uint32_t n;
#define SPRAWLING_ARGS_D(n) std::uint64_t n;
#define SPRAWLING_ARGS_T(n)
#define SPRAWLING_ARGS_F(n)
#define SPRAWLING_ARGS_Q(n) Imm128 n;
#define SPRAWLING_LAYOUT(Name, Operands) \
  struct Name##Args {                    \
    Operands                             \
  };
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_LAYOUT
#undef SPRAWLING_K

// Tails.
#define SPRAWLING_K(Kind, n, Shape) SPRAWLING_TAIL_##Shape
#define SPRAWLING_TAIL_S
#define SPRAWLING_TAIL_D
#define SPRAWLING_TAIL_T | kTailTargets
#define SPRAWLING_TAIL_F | kTailFall
#define SPRAWLING_TAIL_Q
#define SPRAWLING_LAYOUT(Name, Operands) inline constexpr unsigned Name##Tail = 0 Operands;
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_LAYOUT
#undef SPRAWLING_K

// Writers and readers.
#define SPRAWLING_K(Kind, n, Shape) SPRAWLING_PUT_##Shape(n)
#define SPRAWLING_PUT_S(n) w[Words::n] = a.n;
#define SPRAWLING_PUT_D(n)                         \
  w[Words::n] = static_cast<std::uint32_t>(a.n); \
  w[Words::n##_hi_] = static_cast<std::uint32_t>(a.n >> 32);
#define SPRAWLING_PUT_T(n)
#define SPRAWLING_PUT_F(n)
#define SPRAWLING_PUT_Q(n)                                     \
  w[Words::n] = static_cast<std::uint32_t>(a.n.lo);            \
  w[Words::n##_w1_] = static_cast<std::uint32_t>(a.n.lo >> 32); \
  w[Words::n##_w2_] = static_cast<std::uint32_t>(a.n.hi);      \
  w[Words::n##_w3_] = static_cast<std::uint32_t>(a.n.hi >> 32);
#define SPRAWLING_LAYOUT(Name, Operands)                                                                 \
  constexpr void Name##Write([[maybe_unused]] std::uint32_t* w, [[maybe_unused]] const Name##Args& a) noexcept { \
    using Words [[maybe_unused]] = Name##Words;                                                                         \
    Operands                                                                                             \
  }
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_LAYOUT
#undef SPRAWLING_K
#define SPRAWLING_K(Kind, n, Shape) SPRAWLING_GET_##Shape(n)
#define SPRAWLING_GET_S(n) a.n = w[Words::n];
#define SPRAWLING_GET_D(n) a.n = static_cast<std::uint64_t>(w[Words::n]) | (static_cast<std::uint64_t>(w[Words::n##_hi_]) << 32);
#define SPRAWLING_GET_T(n)
#define SPRAWLING_GET_F(n)
#define SPRAWLING_GET_Q(n)                                                                                      \
  a.n.lo = static_cast<std::uint64_t>(w[Words::n]) | (static_cast<std::uint64_t>(w[Words::n##_w1_]) << 32);     \
  a.n.hi = static_cast<std::uint64_t>(w[Words::n##_w2_]) | (static_cast<std::uint64_t>(w[Words::n##_w3_]) << 32);
#define SPRAWLING_LAYOUT(Name, Operands)                                             \
  constexpr Name##Args Name##Read([[maybe_unused]] const std::uint32_t* w) noexcept { \
    using Words [[maybe_unused]] = Name##Words;                                                     \
    Name##Args a{};                                                                  \
    Operands                                                                         \
    return a;                                                                        \
  }
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_LAYOUT
#undef SPRAWLING_K

// The layout structs: word indices, Args, and what the translator emits.
#define SPRAWLING_K(Kind, n, Shape)
#define SPRAWLING_LAYOUT(Name, Operands)                                                                      \
  struct Name : Name##Words {                                                                                 \
    using Args = Name##Args;                                                                                  \
    static constexpr Layout kLayout = Layout::Name;                                                           \
    static constexpr unsigned kTail = Name##Tail;                                                             \
    /* Every word, FALL included; with a TARGETS tail, up to and including its first entry. */               \
    static constexpr std::uint32_t kWords = end_;                                                             \
    /* What `write` fills plus the FALL word of metered code: the words emitted before any TARGETS entry. */ \
    static constexpr std::uint32_t fixed_words(bool metered) noexcept {                                       \
      return end_ - (((kTail & kTailFall) != 0 && !metered) ? 1 : 0) - ((kTail & kTailTargets) != 0 ? 1 : 0); \
    }                                                                                                         \
    static constexpr void write(std::uint32_t* w, const Args& a) noexcept { Name##Write(w, a); }              \
    static constexpr Args read(const std::uint32_t* w) noexcept { return Name##Read(w); }                     \
  };
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_LAYOUT
#undef SPRAWLING_K
}  // namespace layout

// ---------------------------------------------------------------- layout table (generic walking)
inline constexpr std::size_t kMaxOperands = 8;

struct OperandInfo {
  OperandKind kind = OperandKind::Imm;
  std::uint8_t word = 0;  // index of its (first) word
  std::string_view name;
};

struct LayoutInfo {
  std::string_view name;
  unsigned tail = 0;      // layout::kTailFall | layout::kTailTargets
  std::uint8_t end = 1;   // layout::Name::kWords
  std::uint8_t count = 0;
  std::array<OperandInfo, kMaxOperands> operands{};
  constexpr LayoutInfo add(OperandKind kind, std::string_view operand, std::uint8_t words) const {
    LayoutInfo r = *this;
    r.operands[r.count++] = OperandInfo{kind, r.end, operand};
    r.end = static_cast<std::uint8_t>(r.end + words);
    return r;
  }
};

inline constexpr std::array<LayoutInfo, kLayoutCount> kLayouts = {
#define SPRAWLING_K(Kind, n, Shape) .add(OperandKind::Kind, #n, SPRAWLING_SHAPE_WORDS_##Shape)
#define SPRAWLING_SHAPE_WORDS_S 1
#define SPRAWLING_SHAPE_WORDS_D 2
#define SPRAWLING_SHAPE_WORDS_T 1
#define SPRAWLING_SHAPE_WORDS_F 1
#define SPRAWLING_SHAPE_WORDS_Q 4
#define SPRAWLING_LAYOUT(Name, Operands) LayoutInfo{#Name, layout::Name::kTail} Operands,
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_LAYOUT
#undef SPRAWLING_K
};
#define SPRAWLING_K(Kind, n, Shape)
#define SPRAWLING_LAYOUT(Name, Operands) \
  static_assert(kLayouts[static_cast<std::size_t>(Layout::Name)].end == layout::Name::kWords);
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_LAYOUT
#undef SPRAWLING_K

#undef SPRAWLING_WORDS_S
#undef SPRAWLING_WORDS_D
#undef SPRAWLING_WORDS_T
#undef SPRAWLING_WORDS_F
#undef SPRAWLING_WORDS_Q
#undef SPRAWLING_ARGS_S
#undef SPRAWLING_ARGS_D
#undef SPRAWLING_ARGS_T
#undef SPRAWLING_ARGS_F
#undef SPRAWLING_ARGS_Q
#undef SPRAWLING_TAIL_S
#undef SPRAWLING_TAIL_D
#undef SPRAWLING_TAIL_T
#undef SPRAWLING_TAIL_F
#undef SPRAWLING_TAIL_Q
#undef SPRAWLING_PUT_S
#undef SPRAWLING_PUT_D
#undef SPRAWLING_PUT_T
#undef SPRAWLING_PUT_F
#undef SPRAWLING_PUT_Q
#undef SPRAWLING_GET_S
#undef SPRAWLING_GET_D
#undef SPRAWLING_GET_T
#undef SPRAWLING_GET_F
#undef SPRAWLING_GET_Q
#undef SPRAWLING_SHAPE_WORDS_S
#undef SPRAWLING_SHAPE_WORDS_D
#undef SPRAWLING_SHAPE_WORDS_T
#undef SPRAWLING_SHAPE_WORDS_F
#undef SPRAWLING_SHAPE_WORDS_Q

[[nodiscard]] constexpr const LayoutInfo& info(Layout l) noexcept { return kLayouts[static_cast<std::size_t>(l)]; }

// ---------------------------------------------------------------- op table
struct OpInfo {
  std::string_view name;
  Layout layout = Layout::Nullary;
  OpFamily family = OpFamily::Control;
  bool can_trap = false;      // may stop with a trap: the translator records a trap site
  bool ends_segment = false;  // ends a metered fuel segment
  // Variant: VMEM (mem_base, mem_mode), VCMP (wasm, second, when), VNUM (wasm, second).
  Op mem_base = Op::Count_;
  MemMode mem_mode = MemMode::Plain;
  bool has_wasm = false;
  Opcode wasm = Opcode::Unreachable;
  SecondOperand second = SecondOperand::Slot;
  BranchWhen when = BranchWhen::True;
};

namespace detail {
struct OpVariant {
  Op mem_base = Op::Count_;
  MemMode mem_mode = MemMode::Plain;
  bool has_wasm = false;
  Opcode wasm = Opcode::Unreachable;
  SecondOperand second = SecondOperand::Slot;
  BranchWhen when = BranchWhen::True;
};
constexpr OpInfo make_op(std::string_view name, Layout l, OpFamily f, OpVariant v, OpTrap t, OpSegment s) {
  return OpInfo{name, l, f, t == OpTrap::Traps, s == OpSegment::Ends, v.mem_base, v.mem_mode, v.has_wasm, v.wasm,
                v.second, v.when};
}
}  // namespace detail

inline constexpr std::array<OpInfo, kOpCount> kOps = {
#define VNONE detail::OpVariant{}
#define VMEM(Base, Mode) detail::OpVariant{Op::Base, MemMode::Mode, true, Opcode::Base}
#define VCMP(Cmp, Second, When) \
  detail::OpVariant{Op::Count_, MemMode::Plain, true, Opcode::Cmp, SecondOperand::Second, BranchWhen::When}
#define VNUM(Name, Second) detail::OpVariant{Op::Count_, MemMode::Plain, true, Opcode::Name, SecondOperand::Second}
#define VSIMD(Name) detail::OpVariant{Op::Count_, MemMode::Plain, true, Opcode::Name}
#define SPRAWLING_OP(Name, L, Family, Variant, Trap, Segment) \
  detail::make_op(#Name, Layout::L, OpFamily::Family, Variant, OpTrap::Trap, OpSegment::Segment),
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_OP
#undef VNONE
#undef VMEM
#undef VCMP
#undef VNUM
#undef VSIMD
};

[[nodiscard]] constexpr const OpInfo& info(Op op) noexcept { return kOps[static_cast<std::size_t>(op)]; }
[[nodiscard]] constexpr const LayoutInfo& layout_of(Op op) noexcept { return info(info(op).layout); }

// The layout struct of an op known at compile time (the translator's typed emit<Op>).
template <Op O>
struct LayoutOf;
#define SPRAWLING_OP(Name, L, Family, Variant, Trap, Segment) \
  template <>                                                  \
  struct LayoutOf<Op::Name> {                                  \
    using type = layout::L;                                    \
  };
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_OP

// ---------------------------------------------------------------- variant maps
namespace detail {
constexpr std::array<std::array<Op, kMemModeCount>, kOpCount> make_mem_variants() {
  std::array<std::array<Op, kMemModeCount>, kOpCount> t{};
  for (auto& row : t) row.fill(Op::Count_);
  for (std::size_t i = 0; i < kOpCount; ++i) {
    const OpInfo& o = kOps[i];
    if (o.mem_base != Op::Count_)
      t[static_cast<std::size_t>(o.mem_base)][static_cast<std::size_t>(o.mem_mode)] = static_cast<Op>(i);
  }
  return t;
}
inline constexpr auto kMemVariants = make_mem_variants();

// Fused branches and numeric ops by wasm opcode: [opcode][second operand][when].
constexpr std::array<std::array<std::array<Op, 2>, 2>, kOpcodeSpace> make_wasm_variants(OpFamily family) {
  std::array<std::array<std::array<Op, 2>, 2>, kOpcodeSpace> t{};
  for (auto& a : t)
    for (auto& b : a) b.fill(Op::Count_);
  for (std::size_t i = 0; i < kOpCount; ++i) {
    const OpInfo& o = kOps[i];
    if (o.family == family && o.has_wasm)
      t[static_cast<std::size_t>(o.wasm)][static_cast<std::size_t>(o.second)][static_cast<std::size_t>(o.when)] =
          static_cast<Op>(i);
  }
  return t;
}
inline constexpr auto kFused = make_wasm_variants(OpFamily::FusedBranch);
inline constexpr auto kNumeric = make_wasm_variants(OpFamily::Numeric);
inline constexpr auto kSimdOps = make_wasm_variants(OpFamily::Simd);
}  // namespace detail

namespace detail {
// Each wasm load/store's Plain-mode op (its VMEM base names the wasm opcode); f32/f64 accesses
// move raw bits, so they use the i32/i64 ops of their width.
constexpr std::array<Op, kOpcodeSpace> make_access_ops() {
  std::array<Op, kOpcodeSpace> t{};
  t.fill(Op::Count_);
  for (std::size_t i = 0; i < kOpCount; ++i)
    if (kOps[i].mem_base == static_cast<Op>(i)) t[static_cast<std::size_t>(kOps[i].wasm)] = static_cast<Op>(i);
  t[static_cast<std::size_t>(Opcode::F32Load)] = Op::I32Load;
  t[static_cast<std::size_t>(Opcode::F64Load)] = Op::I64Load;
  t[static_cast<std::size_t>(Opcode::F32Store)] = Op::I32Store;
  t[static_cast<std::size_t>(Opcode::F64Store)] = Op::I64Store;
  return t;
}
inline constexpr auto kAccessOps = make_access_ops();
}  // namespace detail

// What a load or store op reads or writes (memory_access.def): `bytes` of memory, sign-extended
// (`sign`) or zero-extended to the slot value's type, 64 bits wide or 32 (`wide`).
struct MemAccess {
  std::uint8_t bytes = 0;  // 0: not a load or store
  bool sign = false;
  bool wide = false;  // the value's slot is an i64 (loads: the result; stores: the operand)
};
namespace detail {
constexpr std::array<MemAccess, kOpCount> make_mem_accesses() {
  std::array<MemAccess, kOpCount> t{};
  for (std::size_t i = 0; i < kOpCount; ++i) {
    const Op plain = kOps[i].mem_base;
    if (plain == Op::Count_) continue;
#define SPRAWLING_ACCESS(Name, Kind, bytes, sign, width) \
  if (plain == Op::Name) t[i] = MemAccess{bytes, #sign[0] == 'S', (width) == 64};
#include "wasm/icode/memory_access.def"
#undef SPRAWLING_ACCESS
  }
  return t;
}
inline constexpr auto kMemAccesses = make_mem_accesses();
}  // namespace detail
// The access of a load or store op in any address mode (bytes 0 for any other op).
[[nodiscard]] constexpr const MemAccess& mem_access(Op op) noexcept {
  return detail::kMemAccesses[static_cast<std::size_t>(op)];
}

// The Plain-mode load/store op of a wasm load/store opcode, or Op::Count_.
[[nodiscard]] constexpr Op access_op(Opcode op) noexcept { return detail::kAccessOps[static_cast<std::size_t>(op)]; }

// The load/store `plain` (a Plain-mode op) with its address found as `mode` says.
[[nodiscard]] constexpr Op mem_variant(Op plain, MemMode mode) noexcept {
  return detail::kMemVariants[static_cast<std::size_t>(plain)][static_cast<std::size_t>(mode)];
}
// The fused compare-and-branch for i32 comparison `cmp`, or Op::Count_ when cmp does not fuse.
[[nodiscard]] constexpr Op fused_branch(Opcode cmp, SecondOperand second, BranchWhen when) noexcept {
  return detail::kFused[static_cast<std::size_t>(cmp)][static_cast<std::size_t>(second)][static_cast<std::size_t>(when)];
}
// The numeric op of an immediate-free wasm opcode (Imm: with the second operand inline), or Op::Count_.
[[nodiscard]] constexpr Op numeric_op(Opcode op, SecondOperand second) noexcept {
  return detail::kNumeric[static_cast<std::size_t>(op)][static_cast<std::size_t>(second)][0];
}

// The op of a fixed-width SIMD instruction (one per simd_opcodes.def row), or Op::Count_.
[[nodiscard]] constexpr Op simd_op(Opcode op) noexcept {
  return detail::kSimdOps[static_cast<std::size_t>(op)][0][0];
}

namespace detail {
constexpr bool variants_complete() {
  for (std::size_t i = 0; i < kOpCount; ++i) {
    const OpInfo& o = kOps[i];
    // Every load/store has all three address modes, in its own family, with the same access.
    if (o.mem_base != Op::Count_) {
      if (info(o.mem_base).mem_mode != MemMode::Plain || info(o.mem_base).mem_base != o.mem_base) return false;
      for (std::size_t m = 0; m < kMemModeCount; ++m) {
        const Op v = mem_variant(o.mem_base, static_cast<MemMode>(m));
        if (v == Op::Count_ || info(v).family != o.family) return false;
      }
    }
  }
  // Every i32 comparison fuses, in all four forms; nothing else does.
  for (std::size_t c = 0; c < kOpcodeSpace; ++c) {
    const auto op = static_cast<Opcode>(c);
    const bool i32_cmp = c >= static_cast<std::size_t>(Opcode::I32Eq) && c <= static_cast<std::size_t>(Opcode::I32GeU);
    for (std::size_t s = 0; s < 2; ++s)
      for (std::size_t w = 0; w < 2; ++w)
        if ((fused_branch(op, static_cast<SecondOperand>(s), static_cast<BranchWhen>(w)) != Op::Count_) != i32_cmp)
          return false;
  }
  // Every SIMD instruction has its op, and only those.
  for (std::size_t c = 0; c < kOpcodeSpace; ++c)
    if ((simd_op(static_cast<Opcode>(c)) != Op::Count_) != (c >= kSimdBase && !kOpcodeTable[c].text.empty())) return false;
  return true;
}
static_assert(variants_complete(), "internal_ops.def: a load/store lacks an address mode, or a fused branch is missing");
}  // namespace detail
static_assert(mem_variant(Op::I64Load8U, MemMode::Add) == Op::I64Load8UAdd);
static_assert(mem_variant(Op::I32Store16, MemMode::Abs) == Op::I32Store16Abs);
static_assert(fused_branch(Opcode::I32LtS, SecondOperand::Imm, BranchWhen::False) == Op::BrUnlessI32LtSImm);
static_assert(numeric_op(Opcode::I64Add, SecondOperand::Imm) == Op::NumI64AddImm);
static_assert(simd_op(Opcode::I8x16Shuffle) == Op::SimdI8x16Shuffle && info(Op::SimdV128Load).can_trap &&
              info(Op::SimdI32x4ExtractLane).layout == Layout::VExtract && simd_op(Opcode::I32Add) == Op::Count_);
static_assert(access_op(Opcode::I64Load16S) == Op::I64Load16S && access_op(Opcode::F64Store) == Op::I64Store &&
              access_op(Opcode::MemoryGrow) == Op::Count_);

// ---------------------------------------------------------------- walking translated code
// Code words hold handler offsets (interpreter.cpp), which differ between the metered and the
// unmetered interpreter: decoding needs to know which variant the code was made for.

// The op whose handler a code word names in that variant, or Op::Count_ if none.
[[nodiscard]] Op op_of_word(std::uint32_t word, bool metered);

// The handler word of op in that variant (what the translator writes as word 0).
[[nodiscard]] std::uint32_t word_of_op(Op op, bool metered);

// The length in words of the instruction at ip (op already decoded); reads the COUNT word of a
// TARGETS layout, so ip must hold at least its fixed words.
[[nodiscard]] constexpr std::uint32_t instr_words(Op op, const std::uint32_t* ip, bool metered) noexcept {
  const LayoutInfo& l = layout_of(op);
  std::uint32_t n = l.end;
  if ((l.tail & layout::kTailFall) != 0 && !metered) --n;
  if ((l.tail & layout::kTailTargets) != 0) {
    // The TARGETS placeholder word stands for COUNT + 1 entries.
    for (std::size_t i = 0; i < l.count; ++i)
      if (l.operands[i].kind == OperandKind::Count) n += ip[l.operands[i].word];
  }
  return n;
}

// Calls f.template operator()<O>(args) with the instruction's op O as a template argument and its
// operands read into layout Args (TARGETS entries and the FALL word are read from ip by the
// caller: layout::JumpTable::targets, layout::CondJump::fall); returns what f returns. A compiled
// tier's per-op code generator is one such generic lambda: [&]<Op O>(const auto& a) { ... }.
template <class F>
decltype(auto) visit_instruction(Op op, const std::uint32_t* ip, F&& f) {
  switch (op) {
#define SPRAWLING_OP(Name, L, Family, Variant, Trap, Segment) \
  case Op::Name: return std::forward<F>(f).template operator()<Op::Name>(layout::L::read(ip));
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_OP
    case Op::Count_: break;
  }
  return std::forward<F>(f).template operator()<Op::Count_>(layout::Nullary::Args{});
}

struct Instr {
  std::uint32_t at = 0;     // first word
  Op op = Op::Count_;
  std::uint32_t words = 0;  // length
};

// Splits code into instructions; an error names the word that is no handler or the instruction
// that runs past the end.
[[nodiscard]] std::expected<std::vector<Instr>, std::string> decode_instructions(std::span<const std::uint32_t> code,
                                                                                bool metered);

}  // namespace sprawling::wasm
