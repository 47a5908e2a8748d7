// Exception handling on the compiled tier (docs/compiled-tier.md, "Exceptions"): throw, throw_ref,
// try_table with each kind of clause and the legacy try/catch/catch_all/delegate/rethrow compile,
// and give the interpreter's results, traps (kind, function, offset) and fuel at every budget,
// with exceptions crossing compiled and interpreted frames in both directions.
#include "jit/tier_fixture.hpp"
#include "wasm/jit/jit.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm {
namespace {

using jit_testing::compile_wat;
using jit_testing::expect_all_compiled;
using jit_testing::kept_interpreted;
using jit_testing::Outcome;
using jit_testing::run;
using jit_testing::tiers_agree;

// Every exception instruction, each in a function of its own. $thrower's argument picks what
// leaves it: 0 a value, 1 $e, 2 $e2, 3 $empty, 4 a trap, 5 $v (a v128 payload).
constexpr std::string_view kEh = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (tag $e (param i32))
  (tag $e2 (param i64 f64))
  (tag $empty)
  (tag $v (param i32 v128))
  (type $ii (func (param i32) (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) $thrower $add1)
  (elem declare func $thrower)
  (func $thrower (param i32) (result i32)
    (if (i32.eq (local.get 0) (i32.const 1)) (then (throw $e (i32.add (local.get 0) (i32.const 100)))))
    (if (i32.eq (local.get 0) (i32.const 2)) (then (throw $e2 (i64.const 7) (f64.const 2.5))))
    (if (i32.eq (local.get 0) (i32.const 3)) (then (throw $empty)))
    (if (i32.eq (local.get 0) (i32.const 4)) (then (unreachable)))
    (if (i32.eq (local.get 0) (i32.const 5)) (then (throw $v (i32.const 9) (i32x4.splat (local.get 0)))))
    (i32.const 5))
  ;; try_table: catch with values of one and two slots, catch_all, clauses tested in order
  (func (export "catch") (param i32) (result i32)
    block $h_e (result i32)
      block $h_e2 (result i64 f64)
        block $h_all
          try_table (result i32) (catch $e $h_e) (catch $e2 $h_e2) (catch_all $h_all)
            local.get 0
            call $thrower
          end
          return
        end
        i32.const -1
        return
      end
      drop
      i32.wrap_i64
      i32.const 50
      i32.add
    end
    i32.const 1000
    i32.add)
  ;; catch_ref: the values and the exnref
  (func (export "catch_ref") (param i32) (result i32)
    block $h (result i32 exnref)
      try_table (result i32) (catch_ref $e $h)
        local.get 0
        call $thrower
      end
      return
    end
    ref.is_null
    i32.const 10
    i32.mul
    i32.add)
  ;; catch_all_ref, then throw_ref to an outer handler of the same function
  (func (export "rethrow") (param i32) (result i32)
    (local $x exnref)
    block $outer (result i32)
      try_table (result i32) (catch $e $outer)
        block $h (result exnref)
          try_table (result i32) (catch_all_ref $h)
            local.get 0
            call $thrower
          end
          return
        end
        local.set $x
        local.get $x
        throw_ref
      end
      return
    end
    i32.const 7
    i32.add)
  ;; throw and catch in one function, inside a loop (the pad lies before the throw)
  (func (export "loop") (param i32) (result i32)
    (local $i i32) (local $sum i32)
    loop $l
      block $h (result i32)
        try_table (catch $e $h)
          local.get $i
          throw $e
        end
        unreachable
      end
      local.get $sum
      i32.add
      local.set $sum
      local.get $i
      i32.const 1
      i32.add
      local.tee $i
      local.get 0
      i32.lt_u
      br_if $l
    end
    local.get $sum)
  ;; a v128 and an i32 as the values (three slots)
  (func (export "vec") (param i32) (result i32)
    block $h (result i32 v128)
      try_table (result i32) (catch $v $h)
        local.get 0
        call $thrower
      end
      return
    end
    i32x4.extract_lane 3
    i32.const 100
    i32.mul
    i32.add)
  ;; throw_ref of a null reference traps
  (func (export "null_ref") (param i32) (result i32)
    block $h
      try_table (catch_all $h)
        (if (local.get 0) (then (throw_ref (ref.null exn))))
      end
      i32.const 1
      return
    end
    i32.const 2)
  ;; call_indirect, call_ref and a host call inside a region
  (func (export "indirect") (param i32) (result i32)
    block $h (result i32)
      try_table (result i32) (catch $e $h)
        (call_indirect (type $ii) (local.get 0) (i32.div_u (local.get 0) (i32.const 100)))
      end
      return
    end
    i32.const 3
    i32.mul)
  (func (export "call_ref") (param i32) (result i32)
    block $h (result i32)
      try_table (result i32) (catch $e $h)
        (call_ref $ii (local.get 0) (ref.func $thrower))
      end
      return
    end
    i32.const 4
    i32.mul)
  ;; a tail call inside a region: the callee replaces this frame, its exception goes to the caller
  (func (export "tail") (param i32) (result i32)
    block $h
      try_table (catch_all $h)
        local.get 0
        return_call $thrower
      end
    end
    i32.const -9)
  ;; legacy try: catch by tag in order, catch_all
  (func (export "legacy") (param i32) (result i32)
    try (result i32)
      local.get 0
      call $thrower
    catch $e
      i32.const 20
      i32.add
    catch $e2
      drop
      i32.wrap_i64
    catch_all
      i32.const -2
    end)
  ;; legacy rethrow from a catch_all to the try around it
  (func (export "legacy_rethrow") (param i32) (result i32)
    try (result i32)
      try (result i32)
        local.get 0
        call $thrower
      catch_all
        rethrow 0
      end
    catch $e
      i32.const 30
      i32.add
    end)
  ;; delegate to the try around, and delegate to the caller
  (func (export "delegate") (param i32) (result i32)
    try (result i32)
      try (result i32)
        local.get 0
        call $thrower
      delegate 0
    catch $e
      i32.const 40
      i32.add
    end)
  (func (export "delegate_out") (param i32) (result i32)
    try (result i32)
      try (result i32)
        local.get 0
        call $thrower
      delegate 1
    catch_all
      i32.const -3
    end)
  ;; a throw in a legacy try's body, caught by the same try
  (func (export "legacy_direct") (param i32) (result i32)
    try (result i32)
      (if (local.get 0) (then (throw $e (local.get 0))))
      i32.const 8
    catch $e
      i32.const 60
      i32.add
    end)
))";

