// Value, function, limit and extern types in the WebAssembly spec's vocabulary
// (https://webassembly.github.io/spec/core/syntax/types.html).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sprawling::wasm {

// A value type as one 32-bit word (trivially copyable, compared as an integer): the low byte is
// the binary encoding of a number or vector type (0x7F i32 … 0x7B v128), or of a reference
// type's nullability (0x63 `ref null`, 0x64 `ref`); the upper 24 bits hold a reference type's
// heap type, an abstract one (kAbstractHeap | its binary byte: func 0x70, extern 0x6F, exn 0x69,
// and GC's any, eq, i31, struct, array, none, nofunc, noextern, noexn) or a type index (below
// kAbstractHeap; the decoder refuses larger indices). The word 0 is the bottom type: a value on
// the validator's stack in unreachable code, of any type. The short names (ValType::FuncRef =
// `(ref null func)`, …) are static members, so `t == ValType::I32` reads as before.
// https://webassembly.github.io/spec/core/syntax/types.html#value-types
class ValType {
 public:
  enum class Kind : std::uint8_t { Bottom, Num, Vec, Ref };
  // Abstract heap types by their binary byte (https://webassembly.github.io/spec/core/binary/types.html#heap-types).
  static constexpr std::uint8_t kFunc = 0x70, kExtern = 0x6F, kExn = 0x69, kAny = 0x6E, kEq = 0x6D, kI31 = 0x6C,
                                kStruct = 0x6B, kArray = 0x6A, kNone = 0x71, kNoFunc = 0x73, kNoExtern = 0x72,
                                kNoExn = 0x74;
  static constexpr std::uint32_t kAbstractHeap = 0xFFFF00;  // heap values from here on are abstract
  static constexpr std::uint32_t kMaxTypeIndex = kAbstractHeap - 1;
  static constexpr std::uint8_t kRefNullByte = 0x63, kRefByte = 0x64;

  constexpr ValType() noexcept = default;  // the bottom type
  // A number or vector type from its binary byte (0x7F … 0x7B), or a reference type's short
  // form (0x70 funcref, 0x6F externref, 0x69 exnref, and GC's); see is_valtype_byte.
  [[nodiscard]] static constexpr ValType from_byte(std::uint8_t b) noexcept {
    if (b >= 0x7B && b <= 0x7F) return ValType(b);
    return ref(true, kAbstractHeap | b);
  }
  // `(ref null? heap)`, heap a type index or kAbstractHeap | an abstract heap type's byte.
  [[nodiscard]] static constexpr ValType ref(bool nullable, std::uint32_t heap) noexcept {
    return ValType((heap << 8) | (nullable ? kRefNullByte : kRefByte));
  }
  [[nodiscard]] static constexpr ValType abstract_ref(bool nullable, std::uint8_t heap_byte) noexcept {
    return ref(nullable, kAbstractHeap | heap_byte);
  }

  [[nodiscard]] constexpr Kind kind() const noexcept {
    const std::uint8_t b = byte();
    if (b == kRefNullByte || b == kRefByte) return Kind::Ref;
    if (b == 0x7B) return Kind::Vec;
    return b == 0 ? Kind::Bottom : Kind::Num;
  }
  [[nodiscard]] constexpr bool is_ref() const noexcept { return kind() == Kind::Ref; }
  [[nodiscard]] constexpr bool is_bottom() const noexcept { return bits_ == 0; }
  [[nodiscard]] constexpr bool nullable() const noexcept { return byte() == kRefNullByte; }
  [[nodiscard]] constexpr std::uint32_t heap() const noexcept { return bits_ >> 8; }
  [[nodiscard]] constexpr bool concrete() const noexcept { return is_ref() && heap() < kAbstractHeap; }
  [[nodiscard]] constexpr std::uint32_t type_index() const noexcept { return heap(); }  // concrete() only
  // An abstract heap type's byte (0 for a concrete one).
  [[nodiscard]] constexpr std::uint8_t heap_byte() const noexcept {
    return heap() >= kAbstractHeap ? static_cast<std::uint8_t>(heap() & 0xFF) : 0;
  }
  // The low byte: a number/vector type's encoding, 0x63/0x64 for references.
  [[nodiscard]] constexpr std::uint8_t byte() const noexcept { return static_cast<std::uint8_t>(bits_ & 0xFF); }
  [[nodiscard]] constexpr std::uint32_t bits() const noexcept { return bits_; }
  [[nodiscard]] static constexpr ValType from_bits(std::uint32_t bits) noexcept { return ValType(bits); }
  // The same reference type made nullable / non-nullable.
  [[nodiscard]] constexpr ValType as_nullable(bool nullable) const noexcept { return ref(nullable, heap()); }
  friend constexpr bool operator==(ValType, ValType) noexcept = default;

