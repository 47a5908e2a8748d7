// ValType as a packed word (kinds, nullability, heap types), its names, subtyping (matches) and the
// structural identity of function types that name other types (types.cpp).
#include "wasm/syntax/types.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace sprawling::wasm {
namespace {

TEST(ValType, ShortNamesKeepTheirBinaryBytesAndKinds) {
  EXPECT_EQ(ValType::I32.byte(), 0x7F);
  EXPECT_EQ(ValType::V128.kind(), ValType::Kind::Vec);
  EXPECT_EQ(ValType::F64.kind(), ValType::Kind::Num);
  EXPECT_EQ(ValType::FuncRef, ValType::from_byte(0x70));
  EXPECT_EQ(ValType::ExternRef, ValType::abstract_ref(true, ValType::kExtern));
  EXPECT_TRUE(ValType::ExnRef.is_ref() && ValType::ExnRef.nullable() && !ValType::ExnRef.concrete());
  EXPECT_EQ(ValType{}.kind(), ValType::Kind::Bottom);
  const ValType t = ValType::ref(false, 7);
  EXPECT_TRUE(t.concrete());
  EXPECT_EQ(t.type_index(), 7u);
  EXPECT_FALSE(t.nullable());
  EXPECT_EQ(t.as_nullable(true), ValType::ref(true, 7));
  EXPECT_NE(t, ValType::ref(false, 8));
}

TEST(ValType, NamesAreTheReferenceInterpretersSpelling) {
  EXPECT_EQ(name(ValType::I64), "i64");
  EXPECT_EQ(name(ValType::FuncRef), "funcref");
  EXPECT_EQ(name(ValType::ExnRef), "exnref");
  EXPECT_EQ(name(ValType::abstract_ref(false, ValType::kFunc)), "(ref func)");
  EXPECT_EQ(name(ValType::abstract_ref(true, ValType::kNoFunc)), "nullfuncref");
  EXPECT_EQ(name(ValType::ref(true, 3)), "(ref null 3)");
  EXPECT_EQ(name(ValType::ref(false, 0)), "(ref 0)");
  EXPECT_EQ(name(ValType{}), "unknown");
}

TEST(Matches, NullabilityHierarchiesAndBottoms) {
  const std::vector<FuncType> types = {FuncType{{ValType::I32}, {}}, FuncType{{ValType::I32}, {}}, FuncType{{}, {}}};
  const ValType ref0 = ValType::ref(false, 0);
  const ValType func = ValType::abstract_ref(false, ValType::kFunc);
  const ValType nofunc = ValType::abstract_ref(true, ValType::kNoFunc);
  EXPECT_TRUE(matches(ref0, ValType::ref(true, 0), types));   // ref T <: ref null T
  EXPECT_FALSE(matches(ValType::ref(true, 0), ref0, types));  // not the other way
  EXPECT_TRUE(matches(ref0, func, types));                    // a function type <: func
  EXPECT_TRUE(matches(ref0, ValType::FuncRef, types));
  EXPECT_FALSE(matches(ValType::FuncRef, ValType::ref(true, 0), types));
  EXPECT_TRUE(matches(ref0, ValType::ref(false, 1), types));   // equivalent types
  EXPECT_FALSE(matches(ref0, ValType::ref(false, 2), types));  // different ones
  EXPECT_TRUE(matches(nofunc, ValType::ref(true, 2), types));  // nofunc: the func bottom
  EXPECT_FALSE(matches(nofunc, ValType::ExternRef, types));    // … of its hierarchy only
  EXPECT_TRUE(matches(ValType::abstract_ref(true, ValType::kNoExtern), ValType::ExternRef, types));
  EXPECT_FALSE(matches(ValType::ExternRef, ValType::FuncRef, types));
  EXPECT_FALSE(matches(ValType::I32, ValType::I64, types));
  EXPECT_TRUE(matches(ValType{}, ref0, types));  // unreachable code's bottom matches anything
}

TEST(Structure, NamedTypesAreEquivalentAcrossModulesByShape) {
  // Module A: 0 = [i32] -> [], 1 = [(ref 0)] -> [], 2 = [(ref 2)] -> [] (names itself).
  std::vector<FuncType> a = {FuncType{{ValType::I32}, {}}, FuncType{{ValType::ref(false, 0)}, {}},
                             FuncType{{ValType::ref(false, 2)}, {}}};
  // Module B: the same shapes at other indices, plus a type naming a different shape.
  std::vector<FuncType> b = {FuncType{{}, {}}, FuncType{{ValType::I32}, {}}, FuncType{{ValType::ref(false, 1)}, {}},
                             FuncType{{ValType::ref(false, 3)}, {}}, FuncType{{ValType::ref(false, 0)}, {}}};
  for (std::size_t i = 0; i < a.size(); ++i) compute_structure(a, i);
  for (std::size_t i = 0; i < b.size(); ++i) compute_structure(b, i);
  EXPECT_FALSE(a[0].has_type_refs);
  EXPECT_TRUE(a[1].has_type_refs);
  EXPECT_EQ(a[1], b[2]);  // (ref [i32]->[]) in both, named by different indices
  EXPECT_EQ(a[2], b[3]);  // the self-referencing type
  EXPECT_FALSE(a[1] == b[4]);  // names []->[] instead
  EXPECT_FALSE(a[1] == b[3]);
  EXPECT_TRUE(matches(ValType::ref(false, 1), a, ValType::ref(true, 2), b));
  EXPECT_FALSE(matches(ValType::ref(false, 1), a, ValType::ref(true, 4), b));
}

// GC: a struct or array type of one kind.
FuncType gc_type(TypeKind kind, std::vector<FieldType> fields, bool is_final = true, std::uint32_t super = kNoSuper) {
  FuncType t;
  t.kind = kind;
  t.fields = std::move(fields);
  t.is_final = is_final;
  t.super = super;
  return t;
}

TEST(Matches, GcLatticeOfAbstractAndDefinedTypes) {
  std::vector<FuncType> types = {gc_type(TypeKind::Struct, {}), gc_type(TypeKind::Array, {FieldType{}}),
                                 FuncType{{}, {}}};
  for (std::size_t i = 0; i < types.size(); ++i) compute_structure(types, i);
  const auto abs = [](std::uint8_t h) { return ValType::abstract_ref(true, h); };
  EXPECT_TRUE(matches(abs(ValType::kI31), abs(ValType::kEq), types));
  EXPECT_TRUE(matches(abs(ValType::kEq), abs(ValType::kAny), types));
  EXPECT_FALSE(matches(abs(ValType::kAny), abs(ValType::kEq), types));
  EXPECT_TRUE(matches(abs(ValType::kNone), ValType::ref(true, 0), types));   // none below a struct type
  EXPECT_FALSE(matches(abs(ValType::kNoFunc), ValType::ref(true, 0), types));
  EXPECT_TRUE(matches(abs(ValType::kNoFunc), ValType::ref(true, 2), types));
  EXPECT_TRUE(matches(ValType::ref(true, 0), abs(ValType::kStruct), types));
  EXPECT_TRUE(matches(ValType::ref(true, 0), abs(ValType::kAny), types));
  EXPECT_FALSE(matches(ValType::ref(true, 0), abs(ValType::kArray), types));
  EXPECT_TRUE(matches(ValType::ref(true, 1), abs(ValType::kEq), types));
  EXPECT_FALSE(matches(ValType::ref(true, 2), abs(ValType::kAny), types));  // functions are not in any's hierarchy
  EXPECT_FALSE(matches(abs(ValType::kNone), ValType::ExternRef, types));
  EXPECT_EQ(heap_top(0, types), ValType::kAny);
  EXPECT_EQ(heap_top(2, types), ValType::kFunc);
}

TEST(Structure, RecursionGroupsAndDeclaredSupertypes) {
  // A: 0 = (sub (struct)), 1 = (sub 0 (struct i32)); B: a group {(struct (ref 1)), (struct (ref 0))}
  // twice over in different orders, and A's types again after an unrelated one.
  std::vector<FuncType> a = {gc_type(TypeKind::Struct, {}, false),
                             gc_type(TypeKind::Struct, {FieldType{ValType::I32}}, true, 0)};
  compute_structure(a, 0);
  compute_structure(a, 1);
  EXPECT_TRUE(composite_matches(a[1], a[0], a));
  EXPECT_TRUE(matches(ValType::ref(false, 1), ValType::ref(true, 0), a));
  EXPECT_FALSE(matches(ValType::ref(false, 0), ValType::ref(true, 1), a));
  std::vector<FuncType> b = {FuncType{{ValType::I64}, {}}, gc_type(TypeKind::Struct, {}, false),
                             gc_type(TypeKind::Struct, {FieldType{ValType::I32}}, true, 1)};
  for (std::size_t i = 0; i < b.size(); ++i) compute_structure(b, i);
  EXPECT_TRUE(matches(ValType::ref(false, 1), a, ValType::ref(true, 1), b));  // the subtype, across modules
  EXPECT_TRUE(declared_subtype(b[2], a[0]));
  EXPECT_FALSE(declared_subtype(a[0], b[2]));
  // Iso-recursive: a group's members are the same type only at the same position.
  const auto group = [](std::uint32_t first, std::uint32_t second) {
    std::vector<FuncType> g = {gc_type(TypeKind::Struct, {FieldType{ValType::ref(true, first)}}),
                               gc_type(TypeKind::Struct, {FieldType{ValType::ref(true, second)}})};
    for (auto& t : g) t.rec_size = 2;
    compute_structure(g, 0, 2);
    return g;
  };
  const auto g1 = group(1, 0);
  const auto g2 = group(1, 0);
  EXPECT_EQ(g1[0], g2[0]);
  EXPECT_EQ(g1[1], g2[1]);
  EXPECT_FALSE(g1[0] == g1[1]);  // same shape, different positions
  // Not the same as a one-type group of the same shape.
  std::vector<FuncType> single = {gc_type(TypeKind::Struct, {FieldType{ValType::ref(true, 0)}})};
  compute_structure(single, 0);
  EXPECT_FALSE(single[0] == g1[0]);
}

}  // namespace
}  // namespace sprawling::wasm
