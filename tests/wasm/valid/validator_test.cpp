// Instruction decoding and the FunctionValidator driven one instruction at a time (the way a
// translator uses it), plus constant expressions.
#include "wasm/valid/validator.hpp"

#include "wasm/text/wat.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace sprawling::wasm {
namespace {

using Bytes = std::vector<std::uint8_t>;

// A module context with the given types, functions (type indices), one memory and one funcref table.
struct Fixture {
  Module module;
  ValidationContext context;
  Fixture() {
    module.types = {FuncType{{}, {}}, FuncType{{ValType::I32}, {ValType::I32}},
                    FuncType{{ValType::I32, ValType::I64}, {ValType::I64, ValType::I32}}};
    module.func_types = {0, 1};
    module.memories = {MemoryType{Limits{1, std::nullopt}}};
    module.tables = {TableType{ValType::FuncRef, Limits{1, std::nullopt}}};
    module.globals = {GlobalType{ValType::I32, false}, GlobalType{ValType::I64, true}};
    module.imported_globals = 1;
    context.module = &module;
    context.declared_refs = {false, true};
  }

  // Validates `code` (instructions up to the function's final end) as a function of `type`.
  std::optional<CompileError> run(std::uint32_t type, const Bytes& code, std::vector<ValType> locals = {},
                                  std::uint32_t* max_height = nullptr) {
    FunctionValidator v(context);
    v.begin(type, locals);
    ByteReader r(code);
    Instruction ins;
    std::vector<std::uint32_t> scratch;
    while (!v.done()) {
      if (!read_instruction(r, ins, scratch)) return r.error();
      if (auto e = v.step(ins)) return e;
    }
    if (max_height) *max_height = v.max_stack_height();
    EXPECT_TRUE(r.at_end()) << "instructions after the final end";
    return std::nullopt;
  }
};

std::string message(const std::optional<CompileError>& e) {
  return e ? e->message : "(valid)";
}

TEST(ReadInstruction, ImmediatesAreDecoded) {
  const Bytes code = {0x28, 0x02, 0x10,              // i32.load align=2 offset=16
                      0x0E, 0x02, 0x00, 0x01, 0x02,  // br_table 0 1 (default 2)
                      0xFC, 0x0E, 0x03, 0x04,        // table.copy 3 4
                      0x41, 0x7F,                    // i32.const -1
                      0x1C, 0x01, 0x7E};             // select (result i64)
  ByteReader r(code);
  Instruction ins;
  std::vector<std::uint32_t> scratch;
  ASSERT_TRUE(read_instruction(r, ins, scratch));
  EXPECT_EQ(ins.op, Opcode::I32Load);
  EXPECT_EQ(ins.align, 2u);
  EXPECT_EQ(ins.mem_offset, 16u);
  ASSERT_TRUE(read_instruction(r, ins, scratch));
  EXPECT_EQ(ins.op, Opcode::BrTable);
  EXPECT_EQ(std::vector<std::uint32_t>(ins.targets.begin(), ins.targets.end()), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(ins.index, 2u);
  ASSERT_TRUE(read_instruction(r, ins, scratch));
  EXPECT_EQ(ins.op, Opcode::TableCopy);
  EXPECT_EQ(ins.offset, 8u);
  EXPECT_EQ(ins.index, 3u);
  EXPECT_EQ(ins.index2, 4u);
  ASSERT_TRUE(read_instruction(r, ins, scratch));
  EXPECT_EQ(ins.bits, 0xFFFF'FFFFu);
  ASSERT_TRUE(read_instruction(r, ins, scratch));
  EXPECT_EQ(ins.op, Opcode::SelectT);
  EXPECT_EQ(ins.type, ValType::I64);
  EXPECT_EQ(ins.select_arity, 1u);
}

TEST(ReadInstruction, MalformedEncodings) {
  std::vector<std::uint32_t> scratch;
  Instruction ins;
  {
    const Bytes code = {0x01, 0x27};  // 0x27: no instruction (0x06 is exception handling's try)
    ByteReader r(code);
    EXPECT_TRUE(read_instruction(r, ins, scratch));
    EXPECT_FALSE(read_instruction(r, ins, scratch));
    EXPECT_EQ(r.error()->message, "illegal opcode 27");
    EXPECT_EQ(r.error()->offset, 1u);
  }
  {
    const Bytes code = {0x3F, 0x01};  // memory.size with a non-zero memory byte (2.0: no memidx)
    ByteReader r(code);
    EXPECT_FALSE(read_instruction(r, ins, scratch, Features::wasm2()));
    EXPECT_EQ(r.error()->message, "zero byte expected");
    EXPECT_EQ(r.error()->offset, 1u);
  }
  {
    const Bytes code = {0xFD, 0xA2, 0x01};  // an unassigned SIMD opcode
    ByteReader r(code);
    EXPECT_FALSE(read_instruction(r, ins, scratch));
    EXPECT_EQ(r.error()->message, "illegal opcode fd a2");
    EXPECT_EQ(r.error()->offset, 0u);
  }
  {
    const Bytes code = {0xFD, 0x0D, 0x00, 0x01};  // i8x16.shuffle cut short
    ByteReader r(code);
    EXPECT_FALSE(read_instruction(r, ins, scratch));
  }
  {
    const Bytes code = {0xFC, 0x12};  // past table.fill
    ByteReader r(code);
    EXPECT_FALSE(read_instruction(r, ins, scratch));
    EXPECT_EQ(r.error()->message.rfind("illegal opcode", 0), 0u);
  }
}

TEST(ReadInstruction, SimdImmediatesAreDecoded) {
  Instruction ins;
  std::vector<std::uint32_t> scratch;
  // v128.load8_lane align=0 offset=5 lane 3; i16x8.extract_lane_u 7; v128.const; (block (result v128))
  Bytes code = {0xFD, 0x54, 0x00, 0x05, 0x03, 0xFD, 0x19, 0x07, 0xFD, 0x0C};
  for (std::uint8_t i = 0; i < 16; ++i) code.push_back(static_cast<std::uint8_t>(0xF0 + i));
  code.insert(code.end(), {0x02, 0x7B});
  ByteReader r(code);
  ASSERT_TRUE(read_instruction(r, ins, scratch));
  EXPECT_EQ(ins.op, Opcode::V128Load8Lane);
  EXPECT_EQ(ins.align, 0u);
  EXPECT_EQ(ins.mem_offset, 5u);
  EXPECT_EQ(ins.lane, 3u);
  ASSERT_TRUE(read_instruction(r, ins, scratch));
  EXPECT_EQ(ins.op, Opcode::I16x8ExtractLaneU);
  EXPECT_EQ(ins.lane, 7u);
  ASSERT_TRUE(read_instruction(r, ins, scratch));
  EXPECT_EQ(ins.op, Opcode::V128Const);
  EXPECT_EQ(ins.v128[0], 0xF0u);
  EXPECT_EQ(ins.v128[15], 0xFFu);
  ASSERT_TRUE(read_instruction(r, ins, scratch));
  EXPECT_EQ(ins.block.kind, BlockType::Kind::Value);
  EXPECT_EQ(ins.block.type, ValType::V128);
  EXPECT_TRUE(r.at_end());
}

// A v128 operand: v128.const 0.
Bytes v128_zero() {
  Bytes b = {0xFD, 0x0C};
  b.insert(b.end(), 16, 0x00);
  return b;
}
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(FunctionValidator, SimdTyping) {
  Fixture f;
  const Bytes v = v128_zero();
  // i32x4.add [v128 v128] -> [v128]; v128.any_true [v128] -> [i32]
  EXPECT_EQ(message(f.run(1, cat({v, v, {0xFD, 0xAE, 0x01, 0xFD, 0x53, 0x0B}}))), "(valid)");
  // v128.bitselect takes three v128s
  EXPECT_EQ(message(f.run(0, cat({v, v, v, {0xFD, 0x52, 0x1A, 0x0B}}))), "(valid)");
  EXPECT_EQ(message(f.run(0, cat({v, v, {0xFD, 0x52, 0x1A, 0x0B}}))), "type mismatch: instruction requires [v128] but stack has []");
  // i8x16.shl [v128 i32] -> [v128]
  EXPECT_EQ(message(f.run(0, cat({v, {0x41, 0x01, 0xFD, 0x6B, 0x1A, 0x0B}}))), "(valid)");
  EXPECT_EQ(message(f.run(0, cat({v, v, {0xFD, 0x6B, 0x1A, 0x0B}}))), "type mismatch: instruction requires [i32] but stack has [v128]");
  // i64x2.splat wants an i64; f64x2.extract_lane gives an f64
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0xFD, 0x12, 0x1A, 0x0B})), "type mismatch: instruction requires [i64] but stack has [i32]");
  EXPECT_EQ(message(f.run(0, cat({v, {0xFD, 0x21, 0x01, 0x1A, 0x0B}}))), "(valid)");
  // v128.store [i32 v128] -> []
  EXPECT_EQ(message(f.run(0, cat({{0x41, 0x00}, v, {0xFD, 0x0B, 0x04, 0x00, 0x0B}}))), "(valid)");
  // untyped select accepts v128 (a vector type), not references
  EXPECT_EQ(message(f.run(0, cat({v, v, {0x41, 0x00, 0x1B, 0x1A, 0x0B}}))), "(valid)");
  // local of type v128
  EXPECT_EQ(message(f.run(0, {0x20, 0x00, 0xFD, 0x63, 0x1A, 0x0B}, {ValType::V128})), "(valid)");
}

