// The compiled tier's runtime side (src/wasm/jit/runtime_calls.cpp): calls that leave machine code
// (host functions calling back into the store, the interpreter when the native stack runs low)
// keep the interpreter's results, traps and fuel.
#include "jit/tier_fixture.hpp"
#include "wasm/jit/jit.hpp"

#include <gtest/gtest.h>

#include <pthread.h>

#include <mutex>

namespace sprawling::wasm {
namespace {

using jit_testing::compile_wat;
using jit_testing::MemoryCache;
using jit_testing::Outcome;
using jit_testing::run;

constexpr std::string_view kDeep = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (func $deep (export "deep") (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0)) (then (i32.const 0))
      (else (call $add1 (call $deep (i32.sub (local.get 0) (i32.const 1))))))))
)";

struct ThreadRun {
  std::shared_ptr<const CompiledModule> module;
  Tier tier;
  std::uint32_t n;
  std::optional<std::uint64_t> fuel;
  std::shared_ptr<CodeCacheStorage> cache;
  Outcome out;
};

// Runs on a thread with a 512 KiB stack: the compiled frames of a 20,000-deep recursion do not
// fit, so past the reserve the calls continue in the interpreter. With `cache`, the code is the
// whole module's from there, whose direct calls test only the limit the runtime sets.
Outcome run_on_small_stack(const std::shared_ptr<const CompiledModule>& module, Tier tier, std::uint32_t n,
                           std::optional<std::uint64_t> fuel, std::shared_ptr<CodeCacheStorage> cache = nullptr) {
  ThreadRun r{module, tier, n, fuel, std::move(cache), {}};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, std::size_t{512} << 10);
  pthread_t thread;
  const int rc = pthread_create(
      &thread, &attr,
      [](void* p) -> void* {
        auto* t = static_cast<ThreadRun*>(p);
        t->out = run(t->module, t->tier, "deep", {Value::i32(t->n)}, t->fuel, {}, t->cache);
        return nullptr;
      },
      &r);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(rc, 0);
  if (rc == 0) pthread_join(thread, nullptr);
  return r.out;
}

TEST(RuntimeCalls, LowNativeStackFallsBackToTheInterpreterWithTheSameOutcome) {
  auto module = compile_wat(kDeep);
  ASSERT_NE(module, nullptr);
  // The same module's code from the cache (a module keeps the code it first ran with).
  auto whole = compile_wat(kDeep);
  auto cache = std::make_shared<MemoryCache>();
  for (const bool metered : {false, true}) ASSERT_TRUE(precompile(*whole, metered, *cache).has_value());
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    for (std::uint32_t n : {100u, 15000u, 19999u, 20000u, 25000u}) {
      const Outcome want = run_on_small_stack(module, Tier::Interpret, n, fuel);
      EXPECT_EQ(want, run_on_small_stack(module, Tier::Compile, n, fuel)) << n;
      EXPECT_EQ(want, run_on_small_stack(whole, Tier::Compile, n, fuel, cache)) << n << " whole-module code";
    }
  }
  EXPECT_EQ(run_on_small_stack(module, Tier::Compile, 15000, std::nullopt).results.at(0).bits, 15000u);
  EXPECT_EQ(run_on_small_stack(module, Tier::Compile, 25000, std::nullopt).trap, TrapKind::CallStackExhausted);
  EXPECT_EQ(run_on_small_stack(whole, Tier::Compile, 15000, std::nullopt, cache).results.at(0).bits, 15000u);
  for (const int variant : {kUnmetered, kMetered}) {
    const std::lock_guard lock(whole->impl().jit_mutex);
    const jit::ModuleCode* code = whole->impl().jit_code[variant].get();
    ASSERT_NE(code, nullptr);
    EXPECT_TRUE(code->from_cache);
    EXPECT_GT(code->segment_bytes, 0u);
  }
}

// A host function called from machine code calls back into the store (as WASI never does, but an
// embedder may): the nested run starts above the host call's frame and shares the fuel counter.
constexpr std::string_view kReenter = R"((module
  (import "env" "back" (func $back (param i32) (result i32)))
  (func $inner (export "inner") (param i32) (result i32) (i32.mul (local.get 0) (i32.const 3)))
  (func (export "outer") (param i32) (result i32)
    (local $i i32) (local $acc i32)
    (loop $l
      (local.set $acc (i32.add (local.get $acc) (call $back (local.get $i))))
      (br_if $l (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get 0))))
    (local.get $acc)))
)";

struct Reenter {
  Store* store = nullptr;
  FuncInst* inner = nullptr;
};

HostStatus call_back(HostCall& call) {
  auto* r = static_cast<Reenter*>(call.context);
  auto res = r->store->invoke(r->inner, std::vector<Value>{Value::i32(static_cast<std::uint32_t>(call.args[0]))});
  if (!res) {
    call.trap_message = res.error().message;
    return HostStatus::Trap;
  }
  call.results[0] = (*res)[0].bits;
  return HostStatus::Ok;
}

