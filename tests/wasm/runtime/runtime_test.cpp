// The embedding API: StoreLimits (recursion depth, page cap), host functions that return,
// trap or exit, linking errors, one CompiledModule shared by instances, stores and threads, and
// lazy translation (a function is translated on its first call in a variant).
#include "wasm/engine_fixtures.hpp"
#include "wasm/runtime/cancel.hpp"
#include "wasm/runtime/linker.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <cstring>
#include <thread>

namespace sprawling::wasm {
namespace {

using testing::compile_fixture;
using testing::export_func;

// A module that uses SIMD compiles and runs; v128 values cross invoke() as bits + bits_hi.
TEST(Compile, SimdModulesRun) {
  // (module (func (export "f") (param v128 v128) (result v128) local.get 0 local.get 1 i32x4.add))
  const std::vector<std::uint8_t> bytes = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00,  //
                                           0x01, 0x07, 0x01, 0x60, 0x02, 0x7B, 0x7B, 0x01, 0x7B,  //
                                           0x03, 0x02, 0x01, 0x00,                                //
                                           0x07, 0x05, 0x01, 0x01, 'f', 0x00, 0x00,               //
                                           0x0A, 0x0B, 0x01, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0xFD, 0xAE, 0x01, 0x0B};
  auto compiled = compile(bytes);
  ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
  EXPECT_EQ((*compiled)->module().simd_use, "function 0 has a v128 parameter or result");
  Store store;
  auto inst = store.instantiate(*compiled, {});
  ASSERT_TRUE(inst.has_value());
  const std::vector<Value> args = {Value{ValType::V128, 0x0000000200000001ULL, 0x0000000400000003ULL},
                                   Value{ValType::V128, 0xFFFFFFFF00000010ULL, 0x0000003000000020ULL}};
  auto r = store.invoke(export_func(**inst, "f"), args);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(*r, (std::vector{Value{ValType::V128, 0x0000000100000011ULL, 0x0000003400000023ULL}}));
  // Same body with an i32 signature is invalid (the validator types SIMD exactly).
  std::vector<std::uint8_t> invalid = bytes;
  invalid[13] = invalid[14] = invalid[16] = 0x7F;
  auto rejected = compile(invalid);
  ASSERT_FALSE(rejected.has_value());
  EXPECT_EQ(rejected.error().kind, CompileError::Kind::Invalid);
  EXPECT_EQ(rejected.error().message, "type mismatch: instruction requires [v128] but stack has [i32]");
}

// Defined functions of lazy.wat: twice, plus_one_twice, entry, never_called, divide, fib.
constexpr std::uint32_t kTwice = 0, kPlusOneTwice = 1, kEntry = 2, kNeverCalled = 3, kDivide = 4;

TEST(LazyTranslation, OnlyTheFunctionsThatRunAreTranslatedInTheVariantTheyRunIn) {
  const auto module = compile_fixture("lazy");
  ASSERT_TRUE(module);
  const auto& cm = module->impl();
  EXPECT_EQ(cm.translated_count(false), 0u);
  EXPECT_EQ(cm.translated_count(true), 0u);

  Store plain;
  auto inst = plain.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  auto r = plain.invoke(export_func(**inst, "entry"), std::vector{Value::i32(20)});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)[0].bits, 42u);
  // entry, its direct callee and the call_indirect target; nothing else, and no metered code.
  EXPECT_EQ(cm.translated_count(false), 3u);
  for (const std::uint32_t f : {kTwice, kPlusOneTwice, kEntry}) EXPECT_NE(cm.translated_code(f, false), nullptr) << f;
  EXPECT_EQ(cm.translated_code(kNeverCalled, false), nullptr);
  EXPECT_EQ(cm.translated_count(true), 0u);

  // A metered store: the metered variant is made the same way, and charges the same fuel as a
  // second store that finds every function already translated.
  std::uint64_t fuel[2] = {0, 0};
  for (std::uint64_t& spent : fuel) {
    Store metered;
    auto mi = metered.instantiate(module, {});
    ASSERT_TRUE(mi.has_value());
    metered.set_budget({.fuel = 1'000'000, .deadline = std::nullopt});
    auto mr = metered.invoke(export_func(**mi, "entry"), std::vector{Value::i32(20)});
    ASSERT_TRUE(mr.has_value());
    EXPECT_EQ((*mr)[0].bits, 42u);
    spent = metered.fuel_consumed();
  }
  EXPECT_GT(fuel[0], 0u);
  EXPECT_EQ(fuel[0], fuel[1]);
  EXPECT_EQ(cm.translated_count(true), 3u);
  EXPECT_EQ(cm.translated_count(false), 3u);
}

