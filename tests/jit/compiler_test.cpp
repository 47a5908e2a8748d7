// The compiled tier's compiler (src/wasm/jit/scan.cpp, emitter.cpp, compiler.cpp): which functions it compiles, and that
// compiled code gives the interpreter's results, traps and exact fuel, metered and unmetered.
#include "jit/tier_fixture.hpp"
#include "sandbox/engine_code_cache.hpp"
#include "wasm/jit/jit.hpp"
#include "wasm/runtime/cancel.hpp"
#include "wasm/table64_grow_module.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <unistd.h>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>

namespace sprawling::wasm {
namespace {

using jit_testing::compile_wat;
using jit_testing::expect_all_compiled;
using jit_testing::dumped_ir;
using jit_testing::DumpedLine;
using jit_testing::MemoryCache;
using jit_testing::Outcome;
using jit_testing::run;
using jit_testing::tiers_agree;

// Loops, calls (direct, indirect, host), memory, globals, br_table, traps.
constexpr std::string_view kWorkload = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (memory 1 4)
  (global $g (mut i32) (i32.const 7))
  (table 2 funcref)
  (elem (i32.const 0) $sq $fib)
  (type $ii (func (param i32) (result i32)))
  (func $sq (type $ii) (i32.mul (local.get 0) (local.get 0)))
  (func $fib (export "fib") (param i32) (result i32)
    (if (result i32) (i32.lt_u (local.get 0) (i32.const 2))
      (then (local.get 0))
      (else (i32.add (call $fib (i32.sub (local.get 0) (i32.const 1)))
                     (call $fib (i32.sub (local.get 0) (i32.const 2)))))))
  ;; sum of i*i for i < n through memory, a global, the host and call_indirect.
  (func $work (export "work") (param $n i32) (result i64)
    (local $i i32) (local $acc i64)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store (i32.mul (i32.rem_u (local.get $i) (i32.const 1000)) (i32.const 4))
                   (call_indirect (type $ii) (local.get $i) (i32.const 0)))
        (local.set $acc (i64.add (local.get $acc)
          (i64.extend_i32_u (i32.load (i32.mul (i32.rem_u (local.get $i) (i32.const 1000)) (i32.const 4))))))
        (global.set $g (call $add1 (global.get $g)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (i64.add (local.get $acc) (i64.extend_i32_u (global.get $g))))
  (func (export "switch") (param i32) (result i32)
    (block $c (block $b (block $a
      (br_table $a $b $c (local.get 0)))
      (return (i32.const 10)))
      (return (i32.const 20)))
    (i32.const 30))
  (func (export "div") (param i32 i32) (result i32) (i32.div_s (local.get 0) (local.get 1)))
  (func (export "load") (param i32) (result i64) (i64.load offset=8 (local.get 0)))
  (func (export "grow") (param i32) (result i32) (drop (memory.grow (local.get 0))) (memory.size))
  (func (export "fdiv") (param f64 f64) (result f64) (f64.div (local.get 0) (local.get 1)))
  (func (export "trunc") (param f32) (result i32) (i32.trunc_f32_s (local.get 0)))
  (func (export "fill") (param i32) (memory.fill (i32.const 0) (local.get 0) (i32.const 16)))
  (func (export "deep") (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0)) (then (i32.const 0))
      (else (i32.add (i32.const 1) (call 11 (i32.sub (local.get 0) (i32.const 1)))))))
  ;; bulk memory (charged per byte) and table instructions
  (func (export "bulk") (param $n i32) (param $dst i32) (result i32)
    (memory.fill (i32.const 100) (i32.const 7) (local.get $n))
    (memory.copy (local.get $dst) (i32.const 100) (local.get $n))
    (drop (table.grow (ref.null func) (i32.const 3)))
    (table.set (i32.const 2) (table.get (i32.const 1)))
    (i32.add (table.size) (i32.load8_u (local.get $dst)))))
)";

class CompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = compile_wat(kWorkload);
    ASSERT_NE(module_, nullptr);
  }
  void same(std::string_view name, const std::vector<Value>& args, std::optional<std::uint64_t> fuel) {
    const Outcome want = run(module_, Tier::Interpret, name, args, fuel);
    const Outcome got = run(module_, Tier::Compile, name, args, fuel);
    EXPECT_EQ(want, got) << name << " fuel " << (fuel ? static_cast<long long>(*fuel) : -1);
  }
  std::shared_ptr<const CompiledModule> module_;
};

TEST_F(CompilerTest, CompilesEveryFunction) { expect_all_compiled(*module_); }

TEST_F(CompilerTest, ResultsAndFuelMatchTheInterpreter) {
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    same("fib", {Value::i32(15)}, fuel);
    same("work", {Value::i32(3000)}, fuel);
    for (std::uint32_t i = 0; i < 5; ++i) same("switch", {Value::i32(i)}, fuel);
    same("div", {Value::i32(7), Value::i32(2)}, fuel);
    same("load", {Value::i32(16)}, fuel);
    same("grow", {Value::i32(2)}, fuel);
    same("grow", {Value::i32(9)}, fuel);
    same("fdiv", {Value::f64_bits(0x4000000000000000u), Value::f64_bits(0)}, fuel);
    same("trunc", {Value::f32_bits(0x42f60000u)}, fuel);
    same("fill", {Value::i32(3)}, fuel);
    same("deep", {Value::i32(1000)}, fuel);
    same("bulk", {Value::i32(100), Value::i32(200)}, fuel);
    same("bulk", {Value::i32(100), Value::i32(65500)}, fuel);
  }
  const Outcome o = run(module_, Tier::Compile, "fib", {Value::i32(20)}, std::nullopt);
  ASSERT_EQ(o.trap, TrapKind::None);
  EXPECT_EQ(o.results[0].bits, 6765u);
}

TEST_F(CompilerTest, TrapsMatchTheInterpreterInKindFunctionAndOffset) {
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    same("div", {Value::i32(7), Value::i32(0)}, fuel);
    same("div", {Value::i32(0x80000000u), Value::i32(0xFFFFFFFFu)}, fuel);
    same("load", {Value::i32(65536 - 8)}, fuel);
    same("load", {Value::i32(0xFFFFFFF0u)}, fuel);
    same("trunc", {Value::f32_bits(0x7fc00000u)}, fuel);
    same("trunc", {Value::f32_bits(0x4f000000u)}, fuel);
  }
  const Outcome o = run(module_, Tier::Compile, "div", {Value::i32(1), Value::i32(0)}, std::nullopt);
  EXPECT_EQ(o.trap, TrapKind::IntegerDivideByZero);
  EXPECT_EQ(o.func_index, 5u);
  EXPECT_GT(o.offset, 0u);
}

// Every budget from 1 up past what the run needs stops at the same point with the same figure:
// the entry checks, the loop headers and the call entries see the same balance in both tiers.
TEST_F(CompilerTest, OutOfFuelStopsAtTheSamePointForEveryBudget) {
  const Outcome full = run(module_, Tier::Interpret, "work", {Value::i32(20)}, std::uint64_t{1} << 30);
  ASSERT_EQ(full.trap, TrapKind::None);
  for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
    same("work", {Value::i32(20)}, budget);
    if (HasFailure()) return;
  }
  const Outcome bulk = run(module_, Tier::Interpret, "bulk", {Value::i32(300), Value::i32(8)}, std::uint64_t{1} << 30);
  for (std::uint64_t budget = 1; budget <= bulk.fuel + 2; ++budget) {
    same("bulk", {Value::i32(300), Value::i32(8)}, budget);
    if (HasFailure()) return;
  }
  const Outcome fib = run(module_, Tier::Interpret, "fib", {Value::i32(6)}, std::uint64_t{1} << 30);
  for (std::uint64_t budget = 1; budget <= fib.fuel + 2; ++budget) {
    same("fib", {Value::i32(6)}, budget);
    if (HasFailure()) return;
  }
}

TEST_F(CompilerTest, CallStackExhaustedAtTheSameDepthAndFuel) {
  StoreLimits limits;
  limits.max_call_depth = 500;
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    for (std::uint32_t n : {498u, 499u, 500u, 501u, 5000u}) {
      const Outcome want = run(module_, Tier::Interpret, "deep", {Value::i32(n)}, fuel, limits);
      const Outcome got = run(module_, Tier::Compile, "deep", {Value::i32(n)}, fuel, limits);
      EXPECT_EQ(want, got) << n;
    }
  }
  const Outcome o = run(module_, Tier::Compile, "deep", {Value::i32(5000)}, std::nullopt, limits);
  EXPECT_EQ(o.trap, TrapKind::CallStackExhausted);
}

// Code pages are never writable and executable at once: after compiling, no mapping is rwx.
TEST_F(CompilerTest, NoPageIsWritableAndExecutable) {
  ASSERT_GT(module_->impl().jit(kMetered).compiled, 0u);
  ASSERT_GT(module_->impl().jit(kUnmetered).compiled, 0u);
  const Outcome o = run(module_, Tier::Compile, "fib", {Value::i32(10)}, std::nullopt);
  EXPECT_EQ(o.results.at(0).bits, 55u);
  std::ifstream maps("/proc/self/maps");
  ASSERT_TRUE(maps.good());
  std::string line;
  int lines = 0;
  while (std::getline(maps, line)) {
    ++lines;
    // "address perms offset dev inode path": perms is the second field, e.g. "r-xp".
    const auto sp = line.find(' ');
    ASSERT_NE(sp, std::string::npos);
    const std::string perms = line.substr(sp + 1, 4);
    EXPECT_FALSE(perms[1] == 'w' && perms[2] == 'x') << line;
  }
  EXPECT_GT(lines, 0);
}

// The compiler leaves out a bounds check that an earlier access on the same straight-line path
// proved (same address slot, not written since, end not past the proven one): every access still
// traps where the interpreter's does, for addresses walking over the end of memory.
constexpr std::string_view kFields = R"((module
  (memory 1)
  (func (export "fields") (param $p i32) (param $q i32) (result i32)
    (local $s i32)
    (local.set $s (i32.load offset=8 (local.get $p)))
    (local.set $s (i32.add (local.get $s) (i32.load offset=4 (local.get $p))))
    (local.set $s (i32.add (local.get $s) (i32.load8_u offset=11 (local.get $p))))
    (i32.store16 offset=2 (local.get $p) (local.get $s))
    (local.set $s (i32.add (local.get $s) (i64.load32_u offset=12 (local.get $p)) (i32.wrap_i64)))
    (local.set $s (i32.add (local.get $s) (i32.load (i32.add (local.get $q) (i32.const 16)))))
    (local.set $s (i32.add (local.get $s) (i32.load (i32.add (local.get $q) (i32.const 12)))))
    (local.set $s (i32.add (local.get $s) (i32.load (i32.add (local.get $q) (i32.const 20)))))
    (local.set $s (i32.add (local.get $s) (i32.load offset=65520 (i32.const 0))))
    (local.set $s (i32.add (local.get $s) (i32.load offset=65500 (i32.const 0))))
    ;; the address slot written: checked again
    (local.set $p (i32.add (local.get $p) (i32.const 4)))
    (local.set $s (i32.add (local.get $s) (i32.load offset=8 (local.get $p))))
    ;; a join: checked again on the way round
    (block $out (loop $l
      (local.set $s (i32.add (local.get $s) (i32.load offset=4 (local.get $q))))
      (br_if $out (i32.ge_u (local.get $s) (i32.const 100)))
      (local.set $s (i32.add (local.get $s) (i32.const 40)))
      (local.set $q (i32.add (local.get $q) (i32.const 1)))
      (br $l)))
    (local.get $s)))
)";

TEST(CompilerBounds, ProvenChecksLeftOutTrapWhereTheInterpreterDoes) {
  auto module = compile_wat(kFields);
  ASSERT_NE(module, nullptr);
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    for (std::uint32_t p = 65536 - 24; p <= 65536 + 4; ++p) {
      for (std::uint32_t q : {0u, p - 8, p, 0xFFFFFFF0u}) {
        const std::vector<Value> args{Value::i32(p), Value::i32(q)};
        const Outcome want = run(module, Tier::Interpret, "fields", args, fuel);
        const Outcome got = run(module, Tier::Compile, "fields", args, fuel);
        EXPECT_EQ(want, got) << "p " << p << " q " << q;
      }
    }
  }
}

// Accesses no value can put past a memory's minimum size (minimum_bounds.hpp): `table` stores and
// loads at a masked index whose last byte is exactly memory 0's minimum (131,072), `other` the
// same at memory 1's (65,536); `past` and `other_past` end one byte further, so their checks stay
// and trap for the highest index until the memory grows (`grown`).
constexpr std::string_view kMinimumBounds = R"((module
  (memory 2 8)
  (memory $m1 1 4)
  (func $table (export "table") (param $x i32) (result i32)
    (i32.store offset=130048 (i32.shl (i32.and (local.get $x) (i32.const 255)) (i32.const 2)) (local.get $x))
    (i32.load offset=130048 (i32.shl (i32.and (local.get $x) (i32.const 255)) (i32.const 2))))
  (func $past (export "past") (param $x i32) (result i32)
    (i32.store offset=130049 (i32.shl (i32.and (local.get $x) (i32.const 255)) (i32.const 2)) (local.get $x))
    (i32.load offset=130049 (i32.shl (i32.and (local.get $x) (i32.const 255)) (i32.const 2))))
  (func $other (export "other") (param $x i32) (result i32)
    (i32.store $m1 offset=65024 (i32.shl (i32.and (local.get $x) (i32.const 127)) (i32.const 2)) (local.get $x))
    (i32.load $m1 offset=65024 (i32.shl (i32.and (local.get $x) (i32.const 127)) (i32.const 2))))
  (func $other_past (export "other_past") (param $x i32) (result i32)
    (i32.store $m1 offset=65025 (i32.shl (i32.and (local.get $x) (i32.const 127)) (i32.const 2)) (local.get $x))
    (i32.load $m1 offset=65025 (i32.shl (i32.and (local.get $x) (i32.const 127)) (i32.const 2))))
  (func (export "grown") (param $x i32) (result i32)
    (drop (memory.grow (i32.const 1)))
    (drop (memory.grow $m1 (i32.const 1)))
    (i32.add (call $past (local.get $x)) (call $other_past (local.get $x))))
)
)";

TEST(CompilerBounds, ChecksNoAccessCanFailWithinTheMinimumSizeAreLeftOutAndTheOthersTrapAsTheInterpretersDo) {
  auto module = compile_wat(kMinimumBounds);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-minimum-bounds-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  std::vector<std::uint32_t> xs{0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0x12345678u};
  for (std::uint32_t x = 0; x <= 300; ++x) xs.push_back(x);
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20}}) {
    // The unmetered code's IR is the one read below (each variant writes the same file names).
    if (!fuel) ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
    for (const char* name : {"table", "past", "other", "other_past", "grown"}) {
      for (std::uint32_t x : xs) {
        const std::vector<Value> args{Value::i32(x)};
        const Outcome want = run(module, Tier::Interpret, name, args, fuel);
        const Outcome got = run(module, Tier::Compile, name, args, fuel);
        EXPECT_EQ(want, got) << name << " x " << x << (fuel ? " metered" : "");
        // Only the last index of `past` and `other_past` reaches past the memory (its size then
        // is its minimum: each run instantiates anew).
        const std::string_view n(name);
        const std::uint32_t last = n == "past" ? 0xFF : n == "other_past" ? 0x7F : 0;
        EXPECT_EQ(want.trap != TrapKind::None, last != 0 && (x & last) == last) << name << " x " << x;
      }
    }
    ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  }
  // Which functions still have a path to the trap exit (the unmetered code has no other trap), in
  // their entry (`@wasm_f<d>`) or their body (`@wasm_r<d>`, made for the ones `grown` calls).
  std::set<std::string> trapping;
  for (const DumpedLine& at : dumped_ir(dump))
    if (at.block == "trap") trapping.insert(at.function.substr(std::string_view("@wasm_f").size()));
  std::filesystem::remove_all(dump);
  EXPECT_FALSE(trapping.contains("0")) << "table";
  EXPECT_TRUE(trapping.contains("1")) << "past";
  EXPECT_FALSE(trapping.contains("2")) << "other";
  EXPECT_TRUE(trapping.contains("3")) << "other_past";
}

