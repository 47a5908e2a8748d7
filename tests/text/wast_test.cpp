// parse_wast: every command kind, actions and expected values (NaN patterns, references),
// which modules become Binary and which Text, command lines, and script-level errors.
#include "wasm/script/script.hpp"
#include "wasm/text/wast.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace sprawling::wasm::text {
namespace {

using script::Command;
using script::ExpectedValue;
using script::ModuleSource;

script::Script parse(std::string_view src) {
  auto r = parse_wast(src, "test.wast");
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? std::move(*r) : script::Script{};
}

TEST(Wast, CommandsAndValues) {
  const auto s = parse(R"wast(
(module $M (func (export "f") (param i32 f32) (result i32) (local.get 0)))
(register "m" $M)
(invoke $M "f" (i32.const -1) (f32.const 1.5))
(assert_return (invoke "f" (i32.const 7) (f32.const -0)) (i32.const 7))
(assert_return (invoke "g") (f32.const nan:canonical) (f64.const nan:arithmetic) (ref.func) (ref.null extern)
               (ref.extern 0) (i64.const -1))
(assert_trap (invoke "h" (ref.null func) (ref.extern 5)) "unreachable")
(assert_exhaustion (invoke "loop") "call stack exhausted")
(get $M "glob")
)wast");
  ASSERT_EQ(s.commands.size(), 8u);
  const Command& m = s.commands[0];
  EXPECT_EQ(m.kind, Command::Kind::Module);
  EXPECT_EQ(m.line, 2u);
  EXPECT_EQ(m.name, "$M");
  EXPECT_TRUE(m.has_module);
  EXPECT_EQ(m.module.kind, ModuleSource::Kind::Binary);
  EXPECT_GT(m.module.bytes.size(), 8u);

  EXPECT_EQ(s.commands[1].kind, Command::Kind::Register);
  EXPECT_EQ(s.commands[1].register_as, "m");
  EXPECT_EQ(s.commands[1].name, "$M");

  const Command& inv = s.commands[2];
  EXPECT_EQ(inv.kind, Command::Kind::Action);
  EXPECT_EQ(inv.action.module, "$M");
  EXPECT_EQ(inv.action.field, "f");
  ASSERT_EQ(inv.action.args.size(), 2u);
  EXPECT_EQ(inv.action.args[0], Value::i32(0xFFFFFFFF));
  EXPECT_EQ(inv.action.args[1], Value::f32_bits(0x3FC00000));

  const Command& ret = s.commands[3];
  EXPECT_EQ(ret.kind, Command::Kind::AssertReturn);
  EXPECT_FALSE(ret.action.module.has_value());
  EXPECT_EQ(ret.action.args[1], Value::f32_bits(0x80000000));
  ASSERT_EQ(ret.expected.size(), 1u);
  EXPECT_EQ(ret.expected[0].kind, ExpectedValue::Kind::Exact);
  EXPECT_EQ(ret.expected[0].value, Value::i32(7));

  const auto& ex = s.commands[4].expected;
  ASSERT_EQ(ex.size(), 6u);
  EXPECT_EQ(ex[0].kind, ExpectedValue::Kind::CanonicalNan);
  EXPECT_EQ(ex[0].value.type, ValType::F32);
  EXPECT_EQ(ex[1].kind, ExpectedValue::Kind::ArithmeticNan);
  EXPECT_EQ(ex[1].value.type, ValType::F64);
  EXPECT_EQ(ex[2].kind, ExpectedValue::Kind::AnyFuncRef);
  EXPECT_EQ(ex[3].value, Value::null(ValType::ExternRef));
  EXPECT_EQ(ex[4].value, Value::externref(1));  // payload + 1, as the JSON front end does
  EXPECT_EQ(ex[5].value, Value::i64(~std::uint64_t{0}));

  const Command& trap = s.commands[5];
  EXPECT_EQ(trap.kind, Command::Kind::AssertTrap);
  EXPECT_FALSE(trap.has_module);
  EXPECT_EQ(trap.text, "unreachable");
  EXPECT_EQ(trap.action.args[0], Value::null(ValType::FuncRef));
  EXPECT_EQ(trap.action.args[1], Value::externref(6));

  EXPECT_EQ(s.commands[6].kind, Command::Kind::AssertExhaustion);
  EXPECT_EQ(s.commands[7].action.kind, script::Action::Kind::Get);
  EXPECT_EQ(s.commands[7].line, 10u);
}

TEST(Wast, ModuleAssertions) {
  const auto s = parse(R"wast(
(assert_malformed (module quote "(func (i32.const))") "unexpected token")
(assert_malformed (module binary "\00asm") "unexpected end")
(assert_invalid (module (func (result i32))) "type mismatch")
(assert_unlinkable (module (import "x" "y" (func))) "unknown import")
(assert_uninstantiable (module (func $s unreachable) (start $s)) "unreachable")
(assert_trap (module (func $s unreachable) (start $s)) "unreachable")
(module $Q quote "(func)")
(assert_malformed (module (func (bogus))) "unknown operator")
)wast");
  ASSERT_EQ(s.commands.size(), 8u);
  EXPECT_EQ(s.commands[0].kind, Command::Kind::AssertMalformed);
  EXPECT_EQ(s.commands[0].module.kind, ModuleSource::Kind::Text);
  EXPECT_EQ(s.commands[0].module.text, "(func (i32.const))");
  EXPECT_EQ(s.commands[0].text, "unexpected token");
  EXPECT_EQ(s.commands[1].module.kind, ModuleSource::Kind::Binary);
  EXPECT_EQ(s.commands[1].module.bytes, (std::vector<std::uint8_t>{0x00, 'a', 's', 'm'}));
  EXPECT_EQ(s.commands[2].kind, Command::Kind::AssertInvalid);
  EXPECT_EQ(s.commands[2].module.kind, ModuleSource::Kind::Binary);
  EXPECT_EQ(s.commands[3].kind, Command::Kind::AssertUnlinkable);
  EXPECT_EQ(s.commands[4].kind, Command::Kind::AssertUninstantiable);
  EXPECT_EQ(s.commands[5].kind, Command::Kind::AssertTrap);
  EXPECT_TRUE(s.commands[5].has_module);
  EXPECT_EQ(s.commands[6].name, "$Q");
  EXPECT_EQ(s.commands[6].module.kind, ModuleSource::Kind::Text);
  // An ordinary module that does not compile is handed over as text, for the runner to judge.
  EXPECT_EQ(s.commands[7].module.kind, ModuleSource::Kind::Text);
  EXPECT_EQ(s.commands[7].module.text, "(module (func (bogus)))");
  auto compiled = text_compiler()(s.commands[7].module.text);
  ASSERT_FALSE(compiled.has_value());
  EXPECT_EQ(compiled.error(), "unknown operator bogus at 1:16");
}

TEST(Wast, UntypedNullResultOfThe30Scripts) {
  // 3.0 scripts write `(ref.null)` for a null reference of any type; an argument needs its type.
  const auto s = parse("(module (func (export \"f\") (result funcref) (ref.null func)))\n"
                       "(assert_return (invoke \"f\") (ref.null))");
  ASSERT_EQ(s.commands.size(), 2u);
  ASSERT_EQ(s.commands[1].expected.size(), 1u);
  EXPECT_EQ(s.commands[1].expected[0].kind, ExpectedValue::Kind::AnyNullRef);
  EXPECT_FALSE(parse_wast("(invoke \"f\" (ref.null))", "test.wast").has_value());
}

// An invoke's argument fits a parameter by subtyping: a null's type is its hierarchy's bottom, so
// (ref.null none) or (ref.null any) goes to a (ref null $struct); a null never goes to a
// non-nullable parameter, nor a null or an extern reference to another hierarchy.
TEST(Wast, InvokeArgumentsFitTheirParametersBySubtyping) {
  const auto s = parse(R"wast(
(module
  (type $t (struct (field i32)))
  (type $f (func))
  (func (export "is_null") (param (ref null $t)) (result i32) (ref.is_null (local.get 0)))
  (func (export "func_null") (param (ref null $f)) (result i32) (ref.is_null (local.get 0)))
  (func (export "non_null") (param (ref $t)) (result i32) (i32.const 0))
  (func (export "any") (param anyref) (result i32) (ref.is_null (local.get 0)))
  (func (export "extern") (param (ref extern)) (result i32) (i32.const 2)))
(assert_return (invoke "is_null" (ref.null none)) (i32.const 1))
(assert_return (invoke "is_null" (ref.null any)) (i32.const 1))
(assert_return (invoke "is_null" (ref.null struct)) (i32.const 1))
(assert_return (invoke "func_null" (ref.null nofunc)) (i32.const 1))
(assert_return (invoke "func_null" (ref.null func)) (i32.const 1))
(assert_return (invoke "any" (ref.host 1)) (i32.const 0))
(assert_return (invoke "extern" (ref.extern 1)) (i32.const 2))
(assert_return (invoke "is_null" (ref.null func)) (i32.const 1))
(assert_return (invoke "func_null" (ref.null none)) (i32.const 1))
(assert_return (invoke "non_null" (ref.null none)) (i32.const 0))
(assert_return (invoke "is_null" (ref.extern 1)) (i32.const 0))
(assert_return (invoke "any" (ref.null extern)) (i32.const 1))
(assert_return (invoke "extern" (ref.null extern)) (i32.const 2))
)wast");
  std::ostringstream log;
  script::RunOptions options;
  options.text_compiler = text_compiler();
  const script::Counts counts = script::run_script(s, options, log);
  EXPECT_EQ(counts.passed, 8u) << log.str();
  EXPECT_EQ(counts.failed, 6u) << log.str();
  for (const char* refused : {"is_null\" has the wrong", "func_null\" has the wrong", "non_null\" has the wrong",
                              "any\" has the wrong", "extern\" has the wrong"})
    EXPECT_NE(log.str().find(refused), std::string::npos) << refused << '\n' << log.str();
}

TEST(Wast, ModuleDefinitionsAndInstances) {
  const auto s = parse(R"wast(
(module definition $M (func))
(module definition (module binary "\00asm" "\01\00\00\00"))
(module instance $I $M)
(module instance)
)wast");
  ASSERT_EQ(s.commands.size(), 4u);
  EXPECT_EQ(s.commands[0].kind, Command::Kind::ModuleDefinition);
  EXPECT_EQ(s.commands[0].name, "$M");
  EXPECT_TRUE(s.commands[0].has_module);
  EXPECT_EQ(s.commands[1].kind, Command::Kind::ModuleDefinition);
  EXPECT_FALSE(s.commands[1].name.has_value());
  EXPECT_EQ(s.commands[2].kind, Command::Kind::ModuleInstance);
  EXPECT_EQ(s.commands[2].name, "$I");
  EXPECT_EQ(s.commands[2].definition, "$M");
  EXPECT_FALSE(s.commands[2].has_module);
  EXPECT_EQ(s.commands[3].kind, Command::Kind::ModuleInstance);
  EXPECT_FALSE(s.commands[3].definition.has_value());
}

TEST(Wast, EitherResultListsItsAlternatives) {
  const auto s = parse("(assert_return (invoke \"f\") (either (i32.const 1) (i32.const 2)) (i64.const 3))");
  ASSERT_EQ(s.commands.size(), 1u);
  ASSERT_EQ(s.commands[0].expected.size(), 2u);
  const ExpectedValue& e = s.commands[0].expected[0];
  EXPECT_EQ(e.kind, ExpectedValue::Kind::Either);
  ASSERT_EQ(e.alternatives.size(), 2u);
  EXPECT_EQ(e.alternatives[1].value.bits, 2u);
  EXPECT_FALSE(parse_wast("(assert_return (invoke \"f\") (either))", "test.wast").has_value());
}

TEST(Wast, BareModuleFieldsAreOneModule) {
  const auto s = parse("(func) (memory 0) (func (export \"f\"))");
  ASSERT_EQ(s.commands.size(), 1u);
  EXPECT_EQ(s.commands[0].kind, Command::Kind::Module);
  EXPECT_EQ(s.commands[0].module.kind, ModuleSource::Kind::Binary);
}

TEST(Wast, ScriptErrors) {
  auto r = parse_wast("(module)\n(assert_return (invoke \"f\" (i32.const 1.5)))", "x.wast");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().line, 2u);
  EXPECT_EQ(r.error().column, 39u);
  EXPECT_EQ(r.error().message.rfind("unexpected token", 0), 0u) << r.error().message;

