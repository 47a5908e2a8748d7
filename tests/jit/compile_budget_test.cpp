// The compile budget (scan.cpp, CompileBudget; docs/compiled-tier.md, "The compile budget"): a
// function whose shape would make LLVM's time or memory grow faster than linearly stays
// interpreted, with a reason naming the limit and the figure, and the module still gives the
// interpreter's results and fuel. Honest modules (the bench workloads, the example guests) keep
// every function compiled.
#include "jit/tier_fixture.hpp"
#include "sandbox/engine_code_cache.hpp"
#include "wasm/jit/jit.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace sprawling::wasm {
namespace {

using jit_testing::compile_wat;
using jit_testing::Outcome;
using jit_testing::run;

// $deep(x): `depth` loops, each holding an `if` on x that adds 1 to $acc and holds the next level;
// returns $acc (depth when x is not 0). Flat text: folded text of that depth is refused.
std::string nested_loops_and_ifs(std::size_t depth) {
  std::string wat = "(module\n(func $deep (param i32) (result i32) (local $acc i32)\n";
  for (std::size_t i = 0; i < depth; ++i)
    wat += "loop\nlocal.get 0\nif\nlocal.get $acc\ni32.const 1\ni32.add\nlocal.set $acc\n";
  for (std::size_t i = 0; i < depth; ++i) wat += "end\nend\n";
  wat += "local.get $acc)\n";
  wat += "(func (export \"outer\") (param i32) (result i32) (i32.add (call $deep (local.get 0)) (i32.const 7))))\n";
  return wat;
}

// Why each defined function stays interpreted, in both variants (the same in each).
std::vector<std::string> reasons(const CompiledModule& module) {
  const jit::ModuleCode& unmetered = module.impl().jit(kUnmetered);
  const jit::ModuleCode& metered = module.impl().jit(kMetered);
  EXPECT_EQ(unmetered.error, "");
  EXPECT_EQ(metered.error, "");
  EXPECT_EQ(unmetered.reasons, metered.reasons);
  return metered.reasons;
}

TEST(CompileBudget, AFunctionNestedPastTheBudgetStaysInterpretedWithItsReasonAndRunsAsInTheInterpreter) {
  const auto module = compile_wat(nested_loops_and_ifs(2500));
  ASSERT_NE(module, nullptr);
  const std::vector<std::string> why = reasons(*module);
  ASSERT_EQ(why.size(), 2U);
  EXPECT_EQ(why[0], "nesting depth 2500 over the compile budget's 2000");
  EXPECT_EQ(why[1], "");  // its caller is compiled
  for (const std::int32_t x : {0, 1}) {
    for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20}}) {
      const Outcome want = run(module, Tier::Interpret, "outer", {Value::i32(x)}, fuel);
      EXPECT_EQ(want.results, std::vector{Value::i32(x == 0 ? 7 : 2507)});
      EXPECT_EQ(run(module, Tier::Compile, "outer", {Value::i32(x)}, fuel), want) << x;
    }
  }
  // Under its fuel: the budget runs out at the same point on both tiers.
  const Outcome want = run(module, Tier::Interpret, "outer", {Value::i32(1)}, 3000);
  EXPECT_EQ(run(module, Tier::Compile, "outer", {Value::i32(1)}, 3000), want);
}

TEST(CompileBudget, TheSameShapeWithinTheBudgetIsCompiled) {
  const auto module = compile_wat(nested_loops_and_ifs(500));
  ASSERT_NE(module, nullptr);
  for (const std::string& r : reasons(*module)) EXPECT_EQ(r, "");
  const Outcome want = run(module, Tier::Interpret, "outer", {Value::i32(1)}, 1u << 20);
  EXPECT_EQ(want.results, std::vector{Value::i32(507)});
  EXPECT_EQ(run(module, Tier::Compile, "outer", {Value::i32(1)}, 1u << 20), want);
}

