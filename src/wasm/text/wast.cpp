// WAST scripts: commands, actions and expected values in the spec interpreter's script syntax.
#include "wasm/text/wast.hpp"

#include "wasm/runtime/heap/gc_heap.hpp"

#include "wasm/text/lexer.hpp"
#include "wasm/text/module_parser.hpp"
#include "wasm/text/numbers.hpp"

#include <array>
#include <cstring>
#include <optional>

namespace sprawling::wasm::text {

namespace {

using script::Action;
using script::Command;
using script::ExpectedValue;
using script::ModuleSource;

template <typename T>
using Result = std::expected<T, TextError>;

class WastParser {
 public:
  WastParser(std::string_view source, const std::vector<Token>& tokens, const WatOptions& options)
      : source_(source), c_(tokens), options_(options) {}

  Result<script::Script> run(std::string file_name) {
    script::Script s;
    s.file = std::move(file_name);
    if (starts_with_module_field()) {
      // A script that is just module fields is one module (as the spec interpreter reads it).
      Command cmd;
      cmd.kind = Command::Kind::Module;
      cmd.line = c_.peek().line;
      cmd.has_module = true;
      auto bytes = compile_fields(c_, /*bare=*/true, options_, {});
      if (!bytes) return std::unexpected(std::move(bytes.error()));
      cmd.module.bytes = std::move(*bytes);
      s.commands.push_back(std::move(cmd));
      return s;
    }
    while (!c_.at(TokenKind::Eof)) {
      if (!c_.at(TokenKind::LParen)) return std::unexpected(unexpected(c_.peek(), "a command"));
      auto cmd = command();
      if (!cmd) return std::unexpected(std::move(cmd.error()));
      s.commands.push_back(std::move(*cmd));
    }
    return s;
  }

 private:
  bool starts_with_module_field() const {
    for (std::string_view kw : {"type", "import", "func", "table", "memory", "global", "export", "start", "elem", "data"}) {
      if (c_.at_form(kw)) return true;
    }
    return false;
  }

  Result<void> expect_rparen() {
    if (!c_.at(TokenKind::RParen)) return std::unexpected(unexpected(c_.peek(), "')'"));
    c_.next();
    return {};
  }

  // Skips the parenthesised form starting at its '(' (token index `start`); its source text,
  // or nothing when the input ends before it closes.
  std::optional<std::string_view> skip_form(std::size_t start) {
    c_.reset(start);
    const Token& open = c_.next();
    int depth = 1;
    const Token* last = &open;
    while (depth > 0 && !c_.at(TokenKind::Eof)) {
      last = &c_.next();
      if (last->kind == TokenKind::LParen) ++depth;
      if (last->kind == TokenKind::RParen) --depth;
    }
    if (depth > 0) return std::nullopt;
    const auto begin = static_cast<std::size_t>(open.text.data() - source_.data());
    const auto end = static_cast<std::size_t>(last->text.data() + last->text.size() - source_.data());
    return source_.substr(begin, end - begin);
  }

  // A module form → the command's module (and name).
  Result<void> module(Command& cmd) {
    const std::size_t start = c_.position();
    auto m = parse_module_form(c_, options_);
    cmd.has_module = true;
    if (!m) {
      // Not compilable as written: hand the text to the runner, which judges it (an
      // assert_malformed passes on the right message; anything else fails with the error).
      // The name, if any, is the token after `(module`.
      c_.reset(start);
      c_.next();
      c_.next();
      if (c_.at_keyword("definition")) {
        c_.next();
        if (cmd.kind == Command::Kind::Module) cmd.kind = Command::Kind::ModuleDefinition;
      }
      if (c_.at(TokenKind::Id)) cmd.name = std::string(c_.peek().text);
      const auto text = skip_form(start);
      if (!text) return std::unexpected(std::move(m.error()));
      cmd.module.kind = ModuleSource::Kind::Text;
      cmd.module.text = std::string(*text);
      return {};
    }
    if (!m->id.empty()) cmd.name = m->id;
    if (m->definition && cmd.kind == Command::Kind::Module) cmd.kind = Command::Kind::ModuleDefinition;
    switch (m->form) {
      case ModuleText::Form::Fields:
      case ModuleText::Form::Binary:
        cmd.module.kind = ModuleSource::Kind::Binary;
        cmd.module.bytes = std::move(m->bytes);
        break;
      case ModuleText::Form::Quote:
        cmd.module.kind = ModuleSource::Kind::Text;
        cmd.module.text = std::move(m->quote);
        break;
    }
    return {};
  }

