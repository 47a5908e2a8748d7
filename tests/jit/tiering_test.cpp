// Tier-up (src/wasm/jit/tiering.cpp): under Tier::Auto without cached code, functions the
// interpreter counts as hot are compiled on the background thread and entered from their next
// call, with the interpreter's results, traps (kind, function, offset) and fuel before and after;
// tier-up off leaves Auto to the interpreter; a module dropped with compilations queued is freed.
#include "jit/tier_fixture.hpp"
#include "wasm/runtime/linker.hpp"
#include "wasm/jit/code_cache.hpp"
#include "wasm/jit/jit.hpp"

#include <algorithm>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
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
  return m.impl().jit_tier_up[variant].get();
}

bool has_machine_code(const CompiledModule& m, int variant, std::uint32_t defined) {
  const jit::ModuleCode* code = tier_up_code_of(m, variant);
  return code != nullptr && code->entries[defined].entry.load() != nullptr;
}

// Once the tier-up thread is idle: how many functions of `m`'s tier-up code of `variant` were
// linked from the hot set, and how many it compiled.
struct Origin {
  std::size_t linked = 0;
  std::size_t compiled = 0;
};
Origin origin_of(const CompiledModule& m, int variant) {
  EXPECT_TRUE(jit::tier_up_wait_idle(120'000));
  const jit::ModuleCode* code = tier_up_code_of(m, variant);
  EXPECT_NE(code, nullptr);
  return code == nullptr ? Origin{} : Origin{code->from_hot_set, code->materialized};
}

class TierUp : public ::testing::Test {
 protected:
  void SetUp() override {
    jit::tier_up_set_calls(kCalls);
    module_ = jit_testing::compile_wat(kWat);
    ASSERT_NE(module_, nullptr);
  }
  void TearDown() override {
    jit::tier_up_set_calls(20000);
    jit::tier_up_set_upgrade_delay(std::nullopt);
  }
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
  // 1024 backward branches count as jit::kLoopSampleCalls calls (the interpreter's loop
  // samples): enough samples in one call to cover 3 * kCalls make spin hot.
  static_assert(jit::kLoopSampleCalls > 0);
  const std::uint32_t samples = std::max<std::uint32_t>(1, 3 * kCalls / jit::kLoopSampleCalls + 1);
  const std::uint32_t n = samples * 1024 + 1;
  for (const bool metered : {false, true}) {
    const std::optional<std::uint64_t> fuel = metered ? std::optional<std::uint64_t>(1'000'000'000) : std::nullopt;
    same("spin", {i32(n)}, fuel);
    ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
    EXPECT_TRUE(has_machine_code(*module_, metered ? kMetered : kUnmetered, kSpin));
    same("spin", {i32(n)}, fuel);
  }
}

// big (defined 0): 300 adds of 7 bytes each (local.get, i32.const, i32.add, local.set), about
// 2,100 wasm code bytes; small (defined 1): one add.
std::shared_ptr<const CompiledModule> big_and_small() {
  std::string body;
  for (int i = 0; i < 300; ++i) body += "(local.set 0 (i32.add (local.get 0) (i32.const 1)))";
  const std::string wat = "(module (func (export \"big\") (param i32) (result i32) " + body +
                          " (local.get 0)) (func (export \"small\") (param i32) (result i32) (i32.add (local.get 0) "
                          "(i32.const 1))))";
  auto module = jit_testing::compile_wat(wat);
  if (module != nullptr) {
    const std::size_t big_bytes = module->impl().module.code[0].code_size;
    EXPECT_GT(big_bytes, 4u * 512);
    EXPECT_LT(big_bytes, 5u * 512);
  }
  return module;
}

// Without a hot set, a function's threshold grows with its size (SPRAWLING_JIT_TIER_UP_BYTES,
// default 512 wasm code bytes a step): a large function called as often as a small one that
// turned hot is not asked for yet, and is after enough more calls; both keep the interpreter's
// outcomes throughout.
TEST_F(TierUp, LargeFunctionsNeedMoreCallsToTurnHot) {
  // big's countdown is kCalls * 5 against small's kCalls.
  const auto module = big_and_small();
  ASSERT_NE(module, nullptr);
  const auto call = [&](const char* name, int times) {
    for (int i = 0; i < times; ++i) {
      const std::vector<Value> args{i32(static_cast<std::uint32_t>(i))};
      EXPECT_EQ(run(module, Tier::Auto, name, args, std::nullopt), run(module, Tier::Interpret, name, args, std::nullopt))
          << name;
    }
  };
  call("small", 2 * kCalls);
  call("big", 2 * kCalls);
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  EXPECT_TRUE(has_machine_code(*module, kUnmetered, 1));
  EXPECT_FALSE(has_machine_code(*module, kUnmetered, 0));
  call("big", 4 * kCalls);  // 6 * kCalls in all, past kCalls * 5
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  EXPECT_TRUE(has_machine_code(*module, kUnmetered, 0)) << tier_up_code_of(*module, kUnmetered)->reasons[0];
  call("big", 2);
}

// With a hot set (a code cache), what tier-up compiles is kept for every later process, so a
// function's size does not raise its threshold: the large function turns hot after as few calls
// as the small one, with the interpreter's outcomes, and both are kept.
TEST_F(TierUp, WithAHotSetLargeFunctionsTurnHotAsSoonAsSmallOnes) {
  const auto module = big_and_small();
  ASSERT_NE(module, nullptr);
  auto cache = std::make_shared<jit_testing::MemoryCache>();
  const auto call = [&](const char* name, int times) {
    for (int i = 0; i < times; ++i) {
      const std::vector<Value> args{i32(static_cast<std::uint32_t>(i))};
      EXPECT_EQ(run(module, Tier::Auto, name, args, std::nullopt, {}, cache),
                run(module, Tier::Interpret, name, args, std::nullopt))
          << name;
    }
  };
  call("small", 2 * kCalls);
  call("big", 2 * kCalls);
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  EXPECT_TRUE(has_machine_code(*module, kUnmetered, 1));
  EXPECT_TRUE(has_machine_code(*module, kUnmetered, 0)) << tier_up_code_of(*module, kUnmetered)->reasons[0];
  EXPECT_GE(cache->names().size(), 3U);  // the index, big and small
  call("big", 2);
}

// A function too large for the optimizing code generator within a job: a loop whose body is a
// chain of 1,200 multiply-xor steps (thousands of IR instructions, so tier-up compiles it with
// FastISel: quick code), then a division by the second argument (traps at 0).
std::shared_ptr<const CompiledModule> huge_module() {
  std::string chain;
  for (int i = 0; i < 1200; ++i) chain += "(local.set $x (i32.xor (i32.mul (local.get $x) (i32.const 31)) (local.get $n)))";
  return jit_testing::compile_wat(
      "(module (func (export \"huge\") (param $n i32) (param $d i32) (result i32) (local $x i32)"
      " (local.set $x (local.get $n)) (loop $l " + chain +
      " (br_if $l (i32.gt_s (local.tee $n (i32.sub (local.get $n) (i32.const 1))) (i32.const 0))))"
      " (i32.div_u (local.get $x) (local.get $d))))");
}

// Upgrades: quick code is compiled again with the optimizing pipeline once due (here at once),
// in the process that compiled it and in one that linked it from the hot set; the entry changes,
// the outcomes (results, the trap's kind and place, fuel) stay the interpreter's, the hot set then
// holds the optimized code, which a later process links and does not upgrade, and it counts the
// upgrades processes began.
TEST_F(TierUp, QuickCodeOfAHugeFunctionIsUpgradedAndTheHotSetKeepsTheUpgrade) {
  for (const bool metered : {false, true}) {
    const std::optional<std::uint64_t> fuel = metered ? std::optional<std::uint64_t>(10'000'000) : std::nullopt;
    const int variant = metered ? kMetered : kUnmetered;
    auto cache = std::make_shared<jit_testing::MemoryCache>();
    // A process: the module compiled again (so its tier-up code is new), called `times` rounds
    // with `with` as its code cache (each outcome the interpreter's), then its tier-up code once
    // the thread is idle.
    struct Process {
      std::shared_ptr<const CompiledModule> module;
      const jit::ModuleCode* code = nullptr;
    };
    const auto calls = [&](const std::shared_ptr<const CompiledModule>& m, int times,
                           const std::shared_ptr<jit_testing::MemoryCache>& with) {
      for (int i = 0; i < times; ++i) {
        for (const std::uint32_t d : {7U, 0U}) {
          const std::vector<Value> args{i32(static_cast<std::uint32_t>(i % 4)), i32(d)};
          EXPECT_EQ(run(m, Tier::Auto, "huge", args, fuel, {}, with), run(m, Tier::Interpret, "huge", args, fuel))
              << "huge(" << i % 4 << ", " << d << ")";
        }
      }
    };
    const auto process = [&](int times, const std::shared_ptr<jit_testing::MemoryCache>& with) {
      Process p{huge_module(), nullptr};
      EXPECT_NE(p.module, nullptr);
      if (p.module == nullptr) return p;
      calls(p.module, times, with);
      EXPECT_TRUE(jit::tier_up_wait_idle(120'000));
      p.code = tier_up_code_of(*p.module, variant);
      EXPECT_NE(p.code, nullptr);
      return p;
    };
    // First process: quick code, not upgraded yet (due in an hour), kept in the hot set as such.
    jit::tier_up_set_upgrade_delay(std::chrono::hours(1));
    const Process first = process(kCalls, cache);
    ASSERT_NE(first.code, nullptr);
    ASSERT_TRUE(has_machine_code(*first.module, variant, 0)) << first.code->reasons[0];
    EXPECT_EQ(first.code->quick[0], 1U) << "not compiled as quick code: the test's function is too small";
    EXPECT_EQ(first.code->upgraded, 0U);
    // Second process: links the quick code and upgrades it at once.
    jit::tier_up_set_upgrade_delay(std::chrono::milliseconds(0));
    const Process second = process(kCalls, cache);
    ASSERT_NE(second.code, nullptr);
    EXPECT_EQ(second.code->from_hot_set, 1U);
    EXPECT_EQ(second.code->upgraded, 1U);
    EXPECT_EQ(second.code->quick[0], 0U);
    calls(second.module, 4, cache);  // the optimized code's outcomes
    // Third process: links the optimized code, nothing to upgrade; the hot set counted one
    // upgrade begun (this call records a second).
    const Process third = process(kCalls, cache);
    ASSERT_NE(third.code, nullptr);
    EXPECT_EQ(third.code->from_hot_set, 1U);
    EXPECT_EQ(third.code->upgraded, 0U);
    EXPECT_EQ(third.code->quick[0], 0U);
    EXPECT_EQ(jit::hot_set_begin_upgrade(third.module->impl(), *third.code, *cache, 0), 1U);
    // Without a hot set, quick code stays (an upgrade would be paid again by every process); the
    // threshold grows with the size there (12 KB: 24 times kCalls).
    const Process alone = process(30 * kCalls, nullptr);
    ASSERT_NE(alone.code, nullptr);
    EXPECT_EQ(alone.code->quick[0], 1U);
    EXPECT_EQ(alone.code->upgraded, 0U);
    // And in the process that compiled the quick code, with an empty hot set: the entry is the
    // quick code's until the upgrade is due (a second later), then the optimized code's.
    jit::tier_up_set_upgrade_delay(std::chrono::seconds(1));
    auto fresh_cache = std::make_shared<jit_testing::MemoryCache>();
    const Process compiled = process(kCalls, fresh_cache);
    ASSERT_NE(compiled.code, nullptr);
    const jit::Entry quick = compiled.code->entries[0].entry.load();
    ASSERT_NE(quick, nullptr);
    EXPECT_EQ(compiled.code->quick[0], 1U);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
    EXPECT_EQ(compiled.code->upgraded, 1U);
    EXPECT_NE(compiled.code->entries[0].entry.load(), quick);
    calls(compiled.module, 4, fresh_cache);
  }
}

// The default delay before an upgrade: about the optimizing compile's expected time (CPython's
// eval loop, 51.7 KB: a few seconds), doubled for each upgrade processes began before.
TEST_F(TierUp, AnUpgradeWaitsLongerForEachOneBegunBefore) {
  jit::tier_up_set_upgrade_delay(std::nullopt);
  const auto once = jit::tier_up_upgrade_delay(51659, 0);
  EXPECT_GT(once, std::chrono::seconds(2));
  EXPECT_LT(once, std::chrono::seconds(10));
  EXPECT_EQ(jit::tier_up_upgrade_delay(51659, 3), 8 * once);
  jit::tier_up_set_upgrade_delay(std::chrono::milliseconds(250));
  EXPECT_EQ(jit::tier_up_upgrade_delay(51659, 3), std::chrono::milliseconds(250));
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

// A store on Tier::Compile after a tier-up store of the same module (an embedder mixing tiers in
// one process) gets the whole module compiled, not the tier-up code's hot functions; and stores on
// Auto made after that use the whole-module code too.
TEST_F(TierUp, ACompileStoreAfterATierUpStoreGetsTheWholeModule) {
  // Tier-up first: sq turns hot and is compiled; load never runs.
  EXPECT_EQ(run(module_, Tier::Auto, "sum", {i32(4 * kCalls)}, std::nullopt).trap, TrapKind::None);
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  ASSERT_TRUE(has_machine_code(*module_, kUnmetered, kSq));
  EXPECT_FALSE(has_machine_code(*module_, kUnmetered, kLoad));
  // Then Compile: every function of the module has an entry, and the outcomes are the interpreter's.
  const Outcome compiled = run(module_, Tier::Compile, "load", {i32(65532)}, std::nullopt);
  EXPECT_EQ(compiled, run(module_, Tier::Interpret, "load", {i32(65532)}, std::nullopt));
  EXPECT_EQ(compiled.trap, TrapKind::OutOfBoundsMemoryAccess);
  const jit::ModuleCode* whole = nullptr;
  {
    const std::lock_guard lock(module_->impl().jit_mutex);
    whole = module_->impl().jit_code[kUnmetered].get();
  }
  ASSERT_NE(whole, nullptr);
  EXPECT_FALSE(whole->tier_up);
  for (const std::uint32_t f : {kSq, kLoad, kHost, kSpin}) EXPECT_NE(whole->entries[f].entry.load(), nullptr) << f;
  EXPECT_EQ(run(module_, Tier::Auto, "sum", {i32(4 * kCalls)}, std::nullopt),
            run(module_, Tier::Interpret, "sum", {i32(4 * kCalls)}, std::nullopt));
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

// The hot set: with a code cache, each function tier-up compiles is kept there, and a later
// process (here: the module compiled again, so its tier-up code and slots are new and the first
// module's are gone) links the whole hot set on its first request — functions it has not called
// yet too — and compiles nothing, with the interpreter's outcomes, traps located as before.
TEST_F(TierUp, TheHotSetKeepsCompiledFunctionsForTheNextProcess) {
  for (const bool metered : {false, true}) {
    const std::optional<std::uint64_t> fuel = metered ? std::optional<std::uint64_t>(1'000'000) : std::nullopt;
    const int variant = metered ? kMetered : kUnmetered;
    auto cache = std::make_shared<jit_testing::MemoryCache>();
    const auto both = [&](const std::shared_ptr<const CompiledModule>& m, const char* name, std::uint32_t arg) {
      const Outcome tiered = run(m, Tier::Auto, name, {i32(arg)}, fuel, {}, cache);
      EXPECT_EQ(tiered, run(m, Tier::Interpret, name, {i32(arg)}, fuel)) << name << "(" << arg << ")";
      return tiered;
    };
    {
      auto first = compile_wat(kWat);
      ASSERT_NE(first, nullptr);
      both(first, "sum", 3 * kCalls);
      for (int i = 0; i < kCalls; ++i) both(first, "load", static_cast<std::uint32_t>(i) * 4);
      const Origin o = origin_of(*first, variant);
      EXPECT_TRUE(has_machine_code(*first, variant, kSq));
      EXPECT_TRUE(has_machine_code(*first, variant, kLoad));
      EXPECT_EQ(o.linked, 0U);
      EXPECT_GE(o.compiled, 2U);
    }
    const std::size_t kept = cache->names().size();
    EXPECT_GE(kept, 3U);  // the index, sq and load (and the plugin's key parts)
    // Linked by the engine (object_linker.cpp) into one mapping, or by the plugin when told.
    for (const bool engine : {true, false}) {
      if (engine)
        ::unsetenv("SPRAWLING_JIT_LINKER");
      else
        ::setenv("SPRAWLING_JIT_LINKER", "llvm", 1);
      auto second = compile_wat(kWat);
      ASSERT_NE(second, nullptr);
      both(second, "sum", 3 * kCalls);  // sq's request links the hot set
      const Origin o = origin_of(*second, variant);
      EXPECT_GE(o.linked, 2U);
      EXPECT_EQ(o.compiled, 0U);
      EXPECT_EQ(tier_up_code_of(*second, variant)->linked.size(), engine ? 1U : 0U);
      EXPECT_TRUE(has_machine_code(*second, variant, kSq));
      EXPECT_TRUE(has_machine_code(*second, variant, kLoad));  // never called by this module yet
      EXPECT_EQ(both(second, "load", 65532).trap, TrapKind::OutOfBoundsMemoryAccess);
      both(second, "load", 8);
      both(second, "sum", 50);
      EXPECT_EQ(cache->names().size(), kept);  // nothing compiled, nothing added
    }
    ::unsetenv("SPRAWLING_JIT_LINKER");
  }
}

// A function a process wanted and did not get compiled (the process ended first:
// tier_up_keep_unfinished notes it, hot_set_want) is compiled by the next process right after it
// links the hot set, without calls of its own; the note is taken once. A function the hot set
// holds turns hot at a tenth of the calls (its request links the hot set).
TEST_F(TierUp, WhatAProcessLeftUncompiledTheNextCompilesEarly) {
  auto cache = std::make_shared<jit_testing::MemoryCache>();
  const Outcome want = run(module_, Tier::Interpret, "sum", {i32(3 * kCalls)}, std::nullopt);
  {
    auto first = compile_wat(kWat);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(run(first, Tier::Auto, "sum", {i32(3 * kCalls)}, std::nullopt, {}, cache), want);
    ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
    jit::ModuleCode* code = tier_up_code_of(*first, kUnmetered);
    ASSERT_NE(code, nullptr);
    ASSERT_TRUE(has_machine_code(*first, kUnmetered, kSq));
    EXPECT_FALSE(has_machine_code(*first, kUnmetered, kLoad));  // never called
    ASSERT_TRUE(jit::hot_set_want(first->impl(), *code, *cache, kLoad).has_value());
  }
  {
    auto listed = jit::tier_up_code(module_->impl(), false, cache);
    EXPECT_LE(listed->entries[kSq].countdown.load(), std::max(1, kCalls / 10));
    EXPECT_GT(listed->entries[kLoad].countdown.load(), std::max(1, kCalls / 10));
  }
  auto second = compile_wat(kWat);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(run(second, Tier::Auto, "sum", {i32(3 * kCalls)}, std::nullopt, {}, cache), want);
  const Origin o = origin_of(*second, kUnmetered);
  EXPECT_GE(o.linked, 1U);
  EXPECT_EQ(o.compiled, 1U);  // load, wanted
  EXPECT_TRUE(has_machine_code(*second, kUnmetered, kLoad));
  EXPECT_EQ(run(second, Tier::Auto, "load", {i32(65532)}, std::nullopt, {}, cache).trap,
            TrapKind::OutOfBoundsMemoryAccess);
  auto third = compile_wat(kWat);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(run(third, Tier::Auto, "sum", {i32(3 * kCalls)}, std::nullopt, {}, cache), want);
  const Origin t = origin_of(*third, kUnmetered);
  EXPECT_GE(t.linked, 2U);
  EXPECT_EQ(t.compiled, 0U);  // the note was taken, and load is in the hot set now
}

// A hot set entry that is not intact (its checksum fails) is refused and its function compiled
// as if it were absent, then kept again; an object is linked only as the function it defines.
TEST_F(TierUp, AHotSetEntryNotIntactIsRefusedAndItsFunctionCompiledAgain) {
  auto cache = std::make_shared<jit_testing::MemoryCache>();
  {
    auto first = compile_wat(kWat);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(run(first, Tier::Auto, "sum", {i32(3 * kCalls)}, std::nullopt, {}, cache).trap, TrapKind::None);
    ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
    ASSERT_TRUE(has_machine_code(*first, kUnmetered, kSq));
  }
  // The functions' entries hold an object (kilobytes); the index a few words.
  std::size_t damaged = 0;
  for (const std::string& name : cache->names()) {
    cache->change(name, [&](std::vector<std::uint8_t>& bytes) {
      if (bytes.size() < 1024) return;
      bytes[bytes.size() / 2] ^= 0x40;
      ++damaged;
    });
  }
  EXPECT_GE(damaged, 1U);
  auto second = compile_wat(kWat);
  ASSERT_NE(second, nullptr);
  const Outcome want = run(second, Tier::Interpret, "sum", {i32(3 * kCalls)}, std::nullopt);
  EXPECT_EQ(run(second, Tier::Auto, "sum", {i32(3 * kCalls)}, std::nullopt, {}, cache), want);
  const Origin o = origin_of(*second, kUnmetered);
  EXPECT_EQ(o.linked, 0U);
  EXPECT_GE(o.compiled, 1U);
  EXPECT_TRUE(has_machine_code(*second, kUnmetered, kSq));
  EXPECT_EQ(run(second, Tier::Auto, "sum", {i32(50)}, std::nullopt, {}, cache),
            run(second, Tier::Interpret, "sum", {i32(50)}, std::nullopt));
  // Kept again, intact: a third module links it.
  auto third = compile_wat(kWat);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(run(third, Tier::Auto, "sum", {i32(3 * kCalls)}, std::nullopt, {}, cache), want);
  EXPECT_GE(origin_of(*third, kUnmetered).linked, 1U);

  // An object is linked only as the one function it defines.
  auto fresh = jit::tier_up_code(third->impl(), false);
  const std::atomic<bool> go{false};
  const jit::TierUpObject sq = jit::compile_function(third->impl(), *fresh, kSq, go, false);
  ASSERT_FALSE(sq.object.empty());
  auto other = jit::tier_up_code(third->impl(), false);
  EXPECT_NE(jit::link_tier_up_object(third->impl(), *other, kLoad, 0, sq.object, false).find("not only wasm_f2"),
            std::string::npos);
  const std::vector<std::uint8_t> junk(64, 0x5A);
  EXPECT_NE(jit::link_tier_up_object(third->impl(), *other, kSq, 0, junk, false).find("not an object file"),
            std::string::npos);
  EXPECT_EQ(other->entries[kLoad].entry.load(), nullptr);
  EXPECT_EQ(other->entries[kSq].entry.load(), nullptr);
  // Under its upgrade name it is refused: an upgrade's object defines that name only.
  EXPECT_NE(jit::link_tier_up_object(third->impl(), *other, kSq, 0, sq.object, true).find("not only wasm_f0_upgraded"),
            std::string::npos);
  EXPECT_EQ(jit::link_tier_up_object(third->impl(), *other, kSq, 0, sq.object, false), "");
  ASSERT_NE(other->entries[kSq].entry.load(), nullptr);
  EXPECT_EQ(other->from_hot_set, 1U);
}

// On-stack replacement: a function entered once whose loop runs on after its compilation
// continues as machine code at a loop header (unmetered tier-up), with every slot and the memory
// as the interpreter left them, and returns or traps as the interpreter would.
constexpr const char* kOsrWat = R"((module
  (import "env" "poll" (func $poll (param i32) (result i32)))
  (memory 1)
  (func (export "run") (result i32)
    (local $i i32) (local $acc i32) (local $t i32)
    (block $done
      (loop $l
        (local.set $t (call $poll (local.get $i)))
        (br_if $done (i32.eq (local.get $t) (i32.const 1)))
        (if (i32.eq (local.get $t) (i32.const 2)) (then (drop (i32.load (i32.const 65536)))))
        (i32.store (i32.and (i32.mul (local.get $i) (i32.const 4)) (i32.const 0xfffc)) (local.get $acc))
        (local.set $acc (i32.add (local.get $acc) (i32.mul (local.get $i) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.add (local.get $acc) (i32.load (i32.const 400))))
))";

// "env" "poll"(i): 0 to go on; once the loop's function has machine code, `after` more
// iterations (several loop samples, so the interpreter has replaced the activation by then),
// then `finish` (1: return, 2: trap out of bounds). Immediately when `after` is 0.
struct Poll {
  Poll(std::uint32_t after_iterations, std::uint32_t finish_with) : after(after_iterations), finish(finish_with) {}
  const CompiledModule* module = nullptr;
  Store* store = nullptr;
  std::uint64_t fuel_sum = 0;              // the fuel consumed at every call, summed: where it went
  int variant = kUnmetered;                // whose machine code to wait for
  std::optional<std::uint32_t> wait_at;    // at this iteration, wait until the compilation is done
  std::uint32_t after = 0;
  std::uint32_t finish = 1;
  std::optional<std::uint32_t> stop_at;
  std::uint32_t iterations = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};
HostStatus host_poll(HostCall& call) {
  auto& p = *static_cast<Poll*>(call.context);
  const auto i = static_cast<std::uint32_t>(call.args[0]);
  p.iterations = i;
  if (p.store != nullptr) p.fuel_sum += p.store->fuel_consumed();
  if (p.wait_at && i == *p.wait_at) {
    EXPECT_TRUE(jit::tier_up_wait_idle(120'000));
  }
  // A compilation that never comes ends the loop after a minute (the test then fails on osr_entries).
  if (!p.stop_at && (p.after == 0 || has_machine_code(*p.module, p.variant, 0) ||
                     std::chrono::steady_clock::now() - p.start > std::chrono::minutes(1)))
    p.stop_at = i + p.after;
  call.results[0] = p.stop_at && i >= *p.stop_at ? p.finish : 0;
  return HostStatus::Ok;
}

// What "run" returns after `n` iterations, computed as the module does.
std::uint32_t osr_expected(std::uint32_t n) {
  std::vector<std::uint32_t> mem(65536 / 4, 0);
  std::uint32_t acc = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    mem[((i * 4) & 0xfffc) / 4] = acc;
    acc += i * i;
  }
  return acc + mem[400 / 4];
}

Outcome run_osr(const std::shared_ptr<const CompiledModule>& module, Tier tier, Poll& poll,
                std::optional<std::uint64_t> fuel = std::nullopt) {
  Store store;
  EXPECT_TRUE(store.set_tier(tier));
  store.set_budget({fuel, std::nullopt});
  poll.module = module.get();
  poll.store = &store;
  FuncInst* f = store.add_host_function(FuncType{{ValType::I32}, {ValType::I32}}, host_poll, &poll, "poll");
  Linker linker;
  linker.define("env", "poll", f);
  auto imports = linker.resolve(module->module());
  EXPECT_TRUE(imports.has_value());
  auto inst = store.instantiate(module, *imports);
  EXPECT_TRUE(inst.has_value());
  if (!inst) return {};
  auto e = (*inst)->find_export("run");
  EXPECT_TRUE(e.has_value());
  return jit_testing::outcome_of(store, store.invoke(std::get<FuncInst*>(*e), {}));
}

// Runs "run" on Auto with tier-up until `poll` finishes it; the function must have been compiled
// and its running activation replaced once.
Outcome run_replaced(const std::shared_ptr<const CompiledModule>& module, Poll& poll,
                     std::optional<std::uint64_t> fuel = std::nullopt) {
  const std::uint64_t before = jit::osr_entries();
  const Outcome tiered = run_osr(module, Tier::Auto, poll, fuel);
  EXPECT_TRUE(jit::tier_up_wait_idle(120'000));
  EXPECT_TRUE(has_machine_code(*module, poll.variant, 0)) << tier_up_code_of(*module, poll.variant)->reasons[0];
  EXPECT_EQ(jit::osr_entries(), before + 1);
  return tiered;
}

TEST_F(TierUp, ALoopRunningWhenItsFunctionIsCompiledContinuesAsMachineCode) {
  auto module = compile_wat(kOsrWat);
  ASSERT_NE(module, nullptr);
  Poll poll(5000, 1);
  const Outcome tiered = run_replaced(module, poll);
  ASSERT_EQ(tiered.trap, TrapKind::None);
  ASSERT_EQ(tiered.results.size(), 1U);
  EXPECT_EQ(tiered.results[0].bits, osr_expected(poll.iterations)) << poll.iterations << " iterations";
  // The interpreter, stopped after as many iterations, agrees (with the formula too).
  Poll same(poll.iterations, 1);
  EXPECT_EQ(run_osr(module, Tier::Interpret, same), tiered);
}

TEST_F(TierUp, ATrapAfterOnStackReplacementIsLocatedAsInTheInterpreter) {
  auto module = compile_wat(kOsrWat);
  ASSERT_NE(module, nullptr);
  Poll poll(5000, 2);
  const Outcome tiered = run_replaced(module, poll);
  Poll at_once(0, 2);
  const Outcome interp = run_osr(module, Tier::Interpret, at_once);
  ASSERT_EQ(interp.trap, TrapKind::OutOfBoundsMemoryAccess);
  EXPECT_EQ(tiered, interp);
}

// Metered tier-up code takes a running activation over too: past the loop header's fuel check,
// which the interpreter's branch has made, with the counter as the interpreter left it.
TEST_F(TierUp, AMeteredLoopContinuesAsMachineCodeWithTheInterpretersFuel) {
  auto module = compile_wat(kOsrWat);
  ASSERT_NE(module, nullptr);
  constexpr std::uint64_t kBudget = std::uint64_t{1} << 40;
  Poll poll(5000, 1);
  poll.variant = kMetered;
  const Outcome tiered = run_replaced(module, poll, kBudget);
  ASSERT_EQ(tiered.trap, TrapKind::None);
  ASSERT_EQ(tiered.results.size(), 1U);
  EXPECT_EQ(tiered.results[0].bits, osr_expected(poll.iterations)) << poll.iterations << " iterations";
  Poll same(poll.iterations, 1);
  same.variant = kMetered;  // its machine code exists: `same` stops after as many iterations
  EXPECT_EQ(run_osr(module, Tier::Interpret, same, kBudget), tiered);
  EXPECT_EQ(poll.fuel_sum, same.fuel_sum);  // every iteration, before and after, cost the same
  // A trap after the replacement, located and charged as in the interpreter.
  auto trapping = compile_wat(kOsrWat);
  ASSERT_NE(trapping, nullptr);
  Poll trap_poll(5000, 2);
  trap_poll.variant = kMetered;
  const Outcome trapped = run_replaced(trapping, trap_poll, kBudget);
  Poll trap_same(trap_poll.iterations, 2);
  trap_same.variant = kMetered;
  const Outcome interp = run_osr(trapping, Tier::Interpret, trap_same, kBudget);
  ASSERT_EQ(interp.trap, TrapKind::OutOfBoundsMemoryAccess);
  EXPECT_EQ(trapped, interp);
}

// A budget that runs out after the replacement stops the machine code where the interpreter
// stops: same trap, same location, exactly the budget consumed, after as many iterations. The
// loop never finishes by itself; the poll waits for the compilation (asked for at the first
// loop sample) at iteration 2000, so the replacement comes at the next sample, long before the
// budget ends.
TEST_F(TierUp, AMeteredBudgetRunsOutInReplacedCodeWhereTheInterpreterStops) {
  for (const std::uint64_t budget : {std::uint64_t{400'000}, std::uint64_t{400'007}, std::uint64_t{1'000'003}}) {
    auto module = compile_wat(kOsrWat);
    ASSERT_NE(module, nullptr);
    Poll poll(0, 0);
    poll.variant = kMetered;
    poll.wait_at = 2000;
    const Outcome tiered = run_replaced(module, poll, budget);
    ASSERT_EQ(tiered.trap, TrapKind::OutOfFuel) << budget;
    EXPECT_EQ(tiered.fuel, budget);
    Poll same(0, 0);
    const Outcome interp = run_osr(module, Tier::Interpret, same, budget);
    EXPECT_EQ(tiered, interp) << budget;
    EXPECT_EQ(poll.iterations, same.iterations) << budget;
    EXPECT_EQ(poll.fuel_sum, same.fuel_sum) << budget;
    EXPECT_GT(poll.iterations, 4000U) << budget;
  }
}


// The process-wide cap on what tier-up's compiles hold: once the compiles of live code hold it,
// hot functions stay interpreted with a reason naming it, and keep the interpreter's outcomes.
TEST_F(TierUp, HotFunctionsPastTheMemoryCapStayInterpreted) {
  jit::tier_up_set_memory_cap(1);  // one compile's JIT alone holds more
  same("sum", {i32(3 * kCalls)}, std::nullopt);  // sq turns hot: compiled unless the cap is held already
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  EXPECT_GE(jit::tier_up_memory_held(), 1U);
  for (int i = 0; i < 2 * kCalls; ++i) same("load", {i32(static_cast<std::uint32_t>(i) * 4)}, std::nullopt);
  for (int i = 0; i < 2 * kCalls; ++i) same("host", {i32(static_cast<std::uint32_t>(i))}, std::nullopt);
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  jit::tier_up_set_memory_cap(std::uint64_t{1} << 30);
  const jit::ModuleCode* code = tier_up_code_of(*module_, kUnmetered);
  ASSERT_NE(code, nullptr);
  for (const std::uint32_t f : {kLoad, kHost}) {
    EXPECT_FALSE(has_machine_code(*module_, kUnmetered, f)) << f;
    EXPECT_NE(code->reasons[f].find("at or over the tier-up memory cap of 1 bytes"), std::string::npos)
        << f << ": " << code->reasons[f];
  }
  same("load", {i32(8)}, std::nullopt);
  same("host", {i32(7)}, std::nullopt);
}

// Tier-up never compiles on more threads than asked: one by default, then three; jobs of several
// modules, each compiled with the interpreter's outcomes.
TEST_F(TierUp, NeverMoreCompileThreadsThanAsked) {
  const auto make_hot = [this](std::size_t modules) {
    std::vector<std::shared_ptr<const CompiledModule>> kept;
    for (std::size_t k = 0; k < modules; ++k) {
      kept.push_back(jit_testing::compile_wat(kWat));
      module_ = kept.back();
      same("sum", {i32(3 * kCalls)}, std::nullopt);
    }
    EXPECT_TRUE(jit::tier_up_wait_idle(120'000));
    for (const auto& m : kept) EXPECT_TRUE(has_machine_code(*m, kUnmetered, kSq));
  };
  make_hot(3);
  EXPECT_EQ(jit::tier_up_peak_threads(), 1U);
  EXPECT_EQ(jit::tier_up_threads_started(), 1U);
  jit::tier_up_set_threads(3);
  make_hot(6);
  jit::tier_up_set_threads(1);
  EXPECT_LE(jit::tier_up_peak_threads(), 3U);
  EXPECT_GE(jit::tier_up_threads_started(), 1U);
  EXPECT_LE(jit::tier_up_threads_started(), 3U);
}

}  // namespace
}  // namespace sprawling::wasm
