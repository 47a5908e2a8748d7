// Opcode enum and constexpr tables (text name, immediate kind, simple signature, fuel cost),
// all generated from opcodes.def and simd_opcodes.def so that nothing opcode-shaped is kept by hand twice.
#pragma once

#include "wasm/syntax/types.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sprawling::wasm {

// What follows an opcode in the binary (legend in opcodes.def).
enum class ImmKind : std::uint8_t {
  None,
  BlockType,
  LabelIdx,
  BrTable,
  FuncIdx,
  CallIndirect,
  LocalIdx,
  GlobalIdx,
  TableIdx,
  MemIdx,
  TagIdx,    // exception handling: a tagidx (throw, catch)
  TryTable,  // exception handling: blocktype, then vec(catch clause) (try_table)
  I32,
  I64,
  F32,
  F64,
  SelectT,
  RefType,
  DataIdx,
  ElemIdx,
  TypeIdx,  // typed function references: call_ref, return_call_ref; GC: struct.new, array.get, …
  // GC (prefix 0xFB)
  StructField,  // typeidx fieldidx (struct.get/_s/_u/set)
  ArrayFixed,   // typeidx u32 count (array.new_fixed)
  ArrayData,    // typeidx dataidx (array.new_data, array.init_data)
  ArrayElem,    // typeidx elemidx (array.new_elem, array.init_elem)
  ArrayCopy,    // typeidx typeidx (destination, source)
  HeapType,     // a heap type (ref.test, ref.cast; the opcode says whether null matches)
  BrOnCast,     // flags (bit 0: the first type is nullable, bit 1: the second), labelidx, heaptype, heaptype
  MemoryInit,
  MemoryCopy,
  TableInit,
  TableCopy,
  MemArg8,
  MemArg16,
  MemArg32,
  MemArg64,
  // Fixed-width SIMD (legend in simd_opcodes.def).
  MemArg128,
  V128,
  Shuffle,
  Lane16,
  Lane8,
  Lane4,
  Lane2,
  MemArgLane8,
  MemArgLane16,
  MemArgLane32,
  MemArgLane64,
};

// Operand/result signatures of the simple instructions (legend in opcodes.def): the one list of
// them, from which come the enum and each signature's types (parsed from its name). The second
// group has v128 operands or results (V = v128): only the SIMD instructions use it.
#define SPRAWLING_OP_SIGNATURES(X) \
  X(v_v) X(v_i) X(v_l) X(v_f) X(v_d) X(i_i) X(i_l) X(i_f) X(i_d) X(l_i) X(l_l) X(l_f) X(l_d) X(f_i) \
  X(f_l) X(f_f) X(f_d) X(d_i) X(d_l) X(d_f) X(d_d) X(ii_i) X(ll_i) X(ll_l) X(ff_i) X(ff_f) X(dd_i) \
  X(dd_d) X(ii_v) X(il_v) X(if_v) X(id_v) X(iii_v) \
  X(v_V) X(i_V) X(l_V) X(f_V) X(d_V) X(V_i) X(V_l) X(V_f) X(V_d) X(V_V) X(VV_V) X(VVV_V) X(Vi_V) \
  X(Vl_V) X(Vf_V) X(Vd_V) X(iV_v) X(iV_V)
enum class OpSig : std::uint8_t {
  Special,
#define SPRAWLING_SIG_ENUMERATOR(s) s,
  SPRAWLING_OP_SIGNATURES(SPRAWLING_SIG_ENUMERATOR)
#undef SPRAWLING_SIG_ENUMERATOR
};

inline constexpr std::uint8_t kPrefixGc = 0xFB;
inline constexpr std::uint8_t kPrefixFC = 0xFC;
inline constexpr std::uint8_t kPrefixSimd = 0xFD;

// Enumerator value: the opcode byte, 0x100 + sub-opcode for the 0xFC-prefixed ones (below 0x80),
// 0x180 + sub-opcode for the 0xFB-prefixed (GC) ones, 0x200 + sub-opcode for the 0xFD-prefixed
// (SIMD) ones, so one 800-entry table covers the four spaces (relaxed SIMD's sub-opcodes
// 0x100-0x113 end at 0x313).
inline constexpr std::uint16_t kSimdBase = 0x200;
inline constexpr std::uint16_t kGcBase = 0x180;
enum class Opcode : std::uint16_t {
#define WASM_OPCODE(prefix, code, Name, text, imm, sig, fuel, trap, comm, family) Name = ((prefix) == 0xFC ? 0x100 : (prefix) == 0xFB ? kGcBase : 0) + (code),
#include "wasm/syntax/opcodes.def"
#undef WASM_OPCODE
#define WASM_SIMD_OPCODE(code, Name, text, imm, sig, fn) Name = kSimdBase + (code),
#include "wasm/syntax/simd_opcodes.def"
#include "wasm/syntax/relaxed_simd_opcodes.def"
#undef WASM_SIMD_OPCODE
};

