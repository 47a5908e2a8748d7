// The GC heap (src/wasm/runtime/heap/gc_heap.cpp): reference encoding, allocation against the account,
// collection from roots and through objects' reference fields, stale handles.
#include "wasm/runtime/heap/gc_heap.hpp"

#include "wasm/gc_churn_module.hpp"
#include "wasm/runtime/store_impl.hpp"
#include "wasm/text/wat.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace sprawling::wasm {
namespace {

TEST(GcRef, I31HostAndObjectWordsNeverCollide) {
  EXPECT_TRUE(gcref::is_i31(gcref::from_i31(0)));
  EXPECT_EQ(gcref::i31_u(gcref::from_i31(0x7FFFFFFF)), 0x7FFFFFFFu);
  EXPECT_EQ(gcref::i31_s(gcref::from_i31(0x7FFFFFFF)), 0xFFFFFFFFu);  // -1
  EXPECT_EQ(gcref::i31_u(gcref::from_i31(0x80000001)), 1u);          // the top bit is dropped
  // extern.convert_any and any.convert_extern are inverses, null stays null.
  const std::uint64_t host = 5;
  EXPECT_EQ(gcref::to_extern(gcref::to_any(host)), host);
  EXPECT_FALSE(gcref::is_i31(gcref::to_any(host)));
  EXPECT_FALSE(gcref::is_object(gcref::to_any(host)));
  EXPECT_EQ(gcref::to_any(0), 0u);
  EXPECT_EQ(gcref::to_extern(0), 0u);
}

FuncType array_of(ValType element) {
  FuncType t;
  t.kind = TypeKind::Array;
  t.fields = {FieldType{element}};
  return t;
}

TEST(GcHeap, CollectsWhatNoRootReachesAndKeepsWhatObjectsReference) {
  const FuncType refs = array_of(ValType::abstract_ref(true, ValType::kAny));
  const FuncType bytes = array_of(ValType::I64);
  GcHeap heap;
  ResourceAccount account;
  std::vector<std::uint64_t> stack(4, 0);
  const std::vector<std::span<const std::uint64_t>> roots = {stack};
  const std::uint64_t inner = heap.make(&bytes, 1, 8, roots, account);
  const std::uint64_t outer = heap.make(&refs, 1, 8, roots, account);
  ASSERT_NE(inner, 0u);
  ASSERT_NE(outer, 0u);
  EXPECT_TRUE(gcref::is_object(inner));
  std::memcpy(heap.get(outer)->at(0), &inner, 8);  // outer[0] = inner
  stack[2] = outer;                                 // only outer is a root
  // Allocate well past a collection's threshold: dead arrays go, outer and inner stay.
  std::uint64_t last = 0;
  for (int i = 0; i < 2000; ++i) last = heap.make(&bytes, 128, 1024, roots, account);
  ASSERT_NE(last, 0u);
  EXPECT_GT(heap.collections(), 0u);
  ASSERT_NE(heap.get(outer), nullptr);
  EXPECT_NE(heap.get(inner), nullptr);
  EXPECT_LT(heap.live_objects(), 2000u);
  EXPECT_LT(heap.charged_bytes(), std::uint64_t{4} << 20);
  // Dropping the root frees both at the next collection; their handles then name nothing.
  stack[2] = 0;
  for (int i = 0; i < 2000; ++i) ASSERT_NE(heap.make(&bytes, 128, 1024, roots, account), 0u);
  EXPECT_EQ(heap.get(outer), nullptr);
  EXPECT_EQ(heap.get(inner), nullptr);
  EXPECT_EQ(heap.get(gcref::from_i31(3)), nullptr);
  EXPECT_EQ(heap.get(0), nullptr);
}

TEST(GcHeap, RefusesPastTheAccountAndPastTheObjectBound) {
  const FuncType bytes = array_of(ValType::I64);
  GcHeap heap;
  ResourceAccount account;
  account.limit = 1 << 20;
  const std::vector<std::span<const std::uint64_t>> none;
  EXPECT_EQ(heap.make(&bytes, 0, GcHeap::kMaxObjectBytes + 1, none, account), 0u);
  std::uint64_t h = 0;
  int made = 0;
  // Nothing is a root here: the heap collects and reuses, so it never refuses.
  for (; made < 1000; ++made) {
    h = heap.make(&bytes, 1024, 8192, none, account);
    if (h == 0) break;
  }
  EXPECT_EQ(made, 1000);
  EXPECT_LE(account.used, account.limit);
  // Kept alive (a root holds every handle), the account refuses before 1 MiB.
  std::vector<std::uint64_t> live(1000, 0);
  const std::vector<std::span<const std::uint64_t>> roots = {live};
  int kept_alive = 0;
  for (; kept_alive < 1000; ++kept_alive) {
    live[kept_alive] = heap.make(&bytes, 1024, 8192, roots, account);
    if (live[kept_alive] == 0) break;
  }
  EXPECT_LT(kept_alive, 1000);
  EXPECT_GT(kept_alive, 50);
  EXPECT_LE(account.used, account.limit);
}

TEST(GcHeap, SmallObjectsOfEveryClassAndBigOnesKeepTheirBytesAcrossCollections) {
  // One survivor of each size (16-byte steps up to past the small-object bound, so both the
  // size-class chunks and the big blocks), written with a pattern, among garbage of every size:
  // after many collections each survivor still holds its own bytes, zeroes past them, and every
  // garbage handle names nothing.
  const FuncType bytes = array_of(ValType::I32);  // the heap reads a type only to trace references
  GcHeap heap;
  ResourceAccount account;
  std::vector<std::uint64_t> kept(48, 0);
  const std::vector<std::span<const std::uint64_t>> roots = {kept};
  std::vector<std::uint64_t> garbage;
  for (int round = 0; round < 60; ++round) {
    for (std::uint32_t k = 0; k < kept.size(); ++k) {
      const std::uint32_t n = 16 * k + 3;
      const std::uint64_t h = heap.make(&bytes, n, n, roots, account);
      ASSERT_NE(h, 0u);
      if (round == 0) {
        kept[k] = h;
        std::memset(heap.get(h)->at(0), static_cast<int>(k + 1), n);
      } else if (round == 1) {
        garbage.push_back(h);
      }
    }
    for (int i = 0; i < 400; ++i) ASSERT_NE(heap.make(&bytes, 200, 200, roots, account), 0u);
  }
  EXPECT_GT(heap.collections(), 2u);
  for (std::uint32_t k = 0; k < kept.size(); ++k) {
    const GcObject* o = heap.get(kept[k]);
    ASSERT_NE(o, nullptr) << k;
    ASSERT_EQ(o->length, 16 * k + 3);
    for (std::uint32_t i = 0; i < o->length; ++i) ASSERT_EQ(*o->at(i), k + 1) << k << " byte " << i;
  }
  for (const std::uint64_t h : garbage) EXPECT_EQ(heap.get(h), nullptr);
  // What a collection frees is reused: the footprint stays a small multiple of the threshold.
  EXPECT_LE(heap.charged_bytes(), 3 * GcHeap::kCollectEvery);
}

TEST(GcHeap, ChunksEmptiedInOneSizeAreReusedForAnother) {
  // A guest that moves from one object size to the next (each dead before the next size starts)
  // reuses the chunks the earlier sizes left empty: the footprint does not grow with the number
  // of sizes it went through.
  const FuncType bytes = array_of(ValType::I32);  // the heap reads a type only to trace references
  GcHeap heap;
  ResourceAccount account;
  const std::vector<std::span<const std::uint64_t>> none;
  std::uint64_t after_first = 0;
  for (std::uint32_t size = 16; size <= GcHeap::kSmallBytes - GcHeap::kObjectBytes; size += 16) {
    for (std::uint64_t made = 0; made < 3 * GcHeap::kCollectEvery; made += size + GcHeap::kObjectBytes)
      ASSERT_NE(heap.make(&bytes, size, size, none, account), 0u);
    if (after_first == 0) after_first = heap.charged_bytes();
  }
  EXPECT_LE(heap.charged_bytes(), after_first + 2 * GcHeap::kCollectEvery);
}

struct HostHeld {
  Store store;
  Instance* instance = nullptr;
  FuncInst* fn(std::string_view name) { return std::get<FuncInst*>(*instance->find_export(name)); }
  std::uint64_t call(std::string_view name, std::vector<Value> args) {
    auto r = store.invoke(fn(name), args);
    EXPECT_TRUE(r.has_value()) << name << ": " << (r ? "" : r.error().message);
    return r && !r->empty() ? (*r)[0].bits : 0;
  }
};

std::unique_ptr<HostHeld> host_held() {
  auto bin = text::wat_to_binary(gc_testing::kGcChurnModule);
  EXPECT_TRUE(bin.has_value());
  if (!bin) return nullptr;
  auto m = compile(*bin);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().message);
  if (!m) return nullptr;
  auto h = std::make_unique<HostHeld>();
  auto inst = h->store.instantiate(*m, {});
  EXPECT_TRUE(inst.has_value());
  if (!inst) return nullptr;
  h->instance = *inst;
  return h;
}

