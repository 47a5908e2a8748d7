// The spec testsuite through the text front end, one test per core/*.wast file:
//  - RoundTrip: every module the script carries (module commands and the module-carrying
//    assertions) compiles to the same bytes as Debian's wast2json, or to a module that decodes
//    to the same structure; the few deliberate differences are listed with their reason.
//  - Malformed: every text-format assert_malformed module (as wast2json extracted it) is
//    rejected with a message that starts with the testsuite's wording, and parse_wast extracted
//    the same text.
//  - SpecRun: the whole script runs in-process (parse_wast + run_script) with nothing failed or
//    skipped; it needs no wast2json.
#include "wasm/binary/decoder.hpp"
#include "wasm/script/script.hpp"
#include "wasm/text/wast.hpp"
#include "wasm/text/wat.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sprawling::wasm::text {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

const fs::path kCore = SPRAWLING_TESTSUITE_CORE;
const fs::path kReference = SPRAWLING_TEXT_WAST2JSON_DIR;

// Where our binary deliberately differs from wast2json's and neither decodes (both modules are
// assert_invalid ones), keyed by "file:line" of the command.
const std::map<std::string, std::string> kDeliberateDifferences = {
    {"memory_init:189",
     "data.drop with no data segment: we keep a data count section (0) so that validation reports the "
     "testsuite's \"unknown data segment\"; wabt leaves the section out"},
    {"memory_init:226",
     "memory.init with no data segment: data count section kept, as for memory_init:189"},
    {"select:323",
     "`select (result)` is the typed select with an empty type vector (0x1C 0x00, \"invalid result arity\"); "
     "wabt writes the untyped 0x1B"},
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> wast_stems() {
  std::vector<std::string> stems;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kCore, ec)) {
    if (entry.path().extension() == ".wast") stems.push_back(entry.path().stem().string());
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

std::string same_structure(const Module& a, const Module& b) {
  if (a.types != b.types) return "types";
  if (a.func_types != b.func_types) return "function types";
  if (a.imports.size() != b.imports.size()) return "imports";
  for (std::size_t i = 0; i < a.imports.size(); ++i) {
    const Import& x = a.imports[i];
    const Import& y = b.imports[i];
    if (x.module != y.module || x.name != y.name || x.kind != y.kind || x.type_index != y.type_index ||
        x.table != y.table || x.memory != y.memory || x.global != y.global) {
      return "import " + std::to_string(i);
    }
  }
  if (a.tables != b.tables || a.memories != b.memories || a.globals != b.globals) return "tables, memories or globals";
  if (a.exports.size() != b.exports.size()) return "exports";
  for (std::size_t i = 0; i < a.exports.size(); ++i) {
    if (a.exports[i].name != b.exports[i].name || a.exports[i].kind != b.exports[i].kind ||
        a.exports[i].index != b.exports[i].index) {
      return "export " + std::to_string(i);
    }
  }
  if (a.start != b.start) return "start";
  const auto same_expr = [](const ConstExpr& x, const ConstExpr& y) {
    return x.op == y.op && x.bits == y.bits && x.bits_hi == y.bits_hi && x.index == y.index && x.type == y.type;
  };
  if (a.global_inits.size() != b.global_inits.size()) return "global initialisers";
  for (std::size_t i = 0; i < a.global_inits.size(); ++i) {
    if (!same_expr(a.global_inits[i], b.global_inits[i])) return "global initialiser " + std::to_string(i);
  }
  if (a.elements.size() != b.elements.size()) return "element segments";
  for (std::size_t i = 0; i < a.elements.size(); ++i) {
    const ElementSegment& x = a.elements[i];
    const ElementSegment& y = b.elements[i];
    bool same = x.mode == y.mode && x.type == y.type && x.items.size() == y.items.size();
    if (same && x.mode == SegmentMode::Active) same = x.table_index == y.table_index && same_expr(x.offset, y.offset);
    for (std::size_t k = 0; same && k < x.items.size(); ++k) same = same_expr(x.items[k], y.items[k]);
    if (!same) return "element segment " + std::to_string(i);
  }
  if (a.datas.size() != b.datas.size()) return "data segments";
  for (std::size_t i = 0; i < a.datas.size(); ++i) {
    const DataSegment& x = a.datas[i];
    const DataSegment& y = b.datas[i];
    const auto xb = a.data_bytes(x);
    const auto yb = b.data_bytes(y);
    bool same = x.mode == y.mode && std::equal(xb.begin(), xb.end(), yb.begin(), yb.end());
    if (same && x.mode == SegmentMode::Active) same = x.memory_index == y.memory_index && same_expr(x.offset, y.offset);
    if (!same) return "data segment " + std::to_string(i);
  }
  if (a.code.size() != b.code.size()) return "function count";
  for (std::size_t i = 0; i < a.code.size(); ++i) {
    const FunctionBody& x = a.code[i];
    const FunctionBody& y = b.code[i];
    const auto xs = std::span(a.bytes).subspan(x.code_offset, x.code_size);
    const auto ys = std::span(b.bytes).subspan(y.code_offset, y.code_size);
    if (x.type_index != y.type_index || x.locals != y.locals || !std::equal(xs.begin(), xs.end(), ys.begin(), ys.end())) {
      return "code of function " + std::to_string(i);
    }
  }
  return {};
}

// The structural comparison the round trip falls back on: blind to encoding, not to content.
TEST(RoundTripComparison, SeesContentNotEncoding) {
  const Bytes a = *wat_to_binary("(func (export \"f\") (result i32) i32.const 1)");
  // The same module with the type section's size as a two-byte LEB (0x85 0x00 for 5).
  ASSERT_EQ(a[8], 0x01);
  ASSERT_EQ(a[9], 0x05);
  Bytes padded(a.begin(), a.begin() + 9);
  padded.push_back(0x85);
  padded.push_back(0x00);
  padded.insert(padded.end(), a.begin() + 10, a.end());
  const Bytes other = *wat_to_binary("(func (export \"f\") (result i32) i32.const 2)");
  auto ma = decode_and_validate(a);
  auto mp = decode_and_validate(padded);
  auto mo = decode_and_validate(other);
  ASSERT_TRUE(ma && mp && mo);
  EXPECT_NE(a, padded);
  EXPECT_EQ(same_structure(*ma, *mp), "");
  EXPECT_EQ(same_structure(*ma, *mo), "code of function 0");
}

class Testsuite : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const fs::path json = kReference / GetParam() / (GetParam() + ".json");
    if (!fs::exists(json)) GTEST_SKIP() << "no wast2json output at " << json << " (wast2json or the testsuite is missing)";
    doc_ = nlohmann::json::parse(read_text(json));
    // The 2.0 suite's modules as 2.0 (and wabt 1.0.32) encode them.
    auto parsed = parse_wast(read_text(kCore / (GetParam() + ".wast")), GetParam() + ".wast",
                             WatOptions{.function_references = false});
    ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
    script_ = std::move(*parsed);
    ASSERT_EQ(script_.commands.size(), doc_.at("commands").size()) << "parse_wast and wast2json disagree on the commands";
  }

  nlohmann::json doc_;
  script::Script script_;
};

