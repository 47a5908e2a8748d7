// Pass 1 of the WAT module parser: reads every field into the syntax tree (syntax_tree.hpp),
// binding $names to indices as it goes, and label names as it meets them.
#include "wasm/text/syntax_tree.hpp"

#include "wasm/syntax/module.hpp"
#include "wasm/syntax/opcodes.hpp"
#include "wasm/text/numbers.hpp"
#include "wasm/syntax/types.hpp"
#include "wasm/support/utf8.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace sprawling::wasm::text::tree {

namespace {

// The enclosing labels of the instruction being parsed, innermost last. Lookups by name are
// O(1) so that a deep nest of named blocks cannot make parsing quadratic.
class LabelStack {
 public:
  void push(std::string_view name) {
    if (!name.empty()) by_name_[name].push_back(names_.size());
    names_.push_back(name);
  }
  void pop() {
    if (!names_.back().empty()) by_name_[names_.back()].pop_back();
    names_.pop_back();
  }
  void clear() {
    names_.clear();
    by_name_.clear();
  }
  // The relative depth (0 = innermost) of the innermost label called `name`.
  [[nodiscard]] std::optional<std::uint32_t> depth_of(std::string_view name) const {
    const auto it = by_name_.find(name);
    if (it == by_name_.end() || it->second.empty()) return std::nullopt;
    return static_cast<std::uint32_t>(names_.size() - 1 - it->second.back());
  }

 private:
  std::vector<std::string_view> names_;
  std::unordered_map<std::string_view, std::vector<std::size_t>> by_name_;
};

class FieldParser {
 public:
  FieldParser(Cursor& cursor, const WatOptions& options) : c_(cursor), options_(options) {}

  Result<ModuleAst> run(bool bare) {
    for (;;) {
      if (bare ? c_.at(TokenKind::Eof) : c_.at(TokenKind::RParen)) break;
      if (!c_.at(TokenKind::LParen)) return std::unexpected(unexpected(c_.peek(), bare ? "a module field" : "a module field or ')'"));
      if (auto r = field(); !r) return std::unexpected(std::move(r.error()));
    }
    return std::move(m_);
  }

 private:
  // ---------------------------------------------------------------- token helpers

  Result<void> expect_lparen() {
    if (!c_.at(TokenKind::LParen)) return std::unexpected(unexpected(c_.peek(), "'('"));
    c_.next();
    return {};
  }
  Result<void> expect_rparen() {
    if (!c_.at(TokenKind::RParen)) return std::unexpected(unexpected(c_.peek(), "')'"));
    c_.next();
    return {};
  }
  std::string_view take_id() {
    if (c_.at(TokenKind::Id)) return c_.next().text;
    return {};
  }

  Result<void> bind(Space space, std::string_view id, std::uint32_t index, const Token& at) {
    if (id.empty()) return {};
    auto& map = m_.names[static_cast<std::size_t>(space)];
    if (!map.emplace(id, index).second)
      return std::unexpected(error_at(at, "duplicate " + std::string(space_name(space)) + " " + std::string(id)));
    return {};
  }

  Result<std::uint32_t> take_u32(const char* what) {
    const Token& t = c_.peek();
    if (t.kind != TokenKind::Number) return std::unexpected(unexpected(t, what));
    auto v = parse_unsigned(t.text, 32);
    if (!v) {
      if (v.error() == NumError::OutOfRange) return std::unexpected(error_at(t, "i32 constant out of range: " + std::string(t.text)));
      return std::unexpected(unexpected(t, what));
    }
    c_.next();
    return static_cast<std::uint32_t>(*v);
  }

  bool at_index() const { return c_.at(TokenKind::Id) || c_.at(TokenKind::Number); }

  Result<Ref> take_index(const char* what = "an index") {
    const Token& t = c_.peek();
    if (t.kind == TokenKind::Id) {
      c_.next();
      return Ref{t.text, 0, pos_of(t)};
    }
    auto v = take_u32(what);
    if (!v) return std::unexpected(v.error());
    return Ref{{}, *v, pos_of(t)};
  }

  Result<std::string> take_string(const char* what) {
    if (!c_.at(TokenKind::String)) return std::unexpected(unexpected(c_.peek(), what));
    return string_bytes(c_.next());
  }
  Result<std::string> take_name() {
    const Token& t = c_.peek();
    auto s = take_string("a name string");
    if (!s) return s;
    if (!is_valid_utf8(*s)) return std::unexpected(error_at(t, "malformed UTF-8 encoding"));
    return s;
  }

  static std::optional<ValType> valtype_of(std::string_view kw) {
    if (kw == "i32") return ValType::I32;
    if (kw == "i64") return ValType::I64;
    if (kw == "f32") return ValType::F32;
    if (kw == "f64") return ValType::F64;
    if (kw == "v128") return ValType::V128;
    if (kw == "funcref") return ValType::FuncRef;
    if (kw == "externref") return ValType::ExternRef;
    if (kw == "exnref") return ValType::ExnRef;
    if (kw == "nullfuncref") return ValType::abstract_ref(true, ValType::kNoFunc);
    if (kw == "nullexternref") return ValType::abstract_ref(true, ValType::kNoExtern);
    if (kw == "nullexnref") return ValType::abstract_ref(true, ValType::kNoExn);
    if (kw == "anyref") return ValType::abstract_ref(true, ValType::kAny);
    if (kw == "eqref") return ValType::abstract_ref(true, ValType::kEq);
    if (kw == "i31ref") return ValType::abstract_ref(true, ValType::kI31);
    if (kw == "structref") return ValType::abstract_ref(true, ValType::kStruct);
    if (kw == "arrayref") return ValType::abstract_ref(true, ValType::kArray);
    if (kw == "nullref") return ValType::abstract_ref(true, ValType::kNone);
    return std::nullopt;
  }
  // A reference type's start: a short form (funcref, …) or `(ref`.
  bool at_reftype() const {
    const Token& t = c_.peek();
    if (t.kind == TokenKind::Keyword) {
      const auto v = valtype_of(t.text);
      return v && v->is_ref();
    }
    return c_.at_form("ref");
  }
  // A heap type: func, extern, exn, nofunc, noextern, noexn, or a type index (a `$id` is a
  // placeholder until the encoder knows every type's name).
  Result<std::uint32_t> take_heaptype() {
    const Token& t = c_.peek();
    if (t.kind == TokenKind::Keyword) {
      for (const std::uint8_t h : {ValType::kFunc, ValType::kExtern, ValType::kExn, ValType::kNoFunc,
                                   ValType::kNoExtern, ValType::kNoExn, ValType::kAny, ValType::kEq, ValType::kI31,
                                   ValType::kStruct, ValType::kArray, ValType::kNone}) {
        if (t.text == heap_name(h)) {
          c_.next();
          return ValType::kAbstractHeap | h;
        }
      }
      return std::unexpected(unexpected(t, "a heap type"));
    }
    if (t.kind == TokenKind::Id) {
      c_.next();
      const auto [it, added] = pending_ids_.emplace(t.text, static_cast<std::uint32_t>(m_.pending_types.size()));
      if (added) {
        if (m_.pending_types.size() >= ValType::kAbstractHeap - kPendingHeap)
          return std::unexpected(error_at(t, "too many named reference types"));
        m_.pending_types.push_back(Ref{t.text, 0, pos_of(t)});
      }
      return kPendingHeap + it->second;
    }
    auto v = take_u32("a heap type");
    if (!v) return std::unexpected(v.error());
    if (*v >= kPendingHeap) return std::unexpected(error_at(t, "type index out of range: " + std::string(t.text)));
    return *v;
  }
  Result<ValType> take_valtype() {
    const Token& t = c_.peek();
    if (t.kind == TokenKind::Keyword) {
      if (auto v = valtype_of(t.text)) {
        c_.next();
        return *v;
      }
    }
    if (c_.at_form("ref")) return take_ref_type_form();
    return std::unexpected(unexpected(t, "a value type"));
  }
  // (ref null? heaptype): typed function references.
  Result<ValType> take_ref_type_form() {
    c_.next();
    c_.next();
    const bool nullable = c_.at_keyword("null");
    if (nullable) c_.next();
    auto heap = take_heaptype();
    if (!heap) return std::unexpected(heap.error());
    if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
    return ValType::ref(nullable, *heap);
  }
  Result<ValType> take_reftype() {
    const Token& t = c_.peek();
    if (!at_reftype()) return std::unexpected(unexpected(t, "a reference type"));
    return take_valtype();
  }