// Loops whose accesses step through memory run a copy without bounds checks when one test at
// the loop's entry proves every iteration it can run stays in bounds (loop_versioning.cpp), and
// the loop as written otherwise: a loop that walks off either end of memory, or whose i32
// address wraps, traps at the interpreter's offset and leaves the interpreter's memory behind,
// metered or not, also out of fuel part way through.
constexpr std::string_view kStrides = R"((module
  (memory 1)
  ;; up: stores 3i at p + 4i + 8 and sums 16-bit loads of what it stored, for i < n
  (func (export "up") (param $p i32) (param $n i32) (result i32)
    (local $i i32) (local $s i32)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store offset=8 (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2)))
                  (i32.mul (local.get $i) (i32.const 3)))
        (local.set $s (i32.add (local.get $s)
          (i32.load16_u offset=8 (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $s))
  ;; down: byte stores at p - i, i < n (the address wraps below 0 when n > p + 1)
  (func (export "down") (param $p i32) (param $n i32) (result i32)
    (local $i i32) (local $s i32)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.sub (local.get $p) (local.get $i)) (local.get $i))
        (local.set $s (i32.add (local.get $s) (i32.load8_u (i32.sub (local.get $p) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $s))
  ;; a checksum of the whole memory, itself a versioned loop
  (func (export "sum") (result i64)
    (local $a i32) (local $s i64)
    (loop $top
      (local.set $s (i64.add (i64.rotl (local.get $s) (i64.const 5)) (i64.load (local.get $a))))
      (local.set $a (i32.add (local.get $a) (i32.const 8)))
      (br_if $top (i32.lt_u (local.get $a) (i32.const 65536))))
    (local.get $s))
)
)";

struct StridesRun {
  Outcome walk;
  Outcome sum;
  friend bool operator==(const StridesRun&, const StridesRun&) = default;
};
std::ostream& operator<<(std::ostream& os, const StridesRun& r) {
  return os << r.walk << " then sum " << r.sum;
}

// Runs `name`(p, n) under `fuel`, then the memory checksum (unmetered) in the same instance.
StridesRun run_strides(const std::shared_ptr<const CompiledModule>& module, Tier tier, std::string_view name,
                       std::uint32_t p, std::uint32_t n, std::optional<std::uint64_t> fuel) {
  Store store;
  EXPECT_TRUE(store.set_tier(tier));
  Linker linker;
  auto imports = linker.resolve(module->module());
  EXPECT_TRUE(imports.has_value());
  auto inst = store.instantiate(module, *imports);
  EXPECT_TRUE(inst.has_value());
  if (!inst) return {};
  StridesRun r;
  store.set_budget({fuel, std::nullopt});
  const std::vector<Value> args{Value::i32(p), Value::i32(n)};
  r.walk = jit_testing::outcome_of(store, store.invoke(std::get<FuncInst*>(*(*inst)->find_export(name)), args));
  store.set_budget({std::nullopt, std::nullopt});
  r.sum = jit_testing::outcome_of(store, store.invoke(std::get<FuncInst*>(*(*inst)->find_export("sum")), {}));
  return r;
}

// `up` and `down` at (p, n) under `fuel` on both tiers, each expected to give the interpreter's
// outcome; returns how many pairs ran.
int compare_strides(const std::shared_ptr<const CompiledModule>& module, std::uint32_t p, std::uint32_t n,
                    std::optional<std::uint64_t> fuel) {
  int compared = 0;
  for (const char* name : {"up", "down"}) {
    const StridesRun want = run_strides(module, Tier::Interpret, name, p, n, fuel);
    const StridesRun got = run_strides(module, Tier::Compile, name, p, n, fuel);
    EXPECT_EQ(want, got) << name << " p " << p << " n " << n << " fuel " << (fuel ? *fuel : 0);
    ++compared;
  }
  return compared;
}

// The functions of the optimized IR dumped into `dump` (SPRAWLING_JIT_DUMP_IR) that have a block
// whose label contains `marker`: `.checked:` for loop versioning's checked copy, `.epil` for the
// remainder loop of a loop unrolled at run time.
std::set<std::string> functions_with_blocks(const std::filesystem::path& dump, std::string_view marker) {
  std::set<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dump)) {
    std::ifstream in(entry.path());
    std::string line;
    std::string function;
    while (std::getline(in, line)) {
      if (line.starts_with("define ")) function = line.substr(line.find('@'), line.find('(') - line.find('@'));
      if (!line.starts_with(" ") && line.find(marker) != std::string::npos) found.insert(function);
    }
  }
  return found;
}

TEST(CompilerBounds, SteppingLoopsRunUncheckedOnlyWhenProvenAndTrapWhereTheInterpreterDoes) {
  auto module = compile_wat(kStrides);
  ASSERT_NE(module, nullptr);
  // The optimized IR of what the compiled runs below compile, to see the check-free copies made.
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-strides-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
  int compared = 0;
  for (std::optional<std::uint64_t> fuel :
       {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}, std::optional<std::uint64_t>{900}}) {
    for (std::uint32_t n : {0u, 1u, 7u, 100u}) {
      for (std::uint32_t p : {0u, 3u, 100u, 65536u - 8 - 4 * n, 65536u - 8 - 4 * n + 1, 65536u - 4 * n, 65530u,
                              0xFFFFFFF0u})
        compared += compare_strides(module, p, n, fuel);
    }
  }
  ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  // Each of the three functions got a checked copy of its loop beside the check-free one (the
  // copy's blocks are named `<block>.checked`).
  const std::set<std::string> versioned = functions_with_blocks(dump, ".checked:");
  std::filesystem::remove_all(dump);
  EXPECT_EQ(compared, 3 * 4 * 8 * 2);
  EXPECT_EQ(versioned.size(), 3u);
}

// After the loop vectorizer, a check-free copy goes through LLVM's loop unroller (compiler.cpp,
// VersionLoopsOnRangeChecks): `down`'s copy (byte stores and loads stepping down) is unrolled at
// run time, with a remainder loop for the iterations left over. Every count from 0 to 20 (each
// remainder of the unrolled body), from addresses near both ends of memory and across the i32
// wrap, gives the interpreter's results, traps and memory, unmetered and metered.
TEST(CompilerBounds, UnrolledCheckFreeLoopsAgreeWithTheInterpreterForEveryRemainder) {
  auto module = compile_wat(kStrides);
  ASSERT_NE(module, nullptr);
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-unrolled-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  int compared = 0;
  const auto compare = [&](std::optional<std::uint64_t> fuel) {
    for (std::uint32_t n = 0; n <= 20; ++n) {
      for (std::uint32_t p : {0u, 5u, 19u, 20u, 1000u, 65535u, 65536u - 8 - 4 * n, 65536u - 7 - 4 * n, 0xFFFFFFF8u})
        compared += compare_strides(module, p, n, fuel);
    }
  };
  // The unmetered code's optimized IR (each variant is compiled at its first run).
  ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
  compare(std::nullopt);
  ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  // `down` (defined function 1; `wasm_f1` when compiled lazily, `wasm_r1` in a whole-module
  // partition) has a remainder loop.
  const std::set<std::string> unrolled = functions_with_blocks(dump, ".epil");
  std::filesystem::remove_all(dump);
#if defined(__x86_64__)  // where the target's cost model enables runtime unrolling
  EXPECT_TRUE(unrolled.contains("@wasm_f1") || unrolled.contains("@wasm_r1"));
#else
  (void)unrolled;
#endif
  compare(std::optional<std::uint64_t>{1u << 30});
  compare(std::optional<std::uint64_t>{700});
  EXPECT_EQ(compared, 3 * 21 * 9 * 2);
}

// Random loops of the shapes loop versioning rewrites (a counter up or down, accesses of every
// width at p + i*stride + c with offsets), run from addresses near both ends of memory and
// across the i32 wrap with short and long counts: both tiers give the same trap (kind, function,
// offset), fuel and memory, and most modules got check-free copies.
// Joins its pieces into one string.
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

std::string random_stride_module(std::mt19937& rng) {
  const auto pick = [&rng](std::initializer_list<std::int64_t> v) { return *(v.begin() + rng() % v.size()); };
  const std::string stride = std::to_string(pick({-8, -4, -2, -1, 1, 2, 3, 4, 8, 16}));
  std::string body;
  const int accesses = 1 + static_cast<int>(rng() % 4);
  for (int a = 0; a < accesses; ++a) {
    const std::string c = std::to_string(pick({0, 4, -4, 16}));
    const std::string addr =
        cat({"(i32.add (i32.add (local.get $p) (i32.mul (local.get $i) (i32.const ", stride, "))) (i32.const ", c, "))"});
    const std::string offset = cat({"offset=", std::to_string(pick({0, 1, 3, 8, 100, 4096, 65535, 65536}))});
    const std::string at = cat({offset, " ", addr});
    switch (rng() % 8) {
      case 0: body.append(cat({"(local.set $s (i32.add (local.get $s) (i32.load8_u ", at, ")))\n"})); break;
      case 1: body.append(cat({"(local.set $s (i32.add (local.get $s) (i32.load16_s ", at, ")))\n"})); break;
      case 2: body.append(cat({"(local.set $s (i32.add (local.get $s) (i32.load ", at, ")))\n"})); break;
      case 3: body.append(cat({"(local.set $s (i32.add (local.get $s) (i32.wrap_i64 (i64.load ", at, "))))\n"})); break;
      case 4: body.append(cat({"(i32.store8 ", at, " (local.get $i))\n"})); break;
      case 5: body.append(cat({"(i32.store16 ", at, " (local.get $i))\n"})); break;
      case 6: body.append(cat({"(i32.store ", at, " (local.get $i))\n"})); break;
      default: body.append(cat({"(i64.store ", at, " (i64.extend_i32_u (local.get $i)))\n"})); break;
    }
  }
  const std::string loop =
      rng() % 2 == 0
          ? cat({"(block $done (loop $top\n (br_if $done (i32.ge_u (local.get $i) (local.get $n)))\n", body,
                 " (local.set $i (i32.add (local.get $i) (i32.const 1)))\n (br $top)))\n"})
          : cat({"(local.set $i (local.get $n))\n(block $done (loop $top\n (br_if $done (i32.eqz (local.get $i)))\n"
                 " (local.set $i (i32.sub (local.get $i) (i32.const 1)))\n",
                 body, " (br $top)))\n"});
  return cat({"(module (memory 1)\n(func (export \"walk\") (param $p i32) (param $n i32) (result i32) (local $i i32) "
              "(local $s i32)\n",
              loop, "(local.get $s))\n",
              R"((func (export "sum") (result i64) (local $a i32) (local $s i64)
    (loop $top
      (local.set $s (i64.add (i64.rotl (local.get $s) (i64.const 5)) (i64.load (local.get $a))))
      (local.set $a (i32.add (local.get $a) (i32.const 8)))
      (br_if $top (i32.lt_u (local.get $a) (i32.const 65536))))
    (local.get $s)))
)"});
}

TEST(CompilerBounds, RandomSteppingLoopsMatchTheInterpreter) {
  std::mt19937 rng(20261204);
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-random-strides-" + std::to_string(::getpid()));
  constexpr int kModules = 40;
  int versioned_modules = 0;
  for (int m = 0; m < kModules; ++m) {
    const std::string wat = random_stride_module(rng);
    auto module = compile_wat(wat);
    ASSERT_NE(module, nullptr) << wat;
    const std::filesystem::path dir = dump / std::to_string(m);
    std::filesystem::create_directories(dir);
    ::setenv("SPRAWLING_JIT_DUMP_IR", dir.c_str(), 1);
    for (std::optional<std::uint64_t> fuel :
         {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}, std::optional<std::uint64_t>{700}}) {
      for (std::uint32_t n : {0u, 5u, 16u, 17u, 300u}) {
        for (std::uint32_t p : {0u, 3u, 32768u, 65536u - 8 * n - 16, 65536u - 8 * n, 65536u - n, 8 * n,
                                0xFFFFFFF0u, 0xFFFFFFFFu - 4 * n}) {
          const StridesRun want = run_strides(module, Tier::Interpret, "walk", p, n, fuel);
          const StridesRun got = run_strides(module, Tier::Compile, "walk", p, n, fuel);
          ASSERT_EQ(want, got) << wat << "p " << p << " n " << n << " fuel " << (fuel ? *fuel : 0);
        }
      }
    }
    ::unsetenv("SPRAWLING_JIT_DUMP_IR");
    // Only walk's own code (defined function 0) counts.
    const std::set<std::string> versioned = functions_with_blocks(dir, ".checked:");
    versioned_modules += versioned.contains("@wasm_f0") || versioned.contains("@wasm_r0") ? 1 : 0;
  }
  std::filesystem::remove_all(dump);
  EXPECT_GE(versioned_modules, kModules / 2);
}

// Metered counted loops: the copy without checks also leaves out the loop's fuel checks when the
// entry test proves the counter covers every iteration the loop can run (loop_versioning.cpp,
// "Fuel checks"); otherwise the loop as written refuels, runs out or meets its deadline where the
// interpreter does. `count` has no other check to remove, `fill` has bounds checks too,
// `branchy` charges its two arms differently (its counter is bounded by two recurrences), and
// `calls` reloads its counter after each call, so its fuel checks stay.
constexpr std::string_view kMeteredLoops = R"((module
  (memory 1)
  (func (export "count") (param $n i32) (result i64)
    (local $i i32) (local $s i64)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i64.add (i64.mul (local.get $s) (i64.const 31)) (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $s))
  (func (export "fill") (param $n i32) (result i64)
    (local $i i32) (local $s i64)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store offset=16 (i32.shl (local.get $i) (i32.const 2)) (local.get $i))
        (local.set $s (i64.add (local.get $s) (i64.load32_u offset=12 (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $s))
  (func (export "branchy") (param $n i32) (result i64)
    (local $i i32) (local $s i64)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.and (local.get $i) (i32.const 1))
          (then (local.set $s (i64.add (local.get $s) (i64.const 3))))
          (else (local.set $s (i64.mul (i64.add (local.get $s) (i64.const 1)) (i64.const 7)))))
        (i32.store (i32.shl (i32.and (local.get $i) (i32.const 255)) (i32.const 2)) (local.get $i))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $s))
  (func $twice (param i64) (result i64) (i64.shl (local.get 0) (i64.const 1)))
  (func (export "calls") (param $n i32) (result i64)
    (local $i i32) (local $s i64)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i64.add (call $twice (local.get $s)) (i64.extend_i32_u (local.get $i))))
        (i32.store (i32.shl (i32.and (local.get $i) (i32.const 255)) (i32.const 2)) (local.get $i))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $s))
)
)";