TEST(LazyTranslation, AFunctionTranslatedOnItsFirstCallReportsItsTrapSite) {
  const auto module = compile_fixture("lazy");
  ASSERT_TRUE(module);
  Store store;
  auto inst = store.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  auto r = store.invoke(export_func(**inst, "divide"), std::vector{Value::i32(1), Value::i32(0)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::IntegerDivideByZero);
  ASSERT_TRUE(r.error().func_index.has_value());
  EXPECT_EQ(*r.error().func_index, kDivide);
  // The offset of the i32.div_u inside the body: past the body's first byte.
  const FunctionBody& body = module->module().code[kDivide];
  EXPECT_GT(r.error().offset, body.code_offset);
  EXPECT_LT(r.error().offset, body.code_offset + body.code_size);
}

// Stores on several threads make their first calls of one shared module at the same time: every
// run gets the right answer and each function ends up with one published translation.
TEST(LazyTranslation, ThreadsSharingAModuleRaceOnFirstCallsSafely) {
  const auto module = compile_fixture("lazy");
  ASSERT_TRUE(module);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<std::uint64_t> results(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Store store;
      if (t % 2 == 1) store.set_budget({.fuel = 100'000'000, .deadline = std::nullopt});
      auto inst = store.instantiate(module, {});
      if (!inst) return;
      auto r = store.invoke(export_func(**inst, "fib"), std::vector{Value::i32(20)});
      if (r) results[static_cast<std::size_t>(t)] = (*r)[0].bits;
    });
  }
  for (auto& th : threads) th.join();
  for (const std::uint64_t r : results) EXPECT_EQ(r, 6765u);
  EXPECT_EQ(module->impl().translated_count(false), 1u);
  EXPECT_EQ(module->impl().translated_count(true), 1u);
  // A Store made after the race starts resolved: the instance points at the published code.
  Store later;
  auto inst = later.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  EXPECT_EQ(export_func(**inst, "fib")->code[kUnmetered], module->impl().translated_code(5, false));
}

TEST(Limits, DeepRecursionIsCallStackExhausted) {
  auto module = compile_fixture("limits");
  for (std::uint32_t depth : {100u, 20'000u}) {
    StoreLimits limits;
    limits.max_call_depth = depth;
    Store store(limits);
    auto inst = store.instantiate(module, {});
    ASSERT_TRUE(inst.has_value());
    auto r = store.invoke(export_func(**inst, "recurse"), std::vector{Value::i32(0)});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().kind, TrapKind::CallStackExhausted);
    EXPECT_EQ(r.error().message, "call stack exhausted");
  }
}