  Result<Limits> take_limits() {
    Limits l;
    auto min = take_u32("a limit");
    if (!min) return std::unexpected(min.error());
    l.min = *min;
    if (c_.at(TokenKind::Number)) {
      auto max = take_u32("a limit");
      if (!max) return std::unexpected(max.error());
      l.max = *max;
    }
    return l;
  }

  // A memory type: `i32`/`i64` (memory64), then limits (u64 page counts for i64).
  Result<Limits> take_memory_limits() { return take_address_limits(); }
  // A table type's address type and limits: `i64` makes a 64-bit table (table64, u64 limits);
  // an i32 table's limits are u64s in 3.0 text too (the validator then says "table size").
  Result<Limits> take_table_limits() { return take_address_limits(); }
  // `i32`/`i64` (optional), then the limits: 2.0 reads i32 limits as u32s, 3.0 as u64s.
  Result<Limits> take_address_limits() {
    const bool is64 = (c_.at_keyword("i64") || c_.at_keyword("i32")) && c_.next().text == "i64";
    return take_address_limits(is64);
  }
  Result<Limits> take_address_limits(bool is64) {
    if (!is64 && !options_.memory64) return take_limits();
    Limits l;
    l.is64 = is64;
    auto min = take_u64("a limit");
    if (!min) return std::unexpected(min.error());
    l.min = *min;
    if (c_.at(TokenKind::Number)) {
      auto max = take_u64("a limit");
      if (!max) return std::unexpected(max.error());
      l.max = *max;
    }
    return l;
  }
  Result<std::uint64_t> take_u64(const char* what) {
    const Token& t = c_.peek();
    if (t.kind != TokenKind::Number) return std::unexpected(unexpected(t, what));
    auto v = parse_unsigned(t.text, 64);
    if (!v) return std::unexpected(error_at(t, "i64 constant out of range: " + std::string(t.text)));
    c_.next();
    return *v;
  }

  Result<GlobalType> take_globaltype() {
    GlobalType g;
    if (c_.at_form("mut")) {
      c_.next();
      c_.next();
      auto t = take_valtype();
      if (!t) return std::unexpected(t.error());
      g.type = *t;
      g.is_mutable = true;
      if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
      return g;
    }
    auto t = take_valtype();
    if (!t) return std::unexpected(t.error());
    g.type = *t;
    return g;
  }

  // (param …)* (result …)*, after an optional (type x). Param ids only where `allow_ids`.
  Result<void> take_params_results(TypeUse& tu, bool allow_ids) {
    while (c_.at_form("param")) {
      tu.has_inline = true;
      c_.next();
      c_.next();
      if (c_.at(TokenKind::Id)) {
        const Token& id = c_.peek();
        if (!allow_ids) return std::unexpected(unexpected(id, "a value type"));
        c_.next();
        auto t = take_valtype();
        if (!t) return std::unexpected(t.error());
        tu.sig.params.push_back(*t);
        tu.param_ids.push_back(id.text);
      } else {
        while (!c_.at(TokenKind::RParen)) {
          auto t = take_valtype();
          if (!t) return std::unexpected(t.error());
          tu.sig.params.push_back(*t);
          tu.param_ids.emplace_back();
        }
      }
      if (auto r = expect_rparen(); !r) return r;
    }
    while (c_.at_form("result")) {
      tu.has_inline = true;
      c_.next();
      c_.next();
      while (!c_.at(TokenKind::RParen)) {
        auto t = take_valtype();
        if (!t) return std::unexpected(t.error());
        tu.sig.results.push_back(*t);
      }
      if (auto r = expect_rparen(); !r) return r;
    }
    return {};
  }

  Result<TypeUse> take_typeuse(bool allow_ids) {
    TypeUse tu;
    tu.pos = pos_of(c_.peek());
    if (c_.at_form("type")) {
      c_.next();
      c_.next();
      auto r = take_index("a type index");
      if (!r) return std::unexpected(r.error());
      tu.type = *r;
      if (auto e = expect_rparen(); !e) return std::unexpected(e.error());
    }
    if (auto r = take_params_results(tu, allow_ids); !r) return std::unexpected(r.error());
    return tu;
  }

  // (export "name")* then (import "m" "n")?, the inline abbreviations of a definition.
  Result<std::optional<ImportName>> take_inline_exports_import(ExternKind kind, std::uint32_t index) {
    while (c_.at_form("export")) {
      c_.next();
      c_.next();
      auto name = take_name();
      if (!name) return std::unexpected(name.error());
      m_.exports.push_back(ExportDef{std::move(*name), kind, numeric_ref(index)});
      if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
    }
    if (c_.at_form("import")) {
      const Token& at = c_.next();
      c_.next();
      auto mod = take_name();
      if (!mod) return std::unexpected(mod.error());
      auto field = take_name();
      if (!field) return std::unexpected(field.error());
      if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
      if (auto r = note_import(at, kind, index); !r) return std::unexpected(r.error());
      return ImportName{std::move(*mod), std::move(*field)};
    }
    return std::optional<ImportName>{};
  }

  Result<void> note_import(const Token& at, ExternKind kind, std::uint32_t index) {
    if (first_definition_)
      return std::unexpected(error_at(at, "import after " + std::string(definition_name(*first_definition_))));
    m_.imports.push_back(ImportEntry{kind, index});
    return {};
  }
  void note_definition(ExternKind kind) {
    if (!first_definition_) first_definition_ = kind;
  }

  // ---------------------------------------------------------------- module fields

  Result<void> field() {
    c_.next();  // '('
    const Token& kw = c_.peek();
    if (kw.kind != TokenKind::Keyword) return std::unexpected(unexpected(kw, "a module field"));
    const std::string_view k = kw.text;
    c_.next();
    Result<void> r;
    if (k == "type") r = type_field(kw);
    else if (k == "import") r = import_field(kw);
    else if (k == "func") r = func_field(kw);
    else if (k == "table") r = table_field(kw);
    else if (k == "memory") r = memory_field(kw);
    else if (k == "global") r = global_field(kw);
    else if (k == "export") r = export_field();
    else if (k == "start") r = start_field(kw);
    else if (k == "elem") r = elem_field(kw);
    else if (k == "data") r = data_field(kw);
    else if (k == "tag") r = tag_field(kw);
    else if (k == "rec") r = rec_field();
    else return std::unexpected(unexpected(kw, "a module field"));
    if (!r) return r;
    return expect_rparen();
  }

  // (rec (type …)*): one recursion group.
  Result<void> rec_field() {
    const auto start = static_cast<std::uint32_t>(m_.types.size());
    while (c_.at_form("type")) {
      c_.next();
      const Token& kw = c_.next();
      if (auto r = type_field(kw); !r) return r;
      if (auto r = expect_rparen(); !r) return r;
    }
    const auto n = static_cast<std::uint32_t>(m_.types.size()) - start;
    for (std::uint32_t i = start; i < start + n; ++i) {
      m_.types[i].rec_start = start;
      m_.types[i].rec_size = n;
    }
    return {};
  }

