// wat_to_binary: exact bytes for the abbreviations and encoding choices, the implicit-type
// rules, error messages with their line:column, and the loader helpers (looks_like_wat,
// load_module_bytes).
#include "wasm/binary/decoder.hpp"
#include "wasm/text/wat.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sprawling::wasm::text {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes wat(std::string_view src) {
  auto r = wat_to_binary(src);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : Bytes{};
}

// The testsuite's 2.0 wordings: 32-bit memarg offsets and memory limits (memory64 off).
TextError wat_error(std::string_view src) {
  auto r = wat_to_binary(src, WatOptions{.memory64 = false});
  EXPECT_FALSE(r.has_value()) << src;
  return r ? TextError{} : r.error();
}

Bytes with_header(const Bytes& sections) {
  // Sized up front: GCC 12 at -O2 reports a false -Warray-bounds for insert() after an
  // initializer list here.
  static constexpr std::uint8_t kHeader[8] = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
  Bytes out(sizeof kHeader + sections.size());
  std::copy(std::begin(kHeader), std::end(kHeader), out.begin());
  std::copy(sections.begin(), sections.end(), out.begin() + sizeof kHeader);
  return out;
}

Module decoded(std::string_view src) {
  const Bytes b = wat(src);
  auto m = decode_and_validate(b);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().message);
  return m ? std::move(*m) : Module{};
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Wat, EmptyModuleForms) {
  const Bytes empty = with_header({});
  EXPECT_EQ(wat("(module)"), empty);
  EXPECT_EQ(wat("(module $name)"), empty);
  EXPECT_EQ(wat(""), empty);
  EXPECT_EQ(wat(" ;; nothing\n"), empty);
  EXPECT_EQ(wat(R"wat((module binary "\00asm" "\01\00\00\00"))wat"), empty);
  EXPECT_EQ(wat(R"wat((module quote "(func)"))wat"), wat("(func)"));
}

TEST(Wat, TheFormSaysWhetherTheParserEncodedTheBytes) {
  // `(module binary …)` strings pass through as written, even malformed (an empty module here:
  // the decoder reports "unexpected end"); fuzz_wat holds only encoded modules to well-formedness.
  auto binary = wat_to_module_bytes("(module  binary) \n");
  ASSERT_TRUE(binary.has_value());
  EXPECT_EQ(binary->form, WatForm::Binary);
  EXPECT_TRUE(binary->bytes.empty());
  auto quoted = wat_to_module_bytes(R"wat((module quote "(module \62inary \"\\00asm\")"))wat");
  ASSERT_TRUE(quoted.has_value()) << quoted.error().to_string();
  EXPECT_EQ(quoted->form, WatForm::Binary);
  EXPECT_EQ(quoted->bytes, (Bytes{0x00, 'a', 's', 'm'}));
  for (const char* fields : {"(module (func))", "(func)", R"wat((module quote "(func)"))wat"}) {
    auto encoded = wat_to_module_bytes(fields);
    ASSERT_TRUE(encoded.has_value()) << fields;
    EXPECT_EQ(encoded->form, WatForm::Fields) << fields;
    EXPECT_EQ(encoded->bytes, wat(fields)) << fields;
  }
}

TEST(Wat, ExportedConstantFunction) {
  EXPECT_EQ(wat(R"wat((module (func (export "f") (result i32) i32.const 42)))wat"),
            with_header({0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7F,         // type [] -> [i32]
                         0x03, 0x02, 0x01, 0x00,                           // func 0: type 0
                         0x07, 0x05, 0x01, 0x01, 'f', 0x00, 0x00,          // export "f" func 0
                         0x0A, 0x06, 0x01, 0x04, 0x00, 0x41, 0x2A, 0x0B}));  // i32.const 42 end
}

TEST(Wat, BareFieldsEqualAModule) {
  EXPECT_EQ(wat("(func (param i32)) (memory 1)"), wat("(module (func (param i32)) (memory 1))"));
}