TEST(CompileBudget, EachLimitNamesItsFigure) {
  struct Shape {
    std::string wat;
    std::string reason;
  };
  std::vector<Shape> shapes;
  {
    // br_table of 250,001 entries (plus its default) to one label.
    std::string wat = "(module (func (export \"f\") (param i32) (result i32) (block $a (br_table";
    for (int i = 0; i <= 250'000; ++i) wat += " $a";
    wat += " $a (local.get 0))) (i32.const 1)))";
    shapes.push_back({wat, "branch targets counting every br_table entry 250002 over the compile budget's 250000"});
  }
  {
    // 30,001 blocks, each left by a br_if just inside its end: 30,001 distinct targets.
    std::string wat = "(module (func (export \"f\") (param i32) (result i32)\n";
    for (int i = 0; i <= 30'000; ++i) wat += "block\n";
    for (int i = 0; i <= 30'000; ++i) wat += "local.get 0\nbr_if 0\nend\n";
    wat += "(i32.const 1)))";
    shapes.push_back({wat, "branch targets 30001 over the compile budget's 30000"});
  }
  {
    // 1,001 parameters.
    std::string wat = "(module (func (export \"f\") (param";
    for (int i = 0; i < 1001; ++i) wat += " i32";
    wat += ") (result i32) (local.get 1000)))";
    shapes.push_back({wat, "parameters and results 1002 over the compile budget's 1000"});
  }
  {
    // 1,000 locals, all changed inside 600 nested loops that branch back: 1,003 frame slots (with
    // the parameter and two operands).
    std::string wat = "(module (func (export \"f\") (param i32) (result i32) (local";
    for (int i = 0; i < 1000; ++i) wat += " i32";
    wat += ")\n";
    for (int i = 0; i < 600; ++i) wat += "loop\n";
    for (int i = 1; i <= 1000; ++i) {
      const std::string n = std::to_string(i);
      wat += "(local.set ";
      wat += n;
      wat += " (i32.add (local.get ";
      wat += n;
      wat += ") (i32.const 1)))\n";
    }
    for (int i = 0; i < 600; ++i) wat += "(br_if 0 (i32.lt_s (local.get 0) (i32.const 0)))\nend\n";
    wat += "(local.get 1000)))";
    shapes.push_back({wat, "frame slots * nesting depth (1003 * 600) 601800 over the compile budget's 500000"});
  }
  {
    // 4,001 constants on the operand stack: 4,002 frame slots (with the parameter).
    std::string wat = "(module (func (export \"f\") (param i32) (result i32)\n";
    for (int i = 0; i <= 4000; ++i) wat += "i32.const 1\n";
    for (int i = 0; i <= 4000; ++i) wat += "drop\n";
    wat += "(i32.const 1)))";
    shapes.push_back({wat, "frame slots 4002 over the compile budget's 4000"});
  }
  {
    // 10,001 i32x4.add on a v128 local.
    std::string wat = "(module (func (export \"f\") (param i32) (result i32) (local v128)\n";
    for (int i = 0; i <= 10'000; ++i) wat += "(local.set 1 (i32x4.add (local.get 1) (local.get 1)))\n";
    wat += "(i32.const 1)))";
    shapes.push_back({wat, "v128 instructions 10001 over the compile budget's 10000"});
  }
  {
    // 1,001 struct.new, each dropped.
    std::string wat = "(module (type $s (struct (field i32))) (func (export \"f\") (param i32) (result i32)\n";
    for (int i = 0; i <= 1000; ++i) wat += "(drop (struct.new $s (i32.const 1)))\n";
    wat += "(i32.const 1)))";
    shapes.push_back({wat, "GC instructions 1001 over the compile budget's 1000"});
  }
  {
    // A module that uses GC: 500 calls of a host function, each of which stores the frame (101
    // locals, a parameter and the call's operand: 103 slots) for the collector first.
    std::string wat = "(module (import \"env\" \"add1\" (func $g (param i32) (result i32)))\n"
                      "(type $s (struct (field i32)))\n"
                      "(func (export \"f\") (param i32) (result i32) (local";
    for (int i = 0; i <= 100; ++i) wat += " i32";
    wat += ")\n";
    for (int i = 0; i < 500; ++i) wat += "(local.set " + std::to_string(1 + i % 100) + " (call $g (local.get 0)))\n";
    wat += "(local.get 7)))";
    shapes.push_back({wat, "frame slots spilled for the collector (500 * 103) 51500 over the compile budget's 50000"});
  }
  for (const Shape& shape : shapes) {
    const auto module = compile_wat(shape.wat);
    ASSERT_NE(module, nullptr) << shape.reason;
    const std::vector<std::string> why = reasons(*module);
    ASSERT_EQ(why.size(), 1U);
    EXPECT_EQ(why[0], shape.reason);
    const Outcome want = run(module, Tier::Interpret, "f", {Value::i32(0)}, 1u << 24);
    EXPECT_EQ(run(module, Tier::Compile, "f", {Value::i32(0)}, 1u << 24), want) << shape.reason;
  }
}

// Honest modules stay whole: no function of the bench workloads or the example guests is over
// the budget (so the budget costs them nothing).
TEST(CompileBudget, BenchWorkloadsAndExamplesAreCompiledWhole) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(SPRAWLING_TIER_DIFF_DIR))
    if (e.path().extension() == ".wasm") files.push_back(e.path());
  for (const char* name : {"wordcount.wasm", "greedy.wasm"})
    files.push_back(std::filesystem::path(SPRAWLING_EXAMPLES_WASM_DIR) / name);
  ASSERT_GE(files.size(), 15U);
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto module = compile(bytes);
    ASSERT_TRUE(module.has_value()) << path;
    const jit::ModuleCode& code = (*module)->impl().jit(kMetered);
    for (std::size_t i = 0; i < code.reasons.size(); ++i)
      EXPECT_EQ(code.reasons[i].find("compile budget"), std::string::npos) << path << " function " << i << ": "
                                                                          << code.reasons[i];
  }
}


// ---- the compile memory limit of a job's compile on first use (Store::set_compile_memory)

// $big adds 3 to its argument 1,000 times (7 KB of code: about 4.5 MB expected to compile, past a
// 4 MiB limit), then divides 10^9 by it (0 traps there); $mid triples its argument. The exports
// reach them by a direct call, a tail call and call_indirect.
std::string memory_limit_module() {
  std::string wat = "(module\n(type $t (func (param i32) (result i32)))\n(table 2 funcref)\n(elem (i32.const 0) $big $mid)\n";
  wat += "(func $big (param i32) (result i32)\n";
  for (int i = 0; i < 1000; ++i) wat += "local.get 0 i32.const 3 i32.add local.set 0\n";
  wat += "(i32.div_s (i32.const 1000000000) (local.get 0)))\n";
  wat += "(func $mid (param i32) (result i32) (i32.mul (local.get 0) (i32.const 3)))\n";
  wat += "(func (export \"direct\") (param i32) (result i32) (i32.add (call $big (local.get 0)) (call $mid (local.get 0))))\n";
  wat += "(func (export \"tail\") (param i32) (result i32) (return_call $big (i32.add (local.get 0) (i32.const 1))))\n";
  wat += "(func (export \"indirect\") (param i32) (result i32)\n";
  wat += "  (i32.add (call_indirect (type $t) (local.get 0) (i32.const 0)) (call_indirect (type $t) (local.get 0) (i32.const 1))))\n";
  wat += "(func (export \"mid\") (param i32) (result i32) (call $mid (local.get 0))))\n";
  return wat;
}

// Every export with arguments that return and that trap in $big (x = -3000: its sum is 0).
void expect_the_interpreters_outcomes(const std::shared_ptr<const CompiledModule>& module, std::uint64_t limit) {
  for (const char* name : {"direct", "tail", "indirect", "mid"}) {
    for (const std::int32_t x : {5, -3000, -3001}) {
      for (const std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20},
                                                      std::optional<std::uint64_t>{1500}}) {
        const Outcome want = run(module, Tier::Interpret, name, {Value::i32(x)}, fuel);
        EXPECT_EQ(run(module, Tier::Compile, name, {Value::i32(x)}, fuel, {}, nullptr, limit), want)
            << name << "(" << x << ") fuel " << (fuel ? static_cast<long long>(*fuel) : -1);
      }
    }
  }
}

