// Interpreter and fuel: exact consumed figures on hand-checked modules (Wasmtime's cost model),
// where exhaustion is detected, the deadline, and trap locations.
#include "wasm/engine_fixtures.hpp"
#include "wasm/runtime/linker.hpp"
#include "wasm/table64_grow_module.hpp"
#include "wasm/text/wat.hpp"

#include <bit>
#include <algorithm>
#include <chrono>
#include <memory>

namespace sprawling::wasm {
namespace {

using testing::compile_fixture;
using testing::export_func;

class FuelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = compile_fixture("fuel");
    ASSERT_TRUE(module_);
    Linker linker;
    linker.define("env", "host", store_.add_host_function(FuncType{}, testing::host_nop, nullptr, "host"));
    auto imports = linker.resolve(module_->module());
    ASSERT_TRUE(imports.has_value());
    auto inst = store_.instantiate(module_, *imports);
    ASSERT_TRUE(inst.has_value()) << inst.error().message;
    instance_ = *inst;
  }
  // Runs an export under `fuel` and returns the consumed figure, or the trap.
  std::expected<std::uint64_t, Trap> run(std::string_view name, std::vector<Value> args, std::uint64_t fuel) {
    store_.set_budget(ExecutionBudget{fuel, std::nullopt});
    auto r = store_.invoke(export_func(*instance_, name), args);
    if (!r) return std::unexpected(r.error());
    return store_.fuel_consumed();
  }

  Store store_;
  std::shared_ptr<const CompiledModule> module_;
  Instance* instance_ = nullptr;
};

constexpr std::uint64_t kPlenty = 1'000'000;

TEST_F(FuelTest, EmptyFunctionCostsItsEntry) {
  EXPECT_EQ(run("empty", {}, kPlenty).value(), 1u);
}

TEST_F(FuelTest, DropIsFreeConstIsNot) {
  EXPECT_EQ(run("const_drop", {}, kPlenty).value(), 2u);
}

TEST_F(FuelTest, LoopOfNIterations) {
  EXPECT_EQ(run("countdown", {Value::i32(1)}, kPlenty).value(), 6u);
  EXPECT_EQ(run("countdown", {Value::i32(10)}, kPlenty).value(), 51u);
  EXPECT_EQ(run("countdown", {Value::i32(1000)}, kPlenty).value(), 5001u);
}

TEST_F(FuelTest, CallChainChargesEveryEntryAndCall) {
  EXPECT_EQ(run("chain", {}, kPlenty).value(), 5u);
}

TEST_F(FuelTest, HostFunctionCostsOnlyTheCall) {
  EXPECT_EQ(run("call_host", {}, kPlenty).value(), 2u);
}

TEST_F(FuelTest, MemoryFillChargesPerByte) {
  EXPECT_EQ(run("fill", {Value::i32(0), Value::i32(0)}, kPlenty).value(), 5u);
  EXPECT_EQ(run("fill", {Value::i32(0), Value::i32(1000)}, kPlenty).value(), 1005u);
  EXPECT_EQ(run("fill", {Value::i32(100), Value::i32(65436)}, kPlenty).value(), 65441u);
}

TEST_F(FuelTest, BranchesChargeOnlyThePathTaken) {
  EXPECT_EQ(run("branches", {Value::i32(5)}, kPlenty).value(), 4u);
  EXPECT_EQ(run("branches", {Value::i32(0)}, kPlenty).value(), 7u);
}

TEST_F(FuelTest, EntryCheckSeesTheEntryCharge) {
  // Budget 1: the entry check already sees 1 spent (Wasmtime traps here too).
  auto r = run("empty", {}, 1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::OutOfFuel);
  EXPECT_EQ(r.error().message, "all fuel consumed by WebAssembly");
  EXPECT_EQ(run("empty", {}, 2).value(), 1u);
  auto zero = run("empty", {}, 0);
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().kind, TrapKind::OutOfFuel);
}

TEST_F(FuelTest, ExhaustionAtTheFirstLoopHeaderThatSeesTheBudgetSpent) {
  // countdown(10): the header check of iteration k sees 1 + 5k spent, k = 0..9.
  // Budget 46 is spent at k = 9; budget 47 never is, so the run finishes overdrawn and reports
  // the exact 51 that ran (DESIGN: a finished run's figure is exact; Wasmtime's get_fuel could
  // only say that 0 is left).
  auto r = run("countdown", {Value::i32(10)}, 46);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::OutOfFuel);
  EXPECT_EQ(store_.fuel_consumed(), 46u);
  EXPECT_EQ(run("countdown", {Value::i32(10)}, 47).value(), 51u);
  EXPECT_EQ(run("countdown", {Value::i32(10)}, 51).value(), 51u);
  EXPECT_EQ(run("countdown", {Value::i32(10)}, 52).value(), 51u);
}

TEST_F(FuelTest, BulkOperationChecksItsCharge) {
  // In bounds: 5 + 100 > 50 is seen before the fill runs.
  auto r = run("fill", {Value::i32(0), Value::i32(100)}, 50);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::OutOfFuel);
  EXPECT_EQ(store_.fuel_consumed(), 50u);  // saturated at the budget, never past it
  // Out of bounds: the bounds check traps first and nothing is charged for the bytes.
  auto oob = run("fill", {Value::i32(65500), Value::i32(100)}, 50);
  ASSERT_FALSE(oob.has_value());
  EXPECT_EQ(oob.error().kind, TrapKind::OutOfBoundsMemoryAccess);
}

TEST_F(FuelTest, RecursionChargesTheCodeAfterACallWhenItReturns) {
  EXPECT_EQ(run("down", {Value::i32(0)}, kPlenty).value(), 5u);
  EXPECT_EQ(run("down", {Value::i32(1000)}, kPlenty).value(), 10005u);
}