TEST(FunctionValidator, SimdLaneAndAlignmentRules) {
  Fixture f;
  const Bytes v = v128_zero();
  // i32x4.extract_lane 3 is the last lane; 4 is invalid
  EXPECT_EQ(message(f.run(0, cat({v, {0xFD, 0x1B, 0x03, 0x1A, 0x0B}}))), "(valid)");
  EXPECT_EQ(message(f.run(0, cat({v, {0xFD, 0x1B, 0x04, 0x1A, 0x0B}}))),
            "invalid lane index 4: i32x4.extract_lane has 4 lanes");
  // v128.load64_lane lane 2 is invalid (two 64-bit lanes)
  EXPECT_EQ(message(f.run(0, cat({{0x41, 0x00}, v, {0xFD, 0x57, 0x03, 0x00, 0x02, 0x1A, 0x0B}}))),
            "invalid lane index 2: v128.load64_lane has 2 lanes");
  // i8x16.shuffle lanes index two vectors: 31 is fine, 32 is not
  Bytes shuffle = cat({v, v, {0xFD, 0x0D}});
  shuffle.insert(shuffle.end(), 15, 0x00);
  Bytes ok = shuffle;
  ok.insert(ok.end(), {31, 0x1A, 0x0B});
  EXPECT_EQ(message(f.run(0, ok)), "(valid)");
  shuffle.insert(shuffle.end(), {32, 0x1A, 0x0B});
  EXPECT_EQ(message(f.run(0, shuffle)), "invalid lane index 32: i8x16.shuffle lanes must be below 32");
  // v128.load: natural alignment 2^4; v128.load8_splat: 2^0; v128.load32_lane: 2^2
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0xFD, 0x00, 0x04, 0x00, 0x1A, 0x0B})), "(valid)");
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0xFD, 0x00, 0x05, 0x00, 0x1A, 0x0B})),
            "alignment must not be larger than natural");
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0xFD, 0x07, 0x01, 0x00, 0x1A, 0x0B})),
            "alignment must not be larger than natural");
  EXPECT_EQ(message(f.run(0, cat({{0x41, 0x00}, v, {0xFD, 0x56, 0x03, 0x00, 0x00, 0x1A, 0x0B}}))),
            "alignment must not be larger than natural");
}