// One call of `name(n)` in a new store under `budget`; "env" "add1" is the host's.
Outcome run_budget(const std::shared_ptr<const CompiledModule>& module, Tier tier, std::string_view name, std::uint32_t n,
                   ExecutionBudget budget) {
  Store store;
  EXPECT_TRUE(store.set_tier(tier));
  Linker linker;
  linker.define("env", "add1",
                store.add_host_function(FuncType{{ValType::I32}, {ValType::I32}}, jit_testing::host_add1, nullptr, "add1"));
  auto imports = linker.resolve(module->module());
  EXPECT_TRUE(imports.has_value());
  auto inst = store.instantiate(module, *imports);
  EXPECT_TRUE(inst.has_value());
  if (!inst) return {};
  store.set_budget(budget);
  const std::vector<Value> args{Value::i32(n)};
  return jit_testing::outcome_of(store, store.invoke(std::get<FuncInst*>(*(*inst)->find_export(name)), args));
}

// `name`(n) agrees between the tiers (results, trap, fuel) under each of `budgets`.
void expect_tiers_agree(const std::shared_ptr<const CompiledModule>& module, const char* name, std::uint32_t n,
                        std::span<const ExecutionBudget> budgets, std::string_view context = {}) {
  for (const ExecutionBudget& budget : budgets) {
    const Outcome want = run_budget(module, Tier::Interpret, name, n, budget);
    const Outcome got = run_budget(module, Tier::Compile, name, n, budget);
    EXPECT_EQ(want, got) << name << " n " << n << " fuel " << (budget.fuel ? *budget.fuel : 0)
                         << (budget.deadline ? " with a deadline" : "") << context;
  }
}

// Each export in `names`, called with each n of `ns`, agrees between the tiers (results, trap,
// fuel) under budgets that run out at each of the first `edge` units and of the last `edge`
// units it needs, whole and in deadline-sized chunks (a deadline an hour away: the counter then
// holds one chunk of the budget at a time, Store::Impl::refuel).
void expect_tiers_agree_near_each_check(const std::shared_ptr<const CompiledModule>& module,
                                        std::initializer_list<const char*> names,
                                        std::initializer_list<std::uint32_t> ns, std::uint64_t edge) {
  const auto later = std::chrono::steady_clock::now() + std::chrono::hours(1);
  for (const char* name : names) {
    for (const std::uint32_t n : ns) {
      const Outcome all = run_budget(module, Tier::Interpret, name, n, {std::uint64_t{1} << 40, std::nullopt});
      ASSERT_EQ(all.trap, TrapKind::None) << name << " n " << n;
      const std::uint64_t need = all.fuel;
      std::vector<ExecutionBudget> budgets{{std::nullopt, std::nullopt},
                                           {std::uint64_t{1} << 40, std::nullopt},
                                           {std::uint64_t{1} << 40, later},
                                           {need / 2, std::nullopt},
                                           {need / 3, later}};
      for (std::uint64_t k = 0; k <= edge; ++k) {
        budgets.push_back({k, std::nullopt});
        if (k <= need) budgets.push_back({need - k, std::nullopt});
      }
      expect_tiers_agree(module, name, n, budgets);
    }
  }
}

// The functions of the IR dumped into `dump` that call `callee` (as "@name(") from a block outside
// their checked copy (whose block labels end `.checked`).
std::set<std::string> calling_outside_checked_copy(const std::filesystem::path& dump, std::string_view callee) {
  std::set<std::string> found;
  for (const DumpedLine& at : dumped_ir(dump)) {
    if (at.line.find(callee) != std::string::npos && !at.block.ends_with(".checked")) found.insert(at.function);
  }
  return found;
}

TEST(CompilerBounds, MeteredCountedLoopsLeaveOutFuelChecksOnlyWhenTheCounterCoversEveryIteration) {
  auto module = compile_wat(kMeteredLoops);
  ASSERT_NE(module, nullptr);
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-metered-loops-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
  // A deadline an hour away: the counter then holds at most one chunk of the budget at a time
  // (Store::Impl::refuel), so long loops ask for more at their entry or take the checked copy
  // and refuel part way.
  const auto later = std::chrono::steady_clock::now() + std::chrono::hours(1);
  for (const char* name : {"count", "fill", "branchy", "calls"}) {
    for (std::uint32_t n : {0u, 15u, 16u, 17u, 1000u, 6000u, 16000u}) {
      const Outcome all = run_budget(module, Tier::Interpret, name, n, {std::uint64_t{1} << 40, std::nullopt});
      ASSERT_EQ(all.trap, TrapKind::None) << name << " n " << n;
      const std::uint64_t need = all.fuel;
      std::vector<ExecutionBudget> budgets{
          {std::nullopt, std::nullopt}, {std::uint64_t{1} << 40, std::nullopt}, {std::uint64_t{1} << 40, later},
          {need / 2, std::nullopt},     {need + 1, later},                       {need - 1, later}};
      // Budgets that leave the counter at the loop's last check just above, at and below what
      // it needs (the loop's exit charges a few units after it).
      for (std::uint64_t k = 0; k <= 12 && k <= need; ++k) budgets.push_back({need - k, std::nullopt});
      expect_tiers_agree(module, name, n, budgets);
    }
  }
  ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  // In the metered code, which functions got a checked copy, and which functions call the refuel
  // helper from a block outside it (block labels end `.checked` in the copy).
  const std::set<std::string> versioned = functions_with_blocks(dump, ".checked:");
  const std::set<std::string> refuels_outside_copy = calling_outside_checked_copy(dump, "@sprawling_jit_refuel(");
  std::filesystem::remove_all(dump);
  for (const auto& [function, name] : {std::pair{"@wasm_f0", "count"}, {"@wasm_f1", "fill"}, {"@wasm_f2", "branchy"}}) {
    EXPECT_TRUE(versioned.contains(function)) << name;
    EXPECT_FALSE(refuels_outside_copy.contains(function)) << name;
  }
  EXPECT_TRUE(refuels_outside_copy.contains("@wasm_f4")) << "calls";
}

// With a deadline the counter holds one chunk of the budget at a time (2^20 units, Store::Impl),
// less than these loops need: their entry asks the store for the rest ahead
// (sprawling_jit_fuel_ahead) and runs the copy without checks when it gets it; when the reserve
// cannot cover the loop, or the store will not give that much at once (more than 2^22 units
// while a cancel flag is installed), the checked copy runs and refuels and runs out where the
// interpreter does. The module is kMeteredLoops with room for `fill` to run longer.
TEST(CompilerBounds, MeteredLoopsUnderADeadlineAskTheStoreForTheFuelTheyNeed) {
  std::string wat(kMeteredLoops);
  wat.replace(wat.find("(memory 1)"), 10, "(memory 8)");
  auto module = compile_wat(wat);
  ASSERT_NE(module, nullptr);
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-fuel-ahead-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
  const auto later = std::chrono::steady_clock::now() + std::chrono::hours(1);
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
  constexpr std::uint64_t kAheadWithCancelFlag = std::uint64_t{1} << 22;
  const std::atomic<bool> not_cancelled{false};
  struct Case {
    const char* name;
    std::uint32_t n;
    bool cancel_flag;
  };
  for (const Case& c : {Case{"count", 70000, false}, Case{"fill", 70000, false}, Case{"branchy", 70000, false},
                        Case{"calls", 70000, false}, Case{"count", 300000, true}}) {
    const Outcome all = run_budget(module, Tier::Interpret, c.name, c.n, {std::uint64_t{1} << 40, std::nullopt});
    ASSERT_EQ(all.trap, TrapKind::None) << c.name << " n " << c.n;
    const std::uint64_t need = all.fuel;
    ASSERT_GT(need, c.cancel_flag ? kAheadWithCancelFlag : kChunk) << c.name << " n " << c.n;
    std::vector<ExecutionBudget> budgets;
    for (std::uint64_t fuel : {std::uint64_t{1} << 40, need + kChunk, need + 1, need / 2, kChunk + 100, kChunk}) {
      budgets.push_back({fuel, later});
    }
    for (std::uint64_t k = 0; k <= 12; ++k) budgets.push_back({need - k, later});
    const std::atomic<bool>* outer = set_thread_cancel_flag(c.cancel_flag ? &not_cancelled : nullptr);
    expect_tiers_agree(module, c.name, c.n, budgets, c.cancel_flag ? " and a cancel flag" : "");
    set_thread_cancel_flag(outer);
  }
  ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  // The metered functions that ask, from outside their checked copy.
  const std::set<std::string> asks = calling_outside_checked_copy(dump, "@sprawling_jit_fuel_ahead(");
  std::filesystem::remove_all(dump);
  for (const auto& [function, name] : {std::pair{"@wasm_f0", "count"}, {"@wasm_f1", "fill"}, {"@wasm_f2", "branchy"}}) {
    EXPECT_TRUE(asks.contains(function)) << name;
  }
  EXPECT_FALSE(asks.contains("@wasm_f4")) << "calls: a call reloads the counter, so its loop keeps its fuel checks";
}

// Loops that keep their fuel check in every iteration (no checked copy: a variable step, an exit
// on data), written as clang emits loops (the exit test at the bottom, so the iteration's charge
// follows the header's check), whose header tests the counter after the charge instead
// (test_fuel_after_charge): `strides` marks multiples as a sieve does (`m += p`), `scan` looks
// for a zero byte. Budgets run out at every check of the first iterations and just before the
// end, whole and in deadline-sized chunks; the IR must test the charged counter.
constexpr std::string_view kUncountedLoops = R"((module
  (memory 1)
  (func (export "strides") (param $n i32) (result i32)
    (local $p i32) (local $m i32) (local $marks i32)
    (local.set $p (i32.const 2))
    (block $done
      (loop $outer
        (br_if $done (i32.ge_u (local.get $p) (local.get $n)))
        (local.set $m (i32.mul (local.get $p) (i32.const 2)))
        (if (i32.lt_u (local.get $m) (local.get $n))
          (then
            (loop $inner
              (i32.store8 (local.get $m) (i32.const 1))
              (local.set $marks (i32.add (local.get $marks) (i32.const 1)))
              (local.set $m (i32.add (local.get $m) (local.get $p)))
              (br_if $inner (i32.lt_u (local.get $m) (local.get $n))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $outer)))
    (local.get $marks))
  (func (export "scan") (param $n i32) (result i32)
    (local $i i32) (local $c i32)
    (memory.fill (i32.const 0) (i32.const 7) (local.get $n))
    (i32.store8 (local.get $n) (i32.const 0))
    (loop $top
      (local.set $c (i32.load8_u (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $top (local.get $c)))
    (i32.sub (local.get $i) (i32.const 1)))
)
)";

TEST(CompilerBounds, FuelTestedAfterTheChargeRefuelsAndRunsOutWhereTheInterpreterDoes) {
  auto module = compile_wat(kUncountedLoops);
  ASSERT_NE(module, nullptr);
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-fuel-after-charge-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
  expect_tiers_agree_near_each_check(module, {"strides", "scan"}, {0u, 1u, 2u, 3u, 40u, 3000u}, 60);
  ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  std::set<std::string> tested_after_charge;
  for (const DumpedLine& at : dumped_ir(dump)) {
    if (at.line.find("%fuel.short") != std::string::npos) tested_after_charge.insert(at.function);
  }
  std::filesystem::remove_all(dump);
  EXPECT_TRUE(tested_after_charge.contains("@wasm_f0")) << "strides";
  EXPECT_TRUE(tested_after_charge.contains("@wasm_f1")) << "scan";
}

// A loop header's fuel check merged into the test of the call that follows it
// (fuel_merging.hpp): `fib` is the loop clang makes of `fib(n-1) + fib(n-2)`, `heavy`'s callee
// charges many units at entry, `indirect` calls through a table (its fuel test comes after the
// table lookup, blocks later, so it is not merged) and `hosted` calls a host function, whose call
// has no fast path to merge with. Budgets run out at every check of the
// first iterations and just before the end, whole and in deadline-sized chunks.
constexpr std::string_view kCallsInLoops = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (type $t (func (param i32) (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) $fib $heavy_callee)
  (func $fib (export "fib") (param $n i32) (result i32) (local $acc i32)
    (if (i32.ge_u (local.get $n) (i32.const 2))
      (then
        (loop $top
          (local.set $acc (i32.add (local.get $acc) (call $fib (i32.sub (local.get $n) (i32.const 1)))))
          (local.set $n (i32.sub (local.get $n) (i32.const 2)))
          (br_if $top (i32.ge_u (local.get $n) (i32.const 2))))))
    (i32.add (local.get $acc) (local.get $n)))
  (func (export "indirect") (param $n i32) (result i32) (local $acc i32)
    (if (i32.ge_u (local.get $n) (i32.const 2))
      (then
        (loop $top
          (local.set $acc (i32.add (local.get $acc)
            (call_indirect (type $t) (i32.sub (local.get $n) (i32.const 1)) (i32.and (local.get $n) (i32.const 1)))))
          (local.set $n (i32.sub (local.get $n) (i32.const 2)))
          (br_if $top (i32.ge_u (local.get $n) (i32.const 2))))))
    (i32.add (local.get $acc) (local.get $n)))
  (func $heavy_callee (param $x i32) (result i32)
    (i32.xor (i32.mul (i32.add (i32.mul (local.get $x) (i32.const 3)) (i32.const 7)) (i32.const 5))
             (i32.shr_u (i32.add (i32.rotl (local.get $x) (i32.const 9)) (i32.const 11)) (i32.const 2))))
  (func (export "heavy") (param $n i32) (result i32) (local $acc i32)
    (if (i32.ne (local.get $n) (i32.const 0))
      (then
        (loop $top
          (local.set $acc (i32.add (local.get $acc) (call $heavy_callee (local.get $n))))
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (br_if $top (local.get $n)))))
    (local.get $acc))
  (func (export "hosted") (param $n i32) (result i32) (local $acc i32)
    (if (i32.ne (local.get $n) (i32.const 0))
      (then
        (loop $top
          (local.set $acc (i32.add (local.get $acc) (call $add1 (local.get $n))))
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (br_if $top (local.get $n)))))
    (local.get $acc))
)
)";

TEST(CompilerBounds, FuelChecksMergedIntoCallsRefuelAndRunOutWhereTheInterpreterDoes) {
  auto module = compile_wat(kCallsInLoops);
  ASSERT_NE(module, nullptr);
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-merged-fuel-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
  expect_tiers_agree_near_each_check(module, {"fib", "indirect", "heavy", "hosted"}, {0u, 1u, 2u, 3u, 7u, 18u}, 40);
  ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  // Which functions' metered code has a merged check (its test is named `fuel.merged`).
  std::set<std::string> merged;
  // And which joined the two copies' `counter - charges` as `phi(counter) - charges` (named
  // `….base`), so that the fast path keeps only the counter live into the call.
  std::set<std::string> sunk;
  for (const DumpedLine& at : dumped_ir(dump)) {
    if (at.line.find("%fuel.merged") != std::string::npos) merged.insert(at.function);
    if (at.line.find(".base = phi i64") != std::string::npos) sunk.insert(at.function);
  }
  std::filesystem::remove_all(dump);
  // Defined functions: 0 fib, 1 indirect, 2 heavy_callee, 3 heavy, 4 hosted; a body called
  // directly is also emitted as @wasm_r<i>, and a recursive one's part past its base case as
  // @wasm_r<i>.rest (recursion_inlining.hpp).
  auto fib = [](const std::set<std::string>& s) {
    return s.contains("@wasm_f0") || s.contains("@wasm_r0") || s.contains("@wasm_r0.rest");
  };
  EXPECT_TRUE(fib(merged)) << "fib";
  EXPECT_TRUE(fib(sunk)) << "fib";
  EXPECT_TRUE(merged.contains("@wasm_f3")) << "heavy";
  EXPECT_FALSE(merged.contains("@wasm_f4")) << "hosted";
}

// v128 values carried by loops (v128_phis.hpp): an accumulator and a vector induction variable in
// an inner loop whose outer loop carries them on (joined on a later round), a v128 the loop reads
// but never changes, one whose halves swap every iteration, one of whose halves alone changes
// (replace_lane), and float lanes. Results and fuel are the interpreter's at every budget; the
// IR must have the joined phis.
constexpr std::string_view kV128Loops = R"((module
  (func (export "sums") (param $n i32) (result i32)
    (local $i i32) (local $j i32) (local $acc v128) (local $ind v128) (local $k v128) (local $swap v128)
    (local $half v128) (local $f v128)
    (local.set $k (v128.const i32x4 3 5 7 11))
    (local.set $ind (v128.const i32x4 0 1 2 3))
    (local.set $swap (v128.const i64x2 1 2))
    (local.set $f (v128.const f64x2 0.5 -1.25))
    (block $out
      (loop $outer
        (br_if $out (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $j (i32.const 0))
        (loop $inner
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.mul (local.get $ind) (local.get $k))))
          (local.set $ind (i32x4.add (local.get $ind) (v128.const i32x4 4 4 4 4)))
          (local.set $swap (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7
                             (i64x2.add (local.get $swap) (i64x2.splat (i64.extend_i32_u (local.get $j))))
                             (local.get $swap)))
          (local.set $half (i64x2.replace_lane 0 (local.get $half) (i64.extend_i32_u (local.get $j))))
          (local.set $f (f64x2.add (f64x2.mul (local.get $f) (f64x2.splat (f64.const 1.5))) (f64x2.splat (f64.const 0.25))))
          (local.set $j (i32.add (local.get $j) (i32.const 1)))
          (br_if $inner (i32.lt_u (local.get $j) (i32.const 5))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $outer)))
    (i32.add
      (i32.add (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))
               (i32.add (i32x4.extract_lane 1 (local.get $ind)) (i32.wrap_i64 (i64x2.extract_lane 1 (local.get $swap)))))
      (i32.add (i32.wrap_i64 (i64x2.extract_lane 0 (local.get $half)))
               (i32.xor (i32.wrap_i64 (i64x2.extract_lane 0 (local.get $f))) (i32.wrap_i64 (i64x2.extract_lane 1 (local.get $f)))))))
)
)";