TEST_F(FuelTest, RecursionEntryChecksSeeOnlyWhatRan) {
  // Finding F4: the code after each call was charged ahead, by the call, so the entry check of
  // level k saw 10k + 1 instead of the 8k + 1 that had run, and down(1000) ran out of fuel at
  // level 801. As in Wasmtime, the deepest check sees 8001: budget 8001 stops there, 8002 lets
  // the run finish, overdrawn, with the exact 10005.
  auto stop = run("down", {Value::i32(1000)}, 8001);
  ASSERT_FALSE(stop.has_value());
  EXPECT_EQ(stop.error().kind, TrapKind::OutOfFuel);
  EXPECT_EQ(store_.fuel_consumed(), 8001u);
  EXPECT_EQ(run("down", {Value::i32(1000)}, 8002).value(), 10005u);
}

// A table64 table.grow of 2^63 elements or more charges the most fuel a counter holds. With the
// counter already overdrawn by its segment's charge (ten instructions on a budget of 3), that
// charge wrapped the counter to a balance near 2^63: the run went on and reported 2^63 + 41
// consumed on a budget of 17 (a differential campaign's finding). It runs out of fuel instead.
TEST(FuelTrap, TableGrowOfTwoToTheSixtyThreeRunsOutOfFuelFromAnOverdrawnCounter) {
  auto module = testing::compile_text(fuel_testing::kTable64GrowModule);
  ASSERT_NE(module, nullptr);
  for (const std::uint64_t n : {std::uint64_t{1} << 63, ~std::uint64_t{0}}) {
    for (const std::uint64_t fuel : {3u, 17u, 1000u}) {
      Store store;
      store.set_budget(ExecutionBudget{fuel, std::nullopt});
      auto inst = store.instantiate(module, {});
      ASSERT_TRUE(inst.has_value());
      auto r = store.invoke(export_func(**inst, "grow"), std::vector<Value>{Value::i64(n)});
      ASSERT_FALSE(r.has_value()) << n << " on " << fuel;
      EXPECT_EQ(r.error().kind, TrapKind::OutOfFuel) << n << " on " << fuel;
      EXPECT_EQ(store.fuel_consumed(), fuel);
    }
  }
}