inline constexpr std::uint32_t kRelaxedSimdFirst = 0x100;  // sub-opcodes 0x100.. are relaxed SIMD
inline constexpr std::uint32_t kSimdSubCount = 0x120;
inline constexpr std::size_t kOpcodeSpace = kSimdBase + kSimdSubCount;

// Which part of the validator and of the translator takes an instruction (the family column of
// opcodes.def; every SIMD row is Simd). Exception, TypedRef, Gc and Simd are also the features
// their instructions need.
enum class Family : std::uint8_t { Control, Call, Variable, Memory, Table, Numeric, Simd, Exception, TypedRef, Gc };

struct OpcodeInfo {
  std::string_view text;  // empty: no such opcode
  std::uint8_t prefix = 0;
  std::uint16_t code = 0;  // relaxed SIMD's sub-opcodes reach 0x113
  ImmKind imm = ImmKind::None;
  OpSig sig = OpSig::Special;
  std::uint8_t fuel = 0;
  bool can_trap = false;
  bool commutative = false;
  Family family = Family::Numeric;
};

namespace detail {
constexpr std::array<OpcodeInfo, kOpcodeSpace> make_opcode_table() {
  std::array<OpcodeInfo, kOpcodeSpace> table{};
#define SPRAWLING_OPCODE_FLAG_T true
#define SPRAWLING_OPCODE_FLAG_C true
#define SPRAWLING_OPCODE_FLAG__ false
#define WASM_OPCODE(prefix, code, Name, text, imm, sig, fuel, trap, comm, family)                            \
  table[static_cast<std::size_t>(Opcode::Name)] = OpcodeInfo{text, prefix, code, ImmKind::imm, OpSig::sig, fuel, \
                                                             SPRAWLING_OPCODE_FLAG_##trap, SPRAWLING_OPCODE_FLAG_##comm, \
                                                             Family::family};
#include "wasm/syntax/opcodes.def"
#undef WASM_OPCODE
#undef SPRAWLING_OPCODE_FLAG_T
#undef SPRAWLING_OPCODE_FLAG_C
#undef SPRAWLING_OPCODE_FLAG__
// SIMD rows: every one costs 1 fuel; those with a memory immediate can trap (out of bounds).
#define WASM_SIMD_OPCODE(code, Name, text, imm, sig, fn)                                                        \
  table[static_cast<std::size_t>(Opcode::Name)] =                                                          \
      OpcodeInfo{text, kPrefixSimd, code, ImmKind::imm, OpSig::sig, 1,                                      \
                 ImmKind::imm == ImmKind::MemArg8 || ImmKind::imm == ImmKind::MemArg16 ||                   \
                     ImmKind::imm == ImmKind::MemArg32 || ImmKind::imm == ImmKind::MemArg64 ||              \
                     ImmKind::imm == ImmKind::MemArg128 || ImmKind::imm == ImmKind::MemArgLane8 ||          \
                     ImmKind::imm == ImmKind::MemArgLane16 || ImmKind::imm == ImmKind::MemArgLane32 ||      \
                     ImmKind::imm == ImmKind::MemArgLane64,                                                 \
                 false, Family::Simd};
#include "wasm/syntax/simd_opcodes.def"
#include "wasm/syntax/relaxed_simd_opcodes.def"
#undef WASM_SIMD_OPCODE
  return table;
}
}  // namespace detail

inline constexpr std::array<OpcodeInfo, kOpcodeSpace> kOpcodeTable = detail::make_opcode_table();

