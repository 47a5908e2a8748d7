// decode_and_validate: module structure, error kinds and offsets, SIMD decoding and its simd_use note, the name
// section, and what the decoder hands the translator (locals, code ranges, stack heights).
#include "wasm/binary/decoder.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

namespace sprawling::wasm {
namespace {

using Bytes = std::vector<std::uint8_t>;

// Builds "\0asm" v1 followed by sections (id, content); sizes are one-byte LEBs (content < 128).
Bytes module(std::initializer_list<std::pair<std::uint8_t, Bytes>> sections) {
  Bytes out = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
  for (const auto& [id, content] : sections) {
    out.push_back(id);
    out.push_back(static_cast<std::uint8_t>(content.size()));
    out.insert(out.end(), content.begin(), content.end());
  }
  return out;
}

// One function of type 0 = [] -> [] (or the given type section) with `body` (locals included).
Bytes one_function(const Bytes& body, const Bytes& types = {0x01, 0x60, 0x00, 0x00}) {
  Bytes code = {0x01, static_cast<std::uint8_t>(body.size())};
  code.insert(code.end(), body.begin(), body.end());
  return module({{1, types}, {3, {0x01, 0x00}}, {10, code}});
}

CompileError error_of(const Bytes& b) {
  auto r = decode_and_validate(b);
  EXPECT_FALSE(r.has_value());
  return r ? CompileError{} : r.error();
}

TEST(Decoder, EmptyModule) {
  auto r = decode_and_validate(module({}));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->types.empty());
  EXPECT_TRUE(r->code.empty());
}

TEST(Decoder, HeaderErrors) {
  EXPECT_EQ(error_of({}).message, "unexpected end");
  const auto magic = error_of({0x00, 0x61, 0x73, 0x6E, 0x01, 0x00, 0x00, 0x00});
  EXPECT_EQ(magic.message, "magic header not detected");
  EXPECT_EQ(magic.offset, 0u);
  const auto version = error_of({0x00, 0x61, 0x73, 0x6D, 0x02, 0x00, 0x00, 0x00});
  EXPECT_EQ(version.message, "unknown binary version");
  EXPECT_EQ(version.offset, 4u);
  EXPECT_EQ(version.kind, CompileError::Kind::Malformed);
}

TEST(Decoder, FunctionBodyAndLocals) {
  // (func (local i32 i32) (local i64) i32.const 1 i32.const 2 i32.add drop)
  const Bytes body = {0x02, 0x02, 0x7F, 0x01, 0x7E, 0x41, 0x01, 0x41, 0x02, 0x6A, 0x1A, 0x0B};
  const Bytes b = one_function(body);
  auto r = decode_and_validate(b);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->code.size(), 1u);
  const FunctionBody& f = r->code[0];
  EXPECT_EQ(f.locals, (std::vector<ValType>{ValType::I32, ValType::I32, ValType::I64}));
  EXPECT_EQ(f.max_stack_height, 2u);
  EXPECT_EQ(f.code_size, 7u);
  EXPECT_EQ(r->bytes[f.code_offset], 0x41);
  EXPECT_EQ(r->bytes[f.code_offset + f.code_size - 1], 0x0B);
  EXPECT_EQ(r->bytes, b);
}

// decode_validated_before (for bytes a certificate of this build names): the same module as
// decode_and_validate, bodies located from their sizes without being read; an invalid body is
// not noticed — which is why only certified bytes may take this path.
TEST(Decoder, ValidatedBeforeDecodesTheSameModuleWithoutReadingBodies) {
  const Bytes body = {0x02, 0x02, 0x7F, 0x01, 0x7E, 0x41, 0x01, 0x41, 0x02, 0x6A, 0x1A, 0x0B};
  const Bytes b = one_function(body);
  auto full = decode_and_validate(b);
  auto trusted = decode_validated_before(Bytes(b));
  ASSERT_TRUE(full.has_value() && trusted.has_value());
  ASSERT_EQ(trusted->code.size(), 1u);
  EXPECT_EQ(trusted->code[0].locals, full->code[0].locals);
  EXPECT_EQ(trusted->code[0].code_offset, full->code[0].code_offset);
  EXPECT_EQ(trusted->code[0].code_size, full->code[0].code_size);
  EXPECT_EQ(trusted->bytes, full->bytes);

  // i64.add on two i32: invalid, and not looked at.
  const Bytes invalid = one_function({0x00, 0x41, 0x01, 0x41, 0x02, 0x7C, 0x1A, 0x0B});
  EXPECT_EQ(error_of(invalid).kind, CompileError::Kind::Invalid);
  EXPECT_TRUE(decode_validated_before(Bytes(invalid)).has_value());
  // Structure is still checked: a body whose locals run past its declared size is malformed.
  const Bytes short_body = one_function({0x05});
  EXPECT_FALSE(decode_validated_before(Bytes(short_body)).has_value());
}