TEST(FuelTrap, CallStackExhaustedReportsOnlyWhatRan) {
  // Finding F4: after the trap, 20,000 charged-ahead post-call segments that never ran were
  // reported as consumed (200,008 on a budget of 200,000, fuzz_run). Depth 100: the entry level
  // and 100 nested ones each run 8 before their call; the 102nd call never starts.
  auto module = compile_fixture("fuel");
  Store store(StoreLimits{.max_call_depth = 100});
  Linker linker;
  linker.define("env", "host", store.add_host_function(FuncType{}, testing::host_nop, nullptr, "host"));
  auto inst = store.instantiate(module, *linker.resolve(module->module()));
  ASSERT_TRUE(inst.has_value());
  store.set_budget(ExecutionBudget{1'000'000, std::nullopt});
  auto r = store.invoke(export_func(**inst, "down"), std::vector{Value::i32(1000)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::CallStackExhausted);
  EXPECT_EQ(store.fuel_consumed(), 101u * 8u);
  // The stack check precedes the entry's fuel check (as Wasmtime's prologue): with just what ran
  // + 1 the call that cannot start is still CallStackExhausted, not OutOfFuel (fuzz_diff's
  // budget = consumed + 1 rerun found them in the other order).
  store.set_budget(ExecutionBudget{101u * 8u + 1u, std::nullopt});
  auto tight = store.invoke(export_func(**inst, "down"), std::vector{Value::i32(1000)});
  ASSERT_FALSE(tight.has_value());
  EXPECT_EQ(tight.error().kind, TrapKind::CallStackExhausted);
  EXPECT_EQ(store.fuel_consumed(), 101u * 8u);
}

TEST_F(FuelTest, UnmeteredRunsReportNothing) {
  store_.set_budget({});
  ASSERT_TRUE(store_.invoke(export_func(*instance_, "countdown"), std::vector{Value::i32(10)}).has_value());
  EXPECT_EQ(store_.fuel_consumed(), 0u);
}

TEST_F(FuelTest, BudgetSpansSeveralInvocations) {
  store_.set_budget(ExecutionBudget{kPlenty, std::nullopt});
  ASSERT_TRUE(store_.invoke(export_func(*instance_, "empty"), {}).has_value());
  ASSERT_TRUE(store_.invoke(export_func(*instance_, "chain"), {}).has_value());
  EXPECT_EQ(store_.fuel_consumed(), 6u);
}

TEST(Deadline, PastDeadlineStopsALoopWithoutFuelBudget) {
  auto module = compile_fixture("limits");
  Store store;
  auto inst = store.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  store.set_budget(ExecutionBudget{std::nullopt, std::chrono::steady_clock::now() + std::chrono::milliseconds(20)});
  auto r = store.invoke(export_func(**inst, "spin"), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::DeadlineExceeded);
  EXPECT_EQ(r.error().message, "deadline exceeded");
}

TEST(Deadline, FuelStillExactUnderADeadline) {
  auto module = compile_fixture("fuel");
  Store store;
  Linker linker;
  linker.define("env", "host", store.add_host_function(FuncType{}, testing::host_nop, nullptr, "host"));
  auto inst = store.instantiate(module, *linker.resolve(module->module()));
  ASSERT_TRUE(inst.has_value());
  store.set_budget(ExecutionBudget{std::nullopt, std::chrono::steady_clock::now() + std::chrono::hours(1)});
  ASSERT_TRUE(store.invoke(export_func(**inst, "countdown"), std::vector{Value::i32(100000)}).has_value());
  EXPECT_EQ(store.fuel_consumed(), 500001u);
  store.set_budget(ExecutionBudget{300000, std::chrono::steady_clock::now() + std::chrono::hours(1)});
  auto r = store.invoke(export_func(**inst, "countdown"), std::vector{Value::i32(100000)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::OutOfFuel);
}

TEST(Execution, TrapCarriesFunctionNameAndOffset) {
  auto module = compile_fixture("calls");
  Store store;
  Linker linker;
  for (const char* name : {"trap", "exit"})
    linker.define("env", name, store.add_host_function(FuncType{{ValType::I32}, {}}, testing::host_nop, nullptr, name));
  linker.define("env", "add",
                store.add_host_function(FuncType{{ValType::I32, ValType::I32}, {ValType::I32}}, testing::host_nop,
                                        nullptr, "add"));
  auto inst = store.instantiate(module, *linker.resolve(module->module()));
  ASSERT_TRUE(inst.has_value());
  auto r = store.invoke(export_func(**inst, "div"), std::vector{Value::i32(1), Value::i32(0)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::IntegerDivideByZero);
  EXPECT_EQ(r.error().message, "integer divide by zero");
  ASSERT_TRUE(r.error().func_index.has_value());
  const Module& m = module->module();
  const std::uint32_t div_index = *r.error().func_index;
  EXPECT_GE(div_index, m.imported_funcs);
  const FunctionBody& body = m.code[div_index - m.imported_funcs];
  // local.get 0 (2 bytes), local.get 1 (2 bytes), then i32.div_s.
  EXPECT_EQ(r.error().offset, body.code_offset + 4);
  EXPECT_EQ(m.bytes[r.error().offset], 0x6D);

  auto fib = store.invoke(export_func(**inst, "fib"), std::vector{Value::i32(20)});
  ASSERT_TRUE(fib.has_value());
  EXPECT_EQ((*fib)[0].bits, 6765u);
}

// ---- fixed-width SIMD (fixtures/simd.wat): a v128 takes two slots beside one-slot values.
Value v128(std::uint64_t lo, std::uint64_t hi) {
  return Value{ValType::V128, lo, hi};
}
Value i32x4(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  return v128(a | (std::uint64_t{b} << 32), c | (std::uint64_t{d} << 32));
}
Value i64x2(std::uint64_t a, std::uint64_t b) {
  return v128(a, b);
}

class SimdTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    module_ = compile_fixture("simd");
    ASSERT_TRUE(module_);
    // Both code variants: the unmetered one, and the metered one under an unbounded budget.
    if (GetParam()) store_.set_budget(ExecutionBudget{std::uint64_t{1} << 60, std::nullopt});
    auto inst = store_.instantiate(module_, {});
    ASSERT_TRUE(inst.has_value()) << inst.error().message;
    instance_ = *inst;
  }
  std::expected<std::vector<Value>, Trap> call(std::string_view name, std::vector<Value> args) {
    return store_.invoke(export_func(*instance_, name), args);
  }
  std::vector<Value> ok(std::string_view name, std::vector<Value> args) {
    auto r = call(name, std::move(args));
    EXPECT_TRUE(r.has_value()) << name << ": " << (r ? "" : r.error().message);
    return r ? *r : std::vector<Value>{};
  }

  Store store_;
  std::shared_ptr<const CompiledModule> module_;
  Instance* instance_ = nullptr;
};
INSTANTIATE_TEST_SUITE_P(Variants, SimdTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Metered" : "Unmetered"; });

TEST_P(SimdTest, MixedParamsAndResultsKeepTheirSlots) {
  const auto r = ok("mixed", {Value::i32(3), i32x4(1, 2, 3, 4), Value::i64(77), i32x4(5, 6, 7, 8),
                              Value::f64_bits(std::bit_cast<std::uint64_t>(9.5))});
  EXPECT_EQ(r, (std::vector{Value::i64(77), i32x4(8, 15, 24, 35), Value::i32(9)}));
}

TEST_P(SimdTest, LocalsAreZeroedAndALoopCarriesAVector) {
  EXPECT_EQ(ok("sum_lanes", {i32x4(1, 2, 3, 4), Value::i32(3)}), std::vector{Value::i32(30)});
  EXPECT_EQ(ok("sum_lanes", {i32x4(1, 2, 3, 4), Value::i32(1)}), std::vector{Value::i32(10)});
}

TEST_P(SimdTest, BranchesCarryVectorsToTheirLabels) {
  EXPECT_EQ(ok("blocks", {Value::i32(1)}), (std::vector{Value::i32(20), i64x2(1, 2)}));
  EXPECT_EQ(ok("blocks", {Value::i32(0)}), (std::vector{Value::i32(10), i64x2(103, 104)}));
  EXPECT_EQ(ok("table", {Value::i32(0)}), std::vector{i32x4(1, 0, 0, 7)});
  EXPECT_EQ(ok("table", {Value::i32(1)}), std::vector{i32x4(2, 0, 0, 7)});
  EXPECT_EQ(ok("table", {Value::i32(9)}), std::vector{i32x4(3, 0, 0, 7)});
  EXPECT_EQ(ok("if_else", {Value::i32(1), i32x4(0x01010101, 0x01010101, 0x01010101, 0x01010101)}),
            std::vector{i32x4(~0U, ~0U, ~0U, ~0U)});
  EXPECT_EQ(ok("if_else", {Value::i32(0), i32x4(0, 1, 2, 3)}), std::vector{i32x4(~0U, ~1U, ~2U, ~3U)});
  EXPECT_EQ(ok("select", {Value::i32(1)}), std::vector{i32x4(1, 1, 1, 1)});
  EXPECT_EQ(ok("select", {Value::i32(0)}), std::vector{i32x4(2, 2, 2, 2)});
}

TEST_P(SimdTest, CallsPassVectorsInTheCalleesSlots) {
  EXPECT_EQ(ok("calls", {Value::i32(0)}), (std::vector{Value::i32(5), i32x4(12, 23, 34, 45)}));
  EXPECT_EQ(ok("calls", {Value::i32(1)}), (std::vector{Value::i32(5), i32x4(10, 21, 32, 43)}));
  auto undefined = call("calls", {Value::i32(2)});
  ASSERT_FALSE(undefined.has_value());
  EXPECT_EQ(undefined.error().kind, TrapKind::UndefinedElement);
  EXPECT_EQ(ok("rec", {Value::i32(100), i32x4(0, 0, 0, 0)}), std::vector{i32x4(5050, 5050, 5050, 5050)});
}

TEST_P(SimdTest, VectorGlobalsHoldAll128Bits) {
  EXPECT_EQ(ok("global_swap", {i64x2(0x1122334455667788ULL, 0x99AABBCCDDEEFF00ULL)}), std::vector{i32x4(1, 2, 3, 4)});
  EXPECT_EQ(ok("global_get", {}), std::vector{i64x2(0x1122334455667788ULL, 0x99AABBCCDDEEFF00ULL)});
}

TEST_P(SimdTest, MemoryAccessesCheckTheirWholeWidth) {
  const Value v = i32x4(0x11111111, 0x22222222, 0x33333333, 0x44444444);
  EXPECT_EQ(ok("store_load", {Value::i32(0), v}), std::vector{v});
  EXPECT_EQ(ok("load_lane", {Value::i32(20)}), std::vector{i32x4(0, 0x22222222, 0, 0)});
  EXPECT_EQ(ok("store_load", {Value::i32(65536 - 32), v}), std::vector{v});  // the last 16 bytes
  for (const std::uint32_t a : {65536U - 31, 65536U - 16, 0xFFFFFFF0U}) {
    auto r = call("store_load", {Value::i32(a), v});
    ASSERT_FALSE(r.has_value()) << a;
    EXPECT_EQ(r.error().kind, TrapKind::OutOfBoundsMemoryAccess) << a;
  }
  ok("store_lane", {Value::i32(100), i64x2(1, 0xBEEF)});
  EXPECT_EQ(ok("load_splat", {Value::i32(100)}), std::vector{i32x4(0xBEEFBEEF, 0xBEEFBEEF, 0xBEEFBEEF, 0xBEEFBEEF)});
  EXPECT_EQ(ok("load_lane", {Value::i32(65532)}).size(), 1U);
  EXPECT_EQ(call("load_lane", {Value::i32(65533)}).error().kind, TrapKind::OutOfBoundsMemoryAccess);
  EXPECT_EQ(call("store_lane", {Value::i32(65529), v}).error().kind, TrapKind::OutOfBoundsMemoryAccess);
  EXPECT_EQ(call("load_splat", {Value::i32(65535)}).error().kind, TrapKind::OutOfBoundsMemoryAccess);
}

TEST_P(SimdTest, ShuffleReadsTwoLocalsThroughATee) {
  const Value a = v128(0x0706050403020100ULL, 0x0F0E0D0C0B0A0908ULL);
  const Value b = v128(0x6B6A696867666564ULL, 0x737271706F6E6D6CULL);  // bytes 100..115
  EXPECT_EQ(ok("shuffle", {a, b}), std::vector{v128(0x6703660265016400ULL, 0x6B076A0669056804ULL)});
}

TEST(SimdFuel, EveryInstructionCostsOne) {
  auto module = compile_fixture("simd");
  Store store;
  store.set_budget(ExecutionBudget{kPlenty, std::nullopt});
  auto inst = store.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  auto r = store.invoke(export_func(**inst, "fuel"), {});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)[0].bits, 1U);
  EXPECT_EQ(store.fuel_consumed(), 6U);
  // Out of fuel inside a loop of vector adds stops it, as any other loop.
  store.set_budget(ExecutionBudget{100, std::nullopt});
  auto stopped = store.invoke(export_func(**inst, "sum_lanes"), std::vector{i32x4(1, 1, 1, 1), Value::i32(1000)});
  ASSERT_FALSE(stopped.has_value());
  EXPECT_EQ(stopped.error().kind, TrapKind::OutOfFuel);
}