TEST(Wat, FoldedAndFlatAreTheSame) {
  const char* flat = "(func (param i32) (result i32) local.get 0 i32.const 1 i32.add "
                     "block (result i32) i32.const 2 end i32.mul)";
  const char* folded = "(func (param $x i32) (result i32) (i32.mul (i32.add (local.get $x) (i32.const 1)) "
                       "(block (result i32) (i32.const 2))))";
  EXPECT_EQ(wat(flat), wat(folded));
  EXPECT_EQ(wat("(func (if (i32.const 1) (then nop) (else unreachable)))"),
            wat("(func i32.const 1 if nop else unreachable end)"));
}

// wabt and wasm-tools accept plain instructions as a folded instruction's operands (wasm-tools
// prints nothing folded, but hand-written and generated text uses it); they come first, in order.
TEST(Wat, FoldedInstructionsTakePlainOperands) {
  EXPECT_EQ(wat("(type $t (struct)) (func (param i32) (result i31ref) (ref.i31 local.get 0))"),
            wat("(type $t (struct)) (func (param i32) (result i31ref) local.get 0 ref.i31)"));
  EXPECT_EQ(wat("(func (param i32 i32) (result i32) (i32.sub local.get 0 (i32.const 1) local.get 1 i32.add))"),
            wat("(func (param i32 i32) (result i32) local.get 0 i32.const 1 local.get 1 i32.add i32.sub)"));
  EXPECT_EQ(wat("(func (result i32) (i32.add block (result i32) i32.const 1 end (i32.const 2)))"),
            wat("(func (result i32) block (result i32) i32.const 1 end i32.const 2 i32.add)"));
  // A plain block inside still needs its `end`, and `end` cannot close the folded form.
  EXPECT_FALSE(wat_to_binary("(func (result i32) (i32.add block (result i32) i32.const 1 (i32.const 2)))"));
  EXPECT_FALSE(wat_to_binary("(func (drop i32.const 1 end))"));
}

TEST(Wat, ImplicitTypesGoAfterExplicitOnesInTextualOrder) {
  // func.wast: $f adds () -> f64 after the explicit (param i32), $g reuses the later explicit type.
  const Module m = decoded(
      "(func $f (result f64) (f64.const 0)) (func $g (param i32)) (type $t (func (param i32)))"
      "(func (call_indirect (param i64) (i64.const 0) (i32.const 0))) (table 1 funcref)"
      "(func (i32.const 0) (block (param i32) (result i32 i32) (i32.const 1)) (drop) (drop))");
  ASSERT_EQ(m.types.size(), 5u);
  EXPECT_EQ(m.types[0], (FuncType{{ValType::I32}, {}}));
  EXPECT_EQ(m.types[1], (FuncType{{}, {ValType::F64}}));
  EXPECT_EQ(m.types[2], (FuncType{}));
  EXPECT_EQ(m.types[3], (FuncType{{ValType::I64}, {}}));
  EXPECT_EQ(m.types[4], (FuncType{{ValType::I32}, {ValType::I32, ValType::I32}}));
  EXPECT_EQ(m.func_types, (std::vector<std::uint32_t>{1, 0, 2, 2}));
}

TEST(Wat, ImplicitTypeUsesTheSmallestEqualIndex) {
  const Module m = decoded("(type (func (param i32))) (type (func)) (type (func)) (func) (func (param i32)) "
                           "(func (result i32) unreachable) (func (result i32) unreachable)");
  ASSERT_EQ(m.types.size(), 4u);
  EXPECT_EQ(m.func_types, (std::vector<std::uint32_t>{1, 0, 3, 3}));
}