  // (type $id? deftype): (sub final? $super? comptype) or a comptype (final, no supertype).
  Result<void> type_field(const Token& kw) {
    const Token& id_tok = c_.peek();
    const auto id = take_id();
    const auto index = static_cast<std::uint32_t>(m_.types.size());
    if (auto r = bind(Space::Type, id, index, id.empty() ? kw : id_tok); !r) return r;
    FuncType ft;
    ft.rec_start = index;
    bool sub = false;
    if (c_.at_form("sub")) {
      sub = true;
      c_.next();
      c_.next();
      ft.is_final = c_.at_keyword("final");
      if (ft.is_final) c_.next();
      if (!c_.at(TokenKind::LParen)) {
        auto super = take_heaptype();
        if (!super) return std::unexpected(super.error());
        if (*super >= ValType::kAbstractHeap) return std::unexpected(unexpected(c_.peek(), "a type index"));
        ft.super = *super;
      }
    }
    std::vector<std::string_view> field_ids;
    if (auto r = comp_type(ft, field_ids); !r) return r;
    if (sub) {
      if (auto r = expect_rparen(); !r) return r;
    }
    m_.types.push_back(std::move(ft));
    m_.field_ids.resize(m_.types.size());
    m_.field_ids.back() = std::move(field_ids);
    return {};
  }

  // (func …), (struct (field $id? fieldtype)* | (field fieldtype*)*), (array fieldtype).
  Result<void> comp_type(FuncType& ft, std::vector<std::string_view>& field_ids) {
    if (c_.at_form("func")) {
      c_.next();
      c_.next();
      TypeUse tu;
      if (auto r = take_params_results(tu, true); !r) return r;
      ft.params = std::move(tu.sig.params);
      ft.results = std::move(tu.sig.results);
      return expect_rparen();
    }
    if (c_.at_form("struct")) {
      c_.next();
      c_.next();
      ft.kind = TypeKind::Struct;
      while (c_.at_form("field")) {
        c_.next();
        c_.next();
        if (c_.at(TokenKind::Id)) {
          const Token& id = c_.next();
          if (std::ranges::find(field_ids, id.text) != field_ids.end())
            return std::unexpected(error_at(id, "duplicate field " + std::string(id.text)));
          field_ids.push_back(id.text);
          auto f = take_field_type();
          if (!f) return std::unexpected(f.error());
          ft.fields.push_back(*f);
        } else {
          while (!c_.at(TokenKind::RParen)) {
            auto f = take_field_type();
            if (!f) return std::unexpected(f.error());
            ft.fields.push_back(*f);
            field_ids.emplace_back();
          }
        }
        if (auto r = expect_rparen(); !r) return r;
      }
      return expect_rparen();
    }
    if (c_.at_form("array")) {
      c_.next();
      c_.next();
      ft.kind = TypeKind::Array;
      auto f = take_field_type();
      if (!f) return std::unexpected(f.error());
      ft.fields.push_back(*f);
      return expect_rparen();
    }
    return std::unexpected(unexpected(c_.peek(), "'(func', '(struct' or '(array'"));
  }

  // storagetype or (mut storagetype); storagetype: a value type, i8 or i16.
  Result<FieldType> take_field_type() {
    FieldType f;
    const bool mut = c_.at_form("mut");
    if (mut) {
      c_.next();
      c_.next();
      f.is_mutable = true;
    }
    if (c_.at_keyword("i8") || c_.at_keyword("i16")) {
      f.packed = c_.next().text == "i8" ? FieldType::Packed::I8 : FieldType::Packed::I16;
    } else {
      auto t = take_valtype();
      if (!t) return std::unexpected(t.error());
      f.type = *t;
    }
    if (mut) {
      if (auto r = expect_rparen(); !r) return std::unexpected(r.error());
    }
    return f;
  }

  Result<void> import_field(const Token& kw) {
    auto mod = take_name();
    if (!mod) return std::unexpected(mod.error());
    auto field = take_name();
    if (!field) return std::unexpected(field.error());
    ImportName name{std::move(*mod), std::move(*field)};
    if (auto r = expect_lparen(); !r) return r;
    const Token& desc = c_.peek();
    if (desc.kind != TokenKind::Keyword) return std::unexpected(unexpected(desc, "an import description"));
    c_.next();
    const Token& id_tok = c_.peek();
    const auto id = take_id();
    const Token& at = id.empty() ? desc : id_tok;
    if (desc.text == "func") {
      const auto index = static_cast<std::uint32_t>(m_.funcs.size());
      if (auto r = bind(Space::Func, id, index, at); !r) return r;
      auto tu = take_typeuse(true);
      if (!tu) return std::unexpected(tu.error());
      if (auto r = note_import(kw, ExternKind::Func, index); !r) return r;
      FuncDef f;
      f.id = id;
      f.import = std::move(name);
      f.type = std::move(*tu);
      m_.funcs.push_back(std::move(f));
    } else if (desc.text == "table") {
      const auto index = static_cast<std::uint32_t>(m_.tables.size());
      if (auto r = bind(Space::Table, id, index, at); !r) return r;
      auto limits = take_table_limits();
      if (!limits) return std::unexpected(limits.error());
      auto rt = take_reftype();
      if (!rt) return std::unexpected(rt.error());
      if (auto r = note_import(kw, ExternKind::Table, index); !r) return r;
      m_.tables.push_back(TableDef{std::move(name), TableType{*rt, *limits}, std::nullopt});
    } else if (desc.text == "memory") {
      const auto index = static_cast<std::uint32_t>(m_.memories.size());
      if (auto r = bind(Space::Memory, id, index, at); !r) return r;
      auto limits = take_memory_limits();
      if (!limits) return std::unexpected(limits.error());
      if (auto r = note_import(kw, ExternKind::Memory, index); !r) return r;
      m_.memories.push_back(MemoryDef{std::move(name), MemoryType{*limits}});
    } else if (desc.text == "global") {
      const auto index = static_cast<std::uint32_t>(m_.globals.size());
      if (auto r = bind(Space::Global, id, index, at); !r) return r;
      auto gt = take_globaltype();
      if (!gt) return std::unexpected(gt.error());
      if (auto r = note_import(kw, ExternKind::Global, index); !r) return r;
      m_.globals.push_back(GlobalDef{std::move(name), *gt, {}});
    } else if (desc.text == "tag") {
      const auto index = static_cast<std::uint32_t>(m_.tags.size());
      if (auto r = bind(Space::Tag, id, index, at); !r) return r;
      auto tu = take_typeuse(false);
      if (!tu) return std::unexpected(tu.error());
      if (auto r = note_import(kw, ExternKind::Tag, index); !r) return r;
      m_.tags.push_back(TagDef{std::move(name), std::move(*tu)});
    } else {
      return std::unexpected(unexpected(desc, "an import description"));
    }
    return expect_rparen();
  }

  // (tag $id? (export …)* (import …)? typeuse): exception handling's tags.
  Result<void> tag_field(const Token& kw) {
    const Token& id_tok = c_.peek();
    const auto id = take_id();
    const auto index = static_cast<std::uint32_t>(m_.tags.size());
    if (auto r = bind(Space::Tag, id, index, id.empty() ? kw : id_tok); !r) return r;
    auto import = take_inline_exports_import(ExternKind::Tag, index);
    if (!import) return std::unexpected(import.error());
    auto tu = take_typeuse(false);
    if (!tu) return std::unexpected(tu.error());
    if (!*import) note_definition(ExternKind::Tag);
    m_.tags.push_back(TagDef{std::move(*import), std::move(*tu)});
    return {};
  }