// ---------------------------------------------------------------- tail calls (fixtures/tail_call.wat)

HostStatus host_add1(HostCall& call) {
  call.results[0] = static_cast<std::uint32_t>(call.args[0] + 1);
  return HostStatus::Ok;
}

class TailCallTest : public ::testing::Test {
 protected:
  void instantiate(StoreLimits limits) {
    module_ = compile_fixture("tail_call");
    ASSERT_TRUE(module_);
    store_ = std::make_unique<Store>(limits);
    Linker linker;
    linker.define("env", "add1",
                  store_->add_host_function(FuncType{{ValType::I32}, {ValType::I32}}, host_add1, nullptr, "add1"));
    auto inst = store_->instantiate(module_, *linker.resolve(module_->module()));
    ASSERT_TRUE(inst.has_value()) << inst.error().message;
    instance_ = *inst;
  }
  void SetUp() override { instantiate(StoreLimits{}); }
  std::expected<std::vector<Value>, Trap> call(std::string_view name, std::vector<Value> args) {
    return store_->invoke(export_func(*instance_, name), args);
  }
  std::uint64_t fuel_of(std::string_view name, std::vector<Value> args) {
    store_->set_budget(ExecutionBudget{std::uint64_t{1} << 40, std::nullopt});
    EXPECT_TRUE(call(name, std::move(args)).has_value());
    const std::uint64_t used = store_->fuel_consumed();
    store_->set_budget({});
    return used;
  }
  // The wasm byte offset of the first return_call_indirect (0x13) in exported function `name`.
  std::size_t tail_call_offset(std::string_view name) {
    const Module& m = module_->module();
    for (const Export& e : m.exports) {
      if (e.name != name) continue;
      const FunctionBody& body = m.code[e.index - m.imported_funcs];
      for (std::size_t at = body.code_offset; at < body.code_offset + body.code_size; ++at)
        if (m.bytes[at] == 0x13) return at;
    }
    ADD_FAILURE() << "no return_call_indirect in " << name;
    return 0;
  }

