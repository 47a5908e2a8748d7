// Tier-up (src/wasm/jit/tiering.cpp): under Tier::Auto without cached code, functions the
// interpreter counts as hot are compiled on the background thread and entered from their next
// call, with the interpreter's results, traps (kind, function, offset) and fuel before and after;
// tier-up off leaves Auto to the interpreter; a module dropped with compilations queued is freed.
#include "jit/tier_fixture.hpp"
#include "wasm/jit/jit.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace sprawling::wasm {
namespace {

using jit_testing::compile_wat;
using jit_testing::Outcome;
using jit_testing::run;

// sum(n) calls sq n times in a loop; load traps past the memory; host calls out.
constexpr const char* kWat = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (memory 1)
  (func $sq (param i32) (result i32) (i32.mul (local.get 0) (local.get 0)))
  (func (export "sum") (param $n i32) (result i32)
    (local $i i32) (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i32.add (local.get $s) (call $sq (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $s))
  (func (export "load") (param i32) (result i32)
    (i32.add (i32.const 1) (i32.load offset=4 (local.get 0))))
  (func (export "host") (param i32) (result i32)
    (call $add1 (i32.mul (local.get 0) (i32.const 3))))
  (func (export "spin") (param $n i32) (result i32)
    (local $s i32)
    (loop $l
      (local.set $s (i32.add (local.get $s) (local.get $n)))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (local.get $s))
))";

constexpr std::uint32_t kSq = 0;  // defined indices
constexpr std::uint32_t kLoad = 2;
constexpr std::uint32_t kHost = 3;
constexpr std::uint32_t kSpin = 4;
constexpr std::int32_t kCalls = 8;  // the threshold these tests set

Value i32(std::uint32_t v) {
  return Value{ValType::I32, v, 0};
}

// The module's tier-up code of a variant, once a store on Auto made it.
jit::ModuleCode* tier_up_code_of(const CompiledModule& m, int variant) {
  const std::lock_guard lock(m.impl().jit_mutex);
  return m.impl().jit_code[variant].get();
}

bool has_machine_code(const CompiledModule& m, int variant, std::uint32_t defined) {
  const jit::ModuleCode* code = tier_up_code_of(m, variant);
  return code != nullptr && code->entries[defined].entry.load() != nullptr;
}

class TierUp : public ::testing::Test {
 protected:
  void SetUp() override {
    jit::tier_up_set_calls(kCalls);
    module_ = jit_testing::compile_wat(kWat);
    ASSERT_NE(module_, nullptr);
  }
  void TearDown() override { jit::tier_up_set_calls(20000); }
  // Both tiers under `fuel` (none: unmetered): Auto with tier-up must give the interpreter's outcome.
  void same(const char* name, const std::vector<Value>& args, std::optional<std::uint64_t> fuel) {
    const Outcome interp = run(module_, Tier::Interpret, name, args, fuel);
    const Outcome tiered = run(module_, Tier::Auto, name, args, fuel);
    EXPECT_EQ(tiered, interp) << name << " fuel " << (fuel ? static_cast<std::int64_t>(*fuel) : -1);
  }
  std::shared_ptr<const CompiledModule> module_;
};

TEST_F(TierUp, HotFunctionsRunAsMachineCodeWithTheInterpretersOutcomes) {
  for (const bool metered : {false, true}) {
    const std::optional<std::uint64_t> fuel = metered ? std::optional<std::uint64_t>(1'000'000) : std::nullopt;
    const int variant = metered ? kMetered : kUnmetered;
    // Before: sq is called kCalls times by the first sum, which asks for it; the outcome does not
    // depend on when it is compiled.
    same("sum", {i32(3 * kCalls)}, fuel);
    for (int i = 0; i < kCalls; ++i) same("load", {i32(static_cast<std::uint32_t>(i) * 4)}, fuel);
    for (int i = 0; i < kCalls; ++i) same("host", {i32(static_cast<std::uint32_t>(i))}, fuel);
    ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
    const jit::ModuleCode* code = tier_up_code_of(*module_, variant);
    ASSERT_NE(code, nullptr);
    EXPECT_TRUE(code->tier_up);
    EXPECT_EQ(code->error, "");
    for (const std::uint32_t f : {kSq, kLoad, kHost}) {
      EXPECT_TRUE(has_machine_code(*module_, variant, f)) << f << ": " << code->reasons[f];
    }
    // After: the same outcomes from machine code, the trap located at the same offset.
    same("sum", {i32(50)}, fuel);
    same("load", {i32(65532)}, fuel);  // out of bounds: trap in the compiled function
    same("load", {i32(8)}, fuel);
    same("host", {i32(7)}, fuel);
  }
}

TEST_F(TierUp, EveryBudgetStopsAtTheSamePointWhileAndAfterCompiling) {
  const Outcome full = run(module_, Tier::Interpret, "sum", {i32(20)}, 1'000'000);
  ASSERT_EQ(full.trap, TrapKind::None);
  ASSERT_GT(full.fuel, 20u);
  for (std::uint64_t budget = 1; budget <= full.fuel + 1; ++budget) same("sum", {i32(20)}, budget);
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  EXPECT_TRUE(has_machine_code(*module_, kMetered, kSq));
  for (std::uint64_t budget = 1; budget <= full.fuel + 1; ++budget) same("sum", {i32(20)}, budget);
}

TEST_F(TierUp, AFunctionCalledOnceButLoopingLongIsCompiledForItsNextCall) {
  // 1024 backward branches count as a call (the interpreter's loop samples): 3 * kCalls * 1024
  // iterations in one call make spin hot.
  const std::uint32_t n = 3 * kCalls * 1024;
  for (const bool metered : {false, true}) {
    const std::optional<std::uint64_t> fuel = metered ? std::optional<std::uint64_t>(1'000'000'000) : std::nullopt;
    same("spin", {i32(n)}, fuel);
    ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
    EXPECT_TRUE(has_machine_code(*module_, metered ? kMetered : kUnmetered, kSpin));
    same("spin", {i32(n)}, fuel);
  }
}

TEST_F(TierUp, OffLeavesAutoToTheInterpreter) {
  Store store;
  ASSERT_TRUE(store.set_tier(Tier::Auto));
  store.set_tier_up(false);
  FuncInst* add1 = store.add_host_function(FuncType{{ValType::I32}, {ValType::I32}}, jit_testing::host_add1,
                                           nullptr, "add1");
  Linker linker;
  linker.define("env", "add1", add1);
  auto imports = linker.resolve(module_->module());
  ASSERT_TRUE(imports.has_value());
  auto inst = store.instantiate(module_, *imports);
  ASSERT_TRUE(inst.has_value());
  auto sum = (*inst)->find_export("sum");
  ASSERT_TRUE(sum.has_value());
  for (int i = 0; i < 3; ++i) {
    auto r = store.invoke(std::get<FuncInst*>(*sum), std::vector<Value>{i32(4 * kCalls)});
    ASSERT_TRUE(r.has_value());
  }
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  EXPECT_EQ(tier_up_code_of(*module_, kUnmetered), nullptr);  // nothing made, nothing counted
}

TEST_F(TierUp, AModuleDroppedWhileItsFunctionsAreQueuedIsFreed) {
  std::weak_ptr<const CompiledModule> weak = module_;
  // Several modules make hot functions at once; every reference is dropped right away, while
  // their compilations are queued or running.
  std::vector<std::weak_ptr<const CompiledModule>> others;
  for (int i = 0; i < 4; ++i) {
    auto m = compile_wat(kWat);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(run(m, Tier::Auto, "sum", {i32(2 * kCalls)}, std::nullopt).trap, TrapKind::None);
    others.push_back(m);
  }
  EXPECT_EQ(run(module_, Tier::Auto, "sum", {i32(2 * kCalls)}, std::nullopt).trap, TrapKind::None);
  module_.reset();
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  EXPECT_TRUE(weak.expired());
  for (const auto& o : others) EXPECT_TRUE(o.expired());
}

}  // namespace
}  // namespace sprawling::wasm