TEST(CompilerSimd, LoopCarriedV128ValuesAreOneVectorAndAgreeWithTheInterpreter) {
  auto module = compile_wat(kV128Loops);
  ASSERT_NE(module, nullptr);
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-v128-phis-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
  for (std::uint32_t n : {0u, 1u, 2u, 9u, 300u}) {
    const Outcome all = run_budget(module, Tier::Interpret, "sums", n, {std::uint64_t{1} << 40, std::nullopt});
    ASSERT_EQ(all.trap, TrapKind::None) << " n " << n;
    std::vector<ExecutionBudget> budgets{{std::nullopt, std::nullopt}, {std::uint64_t{1} << 40, std::nullopt}};
    for (std::uint64_t k = 0; k <= 30; ++k) {
      budgets.push_back({k * 7, std::nullopt});
      if (k <= all.fuel) budgets.push_back({all.fuel - k, std::nullopt});
    }
    for (const ExecutionBudget& budget : budgets) {
      const Outcome want = run_budget(module, Tier::Interpret, "sums", n, budget);
      const Outcome got = run_budget(module, Tier::Compile, "sums", n, budget);
      EXPECT_EQ(want, got) << " n " << n << " fuel " << (budget.fuel ? *budget.fuel : 0);
    }
  }
  ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  std::size_t joined = 0;
  for (const DumpedLine& at : dumped_ir(dump)) {
    if (at.line.find(" = phi <") != std::string::npos) ++joined;  // InstCombine may retype a joined phi
  }
  std::filesystem::remove_all(dump);
  // acc, ind, swap, half and f, each a vector phi in the inner loop and in the outer one (k is a
  // constant by then); without the pass there are none.
  EXPECT_GE(joined, 10U);
}

// Tail calls compile: return_call to machine code of the module jumps there (constant native
// stack), any other callee (a host function, an interpreted one: $odd is over the compile budget,
// so it stays interpreted) is left pending for the caller to run in the same frame. Answers, traps
// (at the tail call, or in the callee that replaced the frame) and fuel are the interpreter's,
// and chains far longer than the native stack could hold run whichever tiers alternate.
const std::string kTailCallsWat = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (type $i (func (param i32) (result i32)))
  (table 5 funcref)
  (elem (i32.const 0) $leaf $add1)
  (elem (i32.const 3) $ieven $odd)
  (func $leaf (param i32) (result i32) (i32.mul (local.get 0) (i32.const 3)))
  (func $count (param $n i32) (param $acc i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (return_call $leaf (local.get $acc)))
      (else (return_call $count (i32.sub (local.get $n) (i32.const 1)) (i32.add (local.get $acc) (i32.const 2))))))
  (func (export "count") (param i32) (result i32)
    (i32.add (call $count (local.get 0) (i32.const 0)) (i32.const 1)))
  (func (export "indirect") (param i32) (result i32)
    (return_call_indirect (type $i) (i32.const 5) (local.get 0)))
  (func (export "div") (param i32) (result i32) (return_call $leafdiv (local.get 0)))
  (func $leafdiv (param i32) (result i32) (i32.div_u (i32.const 7) (local.get 0)))
  (func $even (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n)) (then (i32.const 1))
      (else (return_call $odd (i32.sub (local.get $n) (i32.const 1))))))
  (func $odd (param $n i32) (result i32)
    )" + jit_testing::kept_interpreted() + R"(  ;; keeps $odd interpreted
    (if (result i32) (i32.eqz (local.get $n)) (then (i32.const 0))
      (else (return_call $even (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "parity") (param i32) (result i32) (i32.add (call $even (local.get 0)) (i32.const 10)))
  (func $ping (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n)) (then (i32.const 7))
      (else (return_call $pong (i32.sub (local.get $n) (i32.const 1))))))
  (func $pong (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n)) (then (i32.const 8))
      (else (return_call $ping (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "pingpong") (param i32) (result i32) (i32.add (call $ping (local.get 0)) (i32.const 100)))
  (func $ieven (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n)) (then (i32.const 1))
      (else (return_call_indirect (type $i) (i32.sub (local.get $n) (i32.const 1)) (i32.const 4)))))
  (func (export "iparity") (param i32) (result i32) (return_call $ieven (local.get 0)))
  (func (export "host") (param i32) (result i32) (return_call $add1 (local.get 0)))
))";
const std::string_view kTailCalls = kTailCallsWat;

TEST(CompilerTailCalls, FunctionsWithTailCallsCompileAndAgreeWithTheInterpreter) {
  auto module = compile_wat(kTailCalls);
  ASSERT_NE(module, nullptr);
  for (int variant : {kUnmetered, kMetered}) {
    const jit::ModuleCode& code = module->impl().jit(variant);
    ASSERT_EQ(code.reasons.size(), 15u);
    for (std::size_t i = 0; i < code.reasons.size(); ++i) {
      if (i == 7) {
        EXPECT_NE(code.reasons[i].find("over the compile budget"), std::string::npos);  // $odd
      } else {
        EXPECT_EQ(code.reasons[i], "") << i;
      }
    }
  }
  auto same = [&](std::string_view name, std::uint32_t arg, std::optional<std::uint64_t> fuel) {
    return tiers_agree(module, name, Value::i32(arg), fuel);
  };
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    EXPECT_EQ(same("count", 100'000, fuel).results.at(0).bits, 600'001u);
    EXPECT_EQ(same("indirect", 0, fuel).results.at(0).bits, 15u);  // compiled callee
    EXPECT_EQ(same("indirect", 1, fuel).results.at(0).bits, 6u);   // host callee
    EXPECT_EQ(same("indirect", 2, fuel).trap, TrapKind::UninitializedElement);
    EXPECT_EQ(same("indirect", 7, fuel).trap, TrapKind::UndefinedElement);
    EXPECT_EQ(same("div", 0, fuel).trap, TrapKind::IntegerDivideByZero);  // in the compiled callee
    EXPECT_EQ(same("parity", 1001, fuel).results.at(0).bits, 10u);        // compiled <-> interpreted
    EXPECT_EQ(same("parity", 1000, fuel).results.at(0).bits, 11u);
    EXPECT_EQ(same("pingpong", 1001, fuel).results.at(0).bits, 108u);
    EXPECT_EQ(same("iparity", 1001, fuel).results.at(0).bits, 0u);  // return_call_indirect both ways
    EXPECT_EQ(same("host", 41, fuel).results.at(0).bits, 42u);
  }
  for (std::string_view name : {"count", "parity", "iparity", "pingpong", "host"}) {
    const Outcome full = run(module, Tier::Interpret, name, {Value::i32(5)}, std::uint64_t{1} << 30);
    ASSERT_EQ(full.trap, TrapKind::None);
    for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
      same(name, 5, budget);
      if (HasFailure()) return;
    }
  }
}