  static const ValType I32, I64, F32, F64, V128, FuncRef, ExternRef, ExnRef;

 private:
  constexpr explicit ValType(std::uint32_t bits) noexcept : bits_(bits) {}
  std::uint32_t bits_ = 0;
};
inline constexpr ValType ValType::I32 = ValType::from_byte(0x7F);
inline constexpr ValType ValType::I64 = ValType::from_byte(0x7E);
inline constexpr ValType ValType::F32 = ValType::from_byte(0x7D);
inline constexpr ValType ValType::F64 = ValType::from_byte(0x7C);
inline constexpr ValType ValType::V128 = ValType::from_byte(0x7B);
inline constexpr ValType ValType::FuncRef = ValType::abstract_ref(true, ValType::kFunc);
inline constexpr ValType ValType::ExternRef = ValType::abstract_ref(true, ValType::kExtern);
// Exception handling (WebAssembly 3.0): a reference to a caught exception (a store handle).
inline constexpr ValType ValType::ExnRef = ValType::abstract_ref(true, ValType::kExn);
static_assert(sizeof(ValType) == 4 && std::is_trivially_copyable_v<ValType>);

[[nodiscard]] constexpr bool is_reference(ValType t) noexcept { return t.is_ref(); }
// The one-byte value types read everywhere: numbers, v128, funcref, externref, exnref (the other
// short forms — nullfuncref, …, GC's anyref, eqref, … — need their feature: read_valtype).
[[nodiscard]] constexpr bool is_valtype_byte(std::uint8_t b) noexcept {
  return b == 0x7F || b == 0x7E || b == 0x7D || b == 0x7C || b == 0x7B || b == 0x70 || b == 0x6F || b == 0x69;
}
// Abstract heap types beyond 2.0's func and extern: exn, the bottoms nofunc, noextern, noexn.
[[nodiscard]] constexpr bool is_supported_heap_byte(std::uint8_t b) noexcept {
  return b == ValType::kFunc || b == ValType::kExtern || b == ValType::kExn || b == ValType::kNoFunc ||
         b == ValType::kNoExtern || b == ValType::kNoExn;
}
// GC's abstract heap types (any, eq, i31, struct, array, none): `-W gc`.
[[nodiscard]] constexpr bool is_gc_heap_byte(std::uint8_t b) noexcept {
  return b == ValType::kAny || b == ValType::kEq || b == ValType::kI31 || b == ValType::kStruct ||
         b == ValType::kArray || b == ValType::kNone;
}
// "func", "extern", … (the text format's heap type keywords).
[[nodiscard]] constexpr std::string_view heap_name(std::uint8_t heap_byte) noexcept {
  switch (heap_byte) {
    case ValType::kFunc: return "func";
    case ValType::kExtern: return "extern";
    case ValType::kExn: return "exn";
    case ValType::kAny: return "any";
    case ValType::kEq: return "eq";
    case ValType::kI31: return "i31";
    case ValType::kStruct: return "struct";
    case ValType::kArray: return "array";
    case ValType::kNone: return "none";
    case ValType::kNoFunc: return "nofunc";
    case ValType::kNoExtern: return "noextern";
    case ValType::kNoExn: return "noexn";
    default: return "?";
  }
}
// "i32", "funcref", "(ref func)", "(ref null 3)", … (the reference interpreter's spelling).
[[nodiscard]] std::string name(ValType t);

