// Exception handling end to end (exceptions.cpp, the interpreter's throw/unwind, the translator's
// handler regions): catching across frames, exnref and throw_ref, uncaught exceptions as traps at
// the host boundary, exact fuel, and the exception heap's collection and its bound.
#include "wasm/runtime/heap/exceptions.hpp"
#include "wasm/runtime/runtime.hpp"
#include "wasm/runtime/linker.hpp"
#include "wasm/runtime/store_impl.hpp"
#include "wasm/text/wat.hpp"

#include "wasm/engine_fixtures.hpp"

#include <gtest/gtest.h>

namespace sprawling::wasm {
namespace {

using testing::compile_text;
using testing::export_func;

constexpr std::string_view kModule = R"(
(module
  (import "env" "reenter" (func $reenter (param i32) (result i32)))
  (tag $e (export "e") (param i32))
  (tag $big (param i64 i64 i64 i64 i64 i64 i64 i64))
  (tag $empty)
  (global $kept (mut exnref) (ref.null exn))

  (func $thrower (export "thrower") (param $v i32) (result i32)
    (if (local.get $v) (then (throw $e (local.get $v))))
    (i32.const 100))

  ;; caught two frames down, the value arrives at the label
  (func (export "catch") (param $v i32) (result i32)
    (block $h (result i32)
      (try_table (result i32) (catch $e $h)
        (i32.add (call $thrower (local.get $v)) (i32.const 1)))))

  ;; catch_ref keeps the exception; throw_ref rethrows it, caught again outside
  (func (export "rethrow") (param $v i32) (result i32)
    (block $outer (result i32)
      (try_table (result i32) (catch $e $outer)
        (block $h (result i32 exnref)
          (try_table (result i32 exnref) (catch_ref $e $h)
            (drop (call $thrower (local.get $v)))
            (unreachable)))
        (throw_ref))))

  ;; catch_all of a tag the clause does not name
  (func (export "catch_all") (result i32)
    (block $h
      (try_table (catch $empty $h) (catch_all $h)
        (throw $e (i32.const 1))))
    (i32.const 7))

  (func (export "uncaught") (param $v i32) (result i32) (call $thrower (local.get $v)))

  ;; the fuel of a throw caught two frames up: entry 1, block 0, try_table 1, local.get 1,
  ;; call 1, callee entry 1, local.get 1, if 1, local.get 1, throw 1 = 9
  (func (export "fuel") (param $v i32) (result i32)
    (block $h (result i32)
      (try_table (result i32) (catch $e $h)
        (call $thrower (local.get $v)))))

  ;; n exceptions of 8 i64s thrown and caught in a loop; the first one is kept in a global
  ;; (catch_ref) and rethrown at the end: its values survive every collection
  (func (export "loop") (param $n i32) (result i64)
    (local $i i32) (local $x exnref)
    (block $done
      (loop $next
        (block $h (result i64 i64 i64 i64 i64 i64 i64 i64 exnref)
          (try_table (catch_ref $big $h)
            (throw $big (i64.extend_i32_u (local.get $i)) (i64.const 2) (i64.const 3) (i64.const 4)
                        (i64.const 5) (i64.const 6) (i64.const 7) (i64.const 8)))
          (unreachable))
        (local.set $x)
        (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop)
        (if (i32.eqz (local.get $i)) (then (global.set $kept (local.get $x))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $next (i32.lt_u (local.get $i) (local.get $n)))))
    (block $h (result i64 i64 i64 i64 i64 i64 i64 i64)
      (try_table (catch $big $h) (throw_ref (global.get $kept)))
      (unreachable))
    (drop) (drop) (drop) (drop) (drop) (drop) (i64.add))

  ;; exceptions kept alive in the frames of a recursion: the heap cannot collect them
  (func $hold (export "hold") (param $n i32) (result i32)
    (local $x exnref)
    (if (i32.eqz (local.get $n)) (then (return (i32.const 0))))
    (block $h (result i64 i64 i64 i64 i64 i64 i64 i64 exnref)
      (try_table (catch_ref $big $h)
        (throw $big (i64.const 1) (i64.const 2) (i64.const 3) (i64.const 4)
                    (i64.const 5) (i64.const 6) (i64.const 7) (i64.const 8)))
      (unreachable))
    (local.set $x)
    (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop)
    (i32.add (call $hold (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))

  (func (export "null") (throw_ref (ref.null exn)))

  ;; a host function between the throw and the catch: the exception stops at the host
  (func (export "through_host") (result i32)
    (block $h
      (try_table (result i32) (catch_all $h) (call $reenter (i32.const 5)))
      (return))
    (i32.const -1))
  (func (export "catch_none") (result i32) (i32.const 0))
)
)";

struct Reenter {
  Store* store = nullptr;
  FuncInst* target = nullptr;
  std::string seen;
};

HostStatus reenter(HostCall& call) {
  auto* r = static_cast<Reenter*>(call.context);
  auto result = r->store->invoke(r->target, {{Value::i32(static_cast<std::uint32_t>(call.args[0]))}});
  if (result) {
    call.results[0] = (*result)[0].bits;
    return HostStatus::Ok;
  }
  r->seen = result.error().message;
  call.trap_message = "host saw: " + result.error().message;
  return HostStatus::Trap;
}

class ExceptionsTest : public ::testing::Test {
 protected:
  void instantiate(StoreLimits limits) {
    module_ = compile_text(kModule);
    ASSERT_TRUE(module_);
    store_ = std::make_unique<Store>(limits);
    reenter_.store = store_.get();
    Linker linker;
    linker.define("env", "reenter",
                  store_->add_host_function(FuncType{{ValType::I32}, {ValType::I32}}, reenter, &reenter_, "reenter"));
    auto inst = store_->instantiate(module_, *linker.resolve(module_->module()));
    ASSERT_TRUE(inst.has_value()) << inst.error().message;
    instance_ = *inst;
    reenter_.target = export_func(*instance_, "thrower");
  }
  void SetUp() override { instantiate(StoreLimits{}); }
  std::expected<std::vector<Value>, Trap> call(std::string_view name, std::vector<Value> args = {}) {
    return store_->invoke(export_func(*instance_, name), args);
  }
  std::uint64_t result(std::string_view name, std::vector<Value> args = {}) {
    auto r = call(name, std::move(args));
    EXPECT_TRUE(r.has_value()) << name << ": " << (r ? "" : r.error().message);
    return r && !r->empty() ? (*r)[0].bits : ~std::uint64_t{0};
  }

  std::shared_ptr<const CompiledModule> module_;
  std::unique_ptr<Store> store_;
  Instance* instance_ = nullptr;
  Reenter reenter_;
};

TEST_F(ExceptionsTest, CaughtAcrossFramesWithItsValue) {
  EXPECT_EQ(result("catch", {Value::i32(0)}), 101u);  // no throw: the body's value
  EXPECT_EQ(result("catch", {Value::i32(42)}), 42u);  // the tag's value, at the label
  EXPECT_EQ(result("rethrow", {Value::i32(9)}), 9u);
  EXPECT_EQ(result("catch_all"), 7u);
}

TEST_F(ExceptionsTest, UncaughtExceptionIsATrapNamingTheTagAtTheThrow) {
  auto r = call("uncaught", {Value::i32(3)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::UncaughtException);
  EXPECT_EQ(r.error().message, "uncaught exception: tag 0 [i32]");
  EXPECT_EQ(r.error().func_index, 1u);  // $thrower, after the import
  // The store is usable afterwards, and nothing of the exception is pending.
  EXPECT_EQ(result("catch", {Value::i32(5)}), 5u);
  EXPECT_EQ(store_->impl().pending_exception, 0u);
  auto null = call("null");
  ASSERT_FALSE(null.has_value());
  EXPECT_EQ(null.error().kind, TrapKind::NullExceptionReference);
}

TEST_F(ExceptionsTest, ExceptionsDoNotUnwindThroughTheHost) {
  // thrower(5) throws inside the host's nested invoke: the host gets a trap, returns it as its
  // own; the catch_all around the host call does not see an exception, only the host's trap.
  auto r = call("through_host");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::Host);
  EXPECT_EQ(r.error().message, "host saw: uncaught exception: tag 0 [i32]");
  EXPECT_EQ(reenter_.seen, "uncaught exception: tag 0 [i32]");
}

TEST_F(ExceptionsTest, FuelIsWasmtimesOperatorCount) {
  store_->set_budget(ExecutionBudget{std::uint64_t{1} << 40, std::nullopt});
  EXPECT_EQ(result("fuel", {Value::i32(1)}), 1u);
  EXPECT_EQ(store_->fuel_consumed(), 9u);
  store_->set_budget(ExecutionBudget{std::uint64_t{1} << 40, std::nullopt});
  EXPECT_EQ(result("fuel", {Value::i32(0)}), 100u);  // no throw: the callee's if, i32.const 100: 8
  EXPECT_EQ(store_->fuel_consumed(), 8u);
  // Budgets at and around the figure: every run agrees with the unmetered result or runs out.
  for (std::uint64_t budget = 1; budget <= 10; ++budget) {
    store_->set_budget(ExecutionBudget{budget, std::nullopt});
    auto r = call("fuel", {Value::i32(1)});
    if (budget >= 9) {
      ASSERT_TRUE(r.has_value()) << budget;
      EXPECT_EQ((*r)[0].bits, 1u);
    } else if (!r) {
      EXPECT_EQ(r.error().kind, TrapKind::OutOfFuel) << budget;
    }
  }
}

TEST_F(ExceptionsTest, ThrowingInALoopReusesABoundedHeap) {
  // 200,000 exceptions of 8 i64s (about 20 MB if none were freed) in a store of a few MiB.
  instantiate(StoreLimits{.max_store_bytes = 4u << 20});
  EXPECT_EQ(result("loop", {Value::i32(200'000)}), 0u + 2u);  // the kept first exception: i = 0, then 2
  const GcHeap& heap = store_->impl().gc;
  EXPECT_GT(heap.collections(), 0u);
  EXPECT_LE(heap.charged_bytes(), 2 * GcHeap::kCollectEvery);
  EXPECT_LE(store_->store_bytes(), std::uint64_t{4} << 20);
}

TEST_F(ExceptionsTest, LiveExceptionsBeyondTheStoreLimitAreRefusedWithATrap) {
  instantiate(StoreLimits{.max_store_bytes = 1u << 20});
  EXPECT_EQ(result("hold", {Value::i32(100)}), 100u);
  auto r = call("hold", {Value::i32(19'000)});  // 19,000 live objects of ~100 bytes: over 1 MiB
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::ExceptionLimit) << r.error().message;
  // Once those frames are gone their exceptions can be collected: the store works again.
  EXPECT_EQ(result("loop", {Value::i32(50'000)}), 2u);
}

TEST(ExceptionsFeature, OffRefusesAModuleUsingExceptionsNamingTheUse) {
  auto bin = text::wat_to_binary("(module (tag $t) (func (throw $t)))");
  ASSERT_TRUE(bin.has_value());
  Features off;
  off.exceptions = false;
  // Without the feature the tag section is no section (2.0's binary format: malformed) ...
  auto m = compile(*bin, off);
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().kind, CompileError::Kind::Malformed);
  EXPECT_EQ(m.error().message, "malformed section id 13 (the tag section: exception handling is disabled)");
  // ... and an exnref or an exception instruction makes the module invalid, naming the first use.
  auto exnref = text::wat_to_binary("(module (func (param exnref)))");
  ASSERT_TRUE(exnref.has_value());
  auto e = compile(*exnref, off);
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().kind, CompileError::Kind::Invalid);
  EXPECT_EQ(e.error().message, "the value type at offset 13 uses exnref: exception handling is disabled (the exceptions feature is off)");
  auto plain = text::wat_to_binary("(module (func (result i32) (i32.const 1)))");
  EXPECT_TRUE(compile(*plain, off).has_value());
  EXPECT_FALSE(compile(*bin, Features::wasm2()).has_value());
}

}  // namespace
}  // namespace sprawling::wasm