TEST(Decoder, InvalidErrorCarriesTheInstructionOffset) {
  // (func global.get 3)
  const Bytes b = one_function({0x00, 0x23, 0x03, 0x0B});
  const auto e = error_of(b);
  EXPECT_EQ(e.kind, CompileError::Kind::Invalid);
  EXPECT_EQ(e.message, "unknown global 3");
  EXPECT_EQ(e.offset, b.size() - 3);  // the global.get opcode
}

TEST(Decoder, TypeMismatchSaysWhat) {
  // (func (result i32) i64.const 0)
  const Bytes b = one_function({0x00, 0x42, 0x00, 0x0B}, {0x01, 0x60, 0x00, 0x01, 0x7F});
  const auto e = error_of(b);
  EXPECT_EQ(e.kind, CompileError::Kind::Invalid);
  EXPECT_EQ(e.message, "type mismatch: instruction requires [i32] but stack has [i64]");
  EXPECT_EQ(e.offset, b.size() - 1);  // the end that checks the result
}

TEST(Decoder, SimdModuleValidatesAndSaysItUsesSimd) {
  // (func v128.const i32x4 1 2 3 4 drop)
  Bytes body = {0x00, 0xFD, 0x0C};
  for (std::uint8_t lane : {1, 2, 3, 4}) body.insert(body.end(), {lane, 0, 0, 0});
  body.insert(body.end(), {0x1A, 0x0B});
  auto r = decode_and_validate(one_function(body));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->simd_use, "function 0 uses SIMD instruction v128.const");
  // A scalar module says nothing.
  auto scalar = decode_and_validate(one_function({0x00, 0x0B}));
  ASSERT_TRUE(scalar.has_value());
  EXPECT_TRUE(scalar->simd_use.empty());
}

TEST(Decoder, V128TypesAreNoted) {
  // A v128 parameter ([v128] -> []) with an empty body.
  auto param = decode_and_validate(one_function({0x00, 0x0B}, {0x01, 0x60, 0x01, 0x7B, 0x00}));
  ASSERT_TRUE(param.has_value()) << param.error().message;
  EXPECT_EQ(param->simd_use, "function 0 has a v128 parameter or result");
  // A v128 local.
  auto local = decode_and_validate(one_function({0x01, 0x01, 0x7B, 0x0B}));
  ASSERT_TRUE(local.has_value()) << local.error().message;
  EXPECT_EQ(local->simd_use, "function 0 has a v128 local");
  // (global v128 (v128.const i64x2 5 6)): the constant lands in bits/bits_hi.
  Bytes global = {0x01, 0x7B, 0x00, 0xFD, 0x0C, 5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0x0B};
  auto g = decode_and_validate(module({{6, global}}));
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->simd_use, "global 0 has type v128");
  ASSERT_EQ(g->global_inits.size(), 1u);
  EXPECT_EQ(g->global_inits[0].op, ConstExpr::Op::V128Const);
  EXPECT_EQ(g->global_inits[0].bits, 5u);
  EXPECT_EQ(g->global_inits[0].bits_hi, 6u);
  // (block (result v128) unreachable end) with nothing else SIMD.
  auto block = decode_and_validate(one_function({0x00, 0x02, 0x7B, 0x00, 0x0B, 0x1A, 0x0B}));
  ASSERT_TRUE(block.has_value()) << block.error().message;
  EXPECT_EQ(block->simd_use, "function 0 has a block of type v128");
  // call_indirect through type 1 = [] -> [v128] (the callee could come from anywhere).
  const Bytes types = {0x02, 0x60, 0x00, 0x00, 0x60, 0x00, 0x01, 0x7B};
  const Bytes code = {0x01, 0x08, 0x00, 0x41, 0x00, 0x11, 0x01, 0x00, 0x1A, 0x0B};
  auto indirect =
      decode_and_validate(module({{1, types}, {3, {0x01, 0x00}}, {4, {0x01, 0x70, 0x00, 0x00}}, {10, code}}));
  ASSERT_TRUE(indirect.has_value()) << indirect.error().message;
  EXPECT_EQ(indirect->simd_use,
            "function 0 calls indirectly through a type with v128");
}