TEST(CompileMemory, AFunctionPastTheLimitStaysInterpretedNamingItAndCallsReachItFromMachineCode) {
  const auto module = compile_wat(memory_limit_module());
  ASSERT_NE(module, nullptr);
  constexpr std::uint64_t kLimit = std::uint64_t{4} << 20;
  // The first run of each variant compiles its IR under the limit: $big's does not fit.
  const Outcome want = run(module, Tier::Interpret, "direct", {Value::i32(5)}, std::nullopt);
  EXPECT_EQ(run(module, Tier::Compile, "direct", {Value::i32(5)}, std::nullopt, {}, nullptr, kLimit), want);
  EXPECT_EQ(run(module, Tier::Compile, "direct", {Value::i32(5)}, 1u << 20, {}, nullptr, kLimit),
            run(module, Tier::Interpret, "direct", {Value::i32(5)}, 1u << 20));
  for (const int variant : {kUnmetered, kMetered}) {
    const jit::ModuleCode& code = module->impl().jit(variant);
    ASSERT_EQ(code.reasons.size(), 6U);
    EXPECT_TRUE(code.reasons[0].starts_with(
        "past the compile memory limit of 4194304 bytes (-W compile-memory): the heap had grown by "))
        << code.reasons[0];
    for (std::size_t i = 1; i < code.reasons.size(); ++i) EXPECT_EQ(code.reasons[i], "") << i;
    EXPECT_EQ(code.over_memory, 1U);
  }
  // Compiled callers reach the interpreted $big directly, by tail call and through the table.
  expect_the_interpreters_outcomes(module, kLimit);
}