TEST(GcHostRoots, ReferencesInvokeReturnedSurviveCollectionsUntilTheirScopeCloses) {
  auto h = host_held();
  ASSERT_NE(h, nullptr);
  const std::uint64_t kept = h->call("make", {Value::i32(11)});
  const std::uint64_t kept_extern = h->call("make_extern", {Value::i32(12)});
  std::uint64_t scoped = 0;
  std::uint64_t scoped_extern = 0;
  {
    const Store::RootScope scope(h->store);
    scoped = h->call("make", {Value::i32(21)});
    scoped_extern = h->call("make_extern", {Value::i32(22)});
    EXPECT_EQ(h->store.host_roots(), 4u);
    h->call("churn", {});
    // Rooted while the scope is open: alive across the collections, and usable.
    EXPECT_GT(h->store.impl().gc.collections(), 0u);
    EXPECT_EQ(h->store.any_ref_kind(scoped), Store::AnyRef::Struct);
    EXPECT_EQ(h->call("read", {Value{ValType::ref(true, 0), scoped, 0}}), 21u);
    EXPECT_EQ(h->call("read_extern", {Value{ValType::ExternRef, scoped_extern, 0}}), 22u);
  }
  EXPECT_EQ(h->store.host_roots(), 2u);
  const std::uint64_t before = h->store.impl().gc.collections();
  h->call("churn", {});
  EXPECT_GT(h->store.impl().gc.collections(), before);
  // The scope closed: those two are gone; the two rooted outside any scope stay.
  EXPECT_EQ(h->store.any_ref_kind(scoped), Store::AnyRef::Dangling);
  EXPECT_EQ(h->store.any_ref_kind(gcref::to_any(scoped_extern)), Store::AnyRef::Dangling);
  EXPECT_EQ(h->store.any_ref_kind(kept), Store::AnyRef::Struct);
  EXPECT_EQ(h->call("read", {Value{ValType::ref(true, 0), kept, 0}}), 11u);
  EXPECT_EQ(h->call("read_extern", {Value{ValType::ExternRef, kept_extern, 0}}), 12u);
}