TEST(Limits, SmallValueStackIsCallStackExhaustedToo) {
  auto module = compile_fixture("limits");
  StoreLimits limits;
  limits.max_value_stack_slots = 1000;
  Store store(limits);
  auto inst = store.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  auto r = store.invoke(export_func(**inst, "recurse"), std::vector{Value::i32(0)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::CallStackExhausted);
}

TEST(Limits, PageCapMakesMemoryGrowReturnMinusOne) {
  auto module = compile_fixture("limits");
  StoreLimits limits;
  limits.max_memory_bytes = 3 * kPageSize;
  Store store(limits);
  auto inst = store.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  FuncInst* grow = export_func(**inst, "grow");
  EXPECT_EQ((*store.invoke(grow, std::vector{Value::i32(1)}))[0].bits, 1u);
  EXPECT_EQ((*store.invoke(grow, std::vector{Value::i32(2)}))[0].bits, 0xFFFFFFFFu);
  EXPECT_EQ((*store.invoke(grow, std::vector{Value::i32(1)}))[0].bits, 2u);
  EXPECT_EQ((*store.invoke(grow, std::vector{Value::i32(1)}))[0].bits, 0xFFFFFFFFu);
  EXPECT_EQ((*store.invoke(export_func(**inst, "size"), {}))[0].bits, 3u);
  MemoryInst* mem = (*inst)->memory(0);
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(memory_size_bytes(mem), 3 * kPageSize);
  EXPECT_EQ(memory_peak_bytes(mem), 3 * kPageSize);
  // Committed memory is usable up to the last byte; the base never moved.
  memory_data(mem)[3 * kPageSize - 1] = 42;
}

TEST(Limits, MinimumAboveTheCapFailsToInstantiate) {
  auto module = compile_fixture("limits");
  StoreLimits limits;
  limits.max_memory_bytes = kPageSize / 2;
  Store store(limits);
  auto inst = store.instantiate(module, {});
  ASSERT_FALSE(inst.has_value());
  EXPECT_EQ(inst.error().kind, InstantiationError::Kind::Link);
  EXPECT_NE(inst.error().message.find("exceeds memory limits"), std::string::npos);
}

// Store::Impl::fuel_ahead, the compiled tier's request for a loop's fuel at the loop's entry: it
// moves the budget's chunks from the reserve into the counter, never traps, and refuses what
// would let a loop run past a check the job needs (a passed deadline, a cancel, more than it
// gives at once: 2^22 units, more only with a deadline that leaves time for it at 32 ns a unit).
TEST(Fuel, FuelAheadMovesChunksAndRefusesWhatWouldSkipADeadlineOrCancelCheck) {
  using std::chrono::steady_clock;
  constexpr std::int64_t kChunk = std::int64_t{1} << 20;
  constexpr std::int64_t kMostAtOnce = std::int64_t{1} << 22;
  const auto later = steady_clock::now() + std::chrono::hours(1);
  Store store;
  Store::Impl& s = store.impl();
  // With a deadline the counter holds one chunk; 3 chunks and a unit more take 4 chunks.
  store.set_budget({std::uint64_t{1} << 30, later});
  ASSERT_EQ(s.counter, kChunk);
  EXPECT_TRUE(s.fuel_ahead(s.counter, 3 * kChunk + 1));
  EXPECT_EQ(s.counter, 5 * kChunk);
  EXPECT_EQ(s.reserve, (std::uint64_t{1} << 30) - 5 * kChunk);
  // More than 2^22 at once: given with a deadline an hour away, refused with a cancel flag.
  EXPECT_TRUE(s.fuel_ahead(s.counter, 2 * kMostAtOnce));
  EXPECT_EQ(s.counter, 13 * kChunk);
  std::atomic<bool> cancel{false};
  const std::atomic<bool>* outer = set_thread_cancel_flag(&cancel);
  EXPECT_FALSE(s.fuel_ahead(s.counter, kMostAtOnce + 1));
  EXPECT_EQ(s.counter, 13 * kChunk);
  EXPECT_TRUE(s.fuel_ahead(s.counter, kMostAtOnce));
  EXPECT_EQ(s.counter, 17 * kChunk);
  cancel = true;  // cancelled: nothing more, whatever the amount
  EXPECT_FALSE(s.fuel_ahead(s.counter, 1));
  EXPECT_EQ(s.counter, 17 * kChunk);
  set_thread_cancel_flag(outer);
  // A deadline 10 s away leaves time for about 312 million units at 32 ns: 2^27 given, 2^29 not.
  store.set_budget({std::uint64_t{1} << 31, steady_clock::now() + std::chrono::seconds(10)});
  EXPECT_FALSE(s.fuel_ahead(s.counter, std::int64_t{1} << 29));
  EXPECT_EQ(s.counter, kChunk);
  EXPECT_TRUE(s.fuel_ahead(s.counter, std::int64_t{1} << 27));
  EXPECT_EQ(s.counter, kChunk + (std::int64_t{1} << 27));
  // A deadline already passed: refused (the next refuel ends the run).
  store.set_budget({std::uint64_t{1} << 30, steady_clock::now() - std::chrono::seconds(1)});
  EXPECT_FALSE(s.fuel_ahead(s.counter, 1));
  EXPECT_EQ(s.counter, kChunk);
  // A reserve short of the amount: what there was is moved (the counter stays exact), refused.
  store.set_budget({2 * kChunk + 5, later});
  EXPECT_FALSE(s.fuel_ahead(s.counter, 2 * kChunk));
  EXPECT_EQ(s.counter, 2 * kChunk + 5);
  EXPECT_EQ(s.reserve, 0u);
  // Without a deadline the counter holds the whole budget: nothing to move.
  store.set_budget({1000, std::nullopt});
  EXPECT_FALSE(s.fuel_ahead(s.counter, 1));
  EXPECT_EQ(s.counter, 1000);
}

TEST(Table64, ElementOffsetsAreWholeAndImportsMatchTheAddressType) {
  // An active segment at i64 offset 2^32 of a 64-bit table of 4: out of bounds (cut to 32 bits
  // it would be 0, which fits).
  Store store;
  auto past = store.instantiate(testing::compile_text(R"((module
    (func $f) (table i64 4 funcref) (elem (table 0) (i64.const 0x1_0000_0000) func $f)))"), {});
  ASSERT_FALSE(past.has_value());
  EXPECT_EQ(past.error().kind, InstantiationError::Kind::Trap);
  EXPECT_EQ(past.error().message, "out of bounds table access");
  auto fits = store.instantiate(testing::compile_text(R"((module
    (func $f) (table i64 4 funcref) (elem (table 0) (i64.const 3) func $f)))"), {});
  ASSERT_TRUE(fits.has_value()) << fits.error().message;
  // A table import matches only a table of the same address type.
  TableInst* t32 = store.add_table(TableType{ValType::FuncRef, Limits{1, 2}}, Value::null(ValType::FuncRef));
  TableInst* t64 = store.add_table(TableType{ValType::FuncRef, Limits{1, 2, true}}, Value::null(ValType::FuncRef));
  const auto wants64 = testing::compile_text(R"((module (import "m" "t" (table i64 1 funcref))))");
  const auto wants32 = testing::compile_text(R"((module (import "m" "t" (table 1 funcref))))");
  EXPECT_TRUE(store.instantiate(wants64, std::vector<Extern>{t64}).has_value());
  EXPECT_TRUE(store.instantiate(wants32, std::vector<Extern>{t32}).has_value());
  for (auto [module, table] : {std::pair{wants64, t32}, std::pair{wants32, t64}}) {
    auto inst = store.instantiate(module, std::vector<Extern>{table});
    ASSERT_FALSE(inst.has_value());
    EXPECT_EQ(inst.error().message, "incompatible import type");
  }
}

struct HostLog {
  std::uint32_t last_arg = 0;
  std::uint64_t memory_size = 0;
};

HostStatus host_trap(HostCall& call) {
  static_cast<HostLog*>(call.context)->last_arg = static_cast<std::uint32_t>(call.args[0]);
  call.trap_message = "host says no";
  return HostStatus::Trap;
}
HostStatus host_exit(HostCall& call) {
  call.exit_code = static_cast<std::uint32_t>(call.args[0]);
  return HostStatus::Exit;
}
HostStatus host_add(HostCall& call) {
  if (call.context != nullptr) static_cast<HostLog*>(call.context)->memory_size = call.memory.size;
  // Garbage in the upper half of an i32 result must not leak into the guest.
  call.results[0] = (std::uint64_t{0xDEAD} << 32) | static_cast<std::uint32_t>(call.args[0] + call.args[1]);
  return HostStatus::Ok;
}

class HostTest : public ::testing::Test {
 protected:
  void SetUp() override { module_ = compile_fixture("calls"); }
  Instance* instantiate(Store& store) {
    Linker linker;
    const FuncType i32_to_void{{ValType::I32}, {}};
    linker.define("env", "trap", store.add_host_function(i32_to_void, host_trap, &log_, "trap"));
    linker.define("env", "exit", store.add_host_function(i32_to_void, host_exit, &log_, "exit"));
    linker.define("env", "add",
                  store.add_host_function(FuncType{{ValType::I32, ValType::I32}, {ValType::I32}}, host_add, &log_,
                                          "add"));
    auto imports = linker.resolve(module_->module());
    EXPECT_TRUE(imports.has_value());
    auto inst = store.instantiate(module_, *imports);
    EXPECT_TRUE(inst.has_value());
    return inst ? *inst : nullptr;
  }
  HostLog log_;
  std::shared_ptr<const CompiledModule> module_;
};

TEST_F(HostTest, HostResultsAndCallerMemory) {
  Store store;
  Instance* inst = instantiate(store);
  auto r = store.invoke(export_func(*inst, "calls_add"), std::vector{Value::i32(40), Value::i32(2)});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)[0].bits, 42u);
  EXPECT_EQ(log_.memory_size, kPageSize);
  auto wide = store.invoke(export_func(*inst, "calls_add_wide"), std::vector{Value::i32(40), Value::i32(2)});
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ((*wide)[0].bits, 42u);
}