TEST(CompileMemory, AFunctionWhoseFirstCallFindsTheLimitPassedStaysInterpretedForLaterJobsToo) {
  const auto module = compile_wat(memory_limit_module());
  ASSERT_NE(module, nullptr);
  // A job without a limit emits every function's IR and compiles $mid and its caller only.
  for (const std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20}})
    EXPECT_EQ(run(module, Tier::Compile, "mid", {Value::i32(5)}, fuel, {}, nullptr, 0),
              run(module, Tier::Interpret, "mid", {Value::i32(5)}, fuel));
  // A job whose limit the heap has passed: what it calls first is left interpreted, the call in
  // flight included, and stays so for a later job without a limit.
  expect_the_interpreters_outcomes(module, 1);
  expect_the_interpreters_outcomes(module, 0);
  for (const int variant : {kUnmetered, kMetered}) {
    const jit::ModuleCode& code = module->impl().jit(variant);
    ASSERT_EQ(code.reasons.size(), 6U);
    for (const std::size_t i : {0U, 2U, 3U, 4U})
      EXPECT_TRUE(code.reasons[i].starts_with("past the compile memory limit of 1 bytes (-W compile-memory)"))
          << i << ": " << code.reasons[i];
    EXPECT_EQ(code.reasons[1], "");  // $mid
    EXPECT_EQ(code.reasons[5], "");  // "mid"
    EXPECT_EQ(code.over_memory, 4U);
    EXPECT_EQ(code.compiled, 2U);
  }
}

// ---- limits of an ahead-of-time compile (CompileOptions) and its threads

// A chain of `n` functions, each adding `adds` constants to its argument one at a time, then
// calling the one before it and adding its index (so calls cross partitions), the first dividing
// 1,000,000 by x (x = 0 traps at the chain's bottom); "top" calls the last one.
std::string call_chain(std::size_t n, std::size_t adds = 0) {
  std::string wat = "(module\n(func $f0 (param i32) (result i32) (i32.div_s (i32.const 1000000) (local.get 0)))\n";
  for (std::size_t i = 1; i < n; ++i) {
    wat += "(func $f" + std::to_string(i) + " (param i32) (result i32)\n";
    for (std::size_t k = 0; k < adds; ++k)
      wat += "(local.set 0 (i32.add (local.get 0) (i32.const " + std::to_string((i * 31 + k) % 100) + ")))\n";
    wat += "(i32.add (call $f" + std::to_string(i - 1) + " (local.get 0)) (i32.const " + std::to_string(i) + ")))\n";
  }
  wat += "(func (export \"top\") (param i32) (result i32) (call $f" + std::to_string(n - 1) + " (local.get 0))))\n";
  return wat;
}

class CompileLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sprawl-compile-limits-test-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    cache_ = std::make_shared<runtime::engine::FileCodeCache>(dir_, std::uint64_t{256} << 20);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // What the cache folder holds (no entry, no temporary file after a stopped compile).
  [[nodiscard]] std::size_t files() const {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(dir_, ec); !ec && it != std::filesystem::end(it);
         it.increment(ec))
      if (it->is_regular_file()) ++n;
    return n;
  }
  std::filesystem::path dir_;
  std::shared_ptr<runtime::engine::FileCodeCache> cache_;
};

TEST_F(CompileLimits, PastTheTimeLimitTheCompileStopsNamingTheLimitAndTheFunctionAndWritesNothing) {
  const auto module = compile_wat(call_chain(40));
  ASSERT_NE(module, nullptr);
  CompileOptions options;
  options.time_limit = std::chrono::nanoseconds(1);  // past at the first check
  for (const unsigned jobs : {1U, 2U}) {
    options.jobs = jobs;
    auto report = precompile(*module, false, *cache_, options);
    ASSERT_FALSE(report.has_value());
    EXPECT_NE(report.error().find("stopped past the compile time limit of 1e-09 s while translating function 0"),
              std::string::npos)
        << report.error();
    EXPECT_EQ(files(), 0U);
  }
}