TEST(FunctionValidator, SimdMemoryOpsNeedAMemory) {
  Fixture f;
  f.module.memories.clear();
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0xFD, 0x00, 0x04, 0x00, 0x1A, 0x0B})), "unknown memory 0");
}

TEST(FunctionValidator, StackHeightAndResults) {
  Fixture f;
  std::uint32_t height = 0;
  // (func (param i32) (result i32) local.get 0 i32.const 1 i32.const 2 i32.add i32.add)
  EXPECT_EQ(message(f.run(1, {0x20, 0x00, 0x41, 0x01, 0x41, 0x02, 0x6A, 0x6A, 0x0B}, {}, &height)), "(valid)");
  EXPECT_EQ(height, 3u);
}

TEST(FunctionValidator, TypeMismatchOffsets) {
  Fixture f;
  // i32.const 0, i64.const 0, i32.add → mismatch at the i32.add (offset 4)
  const auto e = f.run(0, {0x41, 0x00, 0x42, 0x00, 0x6A, 0x1A, 0x0B});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, CompileError::Kind::Invalid);
  EXPECT_EQ(e->message, "type mismatch: instruction requires [i32] but stack has [i64]");
  EXPECT_EQ(e->offset, 4u);
  EXPECT_EQ(message(f.run(0, {0x6A, 0x0B})).rfind("type mismatch", 0), 0u);
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x0B})).rfind("type mismatch", 0), 0u);  // value left over
}

