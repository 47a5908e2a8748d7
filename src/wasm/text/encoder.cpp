// Pass 2 of the WAT module parser: resolves the $names that may point forward, adds the
// implicit function types at the end of the type section in textual order, and writes the
// sections of the binary module.
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

using Bytes = std::vector<std::uint8_t>;

void put_u32(Bytes& b, std::uint64_t v) {
  do {
    std::uint8_t byte = v & 0x7F;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    b.push_back(byte);
  } while (v != 0);
}
void put_s64(Bytes& b, std::int64_t v) {
  for (;;) {
    const std::uint8_t byte = v & 0x7F;
    v >>= 7;  // arithmetic shift (C++20)
    const bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
    b.push_back(done ? byte : (byte | 0x80));
    if (done) return;
  }
}
void put_name(Bytes& b, std::string_view s) {
  put_u32(b, s.size());
  b.insert(b.end(), s.begin(), s.end());
}
void put_le(Bytes& b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_limits(Bytes& b, const Limits& l) {
  b.push_back(static_cast<std::uint8_t>((l.max ? 0x01 : 0x00) | (l.is64 ? 0x04 : 0x00)));
  put_u32(b, l.min);
  if (l.max) put_u32(b, *l.max);
}
void put_section(Bytes& out, std::uint8_t id, const Bytes& content) {
  out.push_back(id);
  put_u32(out, content.size());
  out.insert(out.end(), content.begin(), content.end());
}

class Encoder {
 public:
  Encoder(ModuleAst& m, const WatOptions& options, std::string_view module_id)
      : m_(m), options_(options), module_id_(module_id), types_(m.types) {}

  Result<Bytes> run() {
    // Function types first, in textual order (declaration, then the body's block types), so
    // implicit types land at the end of the type section in the spec's order.
    std::vector<std::uint32_t> func_types;
    std::vector<Bytes> bodies;
    for (auto& f : m_.funcs) {
      auto t = func_type_index(f.type);
      if (!t) return std::unexpected(t.error());
      func_types.push_back(*t);
      if (f.import) continue;
      auto body = encode_func(f, *t);
      if (!body) return std::unexpected(body.error());
      bodies.push_back(std::move(*body));
    }
    std::vector<std::uint32_t> tag_types;
    for (const auto& t : m_.tags) {
      auto idx = func_type_index(t.type);
      if (!idx) return std::unexpected(idx.error());
      tag_types.push_back(*idx);
    }

    Bytes out = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
    Bytes s;

    if (!types_.empty()) {
      s.clear();
      Bytes groups;
      std::size_t n_groups = 0;
      for (std::size_t i = 0; i < types_.size();) {
        const FuncType& first = types_[i];
        const std::size_t n = first.rec_start == i && first.rec_size > 1 ? first.rec_size : 1;
        if (n > 1) {
          groups.push_back(0x4E);
          put_u32(groups, n);
        }
        for (std::size_t k = i; k < i + n; ++k) put_sub_type(groups, types_[k]);
        ++n_groups;
        i += n;
      }
      put_u32(s, n_groups);
      s.insert(s.end(), groups.begin(), groups.end());
      put_section(out, 1, s);
    }

    if (!m_.imports.empty()) {
      s.clear();
      put_u32(s, m_.imports.size());
      for (const auto& imp : m_.imports) {
        const ImportName* name = nullptr;
        Bytes desc;
        switch (imp.kind) {
          case ExternKind::Func:
            name = &*m_.funcs[imp.index].import;
            put_u32(desc, func_types[imp.index]);
            break;
          case ExternKind::Table:
            name = &*m_.tables[imp.index].import;
            put_valtype(desc, m_.tables[imp.index].type.element);
            put_limits(desc, m_.tables[imp.index].type.limits);
            break;
          case ExternKind::Memory:
            name = &*m_.memories[imp.index].import;
            put_limits(desc, m_.memories[imp.index].type.limits);
            break;
          case ExternKind::Global:
            name = &*m_.globals[imp.index].import;
            put_valtype(desc, m_.globals[imp.index].type.type);
            desc.push_back(m_.globals[imp.index].type.is_mutable ? 1 : 0);
            break;
          case ExternKind::Tag:
            name = &*m_.tags[imp.index].import;
            desc.push_back(0x00);  // attribute: exception
            put_u32(desc, tag_types[imp.index]);
            break;
        }
        put_name(s, name->module);
        put_name(s, name->field);
        s.push_back(static_cast<std::uint8_t>(imp.kind));
        s.insert(s.end(), desc.begin(), desc.end());
      }
      put_section(out, 2, s);
    }

    if (!bodies.empty()) {
      s.clear();
      put_u32(s, bodies.size());
      for (std::size_t i = 0; i < m_.funcs.size(); ++i) {
        if (!m_.funcs[i].import) put_u32(s, func_types[i]);
      }
      put_section(out, 3, s);
    }

    {
      s.clear();
      std::size_t n = 0;
      for (const auto& t : m_.tables) {
        if (t.import) continue;
        ++n;
        if (t.init) {  // typed function references: 0x40 0x00 tabletype expr
          s.push_back(0x40);
          s.push_back(0x00);
        }
        put_valtype(s, t.type.element);
        put_limits(s, t.type.limits);
        if (t.init) {
          if (auto r = encode_const_expr(*t.init, s); !r) return std::unexpected(r.error());
        }
      }
      if (n) {
        Bytes sec;
        put_u32(sec, n);
        sec.insert(sec.end(), s.begin(), s.end());
        put_section(out, 4, sec);
      }
    }

    {
      s.clear();
      std::size_t n = 0;
      for (const auto& mem : m_.memories) {
        if (mem.import) continue;
        ++n;
        put_limits(s, mem.type.limits);
      }
      if (n) {
        Bytes sec;
        put_u32(sec, n);
        sec.insert(sec.end(), s.begin(), s.end());
        put_section(out, 5, sec);
      }
    }

    {
      s.clear();
      std::size_t n = 0;
      for (std::size_t i = 0; i < m_.tags.size(); ++i) {
        if (m_.tags[i].import) continue;
        ++n;
        s.push_back(0x00);  // attribute: exception
        put_u32(s, tag_types[i]);
      }
      if (n) {
        Bytes sec;
        put_u32(sec, n);
        sec.insert(sec.end(), s.begin(), s.end());
        put_section(out, 13, sec);  // the tag section: after memory, before global
      }
    }

    {
      s.clear();
      std::size_t n = 0;
      for (const auto& g : m_.globals) {
        if (g.import) continue;
        ++n;
        put_valtype(s, g.type.type);
        s.push_back(g.type.is_mutable ? 1 : 0);
        if (auto r = encode_const_expr(g.init, s); !r) return std::unexpected(r.error());
      }
      if (n) {
        Bytes sec;
        put_u32(sec, n);
        sec.insert(sec.end(), s.begin(), s.end());
        put_section(out, 6, sec);
      }
    }

    if (!m_.exports.empty()) {
      s.clear();
      put_u32(s, m_.exports.size());
      for (const auto& e : m_.exports) {
        put_name(s, e.name);
        s.push_back(static_cast<std::uint8_t>(e.kind));
        auto idx = resolve(space_of(e.kind), e.ref);
        if (!idx) return std::unexpected(idx.error());
        put_u32(s, *idx);
      }
      put_section(out, 7, s);
    }

    if (m_.start) {
      s.clear();
      auto idx = resolve(Space::Func, *m_.start);
      if (!idx) return std::unexpected(idx.error());
      put_u32(s, *idx);
      put_section(out, 8, s);
    }

    if (!m_.elems.empty()) {
      s.clear();
      put_u32(s, m_.elems.size());
      for (const auto& seg : m_.elems) {
        if (auto r = encode_elem(seg, s); !r) return std::unexpected(r.error());
      }
      put_section(out, 9, s);
    }

    if (uses_data_index_) {
      s.clear();
      put_u32(s, m_.datas.size());
      put_section(out, 12, s);
    }

    if (!bodies.empty()) {
      s.clear();
      put_u32(s, bodies.size());
      for (const auto& b : bodies) {
        put_u32(s, b.size());
        s.insert(s.end(), b.begin(), b.end());
      }
      put_section(out, 10, s);
    }

    if (!m_.datas.empty()) {
      s.clear();
      put_u32(s, m_.datas.size());
      for (const auto& seg : m_.datas) {
        if (seg.mode == SegmentMode::Passive) {
          s.push_back(0x01);
        } else {
          auto mem = resolve(Space::Memory, seg.memory);
          if (!mem) return std::unexpected(mem.error());
          if (*mem == 0) {
            s.push_back(0x00);
          } else {
            s.push_back(0x02);
            put_u32(s, *mem);
          }
          if (auto r = encode_const_expr(seg.offset, s); !r) return std::unexpected(r.error());
        }
        put_name(s, seg.bytes);
      }
      put_section(out, 11, s);
    }

    if (options_.debug_names) put_name_section(out);
    if (type_error_) return std::unexpected(*type_error_);
    return out;
  }

 private:
  // ---------------------------------------------------------------- value types
  // A value type with its named heap type (a placeholder, ModuleAst::pending_types) resolved; an
  // unknown name is remembered (run() reports the first) and encodes as type 0.
  ValType resolved(ValType t) {
    if (!t.is_ref() || t.heap() < kPendingHeap || t.heap() >= ValType::kAbstractHeap) return t;
    auto idx = resolve(Space::Type, m_.pending_types[t.heap() - kPendingHeap]);
    if (!idx) {
      if (!type_error_) type_error_ = idx.error();
      return ValType::ref(t.nullable(), 0);
    }
    return ValType::ref(t.nullable(), *idx);
  }
  // A subtype: `sub` (0x50) / `sub final` (0x4F) with its supertype when it is not a bare final
  // type, then the composite type.
  void put_sub_type(Bytes& b, const FuncType& t) {
    if (!t.is_final || t.super != kNoSuper) {
      b.push_back(t.is_final ? 0x4F : 0x50);
      if (t.super == kNoSuper) {
        put_u32(b, 0);
      } else {
        put_u32(b, 1);
        put_u32(b, resolved(ValType::ref(false, t.super)).type_index());
      }
    }
    switch (t.kind) {
      case TypeKind::Func:
        b.push_back(0x60);
        put_u32(b, t.params.size());
        for (auto v : t.params) put_valtype(b, v);
        put_u32(b, t.results.size());
        for (auto v : t.results) put_valtype(b, v);
        return;
      case TypeKind::Struct:
        b.push_back(0x5F);
        put_u32(b, t.fields.size());
        for (const FieldType& f : t.fields) put_field_type(b, f);
        return;
      case TypeKind::Array:
        b.push_back(0x5E);
        put_field_type(b, t.fields.at(0));
        return;
    }
  }
  void put_field_type(Bytes& b, const FieldType& f) {
    if (f.packed == FieldType::Packed::I8) {
      b.push_back(0x78);
    } else if (f.packed == FieldType::Packed::I16) {
      b.push_back(0x77);
    } else {
      put_valtype(b, f.type);
    }
    b.push_back(f.is_mutable ? 1 : 0);
  }
  static void put_heap(Bytes& b, std::uint32_t heap) {
    if (heap >= ValType::kAbstractHeap) {
      b.push_back(static_cast<std::uint8_t>(heap & 0xFF));  // a one-byte negative s33
    } else {
      put_s64(b, heap);
    }
  }
  // One byte for numbers, vectors and the nullable abstract references (funcref, …); else
  // 0x63/0x64 and the heap type.
  void put_valtype(Bytes& b, ValType t) {
    t = resolved(t);
    if (!t.is_ref()) {
      b.push_back(t.byte());
    } else if (t.nullable() && t.heap() >= ValType::kAbstractHeap) {
      b.push_back(t.heap_byte());
    } else {
      b.push_back(t.byte());
      put_heap(b, t.heap());
    }
  }

  // https://webassembly.github.io/spec/core/appendix/custom.html#name-section
  void put_name_section(Bytes& out) const {
    Bytes s;
    put_name(s, "name");
    if (!module_id_.empty()) {
      Bytes sub;
      put_name(sub, module_id_.substr(1));
      s.push_back(0x00);
      put_u32(s, sub.size());
      s.insert(s.end(), sub.begin(), sub.end());
    }
    Bytes sub;
    std::size_t named = 0;
    for (std::size_t i = 0; i < m_.funcs.size(); ++i) {
      if (m_.funcs[i].id.empty()) continue;
      ++named;
      put_u32(sub, i);
      put_name(sub, m_.funcs[i].id.substr(1));
    }
    if (named != 0) {
      Bytes vec;
      put_u32(vec, named);
      vec.insert(vec.end(), sub.begin(), sub.end());
      s.push_back(0x01);
      put_u32(s, vec.size());
      s.insert(s.end(), vec.begin(), vec.end());
    }
    if (module_id_.empty() && named == 0) return;
    put_section(out, 0, s);
  }

  static Space space_of(ExternKind k) {
    switch (k) {
      case ExternKind::Func: return Space::Func;
      case ExternKind::Table: return Space::Table;
      case ExternKind::Memory: return Space::Memory;
      case ExternKind::Global: return Space::Global;
      case ExternKind::Tag: return Space::Tag;
    }
    return Space::Func;
  }

  Result<std::uint32_t> resolve(Space space, const Ref& ref) const {
    if (ref.id.empty()) return ref.index;
    const auto& map = m_.names[static_cast<std::size_t>(space)];
    const auto it = map.find(ref.id);
    if (it == map.end())
      return std::unexpected(error_pos(ref.pos, "unknown " + std::string(space_name(space)) + " " + std::string(ref.id)));
    return it->second;
  }

  // The signature's bytes as a map key (params, a separator no value type uses, results).
  static std::string type_key(const FuncType& sig) {
    std::string key;
    key.reserve(4 * (sig.params.size() + sig.results.size()) + 1);
    const auto put = [&](ValType v) {
      for (int i = 0; i < 4; ++i) key.push_back(static_cast<char>((v.bits() >> (8 * i)) & 0xFF));
    };
    for (auto v : sig.params) put(v);
    key.push_back('\0');
    for (auto v : sig.results) put(v);
    return key;
  }

  // The smallest index of an equal type, or a new implicit type at the end. Indexed, so a
  // module with many distinct signatures does not make this quadratic.
  std::uint32_t find_or_add_type(const FuncType& sig) {
    if (type_index_.empty()) {
      for (std::size_t i = 0; i < types_.size(); ++i) {
        // Only a plain function type (final, no supertype, alone in its group) is what an
        // inline signature means.
        const FuncType& t = types_[i];
        if (t.is_func() && t.is_final && t.super == kNoSuper && t.rec_size == 1)
          type_index_.emplace(type_key(t), static_cast<std::uint32_t>(i));
      }
    }
    const auto [it, added] = type_index_.emplace(type_key(sig), static_cast<std::uint32_t>(types_.size()));
    if (added) types_.push_back(sig);
    return it->second;
  }

  // The explicit type of a type use, checked against its inline part, if it names one that exists.
  Result<std::optional<std::uint32_t>> explicit_type(const TypeUse& tu) const {
    if (!tu.type) return std::optional<std::uint32_t>{};
    auto idx = resolve(Space::Type, *tu.type);
    if (!idx) return std::unexpected(idx.error());
    if (*idx >= types_.size()) {
      if (tu.has_inline) return std::unexpected(error_pos(tu.type->pos, "unknown type " + std::to_string(*idx)));
      return std::optional<std::uint32_t>{*idx};
    }
    if (tu.has_inline && types_[*idx] != tu.sig)
      return std::unexpected(error_pos(tu.pos, "inline function type does not match type " + std::to_string(*idx)));
    return std::optional<std::uint32_t>{*idx};
  }

  Result<std::uint32_t> func_type_index(const TypeUse& tu) {
    auto ex = explicit_type(tu);
    if (!ex) return std::unexpected(ex.error());
    if (*ex) return **ex;
    return find_or_add_type(tu.sig);
  }

  // wabt's choice: a block type with no params and at most one result is written inline even
  // when it was given as (type x).
  Result<void> put_block_type(const TypeUse& tu, Bytes& b) {
    auto ex = explicit_type(tu);
    if (!ex) return std::unexpected(ex.error());
    const FuncType* sig = &tu.sig;
    if (*ex) {
      if (**ex >= types_.size()) {
        put_s64(b, **ex);
        return {};
      }
      sig = &types_[**ex];
    }
    if (sig->params.empty() && sig->results.size() <= 1) {
      if (sig->results.empty()) {
        b.push_back(0x40);
      } else {
        put_valtype(b, sig->results[0]);
      }
      return {};
    }
    const std::uint32_t idx = *ex ? **ex : find_or_add_type(*sig);
    put_s64(b, idx);
    return {};
  }

  struct Locals {
    std::unordered_map<std::string_view, std::uint32_t> ids;
    bool params_known = true;
    Pos type_pos;
  };

  Result<Bytes> encode_func(const FuncDef& f, std::uint32_t type_index) {
    Locals locals;
    std::uint32_t n_params = 0;
    if (f.type.has_inline || !f.type.type) {
      n_params = static_cast<std::uint32_t>(f.type.sig.params.size());
      for (std::uint32_t i = 0; i < n_params; ++i) {
        if (!f.type.param_ids[i].empty()) locals.ids.emplace(f.type.param_ids[i], i);
      }
    } else if (type_index < types_.size()) {
      n_params = static_cast<std::uint32_t>(types_[type_index].params.size());
    } else {
      locals.params_known = false;
      locals.type_pos = f.type.pos;
    }
    for (std::uint32_t i = 0; i < f.locals.size(); ++i) {
      if (!f.local_ids[i].empty()) locals.ids.emplace(f.local_ids[i], n_params + i);
    }
    Bytes b;
    // Locals as runs of one type.
    std::vector<std::pair<std::uint32_t, ValType>> runs;
    for (auto t : f.locals) {
      if (!runs.empty() && runs.back().second == t) ++runs.back().first;
      else runs.emplace_back(1, t);
    }
    put_u32(b, runs.size());
    for (const auto& [n, t] : runs) {
      put_u32(b, n);
      put_valtype(b, t);
    }
    if (auto r = encode_expr(f.body, b, &locals); !r) return std::unexpected(r.error());
    b.push_back(0x0B);
    return b;
  }

  Result<void> encode_const_expr(const Expr& e, Bytes& b) {
    if (auto r = encode_expr(e, b, nullptr); !r) return r;
    b.push_back(0x0B);
    return {};
  }

  Result<void> encode_elem(const ElemDef& seg, Bytes& s) {
    std::uint32_t table = 0;
    if (seg.mode == SegmentMode::Active) {
      auto t = resolve(Space::Table, seg.table);
      if (!t) return std::unexpected(t.error());
      table = *t;
    }
    // Function indices (elemkind func: typed (ref func) in 3.0), or expressions of seg.type.
    bool all_ref_func = seg.type == kFuncIndices || (!options_.function_references && seg.type == ValType::FuncRef);
    for (const auto& item : seg.items) {
      if (item.instrs.size() != 1 || item.instrs[0].op != Opcode::RefFunc) all_ref_func = false;
    }
    const ValType expr_type = seg.type;
    std::uint8_t flags = 0;
    switch (seg.mode) {
      // The legacy forms (0, 4) imply table 0 and function indices / funcref expressions;
      // anything else needs the explicit one.
      case SegmentMode::Active:
        flags = (table != 0 || (!all_ref_func && expr_type != ValType::FuncRef)) ? 0x02 : 0x00;
        break;
      case SegmentMode::Passive: flags = 0x01; break;
      case SegmentMode::Declarative: flags = 0x03; break;
    }
    if (!all_ref_func) flags |= 0x04;
    s.push_back(flags);
    if (flags & 0x02 && seg.mode == SegmentMode::Active) put_u32(s, table);
    if (seg.mode == SegmentMode::Active) {
      if (auto r = encode_const_expr(seg.offset, s); !r) return r;
    }
    if (flags & 0x03) {
      if (flags & 0x04) put_valtype(s, expr_type);
      else s.push_back(0x00);  // elemkind funcref
    }
    put_u32(s, seg.items.size());
    for (const auto& item : seg.items) {
      if (flags & 0x04) {
        if (auto r = encode_const_expr(item, s); !r) return r;
      } else {
        auto f = resolve(Space::Func, item.instrs[0].a);
        if (!f) return std::unexpected(f.error());
        put_u32(s, *f);
      }
    }
    return {};
  }

  Result<std::uint32_t> local_index(const Ref& ref, const Locals* locals) const {
    if (ref.id.empty()) return ref.index;
    if (locals) {
      const auto it = locals->ids.find(ref.id);
      if (it != locals->ids.end()) return it->second;
      if (!locals->params_known) return std::unexpected(error_pos(locals->type_pos, "unknown type"));
    }
    return std::unexpected(error_pos(ref.pos, "unknown local " + std::string(ref.id)));
  }

  // A struct field: a number, or a name the struct type `type` gave one of its fields.
  Result<std::uint32_t> field_index(std::uint32_t type, const Ref& ref) const {
    if (ref.id.empty()) return ref.index;
    if (type < m_.field_ids.size()) {
      const auto& ids = m_.field_ids[type];
      for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == ref.id) return static_cast<std::uint32_t>(i);
    }
    return std::unexpected(error_pos(ref.pos, "unknown field " + std::string(ref.id)));
  }

  static void put_opcode(Bytes& b, Opcode op) {
    const auto& info = wasm::info(op);
    if (info.prefix) {
      b.push_back(info.prefix);
      put_u32(b, info.code);
    } else {
      b.push_back(info.code);
    }
  }

  Result<void> encode_expr(const Expr& e, Bytes& b, const Locals* locals) {
    for (const Instr& in : e.instrs) {
      put_opcode(b, in.op);
      const auto& info = wasm::info(in.op);
      switch (info.imm) {
        case ImmKind::V128:
        case ImmKind::Shuffle: {
          const auto& bytes = e.v128s[in.value];
          b.insert(b.end(), bytes.begin(), bytes.end());
          break;
        }
        case ImmKind::Lane16:
        case ImmKind::Lane8:
        case ImmKind::Lane4:
        case ImmKind::Lane2: b.push_back(static_cast<std::uint8_t>(in.value)); break;
        case ImmKind::None: break;
        case ImmKind::MemoryCopy: {  // memidx LEBs: index 0 encodes as 2.0's zero byte
          auto dst = resolve(Space::Memory, in.a);
          if (!dst) return std::unexpected(dst.error());
          auto src = resolve(Space::Memory, e.second_refs[in.value]);
          if (!src) return std::unexpected(src.error());
          put_u32(b, *dst);
          put_u32(b, *src);
          break;
        }
        case ImmKind::BlockType:
          if (auto r = put_block_type(e.type_uses[in.value], b); !r) return r;
          break;
        case ImmKind::TryTable: {
          if (auto r = put_block_type(e.type_uses[in.value], b); !r) return r;
          const auto& list = e.catch_lists[in.a.index];
          put_u32(b, list.size());
          for (const auto& c : list) {
            b.push_back(static_cast<std::uint8_t>(c.kind));
            if (c.kind <= 1) {
              auto tag = resolve(Space::Tag, c.tag);
              if (!tag) return std::unexpected(tag.error());
              put_u32(b, *tag);
            }
            put_u32(b, c.label);
          }
          break;
        }
        case ImmKind::TagIdx: {
          auto idx = resolve(Space::Tag, in.a);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          break;
        }
        case ImmKind::LabelIdx:
          put_u32(b, in.value);
          break;
        case ImmKind::BrTable: {
          const auto& labels = e.label_lists[in.value];
          put_u32(b, labels.size() - 1);
          for (auto l : labels) put_u32(b, l);
          break;
        }
        case ImmKind::FuncIdx: {
          auto idx = resolve(Space::Func, in.a);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          break;
        }
        case ImmKind::CallIndirect: {
          auto t = func_type_index(e.type_uses[in.value]);
          if (!t) return std::unexpected(t.error());
          auto table = resolve(Space::Table, in.a);
          if (!table) return std::unexpected(table.error());
          put_u32(b, *t);
          put_u32(b, *table);
          break;
        }
        case ImmKind::LocalIdx: {
          auto idx = local_index(in.a, locals);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          break;
        }
        case ImmKind::GlobalIdx: {
          auto idx = resolve(Space::Global, in.a);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          break;
        }
        case ImmKind::TableIdx: {
          auto idx = resolve(Space::Table, in.a);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          break;
        }
        case ImmKind::MemIdx: {
          auto idx = resolve(Space::Memory, in.a);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          break;
        }
        case ImmKind::I32:
          put_s64(b, static_cast<std::int32_t>(static_cast<std::uint32_t>(in.value)));
          break;
        case ImmKind::I64:
          put_s64(b, static_cast<std::int64_t>(in.value));
          break;
        case ImmKind::F32:
          put_le(b, in.value, 4);
          break;
        case ImmKind::F64:
          put_le(b, in.value, 8);
          break;
        case ImmKind::SelectT: {
          const auto& types = e.select_types[in.value];
          put_u32(b, types.size());
          for (auto t : types) put_valtype(b, t);
          break;
        }
        case ImmKind::RefType:
          put_heap(b, resolved(ValType::from_bits(static_cast<std::uint32_t>(in.value))).heap());
          break;
        case ImmKind::TypeIdx: {
          auto idx = resolve(Space::Type, in.a);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          break;
        }
        case ImmKind::StructField:
        case ImmKind::ArrayFixed:
        case ImmKind::ArrayData:
        case ImmKind::ArrayElem:
        case ImmKind::ArrayCopy: {
          auto idx = resolve(Space::Type, in.a);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          const Ref& second = e.second_refs[in.value];
          Result<std::uint32_t> r2 = second.index;
          if (info.imm == ImmKind::StructField) r2 = field_index(*idx, second);
          else if (info.imm == ImmKind::ArrayData) r2 = resolve(Space::Data, second);
          else if (info.imm == ImmKind::ArrayElem) r2 = resolve(Space::Elem, second);
          else if (info.imm == ImmKind::ArrayCopy) r2 = resolve(Space::Type, second);
          if (!r2) return std::unexpected(r2.error());
          if (info.imm == ImmKind::ArrayData) uses_data_index_ = true;
          put_u32(b, *r2);
          break;
        }
        case ImmKind::HeapType:
          put_heap(b, resolved(ValType::from_bits(static_cast<std::uint32_t>(in.value))).heap());
          break;
        case ImmKind::BrOnCast: {
          const auto& types = e.select_types[in.align];
          const ValType t1 = resolved(types[0]);
          const ValType t2 = resolved(types[1]);
          b.push_back(static_cast<std::uint8_t>((t1.nullable() ? 1 : 0) | (t2.nullable() ? 2 : 0)));
          put_u32(b, in.value);
          put_heap(b, t1.heap());
          put_heap(b, t2.heap());
          break;
        }
        case ImmKind::DataIdx:
        case ImmKind::MemoryInit: {
          uses_data_index_ = true;
          auto idx = resolve(Space::Data, in.a);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          if (info.imm == ImmKind::MemoryInit) {
            auto mem = resolve(Space::Memory, e.second_refs[in.value]);
            if (!mem) return std::unexpected(mem.error());
            put_u32(b, *mem);
          }
          break;
        }
        case ImmKind::ElemIdx: {
          auto idx = resolve(Space::Elem, in.a);
          if (!idx) return std::unexpected(idx.error());
          put_u32(b, *idx);
          break;
        }
        case ImmKind::TableInit: {
          auto elem = resolve(Space::Elem, e.second_refs[in.value]);
          if (!elem) return std::unexpected(elem.error());
          auto table = resolve(Space::Table, in.a);
          if (!table) return std::unexpected(table.error());
          put_u32(b, *elem);
          put_u32(b, *table);
          break;
        }
        case ImmKind::TableCopy: {
          auto dst = resolve(Space::Table, in.a);
          if (!dst) return std::unexpected(dst.error());
          auto src = resolve(Space::Table, e.second_refs[in.value]);
          if (!src) return std::unexpected(src.error());
          put_u32(b, *dst);
          put_u32(b, *src);
          break;
        }
        case ImmKind::MemArg8:
        case ImmKind::MemArg16:
        case ImmKind::MemArg32:
        case ImmKind::MemArg64:
        case ImmKind::MemArg128:
        case ImmKind::MemArgLane8:
        case ImmKind::MemArgLane16:
        case ImmKind::MemArgLane32:
        case ImmKind::MemArgLane64: {
          // Multi-memory: alignment bit 6 announces a memidx (memory 0 keeps 2.0's encoding).
          auto mem = resolve(Space::Memory, in.a);
          if (!mem) return std::unexpected(mem.error());
          const std::uint32_t align = in.align & 0xFF;
          if (*mem == 0) {
            put_u32(b, align);
          } else {
            put_u32(b, align | 0x40);
            put_u32(b, *mem);
          }
          put_u32(b, in.value);
          if (natural_alignment_log2(info.imm) && lane_count(info.imm) != 0) b.push_back(static_cast<std::uint8_t>(in.align >> 8));
          break;
        }
      }
    }
    return {};
  }

  ModuleAst& m_;
  const WatOptions& options_;
  std::string_view module_id_;
  std::vector<FuncType> types_;  // explicit, then implicit ones as they are met
  std::unordered_map<std::string, std::uint32_t> type_index_;  // type_key → smallest index, built on first use
  bool uses_data_index_ = false;
  std::optional<TextError> type_error_;  // the first unknown named heap type (resolved())
};

}  // namespace

Result<std::vector<std::uint8_t>> encode_module(ModuleAst& ast, const WatOptions& options, std::string_view module_id) {
  return Encoder(ast, options, module_id).run();
}

}  // namespace sprawling::wasm::text::tree