TEST(Wat, NamedIndicesResolveForwardAndLocalsCountParams) {
  const Bytes b = wat("(func $a (call $b (i32.const 1))) (func $b (param $p i32) (local $l i64) (local.set $l (i64.const 0)) "
                      "(drop (local.get $p)) (global.set $g (global.get $g))) (global $g (mut i32) (i32.const 0))");
  // Body of $a: call 1; $b: local.set 1, local.get 0, global.get/set 0.
  auto decoded_module = decode_and_validate(b);
  ASSERT_TRUE(decoded_module.has_value()) << decoded_module.error().message;
  const Module& m = *decoded_module;
  const auto body = [&](std::size_t i) {
    return Bytes(m.bytes.begin() + static_cast<std::ptrdiff_t>(m.code[i].code_offset),
                 m.bytes.begin() + static_cast<std::ptrdiff_t>(m.code[i].code_offset + m.code[i].code_size));
  };
  EXPECT_EQ(body(0), (Bytes{0x41, 0x01, 0x10, 0x01, 0x0B}));
  EXPECT_EQ(body(1), (Bytes{0x42, 0x00, 0x21, 0x01, 0x20, 0x00, 0x1A, 0x23, 0x00, 0x24, 0x00, 0x0B}));
  EXPECT_EQ(m.code[1].locals, (std::vector<ValType>{ValType::I64}));
}

TEST(Wat, LabelsByNameAndDepth) {
  EXPECT_EQ(wat("(func (block $out (loop $in (br_if $in (i32.const 0)) (br $out))))"),
            wat("(func (block (loop (br_if 0 (i32.const 0)) (br 1))))"));
  // A label shadows an outer one of the same name.
  EXPECT_EQ(wat("(func (block $l (block $l (br $l))))"), wat("(func (block (block (br 0))))"));
  EXPECT_EQ(wat("(func (block $a (block $b (i32.const 0) (br_table $a $b $a))))"),
            wat("(func (block (block (i32.const 0) (br_table 1 0 1))))"));
}

TEST(Wat, MemargsAndConstants) {
  const Bytes b = wat("(memory 1) (func (drop (i64.load32_u offset=0x10 align=2 (i32.const -1))) "
                      "(drop (f32.const -0x1p-1)) (drop (f64.const nan:0x1)) (drop (i64.const 0x8000_0000_0000_0000)))");
  auto decoded_module = decode_and_validate(b);
  ASSERT_TRUE(decoded_module.has_value()) << decoded_module.error().message;
  const Module& m = *decoded_module;
  const Bytes code(m.bytes.begin() + static_cast<std::ptrdiff_t>(m.code[0].code_offset),
                   m.bytes.begin() + static_cast<std::ptrdiff_t>(m.code[0].code_offset + m.code[0].code_size));
  EXPECT_EQ(code, (Bytes{0x41, 0x7F, 0x35, 0x01, 0x10, 0x1A,  // align=2 is exponent 1                                  //
                         0x43, 0x00, 0x00, 0x00, 0xBF, 0x1A,                                  //
                         0x44, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x7F, 0x1A,          //
                         0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7F, 0x1A,  //
                         0x0B}));
}

// The instruction bytes of the module's first function body.
Bytes first_body(std::string_view src) {
  const Module m = decoded(src);
  if (m.code.empty()) return {};
  return Bytes(m.bytes.begin() + static_cast<std::ptrdiff_t>(m.code[0].code_offset),
               m.bytes.begin() + static_cast<std::ptrdiff_t>(m.code[0].code_offset + m.code[0].code_size));
}

