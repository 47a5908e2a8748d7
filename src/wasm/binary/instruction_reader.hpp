// The one instruction reader of the engine: decodes an instruction's opcode and immediates at a
// ByteReader's cursor into an Instruction, which the validator checks and the translator follows.
#pragma once

#include "wasm/binary/byte_reader.hpp"
#include "wasm/binary/decoder.hpp"
#include "wasm/syntax/opcodes.hpp"
#include "wasm/syntax/types.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sprawling::wasm {

// https://webassembly.github.io/spec/core/binary/instructions.html#control-instructions (blocktype)
struct BlockType {
  enum class Kind : std::uint8_t { Empty, Value, Index };
  Kind kind = Kind::Empty;
  ValType type = ValType::I32;  // Kind::Value
  std::uint32_t index = 0;      // Kind::Index: a typeidx
};

// One decoded instruction. Which fields are meaningful follows info(op).imm (opcodes.def).
struct Instruction {
  Opcode op = Opcode::Nop;
  std::size_t offset = 0;                  // byte offset of the opcode (of the 0xFC prefix for prefixed ones)
  std::uint32_t index = 0;                 // labelidx, funcidx, typeidx (call_indirect), localidx, globalidx,
                                           // tableidx (table.*; destination of table.copy), dataidx, elemidx,
                                           // br_table's default label
  std::uint32_t index2 = 0;                // call_indirect / table.init: tableidx; table.copy: source tableidx;
                                           // GC: the field index, array.new_fixed's count, the data or
                                           // elem index, array.copy's source typeidx
  std::uint32_t align = 0;                 // memarg alignment exponent
  std::uint64_t mem_offset = 0;            // memarg offset (u64 with memory64; below 2^32 for i32 memories)
  std::uint32_t memory = 0;                // memidx: of a memarg, memory.size/grow/fill/init, memory.copy's destination
  std::uint32_t memory2 = 0;               // memory.copy's source memidx
  std::uint64_t bits = 0;                  // the constant's bit pattern (i32/f32 zero-extended to 64 bits)
  BlockType block;                         // block, loop, if
  ValType type = ValType::I32;             // select t (the one result type), ref.null (ref null ht); GC:
                                           // ref.test/ref.cast's type, br_on_cast's source type
  ValType type2 = ValType::I32;            // br_on_cast / br_on_cast_fail: the target type
  std::uint32_t select_arity = 0;          // select t: how many types the vector held (valid only if 1)
  std::span<const std::uint32_t> targets;  // br_table labels, default excluded; try_table: its catch clauses
                                           // as (kind, tagidx, labelidx) triples (storage: the reader's)
  std::uint8_t lane = 0;                   // extract/replace_lane, load/store*_lane: the lane index
  std::array<std::uint8_t, 16> v128{};     // v128.const: the bytes (lane 0 first); i8x16.shuffle: lane indices
};

// try_table catch clause kinds (the binary encoding).
inline constexpr std::uint32_t kCatch = 0;
inline constexpr std::uint32_t kCatchRef = 1;
inline constexpr std::uint32_t kCatchAll = 2;
inline constexpr std::uint32_t kCatchAllRef = 3;


// Typed function references: a value type (a one-byte type, or 0x63/0x64 then a heap type) and a
// heap type (an abstract one's byte, or a type index as a non-negative s33). Malformed encodings
// are reported to the reader; a type index is not checked against the module (the caller says
// "unknown type"). Without `features.function_references` only the 2.0 one-byte types (and
// exnref) are read. GC's heap types need `features.gc`.
bool read_valtype(ByteReader& reader, ValType& out, const Features& features);
bool read_heaptype(ByteReader& reader, std::uint32_t& heap, const Features& features);


// Decodes one instruction at the reader's cursor. Reports malformed encodings to the reader
// ("illegal opcode", "zero byte expected", LEB errors…) and returns
// false; `scratch` holds br_table targets until the next call. `features` picks the encoding of
// memory immediates: with multi-memory a memarg's alignment bit 6 announces a memidx and the
// memory.* instructions carry memidx LEBs (2.0: zero bytes); with memory64 (or multi-memory) a
// memarg's offset is a u64 LEB (2.0: u32).
bool read_instruction(ByteReader& reader, Instruction& out, std::vector<std::uint32_t>& scratch,
                      const Features& features = {});

}  // namespace sprawling::wasm