TEST(FunctionValidator, UnreachableMakesTheStackPolymorphic) {
  Fixture f;
  EXPECT_EQ(message(f.run(0, {0x00, 0x6A, 0x1A, 0x0B})), "(valid)");  // unreachable i32.add drop
  EXPECT_EQ(message(f.run(1, {0x00, 0x0B})), "(valid)");              // result from nowhere
  EXPECT_EQ(message(f.run(0, {0x00, 0x42, 0x00, 0x6A, 0x1A, 0x0B})).rfind("type mismatch", 0), 0u);  // known i64
  // br_table in dead code to labels of different types but equal arity.
  // block (result i32) block (result i64) unreachable br_table 0 1 end drop i32.const 0 end drop
  EXPECT_EQ(message(f.run(
                0, {0x02, 0x7F, 0x02, 0x7E, 0x00, 0x0E, 0x01, 0x00, 0x01, 0x0B, 0x1A, 0x41, 0x00, 0x0B, 0x1A, 0x0B})),
            "(valid)");
}

TEST(FunctionValidator, Labels) {
  Fixture f;
  EXPECT_EQ(message(f.run(0, {0x0C, 0x01, 0x0B})), "unknown label 1");
  // block (result i32) i32.const 1 br_if 0 … needs the value as well as the condition
  EXPECT_EQ(message(f.run(0, {0x02, 0x7F, 0x41, 0x01, 0x0D, 0x00, 0x0B, 0x1A, 0x0B})).rfind("type mismatch", 0), 0u);
  // loop labels take the loop's parameters: (type 1) loop (param i32) (result i32) br 0 end
  EXPECT_EQ(message(f.run(1, {0x20, 0x00, 0x03, 0x01, 0x0C, 0x00, 0x0B, 0x0B})), "(valid)");
  // br_table arity mismatch: block block (result i32) … br_table 0 1
  EXPECT_EQ(message(f.run(0, {0x02, 0x40, 0x02, 0x7F, 0x41, 0x00, 0x41, 0x00, 0x0E, 0x01, 0x00, 0x01, 0x0B, 0x1A, 0x0B,
                              0x0B}))
                .rfind("type mismatch", 0),
            0u);
}

TEST(FunctionValidator, MultiValueBlocksAndIf) {
  Fixture f;
  // (type 2) = [i32 i64] -> [i64 i32]: local.get 1 local.get 0 (block (type 0)) end
  EXPECT_EQ(message(f.run(2, {0x20, 0x01, 0x20, 0x00, 0x0B})), "(valid)");
  // if without else must not change the types: i32.const 1 if (result i32) i32.const 2 end drop
  EXPECT_EQ(message(f.run(0, {0x41, 0x01, 0x04, 0x7F, 0x41, 0x02, 0x0B, 0x1A, 0x0B})).rfind("type mismatch", 0), 0u);
  // with else: fine
  EXPECT_EQ(message(f.run(0, {0x41, 0x01, 0x04, 0x7F, 0x41, 0x02, 0x05, 0x41, 0x03, 0x0B, 0x1A, 0x0B})), "(valid)");
  // unknown block type index
  EXPECT_EQ(message(f.run(0, {0x02, 0x09, 0x0B, 0x0B})), "unknown type 9");
}

TEST(FunctionValidator, Select) {
  Fixture f;
  EXPECT_EQ(message(f.run(0, {0x41, 0x01, 0x41, 0x02, 0x41, 0x00, 0x1B, 0x1A, 0x0B})), "(valid)");
  EXPECT_EQ(message(f.run(0, {0x41, 0x01, 0x42, 0x02, 0x41, 0x00, 0x1B, 0x1A, 0x0B})).rfind("type mismatch", 0), 0u);
  // untyped select on references is refused; the typed form accepts them
  EXPECT_EQ(message(f.run(0, {0xD0, 0x70, 0xD0, 0x70, 0x41, 0x00, 0x1B, 0x1A, 0x0B})).rfind("type mismatch", 0), 0u);
  EXPECT_EQ(message(f.run(0, {0xD0, 0x70, 0xD0, 0x70, 0x41, 0x00, 0x1C, 0x01, 0x70, 0x1A, 0x0B})), "(valid)");
  EXPECT_EQ(message(f.run(0, {0x41, 0x01, 0x41, 0x02, 0x41, 0x00, 0x1C, 0x02, 0x7F, 0x7F, 0x1A, 0x0B})),
            "invalid result arity");
}