TEST(Wat, V128ConstShapes) {
  // Every shape writes its lanes little-endian, lane 0 first.
  const auto const_bytes = [](std::string_view lanes) {
    const Bytes body = first_body("(func (drop (v128.const " + std::string(lanes) + ")))");
    // v128.const is 0xFD 0x0C, then 16 bytes, then drop and end.
    EXPECT_EQ(body.size(), 20u);
    return body.size() == 20 ? Bytes(body.begin() + 2, body.begin() + 18) : Bytes{};
  };
  EXPECT_EQ(const_bytes("i8x16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 -1"),
            (Bytes{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xFF}));
  EXPECT_EQ(const_bytes("i16x8 0x0102 0 0 0 0 0 0 -32768"),
            (Bytes{0x02, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x80}));
  EXPECT_EQ(const_bytes("i32x4 0x01020304 0 0 4294967295"),
            (Bytes{4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF}));
  EXPECT_EQ(const_bytes("i64x2 1 -1"), (Bytes{1, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}));
  EXPECT_EQ(const_bytes("f32x4 1 -0 inf nan:0x1"),
            (Bytes{0, 0, 0x80, 0x3F, 0, 0, 0, 0x80, 0, 0, 0x80, 0x7F, 1, 0, 0x80, 0x7F}));
  EXPECT_EQ(const_bytes("f64x2 -0x1p-1 nan"),
            (Bytes{0, 0, 0, 0, 0, 0, 0xE0, 0xBF, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F}));
}

TEST(Wat, SimdImmediatesAndTypes) {
  const Bytes body = first_body(
      "(memory 1) (func (param v128) (result v128) (local v128)"
      " (v128.store offset=3 align=8 (i32.const 0) (local.get 0))"
      " (drop (v128.load8_lane offset=2 align=1 15 (i32.const 0) (local.get 0)))"
      " (drop (i16x8.extract_lane_s 7 (local.get 0)))"
      " (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 31 (local.get 0) (local.get 1)))");
  EXPECT_EQ(body, (Bytes{0x41, 0x00, 0x20, 0x00, 0xFD, 0x0B, 0x03, 0x03,        // v128.store align=2^3 offset=3
                         0x41, 0x00, 0x20, 0x00, 0xFD, 0x54, 0x00, 0x02, 0x0F, 0x1A,  // v128.load8_lane lane 15
                         0x20, 0x00, 0xFD, 0x18, 0x07, 0x1A,                    // i16x8.extract_lane_s 7
                         0x20, 0x00, 0x20, 0x01, 0xFD, 0x0D, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 31,
                         0x0B}));
  // Opcodes beyond 0x7F take a two-byte LEB: i32x4.add is 0xFD 0xAE 0x01.
  EXPECT_EQ(first_body("(func (param v128) (result v128) (i32x4.add (local.get 0) (local.get 0)))"),
            (Bytes{0x20, 0x00, 0x20, 0x00, 0xFD, 0xAE, 0x01, 0x0B}));
  // A v128 global with its constant.
  const Module m = decoded("(global (mut v128) (v128.const i64x2 7 8))");
  ASSERT_EQ(m.globals.size(), 1u);
  EXPECT_EQ(m.globals[0].type, ValType::V128);
  EXPECT_EQ(m.global_inits[0].bits, 7u);
  EXPECT_EQ(m.global_inits[0].bits_hi, 8u);
}

TEST(Wat, SimdErrorsUseTheTestsuiteWording) {
  EXPECT_TRUE(starts_with(wat_error("(func (v128.const i32x4 1 2 3) drop)").message, "wrong number of lane literals"));
  EXPECT_TRUE(starts_with(wat_error("(func (v128.const i32x4 1 2 3 4 5) drop)").message, "wrong number of lane literals"));
  EXPECT_TRUE(starts_with(wat_error("(func (v128.const i8x16 256 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0) drop)").message,
                          "constant out of range"));
  EXPECT_TRUE(starts_with(wat_error("(func (v128.const f32x4 .0 0 0 0) drop)").message, "unknown operator"));
  EXPECT_TRUE(starts_with(wat_error("(func (v128.const i32x8 0 0 0 0) drop)").message, "unknown operator"));
  EXPECT_TRUE(starts_with(wat_error("(func (param v128) (drop (i8x16.shuffle 0 1 2 (local.get 0) (local.get 0))))").message,
                          "invalid lane length"));
  EXPECT_TRUE(starts_with(
      wat_error("(func (param v128) (drop (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 -1 (local.get 0) (local.get 0))))")
          .message,
      "i8 constant out of range"));
  EXPECT_TRUE(starts_with(wat_error("(func (param v128) (drop (i32x4.extract_lane -1 (local.get 0))))").message,
                          "unexpected token"));
  EXPECT_TRUE(starts_with(wat_error("(func (param v128) (drop (i32x4.extract_lane 256 (local.get 0))))").message,
                          "i8 constant out of range"));
  EXPECT_TRUE(starts_with(wat_error("(memory 1) (func (drop (v128.load align=3 (i32.const 0))))").message,
                          "alignment must be a power of two"));
  // A lane index past the shape is the validator's business ("invalid lane index"), not the parser's.
  const Bytes b = wat("(func (param v128) (drop (i32x4.extract_lane 4 (local.get 0))))");
  const auto r = decode_and_validate(b);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(starts_with(r.error().message, "invalid lane index"));
}