  Result<void> func_field(const Token& kw) {
    const Token& id_tok = c_.peek();
    const auto id = take_id();
    const auto index = static_cast<std::uint32_t>(m_.funcs.size());
    if (auto r = bind(Space::Func, id, index, id.empty() ? kw : id_tok); !r) return r;
    auto import = take_inline_exports_import(ExternKind::Func, index);
    if (!import) return std::unexpected(import.error());
    FuncDef f;
    f.id = id;
    f.import = std::move(*import);
    auto tu = take_typeuse(true);
    if (!tu) return std::unexpected(tu.error());
    f.type = std::move(*tu);
    if (f.import) {
      m_.funcs.push_back(std::move(f));
      return {};
    }
    note_definition(ExternKind::Func);
    // Duplicate local names, including against the parameters.
    std::unordered_set<std::string_view> seen;
    for (auto pid : f.type.param_ids) {
      if (!pid.empty() && !seen.insert(pid).second)
        return std::unexpected(error_at(kw, "duplicate local " + std::string(pid)));
    }
    while (c_.at_form("local")) {
      c_.next();
      c_.next();
      if (c_.at(TokenKind::Id)) {
        const Token& lid = c_.next();
        if (!seen.insert(lid.text).second) return std::unexpected(error_at(lid, "duplicate local " + std::string(lid.text)));
        auto t = take_valtype();
        if (!t) return std::unexpected(t.error());
        f.locals.push_back(*t);
        f.local_ids.push_back(lid.text);
      } else {
        while (!c_.at(TokenKind::RParen)) {
          auto t = take_valtype();
          if (!t) return std::unexpected(t.error());
          f.locals.push_back(*t);
          f.local_ids.emplace_back();
        }
      }
      if (auto r = expect_rparen(); !r) return r;
    }
    labels_.clear();
    if (auto r = instrs(f.body); !r) return r;
    m_.funcs.push_back(std::move(f));
    return {};
  }

  Result<void> table_field(const Token& kw) {
    const Token& id_tok = c_.peek();
    const auto id = take_id();
    const auto index = static_cast<std::uint32_t>(m_.tables.size());
    if (auto r = bind(Space::Table, id, index, id.empty() ? kw : id_tok); !r) return r;
    auto import = take_inline_exports_import(ExternKind::Table, index);
    if (!import) return std::unexpected(import.error());
    if (!*import) note_definition(ExternKind::Table);
    // table64: `i64` (or `i32`) before the limits or the inline segment's reftype.
    const bool is64 = (c_.at_keyword("i64") || c_.at_keyword("i32")) && c_.next().text == "i64";
    if (at_reftype()) {
      // (table reftype (elem …)): the limits are the element count.
      const ValType rt = *take_reftype();
      if (*import) return std::unexpected(unexpected(c_.peek(), "limits"));
      if (!c_.at_form("elem")) return std::unexpected(unexpected(c_.peek(), "'(elem'"));
      c_.next();
      c_.next();
      ElemDef seg;
      seg.mode = SegmentMode::Active;
      seg.table = numeric_ref(index);
      seg.offset.instrs.push_back(Instr{is64 ? Opcode::I64Const : Opcode::I32Const, 0, 0, {}});
      seg.type = rt;
      if (auto r = elem_items(seg, /*bare_indices=*/true); !r) return r;
      // The segment has the table's type (its indices are ref.func expressions of it).
      if (rt != ValType::FuncRef) seg.type = rt;
      if (auto r = expect_rparen(); !r) return r;
      const auto n = static_cast<std::uint32_t>(seg.items.size());
      m_.tables.push_back(TableDef{std::nullopt, TableType{rt, Limits{n, n, is64}}, std::nullopt});
      m_.elems.push_back(std::move(seg));
      return {};
    }
    auto limits = take_address_limits(is64);
    if (!limits) return std::unexpected(limits.error());
    auto rt = take_reftype();
    if (!rt) return std::unexpected(rt.error());
    TableDef def{std::move(*import), TableType{*rt, *limits}, std::nullopt};
    if (!def.import && !c_.at(TokenKind::RParen)) {
      // Typed function references: the expression giving every element's initial value.
      Expr init;
      labels_.clear();
      if (auto r = instrs(init); !r) return r;
      def.init = std::move(init);
    }
    m_.tables.push_back(std::move(def));
    return {};
  }

  Result<void> memory_field(const Token& kw) {
    const Token& id_tok = c_.peek();
    const auto id = take_id();
    const auto index = static_cast<std::uint32_t>(m_.memories.size());
    if (auto r = bind(Space::Memory, id, index, id.empty() ? kw : id_tok); !r) return r;
    auto import = take_inline_exports_import(ExternKind::Memory, index);
    if (!import) return std::unexpected(import.error());
    if (!*import) note_definition(ExternKind::Memory);
    // (memory i64? (data …)): an i64 memory's segment offset is an i64.const.
    const bool inline_is64 = !*import && c_.at_keyword("i64") && c_.peek(1).kind == TokenKind::LParen &&
                             c_.peek(2).kind == TokenKind::Keyword && c_.peek(2).text == "data";
    if (inline_is64 || (c_.at_keyword("i32") && c_.peek(1).kind == TokenKind::LParen)) c_.next();
    if (!*import && c_.at_form("data")) {
      c_.next();
      c_.next();
      DataDef seg;
      seg.mode = SegmentMode::Active;
      seg.memory = numeric_ref(index);
      seg.offset.instrs.push_back(Instr{inline_is64 ? Opcode::I64Const : Opcode::I32Const, 0, 0, {}});
      while (c_.at(TokenKind::String)) seg.bytes += string_bytes(c_.next());
      if (auto r = expect_rparen(); !r) return r;
      const std::uint64_t pages = (seg.bytes.size() + kPageSize - 1) / kPageSize;
      m_.memories.push_back(MemoryDef{std::nullopt, MemoryType{Limits{pages, pages, inline_is64}}});
      m_.datas.push_back(std::move(seg));
      return {};
    }
    auto limits = take_memory_limits();
    if (!limits) return std::unexpected(limits.error());
    m_.memories.push_back(MemoryDef{std::move(*import), MemoryType{*limits}});
    return {};
  }

  Result<void> global_field(const Token& kw) {
    const Token& id_tok = c_.peek();
    const auto id = take_id();
    const auto index = static_cast<std::uint32_t>(m_.globals.size());
    if (auto r = bind(Space::Global, id, index, id.empty() ? kw : id_tok); !r) return r;
    auto import = take_inline_exports_import(ExternKind::Global, index);
    if (!import) return std::unexpected(import.error());
    auto gt = take_globaltype();
    if (!gt) return std::unexpected(gt.error());
    GlobalDef g{std::move(*import), *gt, {}};
    if (!g.import) {
      note_definition(ExternKind::Global);
      labels_.clear();
      if (auto r = instrs(g.init); !r) return r;
    }
    m_.globals.push_back(std::move(g));
    return {};
  }

  Result<void> export_field() {
    auto name = take_name();
    if (!name) return std::unexpected(name.error());
    if (auto r = expect_lparen(); !r) return r;
    const Token& k = c_.peek();
    ExternKind kind{};
    if (k.kind == TokenKind::Keyword && k.text == "func") kind = ExternKind::Func;
    else if (k.kind == TokenKind::Keyword && k.text == "table") kind = ExternKind::Table;
    else if (k.kind == TokenKind::Keyword && k.text == "memory") kind = ExternKind::Memory;
    else if (k.kind == TokenKind::Keyword && k.text == "global") kind = ExternKind::Global;
    else if (k.kind == TokenKind::Keyword && k.text == "tag") kind = ExternKind::Tag;
    else return std::unexpected(unexpected(k, "an export description"));
    c_.next();
    auto ref = take_index();
    if (!ref) return std::unexpected(ref.error());
    m_.exports.push_back(ExportDef{std::move(*name), kind, *ref});
    return expect_rparen();
  }

  Result<void> start_field(const Token& kw) {
    if (m_.start) return std::unexpected(error_at(kw, "multiple start sections"));
    auto ref = take_index();
    if (!ref) return std::unexpected(ref.error());
    m_.start = *ref;
    return {};
  }

  // An offset: (offset instr*) or one folded instruction.
  Result<void> offset_expr(Expr& e) {
    labels_.clear();
    if (c_.at_form("offset")) {
      c_.next();
      c_.next();
      if (auto r = instrs(e); !r) return r;
      return expect_rparen();
    }
    if (!c_.at(TokenKind::LParen)) return std::unexpected(unexpected(c_.peek(), "an offset expression"));
    return folded(e);
  }