const std::vector<std::string_view> kEhExports = {"catch",    "catch_ref", "rethrow",        "loop",
                                                  "vec",      "null_ref",  "indirect",       "call_ref",
                                                  "tail",     "legacy",    "legacy_rethrow", "delegate",
                                                  "delegate_out", "legacy_direct"};

TEST(CompilerEh, EveryExceptionInstructionCompiles) {
  const auto module = compile_wat(kEh);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
}

TEST(CompilerEh, EveryInstructionAgreesWithTheInterpreterAtEveryBudget) {
  const auto module = compile_wat(kEh);
  ASSERT_NE(module, nullptr);
  const std::vector<std::uint32_t> args = {0, 1, 2, 3, 4, 5, 101};
  for (std::string_view name : kEhExports) {
    for (std::uint32_t arg : args) {
      const std::uint32_t a = name == "loop" ? arg + 1 : arg;
      tiers_agree(module, name, Value::i32(a), std::nullopt);
      const Outcome full = run(module, Tier::Interpret, name, {Value::i32(a)}, std::uint64_t{1} << 30);
      for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
        tiers_agree(module, name, Value::i32(a), budget);
        if (HasFailure()) return;
      }
    }
  }
  // What each one does (the interpreter's answers, which the compiled tier matched above).
  auto result = [&](std::string_view name, std::uint32_t arg) {
    return run(module, Tier::Compile, name, {Value::i32(arg)}, std::nullopt);
  };
  EXPECT_EQ(result("catch", 0).results.at(0).bits, 5u);
  EXPECT_EQ(result("catch", 1).results.at(0).bits, 1101u);
  EXPECT_EQ(result("catch", 2).results.at(0).bits, 1057u);
  EXPECT_EQ(result("catch", 3).results.at(0).bits, 0xFFFFFFFFu);
  EXPECT_EQ(result("catch", 4).trap, TrapKind::Unreachable);
  EXPECT_EQ(result("catch_ref", 1).results.at(0).bits, 101u);
  EXPECT_EQ(result("rethrow", 1).results.at(0).bits, 108u);
  const Outcome out = result("rethrow", 2);  // rethrown, uncaught: located at the throw_ref
  EXPECT_EQ(out.trap, TrapKind::UncaughtException);
  EXPECT_EQ(out.func_index, 4u);
  EXPECT_EQ(result("loop", 10).results.at(0).bits, 45u);
  EXPECT_EQ(result("vec", 5).results.at(0).bits, 509u);
  EXPECT_EQ(result("null_ref", 1).trap, TrapKind::NullExceptionReference);
  EXPECT_EQ(result("null_ref", 0).results.at(0).bits, 1u);
  EXPECT_EQ(result("indirect", 1).results.at(0).bits, 303u);
  EXPECT_EQ(result("indirect", 101).results.at(0).bits, 102u);  // the host function
  EXPECT_EQ(result("indirect", 201).trap, TrapKind::UndefinedElement);
  EXPECT_EQ(result("call_ref", 1).results.at(0).bits, 404u);
  EXPECT_EQ(result("tail", 1).trap, TrapKind::UncaughtException);
  EXPECT_EQ(result("tail", 1).func_index, 1u);  // at $thrower's throw
  EXPECT_EQ(result("legacy", 1).results.at(0).bits, 121u);
  EXPECT_EQ(result("legacy", 2).results.at(0).bits, 7u);
  EXPECT_EQ(result("legacy", 3).results.at(0).bits, 0xFFFFFFFEu);
  EXPECT_EQ(result("legacy_rethrow", 1).results.at(0).bits, 131u);
  EXPECT_EQ(result("legacy_rethrow", 2).trap, TrapKind::UncaughtException);
  EXPECT_EQ(result("delegate", 1).results.at(0).bits, 141u);
  EXPECT_EQ(result("delegate_out", 1).trap, TrapKind::UncaughtException);
  EXPECT_EQ(result("delegate_out", 0).results.at(0).bits, 5u);
  EXPECT_EQ(result("legacy_direct", 3).results.at(0).bits, 63u);
}

