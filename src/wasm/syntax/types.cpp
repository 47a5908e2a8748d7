// Value types' names, subtyping (matching, the GC lattice and declared supertypes) and the
// iso-recursive identity of defined types (recursion groups, typed references).
#include "wasm/syntax/types.hpp"

#include "wasm/support/sha256.hpp"

#include <string>

namespace sprawling::wasm {

std::string name(ValType t) {
  switch (t.kind()) {
    case ValType::Kind::Bottom: return "unknown";
    case ValType::Kind::Vec: return "v128";
    case ValType::Kind::Num:
      switch (t.byte()) {
        case 0x7F: return "i32";
        case 0x7E: return "i64";
        case 0x7D: return "f32";
        default: return "f64";
      }
    case ValType::Kind::Ref: break;
  }
  if (t.concrete()) return (t.nullable() ? "(ref null " : "(ref ") + std::to_string(t.type_index()) + ")";
  const std::uint8_t h = t.heap_byte();
  if (!t.nullable()) return "(ref " + std::string(heap_name(h)) + ")";
  switch (h) {
    case ValType::kNone: return "nullref";
    case ValType::kNoFunc: return "nullfuncref";
    case ValType::kNoExtern: return "nullexternref";
    case ValType::kNoExn: return "nullexnref";
    default: return std::string(heap_name(h)) + "ref";
  }
}

bool declared_subtype(const FuncType& sub, const FuncType& super) noexcept {
  if (sub == super) return true;
  if (!super.has_type_refs) return false;  // a plain type is final: nothing declares it a supertype
  for (const TypeIdentity& id : sub.super_chain) {
    if (id == super.structure) return true;
  }
  return false;
}

std::uint8_t heap_top(std::uint32_t heap, std::span<const FuncType> types) noexcept {
  if (heap >= ValType::kAbstractHeap) return abstract_top(static_cast<std::uint8_t>(heap & 0xFF));
  if (heap < types.size() && !types[heap].is_func()) return ValType::kAny;
  return ValType::kFunc;
}

namespace {

// The abstract heap types a defined type of this kind is below (besides itself).
bool kind_below(TypeKind k, std::uint8_t abstract) {
  switch (k) {
    case TypeKind::Func: return abstract == ValType::kFunc;
    case TypeKind::Struct:
      return abstract == ValType::kStruct || abstract == ValType::kEq || abstract == ValType::kAny;
    case TypeKind::Array: return abstract == ValType::kArray || abstract == ValType::kEq || abstract == ValType::kAny;
  }
  return false;
}

bool abstract_below(std::uint8_t a, std::uint8_t b) {
  if (a == b) return true;
  if (abstract_top(a) != abstract_top(b)) return false;
  if (heap_is_bottom(ValType::kAbstractHeap | a)) return true;
  switch (a) {
    case ValType::kEq: return b == ValType::kAny;
    case ValType::kI31:
    case ValType::kStruct:
    case ValType::kArray: return b == ValType::kEq || b == ValType::kAny;
    default: return false;
  }
}

}  // namespace

bool heap_matches(std::uint32_t ha, std::span<const FuncType> ta, std::uint32_t hb, std::span<const FuncType> tb) {
  constexpr std::uint32_t kA = ValType::kAbstractHeap;
  if (ha < kA && hb < kA) {
    if (ha == hb && ta.data() == tb.data()) return true;
    return ha < ta.size() && hb < tb.size() && declared_subtype(ta[ha], tb[hb]);
  }
  if (ha < kA) return ha < ta.size() && kind_below(ta[ha].kind, static_cast<std::uint8_t>(hb & 0xFF));
  const auto a = static_cast<std::uint8_t>(ha & 0xFF);
  if (hb < kA) {
    // Only a hierarchy's bottom is below a defined type.
    if (hb >= tb.size()) return false;
    return a == (tb[hb].is_func() ? ValType::kNoFunc : ValType::kNone);
  }
  return abstract_below(a, static_cast<std::uint8_t>(hb & 0xFF));
}

bool matches(ValType a, std::span<const FuncType> ta, ValType b, std::span<const FuncType> tb) {
  if (a.is_bottom()) return true;
  if (!a.is_ref() || !b.is_ref()) return a == b;
  if (a.nullable() && !b.nullable()) return false;
  return heap_matches(a.heap(), ta, b.heap(), tb);
}

namespace {

bool field_matches(const FieldType& f, const FieldType& g, std::span<const FuncType> types) {
  if (f.packed != g.packed || f.is_mutable != g.is_mutable) return false;
  if (!matches(f.type, g.type, types)) return false;
  return !f.is_mutable || matches(g.type, f.type, types);
}

}  // namespace

bool composite_matches(const FuncType& sub, const FuncType& super, std::span<const FuncType> types) {
  if (sub.kind != super.kind) return false;
  switch (sub.kind) {
    case TypeKind::Func:
      if (sub.params.size() != super.params.size() || sub.results.size() != super.results.size()) return false;
      for (std::size_t i = 0; i < sub.params.size(); ++i) {
        if (!matches(super.params[i], sub.params[i], types)) return false;
      }
      for (std::size_t i = 0; i < sub.results.size(); ++i) {
        if (!matches(sub.results[i], super.results[i], types)) return false;
      }
      return true;
    case TypeKind::Struct:
    case TypeKind::Array:
      if (sub.fields.size() < super.fields.size()) return false;
      if (sub.is_array() && sub.fields.size() != super.fields.size()) return false;
      for (std::size_t i = 0; i < super.fields.size(); ++i) {
        if (!field_matches(sub.fields[i], super.fields[i], types)) return false;
      }
      return true;
  }
  return false;
}

void compute_structure(std::span<FuncType> types, std::size_t start, std::size_t count) {
  std::vector<std::uint8_t> bytes;
  const auto put32 = [&](std::uint32_t v) {
    for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  };
  const auto in_group = [&](std::size_t j) { return j >= start && j < start + count; };
  bool refs = false;
  // A named type: its position in the group, or its identity (a plain type: its shape).
  const auto put_named = [&](std::uint32_t j) {
    refs = true;
    if (in_group(j)) {
      bytes.push_back(0xFF);
      put32(static_cast<std::uint32_t>(j - start));
      return;
    }
    const FuncType& named = types[j];
    bytes.push_back(named.has_type_refs ? 0xFE : 0xFD);
    if (named.has_type_refs) {
      bytes.insert(bytes.end(), named.structure.begin(), named.structure.end());
      return;
    }
    put32(static_cast<std::uint32_t>(named.params.size()));
    for (const ValType p : named.params) put32(p.bits());
    put32(static_cast<std::uint32_t>(named.results.size()));
    for (const ValType r : named.results) put32(r.bits());
  };
  const auto put_val = [&](ValType t) {
    if (!t.concrete()) {
      put32(t.bits());
      return;
    }
    bytes.push_back(t.byte());
    put_named(t.type_index());
  };
  put32(static_cast<std::uint32_t>(count));
  bool plain = count == 1;
  for (std::size_t i = start; i < start + count; ++i) {
    const FuncType& t = types[i];
    plain = plain && t.is_func() && t.is_final && t.super == kNoSuper;
    bytes.push_back(static_cast<std::uint8_t>(t.kind));
    bytes.push_back(t.is_final ? 1 : 0);
    if (t.super == kNoSuper) {
      bytes.push_back(0);
    } else {
      bytes.push_back(1);
      put_named(t.super);
    }
    put32(static_cast<std::uint32_t>(t.params.size()));
    for (const ValType p : t.params) put_val(p);
    put32(static_cast<std::uint32_t>(t.results.size()));
    for (const ValType r : t.results) put_val(r);
    put32(static_cast<std::uint32_t>(t.fields.size()));
    for (const FieldType& f : t.fields) {
      bytes.push_back(static_cast<std::uint8_t>(f.packed));
      bytes.push_back(f.is_mutable ? 1 : 0);
      put_val(f.type);
    }
  }
  plain = plain && !refs;
  const TypeIdentity group = plain ? TypeIdentity{} : sha256(bytes);
  for (std::size_t i = start; i < start + count; ++i) {
    FuncType& t = types[i];
    t.has_type_refs = !plain;
    t.structure = TypeIdentity{};
    t.super_chain.clear();
    if (plain) continue;
    std::vector<std::uint8_t> at(group.begin(), group.end());
    const auto k = static_cast<std::uint32_t>(i - start);
    for (int b = 0; b < 4; ++b) at.push_back(static_cast<std::uint8_t>(k >> (8 * b)));
    t.structure = sha256(at);
  }
  // Supertypes come before their subtypes (also inside a group), so their chains are complete.
  for (std::size_t i = start; i < start + count; ++i) {
    FuncType& t = types[i];
    if (t.super == kNoSuper || t.super >= i) continue;
    const FuncType& s = types[t.super];
    t.super_chain.push_back(s.structure);
    t.super_chain.insert(t.super_chain.end(), s.super_chain.begin(), s.super_chain.end());
  }
}

}  // namespace sprawling::wasm
