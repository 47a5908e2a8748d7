// wast2json JSON → Script: commands, values (decimal bit patterns, nan:canonical/arithmetic,
// references) and the module files they point at.
#include "wasm/script/json_script.hpp"

#include <nlohmann/json.hpp>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>

namespace sprawling::wasm::script {

namespace {

using nlohmann::json;

std::optional<ValType> parse_type(std::string_view s) {
  if (s == "i32") return ValType::I32;
  if (s == "i64") return ValType::I64;
  if (s == "f32") return ValType::F32;
  if (s == "f64") return ValType::F64;
  if (s == "v128") return ValType::V128;
  if (s == "funcref") return ValType::FuncRef;
  if (s == "externref") return ValType::ExternRef;
  return std::nullopt;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::expected<std::vector<std::uint8_t>, std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected("cannot open " + path.string());
  return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A value as an argument (`for_expected` false) or as an expected result.
std::expected<ExpectedValue, std::string> parse_value(const json& j, bool for_expected) {
  ExpectedValue out;
  const auto type = parse_type(j.value("type", ""));
  if (!type) return std::unexpected("unknown value type " + j.value("type", std::string("?")));
  out.value.type = *type;
  if (*type == ValType::V128) {
    // {"type": "v128", "lane_type": "i8"..."f64", "value": [lane, ...]}: lanes as unsigned
    // decimal bit patterns, lane 0 first; float lanes of a result may be NaN patterns.
    const std::string lane_type = j.value("lane_type", "");
    const unsigned width = lane_type == "i8" ? 8 : lane_type == "i16" ? 16 : (lane_type == "i64" || lane_type == "f64") ? 64 : 32;
    const bool is_float = lane_type == "f32" || lane_type == "f64";
    if (is_float) out.lane_type_hint = width == 64 ? ValType::F64 : ValType::F32;
    if (!j.contains("value") || !j.at("value").is_array() || j.at("value").size() != 128 / width)
      return std::unexpected("v128 value without " + std::to_string(128 / width) + " " + lane_type + " lanes");
    unsigned bit = 0;
    for (const json& lj : j.at("value")) {
      ExpectedValue lane;
      lane.value.type = width == 64 ? ValType::F64 : ValType::F32;
      const std::string v = lj.get<std::string>();
      if (is_float && for_expected && (v == "nan:canonical" || v == "nan:arithmetic")) {
        lane.kind = v == "nan:canonical" ? ExpectedValue::Kind::CanonicalNan : ExpectedValue::Kind::ArithmeticNan;
      } else {
        const auto bits = parse_u64(v);
        if (!bits) return std::unexpected("bad v128 lane " + v);
        const std::uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
        lane.value.bits = *bits & mask;
        (bit < 64 ? out.value.bits : out.value.bits_hi) |= (*bits & mask) << (bit % 64);
      }
      if (is_float) out.lanes.push_back(lane);
      bit += width;
    }
    return out;
  }
  if (!j.contains("value")) {
    if (*type == ValType::FuncRef && for_expected) {
      out.kind = ExpectedValue::Kind::AnyFuncRef;
      return out;
    }
    return std::unexpected("value without a value field");
  }
  const std::string v = j.at("value").get<std::string>();
  if (v == "nan:canonical") {
    out.kind = ExpectedValue::Kind::CanonicalNan;
    return out;
  }
  if (v == "nan:arithmetic") {
    out.kind = ExpectedValue::Kind::ArithmeticNan;
    return out;
  }
  if (v == "null") {
    out.value.bits = 0;
    return out;
  }
  const auto bits = parse_u64(v);
  if (!bits) return std::unexpected("bad value " + v);
  // Host-side externref payloads are shifted by one so that `ref.extern 0` is not null.
  out.value.bits = *type == ValType::ExternRef ? *bits + 1 : *bits;
  return out;
}

std::expected<Action, std::string> parse_action(const json& j) {
  Action a;
  const std::string kind = j.value("type", "");
  if (kind == "invoke") {
    a.kind = Action::Kind::Invoke;
  } else if (kind == "get") {
    a.kind = Action::Kind::Get;
  } else {
    return std::unexpected("unknown action " + kind);
  }
  if (j.contains("module")) a.module = j.at("module").get<std::string>();
  a.field = j.value("field", "");
  if (j.contains("args")) {
    for (const json& arg : j.at("args")) {
      auto v = parse_value(arg, false);
      if (!v) return std::unexpected(v.error());
      a.args.push_back(v->value);
    }
  }
  return a;
}

std::expected<Command::Kind, std::string> parse_kind(std::string_view t) {
  if (t == "module") return Command::Kind::Module;
  if (t == "register") return Command::Kind::Register;
  if (t == "action") return Command::Kind::Action;
  if (t == "assert_return") return Command::Kind::AssertReturn;
  if (t == "assert_trap") return Command::Kind::AssertTrap;
  if (t == "assert_exhaustion") return Command::Kind::AssertExhaustion;
  if (t == "assert_invalid") return Command::Kind::AssertInvalid;
  if (t == "assert_malformed") return Command::Kind::AssertMalformed;
  if (t == "assert_unlinkable") return Command::Kind::AssertUnlinkable;
  if (t == "assert_uninstantiable") return Command::Kind::AssertUninstantiable;
  return std::unexpected("unknown command " + std::string(t));
}

}  // namespace

std::expected<Script, std::string> load_json_script(const std::string& json_path) {
  const std::filesystem::path path(json_path);
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error());
  const json doc = json::parse(text->begin(), text->end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("commands")) {
    return std::unexpected(json_path + ": not a wast2json command list");
  }
  Script script;
  // Logs name the .wast by its base name, as wast2json recorded it.
  script.file = std::filesystem::path(doc.value("source_filename", path.filename().string())).filename().string();
  for (const json& c : doc.at("commands")) {
    const std::string type = c.value("type", "");
    auto kind = parse_kind(type);
    if (!kind) return std::unexpected(json_path + ": " + kind.error());
    Command cmd;
    cmd.kind = *kind;
    cmd.line = c.value("line", std::size_t{0});
    if (c.contains("name")) cmd.name = c.at("name").get<std::string>();
    if (c.contains("as")) cmd.register_as = c.at("as").get<std::string>();
    if (c.contains("text")) cmd.text = c.at("text").get<std::string>();
    if (c.contains("filename")) {
      const std::string file = c.at("filename").get<std::string>();
      auto bytes = read_file(path.parent_path() / file);
      if (!bytes) return std::unexpected(json_path + ": " + bytes.error());
      if (c.value("module_type", "binary") == "text") {
        cmd.module.kind = ModuleSource::Kind::Text;
        cmd.module.text.assign(bytes->begin(), bytes->end());
      } else {
        cmd.module.kind = ModuleSource::Kind::Binary;
        cmd.module.bytes = std::move(*bytes);
      }
      cmd.has_module = true;
    }
    if (c.contains("action")) {
      auto action = parse_action(c.at("action"));
      if (!action) return std::unexpected(json_path + ":" + std::to_string(cmd.line) + ": " + action.error());
      cmd.action = std::move(*action);
    }
    // assert_trap / assert_exhaustion list only result types; just assert_return and action
    // carry values to compare.
    if ((cmd.kind == Command::Kind::AssertReturn || cmd.kind == Command::Kind::Action) && c.contains("expected")) {
      for (const json& e : c.at("expected")) {
        auto v = parse_value(e, true);
        if (!v) return std::unexpected(json_path + ":" + std::to_string(cmd.line) + ": " + v.error());
        cmd.expected.push_back(std::move(*v));
      }
    }
    script.commands.push_back(std::move(cmd));
  }
  return script;
}

}  // namespace sprawling::wasm::script