TEST(Decoder, SimdErrors) {
  // 0xFD 0x9A is an unassigned SIMD opcode, and so is 0x120 (past relaxed SIMD's 0x100-0x113).
  const Bytes unknown = one_function({0x00, 0xFD, 0x9A, 0x01, 0x0B});
  const auto e = error_of(unknown);
  EXPECT_EQ(e.kind, CompileError::Kind::Malformed);
  EXPECT_EQ(e.message, "illegal opcode fd 9a");
  EXPECT_EQ(e.offset, unknown.size() - 4);  // the 0xFD prefix
  const auto past_relaxed = error_of(one_function({0x00, 0xFD, 0xA0, 0x02, 0x0B}));
  EXPECT_EQ(past_relaxed.message, "illegal opcode fd 0120");
  // v128.const cut short: 16 bytes expected.
  EXPECT_EQ(error_of(one_function({0x00, 0xFD, 0x0C, 0x01, 0x02, 0x0B})).kind, CompileError::Kind::Malformed);
  // i32x4.add on i32 operands.
  const auto mismatch = error_of(one_function({0x00, 0x41, 0x00, 0x41, 0x00, 0xFD, 0xAE, 0x01, 0x1A, 0x0B}));
  EXPECT_EQ(mismatch.kind, CompileError::Kind::Invalid);
  EXPECT_EQ(mismatch.message, "type mismatch: instruction requires [v128] but stack has [i32]");
}

TEST(Decoder, CallIndirectTableIndexIsALeb) {
  // (table 1 funcref) (func i32.const 0 call_indirect (type 0) table 0 written as 5 bytes)
  const Bytes body = {0x00, 0x41, 0x00, 0x11, 0x00, 0x80, 0x80, 0x80, 0x80, 0x00, 0x0B};
  Bytes code = {0x01, static_cast<std::uint8_t>(body.size())};
  code.insert(code.end(), body.begin(), body.end());
  const Bytes b = module({{1, {0x01, 0x60, 0x00, 0x00}}, {3, {0x01, 0x00}}, {4, {0x01, 0x70, 0x00, 0x01}}, {10, code}});
  auto r = decode_and_validate(b);
  EXPECT_TRUE(r.has_value()) << r.error().message;
}