TEST(Wat, InlineImportsExportsAndSegments) {
  const Module m = decoded(
      R"wat((func $imp (import "env" "f") (param i32))
         (global (import "env" "g") i64)
         (memory (export "mem") (data "hi" "\00\ff"))
         (table $t (export "tab") funcref (elem $imp $imp))
         (elem declare func $imp)
         (elem (table $t) (offset (i32.const 1)) funcref (ref.func $imp) (ref.null func))
         (data $d "passive"))wat");
  ASSERT_EQ(m.imports.size(), 2u);
  EXPECT_EQ(m.imports[0].module, "env");
  EXPECT_EQ(m.imports[0].kind, ExternKind::Func);
  EXPECT_EQ(m.imports[1].kind, ExternKind::Global);
  ASSERT_EQ(m.memories.size(), 1u);
  EXPECT_EQ(m.memories[0].limits, (Limits{1, 1}));
  EXPECT_EQ(m.tables[0].limits, (Limits{2, 2}));
  ASSERT_EQ(m.exports.size(), 2u);
  EXPECT_EQ(m.exports[0].name, "mem");
  EXPECT_EQ(m.exports[1].name, "tab");
  ASSERT_EQ(m.elements.size(), 3u);
  EXPECT_EQ(m.elements[0].mode, SegmentMode::Active);
  EXPECT_EQ(m.elements[0].items.size(), 2u);
  EXPECT_EQ(m.elements[1].mode, SegmentMode::Declarative);
  EXPECT_EQ(m.elements[2].items.size(), 2u);
  EXPECT_EQ(m.elements[2].items[1].op, ConstExpr::Op::RefNull);
  ASSERT_EQ(m.datas.size(), 2u);
  const auto d0 = m.data_bytes(m.datas[0]);
  EXPECT_EQ(Bytes(d0.begin(), d0.end()), (Bytes{'h', 'i', 0x00, 0xFF}));
  EXPECT_EQ(m.datas[1].mode, SegmentMode::Passive);
}

TEST(Wat, WabtEncodingChoices) {
  // A block typed by a (type x) that fits a value type is written inline; an empty else is dropped.
  EXPECT_EQ(wat("(type $v (func (result i32))) (func (result i32) (block (type $v) (i32.const 1)))"),
            wat("(type $v (func (result i32))) (func (result i32) (block (result i32) (i32.const 1)))"));
  EXPECT_EQ(wat("(func (if (i32.const 0) (then) (else)))"), wat("(func (if (i32.const 0) (then)))"));
  // An element segment with no list at all is an empty passive funcref segment.
  EXPECT_EQ(wat("(elem)"), wat("(elem func)"));
  // Element segments: legacy flags 0 for table 0 + function indices, 2 for another table, 6 for externref.
  const Bytes b = wat("(table 1 funcref) (table $x 1 externref) (func $f)"
                      "(elem (i32.const 0) $f) (elem (table $x) (i32.const 0) externref (ref.null extern))");
  const Bytes elem_section = {0x09, 0x11, 0x02, 0x00, 0x41, 0x00, 0x0B, 0x01, 0x00,
                              0x06, 0x01, 0x41, 0x00, 0x0B, 0x6F, 0x01, 0xD0, 0x6F, 0x0B};
  EXPECT_NE(std::search(b.begin(), b.end(), elem_section.begin(), elem_section.end()), b.end());
  // The data count section appears only when an instruction needs it.
  const Bytes plain = wat("(memory 1) (data \"a\")");
  const Bytes with_drop = wat("(memory 1) (data \"a\") (func (data.drop 0))");
  EXPECT_EQ(std::find(plain.begin() + 8, plain.end(), 0x0C), plain.end());
  const Bytes count = {0x0C, 0x01, 0x01};
  EXPECT_NE(std::search(with_drop.begin(), with_drop.end(), count.begin(), count.end()), with_drop.end());
}