TEST(FunctionValidator, IndexSpaces) {
  Fixture f;
  EXPECT_EQ(message(f.run(0, {0x20, 0x02, 0x1A, 0x0B}, {ValType::I32, ValType::I64})), "unknown local 2");
  EXPECT_EQ(message(f.run(0, {0x20, 0x01, 0x1A, 0x0B}, {ValType::I32, ValType::I64})), "(valid)");
  EXPECT_EQ(message(f.run(0, {0x10, 0x05, 0x0B})), "unknown function 5");
  // 3.0's wording ("immutable global"), 2.0's when validating as 2.0.
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x24, 0x00, 0x0B})).rfind("immutable global", 0), 0u);
  f.context.features = Features::wasm2();
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x24, 0x00, 0x0B})).rfind("global is immutable", 0), 0u);
  f.context.features = Features{};
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0x24, 0x01, 0x0B})), "(valid)");
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x25, 0x01, 0x1A, 0x0B})), "unknown table 1");
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x28, 0x03, 0x00, 0x1A, 0x0B})), "alignment must not be larger than natural");
  EXPECT_EQ(message(f.run(0, {0xFC, 0x09, 0x00, 0x0B})), "unknown data segment 0");
  EXPECT_EQ(message(f.run(0, {0xFC, 0x0D, 0x00, 0x0B})), "unknown elem segment 0");
  // ref.func: function 1 is declared (exported, say), function 0 is not
  EXPECT_EQ(message(f.run(0, {0xD2, 0x01, 0x1A, 0x0B})), "(valid)");
  EXPECT_EQ(message(f.run(0, {0xD2, 0x00, 0x1A, 0x0B})).rfind("undeclared function reference", 0), 0u);
  // call_indirect (type 1) through table 0
  EXPECT_EQ(message(f.run(0, {0x41, 0x07, 0x41, 0x00, 0x11, 0x01, 0x00, 0x1A, 0x0B})), "(valid)");
}

TEST(FunctionValidator, Table64OperandsHaveTheTablesAddressType) {
  Fixture f;
  // Table 0 i32, table 1 a 64-bit funcref table.
  f.module.tables.push_back(TableType{ValType::FuncRef, Limits{1, std::nullopt, true}});
  f.module.elements.push_back(ElementSegment{});
  const std::string ok = "(valid)";
  // table.get/set/fill take i64 indexes and lengths; an i32 one is a type mismatch.
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0x25, 0x01, 0x1A, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x25, 0x01, 0x1A, 0x0B})).rfind("type mismatch", 0), 0u);
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0xD0, 0x70, 0x26, 0x01, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0xD0, 0x70, 0x42, 0x01, 0xFC, 0x11, 0x01, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0xD0, 0x70, 0x41, 0x01, 0xFC, 0x11, 0x01, 0x0B})).rfind("type mismatch", 0), 0u);
  // table.size and table.grow return i64 (an i64.eqz accepts it, i32.eqz does not).
  EXPECT_EQ(message(f.run(0, {0xFC, 0x10, 0x01, 0x50, 0x1A, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0xFC, 0x10, 0x01, 0x45, 0x1A, 0x0B})).rfind("type mismatch", 0), 0u);
  EXPECT_EQ(message(f.run(0, {0xD0, 0x70, 0x42, 0x01, 0xFC, 0x0F, 0x01, 0x50, 0x1A, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0xD0, 0x70, 0x42, 0x01, 0xFC, 0x0F, 0x00, 0x50, 0x1A, 0x0B})).rfind("type mismatch", 0), 0u);
  // table.init 0 1: an i64 destination, an i32 source offset and length (the segment's).
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0x41, 0x00, 0x41, 0x00, 0xFC, 0x0C, 0x00, 0x01, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0x42, 0x00, 0x41, 0x00, 0xFC, 0x0C, 0x00, 0x01, 0x0B})).rfind("type mismatch", 0), 0u);
  // table.copy: each side its table's type, the length the smaller one (i32 when mixed).
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0x42, 0x00, 0x42, 0x00, 0xFC, 0x0E, 0x01, 0x01, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0x41, 0x00, 0x41, 0x00, 0xFC, 0x0E, 0x01, 0x00, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x42, 0x00, 0x41, 0x00, 0xFC, 0x0E, 0x00, 0x01, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0x42, 0x00, 0x41, 0x00, 0x42, 0x00, 0xFC, 0x0E, 0x01, 0x00, 0x0B})).rfind("type mismatch", 0), 0u);
  // call_indirect and return_call_indirect (type 1) through table 1 take an i64 index.
  EXPECT_EQ(message(f.run(0, {0x41, 0x07, 0x42, 0x00, 0x11, 0x01, 0x01, 0x1A, 0x0B})), ok);
  EXPECT_EQ(message(f.run(0, {0x41, 0x07, 0x41, 0x00, 0x11, 0x01, 0x01, 0x1A, 0x0B})).rfind("type mismatch", 0), 0u);
  EXPECT_EQ(message(f.run(1, {0x20, 0x00, 0x42, 0x00, 0x13, 0x01, 0x01, 0x0B})), ok);
}