  Result<std::string> take_string(const char* what) {
    if (!c_.at(TokenKind::String)) return std::unexpected(unexpected(c_.peek(), what));
    return string_bytes(c_.next());
  }

  // (i32.const 1), (ref.null func), (ref.extern 7), and in results (f32.const nan:canonical), (ref.func),
  // (ref.null) (any null reference).
  Result<ExpectedValue> value(bool result) {
    ExpectedValue out;
    c_.next();  // '('
    if (!c_.at(TokenKind::Keyword)) return std::unexpected(unexpected(c_.peek(), "a constant"));
    const Token& kw = c_.next();
    const std::string_view k = kw.text;
    if (k == "either" && result) return either();
    const Token& arg = c_.peek();
    auto number_error = [&](NumError e) {
      if (e == NumError::OutOfRange) return error_at(arg, "constant out of range: " + std::string(arg.text));
      return unexpected(arg, "a constant");
    };
    if (k == "i32.const" || k == "i64.const") {
      const bool is32 = k == "i32.const";
      auto v = parse_int(arg.text, is32 ? 32 : 64);
      if (arg.kind != TokenKind::Number || !v) return std::unexpected(number_error(v ? NumError::Malformed : v.error()));
      c_.next();
      out.value = is32 ? Value::i32(static_cast<std::uint32_t>(*v)) : Value::i64(*v);
    } else if (k == "f32.const" || k == "f64.const") {
      const bool is32 = k == "f32.const";
      out.value.type = is32 ? ValType::F32 : ValType::F64;
      if (result && (arg.text == "nan:canonical" || arg.text == "nan:arithmetic")) {
        out.kind = arg.text == "nan:canonical" ? ExpectedValue::Kind::CanonicalNan : ExpectedValue::Kind::ArithmeticNan;
        c_.next();
      } else {
        std::expected<std::uint64_t, NumError> bits = std::unexpected(NumError::Malformed);
        if (is32) {
          auto f = parse_f32(arg.text);
          if (f) bits = *f;
          else bits = std::unexpected(f.error());
        } else {
          bits = parse_f64(arg.text);
        }
        if (!bits) return std::unexpected(number_error(bits.error()));
        c_.next();
        out.value.bits = *bits;
      }
    } else if (k == "ref.null") {
      if (result && c_.at(TokenKind::RParen)) {  // 3.0 scripts: any null reference
        out.kind = ExpectedValue::Kind::AnyNullRef;
        out.value.type = ValType::FuncRef;
        if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
        return out;
      }
      // Any abstract heap type of the four hierarchies (typed function references add the
      // bottoms, GC any's hierarchy).
      std::optional<std::uint8_t> heap;
      for (const std::uint8_t h : {ValType::kFunc, ValType::kExtern, ValType::kExn, ValType::kNoFunc, ValType::kNoExtern,
                                   ValType::kNoExn, ValType::kAny, ValType::kEq, ValType::kI31, ValType::kStruct,
                                   ValType::kArray, ValType::kNone})
        if (c_.at_keyword(heap_name(h))) heap = h;
      if (!heap) return std::unexpected(unexpected(arg, "an abstract heap type (func, extern, any, …)"));
      out.value = Value::null(ValType::abstract_ref(true, *heap));
      c_.next();
    } else if (result && c_.at(TokenKind::RParen) &&
               (k == "ref.i31" || k == "ref.struct" || k == "ref.array" || k == "ref.eq" || k == "ref.any" ||
                k == "ref.extern")) {
      // GC results of a kind: any non-null reference that is one.
      out.kind = k == "ref.i31"      ? ExpectedValue::Kind::AnyI31Ref
                 : k == "ref.struct" ? ExpectedValue::Kind::AnyStructRef
                 : k == "ref.array"  ? ExpectedValue::Kind::AnyArrayRef
                 : k == "ref.eq"     ? ExpectedValue::Kind::AnyEqRef
                 : k == "ref.any"    ? ExpectedValue::Kind::AnyAnyRef
                                     : ExpectedValue::Kind::AnyExternRef;
      out.value.type = k == "ref.extern" ? ValType::ExternRef : ValType::abstract_ref(true, ValType::kAny);
    } else if (k == "ref.host") {
      // A host reference inside the any hierarchy (any.convert_extern of `ref.extern N`).
      auto v = parse_unsigned(arg.text, 32);
      if (arg.kind != TokenKind::Number || !v) return std::unexpected(number_error(v ? NumError::Malformed : v.error()));
      c_.next();
      out.value = Value{ValType::abstract_ref(true, ValType::kAny), gcref::to_any(*v + 1), 0};
    } else if (k == "ref.extern") {
      auto v = parse_unsigned(arg.text, 32);
      if (arg.kind != TokenKind::Number || !v) return std::unexpected(number_error(v ? NumError::Malformed : v.error()));
      c_.next();
      // Payloads are shifted by one so that `ref.extern 0` is not the null reference (as the JSON front end does).
      out.value = Value::externref(*v + 1);
    } else if (k == "ref.func" && result) {
      out.kind = ExpectedValue::Kind::AnyFuncRef;
      out.value.type = ValType::FuncRef;
    } else if (k == "v128.const") {
      auto v = v128_value(result);
      if (!v) return std::unexpected(v.error());
      out = std::move(*v);
    } else {
      return std::unexpected(unexpected(kw, "a constant"));
    }
    if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
    return out;
  }