TEST_F(HostTest, HostTrapBecomesAGuestTrapWithItsMessage) {
  Store store;
  Instance* inst = instantiate(store);
  auto r = store.invoke(export_func(*inst, "calls_trap"), std::vector{Value::i32(7)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::Host);
  EXPECT_EQ(r.error().message, "host says no");
  EXPECT_EQ(r.error().func_name, "calls_trap");
  EXPECT_EQ(log_.last_arg, 7u);
}

TEST_F(HostTest, HostExitUnwindsWithItsCode) {
  Store store;
  Instance* inst = instantiate(store);
  store.set_budget(ExecutionBudget{1000, std::nullopt});
  auto r = store.invoke(export_func(*inst, "calls_exit"), std::vector{Value::i32(3)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, TrapKind::Exit);
  EXPECT_EQ(r.error().exit_code, 3u);
  // Exact up to the exit: entry + local.get + call (the unreachable after it never ran).
  EXPECT_EQ(store.fuel_consumed(), 3u);
}

TEST_F(HostTest, UnknownAndIncompatibleImports) {
  Store store;
  Linker empty;
  auto missing = empty.resolve(module_->module());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message, "unknown import: `env::trap` has not been defined");

  Linker wrong;
  const FuncType void_to_void{};
  for (const char* name : {"trap", "exit", "add"})
    wrong.define("env", name, store.add_host_function(void_to_void, testing::host_nop, nullptr, name));
  auto inst = store.instantiate(module_, *wrong.resolve(module_->module()));
  ASSERT_FALSE(inst.has_value());
  EXPECT_EQ(inst.error().kind, InstantiationError::Kind::Link);
  EXPECT_EQ(inst.error().message, "incompatible import type");
}

TEST_F(HostTest, SharedModuleKeepsStatePerInstance) {
  Store store;
  Instance* a = instantiate(store);
  Instance* b = instantiate(store);
  FuncInst* bump_a = export_func(*a, "bump");
  FuncInst* bump_b = export_func(*b, "bump");
  EXPECT_EQ((*store.invoke(bump_a, {}))[0].bits, 1u);
  EXPECT_EQ((*store.invoke(bump_a, {}))[0].bits, 2u);
  EXPECT_EQ((*store.invoke(bump_b, {}))[0].bits, 1u);
  EXPECT_EQ(memory_data(a->memory(0))[0], 2);
  EXPECT_EQ(memory_data(b->memory(0))[0], 1);
}

TEST_F(HostTest, SharedModuleAcrossStoresAndThreads) {
  constexpr int kThreads = 4;
  std::vector<std::uint64_t> fibs(kThreads), fuel(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Store store;
      Linker linker;
      const FuncType i32_to_void{{ValType::I32}, {}};
      linker.define("env", "trap", store.add_host_function(i32_to_void, host_trap, nullptr, "trap"));
      linker.define("env", "exit", store.add_host_function(i32_to_void, host_exit, nullptr, "exit"));
      linker.define("env", "add",
                    store.add_host_function(FuncType{{ValType::I32, ValType::I32}, {ValType::I32}}, host_add, nullptr,
                                            "add"));
      auto inst = store.instantiate(module_, *linker.resolve(module_->module()));
      if (!inst) return;
      // Half the threads run metered, which translates the metered variant on first use.
      if (t % 2 == 1) store.set_budget(ExecutionBudget{100'000'000, std::nullopt});
      auto r = store.invoke(export_func(**inst, "fib"), std::vector{Value::i32(18)});
      if (r) fibs[t] = (*r)[0].bits;
      fuel[t] = store.fuel_consumed();
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(fibs[t], 2584u) << t;
  EXPECT_EQ(fuel[0], 0u);
  EXPECT_GT(fuel[1], 0u);
  EXPECT_EQ(fuel[1], fuel[3]);
}

TEST(Globals, ExtendedConstantExpressionsAreEvaluatedInOrder) {
  auto module = compile_fixture("extended_const");
  ASSERT_TRUE(module);
  Store store;
  Linker linker;
  linker.define("env", "base", store.add_global(GlobalType{ValType::I32, false}, Value::i32(2)));
  auto inst = store.instantiate(module, *linker.resolve(module->module()));
  ASSERT_TRUE(inst.has_value()) << inst.error().message;
  const auto global = [&](std::string_view name) { return global_get(std::get<GlobalInst*>(*(*inst)->find_export(name))); };
  EXPECT_EQ(global("a"), Value::i32(10));           // imported 2 + 8
  EXPECT_EQ(global("b"), Value::i32(30));           // the earlier-defined a * 3
  EXPECT_EQ(global("wrap"), Value::i32(0xFFFFFFFFu));  // i32 arithmetic wraps, stays 32 bits
  EXPECT_EQ(global("mul32"), Value::i32(0x10000u));
  EXPECT_EQ(global("big"), Value::i64(~std::uint64_t{0}));
  // Data at b - 2 = 28, the element at base + 3 = 5.
  EXPECT_EQ(store.invoke(export_func(**inst, "byte"), std::vector{Value::i32(28)})->at(0).bits, 42u);
  EXPECT_EQ(store.invoke(export_func(**inst, "slot"), std::vector{Value::i32(5)})->at(0).bits, 7u);
  // As WebAssembly 2.0 (-W extended-const=n) the module is invalid, naming the feature.
  Features v2 = Features::wasm2();
  auto refused = compile(testing::fixture_bytes("extended_const"), v2);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, CompileError::Kind::Invalid);
  EXPECT_EQ(refused.error().message, "constant expression required, found i32.add (extended constant expressions are disabled)");
}

TEST(Globals, HostGlobalsAreShared) {
  Store store;
  GlobalInst* g = store.add_global(GlobalType{ValType::I64, true}, Value::i64(5));
  EXPECT_EQ(global_get(g).bits, 5u);
  global_set(g, Value::i64(9));
  EXPECT_EQ(global_get(g), Value::i64(9));
  EXPECT_EQ(global_type(g).type, ValType::I64);
}

}  // namespace
}  // namespace sprawling::wasm