TEST(FunctionValidator, MemoryOpsNeedAMemory) {
  Fixture f;
  f.module.memories.clear();
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x28, 0x02, 0x00, 0x1A, 0x0B})), "unknown memory 0");
  EXPECT_EQ(message(f.run(0, {0x3F, 0x00, 0x1A, 0x0B})), "unknown memory 0");
}

TEST(FunctionValidator, TailCalls) {
  Fixture f;
  // Function 1 is [i32] -> [i32]: a tail call from a function of the same results is valid and
  // ends the code (unreachable after it), from a function of other results a type mismatch.
  EXPECT_EQ(message(f.run(1, {0x20, 0x00, 0x12, 0x01, 0x0B})), "(valid)");
  EXPECT_EQ(message(f.run(1, {0x20, 0x00, 0x12, 0x01, 0x1A, 0x1A, 0x0B})), "(valid)");  // polymorphic after it
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x12, 0x01, 0x0B})).rfind("type mismatch", 0), 0u);
  EXPECT_EQ(message(f.run(1, {0x12, 0x01, 0x0B})).rfind("type mismatch", 0), 0u);  // no argument
  EXPECT_EQ(message(f.run(1, {0x12, 0x05, 0x0B})), "unknown function 5");
  // return_call_indirect (type 1) through table 0; table 1 does not exist.
  EXPECT_EQ(message(f.run(1, {0x20, 0x00, 0x41, 0x00, 0x13, 0x01, 0x00, 0x0B})), "(valid)");
  EXPECT_EQ(message(f.run(1, {0x20, 0x00, 0x41, 0x00, 0x13, 0x01, 0x01, 0x0B})), "unknown table 1");
  EXPECT_EQ(message(f.run(0, {0x41, 0x00, 0x41, 0x00, 0x13, 0x01, 0x00, 0x0B})).rfind("type mismatch", 0), 0u);
  // Switched off (-W tail-call=n): refused, naming the feature.
  f.context.features.tail_call = false;
  EXPECT_EQ(message(f.run(1, {0x20, 0x00, 0x12, 0x01, 0x0B})),
            "return_call: tail calls are disabled (the tail-call feature is off)");
  // return_call_ref (typed function references) needs both features; off, each is named.
  EXPECT_EQ(message(f.run(0, {0xD0, 0x00, 0x15, 0x00, 0x0B})),
            "return_call_ref: tail calls are disabled (the tail-call feature is off)");
  f.context.features.function_references = false;
  EXPECT_EQ(message(f.run(0, {0xD0, 0x70, 0x15, 0x00, 0x0B})),
            "return_call_ref: typed function references are disabled (the function-references feature is off)");
}

TEST(FunctionValidator, RelaxedSimdSwitch) {
  Fixture f;
  // v128.const 0 (three times); f32x4.relaxed_madd; drop.
  Bytes code;
  for (int k = 0; k < 3; ++k) {
    code.insert(code.end(), {0xFD, 0x0C});
    code.insert(code.end(), 16, 0x00);
  }
  code.insert(code.end(), {0xFD, 0x85, 0x02, 0x1A, 0x0B});
  EXPECT_EQ(message(f.run(0, code)), "(valid)");
  f.context.features.relaxed_simd = false;
  EXPECT_EQ(message(f.run(0, code)), "f32x4.relaxed_madd: relaxed SIMD is disabled (the relaxed-simd feature is off)");
  EXPECT_FALSE(Features::wasm2().relaxed_simd);
}