TEST(GcHostRoots, RootKeepsAReferenceTheHostGotElsewhere) {
  auto h = host_held();
  ASSERT_NE(h, nullptr);
  const Store::RootScope scope(h->store);
  std::uint64_t obj = 0;
  {
    const Store::RootScope inner(h->store);
    obj = h->call("make", {Value::i32(5)});
  }
  EXPECT_EQ(h->store.host_roots(), 0u);
  h->store.root(obj);  // e.g. a host function keeping its argument
  h->call("churn", {});
  EXPECT_EQ(h->store.any_ref_kind(obj), Store::AnyRef::Struct);
  EXPECT_EQ(h->call("read", {Value{ValType::ref(true, 0), obj, 0}}), 5u);
}

// Exceptions are objects of the same heap: a cycle through a struct and an exception (the struct
// holds the exnref, the exception's value is the struct) is garbage like any other and is freed.
// With two heaps, each treating the other's contents as roots, no such cycle was ever freed.
constexpr std::string_view kCycles = R"((module
  (type $box (struct (field (mut exnref))))
  (tag $t (param (ref null $box)))
  (func (export "cycles") (param $n i32)
    (local $b (ref null $box))
    (loop $l
      (local.set $b (struct.new $box (ref.null exn)))
      (struct.set $box 0 (local.get $b)
        (block $h (result exnref)
          (try_table (catch_all_ref $h) (throw $t (local.get $b)))
          (unreachable)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (local.get $n))))
))";

TEST(GcHeap, ACycleThroughAStructAndAnExceptionIsFreed) {
  auto bin = text::wat_to_binary(kCycles);
  ASSERT_TRUE(bin.has_value()) << bin.error().message;
  auto m = compile(*bin);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  Store store;
  auto inst = store.instantiate(*m, {});
  ASSERT_TRUE(inst.has_value()) << inst.error().message;
  FuncInst* cycles = std::get<FuncInst*>(*(*inst)->find_export("cycles"));
  // 100,000 cycles are 200,000 objects (about 13 MB); the heap collects every 1 MiB or so.
  auto r = store.invoke(cycles, std::vector<Value>{Value::i32(100'000)});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const GcHeap& heap = store.impl().gc;
  EXPECT_GT(heap.collections(), 0u);
  EXPECT_LT(heap.live_objects(), 60'000u);
  EXPECT_LE(heap.charged_bytes(), 4 * GcHeap::kCollectEvery);
}

}  // namespace
}  // namespace sprawling::wasm