TEST(Wat, ErrorsCarryPositionAndTestsuiteWording) {
  struct Case {
    const char* src;
    const char* message_start;
    std::size_t line;
    std::size_t column;
  };
  const Case cases[] = {
      {"(module\n  (func (i32.add1)))", "unknown operator i32.add1", 2, 10},
      {"(func br $done)", "unknown label $done", 1, 10},
      {"(module (func)", "unexpected token end of input, expected a module field or ')'", 1, 15},
      {"(func (i32.const))", "unexpected token ')'", 1, 17},
      {"(func (i32.const 0x100000000) drop)", "constant out of range", 1, 18},
      {"(func (f32.const 1e39) drop)", "constant out of range", 1, 18},
      {"(func (i32.const 0x) drop)", "unknown operator", 1, 18},
      {"(func (f32.const nan:canonical))", "unexpected token", 1, 18},
      {"(memory 1) (func (drop (i64.load align=3 (i32.const 0))))", "alignment", 1, 34},
      {"(memory 1) (func (drop (i32.load offset=4294967296 (i32.const 0))))", "i32 constant", 1, 34},
      {"(memory 0x1_0000_0000)", "i32 constant out of range", 1, 9},
      {"(type $t (func (param i32)))\n(func (type $t) (param i64))", "inline function type", 2, 7},
      {"(func (type 2) (param i32))", "unknown type", 1, 13},
      {"(func $nope (call $missing))", "unknown func $missing", 1, 19},
      {"(func (local.get $x))", "unknown local $x", 1, 18},
      {"(func $f) (func $f)", "duplicate func $f", 1, 17},
      {"(func (param $a i32) (local $a i32))", "duplicate local $a", 1, 29},
      {"(global $g i32 (i32.const 0)) (global $g i32 (i32.const 0))", "duplicate global $g", 1, 39},
      {"(func block $a end $b)", "mismatching label $b", 1, 20},
      {"(func (nop) (local i32))", "unexpected token \"local\"", 1, 14},
      {"(func (result i32) (param i32) (i32.const 0))", "unexpected token \"param\"", 1, 21},
      {"(func (block (param $x i32) (drop)))", "unexpected token \"$x\"", 1, 21},
      {"(func) (import \"\" \"\" (func))", "import after function", 1, 9},
      {"(func $a) (start $a) (start $a)", "multiple start sections", 1, 23},
      {"(func (export \"\\ff\"))", "malformed UTF-8 encoding", 1, 15},
      {"(data \"a\"\"b\")", "unknown operator", 1, 7},
      {"(func br 0drop)", "unknown operator", 1, 10},
      {"(module) (module)", "unexpected token '('", 1, 10},
  };
  for (const auto& c : cases) {
    const TextError e = wat_error(c.src);
    EXPECT_TRUE(starts_with(e.message, c.message_start)) << c.src << "\n  got: " << e.message;
    EXPECT_EQ(e.line, c.line) << c.src;
    EXPECT_EQ(e.column, c.column) << c.src;
  }
  EXPECT_EQ(wat_error("(func (i32.const))").to_string(), "unexpected token ')', expected a constant at 1:17");
}