// Millions of tail calls, more than the 8 MiB native stack could hold as nested calls, and more
// than max_call_depth frame records: between machine code (musttail), and alternating between
// machine code and the interpreter (pending tail calls run by the caller in the same frame).
TEST(CompilerTailCalls, LongChainsRunInConstantNativeStackOnEveryTierMix) {
  auto module = compile_wat(kTailCalls);
  ASSERT_NE(module, nullptr);
  StoreLimits limits;
  limits.max_call_depth = 10;
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1ull << 40}}) {
    for (Tier tier : {Tier::Interpret, Tier::Compile}) {
      EXPECT_EQ(run(module, tier, "pingpong", {Value::i32(4'000'001)}, fuel, limits).results,
                std::vector{Value::i32(108)});
      EXPECT_EQ(run(module, tier, "parity", {Value::i32(1'000'000)}, fuel, limits).results,
                std::vector{Value::i32(11)});
      EXPECT_EQ(run(module, tier, "iparity", {Value::i32(1'000'000)}, fuel, limits).results,
                std::vector{Value::i32(1)});
    }
    EXPECT_EQ(run(module, Tier::Interpret, "parity", {Value::i32(300'001)}, fuel, limits),
              run(module, Tier::Compile, "parity", {Value::i32(300'001)}, fuel, limits));
  }
}

// Every way machine code reaches a run, against the interpreter (results, trap kind, function
// and offset, fuel), unmetered and metered: lazily compiled (Tier::Compile), from the code cache
// (both variants precompiled; every function has machine code there) and by tier-up (Auto at a
// threshold of one call: each call once before and once after the tier-up thread published).
struct Call {
  std::string_view name;
  Value arg;
};
// Direct calls inside one object pass arguments (and a metered body's fuel counter) in registers
// and take the result from one (ModuleEmitter::body): callees of every shape of that convention
// (no argument up to four, no result or one) and of the frame's (five arguments, two results, a
// v128), each calling the next, a self-recursive one, a callee that traps several calls deep, one
// that calls the host, and recursion past the call depth limit.
constexpr std::string_view kDirectCalls = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (global $g (mut i32) (i32.const 0))
  (func $none (global.set $g (i32.add (global.get $g) (i32.const 1))))
  (func $one (param i32) (result i32) (call $none) (i32.add (local.get 0) (global.get $g)))
  (func $four (param i32 i64 f32 f64) (result i64)
    (i64.add (i64.extend_i32_u (call $one (local.get 0)))
             (i64.add (local.get 1) (i64.add (i64.trunc_f32_s (local.get 2)) (i64.trunc_f64_s (local.get 3))))))
  (func $five (param i32 i32 i32 i32 i32) (result i32)
    (i32.add (i32.wrap_i64 (call $four (local.get 0) (i64.extend_i32_u (local.get 1)) (f32.const 2.5) (f64.const 3.5)))
             (i32.add (local.get 2) (i32.add (local.get 3) (local.get 4)))))
  (func $two (param i32) (result i32 i64) (call $five (local.get 0) (i32.const 1) (i32.const 2) (i32.const 3) (i32.const 4))
    (i64.const 7))
  (func $vec (param v128) (result v128) (i32x4.add (local.get 0) (local.get 0)))
  (func $fib (param i32) (result i32)
    (if (result i32) (i32.lt_u (local.get 0) (i32.const 2))
      (then (local.get 0))
      (else (i32.add (call $fib (i32.sub (local.get 0) (i32.const 1)))
                     (call $fib (i32.sub (local.get 0) (i32.const 2)))))))
  (func $div_at (param i32 i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.div_u (i32.const 100) (local.get 1)))
      (else (i32.add (i32.const 1) (call $div_at (i32.sub (local.get 0) (i32.const 1)) (local.get 1))))))
  (func $host (param i32) (result i32) (call $add1 (call $one (local.get 0))))
  (func (export "mix") (param $n i32) (result i64)
    (local $i i32) (local $acc i64) (local $t i32)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (call $two (local.get $i))
        (local.set $acc (i64.add (local.get $acc)))
        (local.set $t)
        (local.set $acc (i64.add (local.get $acc) (i64.extend_i32_u (local.get $t))))
        (local.set $acc (i64.add (local.get $acc)
          (i64x2.extract_lane 0 (call $vec (i64x2.splat (local.get $acc))))))
        (local.set $acc (i64.add (local.get $acc) (i64.extend_i32_u (call $host (local.get $i)))))
        (local.set $acc (i64.add (local.get $acc) (i64.extend_i32_u (call $fib (i32.const 7)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $acc))
  (func (export "trap_deep") (param i32 i32) (result i32) (call $div_at (local.get 0) (local.get 1)))
  (func (export "fib") (param i32) (result i32) (call $fib (local.get 0))))
)";

void every_way_agrees(std::string_view wat, const std::vector<Call>& calls) {
  const std::optional<std::uint64_t> fuels[] = {std::nullopt, std::uint64_t{1} << 30};
  auto cache = std::make_shared<MemoryCache>();
  for (const bool metered : {false, true}) {
    auto report = precompile(*compile_wat(wat), metered, *cache);
    ASSERT_TRUE(report.has_value()) << (report ? "" : report.error());
    EXPECT_EQ(report->compiled, report->functions) << "metered " << metered;
  }
  for (const std::optional<std::uint64_t> fuel : fuels) {
    for (const Call& c : calls) {
      const auto module = compile_wat(wat);
      const Outcome want = run(module, Tier::Interpret, c.name, {c.arg}, fuel);
      const std::string what = std::string(c.name) + "(" + std::to_string(c.arg.bits) + ") fuel " +
                               std::to_string(fuel ? static_cast<long long>(*fuel) : -1);
      EXPECT_EQ(run(module, Tier::Compile, c.name, {c.arg}, fuel), want) << what << " compiled lazily";
      const auto cached = compile_wat(wat);
      EXPECT_EQ(run(cached, Tier::Compile, c.name, {c.arg}, fuel, {}, cache), want) << what << " from the cache";
      const jit::ModuleCode* code = cached->impl().jit_for(fuel ? kMetered : kUnmetered, Tier::Compile, cache);
      ASSERT_NE(code, nullptr);
      EXPECT_TRUE(code->from_cache) << what;
    }
  }
  jit::tier_up_set_calls(1);
  for (const std::optional<std::uint64_t> fuel : fuels) {
    const auto module = compile_wat(wat);
    for (int round = 0; round < 2; ++round) {
      for (const Call& c : calls) {
        const Outcome want = run(module, Tier::Interpret, c.name, {c.arg}, fuel);
        EXPECT_EQ(run(module, Tier::Auto, c.name, {c.arg}, fuel), want)
            << c.name << "(" << c.arg.bits << ") by tier-up, round " << round;
      }
      ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
    }
    const int variant = fuel ? kMetered : kUnmetered;
    const std::lock_guard lock(module->impl().jit_mutex);
    const jit::ModuleCode* code = module->impl().jit_tier_up[variant].get();
    ASSERT_NE(code, nullptr);
    std::size_t compiled = 0;
    for (std::size_t i = 0; i < code->entries.size(); ++i) {
      EXPECT_EQ(code->reasons[i], "") << i;
      compiled += code->entries[i].entry.load() != nullptr ? 1 : 0;
    }
    EXPECT_GT(compiled, 0u) << "variant " << variant;
  }
  // And from the hot set: what one module's tier-up compiled, the same module compiled again
  // (new slots, as in a later process) links on its first request and runs.
  for (const std::optional<std::uint64_t> fuel : fuels) {
    auto hot = std::make_shared<MemoryCache>();
    {
      const auto first = compile_wat(wat);
      for (const Call& c : calls) (void)run(first, Tier::Auto, c.name, {c.arg}, fuel, {}, hot);
      ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
    }
    const auto module = compile_wat(wat);
    for (int round = 0; round < 2; ++round) {
      for (const Call& c : calls) {
        EXPECT_EQ(run(module, Tier::Auto, c.name, {c.arg}, fuel, {}, hot),
                  run(module, Tier::Interpret, c.name, {c.arg}, fuel))
            << c.name << "(" << c.arg.bits << ") from the hot set, round " << round;
      }
      ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
    }
    const std::lock_guard lock(module->impl().jit_mutex);
    const jit::ModuleCode* code = module->impl().jit_tier_up[fuel ? kMetered : kUnmetered].get();
    ASSERT_NE(code, nullptr);
    EXPECT_GT(code->from_hot_set, 0u);
    EXPECT_EQ(code->materialized, 0u);
  }
  jit::tier_up_set_calls(20000);
}

// The convention of direct calls inside one object (kDirectCalls above): from the code cache,
// lazily and by tier-up as the interpreter, then from the cache under every budget up to past
// completion (the counter goes in and out of a metered body in registers), a trap four calls deep,
// and recursion stopped at the call depth limit at the same depth and fuel.
TEST(CompilerCalls, DirectCallsInRegistersAgreeWithTheInterpreterEveryWay) {
  every_way_agrees(kDirectCalls, {{"mix", Value::i32(5)}, {"fib", Value::i32(12)}});
  auto cache = std::make_shared<MemoryCache>();
  for (const bool metered : {false, true}) {
    auto report = precompile(*compile_wat(kDirectCalls), metered, *cache);
    ASSERT_TRUE(report.has_value()) << (report ? "" : report.error());
    EXPECT_EQ(report->compiled, report->functions);
  }
  const auto module = compile_wat(kDirectCalls);
  const auto agree = [&](std::string_view name, const std::vector<Value>& args, std::optional<std::uint64_t> fuel,
                         StoreLimits limits = {}) {
    const Outcome want = run(module, Tier::Interpret, name, args, fuel, limits);
    EXPECT_EQ(run(module, Tier::Compile, name, args, fuel, limits, cache), want)
        << name << " fuel " << (fuel ? static_cast<long long>(*fuel) : -1);
    return want;
  };
  const Outcome full = agree("mix", {Value::i32(3)}, std::uint64_t{1} << 30);
  ASSERT_EQ(full.trap, TrapKind::None);
  for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
    agree("mix", {Value::i32(3)}, budget);
    if (::testing::Test::HasFailure()) return;
  }
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    EXPECT_EQ(agree("trap_deep", {Value::i32(4), Value::i32(0)}, fuel).trap, TrapKind::IntegerDivideByZero);
    EXPECT_EQ(agree("trap_deep", {Value::i32(4), Value::i32(5)}, fuel).results.at(0).bits, 24u);
    StoreLimits limits;
    limits.max_call_depth = 200;
    for (std::uint32_t n : {197u, 198u, 199u, 200u, 5000u})
      agree("trap_deep", {Value::i32(n), Value::i32(3)}, fuel, limits);
    EXPECT_EQ(agree("trap_deep", {Value::i32(5000), Value::i32(3)}, fuel, limits).trap, TrapKind::CallStackExhausted);
  }
  const Outcome trap = agree("trap_deep", {Value::i32(4), Value::i32(0)}, std::uint64_t{1} << 30);
  for (std::uint64_t budget = 1; budget <= trap.fuel + 2; ++budget) {
    agree("trap_deep", {Value::i32(4), Value::i32(0)}, budget);
    if (::testing::Test::HasFailure()) return;
  }
}

// Functions that call themselves are inlined into themselves (recursion_inlining.hpp): a doubly
// recursive one whose base case is peeled into its call sites, and one with two arguments that
// stores at every level (not peeled: its entry writes memory) and divides by k - n, so it traps
// at the depth its argument k gives: in each inlined level and in the native calls between them.
// Results, traps (kind, function, offset) and fuel are the interpreter's lazily, from the code
// cache, by tier-up and from the hot set, metered and not, at every budget of a small call; the
// call depth limit stops both at every depth modulo the four levels one native call covers; and
// the code was inlined (the peeled part is a function of its own, the inlined levels' blocks
// carry LLVM's `.i` suffixes).
constexpr std::string_view kSelfRecursive = R"((module
  (memory 1)
  (func $fib (param i32) (result i32)
    (if (result i32) (i32.lt_u (local.get 0) (i32.const 2))
      (then (local.get 0))
      (else (i32.add (call $fib (i32.sub (local.get 0) (i32.const 1)))
                     (call $fib (i32.sub (local.get 0) (i32.const 2)))))))
  (func $walk (param $n i32) (param $k i32) (result i32)
    (i32.store (i32.shl (local.get $n) (i32.const 2)) (local.get $n))
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 1))
      (else (i32.add (i32.div_u (i32.const 1000) (i32.sub (local.get $k) (local.get $n)))
                     (call $walk (i32.sub (local.get $n) (i32.const 1)) (local.get $k))))))
  (func (export "fib") (param i32) (result i32) (call $fib (local.get 0)))
  (func (export "walk") (param i32 i32) (result i32) (call $walk (local.get 0) (local.get 1)))
)
)";

