// load_json_script: wast2json's command list and the module files beside it become a Script.
#include "wasm/script/json_script.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sprawling::wasm::script {
namespace {

namespace fs = std::filesystem;

class JsonScript : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("json_script_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& content) {
    std::ofstream(dir_ / name, std::ios::binary) << content;
  }
  fs::path dir_;
};

TEST_F(JsonScript, ReadsCommandsValuesAndModules) {
  write("t.0.wasm", std::string("\0asm\1\0\0\0", 8));
  write("t.1.wat", "(func i32.bogus)");
  write("t.json", R"({"source_filename": "/somewhere/t.wast", "commands": [
    {"type": "module", "line": 1, "name": "$m", "filename": "t.0.wasm"},
    {"type": "register", "line": 2, "name": "$m", "as": "reg"},
    {"type": "assert_return", "line": 3, "action": {"type": "invoke", "module": "$m", "field": "f",
      "args": [{"type": "i32", "value": "4294967295"}, {"type": "externref", "value": "0"},
               {"type": "funcref", "value": "null"}]},
      "expected": [{"type": "f32", "value": "nan:canonical"}, {"type": "f64", "value": "nan:arithmetic"},
                   {"type": "externref", "value": "7"}, {"type": "funcref"}, {"type": "externref", "value": "null"}]},
    {"type": "assert_trap", "line": 4, "action": {"type": "get", "field": "g"}, "text": "unreachable",
      "expected": [{"type": "i32"}]},
    {"type": "assert_malformed", "line": 5, "filename": "t.1.wat", "text": "unknown operator", "module_type": "text"}
  ]})");
  auto s = load_json_script((dir_ / "t.json").string());
  ASSERT_TRUE(s.has_value()) << s.error();
  EXPECT_EQ(s->file, "t.wast");
  ASSERT_EQ(s->commands.size(), 5u);

  const Command& m = s->commands[0];
  EXPECT_EQ(m.kind, Command::Kind::Module);
  EXPECT_EQ(m.name, "$m");
  EXPECT_EQ(m.module.kind, ModuleSource::Kind::Binary);
  EXPECT_EQ(m.module.bytes.size(), 8u);

  EXPECT_EQ(s->commands[1].kind, Command::Kind::Register);
  EXPECT_EQ(s->commands[1].register_as, "reg");

  const Command& r = s->commands[2];
  EXPECT_EQ(r.line, 3u);
  EXPECT_EQ(r.action.module, "$m");
  ASSERT_EQ(r.action.args.size(), 3u);
  EXPECT_EQ(r.action.args[0], Value::i32(0xFFFF'FFFFu));
  EXPECT_EQ(r.action.args[1], Value::externref(1));  // payload 0 is carried as 1
  EXPECT_EQ(r.action.args[2], Value::null(ValType::FuncRef));
  ASSERT_EQ(r.expected.size(), 5u);
  EXPECT_EQ(r.expected[0].kind, ExpectedValue::Kind::CanonicalNan);
  EXPECT_EQ(r.expected[0].value.type, ValType::F32);
  EXPECT_EQ(r.expected[1].kind, ExpectedValue::Kind::ArithmeticNan);
  EXPECT_EQ(r.expected[2].value, Value::externref(8));
  EXPECT_EQ(r.expected[3].kind, ExpectedValue::Kind::AnyFuncRef);
  EXPECT_EQ(r.expected[4].value, Value::null(ValType::ExternRef));

  const Command& t = s->commands[3];
  EXPECT_EQ(t.action.kind, Action::Kind::Get);
  EXPECT_EQ(t.text, "unreachable");
  EXPECT_TRUE(t.expected.empty());

  const Command& text = s->commands[4];
  EXPECT_EQ(text.module.kind, ModuleSource::Kind::Text);
  EXPECT_EQ(text.module.text, "(func i32.bogus)");
}

TEST_F(JsonScript, ReportsProblems) {
  EXPECT_FALSE(load_json_script((dir_ / "absent.json").string()).has_value());
  write("bad.json", "{ not json");
  EXPECT_FALSE(load_json_script((dir_ / "bad.json").string()).has_value());
  write("missing.json", R"({"commands": [{"type": "module", "line": 1, "filename": "nope.wasm"}]})");
  const auto r = load_json_script((dir_ / "missing.json").string());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("nope.wasm"), std::string::npos);
  write("kind.json", R"({"commands": [{"type": "assert_something", "line": 1}]})");
  EXPECT_FALSE(load_json_script((dir_ / "kind.json").string()).has_value());
}

}  // namespace
}  // namespace sprawling::wasm::script