TEST_P(Testsuite, RoundTrip) {
  std::size_t identical = 0;
  std::size_t equivalent = 0;
  std::size_t deliberate = 0;
  const auto& commands = doc_.at("commands");
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const auto& c = commands[i];
    if (!c.contains("filename") || c.value("module_type", "binary") != "binary") continue;
    const script::Command& cmd = script_.commands[i];
    const std::string where = GetParam() + ":" + std::to_string(cmd.line);
    Bytes ours;
    if (cmd.module.kind == script::ModuleSource::Kind::Binary) {
      ours = cmd.module.bytes;
    } else {
      // The 2.0 suite's text as 2.0 (and wabt 1.0.32) encodes it.
      auto compiled = wat_to_binary(cmd.module.text, WatOptions{.function_references = false});
      if (!compiled) {
        ADD_FAILURE() << where << ": our text front end rejects a module wast2json accepts: " << compiled.error().to_string();
        continue;
      }
      ours = std::move(*compiled);
    }
    const std::string ref_text = read_text(kReference / GetParam() / c.at("filename").get<std::string>());
    const Bytes reference(ref_text.begin(), ref_text.end());
    if (ours == reference) {
      ++identical;
      continue;
    }
    auto a = decode_and_validate(ours);
    auto b = decode_and_validate(reference);
    if (a && b) {
      const std::string diff = same_structure(*a, *b);
      EXPECT_TRUE(diff.empty()) << where << ": decodes differently from wast2json's binary: " << diff;
      ++equivalent;
    } else if (kDeliberateDifferences.contains(where)) {
      ++deliberate;
    } else {
      ADD_FAILURE() << where << ": bytes differ from wast2json's and do not both decode ("
                    << (a ? std::string("ours decodes") : "ours: " + a.error().message) << "; "
                    << (b ? std::string("theirs decodes") : "theirs: " + b.error().message) << ")";
    }
  }
  RecordProperty("identical", static_cast<int>(identical));
  RecordProperty("equivalent", static_cast<int>(equivalent));
  std::cout << "[ round trip ] " << GetParam() << ": " << identical << " byte-identical, " << equivalent
            << " equal after decoding, " << deliberate << " deliberate differences\n";
}

