// Hostile modules for the compiled tier: shapes that make LLVM's time and memory grow faster than
// linearly (deep nesting, a huge br_table, a huge signature, many locals live across nested
// loops) end within their deadline with the guest's own outcome, on the compile tier (where the
// compile budget keeps such functions interpreted), on auto, and from a code cache filled ahead
// of time; and a job whose compilation runs past its deadline ends there, DeadlineExceeded
// (docs/compiled-tier.md, "The compile budget").
#include "hostile/hostile_support.hpp"
#include "hostile/wasm_writer.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace sprawling::hostile {
namespace {

using runtime::ExecutionTier;
using runtime::SandboxExit;
using runtime::Success;
using runtime::WasmSandbox;
namespace ww = test::wasm_writer;
using namespace std::chrono_literals;

void export_start(ww::Module& m, std::uint32_t func_index) {
  m.exports.push_back(ww::Export{"_start", 0, func_index});
  m.exports.push_back(ww::Export{"memory", 2, 0});
}

// A module whose _start is one function of `code` (with `locals` i32 locals; local 0 is 0, so
// every `if` on it is skipped and every `br_if` on it falls through).
std::vector<std::uint8_t> one_function(const ww::Bytes& code, std::uint32_t locals = 1) {
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  ww::Function f{.type_index = m.add_type({}), .locals = {}, .code = code};
  if (locals > 0) f.locals.emplace_back(locals, ww::type::i32);
  m.functions.push_back(std::move(f));
  export_start(m, 0);
  return m.build();
}

// `depth` loops, each holding an `if` on local 0: 8 bytes a level.
ww::Bytes nested_loops_and_ifs(std::size_t depth) {
  ww::Bytes code;
  for (std::size_t i = 0; i < depth; ++i) code.insert(code.end(), {0x03, 0x40, 0x20, 0x00, 0x04, 0x40});
  for (std::size_t i = 0; i < depth; ++i) code.insert(code.end(), {0x0b, 0x0b});
  return code;
}

// The shapes of the compiled tier's hostile modules, each at a size LLVM took seconds and hundreds
// of MiB for without the compile budget (release build, one core): 28.8 s and 921 MB for the first.
std::vector<std::uint8_t> nested_loops_and_ifs_module() { return one_function(nested_loops_and_ifs(30'000)); }

std::vector<std::uint8_t> nested_branching_blocks_module() {
  // 300,000 blocks, each left by a br_if from inside it.
  ww::Bytes code;
  constexpr std::size_t kDepth = 300'000;
  for (std::size_t i = 0; i < kDepth; ++i) code.insert(code.end(), {0x02, 0x40});
  for (std::size_t i = 0; i < kDepth; ++i) code.insert(code.end(), {0x20, 0x00, 0x0d, 0x00, 0x0b});
  return one_function(code);
}

std::vector<std::uint8_t> million_target_br_table_module() {
  // Eight blocks and a br_table of 1,000,000 entries over them.
  ww::Bytes code;
  constexpr std::uint32_t kTargets = 1'000'000;
  for (int i = 0; i < 8; ++i) code.insert(code.end(), {0x02, 0x40});
  code.insert(code.end(), {0x20, 0x00, 0x0e});
  ww::uleb(code, kTargets);
  for (std::uint32_t i = 0; i < kTargets; ++i) code.push_back(static_cast<std::uint8_t>(i % 8));
  code.push_back(0x00);
  code.insert(code.end(), 8, 0x0b);
  return one_function(code);
}

std::vector<std::uint8_t> huge_signature_module() {
  // $f takes 10,000 i32s and returns them; _start passes 0..9999 and drops the results. Both are
  // over the budget: $f by its signature, _start by its 10,000 frame slots (the operand stack
  // holding the arguments), whose promotion to SSA values LLVM does in time quadratic in them.
  constexpr std::uint32_t kValues = 10'000;
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  const ww::Bytes values(kValues, ww::type::i32);
  ww::Function f{.type_index = m.add_type({.params = values, .results = values}), .locals = {}, .code = {}};
  for (std::uint32_t i = 0; i < kValues; ++i) ww::op_index(f.code, 0x20, i);
  m.functions.push_back(std::move(f));
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  for (std::uint32_t i = 0; i < kValues; ++i) ww::i32_const(start.code, static_cast<std::int32_t>(i));
  ww::op_index(start.code, 0x10, 0);
  start.code.insert(start.code.end(), kValues, 0x1a);
  m.functions.push_back(std::move(start));
  export_start(m, 1);
  return m.build();
}

std::vector<std::uint8_t> locals_across_nested_loops_module() {
  // 4,000 locals, each incremented inside 1,000 nested loops that branch back when local 0 < 0.
  constexpr std::uint32_t kLocals = 4000;
  constexpr std::size_t kLoops = 1000;
  ww::Bytes code;
  for (std::size_t i = 0; i < kLoops; ++i) code.insert(code.end(), {0x03, 0x40});
  for (std::uint32_t i = 0; i < kLocals; ++i) {
    ww::op_index(code, 0x20, i);
    code.insert(code.end(), {0x41, 0x01, 0x6a});
    ww::op_index(code, 0x21, i);
  }
  for (std::size_t i = 0; i < kLoops; ++i) code.insert(code.end(), {0x20, 0x00, 0x41, 0x00, 0x48, 0x0d, 0x00, 0x0b});
  return one_function(code, kLocals);
}

// 1,000,000 functions of (i32) -> i32 adding one; _start calls the first and the last. Every
// one is within the budget: what grows is the module, not a function. On the compile tier the
// lazy path gives IR to the first 10,000 only (its module budget), so the last one is interpreted.
std::vector<std::uint8_t> many_small_functions_module() {
  constexpr std::uint32_t kFunctions = 1'000'000;
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  const std::uint32_t inc = m.add_type({.params = {ww::type::i32}, .results = {ww::type::i32}});
  m.functions.assign(kFunctions, ww::Function{.type_index = inc, .locals = {}, .code = {0x20, 0x00, 0x41, 0x01, 0x6a}});
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  ww::i32_const(start.code, 0);
  ww::op_index(start.code, 0x10, 0);
  ww::op_index(start.code, 0x10, kFunctions - 1);
  start.code.push_back(0x1a);
  m.functions.push_back(std::move(start));
  export_start(m, kFunctions);
  return m.build();
}

// One body of 10 MiB: i32.const 1, drop, nop, 2.6 million times.
std::vector<std::uint8_t> ten_mebibyte_body_module() {
  constexpr std::size_t kGroups = (std::size_t{10} << 20) / 4;
  ww::Bytes code;
  code.reserve(kGroups * 4);
  for (std::size_t i = 0; i < kGroups; ++i) code.insert(code.end(), {0x41, 0x01, 0x1a, 0x01});
  return one_function(code);
}

// Eight functions of almost 1 MiB each (local.get 0, i32.const 1, i32.add, local.set 0: within
// the compile budget's code size and together within the lazy path's module budget), each called
// once by _start. Compiled on first use, about 100 MiB of IR and 180 MiB of LLVM's peak each,
// 9-20 s for all; a 128 MiB compile memory limit keeps them interpreted.
std::vector<std::uint8_t> eight_mebibyte_bodies_module() {
  constexpr std::uint32_t kFunctions = 8;
  constexpr std::size_t kGroups = ((std::size_t{1} << 20) - 64) / 7;
  ww::Bytes code;
  code.reserve(kGroups * 7);
  for (std::size_t i = 0; i < kGroups; ++i) code.insert(code.end(), {0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00});
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  const std::uint32_t type = m.add_type({});
  for (std::uint32_t i = 0; i < kFunctions; ++i)
    m.functions.push_back(ww::Function{.type_index = type, .locals = {{1, ww::type::i32}}, .code = code});
  ww::Function start{.type_index = type, .locals = {}, .code = {}};
  for (std::uint32_t i = 0; i < kFunctions; ++i) ww::op_index(start.code, 0x10, i);
  m.functions.push_back(std::move(start));
  export_start(m, kFunctions);
  return m.build();
}

// 50,000 i32 locals, every seventh copied into its mirror image.
std::vector<std::uint8_t> fifty_thousand_locals_module() {
  constexpr std::uint32_t kLocals = 50'000;
  ww::Bytes code;
  for (std::uint32_t i = 0; i < kLocals; i += 7) {
    ww::op_index(code, 0x20, i);
    ww::op_index(code, 0x21, kLocals - 1 - i);
  }
  return one_function(code, kLocals);
}

// 200,000 v128 instructions in one straight-line body (within the code size budget: 5 bytes each),
// i32x4.add and i32x4.mul in turn on a v128 local.
std::vector<std::uint8_t> huge_simd_module() {
  constexpr std::size_t kOps = 200'000;
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  ww::Function f{.type_index = m.add_type({}), .locals = {{1, ww::type::i32}, {2, ww::type::v128}}, .code = {}};
  ww::op_index(f.code, 0x20, 1);
  for (std::size_t i = 0; i < kOps; ++i) {
    ww::op_index(f.code, 0x20, 2);
    ww::simd(f.code, i % 2 == 0 ? 0xae : 0xb5);  // i32x4.add, i32x4.mul
  }
  ww::op_index(f.code, 0x21, 1);
  m.functions.push_back(std::move(f));
  export_start(m, 0);
  return m.build();
}

// 50,000 times struct.new, struct.get and array.new, array.len in one straight-line body (1 MB,
// within the code size budget), each object dropped at once: 100,000 allocations.
std::vector<std::uint8_t> huge_gc_module() {
  constexpr std::size_t kGroups = 50'000;
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  const std::uint32_t start_type = m.add_type({});
  const std::uint32_t s = m.add_type({.params = {}, .results = {}, .composite = {0x5f, 0x01, ww::type::i32, 0x01}});  // (struct (field (mut i32)))
  const std::uint32_t a = m.add_type({.params = {}, .results = {}, .composite = {0x5e, ww::type::i32, 0x01}});  // (array (mut i32))
  ww::Function f{.type_index = start_type, .locals = {{1, ww::type::i32}}, .code = {}};
  for (std::size_t i = 0; i < kGroups; ++i) {
    ww::i32_const(f.code, 7);
    ww::gc(f.code, 0x00, s);  // struct.new
    ww::gc(f.code, 0x02, s);  // struct.get s 0
    f.code.push_back(0x00);
    f.code.push_back(0x1a);
    ww::i32_const(f.code, 0);
    ww::i32_const(f.code, 8);
    ww::gc(f.code, 0x06, a);  // array.new
    ww::gc(f.code, 0x0f);     // array.len
    f.code.push_back(0x1a);
  }
  m.functions.push_back(std::move(f));
  export_start(m, 0);
  return m.build();
}

// 1,000 struct.new (within the GC instruction budget) in a body with 3,990 locals: each
// allocation's slow path stores the whole frame for the collector, about four million stores.
std::vector<std::uint8_t> gc_with_a_big_frame_module() {
  constexpr std::size_t kAllocations = 1000;
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  const std::uint32_t start_type = m.add_type({});
  const std::uint32_t s = m.add_type({.params = {}, .results = {}, .composite = {0x5f, 0x01, ww::type::i32, 0x00}});  // (struct (field i32))
  ww::Function f{.type_index = start_type, .locals = {{3990, ww::type::i32}}, .code = {}};
  for (std::size_t i = 0; i < kAllocations; ++i) {
    ww::i32_const(f.code, static_cast<std::int32_t>(i));
    ww::gc(f.code, 0x00, s);  // struct.new
    f.code.push_back(0x1a);   // drop
  }
  m.functions.push_back(std::move(f));
  export_start(m, 0);
  return m.build();
}

struct Shape {
  const char* name;
  std::function<std::vector<std::uint8_t>()> build;
  // Every function over the compile budget: an ahead-of-time compile leaves them all out. The
  // million small functions and the eight bodies of 1 MiB are within it (the module budget and
  // the compile memory limit are the lazy path's), and their ahead-of-time compile is linear but
  // long, bounded by its own limits.
  bool all_over_the_budget = true;
  // The peak resident growth a run may cause. The million functions: about 200 MiB is the module
  // itself (decoded, with the interpreter's state of every function), and on the compile tier the
  // lazy path's IR of the first 10,000 of them (kLazyModuleBudget, about 18 KB each) comes on top.
  std::uint64_t max_growth = 256 * kMiB;
  // SandboxConfig::compile_memory_bytes for the shape (0: the default).
  std::uint64_t compile_memory = 0;
};

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> all{
      {"30,000 nested loops and ifs", nested_loops_and_ifs_module},
      {"300,000 nested blocks left by br_if", nested_branching_blocks_module},
      {"a br_table of 1,000,000 targets", million_target_br_table_module},
      {"a signature of 20,000 values", huge_signature_module},
      {"4,000 locals across 1,000 nested loops", locals_across_nested_loops_module},
      {"one body of 10 MiB", ten_mebibyte_body_module},
      {"50,000 locals", fifty_thousand_locals_module},
      {"200,000 v128 instructions", huge_simd_module},
      {"50,000 struct.new/get and array.new/len", huge_gc_module},
      {"1,000 struct.new with 3,990 locals", gc_with_a_big_frame_module},
      {"eight bodies of 1 MiB, under a 128 MiB compile memory limit", eight_mebibyte_bodies_module, false, 256 * kMiB,
       128 * kMiB},
      // Last: the heap its run leaves to malloc would hide the resident growth of a shape after it.
      {"1,000,000 small functions", many_small_functions_module, false, 512 * kMiB},
  };
  return all;
}

// Forty functions within the budget but costly for LLVM (1,900 nested loops and ifs each, about
// 0.1-0.2 s of LLVM each), each called once by _start.
std::vector<std::uint8_t> costly_functions_module() {
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  const std::uint32_t type = m.add_type({});
  constexpr std::uint32_t kFunctions = 40;
  for (std::uint32_t i = 0; i < kFunctions; ++i)
    m.functions.push_back(ww::Function{.type_index = type, .locals = {{1, ww::type::i32}}, .code = nested_loops_and_ifs(1900)});
  ww::Function start{.type_index = type, .locals = {}, .code = {}};
  for (std::uint32_t i = 0; i < kFunctions; ++i) ww::op_index(start.code, 0x10, i);
  m.functions.push_back(std::move(start));
  export_start(m, kFunctions);
  return m.build();
}

class CompileBudget : public ::testing::TestWithParam<ExecutionTier> {
 protected:
  // Compiles `module` ahead of time into a cache in `dir` (metered): within a 10 s deadline and
  // 256 MiB, nothing may be compiled, and a run from that entry must end with the guest's
  // success. The functions the compile saw (0 when a check failed).
  static std::size_t precompile_none_then_run(Scratch& dir, const std::vector<std::uint8_t>& module) {
    const auto wasm = dir.write("module.wasm", module);
    runtime::SandboxConfig c = config(10s);
    c.code_cache_dir = dir.path() / "cache";
    Bounds bounds(10.0, 256 * kMiB);
    auto report = runtime::precompile_module(wasm, c, /*metered=*/true, /*unmetered=*/false);
    EXPECT_TRUE(report.has_value()) << report.error().to_string();
    if (!report.has_value() || report->size() != 1U) {
      ADD_FAILURE() << "expected one cache entry";
      return 0;
    }
    EXPECT_EQ((*report)[0].compiled, 0U);
    WasmSandbox sandbox(c);
    auto outcome = sandbox.run(job(wasm, 100'000'000));
    EXPECT_TRUE(outcome.has_value()) << outcome.error().to_string();
    if (outcome.has_value()) {
      EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
    }
    bounds.check();
    return (*report)[0].functions;
  }
  void SetUp() override {
    if (!runtime::wasm_sandbox_has_compiled_tier()) GTEST_SKIP() << "no compiled tier in this build";
  }
  [[nodiscard]] static runtime::SandboxConfig config(std::chrono::nanoseconds timeout) {
    runtime::SandboxConfig c;
    c.tier = GetParam();
    c.timeout = timeout;
    return c;
  }
};
INSTANTIATE_TEST_SUITE_P(Tiers, CompileBudget, ::testing::Values(ExecutionTier::Compile, ExecutionTier::Auto),
                         [](const ::testing::TestParamInfo<ExecutionTier>& info) {
                           return info.param == ExecutionTier::Compile ? std::string("compile") : std::string("auto");
                         });

TEST_P(CompileBudget, HostileShapesEndWithinTheirDeadlineWithTheGuestsOutcome) {
  for (const Shape& shape : shapes()) {
    SCOPED_TRACE(shape.name);
    Scratch dir;
    const auto wasm = dir.write("shape.wasm", shape.build());
    runtime::SandboxConfig c = config(10s);
    if (shape.compile_memory != 0) c.compile_memory_bytes = shape.compile_memory;
    WasmSandbox sandbox(c);
    // The deadline the job was given is the bound: the module's bytes, its translation and the
    // interpreter's run are all that remain of it.
    Bounds bounds(10.0, shape.max_growth);
    auto outcome = sandbox.run(job(wasm, 100'000'000));
    ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
    EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
    bounds.check();
  }
}

// Filled ahead of time (`sprawl compile`): the functions over the budget are left out of the entry,
// and a run from it (auto and compile) still ends with the guest's outcome.
TEST_P(CompileBudget, APrecompiledModuleLeavesFunctionsOverTheBudgetInterpreted) {
  Scratch dir;
  EXPECT_EQ(precompile_none_then_run(dir, nested_loops_and_ifs_module()), 1U);
}

// The shapes whose functions are all over the budget, compiled ahead of time (`sprawl compile`):
// nothing is compiled, within the bounds, and a run from the cache entry ends with the guest's
// outcome within them too.
TEST_P(CompileBudget, HostileShapesCompiledAheadOfTimeStayInterpretedWithinTheirBounds) {
  for (const Shape& shape : shapes()) {
    if (!shape.all_over_the_budget) continue;
    SCOPED_TRACE(shape.name);
    Scratch dir;
    EXPECT_GE(precompile_none_then_run(dir, shape.build()), 1U);
  }
}

// Forty costly functions (costly_functions_module), each called once: compiling them all takes
// seconds; a job given 300 ms ends DeadlineExceeded soon after it (compile), or runs them
// interpreted well within it (auto).
TEST_P(CompileBudget, AJobWhoseCompilationPassesItsDeadlineEndsThere) {
  Scratch dir;
  const auto wasm = dir.write("many.wasm", costly_functions_module());
  WasmSandbox sandbox(config(300ms));
  Bounds bounds(10.0, 512 * kMiB);
  auto outcome = sandbox.run(job(wasm, 100'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  if (GetParam() == ExecutionTier::Compile) {
    EXPECT_EQ(trap_message(*outcome), "deadline exceeded");
  } else {
    EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
  }
  bounds.check();
}

// The files under `dir` (a cache folder after a stopped compile holds none, not even a temporary).
std::size_t regular_files(const std::filesystem::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
       it.increment(ec))
    if (it->is_regular_file()) ++n;
  return n;
}

// Forty costly functions (costly_functions_module) compiled ahead of time under limits it passes at
// once: the compile stops cleanly, the error names the limit and the function, and the cache
// folder holds nothing, not even a temporary file.
TEST(CompileLimits, AnAheadOfTimeCompilePastALimitStopsNamingItAndWritesNothing) {
  if (!runtime::wasm_sandbox_has_compiled_tier()) GTEST_SKIP() << "no compiled tier in this build";
  Scratch dir;
  const auto wasm = dir.write("many.wasm", costly_functions_module());
  runtime::SandboxConfig c;
  c.code_cache_dir = dir.path() / "cache";
  struct Limit {
    const char* says;
    runtime::PrecompileOptions options;
  };
  runtime::PrecompileOptions timed;
  timed.time_limit = std::chrono::nanoseconds(1);
  runtime::PrecompileOptions small;
  small.memory_limit = 1;
  for (const Limit& limit : {Limit{"stopped past the compile time limit of 1e-09 s while ", timed},
                             Limit{"stopped past the compile memory limit of 1 bytes (the heap had grown by ", small}}) {
    for (const unsigned jobs : {1U, 2U}) {
      runtime::PrecompileOptions options = limit.options;
      options.jobs = jobs;
      Bounds bounds(10.0, 512 * kMiB);
      auto report = runtime::precompile_module(wasm, c, /*metered=*/true, /*unmetered=*/true, options);
      ASSERT_FALSE(report.has_value());
      EXPECT_EQ(report.error().code, runtime::ErrorCode::SandboxHost);
      EXPECT_NE(report.error().message.find(limit.says), std::string::npos) << report.error().to_string();
      EXPECT_NE(report.error().message.find(" function "), std::string::npos) << report.error().to_string();
      EXPECT_EQ(regular_files(c.code_cache_dir), 0U);
      bounds.check();
    }
  }
}

// The million small functions ahead of time (`sprawl compile`): each is within the budget, and
// LLVM's fixed cost per function (about 1.5 ms) makes the whole compile linear but long, so its
// time limit is what ends it: cleanly, naming the limit and the function it reached, with
// nothing written, within a few seconds of the limit and 1 GiB (measured: 500 MiB, of which the
// decoded module is about 200 MiB and every function's internal code and scan most of the rest).
TEST(CompileLimits, AMillionFunctionsAheadOfTimeStopAtTheTimeLimitNamingItAndWriteNothing) {
  if (!runtime::wasm_sandbox_has_compiled_tier()) GTEST_SKIP() << "no compiled tier in this build";
  Scratch dir;
  const auto wasm = dir.write("million.wasm", many_small_functions_module());
  runtime::SandboxConfig c;
  c.code_cache_dir = dir.path() / "cache";
  runtime::PrecompileOptions options;
  options.time_limit = std::chrono::seconds(2);
  options.jobs = 2;
  Bounds bounds(15.0, 1024 * kMiB);
  auto report = runtime::precompile_module(wasm, c, /*metered=*/true, /*unmetered=*/false, options);
  ASSERT_FALSE(report.has_value());
  EXPECT_NE(report.error().message.find("stopped past the compile time limit of 2 s while "), std::string::npos)
      << report.error().to_string();
  EXPECT_NE(report.error().message.find(" function "), std::string::npos) << report.error().to_string();
  EXPECT_EQ(regular_files(c.code_cache_dir), 0U);
  bounds.check();
}

}  // namespace
}  // namespace sprawling::hostile
