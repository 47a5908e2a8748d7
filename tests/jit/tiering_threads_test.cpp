// Tier-up (src/wasm/jit/tiering.cpp) from several threads at once: stores on one shared module
// counting the same functions while the background thread compiles and publishes them, and
// modules dropped by their threads with compilations queued or running. Label `threads`: run
// under ThreadSanitizer by scripts/check tsan.
#include "jit/tier_fixture.hpp"
#include "wasm/jit/jit.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace sprawling::wasm {
namespace {

using jit_testing::Outcome;
using jit_testing::run;

constexpr const char* kWat = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (memory 1)
  (func $sq (param i32) (result i32) (i32.mul (local.get 0) (local.get 0)))
  (func $step (param i32) (result i32) (call $add1 (call $sq (local.get 0))))
  (func (export "sum") (param $n i32) (result i32)
    (local $i i32) (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i32.add (local.get $s) (call $step (local.get $i))))
        (i32.store (i32.and (local.get $i) (i32.const 1023)) (local.get $s))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $s))
))";

constexpr int kThreads = 4;

Value i32(std::uint32_t v) {
  return Value{ValType::I32, v, 0};
}

class TierUpThreads : public ::testing::Test {
 protected:
  void SetUp() override { jit::tier_up_set_calls(4); }
  void TearDown() override {
    EXPECT_TRUE(jit::tier_up_wait_idle(120'000));
    jit::tier_up_set_calls(20000);
  }
};

TEST_F(TierUpThreads, StoresOnOneModuleGetTheInterpretersOutcomesWhileItsFunctionsArePublished) {
  auto module = jit_testing::compile_wat(kWat);
  ASSERT_NE(module, nullptr);
  const Outcome metered = run(module, Tier::Interpret, "sum", {i32(300)}, 10'000'000);
  const Outcome unmetered = run(module, Tier::Interpret, "sum", {i32(300)}, std::nullopt);
  const Outcome short_of_fuel = run(module, Tier::Interpret, "sum", {i32(300)}, metered.fuel / 2);
  ASSERT_EQ(short_of_fuel.trap, TrapKind::OutOfFuel);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(run(module, Tier::Auto, "sum", {i32(300)}, 10'000'000), metered);
        EXPECT_EQ(run(module, Tier::Auto, "sum", {i32(300)}, std::nullopt), unmetered);
        EXPECT_EQ(run(module, Tier::Auto, "sum", {i32(300)}, metered.fuel / 2), short_of_fuel);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  // By now both variants of sq and step are machine code: once more from it.
  EXPECT_EQ(run(module, Tier::Auto, "sum", {i32(300)}, 10'000'000), metered);
  EXPECT_EQ(run(module, Tier::Auto, "sum", {i32(300)}, std::nullopt), unmetered);
}

TEST_F(TierUpThreads, ModulesDroppedByTheirThreadsWhileCompilingAreFreed) {
  std::vector<std::weak_ptr<const CompiledModule>> dropped(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&dropped, t] {
      auto module = jit_testing::compile_wat(kWat);
      ASSERT_NE(module, nullptr);
      EXPECT_EQ(run(module, Tier::Auto, "sum", {i32(50)}, std::nullopt).trap, TrapKind::None);
      dropped[static_cast<std::size_t>(t)] = module;
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
  for (const auto& w : dropped) EXPECT_TRUE(w.expired());
}

}  // namespace
}  // namespace sprawling::wasm
