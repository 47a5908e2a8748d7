// run_script and validate_script: every assertion kind passes when it should and is counted
// as a failure (with file:line) when it should not; spectest imports; register; skipping.
#include "wasm/script/script.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <initializer_list>
#include <sstream>

namespace sprawling::wasm::script {
namespace {

using Bytes = std::vector<std::uint8_t>;

// "\0asm" v1 followed by sections (id, content); sizes are one-byte LEBs (content < 128).
Bytes module(std::initializer_list<std::pair<std::uint8_t, Bytes>> sections) {
  Bytes out = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
  for (const auto& [id, content] : sections) {
    out.push_back(id);
    out.push_back(static_cast<std::uint8_t>(content.size()));
    out.insert(out.end(), content.begin(), content.end());
  }
  return out;
}

// (module
//   (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
//   (func (export "trap") unreachable)
//   (func (export "nan") (result f32) f32.const nan)
//   (func (export "id") (param externref) (result externref) local.get 0)
//   (global (export "g") i32 (i32.const 7)))
Bytes m1() {
  return module({
      {1,
       {0x04, 0x60, 0x02, 0x7F, 0x7F, 0x01, 0x7F, 0x60, 0x00, 0x00, 0x60, 0x00, 0x01, 0x7D, 0x60, 0x01, 0x6F, 0x01,
        0x6F}},
      {3, {0x04, 0x00, 0x01, 0x02, 0x03}},
      {6, {0x01, 0x7F, 0x00, 0x41, 0x07, 0x0B}},
      {7, {0x05, 0x03, 'a', 'd',  'd',  0x00, 0x00, 0x04, 't',  'r',  'a',  'p', 0x00, 0x01, 0x03,
           'n',  'a',  'n', 0x00, 0x02, 0x02, 'i',  'd',  0x00, 0x03, 0x01, 'g', 0x03, 0x00}},
      {10, {0x04, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6A, 0x0B, 0x03, 0x00, 0x00, 0x0B,
            0x07, 0x00, 0x43, 0x00, 0x00, 0xC0, 0x7F, 0x0B, 0x04, 0x00, 0x20, 0x00, 0x0B}},
  });
}

// (module (import "spectest" "global_i32" (global i32)) (func (export "get") (result i32) global.get 0))
Bytes m2() {
  return module({
      {1, {0x01, 0x60, 0x00, 0x01, 0x7F}},
      {2, {0x01, 0x08, 's', 'p', 'e', 'c', 't', 'e', 's', 't',  0x0A, 'g',
           'l',  'o',  'b', 'a', 'l', '_', 'i', '3', '2', 0x03, 0x7F, 0x00}},
      {3, {0x01, 0x00}},
      {7, {0x01, 0x03, 'g', 'e', 't', 0x00, 0x00}},
      {10, {0x01, 0x04, 0x00, 0x23, 0x00, 0x0B}},
  });
}

// (module (import "m1" "add" (func (param i32 i32) (result i32)))
//         (func (export "five") (result i32) i32.const 2 i32.const 3 call 0))
Bytes m3() {
  return module({
      {1, {0x02, 0x60, 0x02, 0x7F, 0x7F, 0x01, 0x7F, 0x60, 0x00, 0x01, 0x7F}},
      {2, {0x01, 0x02, 'm', '1', 0x03, 'a', 'd', 'd', 0x00, 0x00}},
      {3, {0x01, 0x01}},
      {7, {0x01, 0x04, 'f', 'i', 'v', 'e', 0x00, 0x01}},
      {10, {0x01, 0x08, 0x00, 0x41, 0x02, 0x41, 0x03, 0x10, 0x00, 0x0B}},
  });
}

// (module (import "nowhere" "f" (func)))
Bytes unlinkable() {
  return module(
      {{1, {0x01, 0x60, 0x00, 0x00}}, {2, {0x01, 0x07, 'n', 'o', 'w', 'h', 'e', 'r', 'e', 0x01, 'f', 0x00, 0x00}}});
}

// (module (import "a" "b" (func (type 0)))) with no type section: invalid, "unknown type 0".
Bytes unknown_type() {
  return module({{2, {0x01, 0x01, 'a', 0x01, 'b', 0x00, 0x00}}});
}

Command module_command(Bytes bytes, std::optional<std::string> name = std::nullopt) {
  Command c;
  c.kind = Command::Kind::Module;
  c.module.bytes = std::move(bytes);
  c.has_module = true;
  c.name = std::move(name);
  return c;
}

Command invoke(Command::Kind kind, std::string field, std::vector<Value> args, std::vector<ExpectedValue> expected = {},
               std::string text = {}) {
  Command c;
  c.kind = kind;
  c.action.field = std::move(field);
  c.action.args = std::move(args);
  c.expected = std::move(expected);
  c.text = std::move(text);
  return c;
}

Command with_module(Command::Kind kind, Bytes bytes, std::string text) {
  Command c;
  c.kind = kind;
  c.module.bytes = std::move(bytes);
  c.has_module = true;
  c.text = std::move(text);
  return c;
}

ExpectedValue exact(Value v) {
  return ExpectedValue{ExpectedValue::Kind::Exact, v, std::nullopt, {}, {}};
}
ExpectedValue nan_of(ExpectedValue::Kind k, ValType t) {
  return ExpectedValue{k, Value{t, 0, 0}, std::nullopt, {}, {}};
}
ExpectedValue either(std::vector<ExpectedValue> alternatives) {
  ExpectedValue e;
  e.kind = ExpectedValue::Kind::Either;
  e.value.type = alternatives.front().value.type;
  e.alternatives = std::move(alternatives);
  return e;
}

Script numbered(std::vector<Command> commands) {
  Script s;
  s.file = "test.wast";
  for (std::size_t i = 0; i < commands.size(); ++i) commands[i].line = i + 1;
  s.commands = std::move(commands);
  return s;
}

TEST(RunScript, EverythingRightPasses) {
  Command get;
  get.kind = Command::Kind::AssertReturn;
  get.action.kind = Action::Kind::Get;
  get.action.field = "g";
  get.expected = {exact(Value::i32(7))};
  Command reg;
  reg.kind = Command::Kind::Register;
  reg.name = "$m1";
  reg.register_as = "m1";
  const Script s = numbered({
      module_command(m1(), "$m1"),
      invoke(Command::Kind::AssertReturn, "add", {Value::i32(1), Value::i32(2)}, {exact(Value::i32(3))}),
      invoke(Command::Kind::AssertTrap, "trap", {}, {}, "unreachable"),
      invoke(Command::Kind::AssertReturn, "nan", {}, {nan_of(ExpectedValue::Kind::CanonicalNan, ValType::F32)}),
      invoke(Command::Kind::AssertReturn, "nan", {}, {nan_of(ExpectedValue::Kind::ArithmeticNan, ValType::F32)}),
      // externref 5 travels as payload 6 both ways
      invoke(Command::Kind::AssertReturn, "id", {Value::externref(6)}, {exact(Value::externref(6))}),
      invoke(Command::Kind::AssertReturn, "id", {Value::null(ValType::ExternRef)},
             {exact(Value::null(ValType::ExternRef))}),
      get,
      reg,
      module_command(m3()),
      invoke(Command::Kind::AssertReturn, "five", {}, {exact(Value::i32(5))}),
      module_command(m2()),
      invoke(Command::Kind::AssertReturn, "get", {}, {exact(Value::i32(666))}),
      with_module(Command::Kind::AssertUnlinkable, unlinkable(), "unknown import"),
      with_module(Command::Kind::AssertInvalid, unknown_type(), "unknown type"),
      with_module(Command::Kind::AssertMalformed, {0x00, 0x61, 0x73, 0x6D, 0x02, 0x00, 0x00, 0x00},
                  "unknown binary version"),
  });
  std::ostringstream log;
  const Counts c = run_script(s, RunOptions{}, log);
  EXPECT_EQ(c.failed, 0u) << log.str();
  EXPECT_EQ(c.passed, s.commands.size());
  EXPECT_EQ(c.skipped, 0u);
}

// (either …) results (3.0 scripts, relaxed SIMD): one matching alternative passes, none fails.
TEST(RunScript, EitherPassesWhenOneAlternativeMatches) {
  const Script s = numbered({
      module_command(m1()),
      invoke(Command::Kind::AssertReturn, "add", {Value::i32(1), Value::i32(2)},
             {either({exact(Value::i32(4)), exact(Value::i32(3))})}),
      invoke(Command::Kind::AssertReturn, "nan", {}, {either({exact(Value::f32_bits(0)),
                                                              nan_of(ExpectedValue::Kind::CanonicalNan, ValType::F32)})}),
      invoke(Command::Kind::AssertReturn, "add", {Value::i32(1), Value::i32(2)},
             {either({exact(Value::i32(4)), exact(Value::i32(5))})}),
  });
  std::ostringstream log;
  const Counts c = run_script(s, RunOptions{}, log);
  EXPECT_EQ(c.passed, 3u) << log.str();
  EXPECT_EQ(c.failed, 1u) << log.str();
  EXPECT_NE(log.str().find("either(i32:0x4 i32:0x5)"), std::string::npos) << log.str();
}

TEST(RunScript, EveryWrongExpectationFails) {
  const Script s = numbered({
      module_command(m1()),
      invoke(Command::Kind::AssertReturn, "add", {Value::i32(1), Value::i32(2)}, {exact(Value::i32(4))}),
      invoke(Command::Kind::AssertTrap, "trap", {}, {}, "integer overflow"),
      invoke(Command::Kind::AssertTrap, "add", {Value::i32(1), Value::i32(2)}, {}, "unreachable"),
      invoke(Command::Kind::AssertExhaustion, "trap", {}, {}, "unreachable"),
      invoke(Command::Kind::AssertReturn, "nan", {}, {exact(Value::f32_bits(0))}),
      invoke(Command::Kind::AssertReturn, "add", {Value::i32(1), Value::i32(2)},
             {nan_of(ExpectedValue::Kind::CanonicalNan, ValType::F32)}),
      invoke(Command::Kind::AssertReturn, "id", {Value::externref(6)}, {exact(Value::externref(5))}),
      invoke(Command::Kind::AssertReturn, "missing", {}, {}),
      with_module(Command::Kind::AssertInvalid, m1(), "type mismatch"),
      with_module(Command::Kind::AssertInvalid, unknown_type(), "unknown function"),
      with_module(Command::Kind::AssertMalformed, unknown_type(), "unknown type"),  // invalid, not malformed
      with_module(Command::Kind::AssertUnlinkable, m1(), "unknown import"),
  });
  std::ostringstream log;
  const Counts c = run_script(s, RunOptions{}, log);
  EXPECT_EQ(c.passed, 1u) << log.str();  // the module
  EXPECT_EQ(c.failed, s.commands.size() - 1) << log.str();
  EXPECT_NE(log.str().find("test.wast:2: assert_return: FAILED: expected [i32:0x4], got [i32:0x3]"), std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("expected trap \"integer overflow\", got trap \"unreachable\""), std::string::npos)
      << log.str();
}

TEST(RunScript, TextModulesNeedATextFrontEnd) {
  Command text;
  text.kind = Command::Kind::AssertMalformed;
  text.module.kind = ModuleSource::Kind::Text;
  text.module.text = "(func i32.bogus)";
  text.has_module = true;
  text.text = "unknown operator";
  const Script s = numbered({text});
  std::ostringstream log;
  EXPECT_EQ(run_script(s, RunOptions{}, log).skipped, 1u);

  RunOptions options;
  options.text_compiler = [](std::string_view) -> std::expected<std::vector<std::uint8_t>, std::string> {
    return std::unexpected("unknown operator i32.bogus");
  };
  const Counts with = run_script(s, options, log);
  EXPECT_EQ(with.passed, 1u) << log.str();
  options.text_compiler = [](std::string_view) -> std::expected<std::vector<std::uint8_t>, std::string> {
    return std::unexpected("unexpected token");
  };
  EXPECT_EQ(run_script(s, options, log).failed, 1u);
}

// (module (func (export "f") (result i32) v128.const i32x4 0 0 0 0 v128.any_true)).
Bytes simd_module() {
  Bytes body = {0x00, 0xFD, 0x0C};
  body.insert(body.end(), 16, 0x00);
  body.insert(body.end(), {0xFD, 0x53, 0x0B});
  Bytes code = {0x01, static_cast<std::uint8_t>(body.size())};
  code.insert(code.end(), body.begin(), body.end());
  return module({{1, {0x01, 0x60, 0x00, 0x01, 0x7F}}, {3, {0x01, 0x00}}, {7, {0x01, 0x01, 'f', 0x00, 0x00}}, {10, code}});
}

// (module (func (export "v") (result v128) v128.const i32x4 1 0x7FC00000 3 0xFFC00001)).
Bytes simd_result_module() {
  Bytes body = {0x00, 0xFD, 0x0C, 1, 0, 0, 0, 0x00, 0x00, 0xC0, 0x7F, 3, 0, 0, 0, 0x01, 0x00, 0xC0, 0xFF, 0x0B};
  Bytes code = {0x01, static_cast<std::uint8_t>(body.size())};
  code.insert(code.end(), body.begin(), body.end());
  return module({{1, {0x01, 0x60, 0x00, 0x01, 0x7B}}, {3, {0x01, 0x00}}, {7, {0x01, 0x01, 'v', 0x00, 0x00}}, {10, code}});
}

TEST(RunScript, SimdModulesRun) {
  const Script s = numbered({module_command(simd_module()),
                             invoke(Command::Kind::AssertReturn, "f", {}, {exact(Value::i32(0))}),
                             with_module(Command::Kind::AssertInvalid, simd_module(), "type mismatch")});
  std::ostringstream log;
  const Counts c = run_script(s, RunOptions{}, log);
  EXPECT_EQ(c.passed, 2u) << log.str();
  EXPECT_EQ(c.failed, 1u) << log.str();
  // The SIMD module validates, so an assert_invalid on it fails as it should.
  EXPECT_NE(log.str().find("test.wast:3: assert_invalid: FAILED: expected a invalid module (\"type mismatch\"), it compiled"),
            std::string::npos)
      << log.str();
}

// A v128 result: bit for bit, or lane by lane (f32x4 / f64x2 lanes may expect NaN patterns).
TEST(RunScript, VectorResultsMatchBitsOrLanePatterns) {
  const Value bits{ValType::V128, 0x7FC0000000000001ULL, 0xFFC0000100000003ULL};
  auto lane = [](ExpectedValue::Kind kind, std::uint64_t b) {
    ExpectedValue e;
    e.kind = kind;
    e.value = Value::f32_bits(static_cast<std::uint32_t>(b));
    return e;
  };
  auto lanes = [&](ExpectedValue::Kind third, ExpectedValue::Kind fourth) {
    ExpectedValue e;
    e.value.type = ValType::V128;
    e.lane_type_hint = ValType::F32;
    e.lanes = {lane(ExpectedValue::Kind::Exact, 1), lane(ExpectedValue::Kind::CanonicalNan, 0),
               lane(third, 3), lane(fourth, 0)};
    return e;
  };
  using K = ExpectedValue::Kind;
  struct Case {
    ExpectedValue want;
    bool passes;
  };
  const std::vector<Case> cases = {
      {exact(bits), true},
      {exact(Value{ValType::V128, 0x7FC0000000000001ULL, 0xFFC0000100000004ULL}), false},
      {lanes(K::Exact, K::ArithmeticNan), true},  // 0xFFC00001 is an arithmetic NaN
      {lanes(K::Exact, K::CanonicalNan), false},  // … but not a canonical one
      {lanes(K::CanonicalNan, K::ArithmeticNan), false},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Script s = numbered({module_command(simd_result_module()),
                               invoke(Command::Kind::AssertReturn, "v", {}, {cases[i].want})});
    std::ostringstream log;
    const Counts c = run_script(s, RunOptions{}, log);
    EXPECT_EQ(c.failed, cases[i].passes ? 0u : 1u) << i << ": " << log.str();
  }
}

TEST(RunScript, LossyConversionAcceptsAnyInvalidMessage) {
  // select.wast:324's module is byte-identical to an untyped select: any invalid message passes.
  Script s;
  s.file = "select.wast";
  Command c = with_module(Command::Kind::AssertInvalid, unknown_type(), "invalid result arity");
  c.line = 324;
  s.commands = {c};
  std::ostringstream log;
  EXPECT_EQ(run_script(s, RunOptions{}, log).passed, 1u) << log.str();
  s.commands[0].line = 325;
  EXPECT_EQ(run_script(s, RunOptions{}, log).failed, 1u);
}

TEST(ValidateScript, ChecksModulesAndRejectionsOnly) {
  const Script s = numbered({
      module_command(m1()),
      invoke(Command::Kind::AssertReturn, "add", {Value::i32(1), Value::i32(2)}, {exact(Value::i32(4))}),  // not run
      with_module(Command::Kind::AssertInvalid, unknown_type(), "unknown type"),
      with_module(Command::Kind::AssertInvalid, unknown_type(), "type mismatch"),
      with_module(Command::Kind::AssertUninstantiable, m1(), "unreachable"),  // must only validate
  });
  std::ostringstream log;
  const Counts c = validate_script(s, RunOptions{}, log);
  EXPECT_EQ(c.passed, 3u) << log.str();
  EXPECT_EQ(c.failed, 1u) << log.str();
  EXPECT_EQ(c.skipped, 1u);
}

}  // namespace
}  // namespace sprawling::wasm::script