TEST(ConstExpr, Rules) {
  // WebAssembly 2.0's rules (the extended-const feature off).
  const Features v2 = Features::wasm2();
  Fixture f;
  const auto make = [](Opcode op, std::uint32_t index = 0) {
    Instruction i;
    i.op = op;
    i.index = index;
    i.type = ValType::FuncRef;
    return i;
  };
  std::vector<Instruction> one = {make(Opcode::I32Const)};
  EXPECT_FALSE(validate_const_expr(f.module, one, ValType::I32, 0, v2));
  EXPECT_EQ(message(validate_const_expr(f.module, one, ValType::I64, 0, v2)).rfind("type mismatch", 0), 0u);
  std::vector<Instruction> two = {make(Opcode::I32Const), make(Opcode::I32Const)};
  EXPECT_EQ(message(validate_const_expr(f.module, two, ValType::I32, 0, v2)).rfind("type mismatch", 0), 0u);
  std::vector<Instruction> add = {make(Opcode::I32Const), make(Opcode::I32Const), make(Opcode::I32Add)};
  EXPECT_EQ(message(validate_const_expr(f.module, add, ValType::I32, 0, v2)).rfind("constant expression required", 0), 0u);
  // global 0 is imported and immutable; global 1 is defined
  EXPECT_FALSE(validate_const_expr(f.module, std::vector<Instruction>{make(Opcode::GlobalGet, 0)}, ValType::I32, 0, v2));
  EXPECT_EQ(
      message(validate_const_expr(f.module, std::vector<Instruction>{make(Opcode::GlobalGet, 1)}, ValType::I64, 0, v2)),
      "unknown global 1 (a constant expression may read a defined global only with extended constant expressions, "
      "which are disabled)");
  EXPECT_FALSE(validate_const_expr(f.module, std::vector<Instruction>{make(Opcode::RefFunc, 1)}, ValType::FuncRef, 0, v2));
  EXPECT_EQ(
      message(validate_const_expr(f.module, std::vector<Instruction>{make(Opcode::RefFunc, 7)}, ValType::FuncRef, 0, v2)),
      "unknown function 7");
  EXPECT_EQ(message(validate_const_expr(f.module, {}, ValType::I32, 0, v2)).rfind("type mismatch", 0), 0u);
}


TEST(ConstExpr, ExtendedRules) {
  // WebAssembly 3.0 (the default): integer add/sub/mul, global.get of any immutable global
  // defined so far (module.globals: the one being initialised is not in it yet).
  Fixture f;
  f.module.globals.push_back(GlobalType{ValType::I64, false});  // global 2: defined, immutable
  const auto make = [](Opcode op, std::uint32_t index = 0) {
    Instruction i;
    i.op = op;
    i.index = index;
    return i;
  };
  using V = std::vector<Instruction>;
  const V add = {make(Opcode::I32Const), make(Opcode::I32Const), make(Opcode::I32Add)};
  EXPECT_FALSE(validate_const_expr(f.module, add, ValType::I32, 0));
  EXPECT_EQ(message(validate_const_expr(f.module, add, ValType::I64, 0)).rfind("type mismatch", 0), 0u);
  const V mixed = {make(Opcode::I32Const), make(Opcode::I64Const), make(Opcode::I64Mul)};
  EXPECT_EQ(message(validate_const_expr(f.module, mixed, ValType::I64, 0)), "type mismatch: i64.mul expects i64, found i32");
  const V short_of_operands = {make(Opcode::I64Const), make(Opcode::I64Sub)};
  EXPECT_EQ(message(validate_const_expr(f.module, short_of_operands, ValType::I64, 0)).rfind("type mismatch", 0), 0u);
  const V from_defined = {make(Opcode::GlobalGet, 2), make(Opcode::I64Const), make(Opcode::I64Sub)};
  EXPECT_FALSE(validate_const_expr(f.module, from_defined, ValType::I64, 0));
  // global 1 is mutable, global 3 is not defined (yet).
  EXPECT_EQ(message(validate_const_expr(f.module, V{make(Opcode::GlobalGet, 1)}, ValType::I64, 0)).rfind(
                "constant expression required", 0),
            0u);
  EXPECT_EQ(message(validate_const_expr(f.module, V{make(Opcode::GlobalGet, 3)}, ValType::I64, 0)), "unknown global 3");
  // Other numeric instructions stay non-constant.
  const V div = {make(Opcode::I32Const), make(Opcode::I32Const), make(Opcode::I32DivS)};
  EXPECT_EQ(message(validate_const_expr(f.module, div, ValType::I32, 0)), "constant expression required, found i32.div_s");
  // Off (-W extended-const=n): the arithmetic is refused, naming the feature.
  Features off;
  off.extended_const = false;
  EXPECT_EQ(message(validate_const_expr(f.module, add, ValType::I32, 0, off)),
            "constant expression required, found i32.add (extended constant expressions are disabled)");
}


// ---------------------------------------------------------------- typed function references
// The rules end to end (text → binary → decode_and_validate): local initialisation, the typing of
// call_ref, br_on_null and br_on_non_null, subtyping, unreachable code, the feature switch.

std::string validate_text(std::string_view wat, Features features = {}) {
  auto bin = text::wat_to_binary(wat);
  if (!bin) return "text: " + bin.error().message;
  auto m = decode_and_validate(*bin, features);
  return m ? "(valid)" : m.error().message;
}