TEST_F(CompileLimits, PastTheMemoryLimitTheCompileStopsNamingTheLimitAndTheFunctionAndWritesNothing) {
  const auto module = compile_wat(call_chain(40));
  ASSERT_NE(module, nullptr);
  CompileOptions options;
  options.memory_limit = 1;  // the first partition's IR alone is more
  for (const unsigned jobs : {1U, 2U}) {
    options.jobs = jobs;
    auto report = precompile(*module, true, *cache_, options);
    ASSERT_FALSE(report.has_value());
    const std::string& why = report.error();
    EXPECT_NE(why.find("stopped past the compile memory limit of 1 bytes (the heap had grown by "), std::string::npos)
        << why;
    EXPECT_NE(why.find(") while "), std::string::npos) << why;
    EXPECT_NE(why.find(" function "), std::string::npos) << why;
    EXPECT_EQ(files(), 0U);
  }
}

TEST_F(CompileLimits, WithinTheLimitsTheCompileReportsWhatItUsed) {
  const auto module = compile_wat(call_chain(40));
  ASSERT_NE(module, nullptr);
  std::size_t calls = 0;
  std::size_t last = 0;
  CompileOptions options;
  options.jobs = 1;
  options.progress = [&](std::size_t done, std::size_t total) {
    ++calls;
    EXPECT_GT(done, last);
    EXPECT_EQ(total, 41U);
    last = done;
  };
  auto report = precompile(*module, false, *cache_, options);
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_EQ(report->compiled, 41U);
  EXPECT_EQ(report->threads, 1U);
  EXPECT_GT(report->peak_heap_growth, 0U);
  EXPECT_GT(report->cpu_seconds, 0.0);
  EXPECT_GE(calls, 1U);
  EXPECT_EQ(last, 41U);
  EXPECT_EQ(files(), 2U);  // the entry, and the plugin's key parts the engine's linker checks it with
}

// Partitions depend on the module only: the objects compiled on one thread and on two are the
// same bytes, and the module runs from them (calls between partitions linked) as interpreted.
TEST_F(CompileLimits, CompilingOnSeveralThreadsGivesTheSameObjectsAndResultsAsOne) {
  const std::string wat = call_chain(80, 70);  // about 40 KB of wasm code: two partitions
  const auto module = compile_wat(wat);
  ASSERT_NE(module, nullptr);
  CompileOptions options;
  options.jobs = 1;
  auto serial = jit::compile_object(module->impl(), false, options);
  ASSERT_TRUE(serial.has_value()) << serial.error();
  EXPECT_EQ(serial->threads, 1U);
  EXPECT_GE(serial->objects.size(), 2U);
  options.jobs = 2;
  auto parallel = jit::compile_object(module->impl(), false, options);
  ASSERT_TRUE(parallel.has_value()) << parallel.error();
  EXPECT_EQ(parallel->threads, 2U);
  EXPECT_EQ(parallel->reasons, serial->reasons);
  EXPECT_TRUE(parallel->objects == serial->objects);
  for (const bool metered : {false, true}) {
    auto report = precompile(*module, metered, *cache_, options);
    ASSERT_TRUE(report.has_value()) << report.error();
    EXPECT_EQ(report->compiled, 81U);
    EXPECT_EQ(report->threads, 2U);
    const std::optional<std::uint64_t> fuel = metered ? std::optional<std::uint64_t>{1U << 24} : std::nullopt;
    for (const std::int32_t x : {0, 3}) {
      const Outcome want = run(compile_wat(wat), Tier::Interpret, "top", {Value::i32(x)}, fuel);
      const auto fresh = compile_wat(wat);
      const Outcome got = run(fresh, Tier::Auto, "top", {Value::i32(x)}, fuel, {}, cache_);
      EXPECT_EQ(want, got) << "x " << x << " metered " << metered;
      EXPECT_TRUE(fresh->impl().jit_for(metered ? kMetered : kUnmetered, Tier::Auto, cache_)->from_cache);
    }
  }
}

}  // namespace
}  // namespace sprawling::wasm