// The same module from the code cache and by tier-up is checked in compiler_test.cpp
// (CompilerExceptions.*), with the other ways code is made.

// Exceptions crossing frames of both tiers: $hop_c is machine code, $hop_i stays interpreted
// (kept_interpreted); each hop calls the next of the tier the mask's bit names, the last throws.
// $hop_c has a handler for another tag (not taken); $hop_i catches everything, counts it and
// rethrows. The top is compiled ("chain") or interpreted ("chain_i"); "uncaught" has no handler.
std::string chain_module() {
  const std::string next = R"(
    (if (result i32) (i32.and (local.get $mask) (i32.shl (i32.const 1) (local.get $n)))
      (then (call $hop_i (i32.sub (local.get $n) (i32.const 1)) (local.get $mask)))
      (else (call $hop_c (i32.sub (local.get $n) (i32.const 1)) (local.get $mask))))";
  return R"((module
  (tag $e (param i32))
  (tag $other)
  (global $caught (mut i32) (i32.const 0))
  (func $hop_c (param $n i32) (param $mask i32) (result i32)
    (if (i32.eqz (local.get $n)) (then (throw $e (local.get $mask))))
    (block $h
      (try_table (catch $other $h)
        (return (i32.add (i32.const 1) )" +
         next + R"()))))
    (i32.const -100))
  (func $hop_i (param $n i32) (param $mask i32) (result i32)
    )" + kept_interpreted() +
         R"(
    (if (i32.eqz (local.get $n)) (then (throw $e (local.get $mask))))
    (block $h (result exnref)
      (try_table (catch_all_ref $h)
        (return (i32.add (i32.const 2) )" +
         next + R"())))
      (unreachable))
    (global.set $caught (i32.add (global.get $caught) (i32.const 1)))
    (throw_ref))
  (func (export "chain") (param $mask i32) (result i32)
    (block $h (result i32)
      (try_table (result i32) (catch $e $h)
        (call $hop_c (i32.const 12) (local.get $mask))))
    (i32.add (i32.mul (global.get $caught) (i32.const 65536))))
  (func (export "chain_i") (param $mask i32) (result i32)
    )" + kept_interpreted() +
         R"(
    (block $h (result i32)
      (try_table (result i32) (catch $e $h)
        (call $hop_c (i32.const 12) (local.get $mask))))
    (i32.add (i32.mul (global.get $caught) (i32.const 65536))))
  (func (export "uncaught") (param $mask i32) (result i32)
    (call $hop_c (i32.const 12) (local.get $mask)))
))";
}

TEST(CompilerEh, ExceptionsCrossCompiledAndInterpretedFrames) {
  const auto module = compile_wat(chain_module());
  ASSERT_NE(module, nullptr);
  for (int variant : {kUnmetered, kMetered}) {
    const jit::ModuleCode& code = module->impl().jit(variant);
    ASSERT_EQ(code.reasons.size(), 5u);
    EXPECT_EQ(code.reasons[0], "");
    EXPECT_NE(code.reasons[1].find("over the compile budget"), std::string::npos) << code.reasons[1];
    EXPECT_EQ(code.reasons[2], "");
    EXPECT_NE(code.reasons[3].find("over the compile budget"), std::string::npos) << code.reasons[3];
    EXPECT_EQ(code.reasons[4], "");
  }
  const std::vector<std::uint32_t> masks = {0, 0x1FFE, 0x5554, 0x2AAA, 0x1234, 0x0F0E, 2, 0x1000};
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    for (std::uint32_t mask : masks) {
      const Outcome c = tiers_agree(module, "chain", Value::i32(mask), fuel);
      EXPECT_EQ(c.results.at(0).bits, mask + (static_cast<std::uint32_t>(__builtin_popcount(mask & 0x1FFC)) << 16))
          << mask;
      tiers_agree(module, "chain_i", Value::i32(mask), fuel);
      const Outcome u = tiers_agree(module, "uncaught", Value::i32(mask), fuel);
      EXPECT_EQ(u.trap, TrapKind::UncaughtException) << mask;
      // Located at the throw, or at the rethrow of the outermost interpreted hop.
      EXPECT_EQ(u.func_index, (mask & 0x1FFE) == 0 ? 0u : 1u) << mask;
    }
  }
  for (std::uint32_t mask : {0x5554u, 0x2AAAu}) {
    const Outcome full = run(module, Tier::Interpret, "chain", {Value::i32(mask)}, std::uint64_t{1} << 30);
    ASSERT_EQ(full.trap, TrapKind::None);
    for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
      tiers_agree(module, "chain", Value::i32(mask), budget);
      tiers_agree(module, "uncaught", Value::i32(mask), budget);
      if (HasFailure()) return;
    }
  }
}