  // elemlist: `reftype elemexpr*` | `func funcidx*` | (bare_indices) `funcidx*`; nothing at
  // all is an empty funcref list (wabt accepts `(elem)` too).
  Result<void> elem_items(ElemDef& seg, bool bare_indices) {
    const bool func_keyword = c_.at_keyword("func");
    if (func_keyword || (bare_indices && (at_index() || c_.at(TokenKind::RParen)))) {
      if (func_keyword) c_.next();
      seg.type = kFuncIndices;
      while (at_index()) {
        auto ref = take_index("a function index");
        if (!ref) return std::unexpected(ref.error());
        Expr item;
        item.instrs.push_back(Instr{Opcode::RefFunc, 0, 0, *ref});
        seg.items.push_back(std::move(item));
      }
      return {};
    }
    if (at_reftype()) {
      auto rt = take_reftype();
      if (!rt) return std::unexpected(rt.error());
      seg.type = *rt;
    } else if (!bare_indices && !c_.at(TokenKind::RParen)) {
      return std::unexpected(unexpected(c_.peek(), "an element type"));
    }
    while (c_.at(TokenKind::LParen)) {
      Expr item;
      labels_.clear();
      if (c_.at_form("item")) {
        c_.next();
        c_.next();
        if (auto r = instrs(item); !r) return r;
        if (auto r = expect_rparen(); !r) return r;
      } else {
        if (auto r = folded(item); !r) return r;
      }
      seg.items.push_back(std::move(item));
    }
    return {};
  }

  Result<void> elem_field(const Token& kw) {
    const Token& id_tok = c_.peek();
    const auto id = take_id();
    const auto index = static_cast<std::uint32_t>(m_.elems.size());
    if (auto r = bind(Space::Elem, id, index, id.empty() ? kw : id_tok); !r) return r;
    ElemDef seg;
    if (c_.at_keyword("declare")) {
      c_.next();
      seg.mode = SegmentMode::Declarative;
      if (auto r = elem_items(seg, false); !r) return r;
    } else if (c_.at_form("table") || c_.at_form("offset") || c_.at(TokenKind::Number) ||
               (c_.at(TokenKind::LParen) && !c_.at_form("item") && !c_.at_form("ref"))) {
      seg.mode = SegmentMode::Active;
      seg.table = numeric_ref(0);
      if (c_.at_form("table")) {
        c_.next();
        c_.next();
        auto t = take_index("a table index");
        if (!t) return std::unexpected(t.error());
        seg.table = *t;
        if (auto r = expect_rparen(); !r) return r;
      } else if (c_.at(TokenKind::Number)) {
        auto t = take_index("a table index");
        if (!t) return std::unexpected(t.error());
        seg.table = *t;
      }
      if (auto r = offset_expr(seg.offset); !r) return r;
      if (auto r = elem_items(seg, true); !r) return r;
    } else {
      seg.mode = SegmentMode::Passive;
      if (auto r = elem_items(seg, false); !r) return r;
    }
    m_.elems.push_back(std::move(seg));
    return {};
  }

  Result<void> data_field(const Token& kw) {
    const Token& id_tok = c_.peek();
    const auto id = take_id();
    const auto index = static_cast<std::uint32_t>(m_.datas.size());
    if (auto r = bind(Space::Data, id, index, id.empty() ? kw : id_tok); !r) return r;
    DataDef seg;
    if (c_.at(TokenKind::LParen) || c_.at(TokenKind::Number)) {
      seg.mode = SegmentMode::Active;
      seg.memory = numeric_ref(0);
      if (c_.at_form("memory")) {
        c_.next();
        c_.next();
        auto m = take_index("a memory index");
        if (!m) return std::unexpected(m.error());
        seg.memory = *m;
        if (auto r = expect_rparen(); !r) return r;
      } else if (c_.at(TokenKind::Number)) {
        auto m = take_index("a memory index");
        if (!m) return std::unexpected(m.error());
        seg.memory = *m;
      }
      if (auto r = offset_expr(seg.offset); !r) return r;
    }
    while (c_.at(TokenKind::String)) seg.bytes += string_bytes(c_.next());
    m_.datas.push_back(std::move(seg));
    return {};
  }

  // ---------------------------------------------------------------- instructions

  // instr* up to ')', `end`, `else` or the end of input (not consumed). Flat block
  // instructions are tracked on an explicit stack rather than by recursion, so a deep nest
  // of `block … end` (a big switch lowered to br_table) cannot exhaust the native stack.
  Result<void> instrs(Expr& e) {
    struct Open {
      std::string_view label;
      bool is_if = false;
      std::optional<std::size_t> else_at;  // index of the Else instruction once met
      bool is_try = false;                 // a legacy try: catch / catch_all / delegate may follow
      bool in_catch = false;               // … after a catch (no delegate then)
      bool after_catch_all = false;        // … after catch_all (nothing but end)
    };
    std::vector<Open> open;
    for (;;) {
      const Token& t = c_.peek();
      if (t.kind == TokenKind::RParen || t.kind == TokenKind::Eof) {
        if (!open.empty()) return std::unexpected(unexpected(t, "'end'"));
        return {};
      }
      if (t.kind == TokenKind::Keyword && (t.text == "end" || t.text == "else")) {
        if (open.empty()) return {};
        Open& top = open.back();
        c_.next();
        if (t.text == "else") {
          if (!top.is_if || top.else_at) return std::unexpected(unexpected(t, "'end'"));
          if (auto r = end_label(top.label); !r) return r;
          top.else_at = e.instrs.size();
          e.instrs.push_back(Instr{Opcode::Else, 0, 0, {}});
          continue;
        }
        if (auto r = end_label(top.label); !r) return r;
        // An empty else branch is left out, as wabt does: `if … end` means the same.
        if (top.else_at && *top.else_at + 1 == e.instrs.size()) e.instrs.pop_back();
        e.instrs.push_back(Instr{Opcode::End, 0, 0, {}});
        labels_.pop();
        open.pop_back();
        continue;
      }
      if (t.kind == TokenKind::LParen) {
        if (auto r = folded(e); !r) return r;
        continue;
      }
      if (t.kind != TokenKind::Keyword) return std::unexpected(unexpected(t, "an instruction"));
      const auto it = opcode_names().find(t.text);
      if (it == opcode_names().end()) return std::unexpected(unexpected(t, "an instruction"));
      const Opcode op = it->second;
      c_.next();
      Instr in{op, 0, 0, {}};
      if (op == Opcode::Catch || op == Opcode::CatchAll) {
        // Legacy exception handling: an arm of the innermost try, none after catch_all.
        if (open.empty() || !open.back().is_try || open.back().after_catch_all)
          return std::unexpected(unexpected(t, "an instruction"));
        open.back().in_catch = true;
        open.back().after_catch_all = op == Opcode::CatchAll;
        if (auto r = immediates(e, in); !r) return r;
        e.instrs.push_back(in);
        continue;
      }
      if (op == Opcode::Delegate) {
        // Legacy exception handling: `try … delegate l` ends the try; l counts from outside it.
        if (open.empty() || !open.back().is_try || open.back().in_catch)
          return std::unexpected(unexpected(t, "an instruction"));
        labels_.pop();
        open.pop_back();
        auto l = label_ref();
        if (!l) return std::unexpected(l.error());
        in.value = *l;
        e.instrs.push_back(in);
        continue;
      }
      if (opens_block(op)) {
        const std::string_view label = take_id();
        if (auto r = block_type(e, in); !r) return r;
        if (op == Opcode::TryTable) {
          if (auto r = catch_clauses(e, in); !r) return r;
        }
        e.instrs.push_back(in);
        labels_.push(label);
        open.push_back(Open{label, op == Opcode::If, std::nullopt, op == Opcode::Try, false, false});
        continue;
      }
      if (auto r = immediates(e, in); !r) return r;
      e.instrs.push_back(in);
    }
  }