Outcome run_reenter(const std::shared_ptr<const CompiledModule>& module, Tier tier, std::uint64_t fuel) {
  Store store;
  EXPECT_TRUE(store.set_tier(tier));
  Reenter r{&store, nullptr};
  FuncInst* back = store.add_host_function(FuncType{{ValType::I32}, {ValType::I32}}, call_back, &r, "back");
  store.set_budget({fuel, std::nullopt});
  auto inst = store.instantiate(module, std::vector<Extern>{back});
  EXPECT_TRUE(inst.has_value());
  if (!inst) return {};
  r.inner = std::get<FuncInst*>(*(*inst)->find_export("inner"));
  return jit_testing::outcome_of(
      store, store.invoke(std::get<FuncInst*>(*(*inst)->find_export("outer")), std::vector<Value>{Value::i32(50)}));
}

TEST(RuntimeCalls, HostCallbacksIntoTheStoreShareTheFuelCounter) {
  auto module = compile_wat(kReenter);
  ASSERT_NE(module, nullptr);
  const Outcome full = run_reenter(module, Tier::Interpret, 1u << 30);
  ASSERT_EQ(full.trap, TrapKind::None);
  EXPECT_EQ(full.results.at(0).bits, 3u * (49u * 50u / 2u));
  for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
    EXPECT_EQ(run_reenter(module, Tier::Interpret, budget), run_reenter(module, Tier::Compile, budget)) << budget;
    if (HasFailure()) return;
  }
}

// A host function ending with each HostStatus: the compiled tier's call helper reported every
// status but Ok and Trap as Exit, so a WASI call stopped by the deadline (or by its host work
// running out of fuel) ended the guest as if by proc_exit, and the guest ran on to Success.
HostStatus host_status(HostCall& call) {
  const auto status = static_cast<HostStatus>(call.args[0]);
  if (status == HostStatus::Trap) call.trap_message = "host says no";
  return status;
}

Outcome run_host_status(const std::shared_ptr<const CompiledModule>& module, Tier tier, HostStatus status) {
  Store store;
  EXPECT_TRUE(store.set_tier(tier));
  FuncInst* host = store.add_host_function(FuncType{{ValType::I32}, {}}, host_status, nullptr, "status");
  store.set_budget({std::uint64_t{1'000'000}, std::nullopt});
  auto inst = store.instantiate(module, std::vector<Extern>{host});
  EXPECT_TRUE(inst.has_value());
  if (!inst) return {};
  return jit_testing::outcome_of(
      store, store.invoke(std::get<FuncInst*>(*(*inst)->find_export("run")),
                          std::vector<Value>{Value::i32(static_cast<std::uint32_t>(status))}));
}

TEST(RuntimeCalls, EveryHostStatusEndsTheCallAsInTheInterpreter) {
  auto module = compile_wat(R"((module
    (import "env" "status" (func $status (param i32)))
    (func (export "run") (param i32) (result i32) (call $status (local.get 0)) (i32.const 7))))");
  ASSERT_NE(module, nullptr);
  for (const HostStatus status : {HostStatus::Ok, HostStatus::Trap, HostStatus::Exit, HostStatus::DeadlineExceeded,
                                  HostStatus::OutOfFuel}) {
    const Outcome interp = run_host_status(module, Tier::Interpret, status);
    EXPECT_EQ(interp.trap, host_trap_kind(status));
    EXPECT_EQ(run_host_status(module, Tier::Compile, status), interp) << static_cast<int>(status);
  }
}

// table.grow charges the store's account as in the interpreter: the compiled tier's helper
// resized the table without asking the account, so a guest could allocate past max_store_bytes
// (4 billion elements: std::bad_alloc, the host process gone).
TEST(RuntimeCalls, TableGrowIsRefusedPastTheStoreAccount) {
  auto module = compile_wat(R"((module
    (table 0 funcref)
    (func (export "grow") (result i32) (local $grown i32)
      (block $full
        (loop $more
          (br_if $full (i32.eq (table.grow 0 (ref.null func) (i32.const 100000)) (i32.const -1)))
          (local.set $grown (i32.add (local.get $grown) (i32.const 1)))
          (br $more)))
      (local.get $grown))))");
  ASSERT_NE(module, nullptr);
  const StoreLimits limits{.max_table_elements = UINT32_MAX, .max_store_bytes = 8 << 20};
  const Outcome interp = run(module, Tier::Interpret, "grow", {}, std::nullopt, limits);
  ASSERT_EQ(interp.trap, TrapKind::None);
  EXPECT_LT(interp.results.at(0).bits, 11u);  // 800 KB a grow, 8 MiB in all (less what instantiation took)
  EXPECT_EQ(run(module, Tier::Compile, "grow", {}, std::nullopt, limits), interp);
  EXPECT_EQ(run(module, Tier::Compile, "grow", {}, 100'000'000, limits),
            run(module, Tier::Interpret, "grow", {}, 100'000'000, limits));
}

}  // namespace
}  // namespace sprawling::wasm