TEST(Decoder, TooManyLocals) {
  // 50,001 i32 locals: 0xD1 0x86 0x03
  const auto e = error_of(one_function({0x01, 0xD1, 0x86, 0x03, 0x7F, 0x0B}));
  EXPECT_EQ(e.kind, CompileError::Kind::Malformed);
  EXPECT_EQ(e.message.rfind("too many locals", 0), 0u);
  // 50,000 are fine.
  auto r = decode_and_validate(one_function({0x01, 0xD0, 0x86, 0x03, 0x7F, 0x0B}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code[0].locals.size(), 50'000u);
}

TEST(Decoder, SectionSizeMismatchPointsAtTheSection) {
  // Type section claims 5 bytes but its one type takes 3, then 2 stray bytes.
  const Bytes b = module({{1, {0x01, 0x60, 0x00, 0x00, 0x00}}});
  const auto e = error_of(b);
  EXPECT_EQ(e.message.rfind("section size mismatch", 0), 0u);
  EXPECT_EQ(e.offset, 10u);
}

TEST(Decoder, SectionsOutOfOrder) {
  const auto e = error_of(module({{3, {0x00}}, {1, {0x00}}}));
  EXPECT_EQ(e.message, "unexpected content after last section");
  EXPECT_EQ(e.offset, 11u);
}

TEST(Decoder, ASecondCodeSectionIsNamedBeforeTheCountMismatch) {
  // Two functions declared, a code section with one, then another code section: the misplaced
  // section is the error (every section is read before the counts are compared).
  const Bytes b = module({{1, {0x01, 0x60, 0x00, 0x00}},
                          {3, {0x02, 0x00, 0x00}},
                          {10, {0x01, 0x02, 0x00, 0x0B}},
                          {10, {0x01, 0x02, 0x00, 0x0B}}});
  EXPECT_EQ(error_of(b).message, "unexpected content after last section");
  // Alone, the mismatch is still reported, at the code section's count.
  const auto e = error_of(module({{1, {0x01, 0x60, 0x00, 0x00}}, {3, {0x02, 0x00, 0x00}}, {10, {0x01, 0x02, 0x00, 0x0B}}}));
  EXPECT_EQ(e.message, "function and code section have inconsistent lengths");
  EXPECT_EQ(e.offset, 21u);
}

TEST(Decoder, AConstantExpressionWithoutEndStopsAtItsSection) {
  // A global `i32.const 0` missing its end, then a code section whose id (0x0a) would otherwise
  // be read as the next instruction.
  const Bytes b = module({{1, {0x01, 0x60, 0x00, 0x00}},
                          {3, {0x01, 0x00}},
                          {6, {0x01, 0x7F, 0x00, 0x41, 0x00}},
                          {10, {0x01, 0x02, 0x00, 0x0B}}});
  const auto e = error_of(b);
  EXPECT_EQ(e.message, "unexpected end of section or function");
  EXPECT_EQ(e.offset, 25u);
}

TEST(Decoder, MalformedLaterOutranksInvalidEarlier) {
  // An invalid function body (global.get 3), then a malformed data section kind.
  const Bytes body = {0x00, 0x23, 0x03, 0x1A, 0x0B};
  Bytes code = {0x01, static_cast<std::uint8_t>(body.size())};
  code.insert(code.end(), body.begin(), body.end());
  const Bytes b = module(
      {{1, {0x01, 0x60, 0x00, 0x00}}, {3, {0x01, 0x00}}, {5, {0x01, 0x00, 0x01}}, {10, code}, {11, {0x01, 0x07}}});
  const auto e = error_of(b);
  EXPECT_EQ(e.kind, CompileError::Kind::Malformed);
  EXPECT_EQ(e.message.rfind("malformed data segment kind", 0), 0u);
}

TEST(Decoder, NameSectionGivesFunctionNames) {
  // custom "name": module name "m", function names {0: "f"}
  const Bytes name_section = {0x04, 'n', 'a', 'm', 'e', 0x00, 0x02, 0x01, 'm', 0x01, 0x04, 0x01, 0x00, 0x01, 'f'};
  Bytes b =
      module({{1, {0x01, 0x60, 0x00, 0x00}}, {3, {0x01, 0x00}}, {10, {0x01, 0x02, 0x00, 0x0B}}, {0, name_section}});
  auto r = decode_and_validate(b);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->module_name, "m");
  ASSERT_EQ(r->function_names.count(0), 1u);
  EXPECT_EQ(r->function_names.at(0), "f");
}

TEST(Decoder, MalformedNameSectionIsIgnored) {
  // Function-names subsection claims 9 bytes but the section ends first; the name bytes are bad UTF-8.
  const Bytes name_section = {0x04, 'n', 'a', 'm', 'e', 0x01, 0x09, 0x01, 0x00, 0x02, 0xC0, 0x80};
  Bytes b =
      module({{1, {0x01, 0x60, 0x00, 0x00}}, {3, {0x01, 0x00}}, {10, {0x01, 0x02, 0x00, 0x0B}}, {0, name_section}});
  auto r = decode_and_validate(b);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->function_names.empty());
  EXPECT_TRUE(r->module_name.empty());
}