TEST(TypedRefs, NonNullableLocalsMustBeSetBeforeUseAndStaySetOnlyInTheirBlock) {
  EXPECT_EQ(validate_text(R"((module (type $t (func)) (func (param (ref $t)) (local $l (ref $t))
      (local.set $l (local.get 0)) (drop (local.get $l)))))"),
            "(valid)");
  EXPECT_EQ(validate_text("(module (type $t (func)) (func (local $l (ref $t)) (drop (local.get $l))))"),
            "uninitialized local 0");
  // Set inside a block: unset again after its end.
  EXPECT_EQ(validate_text(R"((module (type $t (func)) (func (param (ref $t)) (local $l (ref $t))
      (block (local.set $l (local.get 0))) (drop (local.get $l)))))"),
            "uninitialized local 1");
  // A nullable local is defaultable: readable before any set.
  EXPECT_EQ(validate_text("(module (type $t (func)) (func (local (ref null $t)) (drop (local.get 0))))"), "(valid)");
}

TEST(TypedRefs, CallRefBrOnNullAndBrOnNonNullTypes) {
  EXPECT_EQ(validate_text(R"((module (type $t (func (param i32) (result i32)))
      (func $f (type $t) (local.get 0)) (elem declare func $f)
      (func (result i32) (call_ref $t (i32.const 1) (ref.func $f)))
      (func (param (ref null $t)) (result (ref $t))
        (block $l (br_on_null $l (local.get 0)) (return)) (unreachable))
      (func (param (ref null $t)) (result (ref $t))
        (block $l (result (ref $t)) (br_on_non_null $l (local.get 0)) (unreachable)))))"),
            "(valid)");
  // call_ref's reference must be of the named type.
  EXPECT_EQ(validate_text(R"((module (type $t (func)) (type $u (func (param i32)))
      (func (param (ref $u)) (call_ref $t (local.get 0)))))"),
            "type mismatch: instruction requires [(ref null 0)] but stack has [(ref 1)]");
  // br_on_non_null's label must take a reference last.
  EXPECT_EQ(validate_text(R"((module (type $t (func))
      (func (param (ref null $t)) (block $l (br_on_non_null $l (local.get 0))))))"),
            "type mismatch: br_on_non_null's label 0 must take a reference last");
  // A nullable reference is no (ref $t).
  EXPECT_EQ(validate_text(R"((module (type $t (func))
      (func (param (ref null $t)) (result (ref $t)) (local.get 0))))"),
            "type mismatch: instruction requires [(ref 0)] but stack has [(ref null 0)]");
  // ref.func is (ref $t): a subtype of funcref and of (ref func).
  EXPECT_EQ(validate_text(R"((module (type $t (func)) (func $f) (elem declare func $f)
      (func (result funcref) (ref.func $f)) (func (result (ref func)) (ref.func $f))
      (func (result (ref null $t)) (ref.as_non_null (ref.null $t)))))"),
            "(valid)");
}

TEST(TypedRefs, UnreachableCodeTypesWithTheBottomType) {
  EXPECT_EQ(validate_text(R"((module (type $t (func (result i32)))
      (func (result i32) (unreachable) (call_ref $t))
      (func (result i32) (unreachable) (ref.as_non_null) (call_ref $t))
      (func (unreachable) (br_on_null 0) (drop))))"),
            "(valid)");
  EXPECT_EQ(validate_text("(module (func (unreachable) (ref.as_non_null (i32.const 0)) (drop)))"),
            "type mismatch: instruction requires a reference but stack has [i32]");
}

TEST(TypedRefs, TablesOfNonNullableTypeNeedAnInitialiser) {
  EXPECT_EQ(validate_text("(module (func $f) (table 2 (ref func) (ref.func $f)))"), "(valid)");
  EXPECT_EQ(validate_text("(module (table 2 (ref func)))"), "type mismatch: a table of (ref func) needs an initial value");
  EXPECT_EQ(validate_text("(module (table 2 (ref func) (ref.null func)))"),
            "type mismatch: constant expression must produce one (ref func)");
}

TEST(TypedRefs, FeatureOffRefusesTheTypesAndInstructionsNamingIt) {
  Features off;
  off.function_references = false;
  EXPECT_EQ(validate_text("(module (type $t (func)) (func (param (ref null $t))))", off),
            "malformed value type 0x63 (a typed reference: the function-references feature is off)");
  EXPECT_EQ(validate_text("(module (func (param funcref) (drop (ref.as_non_null (local.get 0)))))", off),
            "ref.as_non_null: typed function references are disabled (the function-references feature is off)");
  EXPECT_EQ(validate_text("(module (func (param funcref)))", off), "(valid)");
}

}  // namespace
}  // namespace sprawling::wasm