TEST(CompilerCalls, SelfRecursiveFunctionsInlinedIntoThemselvesAgreeWithTheInterpreter) {
  every_way_agrees(kSelfRecursive, {{"fib", Value::i32(0)}, {"fib", Value::i32(1)}, {"fib", Value::i32(2)},
                                    {"fib", Value::i32(15)}});
  auto cache = std::make_shared<MemoryCache>();
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-self-inlined-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
  for (const bool metered : {false, true}) {
    auto report = precompile(*compile_wat(kSelfRecursive), metered, *cache);
    ASSERT_TRUE(report.has_value()) << (report ? "" : report.error());
    EXPECT_EQ(report->compiled, report->functions);
  }
  ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  std::set<std::string> functions;
  std::set<std::string> inlined;  // functions with blocks of an inlined copy
  std::set<std::string> twice;    // and of an inlined copy of an inlined copy
  for (const DumpedLine& at : dumped_ir(dump)) {
    functions.insert(at.function);
    if (at.block.find(".i") != std::string::npos) inlined.insert(at.function);
    if (at.block.find(".i.i") != std::string::npos) twice.insert(at.function);
  }
  std::filesystem::remove_all(dump);
  // Defined functions: 0 fib, 1 walk; both are bodies (@wasm_r<i>), called directly.
  EXPECT_TRUE(functions.contains("@wasm_r0.rest")) << "fib's base case peeled";
  EXPECT_FALSE(functions.contains("@wasm_r1.rest")) << "walk's entry stores";
  // fib's two calls make its first round's copy three times its size: one round only.
  EXPECT_TRUE(inlined.contains("@wasm_r0.rest")) << "fib inlined";
  EXPECT_TRUE(twice.contains("@wasm_r1")) << "walk inlined twice";

  const auto module = compile_wat(kSelfRecursive);
  const auto agree = [&](std::string_view name, const std::vector<Value>& args, std::optional<std::uint64_t> fuel,
                         StoreLimits limits = {}) {
    const Outcome want = run(module, Tier::Interpret, name, args, fuel, limits);
    EXPECT_EQ(run(module, Tier::Compile, name, args, fuel, limits, cache), want)
        << name << "(" << args.at(0).bits << (args.size() > 1 ? ", " + std::to_string(args[1].bits) : "")
        << ") fuel " << (fuel ? static_cast<long long>(*fuel) : -1) << " depth " << limits.max_call_depth;
    return want;
  };
  for (const std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    EXPECT_EQ(agree("walk", {Value::i32(20), Value::i32(100)}, fuel).trap, TrapKind::None);
    for (std::uint32_t k = 0; k <= 20; ++k)
      EXPECT_EQ(agree("walk", {Value::i32(20), Value::i32(k)}, fuel).trap,
                k == 0 ? TrapKind::None : TrapKind::IntegerDivideByZero)
          << k;
    EXPECT_EQ(agree("walk", {Value::i32(16384), Value::i32(20000)}, fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    StoreLimits limits;
    for (std::uint32_t depth = 40; depth < 48; ++depth) {
      limits.max_call_depth = depth;
      EXPECT_EQ(agree("walk", {Value::i32(60), Value::i32(1000)}, fuel, limits).trap, TrapKind::CallStackExhausted);
      agree("walk", {Value::i32(depth - 4), Value::i32(1000)}, fuel, limits);
      agree("walk", {Value::i32(depth - 2), Value::i32(1000)}, fuel, limits);
      EXPECT_EQ(agree("fib", {Value::i32(60)}, fuel, limits).trap, TrapKind::CallStackExhausted);
    }
  }
  for (const char* name : {"fib", "walk"}) {
    const std::vector<Value> args = name == std::string_view("fib") ? std::vector<Value>{Value::i32(6)}
                                                                    : std::vector<Value>{Value::i32(6), Value::i32(2)};
    const Outcome all = agree(name, args, std::uint64_t{1} << 30);
    for (std::uint64_t budget = 1; budget <= all.fuel + 2; ++budget) {
      agree(name, args, budget);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Native calls of whole-module code (direct, and call_indirect of this instance's functions)
// test one limit, Ctx::fr_lim, which the runtime sets from the code's frame bounds where machine
// code starts. A recursion whose frames are large (over 200 slots) runs out of value stack
// first: at the same depth and fuel as in the interpreter, from the code cache, metered and not,
// both ways of calling; a recursion deeper than one segment's bound (the calls past it take the
// helper, which starts the next) ends as the interpreter's; and the code loaded has bounds at
// least those of its largest frame, so its calls take the one test.
std::string large_frames_module() {
  std::string locals;
  for (int i = 0; i < 200; ++i) locals += " i64";
  return R"((module
  (func $big (param i32) (result i64) (local)" + locals + R"()
    (local.set 1 (i64.extend_i32_u (local.get 0)))
    (local.set 150 (i64.mul (local.get 1) (i64.const 3)))
    (if (result i64) (i32.eqz (local.get 0)) (then (local.get 150))
      (else (i64.add (local.get 150) (call $small (i32.sub (local.get 0) (i32.const 1)))))))
  (func $small (param i32) (result i64)
    (if (result i64) (i32.eqz (local.get 0)) (then (i64.const 1))
      (else (i64.add (i64.const 1) (call $big (i32.sub (local.get 0) (i32.const 1)))))))
  (func (export "deep") (param i32) (result i64) (call $big (local.get 0)))
  ;; the same through call_indirect: entries of this instance's code, called natively
  (type $t (func (param i32) (result i64)))
  (table 2 funcref)
  (elem (i32.const 0) $bigi $smalli)
  (func $bigi (param i32) (result i64) (local)" + locals + R"()
    (local.set 1 (i64.extend_i32_u (local.get 0)))
    (local.set 150 (i64.mul (local.get 1) (i64.const 3)))
    (if (result i64) (i32.eqz (local.get 0)) (then (local.get 150))
      (else (i64.add (local.get 150)
                     (call_indirect (type $t) (i32.sub (local.get 0) (i32.const 1)) (i32.const 1))))))
  (func $smalli (param i32) (result i64)
    (if (result i64) (i32.eqz (local.get 0)) (then (i64.const 1))
      (else (i64.add (i64.const 1) (call_indirect (type $t) (i32.sub (local.get 0) (i32.const 1)) (i32.const 0))))))
  (func (export "deep_indirect") (param i32) (result i64) (call_indirect (type $t) (local.get 0) (i32.const 0))))
)";
}

TEST(CompilerCalls, NativeCallsOfWholeModuleCodeStopWhereEitherStackOrTheDepthRunsOut) {
  const std::string wat = large_frames_module();
  auto cache = std::make_shared<MemoryCache>();
  for (const bool metered : {false, true}) {
    auto report = precompile(*compile_wat(wat), metered, *cache);
    ASSERT_TRUE(report.has_value()) << (report ? "" : report.error());
    EXPECT_EQ(report->compiled, report->functions);
  }
  const auto module = compile_wat(wat);
  std::string entry;
  const auto agree = [&](std::uint32_t n, std::optional<std::uint64_t> fuel, StoreLimits limits) {
    const Outcome want = run(module, Tier::Interpret, entry, {Value::i32(n)}, fuel, limits);
    EXPECT_EQ(run(module, Tier::Compile, entry, {Value::i32(n)}, fuel, limits, cache), want)
        << entry << "(" << n << ") fuel " << (fuel ? static_cast<long long>(*fuel) : -1) << " stack "
        << limits.max_value_stack_slots << " depth " << limits.max_call_depth;
    return want;
  };
  for (const auto& [name, fuel] : std::vector<std::pair<std::string, std::optional<std::uint64_t>>>{
           {"deep", std::nullopt}, {"deep", 1u << 30}, {"deep_indirect", std::nullopt}, {"deep_indirect", 1u << 30}}) {
    entry = name;
    // About 100 slots a call on average: the value stack holds some 400 of them.
    StoreLimits values;
    values.max_value_stack_slots = 40'000;
    std::uint32_t last = 0;
    for (std::uint32_t n = 360; n <= 420; ++n) {
      if (agree(n, fuel, values).trap == TrapKind::None) last = n;
    }
    EXPECT_GT(last, 360u);
    EXPECT_LT(last, 420u);
    EXPECT_EQ(agree(5'000, fuel, values).trap, TrapKind::CallStackExhausted);
    // The depth limit first.
    StoreLimits depth;
    depth.max_call_depth = 300;
    for (std::uint32_t n : {298u, 299u, 300u, 301u}) agree(n, fuel, depth);
    EXPECT_EQ(agree(5'000, fuel, depth).trap, TrapKind::CallStackExhausted);
    // 15,000 deep with the default limits: past a segment of (value-stack room / twice the
    // largest frame) calls, so the recursion crosses segments through the helper.
    const Outcome whole = agree(15'000, fuel, {});
    EXPECT_EQ(whole.trap, TrapKind::None);
  }
  for (const int variant : {kUnmetered, kMetered}) {
    const std::lock_guard lock(module->impl().jit_mutex);
    const jit::ModuleCode* code = module->impl().jit_code[variant].get();
    ASSERT_NE(code, nullptr);
    EXPECT_TRUE(code->from_cache);
    EXPECT_GE(code->segment_slots, 2u * 201u) << variant;
    EXPECT_GT(code->segment_bytes, 0u) << variant;
  }
}

// Calls through references and across partitions in whole-module code. A function the module
// may call through a reference (in an element segment, exported) or calls directly exports its
// register-argument body (`wasm_r<d>`): call_indirect and call_ref of a type whose arguments and
// result fit registers call it (FuncInst::body) instead of the entry, a direct call from another
// partition (here: over 512 functions, so two) calls it instead of the entry, and a function
// whose code has a tail call ($tail) exports an adapter to its entry. Callees that trap ($div),
// throw into a try_table of the caller ($thrower), make the call at the depth limit, or have too
// many arguments for registers ($five, through its entry) end as in the interpreter, under every
// budget up to past completion.
std::string references_module() {
  std::string fillers;
  for (int i = 0; i < 520; ++i) fillers += "  (func (result i32) (i32.const " + std::to_string(i) + "))\n";
  return R"((module
  (type $t (func (param i32 i32) (result i32)))
  (type $five (func (param i32 i32 i32 i32 i32) (result i32)))
  (type $r (func (param i32)))
  (tag $boom (param i32))
  (table (export "table") 8 funcref)
  (elem (i32.const 0) $add $mul $tail $div $thrower $far $five_args $rec)
  (global $g (mut i32) (i32.const 0))
  (func $add (type $t) (i32.add (local.get 0) (local.get 1)))
  (func $mul (type $t) (i32.mul (local.get 0) (i32.or (local.get 1) (i32.const 1))))
  (func $tail (type $t) (return_call $add (local.get 0) (i32.const 100)))
  (func $div (type $t) (i32.div_u (local.get 0) (local.get 1)))
  (func $thrower (type $t)
    (if (i32.eq (local.get 1) (i32.const 13)) (then (throw $boom (local.get 0))))
    (i32.xor (local.get 0) (local.get 1)))
  (func $five_args (type $five)
    (i32.add (i32.add (local.get 0) (local.get 1)) (i32.add (local.get 2) (i32.sub (local.get 3) (local.get 4)))))
  (func $rec (type $t)
    (if (result i32) (i32.eqz (local.get 1)) (then (local.get 0))
      (else (call_indirect (type $t) (i32.add (local.get 0) (i32.const 1)) (i32.sub (local.get 1) (i32.const 1))
                           (i32.const 7)))))
  (func $set (type $r) (global.set $g (local.get 0)))
  ;; n rounds; the divisor d reaches $div on every fourth round
  (func (export "run") (param $n i32) (param $d i32) (result i32)
    (local $i i32) (local $acc i32)
    (local.set $acc (i32.const 1))
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $acc (call_indirect (type $t) (local.get $acc) (local.get $i)
                                       (i32.and (local.get $i) (i32.const 3))))
        (if (i32.eq (i32.and (local.get $i) (i32.const 3)) (i32.const 3))
          (then (local.set $acc (call_indirect (type $t) (i32.add (local.get $acc) (i32.const 7)) (local.get $d)
                                               (i32.const 3)))))
        (local.set $acc (call_ref $t (local.get $acc) (local.get $i) (ref.func $mul)))
        (local.set $acc (call $far (local.get $acc) (local.get $i)))
        (local.set $acc (call_indirect (type $five) (local.get $acc) (local.get $i) (i32.const 3) (i32.const 4)
                                       (i32.const 5) (i32.const 6)))
        (local.set $acc (block $caught (result i32)
          (try_table (result i32) (catch $boom $caught)
            (call_indirect (type $t) (local.get $acc) (local.get $i) (i32.const 4)))))
        (call $set (local.get $acc))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (i32.add (local.get $acc) (global.get $g)))
  (func (export "rec") (param $n i32) (result i32)
    (call_indirect (type $t) (i32.const 0) (local.get $n) (i32.const 7)))
)" + fillers + R"(  (func $far (type $t) (i32.add (i32.rotl (local.get 0) (i32.const 5)) (local.get 1)))
)
)";
}

TEST(CompilerCalls, CallsThroughReferencesAndAcrossPartitionsPassRegistersAsTheInterpreterWould) {
  const std::string wat = references_module();
  every_way_agrees(wat, {{"rec", Value::i32(40)}});
  auto cache = std::make_shared<MemoryCache>();
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-reference-calls-" + std::to_string(::getpid()));
  std::map<bool, std::vector<std::string>> ir;  // per variant: every line of its partitions
  for (const bool metered : {false, true}) {
    std::filesystem::remove_all(dump);
    std::filesystem::create_directories(dump);
    ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
    auto report = precompile(*compile_wat(wat), metered, *cache);
    ::unsetenv("SPRAWLING_JIT_DUMP_IR");
    ASSERT_TRUE(report.has_value()) << (report ? "" : report.error());
    EXPECT_EQ(report->compiled, report->functions);
    for (const auto& entry : std::filesystem::directory_iterator(dump)) {
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);) ir[metered].push_back(line);
    }
  }
  std::filesystem::remove_all(dump);
  // Defined indexes: $add 0, $mul 1, $tail 2, $div 3, $thrower 4, $five_args 5, $rec 6, $set 7,
  // run 8, rec 9, the fillers 10-529, $far 530 (the second partition).
  const std::string body_result[] = {"{ i32, i64 }", "{ i32, i64, i64 }"};
  for (const bool metered : {false, true}) {
    const std::vector<std::string>& lines = ir[metered];
    const auto has = [&](const std::string& text) {
      return std::ranges::any_of(lines, [&](const std::string& l) { return l.find(text) != std::string::npos; });
    };
    const std::string r = body_result[metered ? 1 : 0];
    EXPECT_TRUE(has("define dso_local " + r + " @wasm_r0(")) << metered;  // exported, not internal
    EXPECT_TRUE(has("define dso_local " + r + " @wasm_r2(")) << metered;  // $tail's adapter...
    EXPECT_TRUE(has("@wasm_f2(ptr")) << metered;                     // ...calls its entry
    EXPECT_FALSE(has("@wasm_r5(")) << metered;                       // five arguments: entries only
    EXPECT_TRUE(has("declare " + r + " @wasm_r530(")) << metered;    // $far from the first partition
    EXPECT_TRUE(has("call " + r + " @wasm_r530(")) << metered;
    // call_indirect and call_ref: a body's prototype called through a loaded pointer.
    EXPECT_TRUE(std::ranges::any_of(lines, [&](const std::string& l) {
      return l.find("call " + r + " %") != std::string::npos && std::ranges::count(l, ',') >= (metered ? 5 : 4);
    })) << metered;
  }
  const auto module = compile_wat(wat);
  const auto agree = [&](std::string_view name, const std::vector<Value>& args, std::optional<std::uint64_t> fuel,
                         StoreLimits limits = {}) {
    const Outcome want = run(module, Tier::Interpret, name, args, fuel, limits);
    EXPECT_EQ(run(module, Tier::Compile, name, args, fuel, limits, cache), want)
        << name << "(" << args.at(0).bits << ") fuel " << (fuel ? static_cast<long long>(*fuel) : -1);
    return want;
  };
  for (const std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    EXPECT_EQ(agree("run", {Value::i32(40), Value::i32(3)}, fuel).trap, TrapKind::None);
    EXPECT_EQ(agree("run", {Value::i32(40), Value::i32(0)}, fuel).trap, TrapKind::IntegerDivideByZero);
    EXPECT_EQ(agree("rec", {Value::i32(100)}, fuel).results.at(0).bits, 100u);
    StoreLimits limits;
    limits.max_call_depth = 200;
    for (std::uint32_t n : {197u, 198u, 199u, 200u}) agree("rec", {Value::i32(n)}, fuel, limits);
    EXPECT_EQ(agree("rec", {Value::i32(5000)}, fuel, limits).trap, TrapKind::CallStackExhausted);
  }
  const Outcome full = agree("run", {Value::i32(16), Value::i32(3)}, std::uint64_t{1} << 30);
  ASSERT_EQ(full.trap, TrapKind::None);
  for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
    agree("run", {Value::i32(16), Value::i32(3)}, budget);
    if (::testing::Test::HasFailure()) return;
  }
  // A function the runtime resolved has its body where machine code's call_indirect reads it.
  for (const int variant : {kUnmetered, kMetered}) {
    Store store;
    ASSERT_TRUE(store.set_tier(Tier::Compile));
    store.set_code_cache(cache);
    store.set_budget({variant == kMetered ? std::optional<std::uint64_t>{1u << 30} : std::nullopt, std::nullopt});
    auto inst = store.instantiate(module, {});
    ASSERT_TRUE(inst.has_value());
    const std::vector<Value> args{Value::i32(8), Value::i32(3)};
    ASSERT_TRUE(store.invoke(std::get<FuncInst*>(*(*inst)->find_export("run")), args));
    const auto* table = std::get<TableInst*>(*(*inst)->find_export("table"));
    const auto element = [&](std::size_t i) { return reinterpret_cast<const FuncInst*>(table->elements.at(i)); };
    EXPECT_NE(element(0)->body[variant], nullptr);  // $add
    EXPECT_NE(element(2)->body[variant], nullptr);  // $tail's adapter
    EXPECT_EQ(element(6)->body[variant], nullptr);  // $five_args
    EXPECT_NE(element(6)->native[variant], nullptr);
  }
  // The loaded code knows each exported body; $five_args (five arguments) and the fillers (never
  // called) have none.
  for (const int variant : {kUnmetered, kMetered}) {
    const std::lock_guard lock(module->impl().jit_mutex);
    const jit::ModuleCode* code = module->impl().jit_code[variant].get();
    ASSERT_NE(code, nullptr);
    EXPECT_TRUE(code->from_cache);
    ASSERT_EQ(code->bodies.size(), 531u);
    for (const std::size_t d : {0u, 1u, 2u, 3u, 4u, 6u, 7u, 8u, 9u, 530u}) EXPECT_NE(code->bodies[d], nullptr) << d;
    for (const std::size_t d : {5u, 10u, 529u}) EXPECT_EQ(code->bodies[d], nullptr) << d;
  }
}

// Multiple memories and memory64: every function compiles, memory 0's and the others' accesses
// alike; both tiers agree on results, traps and fuel: bounds at each memory's end, an i64
// address plus offset past 2^64 (no wrap), an offset past 2^64 with any address, grows (each
// memory's size reloaded after a call that grew it), bulk operations within and across memories.
constexpr std::string_view kMemories = R"((module
  (memory $m0 1)
  (memory $m1 1 2)
  (memory $m64 i64 1 3)
  (data $d "\01\02\03\04\05\06\07\08")
  (func $plain (export "plain") (param i32) (result i32)
    (i32.store (local.get 0) (i32.const 7))
    (i32.load (local.get 0)))
  (func $second (export "second") (param i32) (result i32)
    (i32.store $m1 (local.get 0) (i32.add (call $plain (local.get 0)) (i32.const 1)))
    (drop (memory.grow $m1 (i32.const 1)))
    (i32.add (i32.load $m1 (local.get 0)) (memory.size $m1)))
  (func (export "wide") (param i64) (result i64)
    (i64.store $m64 offset=8 (local.get 0) (i64.const 5))
    (i64.add (i64.load $m64 offset=8 (local.get 0)) (memory.size $m64)))
  (func (export "calls") (param i32) (result i32) (i32.mul (call $second (local.get 0)) (i32.const 2)))
  (func $grow1 (result i32) (memory.grow $m1 (i32.const 1)))
  (func $grow64 (result i64) (memory.grow $m64 (i64.const 1)))
  ;; memory 1 and the 64-bit memory read past their first page after a callee grew them
  (func (export "regrow") (param i32) (result i64)
    (local $a i64)
    (local.set $a (i64.extend_i32_u (i32.load8_u $m1 (i32.const 65535))))
    (drop (call $grow1))
    (drop (call $grow64))
    (i64.add (local.get $a)
      (i64.add (i64.load8_u $m64 (i64.extend_i32_u (local.get 0)))
               (i64.extend_i32_u (i32.load16_s $m1 (local.get 0))))))
  (func (export "grow64") (param i64) (result i64)
    (i64.add (memory.grow $m64 (local.get 0)) (i64.mul (memory.size $m64) (i64.const 1000))))
  (func (export "past") (param i64) (result i32) (i32.load8_u $m64 offset=0xfffffffffffffff0 (local.get 0)))
  (func (export "beyond") (param i64) (result i32) (i32.load $m64 offset=0xfffffffffffffffe (local.get 0)))
  ;; fill and init in the 64-bit memory, copies between it and memory 1 (an i32 length) and within
  (func (export "bulk") (param i64) (result i64)
    (memory.fill $m64 (local.get 0) (i32.const 9) (i64.const 16))
    (memory.init $m64 $d (i64.add (local.get 0) (i64.const 4)) (i32.const 2) (i32.const 4))
    (memory.copy $m1 $m64 (i32.const 100) (local.get 0) (i32.const 16))
    (memory.copy $m64 $m64 (i64.const 200) (local.get 0) (i64.const 8))
    (memory.fill $m1 (i32.const 300) (i32.const 1) (i32.const 4))
    (i64.add (i64.load $m64 (i64.const 200))
             (i64.add (i64.load $m1 offset=100 (i32.const 0)) (i64.load32_u $m1 (i32.const 300)))))
  ;; v128 accesses of the other memories: a store, the whole, extending, splat and zero loads, lane
  ;; loads and stores, each at an address near its memory's end for the callers to push past
  (func (export "vectors") (param i32) (result i64)
    (local $v v128)
    (v128.store $m1 (local.get 0) (v128.const i32x4 1 2 3 4))
    (local.set $v (v128.load $m1 (local.get 0)))
    (local.set $v (v128.load8_lane $m1 3 (local.get 0) (local.get $v)))
    (v128.store16_lane $m1 offset=2 5 (local.get 0) (local.get $v))
    (local.set $v (i32x4.add (local.get $v) (v128.load16x4_u $m1 (local.get 0))))
    (local.set $v (i32x4.add (local.get $v) (v128.load32_splat $m1 offset=4 (local.get 0))))
    (v128.store $m64 (i64.extend_i32_u (local.get 0)) (local.get $v))
    (local.set $v (v128.load64_zero $m64 offset=8 (i64.extend_i32_u (local.get 0))))
    (v128.store64_lane $m64 1 (i64.extend_i32_u (local.get 0)) (local.get $v))
    (i64.add (i64x2.extract_lane 0 (local.get $v))
             (i64.load $m64 (i64.extend_i32_u (local.get 0))))))
)";

TEST(CompilerMemories, FunctionsUsingOtherMemoriesCompileAndAgreeWithTheInterpreter) {
  auto module = compile_wat(kMemories);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
  auto same = [&](std::string_view name, Value arg, std::optional<std::uint64_t> fuel) {
    return tiers_agree(module, name, arg, fuel);
  };
  constexpr std::uint64_t kMax = ~std::uint64_t{0};
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20}}) {
    EXPECT_EQ(same("calls", Value::i32(16), fuel).results.at(0).bits, 20u);  // (7 + 1 + 2 pages) * 2
    EXPECT_EQ(same("second", Value::i32(65532), fuel).results.at(0).bits, 10u);  // the last word of page 1
    EXPECT_EQ(same("second", Value::i32(65533), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    EXPECT_EQ(same("wide", Value::i64(100), fuel).results.at(0).bits, 6u);
    EXPECT_EQ(same("wide", Value::i64(65520), fuel).results.at(0).bits, 6u);  // ends at the memory's end
    EXPECT_EQ(same("wide", Value::i64(65521), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    EXPECT_EQ(same("wide", Value::i64(kMax - 4), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);  // no wrap
    EXPECT_EQ(same("wide", Value::i64(kMax - 8), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    EXPECT_EQ(same("regrow", Value::i32(65536 + 10), fuel).results.at(0).bits, 0u);
    EXPECT_EQ(same("regrow", Value::i32(2 * 65536 - 2), fuel).results.at(0).bits, 0u);
    EXPECT_EQ(same("regrow", Value::i32(2 * 65536 - 1), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    EXPECT_EQ(same("grow64", Value::i64(2), fuel).results.at(0).bits, 3001u);
    EXPECT_EQ(same("grow64", Value::i64(3), fuel).results.at(0).bits, kMax + 1000);  // -1 past the max
    EXPECT_EQ(same("grow64", Value::i64(std::uint64_t{1} << 40), fuel).results.at(0).bits, kMax + 1000);
    EXPECT_EQ(same("grow64", Value::i64(kMax), fuel).results.at(0).bits, kMax + 1000);
    for (std::uint64_t a : {std::uint64_t{0}, std::uint64_t{16}, kMax - 0xe, kMax})
      EXPECT_EQ(same("past", Value::i64(a), fuel).trap, TrapKind::OutOfBoundsMemoryAccess) << a;
    for (std::uint64_t a : {std::uint64_t{0}, std::uint64_t{1}, kMax})
      EXPECT_EQ(same("beyond", Value::i64(a), fuel).trap, TrapKind::OutOfBoundsMemoryAccess) << a;
    EXPECT_EQ(same("bulk", Value::i64(1000), fuel).trap, TrapKind::None);
    EXPECT_EQ(same("bulk", Value::i64(65520), fuel).trap, TrapKind::None);
    EXPECT_EQ(same("bulk", Value::i64(65521), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    EXPECT_EQ(same("bulk", Value::i64(kMax - 8), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    EXPECT_EQ(same("bulk", Value::i64(std::uint64_t{1} << 32), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    EXPECT_EQ(same("vectors", Value::i32(64), fuel).trap, TrapKind::None);
    EXPECT_EQ(same("vectors", Value::i32(65520), fuel).trap, TrapKind::None);  // ends at both memories' end
    EXPECT_EQ(same("vectors", Value::i32(65521), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    EXPECT_EQ(same("vectors", Value::i32(65534), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
  }
  // Every budget up to past completion: the same trap point and consumed fuel.
  for (const char* name : {"bulk", "regrow"}) {
    const Value arg = std::string_view(name) == "bulk" ? Value::i64(1000) : Value::i32(65540);
    const Outcome full = run(module, Tier::Interpret, name, {arg}, std::uint64_t{1} << 30);
    ASSERT_EQ(full.trap, TrapKind::None) << name;
    for (std::uint64_t budget = 1; budget <= full.fuel + 1; ++budget) {
      same(name, arg, budget);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(CompilerMemories, OtherMemoriesRunFromTheCodeCacheAndByTierUpAsInTheInterpreter) {
  every_way_agrees(kMemories, {{"calls", Value::i32(16)},
                               {"wide", Value::i64(65520)},
                               {"wide", Value::i64(~std::uint64_t{0} - 4)},
                               {"regrow", Value::i32(65536 + 10)},
                               {"grow64", Value::i64(1)},
                               {"past", Value::i64(16)},
                               {"bulk", Value::i64(1000)},
                               {"bulk", Value::i64(65521)},
                               {"vectors", Value::i32(64)},
                               {"vectors", Value::i32(65520)},
                               {"vectors", Value::i32(65521)},
                               {"vectors", Value::i32(65534)}});
}

// A memory64 memory 0 goes through the same ops as any other memory (its accesses are never
// memory 0's i32 fast path).
TEST(CompilerMemories, A64BitMemoryZeroCompilesAndAgreesWithTheInterpreter) {
  auto module = compile_wat(R"((module
  (memory i64 1)
  (func (export "rw") (param i64) (result i64)
    (i64.store offset=4 (local.get 0) (i64.const 0x1122334455667788))
    (memory.fill (i64.const 0) (i32.const 3) (i64.const 2))
    (i64.add (i64.load16_u (i64.const 0))
      (i64.add (i64.load offset=4 (local.get 0)) (i64.add (memory.size) (memory.grow (i64.const 1)))))))
)");
  ASSERT_NE(module, nullptr);
  for (int variant : {kUnmetered, kMetered}) EXPECT_EQ(module->impl().jit(variant).reasons.at(0), "");
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20}}) {
    EXPECT_EQ(tiers_agree(module, "rw", Value::i64(8), fuel).trap, TrapKind::None);
    EXPECT_EQ(tiers_agree(module, "rw", Value::i64(65524), fuel).trap, TrapKind::None);
    EXPECT_EQ(tiers_agree(module, "rw", Value::i64(65525), fuel).trap, TrapKind::OutOfBoundsMemoryAccess);
    EXPECT_EQ(tiers_agree(module, "rw", Value::i64(~std::uint64_t{0} - 3), fuel).trap,
              TrapKind::OutOfBoundsMemoryAccess);
  }
}

// 64-bit tables (table64): every function compiles, i64 indexes read whole; both tiers agree on
// results, traps (an index of 2^32 + 1 is out of bounds, never slot 1) and fuel, including a grow
// past the cap and a grow of 2^40 elements.
constexpr std::string_view kTables64 = R"((module
  (type $v (func (result i32)))
  (func $seven (type $v) (i32.const 7))
  (table $t32 2 funcref)
  (table $t64 i64 2 4 funcref)
  (elem (table $t32) (i32.const 1) func $seven)
  (elem (table $t64) (i64.const 1) func $seven)
  (elem $e funcref (ref.func $seven) (ref.func $seven))
  (func $plain (export "plain") (param i32) (result i32)
    (i32.add (call_indirect $t32 (type $v) (local.get 0)) (table.size $t32)))
  (func (export "wide") (param i64) (result i64)
    (drop (table.grow $t64 (ref.func $seven) (i64.const 1)))
    (table.fill $t64 (i64.const 2) (table.get $t64 (i64.const 1)) (i64.const 1))
    (i64.add (i64.extend_i32_u (call_indirect $t64 (type $v) (local.get 0))) (table.size $t64)))
  (func (export "grow") (param i64) (result i64) (table.grow $t64 (ref.null func) (local.get 0)))
  (func (export "calls") (param i32) (result i32) (i32.mul (call $plain (local.get 0)) (i32.const 2)))
  ;; get/set/fill/copy/init at an i64 index: 0 leaves the table as it was, others trap past its end
  (func (export "ops") (param i64) (result i32)
    (table.set $t64 (local.get 0) (table.get $t64 (i64.const 1)))
    (table.fill $t64 (local.get 0) (ref.null func) (i64.const 0))
    (table.copy $t32 $t64 (i32.const 0) (i64.const 1) (i32.const 1))
    (table.copy $t64 $t64 (local.get 0) (i64.const 1) (i64.const 1))
    (table.init $t64 $e (local.get 0) (i32.const 1) (i32.const 1))
    (i32.add (call_indirect $t32 (type $v) (i32.const 0)) (call_indirect $t64 (type $v) (local.get 0)))))
)";

TEST(CompilerTable64, FunctionsUsingA64BitTableCompileAndAgreeWithTheInterpreter) {
  auto module = compile_wat(kTables64);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
  auto same = [&](std::string_view name, Value arg, std::optional<std::uint64_t> fuel) {
    return tiers_agree(module, name, arg, fuel);
  };
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20}}) {
    EXPECT_EQ(same("calls", Value::i32(1), fuel).results.at(0).bits, 18u);  // (7 + 2) * 2
    EXPECT_EQ(same("wide", Value::i64(2), fuel).results.at(0).bits, 10u);   // 7 + 3 elements
    EXPECT_EQ(same("wide", Value::i64((std::uint64_t{1} << 32) + 1), fuel).trap, TrapKind::UndefinedElement);
    EXPECT_EQ(same("wide", Value::i64(~std::uint64_t{0}), fuel).trap, TrapKind::UndefinedElement);
    EXPECT_EQ(same("wide", Value::i64(0), fuel).trap, TrapKind::UninitializedElement);
    EXPECT_EQ(same("grow", Value::i64(3), fuel).results.at(0).bits, ~std::uint64_t{0});  // past the max of 4
    EXPECT_EQ(same("grow", Value::i64(2), fuel).results.at(0).bits, 2u);
    // 2^40 elements: -1 unmetered; metered, charged per element as an i32 grow, out of fuel.
    const Outcome huge = same("grow", Value::i64(std::uint64_t{1} << 40), fuel);
    if (fuel) {
      EXPECT_EQ(huge.trap, TrapKind::OutOfFuel);
    } else {
      EXPECT_EQ(huge.results.at(0).bits, ~std::uint64_t{0});
    }
    same("grow", Value::i64(~std::uint64_t{0}), fuel);  // past 2^63: the most fuel can hold
    EXPECT_EQ(same("ops", Value::i64(0), fuel).results.at(0).bits, 14u);
    EXPECT_EQ(same("ops", Value::i64(1), fuel).results.at(0).bits, 14u);
    for (std::uint64_t i : {std::uint64_t{2}, std::uint64_t{1} << 32, (std::uint64_t{1} << 32) + 1, ~std::uint64_t{0}})
      EXPECT_EQ(same("ops", Value::i64(i), fuel).trap, TrapKind::OutOfBoundsTableAccess) << i;
  }
  // Every budget up to past completion: the same trap point and consumed fuel.
  for (const char* name : {"wide", "ops"}) {
    const Value arg = Value::i64(std::string_view(name) == "wide" ? 2 : 1);
    const Outcome full = run(module, Tier::Interpret, name, {arg}, std::uint64_t{1} << 30);
    ASSERT_EQ(full.trap, TrapKind::None) << name;
    for (std::uint64_t budget = 1; budget <= full.fuel + 1; ++budget) {
      same(name, arg, budget);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(CompilerTable64, A64BitTableRunsFromTheCodeCacheAndByTierUpAsInTheInterpreter) {
  every_way_agrees(kTables64, {{"calls", Value::i32(1)},
                               {"wide", Value::i64(2)},
                               {"wide", Value::i64((std::uint64_t{1} << 32) + 1)},
                               {"grow", Value::i64(std::uint64_t{1} << 40)},
                               {"ops", Value::i64(1)},
                               {"ops", Value::i64(std::uint64_t{1} << 32)}});
}

// Exception handling: functions that throw, catch or lie between the two compile; an exception
// leaves machine code as the status UncaughtException (the exception pending in the store), which
// a compiled caller's handlers, or the interpreter that entered the compiled code, take at its
// call (compiler_eh_test.cpp has each instruction; here the code cache and tier-up too).
constexpr std::string_view kExceptions = R"((module
  (tag $e (param i32))
  (func $thrower (param i32) (result i32)
    (if (local.get 0) (then (throw $e (local.get 0))))
    (i32.const 5))
  (func $middle (param i32) (result i32)
    (i32.add (call $thrower (local.get 0)) (i32.const 1)))
  (func $deeper (param i32) (result i32)
    (i32.mul (call $middle (local.get 0)) (i32.const 2)))
  (func (export "catch") (param i32) (result i32)
    (block $h (result i32)
      (try_table (result i32) (catch $e $h) (call $deeper (local.get 0)))))
  (func (export "uncaught") (param i32) (result i32) (call $deeper (local.get 0)))
  (tag $other)
  (func (export "unmatched") (param i32) (result i32)
    (block $h (try_table (catch $other $h) (return (call $deeper (local.get 0)))))
    (i32.const -1))
))";

TEST(CompilerExceptions, ThrowsPropagateThroughCompiledFramesToTheirCatch) {
  auto module = compile_wat(kExceptions);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
  auto same = [&](std::string_view name, std::uint32_t arg, std::optional<std::uint64_t> fuel) {
    return tiers_agree(module, name, Value::i32(arg), fuel);
  };
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    EXPECT_EQ(same("catch", 0, fuel).results.at(0).bits, 12u);
    EXPECT_EQ(same("catch", 7, fuel).results.at(0).bits, 7u);  // through two compiled frames
    EXPECT_EQ(same("uncaught", 0, fuel).results.at(0).bits, 12u);
    const Outcome out = same("uncaught", 3, fuel);
    EXPECT_EQ(out.trap, TrapKind::UncaughtException);
    EXPECT_EQ(out.func_index, 0u);  // located at the throw
    // An interpreted function with a handler that does not match, above compiled frames.
    EXPECT_EQ(same("unmatched", 0, fuel).results.at(0).bits, 12u);
    const Outcome unmatched = same("unmatched", 2, fuel);
    EXPECT_EQ(unmatched.trap, TrapKind::UncaughtException);
    EXPECT_EQ(unmatched.func_index, 0u);
  }
  const Outcome full = run(module, Tier::Interpret, "catch", {Value::i32(7)}, std::uint64_t{1} << 30);
  ASSERT_EQ(full.trap, TrapKind::None);
  for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
    same("catch", 7, budget);
    if (HasFailure()) return;
  }
}

// Throws and catches of every form from the code cache (`sprawl compile`'s entries) and from
// tier-up's per-function code (callees reached through their slots, the catching function
// compiled alone): the interpreter's outcomes.
constexpr std::string_view kExceptionForms = R"((module
  (tag $e (param i32))
  (func $thrower (param i32) (result i32)
    (if (i32.and (local.get 0) (i32.const 1)) (then (throw $e (local.get 0))))
    (i32.const 5))
  (func (export "try_table") (param i32) (result i32)
    (local $x exnref)
    block $h (result i32 exnref)
      try_table (result i32) (catch_ref $e $h)
        local.get 0
        call $thrower
      end
      return
    end
    local.set $x
    i32.const 100
    i32.gt_u
    if
      local.get $x
      throw_ref
    end
    i32.const 1)
  (func (export "legacy") (param i32) (result i32)
    try (result i32)
      try (result i32)
        try (result i32)
          local.get 0
          call $thrower
        delegate 0
      catch_all
        rethrow 0
      end
    catch $e
      i32.const 3
      i32.add
    end)
  (func (export "direct") (param i32) (result i32)
    (block $h (result i32)
      (try_table (result i32) (catch $e $h)
        (if (local.get 0) (then (throw $e (i32.mul (local.get 0) (i32.const 2)))))
        (i32.const 11))))
))";

TEST(CompilerExceptions, CatchesRunFromTheCodeCacheAndByTierUpAsInTheInterpreter) {
  every_way_agrees(kExceptionForms, {{"try_table", Value::i32(0)},
                                     {"try_table", Value::i32(7)},
                                     {"try_table", Value::i32(101)},
                                     {"legacy", Value::i32(2)},
                                     {"legacy", Value::i32(9)},
                                     {"direct", Value::i32(0)},
                                     {"direct", Value::i32(4)}});
}

// Typed function references: call_ref, return_call_ref, ref.as_non_null, br_on_null and
// br_on_non_null compile. Results, the null traps (kind, function,
// offset) and fuel equal the interpreter's; call_ref reaches compiled callees of this instance
// natively, others (an import, a host function) through the helper.
constexpr std::string_view kTypedRefs = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (type $ii (func (param i32) (result i32)))
  (func $inc (type $ii) (i32.add (local.get 0) (i32.const 1)))
  (elem declare func $inc $add1)
  (func $pick (param i32) (result (ref null $ii))
    (if (result (ref null $ii)) (i32.eq (local.get 0) (i32.const 2))
      (then (ref.func $add1))
      (else (select (result (ref null $ii)) (ref.func $inc) (ref.null $ii) (local.get 0)))))
  (func (export "call") (param i32) (result i32)
    (i32.mul (call_ref $ii (i32.const 4) (call $pick (local.get 0))) (i32.const 3)))
  (func (export "tail") (param i32) (result i32)
    (return_call_ref $ii (i32.const 9) (call $pick (local.get 0))))
  (func (export "branch") (param i32) (result i32)
    (block $null (return (call_ref $ii (i32.const 1) (br_on_null $null (call $pick (local.get 0))))))
    (i32.const -1))
  (func (export "nonnull") (param i32) (result i32)
    (call_ref $ii (i32.const 5) (ref.as_non_null (call $pick (local.get 0)))))
  (func (export "onnonnull") (param i32) (result i32)
    (block $some (result (ref $ii))
      (br_on_non_null $some (call $pick (local.get 0)))
      (return (i32.const 77)))
    (drop)
    (i32.const 88))
))";

TEST(CompilerTypedRefs, FunctionsUsingThemCompileAndAgreeWithTheInterpreter) {
  auto module = compile_wat(kTypedRefs);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
  auto same = [&](std::string_view name, std::uint32_t arg, std::optional<std::uint64_t> fuel) {
    return tiers_agree(module, name, Value::i32(arg), fuel);
  };
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20}}) {
    EXPECT_EQ(same("call", 1, fuel).results.at(0).bits, 15u);
    EXPECT_EQ(same("call", 0, fuel).trap, TrapKind::NullFunctionReference);
    EXPECT_EQ(same("tail", 1, fuel).results.at(0).bits, 10u);
    EXPECT_EQ(same("tail", 0, fuel).trap, TrapKind::NullFunctionReference);
    EXPECT_EQ(same("branch", 1, fuel).results.at(0).bits, 2u);
    EXPECT_EQ(same("branch", 0, fuel).results.at(0).bits, 0xFFFFFFFFu);
    EXPECT_EQ(same("branch", 2, fuel).results.at(0).bits, 2u);  // host callee through the helper
    EXPECT_EQ(same("call", 2, fuel).results.at(0).bits, 15u);
    EXPECT_EQ(same("tail", 2, fuel).results.at(0).bits, 10u);
    EXPECT_EQ(same("nonnull", 1, fuel).results.at(0).bits, 6u);
    EXPECT_EQ(same("nonnull", 0, fuel).trap, TrapKind::NullReference);
    EXPECT_EQ(same("onnonnull", 1, fuel).results.at(0).bits, 88u);
    EXPECT_EQ(same("onnonnull", 0, fuel).results.at(0).bits, 77u);
  }
  for (std::string_view name : {"call", "tail", "branch", "nonnull", "onnonnull"}) {
    for (std::uint32_t arg : {0u, 1u, 2u}) {
      const Outcome full = run(module, Tier::Interpret, name, {Value::i32(arg)}, std::uint64_t{1} << 20);
      for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
        same(name, arg, budget);
        if (HasFailure()) return;
      }
    }
  }
}

// The same tail calls and typed references from the code cache (`sprawl compile`'s entries) and
// from tier-up's per-function code (callees reached through their slots): the interpreter's
// outcomes, before and after the hot functions are compiled.
TEST(CompilerTailCalls, CachedAndTieredUpCodeAgreeWithTheInterpreter) {
  const std::vector<std::pair<std::string_view, std::uint32_t>> calls = {
      {"count", 1000}, {"indirect", 0}, {"indirect", 1}, {"indirect", 2}, {"div", 0}, {"parity", 2001},
      {"pingpong", 3000}, {"iparity", 999}, {"host", 3}};
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("sprawl-tail-call-cache-" + std::to_string(::getpid()));
  auto cache = std::make_shared<runtime::engine::FileCodeCache>(dir, std::uint64_t{64} << 20);
  for (const bool metered : {false, true}) {
    auto module = compile_wat(kTailCalls);
    auto report = precompile(*module, metered, *cache);
    ASSERT_TRUE(report.has_value()) << (report ? "" : report.error());
    EXPECT_EQ(report->compiled, 14u);  // all but $odd (over the compile budget)
  }
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    auto module = compile_wat(kTailCalls);
    for (const auto& [name, arg] : calls) {
      EXPECT_EQ(run(module, Tier::Interpret, name, {Value::i32(arg)}, fuel),
                run(module, Tier::Auto, name, {Value::i32(arg)}, fuel, {}, cache))
          << "cached " << name << "(" << arg << ")";
    }
    const jit::ModuleCode* code = module->impl().jit_for(fuel ? kMetered : kUnmetered, Tier::Auto, cache);
    ASSERT_NE(code, nullptr);
    EXPECT_TRUE(code->from_cache);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);

  jit::tier_up_set_calls(3);
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    const int variant = fuel ? kMetered : kUnmetered;
    for (const std::string_view wat : {kTailCalls, kTypedRefs}) {
      auto module = compile_wat(wat);
      for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 8; ++i) {
          for (const auto& [name, arg] : calls) {
            if (wat == kTypedRefs) break;
            EXPECT_EQ(run(module, Tier::Interpret, name, {Value::i32(arg)}, fuel),
                      run(module, Tier::Auto, name, {Value::i32(arg)}, fuel))
                << "tier-up " << name << "(" << arg << ") round " << round;
          }
          if (wat == kTypedRefs) {
            for (std::string_view name : {"call", "tail", "branch", "nonnull", "onnonnull"})
              for (std::uint32_t arg : {0u, 1u, 2u})
                EXPECT_EQ(run(module, Tier::Interpret, name, {Value::i32(arg)}, fuel),
                          run(module, Tier::Auto, name, {Value::i32(arg)}, fuel))
                    << "tier-up " << name << "(" << arg << ") round " << round;
          }
        }
        ASSERT_TRUE(jit::tier_up_wait_idle(120'000));
      }
      const std::lock_guard lock(module->impl().jit_mutex);
      const jit::ModuleCode* code = module->impl().jit_tier_up[variant].get();
      ASSERT_NE(code, nullptr);
      std::size_t compiled = 0;
      for (std::size_t f = 0; f < code->entries.size(); ++f)
        if (code->entries[f].entry.load() != nullptr) ++compiled;
      EXPECT_GE(compiled, wat == kTailCalls ? 10u : 5u) << "variant " << variant;
    }
  }
  jit::tier_up_set_calls(20000);
}

// Calls through references and tail calls count their arguments in slots (a v128 takes two), and
// return_call_indirect reads a table64 index whole: a v128 passed by call_ref and return_call_ref,
// and a 64-bit index of 2^32 + 1, which must trap as out of bounds rather than call element 1.
constexpr std::string_view kWideArgs = R"((module
  (type $vv (func (param i32 v128 i32) (result i32)))
  (func $sum (type $vv)
    (i32.add (i32.add (local.get 0) (local.get 2))
      (i32.add (i32x4.extract_lane 0 (local.get 1)) (i32x4.extract_lane 3 (local.get 1)))))
  (elem declare func $sum)
  (func (export "call_ref") (param i32) (result i32)
    (call_ref $vv (local.get 0) (i32x4.splat (i32.const 10)) (i32.const 3) (ref.func $sum)))
  (func (export "tail_ref") (param i32) (result i32)
    (return_call_ref $vv (local.get 0) (i32x4.splat (i32.const 20)) (i32.const 5) (ref.func $sum)))
  (table $t i64 2 funcref)
  (elem (table $t) (i64.const 0) func $sum $sum)
  (func (export "tail_indirect64") (param i64) (result i32)
    (return_call_indirect $t (type $vv) (i32.const 1) (i32x4.splat (i32.const 2)) (i32.const 4) (local.get 0)))
))";