namespace sprawling::wasm {
namespace {

TEST(ResourcePoolTest, RecycledMemoryIsZeroAndReused) {
  auto module = testing::compile_fixture("limits");
  auto pool = std::make_shared<ResourcePool>();
  std::uint8_t* first_base = nullptr;
  {
    Store store({}, pool);
    auto inst = store.instantiate(module, {});
    ASSERT_TRUE(inst.has_value());
    FuncInst* grow = testing::export_func(**inst, "grow");
    ASSERT_EQ((*store.invoke(grow, std::vector{Value::i32(2)}))[0].bits, 1u);
    MemoryInst* mem = (*inst)->memory(0);
    first_base = memory_data(mem);
    std::memset(first_base, 0xAB, memory_size_bytes(mem));
    // Run deep once so the value stack that goes back to the pool has been used.
    EXPECT_FALSE(store.invoke(testing::export_func(**inst, "recurse"), std::vector{Value::i32(0)}).has_value());
  }
  Store store({}, pool);
  auto inst = store.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  MemoryInst* mem = (*inst)->memory(0);
  EXPECT_EQ(memory_data(mem), first_base);  // the same reservation came back
  EXPECT_EQ(memory_size_bytes(mem), kPageSize);
  // Grown again within the previously committed range: still zero, still bounded by size.
  FuncInst* grow = testing::export_func(**inst, "grow");
  ASSERT_EQ((*store.invoke(grow, std::vector{Value::i32(2)}))[0].bits, 1u);
  const std::uint8_t* data = memory_data(mem);
  std::uint64_t nonzero = 0;
  for (std::uint64_t i = 0; i < memory_size_bytes(mem); ++i) nonzero += data[i] != 0;
  EXPECT_EQ(nonzero, 0u);
}

TEST(ResourcePoolTest, StoresOnSeveralThreadsShareOnePool) {
  auto module = testing::compile_fixture("limits");
  auto pool = std::make_shared<ResourcePool>(4);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        Store store({}, pool);
        auto inst = store.instantiate(module, {});
        if (!inst) return;
        auto r = store.invoke(testing::export_func(**inst, "size"), {});
        if (r && (*r)[0].bits == 1u) ++ok[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 20) << t;
}

}  // namespace
}  // namespace sprawling::wasm