TEST(Wat, DeepNesting) {
  // Flat blocks nest without native recursion (a big switch lowers to thousands of blocks).
  std::string flat = "(func ";
  for (int i = 0; i < 100000; ++i) flat += "block ";
  for (int i = 0; i < 100000; ++i) flat += "end ";
  flat += ")";
  EXPECT_TRUE(wat_to_binary(flat).has_value());
  // Folded expressions recurse and are bounded.
  const auto folded = [](int n) {
    std::string s = "(func ";
    for (int i = 0; i < n; ++i) s += "(block ";
    return s + std::string(static_cast<std::size_t>(n), ')') + ")";
  };
  EXPECT_TRUE(wat_to_binary(folded(512)).has_value());
  const TextError e = wat_error(folded(513));
  EXPECT_TRUE(starts_with(e.message, "nesting too deep")) << e.message;
  EXPECT_EQ(e.column, 7u + 7u * 512u);  // the 513th "("
}

TEST(Wat, FlatIfElseLabels) {
  EXPECT_EQ(wat("(func i32.const 0 if $a nop else $a nop end $a)"),
            wat("(func (if (i32.const 0) (then nop) (else nop)))"));
  EXPECT_TRUE(starts_with(wat_error("(func i32.const 0 if nop else nop else end)").message, "unexpected token"));
  EXPECT_TRUE(starts_with(wat_error("(func block nop)").message, "unexpected token ')', expected 'end'"));
}

TEST(Wat, DebugNames) {
  const std::string_view src = "(module $mod (func $first unreachable) (func) (func $third))";
  const Bytes plain = wat(src);
  auto named = wat_to_binary(src, WatOptions{.debug_names = true});
  ASSERT_TRUE(named.has_value());
  // Same module, plus a trailing custom section.
  ASSERT_GT(named->size(), plain.size());
  EXPECT_TRUE(std::equal(plain.begin(), plain.end(), named->begin()));
  EXPECT_EQ((*named)[plain.size()], 0x00);
  auto m = decode_and_validate(*named);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->module_name, "mod");
  EXPECT_EQ(m->function_names.size(), 2u);
  EXPECT_EQ(m->function_names.at(0), "first");
  EXPECT_EQ(m->function_names.at(2), "third");
  // Nothing named: no section.
  EXPECT_EQ(*wat_to_binary("(func)", WatOptions{.debug_names = true}), wat("(func)"));
}

TEST(Wat, LooksLikeWat) {
  const auto check = [](std::string_view s) {
    return looks_like_wat(std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
  };
  EXPECT_TRUE(check("(module)"));
  EXPECT_TRUE(check("  ;; comment\n\t(func)"));
  EXPECT_TRUE(check("(; block ;) (module)"));
  EXPECT_TRUE(check("\xEF\xBB\xBF(module)"));
  EXPECT_FALSE(check(std::string_view("\0asm\x01\0\0\0", 8)));
  EXPECT_FALSE(check("hello"));
  EXPECT_FALSE(check(""));
  EXPECT_FALSE(check(";; only a comment"));
}

TEST(Wat, LoadModuleBytes) {
  const Bytes binary = with_header({});
  auto same = load_module_bytes(binary);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(*same, binary);

  const std::string text = "(module (func))";
  auto converted = load_module_bytes(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  ASSERT_TRUE(converted.has_value());
  EXPECT_EQ(*converted, wat(text));
  // Loaded text keeps its function names for trap messages.
  const std::string named = "(module (func $crash unreachable))";
  auto with_names = load_module_bytes(std::span(reinterpret_cast<const std::uint8_t*>(named.data()), named.size()));
  ASSERT_TRUE(with_names.has_value());
  auto m = decode_and_validate(*with_names);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->function_names.at(0), "crash");

  const std::string bad = "(module\n (func (bogus)))";
  auto err = load_module_bytes(std::span(reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size()));
  ASSERT_FALSE(err.has_value());
  EXPECT_EQ(err.error(), "unknown operator bogus at 2:9");
}

}  // namespace
}  // namespace sprawling::wasm::text