// The top of an abstract heap type's hierarchy (func, extern, exn or any), as a heap byte. A
// concrete type's top depends on its definition: see heap_top(heap, types).
[[nodiscard]] constexpr std::uint8_t abstract_top(std::uint8_t b) noexcept {
  switch (b) {
    case ValType::kFunc:
    case ValType::kNoFunc: return ValType::kFunc;
    case ValType::kExtern:
    case ValType::kNoExtern: return ValType::kExtern;
    case ValType::kExn:
    case ValType::kNoExn: return ValType::kExn;
    default: return ValType::kAny;
  }
}
// As abstract_top; a type index counts as a function type (callers that may meet struct or array
// types use heap_top(heap, types)).
[[nodiscard]] constexpr std::uint8_t heap_top(std::uint32_t heap) noexcept {
  if (heap < ValType::kAbstractHeap) return ValType::kFunc;
  return abstract_top(static_cast<std::uint8_t>(heap & 0xFF));
}
// Whether heap is a hierarchy's bottom (none, nofunc, noextern, noexn).
[[nodiscard]] constexpr bool heap_is_bottom(std::uint32_t heap) noexcept {
  const auto b = static_cast<std::uint8_t>(heap & 0xFF);
  return heap >= ValType::kAbstractHeap &&
         (b == ValType::kNoFunc || b == ValType::kNoExtern || b == ValType::kNoExn || b == ValType::kNone);
}
// The bottom of a hierarchy, by its top's byte.
[[nodiscard]] constexpr std::uint8_t bottom_of(std::uint8_t top) noexcept {
  switch (top) {
    case ValType::kFunc: return ValType::kNoFunc;
    case ValType::kExtern: return ValType::kNoExtern;
    case ValType::kExn: return ValType::kNoExn;
    default: return ValType::kNone;
  }
}

// Frame slots (64-bit) a value of type t takes in the interpreter and at the host boundary's
// slot spans: a v128 two (low half first), every other value one (docs/interpreter.md).
[[nodiscard]] constexpr std::uint32_t value_slots(ValType t) noexcept {
  return t == ValType::V128 ? 2 : 1;
}
[[nodiscard]] constexpr std::uint32_t value_slots(std::span<const ValType> types) noexcept {
  std::uint32_t n = 0;
  for (const ValType t : types) n += value_slots(t);
  return n;
}

// A struct field or an array's element (https://webassembly.github.io/spec/core/syntax/types.html#aggregate-types):
// a value type, or a packed i8/i16 (`type` is then i32, the type it is read and written as).
struct FieldType {
  enum class Packed : std::uint8_t { None = 0, I8 = 1, I16 = 2 };
  ValType type = ValType::I32;
  Packed packed = Packed::None;
  bool is_mutable = false;
  friend constexpr bool operator==(const FieldType&, const FieldType&) = default;
};
// Bytes a field takes in a GC object: its packed width, else 16 for v128, else 8.
[[nodiscard]] constexpr std::uint32_t field_bytes(const FieldType& f) noexcept {
  if (f.packed == FieldType::Packed::I8) return 1;
  if (f.packed == FieldType::Packed::I16) return 2;
  return f.type == ValType::V128 ? 16 : 8;
}

enum class TypeKind : std::uint8_t { Func, Struct, Array };
inline constexpr std::uint32_t kNoSuper = 0xFFFFFFFF;
using TypeIdentity = std::array<std::uint8_t, 32>;

// One defined type of a module's type section (https://webassembly.github.io/spec/core/syntax/types.html#defined-types):
// a function type (params/results), a struct (fields) or an array (fields[0], its element),
// with GC's subtyping declaration (`sub final? $super? …`: is_final, super) and its place in a
// recursion group (`rec`: rec_size types from index rec_start). The name stays FuncType: every
// 2.0 type is a function type, and most code only ever meets those.
//
// Type equivalence is iso-recursive: two types are the same type (across modules too) when their
// whole recursion groups have the same shape — with references into the group written as
// positions in it and references outside as the named type's identity — and they sit at the same
// position. `structure` is that identity (SHA-256 of the group's shape, then of it and the
// position), set for every type except the *plain* ones: a final function type without a
// supertype, alone in its group and naming no type, which is its params/results and compares by
// them (host functions' types are plain and need no hashing). `super_chain` lists the
// identities of its declared supertypes, nearest first, so a declared subtype matches across
// modules without the module's type list.
struct FuncType {
  std::vector<ValType> params;
  std::vector<ValType> results;
  TypeKind kind = TypeKind::Func;
  std::vector<FieldType> fields{};
  bool is_final = true;
  std::uint32_t super = kNoSuper;  // a type index of the same module, below this type's
  std::uint32_t rec_start = 0;
  std::uint32_t rec_size = 1;
  TypeIdentity structure{};
  bool has_type_refs = false;  // not plain: compared by structure
  std::vector<TypeIdentity> super_chain{};
  friend bool operator==(const FuncType& a, const FuncType& b) {
    if (a.has_type_refs || b.has_type_refs) return a.has_type_refs == b.has_type_refs && a.structure == b.structure;
    return a.params == b.params && a.results == b.results;
  }
  [[nodiscard]] bool is_func() const noexcept { return kind == TypeKind::Func; }
  [[nodiscard]] bool is_struct() const noexcept { return kind == TypeKind::Struct; }
  [[nodiscard]] bool is_array() const noexcept { return kind == TypeKind::Array; }
};