// An exception thrown through 1,000 compiled frames and caught at the top; then through 1,000
// compiled frames that each catch it, count it and rethrow it; and the same past the call depth
// limit, where the call that cannot start traps (a trap is no exception: nobody catches it).
constexpr std::string_view kDeep = R"((module
  (tag $e (param i32))
  (global $caught (mut i32) (i32.const 0))
  (func $down (param $n i32) (result i32)
    (if (i32.eqz (local.get $n)) (then (throw $e (i32.const 77))))
    (i32.add (call $down (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))
  (func $relay (param $n i32) (result i32)
    (if (i32.eqz (local.get $n)) (then (throw $e (i32.const 1))))
    (block $h (result exnref)
      (try_table (catch_all_ref $h)
        (return (i32.add (call $relay (i32.sub (local.get $n) (i32.const 1))) (i32.const 1))))
      (unreachable))
    (global.set $caught (i32.add (global.get $caught) (i32.const 1)))
    (throw_ref))
  (func (export "deep") (param i32) (result i32)
    (block $h (result i32) (try_table (result i32) (catch $e $h) (call $down (local.get 0)))))
  (func (export "relay") (param i32) (result i32)
    (block $h (result i32) (try_table (result i32) (catch $e $h) (call $relay (local.get 0))))
    (i32.add (global.get $caught)))
))";

TEST(CompilerEh, AThrowThroughAThousandCompiledFramesEndsAsInTheInterpreter) {
  const auto module = compile_wat(kDeep);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    EXPECT_EQ(tiers_agree(module, "deep", Value::i32(1000), fuel).results.at(0).bits, 77u);
    EXPECT_EQ(tiers_agree(module, "relay", Value::i32(1000), fuel).results.at(0).bits, 1001u);
    StoreLimits shallow;
    shallow.max_call_depth = 500;
    for (std::string_view name : {"deep", "relay"}) {
      const Outcome want = run(module, Tier::Interpret, name, {Value::i32(1000)}, fuel, shallow);
      EXPECT_EQ(want.trap, TrapKind::CallStackExhausted) << name;
      EXPECT_EQ(run(module, Tier::Compile, name, {Value::i32(1000)}, fuel, shallow), want) << name;
    }
  }
  for (std::string_view name : {"deep", "relay"}) {
    const Outcome full = run(module, Tier::Interpret, name, {Value::i32(40)}, std::uint64_t{1} << 30);
    for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
      tiers_agree(module, name, Value::i32(40), budget);
      if (HasFailure()) return;
    }
  }
}

// An exception nobody catches ends the run as the same trap (kind, function, offset) and fuel,
// thrown by compiled code called from the host, through compiled and interpreted callers.
TEST(CompilerEh, AnUncaughtExceptionIsTheInterpretersTrap) {
  const auto module = compile_wat(R"((module
  (tag $e (param i32 i64))
  (func $t (export "throw") (param i32) (result i32)
    (if (local.get 0) (then (throw $e (local.get 0) (i64.const -1))))
    (i32.const 0))
  (func (export "via") (param i32) (result i32) (i32.add (call $t (local.get 0)) (i32.const 1)))
  (func (export "ref") (param i32) (result i32)
    (throw_ref (block $h (result exnref) (try_table (catch_all_ref $h) (drop (call $t (local.get 0)))) (ref.null exn))))
))");
  ASSERT_NE(module, nullptr);
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{100}}) {
    for (std::string_view name : {"throw", "via", "ref"}) {
      const Outcome o = tiers_agree(module, name, Value::i32(3), fuel);
      EXPECT_EQ(o.trap, TrapKind::UncaughtException) << name;
      EXPECT_EQ(o.func_index, name == "ref" ? 2u : 0u) << name;
    }
    EXPECT_EQ(tiers_agree(module, "ref", Value::i32(0), fuel).trap, TrapKind::NullExceptionReference);
  }
}

}  // namespace
}  // namespace sprawling::wasm
