// The keyword vocabulary of the text format (syntax_tree.hpp).
#include "wasm/text/syntax_tree.hpp"

#include "wasm/text/numbers.hpp"

#include <unordered_set>

namespace sprawling::wasm::text::tree {

// Instruction keyword → opcode, from the shared opcode table.
const std::unordered_map<std::string_view, Opcode>& opcode_names() {
  static const std::unordered_map<std::string_view, Opcode> map = [] {
    std::unordered_map<std::string_view, Opcode> m;
    for (std::size_t i = 0; i < kOpcodeSpace; ++i) {
      const auto& info = kOpcodeTable[i];
      if (info.text.empty()) continue;
      const auto op = static_cast<Opcode>(i);
      if (op == Opcode::SelectT) continue;  // same text as `select`; chosen by its (result) immediate
      m.emplace(info.text, op);
    }
    return m;
  }();
  return map;
}

// Keywords of the module and script grammar that are not instructions: meeting one where an
// instruction belongs is an "unexpected token", any other keyword an "unknown operator".
bool is_grammar_keyword(std::string_view kw) {
  static const std::unordered_set<std::string_view> words = {
      "module", "type", "func", "param", "result", "local", "global", "table", "memory", "elem", "data",
      "import", "export", "start", "offset", "item", "declare", "mut", "then", "else", "end", "funcref",
      "externref", "i32", "i64", "f32", "f64", "v128", "extern", "binary", "quote", "register", "invoke",
      "get", "assert_return", "assert_trap", "assert_exhaustion", "assert_invalid", "assert_malformed",
      "assert_unlinkable", "assert_uninstantiable", "nan:canonical", "nan:arithmetic", "ref.extern", "ref.host",
      "ref.struct", "ref.array", "ref.any",
      "inf", "nan", "either", "script", "input", "output",
      // exception handling
      "tag", "exnref", "exn", "do", "catch_ref", "catch_all_ref", "assert_exception",
      // typed function references
      "ref", "null", "nullfuncref", "nullexternref", "nullexnref", "nofunc", "noextern", "noexn",
      // garbage collection
      "rec", "sub", "final", "struct", "array", "field", "i8", "i16", "any", "eq", "i31", "none", "anyref", "eqref",
      "i31ref", "structref", "arrayref", "nullref"};
  return words.contains(kw);
}

bool is_known_keyword(std::string_view kw) {
  if (is_grammar_keyword(kw) || opcode_names().contains(kw)) return true;
  if (kw.starts_with("offset=")) return parse_unsigned(kw.substr(7), 64).has_value();
  if (kw.starts_with("align=")) return parse_unsigned(kw.substr(6), 64).has_value();
  if (kw.starts_with("nan:0x")) {
    const auto f = parse_f64(kw);
    return f || f.error() == NumError::OutOfRange;
  }
  return false;
}

bool is_well_formed_number(std::string_view text) {
  const auto i = parse_int(text, 64);
  if (i || i.error() == NumError::OutOfRange) return true;
  const auto f = parse_f64(text);
  return f || f.error() == NumError::OutOfRange;
}

}  // namespace sprawling::wasm::text::tree
