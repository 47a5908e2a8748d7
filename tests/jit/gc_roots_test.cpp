// Garbage-collection roots in machine-code frames: a module without GC runs compiled, and its
// functions can hold an externref that wraps a GC object of another module in the same store
// (extern.convert_any) across a call that collects. The collector must see that reference in the
// compiled frame (src/wasm/runtime/heap/gc_heap.cpp, the native-stack scan), or the object would be freed
// and the reference would name nothing when it comes back.
#include "jit/tier_fixture.hpp"
#include "wasm/runtime/linker.hpp"
#include "wasm/gc_churn_module.hpp"
#include "wasm/jit/jit.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <gtest/gtest.h>

namespace sprawling::wasm {
namespace {

using jit_testing::compile_wat;

// The non-GC side: keeps three externrefs in locals across the churn, then reads them back.
constexpr std::string_view kHolder = R"((module
  (import "g" "make_extern" (func $make (param i32) (result externref)))
  (import "g" "churn" (func $churn))
  (import "g" "read_extern" (func $read (param externref) (result i32)))
  (func $hold (export "hold") (param i32) (result i32)
    (local $a externref) (local $b externref) (local $c externref)
    (local.set $a (call $make (local.get 0)))
    (local.set $b (call $make (i32.add (local.get 0) (i32.const 1))))
    (local.set $c (call $make (i32.add (local.get 0) (i32.const 2))))
    (call $churn)
    (i32.add (call $read (local.get $a))
      (i32.add (call $read (local.get $b)) (call $read (local.get $c)))))
  ;; The same through a nested compiled call: the references sit in the caller's frame.
  (func (export "nested") (param i32) (result i32)
    (local $x externref)
    (local.set $x (call $make (local.get 0)))
    (i32.add (call $hold (i32.const 100)) (call $read (local.get $x))))
))";

struct Pair {
  std::expected<std::vector<Value>, Trap> hold;
  std::expected<std::vector<Value>, Trap> nested;
};

Pair run_both(Tier tier) {
  auto gc = compile_wat(gc_testing::kGcChurnModule);
  auto holder = compile_wat(kHolder);
  if (gc == nullptr || holder == nullptr) return {std::unexpected(Trap{}), std::unexpected(Trap{})};
  Store store;
  EXPECT_TRUE(store.set_tier(tier));
  store.set_tier_up(false);
  Linker linker;
  auto gi = store.instantiate(gc, {});
  EXPECT_TRUE(gi.has_value());
  linker.define_instance("g", **gi);
  auto imports = linker.resolve(holder->module());
  EXPECT_TRUE(imports.has_value());
  auto hi = store.instantiate(holder, *imports);
  EXPECT_TRUE(hi.has_value()) << (hi ? "" : hi.error().message);
  auto* hold = std::get<FuncInst*>(*(*hi)->find_export("hold"));
  auto* nested = std::get<FuncInst*>(*(*hi)->find_export("nested"));
  Pair p{store.invoke(hold, std::vector<Value>{Value::i32(40)}), store.invoke(nested, std::vector<Value>{Value::i32(7)})};
  return p;
}

void expect_results(const Pair& p) {
  ASSERT_TRUE(p.hold.has_value()) << p.hold.error().message;
  ASSERT_EQ(p.hold->size(), 1u);
  EXPECT_EQ((*p.hold)[0].bits, 40u + 41u + 42u);
  ASSERT_TRUE(p.nested.has_value()) << p.nested.error().message;
  ASSERT_EQ(p.nested->size(), 1u);
  EXPECT_EQ((*p.nested)[0].bits, 100u + 101u + 102u + 7u);
}

TEST(GcRoots, InterpretedFramesKeepWrappedObjectsAlive) {
  expect_results(run_both(Tier::Interpret));
}

TEST(GcRoots, CompiledFramesKeepWrappedObjectsAlive) {
  expect_results(run_both(Tier::Compile));
}

// An exnref in a compiled frame: `hold` keeps the exnref `make` returned in a register or native
// stack slot while `churn` (which throws and catches, as machine code too) makes enough exceptions
// to collect several times. Exceptions live in the one heap, whose collections scan compiled
// frames and the exception pending between a throw and its catch: the exception survives.
constexpr std::string_view kExnHolder = R"((module
  (tag $t (param i32))
  (func $make (param i32) (result exnref)
    (block $h (result exnref)
      (try_table (catch_all_ref $h) (throw $t (local.get 0)))
      (unreachable)))
  (func $churn (param $n i32)
    (loop $l
      (drop (block $h (result exnref)
        (try_table (catch_all_ref $h) (throw $t (local.get $n)))
        (unreachable)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (local.get $n))))
  (func $read (param exnref) (result i32)
    (block $h (result i32)
      (try_table (catch $t $h) (throw_ref (local.get 0)))
      (unreachable)))
  (func $hold (export "hold") (param i32) (result i32)
    (local $e exnref)
    (local.set $e (call $make (local.get 0)))
    (call $churn (i32.const 60000))
    (call $read (local.get $e)))
))";

TEST(GcRoots, CompiledFramesKeepExceptionsAlive) {
  auto module = compile_wat(kExnHolder);
  ASSERT_NE(module, nullptr);
  for (const Tier tier : {Tier::Interpret, Tier::Compile}) {
    Store store;
    ASSERT_TRUE(store.set_tier(tier));
    store.set_tier_up(false);
    auto inst = store.instantiate(module, {});
    ASSERT_TRUE(inst.has_value()) << inst.error().message;
    auto r = store.invoke(std::get<FuncInst*>(*(*inst)->find_export("hold")), std::vector<Value>{Value::i32(41)});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ((*r)[0].bits, 41u);
    EXPECT_GT(store.impl().gc.collections(), 1u);
    if (tier == Tier::Compile) {
      // Every function is machine code, the ones that throw and catch too.
      const jit::ModuleCode& code = module->impl().jit(kUnmetered);
      ASSERT_EQ(code.reasons.size(), 4u);
      for (std::size_t i = 0; i < code.reasons.size(); ++i) {
        EXPECT_EQ(code.reasons[i], "") << i;
        EXPECT_NE(code.entries[i].entry.load(), nullptr) << i;
      }
    }
  }
}

}  // namespace
}  // namespace sprawling::wasm