  // try_table's (catch tag label) (catch_ref tag label) (catch_all label) (catch_all_ref label),
  // labels counting from outside the try_table.
  Result<void> catch_clauses(Expr& e, Instr& in) {
    std::vector<Expr::CatchText> list;
    for (;;) {
      std::uint32_t kind = 0;
      if (c_.at_form("catch")) kind = 0;
      else if (c_.at_form("catch_ref")) kind = 1;
      else if (c_.at_form("catch_all")) kind = 2;
      else if (c_.at_form("catch_all_ref")) kind = 3;
      else break;
      c_.next();
      c_.next();
      Expr::CatchText ct;
      ct.kind = kind;
      if (kind <= 1) {
        auto tag = take_index("a tag");
        if (!tag) return std::unexpected(tag.error());
        ct.tag = *tag;
      }
      auto l = label_ref();
      if (!l) return std::unexpected(l.error());
      ct.label = *l;
      if (auto r = expect_rparen(); !r) return r;
      list.push_back(ct);
    }
    in.a.index = static_cast<std::uint32_t>(e.catch_lists.size());
    e.catch_lists.push_back(std::move(list));
    return {};
  }

  // (try $l? blocktype (do instr*) (catch tag instr*)* (catch_all instr*)?) or (… (delegate l)).
  Result<void> folded_try(Expr& e, Instr& in) {
    const std::string_view label = take_id();
    if (auto r = block_type(e, in); !r) return r;
    e.instrs.push_back(in);
    labels_.push(label);
    if (!c_.at_form("do")) return std::unexpected(unexpected(c_.peek(), "'(do'"));
    c_.next();
    c_.next();
    if (auto r = instrs(e); !r) return r;
    if (auto r = expect_rparen(); !r) return r;
    bool arms = false;
    while (c_.at_form("catch") || c_.at_form("catch_all")) {
      c_.next();
      const Token& kw = c_.next();
      arms = true;
      Instr arm{kw.text == "catch" ? Opcode::Catch : Opcode::CatchAll, 0, 0, {}};
      if (arm.op == Opcode::Catch) {
        auto tag = take_index("a tag");
        if (!tag) return std::unexpected(tag.error());
        arm.a = *tag;
      }
      e.instrs.push_back(arm);
      if (auto r = instrs(e); !r) return r;
      if (auto r = expect_rparen(); !r) return r;
      if (arm.op == Opcode::CatchAll) break;  // nothing follows catch_all
    }
    labels_.pop();
    if (!arms && c_.at_form("delegate")) {
      c_.next();
      c_.next();
      auto l = label_ref();
      if (!l) return std::unexpected(l.error());
      if (auto r = expect_rparen(); !r) return r;
      e.instrs.push_back(Instr{Opcode::Delegate, 0, *l, {}});
      return expect_rparen();
    }
    if (auto r = expect_rparen(); !r) return r;
    e.instrs.push_back(Instr{Opcode::End, 0, 0, {}});
    return {};
  }

  Result<std::uint32_t> label_ref() {
    const Token& t = c_.peek();
    if (t.kind == TokenKind::Id) {
      c_.next();
      if (auto depth = labels_.depth_of(t.text)) return *depth;
      return std::unexpected(error_at(t, "unknown label " + std::string(t.text)));
    }
    return take_u32("a label");
  }

  Result<void> block_type(Expr& e, Instr& in) {
    auto tu = take_typeuse(false);
    if (!tu) return std::unexpected(tu.error());
    in.value = e.type_uses.size();
    e.type_uses.push_back(std::move(*tu));
    return {};
  }

  Result<void> end_label(std::string_view label) {
    if (c_.at(TokenKind::Id)) {
      const Token& t = c_.next();
      if (t.text != label) return std::unexpected(error_at(t, "mismatching label " + std::string(t.text)));
    }
    return {};
  }

  // An empty else branch is left out, as wabt does: `if … end` means the same.
  Result<void> else_branch(Expr& e) {
    const std::size_t at = e.instrs.size();
    e.instrs.push_back(Instr{Opcode::Else, 0, 0, {}});
    if (auto r = instrs(e); !r) return r;
    if (e.instrs.size() == at + 1) e.instrs.pop_back();
    return {};
  }

  Result<void> folded(Expr& e) {
    // Folded expressions recurse; their depth is bounded so hostile text cannot overflow the stack.
    struct DepthGuard {
      std::size_t& depth;
      explicit DepthGuard(std::size_t& d) : depth(d) { ++depth; }
      ~DepthGuard() { --depth; }
      DepthGuard(const DepthGuard&) = delete;
      DepthGuard& operator=(const DepthGuard&) = delete;
    } guard(folded_depth_);
    if (folded_depth_ > kMaxFoldedDepth)
      return std::unexpected(error_at(c_.peek(), "nesting too deep: more than " + std::to_string(kMaxFoldedDepth) +
                                                     " folded instructions inside each other"));
    c_.next();  // '('
    const Token& kw = c_.peek();
    if (kw.kind != TokenKind::Keyword) return std::unexpected(unexpected(kw, "an instruction"));
    const auto it = opcode_names().find(kw.text);
    if (it == opcode_names().end()) return std::unexpected(unexpected(kw, "an instruction"));
    const Opcode op = it->second;
    if (op == Opcode::Else || op == Opcode::End || op == Opcode::Catch || op == Opcode::CatchAll ||
        op == Opcode::Delegate)
      return std::unexpected(unexpected(kw, "an instruction"));
    c_.next();
    Instr in{op, 0, 0, {}};
    if (op == Opcode::Try) return folded_try(e, in);
    if (op == Opcode::Block || op == Opcode::Loop || op == Opcode::TryTable) {
      const std::string_view label = take_id();
      if (auto r = block_type(e, in); !r) return r;
      if (op == Opcode::TryTable) {
        if (auto r = catch_clauses(e, in); !r) return r;
      }
      e.instrs.push_back(in);
      labels_.push(label);
      if (auto r = instrs(e); !r) return r;
      labels_.pop();
      if (auto r = expect_rparen(); !r) return r;
      e.instrs.push_back(Instr{Opcode::End, 0, 0, {}});
      return {};
    }
    if (op == Opcode::If) {
      const std::string_view label = take_id();
      if (auto r = block_type(e, in); !r) return r;
      while (c_.at(TokenKind::LParen) && !c_.at_form("then")) {
        if (auto r = folded(e); !r) return r;
      }
      e.instrs.push_back(in);
      labels_.push(label);
      if (!c_.at_form("then")) return std::unexpected(unexpected(c_.peek(), "'(then'"));
      c_.next();
      c_.next();
      if (auto r = instrs(e); !r) return r;
      if (auto r = expect_rparen(); !r) return r;
      if (c_.at_form("else")) {
        c_.next();
        c_.next();
        if (auto r = else_branch(e); !r) return r;
        if (auto r = expect_rparen(); !r) return r;
      }
      labels_.pop();
      if (auto r = expect_rparen(); !r) return r;
      e.instrs.push_back(Instr{Opcode::End, 0, 0, {}});
      return {};
    }
    if (auto r = immediates(e, in); !r) return r;
    // The operands: folded instructions, and (as wabt and wasm-tools accept, e.g.
    // `(ref.i31 local.get 1)`) plain ones too, all emitted in order before the instruction.
    if (auto r = instrs(e); !r) return r;
    if (auto r = expect_rparen(); !r) return r;
    e.instrs.push_back(in);
    return {};
  }