namespace sprawling::wasm {
namespace {

struct Reentry {
  Store* store = nullptr;
  FuncInst* fib = nullptr;
};

HostStatus call_back(HostCall& call) {
  auto* r = static_cast<Reentry*>(call.context);
  auto out = r->store->invoke(r->fib, std::vector{Value::i32(static_cast<std::uint32_t>(call.args[0]))});
  if (!out) {
    call.trap_message = out.error().message;
    return HostStatus::Trap;
  }
  call.results[0] = (*out)[0].bits;
  return HostStatus::Ok;
}

TEST(Reentry, HostFunctionMayCallBackIntoTheStore) {
  auto module = testing::compile_fixture("reenter");
  for (bool metered : {false, true}) {
    Store store;
    Reentry ctx{&store, nullptr};
    Linker linker;
    linker.define("env", "callback",
                  store.add_host_function(FuncType{{ValType::I32}, {ValType::I32}}, call_back, &ctx, "callback"));
    auto inst = store.instantiate(module, *linker.resolve(module->module()));
    ASSERT_TRUE(inst.has_value());
    ctx.fib = testing::export_func(**inst, "fib");
    if (metered) store.set_budget(ExecutionBudget{1'000'000, std::nullopt});
    auto r = store.invoke(testing::export_func(**inst, "outer"), std::vector{Value::i32(15)});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ((*r)[0].bits, 45u + 1000u + 610u);
    if (metered) {
      const std::uint64_t with_callback = store.fuel_consumed();
      store.set_budget(ExecutionBudget{1'000'000, std::nullopt});
      ASSERT_TRUE(store.invoke(ctx.fib, std::vector{Value::i32(15)}).has_value());
      // outer: entry 1 + 3 (local.get, i32.const, i32.mul) + local.set 1 + local.get, i32.const,
      // local.get, call, i32.add, i32.add = 11; the nested fib is charged to the same budget.
      EXPECT_EQ(with_callback, store.fuel_consumed() + 11);
    }
  }
}

}  // namespace
}  // namespace sprawling::wasm