  // (either V1 V2 …) after its keyword: a result any one of the values satisfies.
  Result<ExpectedValue> either() {
    ExpectedValue out;
    out.kind = ExpectedValue::Kind::Either;
    while (c_.at(TokenKind::LParen)) {
      auto alt = value(true);
      if (!alt) return std::unexpected(alt.error());
      out.alternatives.push_back(std::move(*alt));
    }
    if (out.alternatives.empty()) return std::unexpected(unexpected(c_.peek(), "a result value"));
    out.value.type = out.alternatives.front().value.type;
    if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
    return out;
  }

  // The lanes of a (v128.const shape …) after its keyword. The value holds the 16 bytes; float
  // shapes also list their lanes, where a result may expect nan:canonical / nan:arithmetic.
  Result<ExpectedValue> v128_value(bool result) {
    const Token& shape_token = c_.peek();
    const auto shape = shape_token.kind == TokenKind::Keyword ? v128_shape(shape_token.text) : std::nullopt;
    if (!shape) return std::unexpected(unexpected(shape_token, "a vector shape (i8x16, i16x8, i32x4, i64x2, f32x4, f64x2)"));
    c_.next();
    ExpectedValue out;
    out.value.type = ValType::V128;
    const ValType lane_type = shape->bits == 64 ? ValType::F64 : ValType::F32;
    if (shape->is_float) out.lane_type_hint = lane_type;
    std::array<std::uint8_t, 16> bytes{};
    for (unsigned i = 0; i < shape->lanes; ++i) {
      const Token& t = c_.peek();
      ExpectedValue lane;
      lane.value.type = lane_type;
      if (result && shape->is_float && (t.text == "nan:canonical" || t.text == "nan:arithmetic")) {
        lane.kind = t.text == "nan:canonical" ? ExpectedValue::Kind::CanonicalNan : ExpectedValue::Kind::ArithmeticNan;
      } else {
        const bool literal = t.kind == TokenKind::Number || (shape->is_float && t.kind == TokenKind::Keyword);
        const auto bits = literal ? parse_lane(*shape, t.text) : std::unexpected(NumError::Malformed);
        if (!bits) {
          if (t.kind == TokenKind::RParen) {
            return std::unexpected(error_at(t, "wrong number of lane literals: " + std::string(shape_token.text) +
                                                   " takes " + std::to_string(shape->lanes)));
          }
          if (bits.error() == NumError::OutOfRange)
            return std::unexpected(error_at(t, "constant out of range: " + std::string(t.text)));
          return std::unexpected(unexpected(t, "a lane literal"));
        }
        lane.value.bits = *bits;
        put_lane(bytes, *shape, i, *bits);
      }
      c_.next();
      if (shape->is_float) out.lanes.push_back(lane);
    }
    std::memcpy(&out.value.bits, bytes.data(), 8);
    std::memcpy(&out.value.bits_hi, bytes.data() + 8, 8);
    return out;
  }

  Result<Action> action() {
    Action a;
    if (!c_.at(TokenKind::LParen)) return std::unexpected(unexpected(c_.peek(), "an action"));
    c_.next();
    if (c_.at_keyword("invoke")) {
      a.kind = Action::Kind::Invoke;
    } else if (c_.at_keyword("get")) {
      a.kind = Action::Kind::Get;
    } else {
      return std::unexpected(unexpected(c_.peek(), "'invoke' or 'get'"));
    }
    c_.next();
    if (c_.at(TokenKind::Id)) a.module = std::string(c_.next().text);
    auto field = take_string("an export name");
    if (!field) return std::unexpected(field.error());
    a.field = std::move(*field);
    if (a.kind == Action::Kind::Invoke) {
      while (c_.at(TokenKind::LParen)) {
        auto v = value(false);
        if (!v) return std::unexpected(v.error());
        a.args.push_back(v->value);
      }
    }
    if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
    return a;
  }