  // table.copy / memory.copy: (destination source)? indices, both 0 when absent; the source goes
  // to e.second_refs.
  Result<void> copy_indices(Expr& e, Instr& in, const char* what) {
    in.a = numeric_ref(0);
    Ref src_ref = numeric_ref(0);
    if (at_index()) {
      auto dst = take_index(what);
      if (!dst) return std::unexpected(dst.error());
      auto src = take_index(what);
      if (!src) return std::unexpected(src.error());
      in.a = *dst;
      src_ref = *src;
    }
    in.value = e.second_refs.size();
    e.second_refs.push_back(src_ref);
    return {};
  }

  // memidx? then offset=, align=. A memory index is an id, or a number unless (lane ops) it is
  // the lane index: a number followed by another number or by offset=/align= is the memory.
  Result<void> memarg(Instr& in, std::uint32_t natural, bool lane_follows = false) {
    in.align = natural;
    in.a = numeric_ref(0);
    if (c_.at(TokenKind::Id) || (c_.at(TokenKind::Number) && (!lane_follows || c_.peek(1).kind == TokenKind::Number ||
                                                             (c_.peek(1).kind == TokenKind::Keyword &&
                                                              (c_.peek(1).text.starts_with("offset=") ||
                                                               c_.peek(1).text.starts_with("align=")))))) {
      auto m = take_index("a memory index");
      if (!m) return std::unexpected(m.error());
      in.a = *m;
    }
    if (c_.peek().kind == TokenKind::Keyword && c_.peek().text.starts_with("offset=")) {
      const Token& t = c_.next();
      // memory64 offsets take 64 bits (the validator checks an i32 memory's fit in 32).
      auto v = parse_unsigned(t.text.substr(7), options_.memory64 ? 64 : 32);
      if (!v) {
        if (v.error() == NumError::OutOfRange) return std::unexpected(error_at(t, "i32 constant out of range: " + std::string(t.text)));
        return std::unexpected(unknown_operator(t));
      }
      in.value = *v;
    }
    if (c_.peek().kind == TokenKind::Keyword && c_.peek().text.starts_with("align=")) {
      const Token& t = c_.next();
      auto v = parse_unsigned(t.text.substr(6), options_.memory64 ? 64 : 32);
      if (!v) {
        if (v.error() == NumError::OutOfRange) return std::unexpected(error_at(t, "alignment out of range: " + std::string(t.text)));
        return std::unexpected(unknown_operator(t));
      }
      if (*v == 0 || (*v & (*v - 1)) != 0)
        return std::unexpected(error_at(t, "alignment must be a power of two: " + std::string(t.text)));
      in.align = static_cast<std::uint32_t>(std::countr_zero(*v));
    }
    return {};
  }

  Result<std::uint64_t> take_const(Opcode op) {
    const Token& t = c_.peek();
    if (t.kind != TokenKind::Number && t.kind != TokenKind::Keyword) return std::unexpected(unexpected(t, "a constant"));
    std::expected<std::uint64_t, NumError> v = std::unexpected(NumError::Malformed);
    switch (op) {
      case Opcode::I32Const:
        if (t.kind == TokenKind::Number) v = parse_int(t.text, 32);
        break;
      case Opcode::I64Const:
        if (t.kind == TokenKind::Number) v = parse_int(t.text, 64);
        break;
      case Opcode::F32Const: {
        auto f = parse_f32(t.text);
        if (f) v = *f;
        else v = std::unexpected(f.error());
        break;
      }
      default:
        v = parse_f64(t.text);
        break;
    }
    if (!v) {
      if (v.error() == NumError::OutOfRange) return std::unexpected(error_at(t, "constant out of range: " + std::string(t.text)));
      return std::unexpected(unexpected(t, "a constant"));
    }
    c_.next();
    return *v;
  }

  // A lane index: an unsigned literal of at most 8 bits (its bound is the validator's check).
  Result<std::uint8_t> lane_index() {
    const Token& t = c_.peek();
    if (t.kind != TokenKind::Number) return std::unexpected(unexpected(t, "a lane index"));
    auto v = parse_unsigned(t.text, 8);
    if (!v) {
      if (v.error() == NumError::OutOfRange) return std::unexpected(error_at(t, "i8 constant out of range: " + std::string(t.text)));
      return std::unexpected(unexpected(t, "a lane index"));
    }
    c_.next();
    return static_cast<std::uint8_t>(*v);
  }

  // The literals that follow a v128.const shape or i8x16.shuffle: numbers (and malformed
  // number-like tokens), and inf/nan keywords. As in the reference parser, a malformed token is
  // an "unknown operator" first, then the count is checked, then each lane's range.
  Result<std::vector<const Token*>> lane_tokens() {
    std::vector<const Token*> out;
    for (;;) {
      const Token& t = c_.peek();
      const bool keyword = t.kind == TokenKind::Keyword && (t.text == "inf" || t.text.starts_with("nan"));
      if (t.kind != TokenKind::Number && t.kind != TokenKind::Reserved && !keyword) break;
      const bool malformed = t.kind == TokenKind::Reserved || (t.kind == TokenKind::Number && !is_well_formed_number(t.text)) ||
                             (keyword && !is_known_keyword(t.text));
      if (malformed) return std::unexpected(unexpected(t, "a lane literal"));
      out.push_back(&c_.next());
    }
    return out;
  }

  // https://webassembly.github.io/spec/core/text/instructions.html#vector-instructions
  Result<void> v128_const(Expr& e, Instr& in) {
    const Token& shape_token = c_.peek();
    const auto shape = shape_token.kind == TokenKind::Keyword ? v128_shape(shape_token.text) : std::nullopt;
    if (!shape) return std::unexpected(unexpected(shape_token, "a vector shape (i8x16, i16x8, i32x4, i64x2, f32x4, f64x2)"));
    c_.next();
    const auto lane_list = lane_tokens();
    if (!lane_list) return std::unexpected(lane_list.error());
    const auto& tokens = *lane_list;
    if (tokens.size() != shape->lanes) {
      const Token& at = tokens.empty() ? c_.peek() : *tokens.front();
      return std::unexpected(error_at(at, "wrong number of lane literals: " + std::string(shape_token.text) + " takes " +
                                              std::to_string(shape->lanes) + ", found " + std::to_string(tokens.size())));
    }
    std::array<std::uint8_t, 16> bytes{};
    for (unsigned i = 0; i < shape->lanes; ++i) {
      const auto v = parse_lane(*shape, tokens[i]->text);
      if (!v) {
        if (v.error() == NumError::OutOfRange)
          return std::unexpected(error_at(*tokens[i], "constant out of range: " + std::string(tokens[i]->text)));
        return std::unexpected(unexpected(*tokens[i], "a lane literal"));
      }
      put_lane(bytes, *shape, i, *v);
    }
    in.value = e.v128s.size();
    e.v128s.push_back(bytes);
    return {};
  }

  Result<void> shuffle_lanes(Expr& e, Instr& in) {
    const auto lane_list = lane_tokens();
    if (!lane_list) return std::unexpected(lane_list.error());
    const auto& tokens = *lane_list;
    if (tokens.size() != 16) {
      const Token& at = tokens.empty() ? c_.peek() : *tokens.front();
      return std::unexpected(
          error_at(at, "invalid lane length: i8x16.shuffle takes 16 lane indices, found " + std::to_string(tokens.size())));
    }
    std::array<std::uint8_t, 16> lanes{};
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      // The reference parser reads each as an i8: a sign, a fraction or inf/nan is out of its range.
      const auto v = parse_unsigned(tokens[i]->text, 8);
      if (!v) return std::unexpected(error_at(*tokens[i], "i8 constant out of range: " + std::string(tokens[i]->text)));
      lanes[i] = static_cast<std::uint8_t>(*v);
    }
    in.value = e.v128s.size();
    e.v128s.push_back(lanes);
    return {};
  }