[[nodiscard]] constexpr const OpcodeInfo& info(Opcode op) noexcept {
  return kOpcodeTable[static_cast<std::size_t>(op)];
}
[[nodiscard]] constexpr Family family(Opcode op) noexcept {
  return info(op).family;
}
// Whether the instruction opens a block that an `end` closes: block, loop, if, try and try_table
// (the instructions with a block type immediate).
[[nodiscard]] constexpr bool opens_block(Opcode op) noexcept {
  return info(op).imm == ImmKind::BlockType || info(op).imm == ImmKind::TryTable;
}
[[nodiscard]] constexpr std::string_view name(Opcode op) noexcept {
  return info(op).text;
}
[[nodiscard]] constexpr std::uint8_t fuel_cost(Opcode op) noexcept {
  return info(op).fuel;
}
[[nodiscard]] constexpr bool can_trap(Opcode op) noexcept {
  return info(op).can_trap;
}
[[nodiscard]] constexpr bool commutative(Opcode op) noexcept {
  return info(op).commutative;
}

// The opcode a single byte denotes (not 0xFC/0xFD themselves), if any.
[[nodiscard]] constexpr std::optional<Opcode> opcode_from_byte(std::uint8_t byte) noexcept {
  if (kOpcodeTable[byte].text.empty()) return std::nullopt;
  return static_cast<Opcode>(byte);
}
// The 0xFC-prefixed opcode with this sub-opcode, if any.
[[nodiscard]] constexpr std::optional<Opcode> opcode_from_fc(std::uint32_t sub) noexcept {
  if (sub >= kGcBase - 0x100 || kOpcodeTable[0x100 + sub].text.empty()) return std::nullopt;
  return static_cast<Opcode>(0x100 + sub);
}
// The 0xFB-prefixed (GC) opcode with this sub-opcode, if any.
[[nodiscard]] constexpr std::optional<Opcode> opcode_from_gc(std::uint32_t sub) noexcept {
  if (sub >= kSimdBase - kGcBase || kOpcodeTable[kGcBase + sub].text.empty()) return std::nullopt;
  return static_cast<Opcode>(kGcBase + sub);
}
// The 0xFD-prefixed (fixed-width or relaxed SIMD) opcode with this sub-opcode, if any.
[[nodiscard]] constexpr std::optional<Opcode> opcode_from_simd(std::uint32_t sub) noexcept {
  if (sub >= kSimdSubCount || kOpcodeTable[kSimdBase + sub].text.empty()) return std::nullopt;
  return static_cast<Opcode>(kSimdBase + sub);
}
// One of the 20 relaxed SIMD instructions (-W relaxed-simd).
[[nodiscard]] constexpr bool is_relaxed_simd(Opcode op) noexcept {
  return static_cast<std::uint16_t>(op) >= kSimdBase + kRelaxedSimdFirst;
}

// Largest valid memarg alignment exponent (log2 of the access width in bytes).
[[nodiscard]] constexpr std::optional<std::uint32_t> natural_alignment_log2(ImmKind imm) noexcept {
  switch (imm) {
    case ImmKind::MemArg8:
    case ImmKind::MemArgLane8: return 0;
    case ImmKind::MemArg16:
    case ImmKind::MemArgLane16: return 1;
    case ImmKind::MemArg32:
    case ImmKind::MemArgLane32: return 2;
    case ImmKind::MemArg64:
    case ImmKind::MemArgLane64: return 3;
    case ImmKind::MemArg128: return 4;
    default: return std::nullopt;
  }
}

// How many lanes a lane-index immediate may address (its index must be smaller); 0: none.
// i8x16.shuffle's indices select from two vectors, so they must be below 32.
[[nodiscard]] constexpr std::uint32_t lane_count(ImmKind imm) noexcept {
  switch (imm) {
    case ImmKind::Lane16:
    case ImmKind::MemArgLane8: return 16;
    case ImmKind::Lane8:
    case ImmKind::MemArgLane16: return 8;
    case ImmKind::Lane4:
    case ImmKind::MemArgLane32: return 4;
    case ImmKind::Lane2:
    case ImmKind::MemArgLane64: return 2;
    case ImmKind::Shuffle: return 32;
    default: return 0;
  }
}

// The operand and result types of a non-Special signature, in stack order (first = deepest).
struct SigTypes {
  std::uint8_t param_count = 0;
  std::array<ValType, 3> params{};
  std::uint8_t result_count = 0;
  ValType result = ValType::I32;
};

namespace detail {
constexpr ValType sig_letter(char c) {
  switch (c) {
    case 'i': return ValType::I32;
    case 'l': return ValType::I64;
    case 'f': return ValType::F32;
    case 'V': return ValType::V128;
    default: return ValType::F64;
  }
}
constexpr SigTypes parse_sig(std::string_view s) {
  SigTypes out{};
  const auto sep = s.find('_');
  const auto params = s.substr(0, sep);
  const auto results = s.substr(sep + 1);
  if (params != "v") {
    for (char c : params) out.params[out.param_count++] = sig_letter(c);
  }
  if (results != "v") {
    out.result_count = 1;
    out.result = sig_letter(results[0]);
  }
  return out;
}
}  // namespace detail

