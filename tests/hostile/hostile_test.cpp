// The hostile-guest suite (docs/hostile.md): guests written to exhaust, flood or crash the host,
// each asserting the exact classified outcome and that the host stayed within bounded memory
// and time. Big modules are generated here with the binary writer, never committed.
#include "hostile/hostile_support.hpp"
#include "hostile/wasm_writer.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <string>
#include <vector>

namespace sprawling::hostile {
namespace {

using runtime::ErrorCode;
using runtime::Failure;
using runtime::FuelExhausted;
using runtime::SandboxExit;
using runtime::Success;
using runtime::WasmSandbox;
namespace ww = test::wasm_writer;

// The few WASI imports the guests use (functions 0-2), and $report (function 3), which writes
// one u32 word to stdout; a guest's own functions are numbered from 4.
constexpr std::string_view kPrelude = R"(
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (func $report (param $v i32)
    (i32.store (i32.const 100) (local.get $v))
    (i32.store (i32.const 0) (i32.const 100))
    (i32.store (i32.const 4) (i32.const 4))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
)";

std::string guest(std::string_view body) { return "(module " + std::string(kPrelude) + std::string(body) + ")\n"; }

class Hostile : public Tiered {
 protected:
  // A guest that keeps objects alive (exceptions, GC objects) under a 4 MiB store cap ends with
  // the trap starting `prefix`, in bounded time and host memory.
  static void expect_store_cap_trap(const std::filesystem::path& wasm, std::uint64_t fuel, std::string_view prefix) {
    runtime::SandboxConfig c;
    c.max_store_bytes = 4 * kMiB;
    runtime::WasmSandbox sandbox(config(c));
    Bounds bounds(30.0, 64 * kMiB);
    auto outcome = sandbox.run(job(wasm, fuel));
    ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
    EXPECT_EQ(trap_message(*outcome).rfind(prefix, 0), 0u) << trap_message(*outcome);
    bounds.check();
  }
};
INSTANTIATE_TEST_SUITE_P(Tiers, Hostile, ::testing::ValuesIn(tiers()), tier_name);

// ---------------------------------------------------------------- memory

TEST_P(Hostile, MemoryBombStopsAtTheCapAndKeepsBeingRefused) {
  Scratch dir;
  const auto wasm = dir.write("bomb.wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start") (local $grows i32) (local $i i32)
    (block $refused (loop $more
      (br_if $refused (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
      ;; touch every new page, so the pages are really resident
      (i32.store (i32.mul (i32.sub (memory.size) (i32.const 1)) (i32.const 65536)) (i32.const 1))
      (local.set $grows (i32.add (local.get $grows) (i32.const 1)))
      (br $more)))
    (local.set $i (i32.const 100000))
    (loop $again
      (if (i32.ne (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))
      (if (i32.ne (memory.grow (i32.const 65535)) (i32.const -1)) (then unreachable))
      (br_if $again (local.tee $i (i32.sub (local.get $i) (i32.const 1)))))
    (call $report (local.get $grows))
    (call $report (memory.size)))
)"));
  WasmSandbox sandbox(config({.max_memory_bytes = 16 * kMiB}));
  Bounds bounds(30.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 10'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  EXPECT_EQ(words(outcome->stdout_bytes), (std::vector<std::uint32_t>{255, 256}));
  EXPECT_EQ(outcome->stats->peak_memory_bytes, 16 * kMiB);
  bounds.check();
}

TEST_P(Hostile, MemoryMinimumAboveTheCapIsRefusedBeforeTheGuestRuns) {
  Scratch dir;
  const auto wasm = dir.write("big-min.wat", guest(R"((memory (export "memory") 1000) (func (export "_start")))"));
  WasmSandbox sandbox(config({.max_memory_bytes = 16 * kMiB}));
  auto outcome = sandbox.run(job(wasm, 1'000));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule) << outcome.error().to_string();
}

// ---------------------------------------------------------------- recursion

TEST_P(Hostile, DeepRecursionIsCallStackExhausted) {
  Scratch dir;
  const auto wasm = dir.write("deep.wat", guest(R"(
  (memory (export "memory") 1)
  (func $down (param $n i64) (result i64) (call $down (i64.add (local.get $n) (i64.const 1))))
  (func (export "_start") (drop (call $down (i64.const 0))))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(30.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 100'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(trap_message(*outcome).rfind("call stack exhausted in function 4", 0), 0u) << trap_message(*outcome);
  bounds.check();
}

TEST_P(Hostile, RecursionWithHugeFramesIsCallStackExhausted) {
  std::string locals;
  for (int i = 0; i < 4000; ++i) locals += " i64";
  Scratch dir;
  const auto wasm = dir.write("fat.wat", guest(R"(
  (memory (export "memory") 1)
  (func $down (param $n i32) (local)" + locals + R"()
    (call $down (i32.add (local.get $n) (i32.const 1))))
  (func (export "_start") (call $down (i32.const 0)))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(30.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 100'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(trap_message(*outcome).rfind("call stack exhausted in function 4", 0), 0u) << trap_message(*outcome);
  bounds.check();
}

TEST_P(Hostile, MutualRecursionIsCallStackExhausted) {
  Scratch dir;
  const auto wasm = dir.write("mutual.wat", guest(R"(
  (memory (export "memory") 1)
  (func $ping (param i32 f64) (result i32) (call $pong (local.get 1) (local.get 0)))
  (func $pong (param f64 i32) (result i32) (call $ping (i32.add (local.get 1) (i32.const 1)) (local.get 0)))
  (func (export "_start") (drop (call $ping (i32.const 0) (f64.const 1))))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(30.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 100'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(trap_message(*outcome).rfind("call stack exhausted in function ", 0), 0u) << trap_message(*outcome);
  bounds.check();
}

TEST_P(Hostile, RecursionThroughCallIndirectIsCallStackExhausted) {
  Scratch dir;
  const auto wasm = dir.write("indirect.wat", guest(R"(
  (type $t (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (table 1 funcref)
  (elem (i32.const 0) $again)
  (func $again (type $t) (call_indirect (type $t) (i32.add (local.get 0) (i32.const 1)) (i32.const 0)))
  (func (export "_start") (drop (call $again (i32.const 0))))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(30.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 100'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(trap_message(*outcome).rfind("call stack exhausted in function 4", 0), 0u) << trap_message(*outcome);
  bounds.check();
}

// ---------------------------------------------------------------- time

TEST_P(Hostile, InfiniteLoopWithFuelOffEndsAtTheDeadline) {
  Scratch dir;
  const auto wasm = dir.write("spin.wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start") (loop $spin (br $spin)))
)"));
  WasmSandbox sandbox(config({.timeout = std::chrono::milliseconds(300), .meter_fuel = false}));
  const auto start = Clock::now();
  auto outcome = sandbox.run(job(wasm, 1));
  const double elapsed = seconds_since(start);
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{runtime::Trap{"deadline exceeded"}});
  EXPECT_GE(elapsed, 0.3);
  EXPECT_LT(elapsed, 3.0);
}

TEST_P(Hostile, InfiniteLoopWithFuelOnIsFuelExhaustedAtExactlyTheBudget) {
  Scratch dir;
  const auto wasm = dir.write("spin.wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start") (loop $spin (br $spin)))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(10.0, 16 * kMiB);
  auto outcome = sandbox.run(job(wasm, 5'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{FuelExhausted{}});
  EXPECT_EQ(outcome->stats->fuel_consumed, 5'000'000u);
  bounds.check();
}

// ---------------------------------------------------------------- output

TEST_P(Hostile, OutputFloodStopsAtTheCapWithEio) {
  Scratch dir;
  const auto wasm = dir.write("flood.wat", R"((module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 2)
  (func (export "_start") (local $writes i32) (local $errno i32) (local $i i32)
    (memory.fill (i32.const 65536) (i32.const 0x41) (i32.const 65536))
    (i32.store (i32.const 0) (i32.const 65536))
    (i32.store (i32.const 4) (i32.const 65536))
    (block $stopped (loop $flood
      (local.set $errno (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
      (br_if $stopped (local.get $errno))
      (local.set $writes (i32.add (local.get $writes) (i32.const 1)))
      (br $flood)))
    ;; refused, and keeps flooding anyway: every further write must fail too
    (local.set $i (i32.const 10000))
    (loop $more
      (if (i32.eqz (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))) (then unreachable))
      (br_if $more (local.tee $i (i32.sub (local.get $i) (i32.const 1)))))
    (i32.store (i32.const 100) (local.get $writes))
    (i32.store (i32.const 0) (i32.const 100))
    (i32.store (i32.const 4) (i32.const 4))
    (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
    (call $proc_exit (local.get $errno))))
)");
  WasmSandbox sandbox(config({.max_stdout_bytes = kMiB}));
  Bounds bounds(30.0, 32 * kMiB);
  auto outcome = sandbox.run(job(wasm, 100'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Failure{29}});  // WASI EIO
  EXPECT_EQ(outcome->stdout_bytes.size(), kMiB);
  EXPECT_TRUE(outcome->stats->stdout_truncated);
  EXPECT_FALSE(outcome->stats->stderr_truncated);
  EXPECT_EQ(words(outcome->stderr_bytes), (std::vector<std::uint32_t>{16}));
  bounds.check();
}

// ---------------------------------------------------------------- argv / env

TEST_P(Hostile, HugeArgvAndEnvArriveWhole) {
  Scratch dir;
  const auto wasm = dir.write("args.wat", R"((module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $environ_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start") (local $argv i32) (local $envp i32) (local $last i32)
    (if (call $args_sizes_get (i32.const 16) (i32.const 20)) (then unreachable))
    (if (call $environ_sizes_get (i32.const 24) (i32.const 28)) (then unreachable))
    ;; room for both pointer arrays and both buffers
    (drop (memory.grow (i32.add (i32.const 2) (i32.div_u
      (i32.add (i32.add (i32.mul (i32.load (i32.const 16)) (i32.const 4)) (i32.load (i32.const 20)))
               (i32.add (i32.mul (i32.load (i32.const 24)) (i32.const 4)) (i32.load (i32.const 28))))
      (i32.const 65536)))))
    (local.set $argv (i32.const 65536))
    (local.set $envp (i32.add (local.get $argv)
      (i32.add (i32.mul (i32.load (i32.const 16)) (i32.const 4)) (i32.load (i32.const 20)))))
    (if (call $args_get (local.get $argv) (i32.add (local.get $argv) (i32.mul (i32.load (i32.const 16)) (i32.const 4))))
      (then unreachable))
    (if (call $environ_get (local.get $envp) (i32.add (local.get $envp) (i32.mul (i32.load (i32.const 24)) (i32.const 4))))
      (then unreachable))
    ;; the first byte of the last argument and of the last variable
    (i32.store (i32.const 32) (i32.load8_u (i32.load (i32.add (local.get $argv)
      (i32.mul (i32.sub (i32.load (i32.const 16)) (i32.const 1)) (i32.const 4))))))
    (i32.store (i32.const 36) (i32.load8_u (i32.load (i32.add (local.get $envp)
      (i32.mul (i32.sub (i32.load (i32.const 24)) (i32.const 1)) (i32.const 4))))))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 24))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
)");
  auto j = job(wasm, 10'000'000);
  j.argv.clear();
  std::uint64_t arg_bytes = 0;
  for (int i = 0; i < 100'000; ++i) {
    j.argv.push_back(std::string(1, static_cast<char>('a' + i % 26)) + std::string(99, 'x'));
    arg_bytes += 101;
  }
  std::uint64_t env_bytes = 0;
  for (int i = 0; i < 10'000; ++i) {
    // Appended, not "K" + to_string(i): that trips GCC 12's false -Wrestrict at -O3.
    j.env.emplace_back(std::string("K").append(std::to_string(i)), std::string(100, 'v'));
    env_bytes += 1 + std::to_string(i).size() + 1 + 100 + 1;
  }
  WasmSandbox sandbox(config());
  Bounds bounds(30.0, 96 * kMiB);
  auto outcome = sandbox.run(j);
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  // argc, argv bytes, envc, env bytes, argv[99999][0] ('a' + 99999 % 26 = 'v'), 'K'
  EXPECT_EQ(words(outcome->stdout_bytes),
            (std::vector<std::uint32_t>{100'000, static_cast<std::uint32_t>(arg_bytes), 10'000,
                                        static_cast<std::uint32_t>(env_bytes), 'a' + 99'999 % 26, 'K'}));
  bounds.check();
}

// ---------------------------------------------------------------- fds

TEST_P(Hostile, TenThousandPathOpensWithoutCloseHitEmfileAndLeakNothing) {
  Scratch dir;
  Scratch mount;
  mount.write("f", std::string_view("data"));
  const auto wasm = dir.write("opens.wat", guest(R"(
  (memory (export "memory") 1)
  (data (i32.const 200) "f")
  (func (export "_start") (local $i i32) (local $ok i32) (local $mfile i32) (local $other i32) (local $e i32)
    (local.set $i (i32.const 10000))
    (loop $open
      (local.set $e (call $path_open (i32.const 3) (i32.const 0) (i32.const 200) (i32.const 1)
                                     (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 300)))
      (if (i32.eqz (local.get $e)) (then (local.set $ok (i32.add (local.get $ok) (i32.const 1))))
        (else (if (i32.eq (local.get $e) (i32.const 33))
          (then (local.set $mfile (i32.add (local.get $mfile) (i32.const 1))))
          (else (local.set $other (i32.add (local.get $other) (i32.const 1)))))))
      (br_if $open (local.tee $i (i32.sub (local.get $i) (i32.const 1)))))
    (call $report (local.get $ok))
    (call $report (local.get $mfile))
    (call $report (local.get $other)))
)"));
  auto j = job(wasm, 10'000'000);
  j.mounts.push_back(runtime::Mount{.host = mount.path(), .guest = "/data", .writable = false});
  WasmSandbox sandbox(config());
  const std::size_t fds_before = open_fds();
  Bounds bounds(30.0, 32 * kMiB);
  auto outcome = sandbox.run(j);
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  // 1024 guest fds at most, stdio and the preopen included: 1020 opens succeed, the rest EMFILE.
  EXPECT_EQ(words(outcome->stdout_bytes), (std::vector<std::uint32_t>{1020, 8980, 0}));
  EXPECT_EQ(open_fds(), fds_before);
  bounds.check();
}

// ---------------------------------------------------------------- huge modules

// The _start of a generated module: type [] -> [] exported under that name.
void export_start(ww::Module& m, std::uint32_t func_index) {
  m.exports.push_back(ww::Export{"_start", 0, func_index});
  m.exports.push_back(ww::Export{"memory", 2, 0});
}

TEST_P(Hostile, HundredThousandDataSegments) {
  ww::Module m;
  m.memory = ww::Limits{2, 2};
  for (std::int32_t i = 0; i < 100'000; ++i) {
    m.datas.push_back(ww::DataSegment{.passive = false, .offset = i, .bytes = {static_cast<std::uint8_t>(i & 0xff)}});
  }
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  for (std::int32_t probe : {0, 12'345, 99'999, 100'000}) {  // 100,000 is past the last segment: still 0
    ww::i32_const(start.code, probe);
    ww::memarg(start.code, 0x2d, 0, 0);  // i32.load8_u
    ww::i32_const(start.code, probe < 100'000 ? probe & 0xff : 0);
    start.code.insert(start.code.end(), {0x47, 0x04, 0x40, 0x00, 0x0b});  // i32.ne if unreachable end
  }
  m.functions.push_back(start);
  export_start(m, 0);
  Scratch dir;
  const auto wasm = dir.write("datas.wasm", m.build());
  WasmSandbox sandbox(config());
  Bounds bounds(60.0, 128 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  bounds.check();
}

// On the compiled tier the lazy path takes the first 10,000 functions (its module budget), each
// with an IR module of its own (about 14 KB), and leaves the rest interpreted: 0.5 s and about
// 160 MiB of peak growth, measured.
TEST_P(Hostile, HundredThousandFunctions) {
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  const std::uint32_t returns_i32 = m.add_type({.params = {}, .results = {ww::type::i32}});
  for (std::int32_t i = 0; i < 100'000; ++i) {
    ww::Function f{.type_index = returns_i32, .locals = {}, .code = {}};
    ww::i32_const(f.code, i);
    m.functions.push_back(std::move(f));
  }
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  ww::op_index(start.code, 0x10, 99'999);
  ww::op_index(start.code, 0x10, 0);
  ww::op_index(start.code, 0x10, 54'321);
  start.code.insert(start.code.end(), {0x6a, 0x6a});  // i32.add i32.add
  ww::i32_const(start.code, 99'999 + 54'321);
  start.code.insert(start.code.end(), {0x47, 0x04, 0x40, 0x00, 0x0b});
  m.functions.push_back(start);
  export_start(m, 100'000);
  Scratch dir;
  const auto wasm = dir.write("funcs.wasm", m.build());
  WasmSandbox sandbox(config());
  Bounds bounds(60.0, 256 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  bounds.check();
}

// On the compiled tier the body is over the compile budget and stays interpreted (LLVM takes more
// than two minutes for it without the budget); its caller is compiled.
TEST_P(Hostile, TenMegabyteFunctionBody) {
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  ww::Function big{.type_index = m.add_type({.params = {ww::type::i32}, .results = {ww::type::i32}}), .locals = {}, .code = {}};
  std::uint32_t steps = 0;
  while (big.code.size() < 10 * kMiB) {  // local.get 0, i32.const 1, i32.add, local.set 0: 7 bytes
    big.code.insert(big.code.end(), {0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00});
    ++steps;
  }
  big.code.insert(big.code.end(), {0x20, 0x00});
  m.functions.push_back(std::move(big));
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  ww::i32_const(start.code, 0);
  ww::op_index(start.code, 0x10, 0);
  ww::i32_const(start.code, static_cast<std::int32_t>(steps));
  start.code.insert(start.code.end(), {0x47, 0x04, 0x40, 0x00, 0x0b});
  m.functions.push_back(std::move(start));
  export_start(m, 1);
  Scratch dir;
  const auto wasm = dir.write("big.wasm", m.build());
  WasmSandbox sandbox(config());
  Bounds bounds(120.0, 640 * kMiB);
  auto outcome = sandbox.run(job(wasm, 100'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  EXPECT_EQ(outcome->stats->fuel_consumed, 4ull * steps + 8);
  bounds.check();
}

TEST_P(Hostile, MillionNestedBlocks) {
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  constexpr std::size_t kDepth = 1'000'000;
  for (std::size_t i = 0; i < kDepth; ++i) start.code.insert(start.code.end(), {0x02, 0x40});
  start.code.insert(start.code.end(), kDepth, 0x0b);
  m.functions.push_back(std::move(start));
  export_start(m, 0);
  Scratch dir;
  const auto wasm = dir.write("nested.wasm", m.build());
  WasmSandbox sandbox(config());
  Bounds bounds(60.0, 512 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  bounds.check();
}

// Text guests that nest without end: the WAT front end must answer without exhausting the native
// stack. Flat `block … end` nesting is legal at any depth (an explicit stack); folded nesting is
// bounded (E_INVALID_MODULE, "nesting too deep"); a million open parentheses are a syntax error.
TEST_P(Hostile, DeeplyNestedTextIsAnsweredNotACrash) {
  Scratch dir;
  WasmSandbox sandbox(config());
  constexpr std::size_t kDepth = 200'000;
  const std::string head = "(module (memory (export \"memory\") 1) (func (export \"_start\")";
  std::string flat = head;
  for (std::size_t i = 0; i < kDepth; ++i) flat += " block";
  for (std::size_t i = 0; i < kDepth; ++i) flat += " end";
  flat += "))";
  std::string folded = head;
  for (std::size_t i = 0; i < kDepth; ++i) folded += " (block";
  folded += std::string(kDepth, ')') + "))";
  const std::string parens = "(module " + std::string(1'000'000, '(');
  struct Case {
    const char* name;
    const std::string& source;
    bool runs;
  };
  for (const Case& c : {Case{"flat.wat", flat, true}, Case{"folded.wat", folded, false}, Case{"parens.wat", parens, false}}) {
    const auto wasm = dir.write(c.name, c.source);
    Bounds bounds(60.0, 512 * kMiB);
    auto outcome = sandbox.run(job(wasm, 1'000'000));
    if (c.runs) {
      ASSERT_TRUE(outcome.has_value()) << c.name << ": " << outcome.error().to_string();
      EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << c.name;
    } else {
      ASSERT_FALSE(outcome.has_value()) << c.name;
      EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule) << c.name << ": " << outcome.error().to_string();
    }
    bounds.check();
  }
}

// Counts that promise far more than the bytes that follow: nothing may be reserved on their word.
TEST_P(Hostile, CountsLargerThanTheModuleAreMalformedWithoutAllocating) {
  const ww::Bytes magic{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  auto module_with = [&](std::uint8_t section, const ww::Bytes& body) {
    ww::Bytes out = magic;
    out.push_back(section);
    ww::uleb(out, body.size());
    ww::append(out, body);
    return out;
  };
  ww::Bytes huge;
  ww::uleb(huge, 0xffffffffu);
  std::vector<ww::Bytes> modules;
  for (std::uint8_t section : {1, 2, 3, 4, 5, 6, 7, 9, 10, 11}) modules.push_back(module_with(section, huge));
  {  // a function body declaring 2^32-1 locals, then 2^31 more
    ww::Bytes code{0x01};  // one body
    ww::Bytes body{0x02};  // two local entries
    ww::uleb(body, 0xffffffffu);
    body.push_back(ww::type::i64);
    ww::uleb(body, 0x80000000u);
    body.push_back(ww::type::i32);
    body.push_back(0x0b);
    ww::uleb(code, body.size());
    ww::append(code, body);
    ww::Bytes out = magic;
    ww::append(out, {0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00});  // type () -> (), one function
    out.push_back(0x0a);
    ww::uleb(out, code.size());
    ww::append(out, code);
    modules.push_back(out);
  }
  {  // a data segment claiming 4 GiB of bytes
    ww::Bytes body{0x01, 0x00, 0x41, 0x00, 0x0b};
    ww::uleb(body, 0xffffffffu);
    ww::Bytes out = magic;
    ww::append(out, {0x05, 0x03, 0x01, 0x00, 0x01});  // memory 1
    out.push_back(0x0b);
    ww::uleb(out, body.size());
    ww::append(out, body);
    modules.push_back(out);
  }
  Scratch dir;
  WasmSandbox sandbox(config());
  for (std::size_t i = 0; i < modules.size(); ++i) {
    const auto wasm = dir.write("count" + std::to_string(i) + ".wasm", modules[i]);
    Bounds bounds(5.0, 32 * kMiB);
    auto outcome = sandbox.run(job(wasm, 1'000));
    ASSERT_FALSE(outcome.has_value()) << "module " << i;
    EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule) << "module " << i << ": " << outcome.error().to_string();
    bounds.check();
  }
}

// Fuzz finding (fuzz_run, UBSan): a 9-byte signed LEB whose last byte carries the sign made the
// translator negate INT64_MIN (translator.cpp sleb). The value must come out right, and the asan
// preset must see no undefined behaviour on the way.
TEST_P(Hostile, NineByteSignedLebConstants) {
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  // i64.const -1 in nine bytes, i64.const -1 canonical, i64.ne, if unreachable end
  start.code.insert(start.code.end(), {0x42, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f});
  ww::i64_const(start.code, -1);
  start.code.insert(start.code.end(), {0x52, 0x04, 0x40, 0x00, 0x0b});
  // i64.const INT64_MIN in ten bytes against the canonical form
  start.code.insert(start.code.end(), {0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f});
  ww::i64_const(start.code, INT64_MIN);
  start.code.insert(start.code.end(), {0x52, 0x04, 0x40, 0x00, 0x0b});
  // i32.const -1 in five bytes
  start.code.insert(start.code.end(), {0x41, 0xff, 0xff, 0xff, 0xff, 0x7f});
  ww::i32_const(start.code, -1);
  start.code.insert(start.code.end(), {0x47, 0x04, 0x40, 0x00, 0x0b});
  m.functions.push_back(std::move(start));
  export_start(m, 0);
  Scratch dir;
  const auto wasm = dir.write("leb.wasm", m.build());
  WasmSandbox sandbox(config());
  auto outcome = sandbox.run(job(wasm, 1'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
}

// Fuzz finding (fuzz_decode, ASan: heap write out of bounds in decoder.cpp declare_ref): a
// function index of 2^32-1 in an export, an element segment or a ref.func constant wrapped
// `funcidx + 1` to 0, and a large in-range-of-u32 index made the decoder allocate a bit per
// possible function (2^31 → 256 MiB) before finding the index unknown. Each must be a plain
// E_INVALID_MODULE, with nothing written out of bounds and no big allocation.
ww::Bytes module_with_function_index(int where, std::uint32_t index) {
  const ww::Bytes header{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  ww::Bytes out = header;
  ww::append(out, {0x01, 0x04, 0x01, 0x60, 0x00, 0x00});  // type 0: [] -> []
  ww::append(out, {0x03, 0x02, 0x01, 0x00});              // one function of type 0
  ww::Bytes body;
  switch (where) {
    case 0: {  // export "f" (func index)
      ww::append(body, {0x01, 0x01, 'f', 0x00});
      ww::uleb(body, index);
      out.push_back(0x07);
      break;
    }
    case 1: {  // table + active element segment (i32.const 0) [index]
      ww::append(out, {0x04, 0x04, 0x01, 0x70, 0x00, 0x01});
      ww::append(body, {0x01, 0x00, 0x41, 0x00, 0x0b, 0x01});
      ww::uleb(body, index);
      out.push_back(0x09);
      break;
    }
    default: {  // global funcref = ref.func index
      ww::append(body, {0x01, 0x70, 0x00, 0xd2});
      ww::uleb(body, index);
      body.push_back(0x0b);
      out.push_back(0x06);
      break;
    }
  }
  ww::uleb(out, body.size());
  ww::append(out, body);
  ww::append(out, {0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b});  // the function's body: nothing
  return out;
}

TEST_P(Hostile, FunctionIndexOfTwoToTheThirtyTwoMinusOneIsInvalidNotAWildWrite) {
  Scratch dir;
  WasmSandbox sandbox(config());
  for (int where = 0; where < 3; ++where) {
    const auto wasm = dir.write("funcidx" + std::to_string(where) + ".wasm", module_with_function_index(where, 0xffffffffu));
    auto outcome = sandbox.run(job(wasm, 1'000));
    ASSERT_FALSE(outcome.has_value()) << "case " << where;
    EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule) << "case " << where << ": " << outcome.error().to_string();
  }
}

TEST_P(Hostile, HugeFunctionIndexIsInvalidWithoutAllocating) {
  Scratch dir;
  WasmSandbox sandbox(config());
  for (int where = 0; where < 3; ++where) {
    const auto wasm = dir.write("funcidx" + std::to_string(where) + ".wasm", module_with_function_index(where, 0x7fffffffu));
    Bounds bounds(5.0, 32 * kMiB);
    auto outcome = sandbox.run(job(wasm, 1'000));
    ASSERT_FALSE(outcome.has_value()) << "case " << where;
    EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule) << "case " << where << ": " << outcome.error().to_string();
    bounds.check();
  }
}

TEST_P(Hostile, TableOfTenMillionElements) {
  Scratch dir;
  const auto wasm = dir.write("table.wat", guest(R"(
  (type $seven (func (result i32)))
  (memory (export "memory") 1)
  (table $t 10000000 funcref)
  (elem declare func $f)
  (func $f (result i32) (i32.const 7))
  (func (export "_start")
    (if (i32.ne (table.size $t) (i32.const 10000000)) (then unreachable))
    (table.set $t (i32.const 9999999) (ref.func $f))
    (if (i32.ne (call_indirect $t (type $seven) (i32.const 9999999)) (i32.const 7)) (then unreachable))
    ;; one element more is refused, not granted
    (if (i32.ne (table.grow $t (ref.null func) (i32.const 1)) (i32.const -1)) (then unreachable)))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(60.0, 256 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  bounds.check();
}

TEST_P(Hostile, TableAboveTenMillionElementsIsRefused) {
  Scratch dir;
  const auto wasm = dir.write("table.wat", guest(R"(
  (memory (export "memory") 1)
  (table 10000001 funcref)
  (func (export "_start"))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(10.0, 16 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule) << outcome.error().to_string();
  bounds.check();
}

// ---------------------------------------------------------------- bulk memory against fuel

std::string bulk_guest(std::string_view op) {
  return guest(R"(
  (memory (export "memory") 1)
  (func (export "_start")
    (if (i32.ne (memory.grow (i32.const 65535)) (i32.const 1)) (then unreachable))
    )" + std::string(op) + R"()
)");
}

TEST_P(Hostile, MemoryFillOfFourGigabytesRunsOutOfFuelFirst) {
  Scratch dir;
  const auto wasm = dir.write("fill.wat", bulk_guest("(memory.fill (i32.const 0) (i32.const 0xab) (i32.const -1))"));
  WasmSandbox sandbox(config());
  Bounds bounds(10.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 10'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{FuelExhausted{}});
  EXPECT_EQ(outcome->stats->peak_memory_bytes, std::uint64_t{4} << 30);
  // Fuel exhausted means the budget was spent, never more (fuzz finding: the bulk charge was
  // reported in full, ~4 billion on a budget of 10,000).
  EXPECT_EQ(outcome->stats->fuel_consumed, 10'000u);
  bounds.check();
}

TEST_P(Hostile, MemoryCopyOfFourGigabytesRunsOutOfFuelFirst) {
  Scratch dir;
  const auto wasm = dir.write("copy.wat", bulk_guest("(memory.copy (i32.const 1) (i32.const 0) (i32.const -2))"));
  WasmSandbox sandbox(config());
  Bounds bounds(10.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 10'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{FuelExhausted{}});
  EXPECT_EQ(outcome->stats->fuel_consumed, 10'000u);
  bounds.check();
}

// Fuzz finding (fuzz_run, crash-43923e98): table.grow charges one unit per requested element;
// a request far past the budget must end as FuelExhausted with exactly the budget consumed.
TEST_P(Hostile, TableGrowPastTheBudgetConsumesExactlyTheBudget) {
  Scratch dir;
  const auto wasm = dir.write("tgrow.wat", guest(R"(
  (memory (export "memory") 1)
  (table $t 0 externref)
  (func (export "_start") (drop (table.grow $t (ref.null extern) (i32.const 134676480))))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(10.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 200'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{FuelExhausted{}});
  EXPECT_EQ(outcome->stats->fuel_consumed, 200'000u);
  bounds.check();
}

TEST_P(Hostile, MemoryFillPastTheEndTrapsWithoutWriting) {
  Scratch dir;
  const auto wasm = dir.write("fill-oob.wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start") (memory.fill (i32.const 1) (i32.const 0) (i32.const -1)))
)"));
  WasmSandbox sandbox(config());
  auto outcome = sandbox.run(job(wasm, 10'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(trap_message(*outcome).rfind("out of bounds memory access in function 4", 0), 0u) << trap_message(*outcome);
}

// ---------------------------------------------------------------- exits

TEST_P(Hostile, ProcExitOfTwoToTheThirtyTwoMinusOneIsAHostErrorNotAnExitCode) {
  Scratch dir;
  const auto wasm = dir.write("exit.wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start") (call $proc_exit (i32.const -1)))
)"));
  WasmSandbox sandbox(config());
  auto outcome = sandbox.run(job(wasm, 1'000));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::SandboxHost);
  EXPECT_EQ(outcome.error().detail.at("exit_code"), "4294967295");
}

TEST_P(Hostile, ProcExitAtTheEdgesOfTheWasiRange) {
  Scratch dir;
  WasmSandbox sandbox(config());
  for (const auto& [code, expected_failure] : {std::pair{125, true}, std::pair{126, false}}) {
    const auto wasm = dir.write("exit" + std::to_string(code) + ".wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start") (call $proc_exit (i32.const )" + std::to_string(code) + R"()))
)"));
    auto outcome = sandbox.run(job(wasm, 1'000));
    if (expected_failure) {
      ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
      EXPECT_EQ(outcome->exit, SandboxExit{Failure{static_cast<std::uint64_t>(code)}});
    } else {
      ASSERT_FALSE(outcome.has_value());
      EXPECT_EQ(outcome.error().code, ErrorCode::SandboxHost);
    }
  }
}

// ---------------------------------------------------------------- traps at the host boundary

TEST_P(Hostile, TrapWhileComputingAHostCallsArguments) {
  Scratch dir;
  const auto wasm = dir.write("argtrap.wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (call $fd_write (i32.const 1) (i32.div_u (i32.const 1) (i32.const 0)) (i32.const 1) (i32.const 8))))
)"));
  WasmSandbox sandbox(config());
  auto outcome = sandbox.run(job(wasm, 1'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(trap_message(*outcome).rfind("integer divide by zero in function 4", 0), 0u) << trap_message(*outcome);
  EXPECT_TRUE(outcome->stdout_bytes.empty());
}

TEST_P(Hostile, HostCallWithAPointerPastMemoryTraps) {
  Scratch dir;
  WasmSandbox sandbox(config());
  struct Case {
    std::string body;
    std::string trap;
    bool wrote;  // the result pointer is checked after the write, as in Wasmtime
  };
  const std::vector<Case> cases{
      {"(drop (call $fd_write (i32.const 1) (i32.const 0xfffffff8) (i32.const 1) (i32.const 8)))",
       "out of bounds memory access in a WASI function", false},
      {"(i32.store (i32.const 0) (i32.const 65000)) (i32.store (i32.const 4) (i32.const 1000))"
       "(drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))",
       "out of bounds memory access in a WASI function", false},
      {"(i32.store (i32.const 0) (i32.const 16)) (i32.store (i32.const 4) (i32.const 1))"
       "(drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 65536)))",
       "out of bounds memory access in a WASI function", true},
      {"(i32.store (i32.const 0) (i32.const 16)) (i32.store (i32.const 4) (i32.const 1))"
       "(drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 65535)))",
       "misaligned pointer passed to a WASI function", true},
      {"(drop (call $path_open (i32.const 3) (i32.const 0) (i32.const 65530) (i32.const 100)"
       " (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 300)))",
       "out of bounds memory access in a WASI function", false},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto wasm = dir.write("ptr" + std::to_string(i) + ".wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start") )" + cases[i].body + ")"));
    auto j = job(wasm, 1'000);
    j.mounts.push_back(runtime::Mount{.host = dir.path(), .guest = "/d", .writable = false});
    auto outcome = sandbox.run(j);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
    EXPECT_EQ(trap_message(*outcome).rfind(cases[i].trap + " in function 4", 0), 0u)
        << "case " << i << ": " << trap_message(*outcome);
    EXPECT_EQ(outcome->stdout_bytes.size(), cases[i].wrote ? 1u : 0u) << "case " << i;
  }
}

// ---------------------------------------------------------------- exceptions (exceptions.hpp)

// A million exceptions of 32 i64s (256 MB if none were freed) thrown and caught in a loop: the
// store's exception heap collects what no frame holds and stays a small, fixed size.
TEST_P(Hostile, ThrowingAMillionBigExceptionsStaysWithinTheCap) {
  std::string params, values;
  for (int i = 0; i < 32; ++i) {
    params += " i64";
    values += " (i64.extend_i32_u (local.get $i))";
  }
  Scratch dir;
  const auto wasm = dir.write("throw-loop.wat", guest(R"(
  (memory (export "memory") 1)
  (tag $big (param)" + params + R"())
  (func (export "_start") (local $i i32) (local $sum i64)
    (loop $next
      (block $h (result)" + params + R"()
        (try_table (catch $big $h) (throw $big)" + values + R"())
        (unreachable))
      (local.set $sum (i64.add (local.get $sum)))
      (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop)
      (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop) (drop)
      (drop)
      (br_if $next (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (i32.const 1000000))))
    (call $report (i32.wrap_i64 (local.get $sum))))
)"));
  runtime::SandboxConfig c;
  c.max_store_bytes = 8 * kMiB;
  WasmSandbox sandbox(config(c));
  Bounds bounds(60.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
  EXPECT_EQ(words(outcome->stdout_bytes), (std::vector<std::uint32_t>{499999500000u & 0xFFFFFFFFu}));
  bounds.check();
}

// Exceptions a guest keeps alive (each frame of a deep recursion holds one of 64 i64s) stop at
// the store's cap with a trap, before the host's memory grows past it.
TEST_P(Hostile, KeepingExceptionsAliveStopsAtTheStoreCap) {
  std::string params, values;
  for (int i = 0; i < 64; ++i) {
    params += " i64";
    values += " (i64.const 1)";
  }
  std::string drops;
  for (int i = 0; i < 64; ++i) drops += " (drop)";
  Scratch dir;
  const auto wasm = dir.write("hold.wat", guest(R"(
  (memory (export "memory") 1)
  (tag $big (param)" + params + R"())
  (func $hold (param $n i32) (local $x exnref)
    (block $h (result)" + params + R"( exnref)
      (try_table (catch_ref $big $h) (throw $big)" + values + R"())
      (unreachable))
    (local.set $x))" + drops + R"(
    (call $hold (i32.add (local.get $n) (i32.const 1))))
  (func (export "_start") (call $hold (i32.const 0)))
)"));
  expect_store_cap_trap(wasm, 1'000'000'000, "exception objects exceed the store's resource limit");
}

// Garbage collection: a guest allocating a 4 KiB array 200,000 times (800 MB in all), keeping
// only the last, runs within an 8 MiB store cap: each collection frees the dead arrays.
TEST_P(Hostile, AllocatingArraysInALoopReusesABoundedGcHeap) {
  Scratch dir;
  const auto wasm = dir.write("gc-loop.wat", guest(R"(
  (memory (export "memory") 1)
  (type $a (array (mut i64)))
  (func (export "_start") (local $i i32) (local $x (ref null $a)) (local $sum i64)
    (loop $next
      (local.set $x (array.new $a (i64.extend_i32_u (local.get $i)) (i32.const 512)))
      (local.set $sum (i64.add (local.get $sum) (array.get $a (local.get $x) (i32.const 511))))
      (br_if $next (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (i32.const 200000))))
    (call $report (i32.wrap_i64 (local.get $sum))))
)"));
  runtime::SandboxConfig c;
  c.max_store_bytes = 8 * kMiB;
  WasmSandbox sandbox(config(c));
  Bounds bounds(60.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 10'000'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
  EXPECT_EQ(words(outcome->stdout_bytes), (std::vector<std::uint32_t>{static_cast<std::uint32_t>(199999ull * 200000 / 2)}));
  bounds.check();
}

// GC objects a guest keeps alive (a linked list growing without end), and one absurd array
// (2^32-1 v128 elements, 64 GiB), stop with a trap at the store's cap or the per-object bound,
// before the host's memory grows past it.
TEST_P(Hostile, KeepingGcObjectsAliveStopsAtTheStoreCap) {
  Scratch dir;
  const auto list = dir.write("gc-hold.wat", guest(R"(
  (memory (export "memory") 1)
  (type $bytes (array (mut i8)))
  (type $node (struct (field (ref null $node)) (field (ref $bytes))))
  (func (export "_start") (local $head (ref null $node))
    (loop $next
      (local.set $head (struct.new $node (local.get $head) (array.new_default $bytes (i32.const 1000))))
      (br $next)))
)"));
  const auto huge = dir.write("gc-huge.wat", guest(R"(
  (memory (export "memory") 1)
  (type $v (array v128))
  (func (export "_start")
    (drop (array.new_default $v (i32.const -1))))
)"));
  for (const auto& wasm : {list, huge})
    expect_store_cap_trap(wasm, 10'000'000'000, "GC objects exceed the store's resource limit");
}

// Ten million tail calls between two functions, alternating return_call, return_call_indirect
// and return_call_ref, never return to a caller: they run in constant frame space (native stack
// included, on the compiled tier), so the chain ends with its result, not call-stack exhaustion.
TEST_P(Hostile, TenMillionTailCallsRunInConstantStack) {
  Scratch dir;
  const auto wasm = dir.write("tail.wat", guest(R"(
  (memory (export "memory") 1)
  (type $step (func (param i32 i64) (result i64)))
  (table 2 funcref)
  (elem (i32.const 0) $even $odd)
  (elem declare func $odd)
  (func $even (type $step) (param $n i32) (param $acc i64) (result i64)
    (if (result i64) (i32.eqz (local.get $n)) (then (local.get $acc))
      (else
        (if (result i64) (i32.and (local.get $n) (i32.const 2))
          (then (return_call_indirect (type $step)
                  (i32.sub (local.get $n) (i32.const 1)) (i64.add (local.get $acc) (i64.const 3)) (i32.const 1)))
          (else (return_call_ref $step
                  (i32.sub (local.get $n) (i32.const 1)) (i64.add (local.get $acc) (i64.const 3)) (ref.func $odd)))))))
  (func $odd (type $step) (param $n i32) (param $acc i64) (result i64)
    (if (result i64) (i32.eqz (local.get $n)) (then (local.get $acc))
      (else (return_call $even (i32.sub (local.get $n) (i32.const 1)) (i64.add (local.get $acc) (i64.const 1))))))
  (func (export "_start") (call $report (i32.wrap_i64 (call $even (i32.const 10000000) (i64.const 0)))))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(60.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
  // 5,000,000 steps of $even (+3) and 5,000,000 of $odd (+1).
  EXPECT_EQ(words(outcome->stdout_bytes), (std::vector<std::uint32_t>{20'000'000u}));
  bounds.check();
}

// An exception thrown 1,000 frames below its handler, 2,000 times: each throw unwinds every frame
// between (on the compiled tier, machine-code frames), the handler counts it, and the frames'
// own handlers on the way (a catch_all that rethrows, at every tenth frame) run too.
TEST_P(Hostile, ExceptionsThrownThroughAThousandFramesAreCaughtWhereTheyShouldBe) {
  Scratch dir;
  const auto wasm = dir.write("unwind.wat", guest(R"(
  (memory (export "memory") 1)
  (tag $e (param i32))
  (global $passed (mut i32) (i32.const 0))
  (func $down (param $n i32) (result i32)
    (if (i32.eqz (local.get $n)) (then (throw $e (i32.const 7))))
    (if (result i32) (i32.eqz (i32.rem_u (local.get $n) (i32.const 10)))
      (then
        (block $h (result exnref)
          (try_table (catch_all_ref $h)
            (drop (call $down (i32.sub (local.get $n) (i32.const 1)))))
          (unreachable))
        (global.set $passed (i32.add (global.get $passed) (i32.const 1)))
        (throw_ref))
      (else (i32.add (call $down (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))
  (func (export "_start") (local $i i32) (local $caught i32)
    (loop $next
      (block $h (result i32)
        (try_table (catch $e $h) (drop (call $down (i32.const 1000))))
        (unreachable))
      (local.set $caught (i32.add (local.get $caught)))
      (br_if $next (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (i32.const 2000))))
    (call $report (local.get $caught))
    (call $report (global.get $passed)))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(60.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 10'000'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
  // Each caught exception carries 7; 100 rethrowing frames (n = 1000, 990, …, 10) per throw.
  EXPECT_EQ(words(outcome->stdout_bytes), (std::vector<std::uint32_t>{2000u * 7u, 2000u * 100u}));
  bounds.check();
}

// 5,000 try_tables inside each other, a throw in the innermost caught by the outermost (and
// by each level on the way out, rethrown): translation and unwinding stay linear.
TEST_P(Hostile, DeeplyNestedTryTables) {
  constexpr int kDepth = 5000;
  std::string body;
  // Flat text (the folded form's nesting is bounded by the parser).
  for (int i = 0; i < kDepth; ++i) body += "block $h" + std::to_string(i) + " (result exnref) try_table (catch_all_ref $h" + std::to_string(i) + ")\n";
  body += "i32.const 7 throw $e\n";
  for (int i = 0; i < kDepth; ++i) body += "end unreachable end throw_ref\n";
  Scratch dir;
  const auto wasm = dir.write("nested.wat", guest(R"(
  (memory (export "memory") 1)
  (tag $e (param i32))
  (func $deep )" + body + R"()
  (func (export "_start")
    (block $out (result i32)
      (try_table (catch $e $out) (call $deep))
      (unreachable))
    (call $report))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(30.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 100'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
  EXPECT_EQ(words(outcome->stdout_bytes), (std::vector<std::uint32_t>{7}));
  bounds.check();
}

}  // namespace
}  // namespace sprawling::hostile