  Result<void> immediates(Expr& e, Instr& in) {
    const auto& info = wasm::info(in.op);
    switch (info.imm) {
      case ImmKind::None:
        if (in.op == Opcode::Select && c_.at_form("result")) {
          in.op = Opcode::SelectT;
          std::vector<ValType> types;
          while (c_.at_form("result")) {
            c_.next();
            c_.next();
            while (!c_.at(TokenKind::RParen)) {
              auto t = take_valtype();
              if (!t) return std::unexpected(t.error());
              types.push_back(*t);
            }
            c_.next();
          }
          in.value = e.select_types.size();
          e.select_types.push_back(std::move(types));
        }
        return {};
      case ImmKind::LabelIdx: {
        auto l = label_ref();
        if (!l) return std::unexpected(l.error());
        in.value = *l;
        return {};
      }
      case ImmKind::TagIdx: {
        auto tag = take_index("a tag");
        if (!tag) return std::unexpected(tag.error());
        in.a = *tag;
        return {};
      }
      case ImmKind::BrTable: {
        std::vector<std::uint32_t> labels;
        while (at_index()) {
          auto l = label_ref();
          if (!l) return std::unexpected(l.error());
          labels.push_back(*l);
        }
        if (labels.empty()) return std::unexpected(unexpected(c_.peek(), "a label"));
        in.value = e.label_lists.size();
        e.label_lists.push_back(std::move(labels));
        return {};
      }
      case ImmKind::CallIndirect: {
        in.a = numeric_ref(0);
        if (at_index()) {
          auto t = take_index("a table index");
          if (!t) return std::unexpected(t.error());
          in.a = *t;
        }
        return block_type(e, in);
      }
      case ImmKind::FuncIdx:
      case ImmKind::LocalIdx:
      case ImmKind::GlobalIdx:
      case ImmKind::DataIdx:
      case ImmKind::ElemIdx: {
        auto r = take_index();
        if (!r) return std::unexpected(r.error());
        in.a = *r;
        return {};
      }
      case ImmKind::MemoryInit: {  // memory.init memidx? dataidx
        auto first = take_index();
        if (!first) return std::unexpected(first.error());
        Ref mem = numeric_ref(0);
        in.a = *first;
        if (at_index()) {
          auto data = take_index("a data index");
          if (!data) return std::unexpected(data.error());
          mem = *first;
          in.a = *data;
        }
        in.value = e.second_refs.size();
        e.second_refs.push_back(mem);
        return {};
      }
      case ImmKind::TableIdx: {
        in.a = numeric_ref(0);
        if (at_index()) {
          auto r = take_index("a table index");
          if (!r) return std::unexpected(r.error());
          in.a = *r;
        }
        return {};
      }
      case ImmKind::TableInit: {
        auto first = take_index("an element index");
        if (!first) return std::unexpected(first.error());
        if (at_index()) {
          auto second = take_index("an element index");
          if (!second) return std::unexpected(second.error());
          in.a = *first;
          in.value = e.second_refs.size();
          e.second_refs.push_back(*second);
        } else {
          in.a = numeric_ref(0);
          in.value = e.second_refs.size();
          e.second_refs.push_back(*first);
        }
        return {};
      }
      case ImmKind::TableCopy: return copy_indices(e, in, "a table index");
      case ImmKind::MemIdx: {  // memory.size/grow/fill memidx?
        in.a = numeric_ref(0);
        if (at_index()) {
          auto r = take_index("a memory index");
          if (!r) return std::unexpected(r.error());
          in.a = *r;
        }
        return {};
      }
      case ImmKind::MemoryCopy: return copy_indices(e, in, "a memory index");
      case ImmKind::I32:
      case ImmKind::I64:
      case ImmKind::F32:
      case ImmKind::F64: {
        auto v = take_const(in.op);
        if (!v) return std::unexpected(v.error());
        in.value = *v;
        return {};
      }
      case ImmKind::RefType: {  // ref.null's heap type: the type (ref null ht)'s bits
        auto heap = take_heaptype();
        if (!heap) return std::unexpected(heap.error());
        in.value = ValType::ref(true, *heap).bits();
        return {};
      }
      case ImmKind::TypeIdx: {  // call_ref, return_call_ref; GC: struct.new, array.get, …
        auto r = take_index("a type index");
        if (!r) return std::unexpected(r.error());
        in.a = *r;
        return {};
      }
      case ImmKind::StructField:
      case ImmKind::ArrayFixed:
      case ImmKind::ArrayData:
      case ImmKind::ArrayElem:
      case ImmKind::ArrayCopy: {  // typeidx, then a field, count, data, elem or type index
        auto t = take_index("a type index");
        if (!t) return std::unexpected(t.error());
        in.a = *t;
        Result<Ref> second = numeric_ref(0);
        if (info.imm == ImmKind::ArrayFixed) {
          auto n = take_u32("an element count");
          if (!n) return std::unexpected(n.error());
          second = numeric_ref(*n);
        } else {
          second = take_index("an index");
        }
        if (!second) return std::unexpected(second.error());
        in.value = e.second_refs.size();
        e.second_refs.push_back(*second);
        return {};
      }
      case ImmKind::HeapType: {  // ref.test / ref.cast reftype: a nullable one picks the opcode's null form
        auto t = take_reftype();
        if (!t) return std::unexpected(t.error());
        if (t->nullable()) in.op = in.op == Opcode::RefTest ? Opcode::RefTestNull : Opcode::RefCastNull;
        in.value = t->bits();
        return {};
      }
      case ImmKind::BrOnCast: {  // label reftype reftype (the types in select_types, at index align)
        auto l = label_ref();
        if (!l) return std::unexpected(l.error());
        in.value = *l;
        auto t1 = take_reftype();
        if (!t1) return std::unexpected(t1.error());
        auto t2 = take_reftype();
        if (!t2) return std::unexpected(t2.error());
        in.align = static_cast<std::uint32_t>(e.select_types.size());
        e.select_types.push_back({*t1, *t2});
        return {};
      }
      case ImmKind::MemArg8:
      case ImmKind::MemArg16:
      case ImmKind::MemArg32:
      case ImmKind::MemArg64:
      case ImmKind::MemArg128:
        return memarg(in, *natural_alignment_log2(info.imm));
      case ImmKind::MemArgLane8:
      case ImmKind::MemArgLane16:
      case ImmKind::MemArgLane32:
      case ImmKind::MemArgLane64: {
        if (auto r = memarg(in, *natural_alignment_log2(info.imm), /*lane_follows=*/true); !r) return r;
        auto lane = lane_index();
        if (!lane) return std::unexpected(lane.error());
        in.align |= std::uint32_t{*lane} << 8;
        return {};
      }
      case ImmKind::Lane16:
      case ImmKind::Lane8:
      case ImmKind::Lane4:
      case ImmKind::Lane2: {
        auto lane = lane_index();
        if (!lane) return std::unexpected(lane.error());
        in.value = *lane;
        return {};
      }
      case ImmKind::V128: return v128_const(e, in);
      case ImmKind::Shuffle: return shuffle_lanes(e, in);
      case ImmKind::BlockType:
      case ImmKind::TryTable:
      case ImmKind::SelectT:
        break;
    }
    return std::unexpected(unexpected(c_.peek(), "an instruction"));
  }

  // Far beyond hand-written or wasm2wat output (which is flat). Each level costs a few KiB of
  // native stack under AddressSanitizer, so 512 stays within 2 MiB there, and within a small
  // thread stack of an embedder in an ordinary build.
  static constexpr std::size_t kMaxFoldedDepth = 512;

  std::unordered_map<std::string_view, std::uint32_t> pending_ids_;  // named heap types: ModuleAst::pending_types
  Cursor& c_;
  const WatOptions& options_;
  ModuleAst m_;
  std::size_t folded_depth_ = 0;
  std::optional<ExternKind> first_definition_;
  LabelStack labels_;
};

}  // namespace

Result<ModuleAst> parse_fields(Cursor& cursor, const WatOptions& options, bool bare) {
  return FieldParser(cursor, options).run(bare);
}

}  // namespace sprawling::wasm::text::tree