// Whether a value of defined type `sub` may stand where `super` is expected: equal, or `super`
// among sub's declared supertypes (transitively).
[[nodiscard]] bool declared_subtype(const FuncType& sub, const FuncType& super) noexcept;

// Sets the identities (structure, has_type_refs) and super_chain of the recursion group of
// `count` types from index `start` (whose rec_start/rec_size say so), from their definitions and
// the identities of the earlier types they name. Indices must be below start + count and
// supertypes below their subtype (validated before). compute_structure(types, i) is a one-type
// group.
void compute_structure(std::span<FuncType> types, std::size_t start, std::size_t count = 1);

// The top of a heap type's hierarchy; a type index looks at its definition in `types` (a struct
// or array type is in any's hierarchy).
[[nodiscard]] std::uint8_t heap_top(std::uint32_t heap, std::span<const FuncType> types) noexcept;

// Subtyping (https://webassembly.github.io/spec/core/valid/matching.html): whether a value of type
// `a` (whose type indices name `ta`) may stand where `b` (indices into `tb`) is expected. ref T
// <: ref null T; a function type <: func; a struct type <: struct <: eq <: any, an array type <:
// array <: eq, i31 <: eq; none, nofunc, noextern, noexn are their hierarchy's bottoms (below its
// concrete types too); a type index matches an equivalent type or a declared supertype; the
// bottom type (unreachable code) matches all.
[[nodiscard]] bool matches(ValType a, std::span<const FuncType> ta, ValType b, std::span<const FuncType> tb);
[[nodiscard]] inline bool matches(ValType a, ValType b, std::span<const FuncType> types) {
  return a == b || matches(a, types, b, types);
}
// Whether the definition `sub` (a type declared with supertype `super`, both in `types`) matches
// it: the same kind; function parameters contravariant and results covariant; a struct's fields a
// prefix extension; fields and array elements covariant when immutable, equal when mutable.
[[nodiscard]] bool composite_matches(const FuncType& sub, const FuncType& super, std::span<const FuncType> types);
[[nodiscard]] bool heap_matches(std::uint32_t ha, std::span<const FuncType> ta, std::uint32_t hb,
                                std::span<const FuncType> tb);

// https://webassembly.github.io/spec/core/syntax/types.html#limits
// `is64`: the limits of a memory64 memory or a 64-bit table (i64 addresses/indexes; WebAssembly
// 3.0's address type), whose page or element counts may exceed 32 bits.
struct Limits {
  std::uint64_t min = 0;
  std::optional<std::uint64_t> max;
  bool is64 = false;
  friend bool operator==(const Limits&, const Limits&) = default;
};

struct TableType {
  ValType element = ValType::FuncRef;
  Limits limits;
  friend bool operator==(const TableType&, const TableType&) = default;
};

struct MemoryType {
  Limits limits;  // in 64 KiB pages
  friend bool operator==(const MemoryType&, const MemoryType&) = default;
};

struct GlobalType {
  ValType type = ValType::I32;
  bool is_mutable = false;
  friend bool operator==(const GlobalType&, const GlobalType&) = default;
};

// The binary encoding is the enumerator value.
enum class ExternKind : std::uint8_t { Func = 0, Table = 1, Memory = 2, Global = 3, Tag = 4 };

inline constexpr std::uint64_t kPageSize = 65536;
inline constexpr std::uint32_t kMaxPages = 65536;  // wasm32: 4 GiB
inline constexpr std::uint64_t kMaxPages64 = std::uint64_t{1} << 48;  // memory64: 2^64 bytes

}  // namespace sprawling::wasm