TEST(Decoder, CustomSectionNameMustFitTheSection) {
  // Custom section of size 0: its name would come from beyond it.
  Bytes b = module({});
  b.insert(b.end(), {0x00, 0x00, 0x00, 0x05, 0x01, 0x00, 0x07, 0x00, 0x00});
  EXPECT_EQ(error_of(b).message.rfind("unexpected end", 0), 0u);
}

TEST(Decoder, SegmentsAndExports) {
  // (memory 1) (table 2 funcref) (func) (export "f" (func 0))
  // (elem (i32.const 1) func 0) (elem declare func 0) (data (i32.const 8) "hi") (data "x")
  const Bytes b = module({
      {1, {0x01, 0x60, 0x00, 0x00}},
      {3, {0x01, 0x00}},
      {4, {0x01, 0x70, 0x00, 0x02}},
      {5, {0x01, 0x00, 0x01}},
      {7, {0x01, 0x01, 'f', 0x00, 0x00}},
      {9, {0x02, 0x00, 0x41, 0x01, 0x0B, 0x01, 0x00, 0x03, 0x00, 0x01, 0x00}},
      {12, {0x02}},
      {10, {0x01, 0x02, 0x00, 0x0B}},
      {11, {0x02, 0x00, 0x41, 0x08, 0x0B, 0x02, 'h', 'i', 0x01, 0x01, 'x'}},
  });
  auto r = decode_and_validate(b);
  ASSERT_TRUE(r.has_value()) << r.error().message << " at " << r.error().offset;
  ASSERT_EQ(r->exports.size(), 1u);
  EXPECT_EQ(r->exports[0].name, "f");
  ASSERT_EQ(r->elements.size(), 2u);
  EXPECT_EQ(r->elements[0].mode, SegmentMode::Active);
  EXPECT_EQ(r->elements[0].offset.op, ConstExpr::Op::I32Const);
  EXPECT_EQ(r->elements[0].offset.bits, 1u);
  ASSERT_EQ(r->elements[0].items.size(), 1u);
  EXPECT_EQ(r->elements[0].items[0].op, ConstExpr::Op::RefFunc);
  EXPECT_EQ(r->elements[1].mode, SegmentMode::Declarative);
  ASSERT_EQ(r->datas.size(), 2u);
  EXPECT_EQ(r->datas[0].offset.bits, 8u);
  const auto hi = r->data_bytes(r->datas[0]);
  EXPECT_EQ(std::string(hi.begin(), hi.end()), "hi");
  EXPECT_EQ(r->datas[1].mode, SegmentMode::Passive);
  EXPECT_EQ(r->data_count, 2u);
}

