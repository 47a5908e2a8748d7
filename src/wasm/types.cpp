// Value types' names, subtyping (matching) and the structural identity of function types that
// name other types (typed function references).
#include "wasm/types.hpp"

#include "wasm/sha256.hpp"

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

namespace {

bool heap_matches(std::uint32_t ha, std::span<const FuncType> ta, std::uint32_t hb, std::span<const FuncType> tb) {
  constexpr std::uint32_t kA = ValType::kAbstractHeap;
  if (ha < kA && hb < kA) {
    if (ha == hb && ta.data() == tb.data()) return true;
    return ha < ta.size() && hb < tb.size() && ta[ha] == tb[hb];
  }
  if (ha == hb) return true;
  if (heap_top(ha) != heap_top(hb)) return false;
  if (heap_is_bottom(ha)) return true;
  return ha < kA && hb == (kA | ValType::kFunc);  // a function type <: func
}

}  // namespace

bool matches(ValType a, std::span<const FuncType> ta, ValType b, std::span<const FuncType> tb) {
  if (a.is_bottom()) return true;
  if (!a.is_ref() || !b.is_ref()) return a == b;
  if (a.nullable() && !b.nullable()) return false;
  return heap_matches(a.heap(), ta, b.heap(), tb);
}

void compute_structure(std::span<FuncType> types, std::size_t i) {
  FuncType& ft = types[i];
  ft.has_type_refs = false;
  std::vector<std::uint8_t> bytes;
  const auto put32 = [&](std::uint32_t v) {
    for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  };
  const auto put_types = [&](const std::vector<ValType>& ts) {
    put32(static_cast<std::uint32_t>(ts.size()));
    for (const ValType t : ts) {
      if (!t.concrete()) {
        put32(t.bits());
        continue;
      }
      ft.has_type_refs = true;
      bytes.push_back(t.byte());
      if (t.type_index() == i) {
        bytes.push_back(0xFF);  // the type itself (rec.0)
        continue;
      }
      const FuncType& named = types[t.type_index()];
      bytes.push_back(named.has_type_refs ? 0xFE : 0xFD);
      if (named.has_type_refs) {
        bytes.insert(bytes.end(), named.structure.begin(), named.structure.end());
      } else {
        // A type without named types is its plain shape.
        put32(static_cast<std::uint32_t>(named.params.size()));
        for (const ValType p : named.params) put32(p.bits());
        put32(static_cast<std::uint32_t>(named.results.size()));
        for (const ValType r : named.results) put32(r.bits());
      }
    }
  };
  put_types(ft.params);
  put_types(ft.results);
  ft.structure = ft.has_type_refs ? sha256(bytes) : std::array<std::uint8_t, 32>{};
}

}  // namespace sprawling::wasm