  Result<Command> command() {
    const Token& open = c_.peek();
    Command cmd;
    cmd.line = open.line;
    if (c_.at_form("module") && c_.peek(2).kind == TokenKind::Keyword && c_.peek(2).text == "instance") {
      // (module instance $I? $M?)
      cmd.kind = Command::Kind::ModuleInstance;
      c_.next();
      c_.next();
      c_.next();
      if (c_.at(TokenKind::Id)) cmd.name = std::string(c_.next().text);
      if (c_.at(TokenKind::Id)) cmd.definition = std::string(c_.next().text);
      if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
      return cmd;
    }
    if (c_.at_form("module")) {
      cmd.kind = Command::Kind::Module;
      if (auto r = module(cmd); !r) return std::unexpected(r.error());
      return cmd;
    }
    if (c_.at_form("invoke") || c_.at_form("get")) {
      cmd.kind = Command::Kind::Action;
      auto a = action();
      if (!a) return std::unexpected(a.error());
      cmd.action = std::move(*a);
      return cmd;
    }
    c_.next();  // '('
    const Token& kw = c_.peek();
    if (kw.kind != TokenKind::Keyword) return std::unexpected(unexpected(kw, "a command"));
    const std::string_view k = kw.text;
    c_.next();
    if (k == "register") {
      cmd.kind = Command::Kind::Register;
      auto as = take_string("a module name");
      if (!as) return std::unexpected(as.error());
      cmd.register_as = std::move(*as);
      if (c_.at(TokenKind::Id)) cmd.name = std::string(c_.next().text);
    } else if (k == "assert_return") {
      cmd.kind = Command::Kind::AssertReturn;
      auto a = action();
      if (!a) return std::unexpected(a.error());
      cmd.action = std::move(*a);
      while (c_.at(TokenKind::LParen)) {
        auto v = value(true);
        if (!v) return std::unexpected(v.error());
        cmd.expected.push_back(std::move(*v));
      }
    } else if (k == "assert_trap" || k == "assert_exhaustion") {
      cmd.kind = k == "assert_trap" ? Command::Kind::AssertTrap : Command::Kind::AssertExhaustion;
      if (cmd.kind == Command::Kind::AssertTrap && c_.at_form("module")) {
        if (auto r = module(cmd); !r) return std::unexpected(r.error());
        cmd.name.reset();
      } else {
        auto a = action();
        if (!a) return std::unexpected(a.error());
        cmd.action = std::move(*a);
      }
      auto text = take_string("the expected message");
      if (!text) return std::unexpected(text.error());
      cmd.text = std::move(*text);
    } else if (k == "assert_exception") {
      // Exception handling: the action ends with an exception no wasm frame caught.
      cmd.kind = Command::Kind::AssertException;
      auto a = action();
      if (!a) return std::unexpected(a.error());
      cmd.action = std::move(*a);
    } else if (k == "assert_malformed" || k == "assert_invalid" || k == "assert_unlinkable" ||
               k == "assert_uninstantiable") {
      if (k == "assert_malformed") cmd.kind = Command::Kind::AssertMalformed;
      else if (k == "assert_invalid") cmd.kind = Command::Kind::AssertInvalid;
      else if (k == "assert_unlinkable") cmd.kind = Command::Kind::AssertUnlinkable;
      else cmd.kind = Command::Kind::AssertUninstantiable;
      if (!c_.at_form("module")) return std::unexpected(unexpected(c_.peek(), "a module"));
      if (auto r = module(cmd); !r) return std::unexpected(r.error());
      cmd.name.reset();
      auto text = take_string("the expected message");
      if (!text) return std::unexpected(text.error());
      cmd.text = std::move(*text);
    } else {
      return std::unexpected(unexpected(kw, "a command"));
    }
    if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
    return cmd;
  }

  std::string_view source_;
  Cursor c_;
  WatOptions options_;
};

}  // namespace

std::expected<script::Script, TextError> parse_wast(std::string_view source, std::string file_name,
                                                   const WatOptions& options) {
  auto tokens = tokenize(source);
  if (!tokens) return std::unexpected(std::move(tokens.error()));
  return WastParser(source, tokens->list, options).run(std::move(file_name));
}

script::TextCompiler text_compiler(const WatOptions& options) {
  return [options](std::string_view text) -> std::expected<std::vector<std::uint8_t>, std::string> {
    auto binary = wat_to_binary(text, options);
    if (!binary) return std::unexpected(binary.error().to_string());
    return std::move(*binary);
  };
}

}  // namespace sprawling::wasm::text