TEST(Decoder, NegativeI32ConstIsZeroExtendedInConstExprs) {
  // (global i32 (i32.const -1))
  auto r = decode_and_validate(module({{6, {0x01, 0x7F, 0x00, 0x41, 0x7F, 0x0B}}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->global_inits[0].bits, 0xFFFF'FFFFu);
}

TEST(Decoder, ModuleLevelRules) {
  // Two memories: 3.0 (multi-memory) accepts them; 2.0 (the feature off) does not, naming it.
  EXPECT_TRUE(decode_and_validate(module({{5, {0x02, 0x00, 0x01, 0x00, 0x01}}})).has_value());
  const auto two = decode_and_validate(module({{5, {0x02, 0x00, 0x01, 0x00, 0x01}}}), Features::wasm2());
  ASSERT_FALSE(two.has_value());
  EXPECT_EQ(two.error().message, "multiple memories (the multi-memory feature is off)");
  // A 64-bit memory of 2^48 + 1 pages is too large; with memory64 off it is refused by name.
  EXPECT_EQ(error_of(module({{5, {0x01, 0x04, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40}}})).message,
            "memory size must be at most 2^48 pages (2^64 bytes)");
  const auto wide = decode_and_validate(module({{5, {0x01, 0x04, 0x01}}}), Features::wasm2());
  ASSERT_FALSE(wide.has_value());
  EXPECT_EQ(wide.error().message, "a 64-bit memory (memory64), and the memory64 feature is off");
  EXPECT_EQ(error_of(module({{5, {0x01, 0x01, 0x02, 0x01}}})).message, "size minimum must not be greater than maximum");
  EXPECT_EQ(error_of(module({{5, {0x01, 0x00, 0x81, 0x80, 0x04}}})).message,
            "memory size must be at most 65536 pages (4GiB)");
  // Two exports named "a".
  const auto dup =
      error_of(module({{5, {0x01, 0x00, 0x01}}, {7, {0x02, 0x01, 'a', 0x02, 0x00, 0x01, 'a', 0x02, 0x00}}}));
  EXPECT_EQ(dup.message.rfind("duplicate export name", 0), 0u);
  // A start function with a parameter.
  const Bytes start =
      module({{1, {0x01, 0x60, 0x01, 0x7F, 0x00}}, {3, {0x01, 0x00}}, {8, {0x00}}, {10, {0x01, 0x02, 0x00, 0x0B}}});
  EXPECT_EQ(error_of(start).message.rfind("start function", 0), 0u);
}

TEST(Decoder, Table64LimitsImportsAndElementOffsets) {
  // (table i64 1 0x1_0000_0000 funcref): flags 0x05, u64 sizes past 32 bits.
  auto wide = decode_and_validate(module({{4, {0x01, 0x70, 0x05, 0x01, 0x80, 0x80, 0x80, 0x80, 0x10}}}));
  ASSERT_TRUE(wide.has_value()) << wide.error().message;
  EXPECT_EQ(wide->tables[0].limits, (Limits{1, std::uint64_t{1} << 32, true}));
  // An imported 64-bit table (flags 0x04) keeps its address type.
  auto imported = decode_and_validate(module({{2, {0x01, 0x01, 'm', 0x01, 't', 0x01, 0x70, 0x04, 0x0A}}}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  EXPECT_TRUE(imported->tables[0].limits.is64);
  // An i32 table's sizes must fit 32 bits (3.0 reads them as u64); min <= max for both.
  EXPECT_EQ(error_of(module({{4, {0x01, 0x70, 0x00, 0x80, 0x80, 0x80, 0x80, 0x10}}})).message,
            "table size must be at most 2^32-1");
  EXPECT_EQ(error_of(module({{4, {0x01, 0x70, 0x05, 0x02, 0x01}}})).message,
            "size minimum must not be greater than maximum");
  EXPECT_EQ(error_of(module({{4, {0x01, 0x70, 0x08, 0x00}}})).message, "malformed limits flags");
  // An active segment's offset has its table's type: i64.const for a 64-bit table.
  const Bytes table64 = {0x01, 0x70, 0x04, 0x01};
  EXPECT_TRUE(decode_and_validate(module({{4, table64}, {9, {0x01, 0x00, 0x42, 0x00, 0x0B, 0x00}}})).has_value());
  EXPECT_EQ(error_of(module({{4, table64}, {9, {0x01, 0x00, 0x41, 0x00, 0x0B, 0x00}}})).message.rfind("type mismatch", 0),
            0u);
  // With memory64 off (-W memory64=n: Wasmtime puts table64 under it) refused by name.
  const auto off = decode_and_validate(module({{4, table64}}), Features::wasm2());
  ASSERT_FALSE(off.has_value());
  EXPECT_EQ(off.error().message, "a 64-bit table (table64), and the memory64 feature is off");
}

TEST(Decoder, StartOfAFunctionWithAnUnknownTypeDoesNotCrash) {
  // Found by mutation fuzzing: the function's type index 5 dangles, then a start section names it.
  const Bytes b =
      module({{1, {0x01, 0x60, 0x00, 0x00}}, {3, {0x01, 0x05}}, {8, {0x00}}, {10, {0x01, 0x02, 0x00, 0x0B}}});
  const auto e = error_of(b);
  EXPECT_EQ(e.kind, CompileError::Kind::Invalid);
  EXPECT_EQ(e.message, "unknown type 5");
}

}  // namespace
}  // namespace sprawling::wasm