namespace detail {
constexpr SigTypes sig_types_slow(OpSig sig) {
  switch (sig) {
#define SPRAWLING_SIG_CASE(s) \
  case OpSig::s: return parse_sig(#s);
    SPRAWLING_OP_SIGNATURES(SPRAWLING_SIG_CASE)
#undef SPRAWLING_SIG_CASE
    case OpSig::Special: break;
  }
  return {};
}
#define SPRAWLING_SIG_ONE(s) +1
inline constexpr std::size_t kSigCount = 1 SPRAWLING_OP_SIGNATURES(SPRAWLING_SIG_ONE);  // Special and the list
#undef SPRAWLING_SIG_ONE
// Parsed once at compile time: the validator looks signatures up for every simple instruction.
inline constexpr std::array<SigTypes, kSigCount> kSigTable = [] {
  std::array<SigTypes, kSigCount> table{};
  for (std::size_t i = 0; i < kSigCount; ++i) table[i] = sig_types_slow(static_cast<OpSig>(i));
  return table;
}();
}  // namespace detail

// Precondition: sig != OpSig::Special (which yields no types).
[[nodiscard]] constexpr const SigTypes& sig_types(OpSig sig) noexcept {
  return detail::kSigTable[static_cast<std::size_t>(sig)];
}

static_assert(static_cast<std::uint16_t>(Opcode::I32Add) == 0x6A);
static_assert(static_cast<std::uint16_t>(Opcode::TableFill) == 0x111);
static_assert(sig_types(OpSig::il_v).params[1] == ValType::I64);
static_assert(fuel_cost(Opcode::Block) == 0 && fuel_cost(Opcode::If) == 1);
static_assert(can_trap(Opcode::I32DivS) && !can_trap(Opcode::I32Add) && commutative(Opcode::I64Xor));
static_assert(static_cast<std::uint16_t>(Opcode::F64x2ConvertLowI32x4U) == kSimdBase + 0xFF);
static_assert(sig_types(OpSig::VVV_V).param_count == 3 && sig_types(OpSig::VVV_V).result == ValType::V128);
static_assert(sig_types(OpSig::iV_v).params[1] == ValType::V128 && sig_types(OpSig::iV_v).result_count == 0);
static_assert(can_trap(Opcode::V128Load) && !can_trap(Opcode::I8x16Add));
// simd_opcodes.def holds exactly the 236 fixed-width SIMD instructions, relaxed_simd_opcodes.def
// the 20 relaxed ones.
static_assert(std::count_if(kOpcodeTable.begin() + kSimdBase, kOpcodeTable.begin() + kSimdBase + kRelaxedSimdFirst,
                            [](const OpcodeInfo& oi) { return !oi.text.empty(); }) == 236);
static_assert(std::count_if(kOpcodeTable.begin() + kSimdBase + kRelaxedSimdFirst, kOpcodeTable.end(),
                            [](const OpcodeInfo& oi) { return !oi.text.empty(); }) == 20);
static_assert(is_relaxed_simd(Opcode::I32x4RelaxedDotI8x16I7x16AddS) && !is_relaxed_simd(Opcode::F64x2ConvertLowI32x4U));
static_assert(opens_block(Opcode::Loop) && opens_block(Opcode::Try) && opens_block(Opcode::TryTable) &&
              !opens_block(Opcode::Else) && !opens_block(Opcode::Catch) && !opens_block(Opcode::Delegate));
// The family column agrees with the opcode spaces: Gc is the 0xFB space and ref.eq, Simd the 0xFD one.
static_assert([] {
  for (std::size_t i = 0; i < kOpcodeSpace; ++i) {
    if (kOpcodeTable[i].text.empty()) continue;
    const auto op = static_cast<Opcode>(i);
    if ((kOpcodeTable[i].family == Family::Gc) != ((i >= kGcBase && i < kSimdBase) || op == Opcode::RefEq)) return false;
    if ((kOpcodeTable[i].family == Family::Simd) != (i >= kSimdBase)) return false;
  }
  return true;
}());

}  // namespace sprawling::wasm