TEST(CompilerTypedRefs, WideArgumentsAndTable64IndexesAgreeWithTheInterpreter) {
  auto module = compile_wat(kWideArgs);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20}}) {
    EXPECT_EQ(tiers_agree(module, "call_ref", Value::i32(1), fuel).results.at(0).bits, 24u);
    EXPECT_EQ(tiers_agree(module, "tail_ref", Value::i32(1), fuel).results.at(0).bits, 46u);
    EXPECT_EQ(tiers_agree(module, "tail_indirect64", Value::i64(1), fuel).results.at(0).bits, 9u);
    EXPECT_EQ(tiers_agree(module, "tail_indirect64", Value::i64((std::uint64_t{1} << 32) + 1), fuel).trap,
              TrapKind::UndefinedElement);
  }
}


// call_indirect and call_ref call a callee's machine code inline once the callee is resolved in
// the store (FuncInst::native, set by the helper the first inline attempt falls back to): callees
// with a small frame, a large frame (the value stack's room check reads its size) and a costly
// first segment (the metered entry charge), first reached through each instruction.
constexpr std::string_view kIndirectCallees = R"((module
  (type $t (func (param i32) (result i32)))
  (table $tab 3 funcref)
  (elem (table $tab) (i32.const 0) func $small $costly $big)
  (func $small (export "small") (type $t) (i32.add (local.get 0) (i32.const 1)))
  (func $costly (type $t)
    (i32.xor (i32.mul (i32.add (i32.mul (local.get 0) (i32.const 3)) (i32.const 7)) (i32.const 5))
             (i32.shr_u (i32.add (i32.rotl (local.get 0) (i32.const 9)) (i32.const 11)) (i32.const 2))))
  ;; 290 locals: a frame of about 300 slots. Recurses through the table while x > 0.
  (func $big (export "big") (type $t) (local i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
    i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64)
    (local.set 290 (i64.extend_i32_u (local.get 0)))
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.wrap_i64 (local.get 290)))
      (else (i32.add (i32.const 1) (call_indirect (type $t) (i32.sub (local.get 0) (i32.const 1)) (i32.const 2))))))
  ;; n rounds: each calls every callee through call_indirect and through call_ref.
  (func (export "mix") (param $n i32) (result i32) (local $i i32) (local $acc i32)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $acc (i32.add (local.get $acc)
          (call_indirect (type $t) (i32.xor (local.get $acc) (local.get $i)) (i32.rem_u (local.get $i) (i32.const 3)))))
        (local.set $acc (i32.add (local.get $acc)
          (call_ref $t (local.get $i) (ref.cast (ref $t) (table.get $tab (i32.rem_u (i32.add (local.get $i) (i32.const 1)) (i32.const 3)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $acc))
  (func (export "deep") (param i32) (result i32) (call_indirect (type $t) (local.get 0) (i32.const 2)))
))";

TEST(CompilerCalls, CallIndirectAndCallRefReachEachCalleesMachineCodeWithItsFrameAndEntryCharge) {
  auto module = compile_wat(kIndirectCallees);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
  StoreLimits small_stack;
  small_stack.max_value_stack_slots = 20'000;  // "deep" runs out of it at about 60 frames of "big"
  for (const auto& [name, n] : std::vector<std::pair<const char*, std::uint32_t>>{
           {"mix", 1}, {"mix", 2}, {"mix", 3}, {"mix", 50}, {"deep", 10}, {"deep", 59}, {"deep", 200}}) {
    const std::vector<Value> args{Value::i32(n)};
    const Outcome all = run(module, Tier::Interpret, name, args, std::uint64_t{1} << 40, small_stack);
    std::vector<std::optional<std::uint64_t>> budgets{std::nullopt, std::uint64_t{1} << 40};
    for (std::uint64_t f : {all.fuel / 2, all.fuel / 3 + 1, all.fuel - 1, all.fuel}) budgets.emplace_back(f);
    for (const std::optional<std::uint64_t>& fuel : budgets) {
      const Outcome want = run(module, Tier::Interpret, name, args, fuel, small_stack);
      const Outcome got = run(module, Tier::Compile, name, args, fuel, small_stack);
      EXPECT_EQ(want, got) << name << "(" << n << ") fuel " << (fuel ? static_cast<long long>(*fuel) : -1);
    }
  }
  EXPECT_EQ(run(module, Tier::Compile, "deep", {Value::i32(200)}, std::nullopt, small_stack).trap,
            TrapKind::CallStackExhausted);
  // After a round of "mix" on the compiled tier, each callee reached through the table has its
  // machine code recorded for the inline path; a function never called has none.
  for (const std::optional<std::uint64_t>& fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 20}}) {
    Store store;
    ASSERT_TRUE(store.set_tier(Tier::Compile));
    store.set_budget({fuel, std::nullopt});
    auto inst = store.instantiate(module, {});
    ASSERT_TRUE(inst.has_value());
    auto* small = std::get<FuncInst*>(*(*inst)->find_export("small"));
    auto* big = std::get<FuncInst*>(*(*inst)->find_export("big"));
    const int variant = fuel ? kMetered : kUnmetered;
    EXPECT_EQ(small->native[variant], nullptr);
    ASSERT_TRUE(store.invoke(std::get<FuncInst*>(*(*inst)->find_export("mix")), std::vector<Value>{Value::i32(3)}));
    EXPECT_NE(small->native[variant], nullptr);
    EXPECT_NE(big->native[variant], nullptr);
    EXPECT_EQ(small->native[1 - variant], nullptr);
  }
}


// table.grow of 2^63 elements or more on a table64, its counter overdrawn by its segment's charge:
// both tiers run out of fuel with exactly the budget consumed (the charge once wrapped the
// counter to a balance near 2^63 on both).
TEST(CompilerFuel, TableGrowOfTwoToTheSixtyThreeRunsOutOfFuelOnBothTiers) {
  auto module = compile_wat(fuel_testing::kTable64GrowModule);
  ASSERT_NE(module, nullptr);
  for (const std::uint64_t n : {std::uint64_t{1} << 63, ~std::uint64_t{0}}) {
    for (const std::uint64_t fuel : {3u, 17u, 1000u}) {
      const Outcome o = tiers_agree(module, "grow", Value::i64(n), fuel);
      EXPECT_EQ(o.trap, TrapKind::OutOfFuel) << n << " on " << fuel;
      EXPECT_EQ(o.fuel, fuel);
    }
  }
}

}  // namespace
}  // namespace sprawling::wasm