  std::shared_ptr<const CompiledModule> module_;
  std::unique_ptr<Store> store_;
  Instance* instance_ = nullptr;
};

TEST_F(TailCallTest, TenMillionMutualTailCallsUseNoFrames) {
  // A frame stack of 10 records: the tail calls take none (constant space), the plain calls of
  // the same recursion run out of it at once.
  instantiate(StoreLimits{.max_call_depth = 10});
  auto r = call("even", {Value::i64(10'000'000)});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)[0].bits, 1u);
  EXPECT_EQ((*call("odd", {Value::i64(7)}))[0].bits, 1u);
  EXPECT_EQ((*call("even", {Value::i64(7)}))[0].bits, 0u);
  auto plain = call("even_call", {Value::i64(100)});
  ASSERT_FALSE(plain.has_value());
  EXPECT_EQ(plain.error().kind, TrapKind::CallStackExhausted);
}

TEST_F(TailCallTest, MeteredTailCallsRunInConstantSpaceAndChargeAsCalls) {
  instantiate(StoreLimits{.max_call_depth = 10});
  // return_call costs 1 and the callee's entry 1, as a call; nothing follows it in the caller.
  EXPECT_EQ(fuel_of("fuel_tail", {}), 5u);
  // even(n): per level entry 1 + local.get, i64.eqz, if (3) + local.get, i64.const, i64.sub,
  // return_call (4) = 8, the odd levels also i32.const (9); the last level 1 + 3 + i64.const.
  EXPECT_EQ(fuel_of("even", {Value::i64(0)}), 5u);
  EXPECT_EQ(fuel_of("even", {Value::i64(2)}), 8u + 9u + 5u);
  EXPECT_EQ(fuel_of("even", {Value::i64(1'000'000)}), 500'000u * (8u + 9u) + 5u);
  // A budget that runs out in the middle stops at a callee's entry check.
  store_->set_budget(ExecutionBudget{1000, std::nullopt});
  auto r = call("even", {Value::i64(1'000'000)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::OutOfFuel);
}

TEST_F(TailCallTest, CalleeFrameLargerThanTheCallers) {
  EXPECT_EQ((*call("to_wide", {Value::i64(41)}))[0].bits, 42u);
}

TEST_F(TailCallTest, TailCallToAHostFunctionReturnsToTheCaller) {
  EXPECT_EQ((*call("host_tail", {Value::i32(9)}))[0].bits, 10u);
  EXPECT_EQ(fuel_of("host_tail", {Value::i32(9)}), 3u);  // entry, local.get, return_call
}

TEST_F(TailCallTest, TrapsAtTheTailCallAreLocatedInTheCaller) {
  const Module& m = module_->module();
  auto undefined = call("bad_index", {});
  ASSERT_FALSE(undefined.has_value());
  EXPECT_EQ(undefined.error().kind, TrapKind::UndefinedElement);
  EXPECT_EQ(undefined.error().offset, tail_call_offset("bad_index"));
  auto mismatch = call("bad_type", {});
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_EQ(mismatch.error().kind, TrapKind::IndirectCallTypeMismatch);
  EXPECT_EQ(mismatch.error().offset, tail_call_offset("bad_type"));
  // In the callee, the callee is named (the caller's frame is gone).
  auto inner = call("callee_traps", {});
  ASSERT_FALSE(inner.has_value());
  EXPECT_EQ(inner.error().kind, TrapKind::IntegerDivideByZero);
  ASSERT_TRUE(inner.error().func_index.has_value());
  EXPECT_EQ(m.bytes[inner.error().offset], 0x6E);  // i32.div_u
  const auto boom = std::ranges::find_if(m.function_names, [](const auto& n) { return n.second == "boom"; });
  ASSERT_NE(boom, m.function_names.end());
  EXPECT_EQ(*inner.error().func_index, boom->first);
}

TEST_F(TailCallTest, ValueStackExhaustionAtATailCallIsATrap) {
  // The entry frame fits, the wider callee's does not: the tail call traps, never overruns.
  instantiate(StoreLimits{.max_value_stack_slots = 4});
  auto r = call("to_wide", {Value::i64(1)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::CallStackExhausted);
}


// ---------------------------------------------------------------- 64-bit tables (table64)

// $t64 (i64 indexes, declared max 10) and $t32, both funcref; slot 1 of $t64 holds $seven.
constexpr std::string_view kTable64 = R"((module
  (type $v (func (result i32)))
  (func $seven (type $v) (i32.const 7))
  (table $t64 i64 4 10 funcref)
  (table $t32 4 funcref)
  (elem (table $t64) (i64.const 1) func $seven)
  (func (export "is_null") (param i64) (result i32) (ref.is_null (table.get $t64 (local.get 0))))
  (func (export "set") (param i64) (table.set $t64 (local.get 0) (ref.func $seven)))
  (func (export "size") (result i64) (table.size $t64))
  (func (export "grow") (param i64) (result i64) (table.grow $t64 (ref.null func) (local.get 0)))
  (func (export "grow32") (param i32) (result i32) (table.grow $t32 (ref.null func) (local.get 0)))
  (func (export "fill") (param i64 i64) (table.fill $t64 (local.get 0) (ref.func $seven) (local.get 1)))
  (func (export "fill32") (param i32 i32) (table.fill $t32 (local.get 0) (ref.func $seven) (local.get 1)))
  (func (export "call") (param i64) (result i32) (call_indirect $t64 (type $v) (local.get 0)))
  (func (export "call32") (param i32) (result i32) (call_indirect $t32 (type $v) (local.get 0)))
  (func (export "copy_64_to_32") (param i32 i64 i32) (table.copy $t32 $t64 (local.get 0) (local.get 1) (local.get 2)))
  (func (export "copy_32_to_64") (param i64 i32 i32) (table.copy $t64 $t32 (local.get 0) (local.get 1) (local.get 2))))
)";

class Table64Test : public ::testing::Test {
 protected:
  void instantiate(StoreLimits limits) {
    module_ = testing::compile_text(kTable64);
    ASSERT_TRUE(module_);
    store_ = std::make_unique<Store>(limits);
    auto inst = store_->instantiate(module_, {});
    ASSERT_TRUE(inst.has_value()) << inst.error().message;
    instance_ = *inst;
  }
  void SetUp() override { instantiate(StoreLimits{}); }
  std::expected<std::vector<Value>, Trap> call(std::string_view name, std::vector<Value> args) {
    return store_->invoke(export_func(*instance_, name), args);
  }
  std::uint64_t result(std::string_view name, std::vector<Value> args) {
    auto r = call(name, std::move(args));
    EXPECT_TRUE(r.has_value()) << name << ": " << (r ? "" : r.error().message);
    return r && !r->empty() ? (*r)[0].bits : ~std::uint64_t{0} - 1;
  }
  std::optional<TrapKind> trap(std::string_view name, std::vector<Value> args) {
    auto r = call(name, std::move(args));
    return r ? std::nullopt : std::optional<TrapKind>{r.error().kind};
  }

  std::shared_ptr<const CompiledModule> module_;
  std::unique_ptr<Store> store_;
  Instance* instance_ = nullptr;
};

constexpr std::uint64_t k2To32 = std::uint64_t{1} << 32;
constexpr std::uint64_t kAllOnes = ~std::uint64_t{0};

TEST_F(Table64Test, IndexesAtOrPast2To32TrapInsteadOfWrapping) {
  EXPECT_EQ(result("call", {Value::i64(1)}), 7u);
  EXPECT_EQ(result("is_null", {Value::i64(1)}), 0u);
  // 2^32 + 1 would be slot 1 if the index were cut to 32 bits.
  EXPECT_EQ(trap("is_null", {Value::i64(k2To32 + 1)}), TrapKind::OutOfBoundsTableAccess);
  EXPECT_EQ(trap("set", {Value::i64(k2To32)}), TrapKind::OutOfBoundsTableAccess);
  EXPECT_EQ(trap("call", {Value::i64(k2To32 + 1)}), TrapKind::UndefinedElement);
  EXPECT_EQ(trap("call", {Value::i64(kAllOnes)}), TrapKind::UndefinedElement);
  // table.fill: i + n past 2^64 traps (wrapping would make it 0); n = 0 at i = size is allowed.
  EXPECT_EQ(trap("fill", {Value::i64(1), Value::i64(kAllOnes)}), TrapKind::OutOfBoundsTableAccess);
  EXPECT_EQ(trap("fill", {Value::i64(kAllOnes), Value::i64(2)}), TrapKind::OutOfBoundsTableAccess);
  EXPECT_EQ(trap("fill", {Value::i64(k2To32 + 4), Value::i64(0)}), TrapKind::OutOfBoundsTableAccess);
  EXPECT_EQ(trap("fill", {Value::i64(4), Value::i64(0)}), std::nullopt);
  EXPECT_EQ(trap("fill", {Value::i64(2), Value::i64(2)}), std::nullopt);
  EXPECT_EQ(result("call", {Value::i64(3)}), 7u);
  EXPECT_EQ(trap("call", {Value::i64(0)}), TrapKind::UninitializedElement);
}

TEST_F(Table64Test, GrowPastTheCapReturnsMinusOneWithoutAllocating) {
  // The store caps tables at 8 elements (the declared max is 10): table.grow returns the i64 -1
  // past it, as an i32 table's returns the i32 -1, and charges or allocates nothing.
  instantiate(StoreLimits{.max_table_elements = 8});
  EXPECT_EQ(result("grow", {Value::i64(5)}), kAllOnes);
  EXPECT_EQ(result("grow32", {Value::i32(5)}), 0xFFFF'FFFFu);
  EXPECT_EQ(result("grow", {Value::i64(3)}), 4u);
  EXPECT_EQ(result("size", {}), 7u);
  const std::uint64_t bytes = store_->store_bytes();
  // A hostile 2^40 (8 TiB of elements), 2^64 - 1 (old + n would wrap to 6) and 2^32 + 1 (cut
  // to 32 bits it would be 1, which fits).
  for (const std::uint64_t n : {std::uint64_t{1} << 40, kAllOnes, k2To32 + 1})
    EXPECT_EQ(result("grow", {Value::i64(n)}), kAllOnes) << n;
  EXPECT_EQ(store_->store_bytes(), bytes);
  EXPECT_EQ(result("size", {}), 7u);
  EXPECT_EQ(result("grow", {Value::i64(1)}), 7u);
  EXPECT_EQ(result("grow", {Value::i64(0)}), 8u);
  EXPECT_EQ(result("grow", {Value::i64(1)}), kAllOnes);
  // Without a declared max the store's cap still holds (max_table_elements is at most 2^32 - 1).
  instantiate(StoreLimits{.max_table_elements = ~std::uint32_t{0}});
  EXPECT_EQ(result("grow", {Value::i64(std::uint64_t{1} << 40)}), kAllOnes);
  EXPECT_EQ(result("size", {}), 4u);
}

TEST_F(Table64Test, FuelIsTheI32TablesAndAHugeGrowExhaustsIt) {
  // The same costs as on an i32 table: the instruction, then one unit per element.
  auto fuel_of = [&](std::string_view name, std::vector<Value> args) {
    store_->set_budget(ExecutionBudget{std::uint64_t{1} << 40, std::nullopt});
    EXPECT_TRUE(call(name, std::move(args)).has_value()) << name;
    return store_->fuel_consumed();
  };
  EXPECT_EQ(fuel_of("grow", {Value::i64(2)}), fuel_of("grow32", {Value::i32(2)}));
  EXPECT_EQ(fuel_of("fill", {Value::i64(1), Value::i64(3)}), fuel_of("fill32", {Value::i32(1), Value::i32(3)}));
  // n = 2^40 or 2^64 - 1 runs out of fuel (charged as the i32 grow charges n; 2^64 - 1 must not
  // read as a negative charge), consuming exactly the budget.
  for (const std::uint64_t n : {std::uint64_t{1} << 40, kAllOnes}) {
    store_->set_budget(ExecutionBudget{1000, std::nullopt});
    auto r = call("grow", {Value::i64(n)});
    ASSERT_FALSE(r.has_value()) << n;
    EXPECT_EQ(r.error().kind, TrapKind::OutOfFuel);
    EXPECT_EQ(store_->fuel_consumed(), 1000u);
  }
}

TEST_F(Table64Test, CopyBetweenI32AndI64TablesTakesAnI32Length) {
  EXPECT_EQ(trap("call32", {Value::i32(0)}), TrapKind::UninitializedElement);
  EXPECT_EQ(trap("copy_64_to_32", {Value::i32(0), Value::i64(1), Value::i32(1)}), std::nullopt);
  EXPECT_EQ(result("call32", {Value::i32(0)}), 7u);
  EXPECT_EQ(trap("copy_32_to_64", {Value::i64(3), Value::i32(0), Value::i32(1)}), std::nullopt);
  EXPECT_EQ(result("call", {Value::i64(3)}), 7u);
  // The i64 side's offset is whole: 2^32 + 1 is out of bounds, not slot 1.
  EXPECT_EQ(trap("copy_64_to_32", {Value::i32(0), Value::i64(k2To32 + 1), Value::i32(1)}),
            TrapKind::OutOfBoundsTableAccess);
  EXPECT_EQ(trap("copy_32_to_64", {Value::i64(k2To32), Value::i32(0), Value::i32(0)}),
            TrapKind::OutOfBoundsTableAccess);
  EXPECT_EQ(trap("copy_64_to_32", {Value::i32(2), Value::i64(0), Value::i32(3)}), TrapKind::OutOfBoundsTableAccess);
}

// ---------------------------------------------------------------- typed function references
// call_ref, return_call_ref, ref.as_non_null, br_on_null, br_on_non_null, table initialisers:
// results, the null traps, fuel as Wasmtime counts it, and bounded tail calls through references.

constexpr std::string_view kTypedRefs = R"(
(module
  (type $ii (func (param i32) (result i32)))
  (type $iii (func (param i32 i32) (result i32)))
  (func $inc (type $ii) (i32.add (local.get 0) (i32.const 1)))
  (func $dbl (type $ii) (i32.mul (local.get 0) (i32.const 2)))
  (elem declare func $inc $dbl $count)
  (table $tab 2 (ref $ii) (ref.func $dbl))
  (func (export "call") (param $which i32) (param $x i32) (result i32)
    (call_ref $ii (local.get $x)
      (select (result (ref $ii)) (ref.func $inc) (ref.func $dbl) (local.get $which))))
  (func (export "call_null") (result i32) (call_ref $ii (i32.const 1) (ref.null $ii)))
  (func (export "tail_null") (result i32) (return_call_ref $ii (i32.const 1) (ref.null $ii)))
  (func (export "as_non_null_null") (drop (ref.as_non_null (ref.null func))))
  (func (export "table") (param i32) (result i32) (call_ref $ii (i32.const 10) (table.get $tab (local.get 0))))
  (func $maybe (param $null i32) (result (ref null $ii))
    (select (result (ref null $ii)) (ref.null $ii) (ref.func $inc) (local.get $null)))
  ;; 0 when null, else inc(5)
  (func (export "on_null") (param $null i32) (result i32)
    (block $isnull
      (return (call_ref $ii (i32.const 5) (br_on_null $isnull (call $maybe (local.get $null))))))
    (i32.const 0))
  ;; -1 when null, else inc(21)
  (func (export "on_non_null") (param $null i32) (result i32) (local $r (ref $ii))
    (local.set $r
      (block $nn (result (ref $ii))
        (br_on_non_null $nn (call $maybe (local.get $null)))
        (return (i32.const -1))))
    (call_ref $ii (i32.const 21) (local.get $r)))
  ;; n tail calls through a reference in constant stack
  (func $count (export "count") (type $iii)
    (if (result i32) (i32.eqz (local.get 0))
      (then (local.get 1))
      (else (return_call_ref $iii (i32.sub (local.get 0) (i32.const 1)) (i32.add (local.get 1) (i32.const 1))
                                   (ref.func $count)))))
  ;; fuel: entry 1, i32.const 1, ref.func 1, call_ref 1, callee entry 1, local.get 1, i32.const 1, i32.add 1 = 8
  (func (export "fuel") (result i32) (call_ref $ii (i32.const 1) (ref.func $inc)))
)
)";

class TypedRefsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto bin = text::wat_to_binary(kTypedRefs);
    ASSERT_TRUE(bin.has_value()) << bin.error().message;
    auto m = compile(*bin);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    auto inst = store_.instantiate(*m, {});
    ASSERT_TRUE(inst.has_value()) << inst.error().message;
    instance_ = *inst;
  }
  std::expected<std::vector<Value>, Trap> call(std::string_view name, std::vector<Value> args = {}) {
    return store_.invoke(export_func(*instance_, name), args);
  }
  std::uint32_t result(std::string_view name, std::vector<Value> args = {}) {
    auto r = call(name, std::move(args));
    EXPECT_TRUE(r.has_value()) << name << ": " << (r ? "" : r.error().message);
    return r && !r->empty() ? static_cast<std::uint32_t>((*r)[0].bits) : 0xDEADu;
  }
  Store store_;
  Instance* instance_ = nullptr;
};