  // A module that does not compile and never closes is a script error, at the module's error.
  r = parse_wast("(module (func (bogus)) (func", "x.wast");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "unknown operator bogus");
  EXPECT_EQ(r.error().column, 16u);

  r = parse_wast("(frobnicate)", "x.wast");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "unknown operator frobnicate");

  r = parse_wast("(assert_return (invoke \"f\") (v128.const i32x4 0 0 0))", "x.wast");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "wrong number of lane literals: i32x4 takes 4");
}

TEST(Wast, V128Values) {
  const auto s = parse(R"wast(
(assert_return (invoke "f" (v128.const i32x4 1 2 3 -1))
               (v128.const i16x8 1 2 3 4 5 6 7 0x8000)
               (v128.const f32x4 1 nan:canonical -inf nan:arithmetic)
               (v128.const f64x2 nan:0x1 -0))
)wast");
  ASSERT_EQ(s.commands.size(), 1u);
  const Command& c = s.commands[0];
  ASSERT_EQ(c.action.args.size(), 1u);
  EXPECT_EQ(c.action.args[0].type, ValType::V128);
  EXPECT_EQ(c.action.args[0].bits, 0x0000000200000001ull);
  EXPECT_EQ(c.action.args[0].bits_hi, 0xFFFFFFFF00000003ull);
  ASSERT_EQ(c.expected.size(), 3u);
  // Integer shapes: exact bytes, no lane list.
  EXPECT_EQ(c.expected[0].kind, ExpectedValue::Kind::Exact);
  EXPECT_EQ(c.expected[0].value.type, ValType::V128);
  EXPECT_EQ(c.expected[0].value.bits, 0x0004000300020001ull);
  EXPECT_EQ(c.expected[0].value.bits_hi, 0x8000000700060005ull);
  EXPECT_TRUE(c.expected[0].lanes.empty());
  // Float shapes: one entry per lane, NaN patterns per lane.
  const ExpectedValue& f = c.expected[1];
  EXPECT_EQ(f.lane_type_hint, ValType::F32);
  ASSERT_EQ(f.lanes.size(), 4u);
  EXPECT_EQ(f.lanes[0].kind, ExpectedValue::Kind::Exact);
  EXPECT_EQ(f.lanes[0].value.bits, 0x3F800000u);
  EXPECT_EQ(f.lanes[1].kind, ExpectedValue::Kind::CanonicalNan);
  EXPECT_EQ(f.lanes[2].value.bits, 0xFF800000u);
  EXPECT_EQ(f.lanes[3].kind, ExpectedValue::Kind::ArithmeticNan);
  const ExpectedValue& d = c.expected[2];
  EXPECT_EQ(d.lane_type_hint, ValType::F64);
  ASSERT_EQ(d.lanes.size(), 2u);
  EXPECT_EQ(d.lanes[0].value.bits, 0x7FF0000000000001ull);
  EXPECT_EQ(d.value.bits_hi, 0x8000000000000000ull);
  // NaN patterns are for results only.
  auto r = parse_wast("(invoke \"f\" (v128.const f32x4 nan:canonical 0 0 0))", "x.wast");
  EXPECT_FALSE(r.has_value());
}

}  // namespace
}  // namespace sprawling::wasm::text