TEST_P(Testsuite, Malformed) {
  std::size_t rejected = 0;
  const auto& commands = doc_.at("commands");
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const auto& c = commands[i];
    if (c.value("module_type", "binary") != "text") continue;
    const script::Command& cmd = script_.commands[i];
    const std::string where = GetParam() + ":" + std::to_string(cmd.line);
    const std::string text = read_text(kReference / GetParam() / c.at("filename").get<std::string>());
    const std::string expected = c.at("text").get<std::string>();
    EXPECT_EQ(cmd.module.kind, script::ModuleSource::Kind::Text) << where;
    EXPECT_EQ(cmd.module.text, text) << where << ": parse_wast extracted different text";
    auto r = wat_to_binary(text, WatOptions{.memory64 = false});  // the 2.0 suite: 32-bit offsets and limits
    if (r) {
      ADD_FAILURE() << where << ": accepted a malformed module (expected \"" << expected << "\")";
      continue;
    }
    EXPECT_EQ(r.error().message.rfind(expected, 0), 0u)
        << where << ": expected \"" << expected << "\", got \"" << r.error().to_string() << "\"";
    ++rejected;
  }
  std::cout << "[ malformed  ] " << GetParam() << ": " << rejected << " text modules rejected\n";
}

// Needs only the .wast: this is how CI runs the spec suite, with no wast2json involved.
class SpecRun : public ::testing::TestWithParam<std::string> {};

TEST_P(SpecRun, File) {
  const fs::path wast = kCore / (GetParam() + ".wast");
  auto parsed = parse_wast(read_text(wast), GetParam() + ".wast");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
  std::ostringstream log;
  // The 2.0 suite: validated as 2.0 (3.0 reverses a few of its assertions, spec_json_runner.cpp).
  script::RunOptions options;
  options.features = Features::wasm2();
  const auto counts = run_wast_file(wast.string(), options, log);
  EXPECT_EQ(counts.failed, 0u) << log.str();
  EXPECT_EQ(counts.skipped, 0u) << log.str();
  EXPECT_EQ(counts.passed, parsed->commands.size()) << log.str();
  std::cout << "[ run        ] " << GetParam() << ": " << counts.passed << " passed, " << counts.failed << " failed\n";
}

// Says so when the per-file tests below have nothing to run on.
TEST(TestsuiteFiles, Found) {
  if (!fs::is_directory(kCore)) GTEST_SKIP() << "no spec testsuite at " << kCore << " (set SPRAWLING_TESTSUITE_DIR)";
  EXPECT_FALSE(wast_stems().empty()) << "no .wast files in " << kCore;
}

// Test names are C identifiers: "binary-leb128" → "binary_leb128".
std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Core, Testsuite, ::testing::ValuesIn(wast_stems()),
                         param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Testsuite);
INSTANTIATE_TEST_SUITE_P(Core, SpecRun, ::testing::ValuesIn(wast_stems()),
                         param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SpecRun);

}  // namespace
}  // namespace sprawling::wasm::text