TEST_F(TypedRefsTest, CallsThroughReferencesAndTheBranchesOnNull) {
  EXPECT_EQ(result("call", {Value::i32(1), Value::i32(7)}), 8u);
  EXPECT_EQ(result("call", {Value::i32(0), Value::i32(7)}), 14u);
  EXPECT_EQ(result("table", {Value::i32(1)}), 20u);  // the initialiser filled every element
  EXPECT_EQ(result("on_null", {Value::i32(1)}), 0u);
  EXPECT_EQ(result("on_null", {Value::i32(0)}), 6u);
  EXPECT_EQ(result("on_non_null", {Value::i32(1)}), 0xFFFFFFFFu);
  EXPECT_EQ(result("on_non_null", {Value::i32(0)}), 22u);
}

TEST_F(TypedRefsTest, NullReferencesTrapWithTheirOwnKinds) {
  for (const std::string_view name : {"call_null", "tail_null"}) {
    auto r = call(name);
    ASSERT_FALSE(r.has_value()) << name;
    EXPECT_EQ(r.error().kind, TrapKind::NullFunctionReference);
    EXPECT_EQ(r.error().message, "null function reference");
  }
  auto r = call("as_non_null_null");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::NullReference);
  EXPECT_EQ(r.error().message, "null reference");
  EXPECT_EQ(result("call", {Value::i32(1), Value::i32(1)}), 2u);  // the store is fine afterwards
}

