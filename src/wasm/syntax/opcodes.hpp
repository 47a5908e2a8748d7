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

// Operand/result signature of the simple instructions (legend in opcodes.def).
enum class OpSig : std::uint8_t {
  Special,
  v_v,
  v_i,
  v_l,
  v_f,
  v_d,
  i_i,
  i_l,
  i_f,
  i_d,
  l_i,
  l_l,
  l_f,
  l_d,
  f_i,
  f_l,
  f_f,
  f_d,
  d_i,
  d_l,
  d_f,
  d_d,
  ii_i,
  ll_i,
  ll_l,
  ff_i,
  ff_f,
  dd_i,
  dd_d,
  ii_v,
  il_v,
  if_v,
  id_v,
  iii_v,
  // With v128 operands or results (V = v128); only the SIMD instructions use these.
  v_V,
  i_V,
  l_V,
  f_V,
  d_V,
  V_i,
  V_l,
  V_f,
  V_d,
  V_V,
  VV_V,
  VVV_V,
  Vi_V,
  Vl_V,
  Vf_V,
  Vd_V,
  iV_v,
  iV_V,
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
#define WASM_OPCODE(prefix, code, Name, text, imm, sig, fuel, trap, comm) Name = ((prefix) == 0xFC ? 0x100 : (prefix) == 0xFB ? kGcBase : 0) + (code),
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

struct OpcodeInfo {
  std::string_view text;  // empty: no such opcode
  std::uint8_t prefix = 0;
  std::uint16_t code = 0;  // relaxed SIMD's sub-opcodes reach 0x113
  ImmKind imm = ImmKind::None;
  OpSig sig = OpSig::Special;
  std::uint8_t fuel = 0;
  bool can_trap = false;
  bool commutative = false;
};

namespace detail {
constexpr std::array<OpcodeInfo, kOpcodeSpace> make_opcode_table() {
  std::array<OpcodeInfo, kOpcodeSpace> table{};
#define SPRAWLING_OPCODE_FLAG_T true
#define SPRAWLING_OPCODE_FLAG_C true
#define SPRAWLING_OPCODE_FLAG__ false
#define WASM_OPCODE(prefix, code, Name, text, imm, sig, fuel, trap, comm)                                    \
  table[static_cast<std::size_t>(Opcode::Name)] = OpcodeInfo{text, prefix, code, ImmKind::imm, OpSig::sig, fuel, \
                                                             SPRAWLING_OPCODE_FLAG_##trap, SPRAWLING_OPCODE_FLAG_##comm};
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
                 false};
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
// A garbage-collection instruction (-W gc): the 0xFB space and ref.eq.
[[nodiscard]] constexpr bool is_gc_op(Opcode op) noexcept {
  const auto v = static_cast<std::uint16_t>(op);
  return (v >= kGcBase && v < kSimdBase) || op == Opcode::RefEq;
}
// The 0xFD-prefixed (fixed-width or relaxed SIMD) opcode with this sub-opcode, if any.
[[nodiscard]] constexpr std::optional<Opcode> opcode_from_simd(std::uint32_t sub) noexcept {
  if (sub >= kSimdSubCount || kOpcodeTable[kSimdBase + sub].text.empty()) return std::nullopt;
  return static_cast<Opcode>(kSimdBase + sub);
}
[[nodiscard]] constexpr bool is_simd(Opcode op) noexcept {
  return static_cast<std::uint16_t>(op) >= kSimdBase;
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
    SPRAWLING_SIG_CASE(v_v)
    SPRAWLING_SIG_CASE(v_i) SPRAWLING_SIG_CASE(v_l) SPRAWLING_SIG_CASE(v_f) SPRAWLING_SIG_CASE(v_d)
        SPRAWLING_SIG_CASE(i_i) SPRAWLING_SIG_CASE(i_l) SPRAWLING_SIG_CASE(i_f) SPRAWLING_SIG_CASE(i_d)
            SPRAWLING_SIG_CASE(l_i) SPRAWLING_SIG_CASE(l_l) SPRAWLING_SIG_CASE(l_f) SPRAWLING_SIG_CASE(l_d)
                SPRAWLING_SIG_CASE(f_i) SPRAWLING_SIG_CASE(f_l) SPRAWLING_SIG_CASE(f_f) SPRAWLING_SIG_CASE(f_d)
                    SPRAWLING_SIG_CASE(d_i) SPRAWLING_SIG_CASE(d_l) SPRAWLING_SIG_CASE(d_f) SPRAWLING_SIG_CASE(d_d)
                        SPRAWLING_SIG_CASE(ii_i) SPRAWLING_SIG_CASE(ll_i) SPRAWLING_SIG_CASE(ll_l)
                            SPRAWLING_SIG_CASE(ff_i) SPRAWLING_SIG_CASE(ff_f) SPRAWLING_SIG_CASE(dd_i)
                                SPRAWLING_SIG_CASE(dd_d) SPRAWLING_SIG_CASE(ii_v) SPRAWLING_SIG_CASE(il_v)
                                    SPRAWLING_SIG_CASE(if_v) SPRAWLING_SIG_CASE(id_v) SPRAWLING_SIG_CASE(iii_v)
                                        SPRAWLING_SIG_CASE(v_V) SPRAWLING_SIG_CASE(i_V) SPRAWLING_SIG_CASE(l_V)
                                            SPRAWLING_SIG_CASE(f_V) SPRAWLING_SIG_CASE(d_V) SPRAWLING_SIG_CASE(V_i)
                                                SPRAWLING_SIG_CASE(V_l) SPRAWLING_SIG_CASE(V_f) SPRAWLING_SIG_CASE(V_d)
                                                    SPRAWLING_SIG_CASE(V_V) SPRAWLING_SIG_CASE(VV_V)
                                                        SPRAWLING_SIG_CASE(VVV_V) SPRAWLING_SIG_CASE(Vi_V)
                                                            SPRAWLING_SIG_CASE(Vl_V) SPRAWLING_SIG_CASE(Vf_V)
                                                                SPRAWLING_SIG_CASE(Vd_V) SPRAWLING_SIG_CASE(iV_v)
                                                                    SPRAWLING_SIG_CASE(iV_V)
#undef SPRAWLING_SIG_CASE
                                        case OpSig::Special : break;
  }
  return {};
}
inline constexpr std::size_t kSigCount = static_cast<std::size_t>(OpSig::iV_V) + 1;
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

}  // namespace sprawling::wasm