TEST_F(TypedRefsTest, ReturnCallRefRunsInConstantStack) {
  // Ten times the calls the frame stack holds (max_call_depth 20,000).
  EXPECT_EQ(result("count", {Value::i32(200'000), Value::i32(0)}), 200'000u);
}

TEST_F(TypedRefsTest, FuelCountsCallRefAsACall) {
  store_.set_budget(ExecutionBudget{kPlenty, std::nullopt});
  EXPECT_EQ(result("fuel"), 2u);
  EXPECT_EQ(store_.fuel_consumed(), 8u);
  store_.set_budget(ExecutionBudget{kPlenty, std::nullopt});
  EXPECT_EQ(result("on_null", {Value::i32(0)}), 6u);
  // entry 1, block 0, i32.const 1, local.get 1, call 1, $maybe: entry 1, ref.null 1, ref.func 1,
  // local.get 1, select 1; br_on_null 1, call_ref 1, $inc: 4; return 0 = 15
  EXPECT_EQ(store_.fuel_consumed(), 15u);
}

TEST(TypedRefs, ADeepChainOfBrOnNullValidatesAndRuns) {
  // 4,000 nested blocks and as many br_on_null, each passing the reference on when it is not null.
  constexpr int kDepth = 4'000;
  std::string wat = "(module (func $f) (elem declare func $f) (func (export \"chain\") (param $null i32) (result i32)\n";
  for (int i = 0; i < kDepth; ++i) wat += "block\n";
  wat += "(select (result funcref) (ref.null func) (ref.func $f) (local.get $null))\n";
  for (int i = 0; i < kDepth; ++i) wat += "br_on_null " + std::to_string(i) + "\n";
  wat += "drop i32.const 1 return\n";
  for (int i = 0; i < kDepth; ++i) wat += "end\n";
  wat += "i32.const 0))";
  auto bin = text::wat_to_binary(wat);
  ASSERT_TRUE(bin.has_value()) << bin.error().message;
  auto m = compile(*bin);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  for (const bool metered : {false, true}) {
    Store store;
    if (metered) store.set_budget(ExecutionBudget{kPlenty, std::nullopt});
    auto inst = store.instantiate(*m, {});
    ASSERT_TRUE(inst.has_value());
    FuncInst* chain = export_func(**inst, "chain");
    EXPECT_EQ(store.invoke(chain, {{Value::i32(1)}}).value()[0].bits, 0u);
    EXPECT_EQ(store.invoke(chain, {{Value::i32(0)}}).value()[0].bits, 1u);
  }
}

TEST(TypedRefs, TheHostCannotPassNullForANonNullableParameter) {
  auto bin = text::wat_to_binary("(module (func (export \"f\") (param (ref func)) (result i32) (i32.const 1)))");
  ASSERT_TRUE(bin.has_value());
  Store store;
  auto inst = store.instantiate(*compile(*bin), {});
  ASSERT_TRUE(inst.has_value());
  auto r = store.invoke(export_func(**inst, "f"), {{Value::null(ValType::abstract_ref(false, ValType::kFunc))}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::NullReference);
}

}  // namespace
}  // namespace sprawling::wasm
