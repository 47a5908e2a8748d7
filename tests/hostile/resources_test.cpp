// The resources axis: guests that make the host work, wait or allocate for them —
// host-call loops and blocking reads against the deadline, tables and instances against the
// resource account, generated modules against linear compilation, host work against fuel,
// stdin and disk writes against their caps. Each asserts the classified outcome and the host's
// bounds in time and memory (generous, so never flaky).
#include "hostile/hostile_support.hpp"
#include "hostile/wasm_writer.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace sprawling::hostile {
namespace {

using runtime::FuelExhausted;
using runtime::SandboxExit;
using runtime::Success;
using runtime::WasmSandbox;
namespace ww = test::wasm_writer;

const SandboxExit kDeadline = runtime::Trap{"deadline exceeded"};

// The WASI imports the guests here use; a guest's own functions are numbered from 6.
constexpr std::string_view kImports = R"(
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_pwrite" (func $fd_pwrite (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir" (func $fd_readdir (param i32 i32 i32 i64 i32) (result i32)))
)";

std::string guest(std::string_view body) {
  return "(module " + std::string(kImports) + std::string(body) + ")\n";
}

// A run with a 300 ms timeout that waited on the host: it ends at the deadline, not before it
// and nowhere near a blocked host.
void expect_stopped_at_deadline(const std::expected<runtime::SandboxOutcome, runtime::AxError>& outcome,
                                double elapsed) {
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, kDeadline) << trap_message(*outcome);
  EXPECT_GE(elapsed, 0.25);
  EXPECT_LT(elapsed, 3.0);
}

// Every guest of the deadline and account tests runs on each tier (hostile_support.hpp); the
// linear-compilation tests below measure wasm::compile and run interpreted.
class Resources : public Tiered {};
INSTANTIATE_TEST_SUITE_P(Tiers, Resources, ::testing::ValuesIn(tiers()), tier_name);
// Laying out a directory of many entries is most of this one's seconds, and its guest is one
// fd_readdir loop whose host path the other tests cover on both tiers: interpreted only.
class ResourcesInterpreterOnly : public Tiered {};
INSTANTIATE_TEST_SUITE_P(Tiers, ResourcesInterpreterOnly, ::testing::Values(runtime::ExecutionTier::Interpret),
                         tier_name);

// A folder inside the scratch folder, to mount.
std::filesystem::path mount_dir(const Scratch& dir, const std::string& name) {
  const auto path = dir.path() / name;
  std::filesystem::create_directory(path);
  return path;
}

// ---------------------------------------------------------------- deadline

// Each call fills 1 MiB for a handful of fuel units: checked only at fuel refills (every 65,536
// units), the deadline let this loop run for tens of seconds past a 300 ms timeout.
TEST_P(Resources, HostCallLoopStopsAtTheDeadline) {
  Scratch dir;
  const auto wasm = dir.write("random_loop.wat", guest(R"(
  (memory (export "memory") 17)
  (func (export "_start") (loop $again (drop (call $random_get (i32.const 0) (i32.const 1048576))) (br $again)))
)"));
  WasmSandbox sandbox(config({.timeout = std::chrono::milliseconds(300), .meter_fuel = false}));
  Bounds bounds(3.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, kDeadline) << trap_message(*outcome);
  bounds.check();
}

// A FIFO in a mount with a writer that never writes: the read waits under the deadline, not in
// the kernel.
TEST_P(Resources, ReadOfASilentFifoInAMountStopsAtTheDeadline) {
  Scratch dir;
  const auto mount = mount_dir(dir, "mnt");
  ASSERT_EQ(::mkfifo((mount / "pipe").c_str(), 0600), 0);
  const int writer = ::open((mount / "pipe").c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);  // held open, silent
  ASSERT_GE(writer, 0);
  const auto wasm = dir.write("fifo.wat", guest(R"(
  (memory (export "memory") 1)
  (data (i32.const 300) "pipe")
  (func (export "_start")
    (if (call $path_open (i32.const 3) (i32.const 0) (i32.const 300) (i32.const 4) (i32.const 0)
                         (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 200))
      (then (call $proc_exit (i32.const 5))))
    (i32.store (i32.const 0) (i32.const 1000))
    (i32.store (i32.const 4) (i32.const 100))
    (drop (call $fd_read (i32.load (i32.const 200)) (i32.const 0) (i32.const 1) (i32.const 8)))
    (call $proc_exit (i32.const 9)))
)"));
  WasmSandbox sandbox(config({.timeout = std::chrono::milliseconds(300)}));
  auto request = job(wasm, 1'000'000);
  request.mounts.push_back(runtime::Mount{.host = mount, .guest = "/data", .writable = false});
  const auto start = Clock::now();
  auto outcome = sandbox.run(request);
  const double elapsed = seconds_since(start);
  ::close(writer);
  expect_stopped_at_deadline(outcome, elapsed);
}

// ---------------------------------------------------------------- stdin

// Streamed stdin (SandboxJob::stdin_fd): the guest's read of a pipe that stays open and silent
// waits under the deadline (the 10,000 bytes that were there are read first, as the guest asks).
TEST_P(Resources, StreamedStdinThatNeverClosesStopsAtTheDeadline) {
  Scratch dir;
  const auto wasm = dir.write("read_stdin.wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $more
      (i32.store (i32.const 0) (i32.const 1024))
      (i32.store (i32.const 4) (i32.const 4096))
      (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
      (br_if $more (i32.load (i32.const 8))))
    (call $proc_exit (i32.const 4)))
)"));
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  const std::string some(10'000, 'x');  // read by the guest, then silence
  ASSERT_EQ(::write(pipe_fds[1], some.data(), some.size()), static_cast<ssize_t>(some.size()));
  WasmSandbox sandbox(config({.timeout = std::chrono::milliseconds(300)}));
  auto streamed = job(wasm, 10'000'000);
  streamed.stdin_fd = pipe_fds[0];
  Bounds bounds(3.0, 16 * kMiB);
  const auto start = Clock::now();
  auto outcome = sandbox.run(streamed);
  const double elapsed = seconds_since(start);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  expect_stopped_at_deadline(outcome, elapsed);
  bounds.check();
}

// The deadline covers compilation: a module that takes longer than the timeout to compile never
// starts (its _start would exit with 3).
TEST_P(Resources, CompilationPastTheDeadlineNeverStartsTheGuest) {
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  m.imports.push_back(
      ww::Import{"wasi_snapshot_preview1", "proc_exit", m.add_type({.params = {ww::type::i32}, .results = {}})});
  ww::Function big{.type_index = m.add_type({}), .locals = {{1, ww::type::i32}}, .code = {}};
  while (big.code.size() < 4 * kMiB) big.code.insert(big.code.end(), {0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00});
  ww::i32_const(big.code, 3);
  ww::op_index(big.code, 0x10, 0);
  m.functions.push_back(std::move(big));
  m.exports.push_back(ww::Export{"_start", 0, 1});
  Scratch dir;
  const auto wasm = dir.write("slow_compile.wasm", m.build());
  WasmSandbox sandbox(config({.timeout = std::chrono::microseconds(1)}));
  Bounds bounds(30.0, 512 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, kDeadline) << trap_message(*outcome);
  EXPECT_EQ(outcome->stats->fuel_consumed, 0u);
  bounds.check();
}

// ---------------------------------------------------------------- the resource account

std::string tables_module(int count, std::uint32_t elements) {
  std::string wat = "(module (memory (export \"memory\") 1)\n";
  for (int i = 0; i < count; ++i) wat += "  (table " + std::to_string(elements) + " funcref)\n";
  return wat + "  (func (export \"_start\")))\n";
}

// A few hundred bytes declaring 100 tables of 10 million elements (8 GB of host memory) under a
// 1 MiB memory cap: every table counts against the one account (1 MiB + 256 MiB), so
// instantiation fails before the host allocates any of them.
TEST_P(Resources, ManyLargeTablesAreRefusedByTheAccountBeforeAllocation) {
  Scratch dir;
  const auto wasm = dir.write("tables.wat", tables_module(100, 10'000'000));
  WasmSandbox sandbox(config({.max_memory_bytes = kMiB}));
  Bounds bounds(10.0, 32 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000'000));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, runtime::ErrorCode::InvalidModule);
  EXPECT_NE(outcome.error().message.find("max-store-size"), std::string::npos) << outcome.error().message;
  bounds.check();
}

TEST_P(Resources, TablesAndMemoriesPastTheirCountsAreRefusedNamingTheLimit) {
  Scratch dir;
  WasmSandbox sandbox(config());  // max-tables 100
  auto tables = sandbox.run(job(dir.write("101.wat", tables_module(101, 1)), 1'000'000));
  ASSERT_FALSE(tables.has_value());
  EXPECT_NE(tables.error().message.find("101 tables; the store allows 100 in all (max-tables)"), std::string::npos)
      << tables.error().message;
  EXPECT_TRUE(sandbox.run(job(dir.write("100.wat", tables_module(100, 1)), 1'000'000)).has_value());

  WasmSandbox no_memories(config({.max_memories = 0}));
  auto memories = no_memories.run(job(dir.write("one.wat", tables_module(0, 0)), 1'000'000));
  ASSERT_FALSE(memories.has_value());
  EXPECT_NE(memories.error().message.find("(max-memories)"), std::string::npos) << memories.error().message;
}

// table.grow charges the account: with no per-table cap, growing by a million elements (8 MB) at
// a time returns -1 once 64 MiB are spent — eight grows succeed, the ninth is refused — and the
// guest goes on.
TEST_P(Resources, TableGrowPastTheAccountReturnsMinusOne) {
  Scratch dir;
  const auto wasm = dir.write("grow.wat", guest(R"(
  (memory (export "memory") 1)
  (table 0 funcref)
  (func (export "_start") (local $grown i32)
    (block $full
      (loop $more
        (br_if $full (i32.eq (table.grow 0 (ref.null func) (i32.const 1000000)) (i32.const -1)))
        (local.set $grown (i32.add (local.get $grown) (i32.const 1)))
        (br $more)))
    (call $proc_exit (local.get $grown)))
)"));
  WasmSandbox sandbox(config({.max_table_elements = UINT32_MAX, .max_store_bytes = 64 * kMiB, .meter_fuel = false}));
  Bounds bounds(10.0, 128 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{runtime::Failure{8}});
  bounds.check();
}

// ---------------------------------------------------------------- host work per fuel

// Each call asks for 1 MiB of randomness: 16,384 units of host work on top of the call, so a
// budget of a million units stops the loop after ~60 calls (before: ~200,000 calls, 200 GB).
TEST_P(Resources, RandomGetLoopIsFuelExhaustedWithinItsBudget) {
  Scratch dir;
  const auto wasm = dir.write("random_fuel.wat", guest(R"(
  (memory (export "memory") 17)
  (func (export "_start") (loop $again (drop (call $random_get (i32.const 0) (i32.const 1048576))) (br $again)))
)"));
  WasmSandbox sandbox(config());
  Bounds bounds(10.0, 64 * kMiB);
  auto outcome = sandbox.run(job(wasm, 1'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{FuelExhausted{}}) << trap_message(*outcome);
  EXPECT_EQ(outcome->stats->fuel_consumed, 1'000'000u);
  bounds.check();
}

// Lists a directory of 30,000 entries with a 256-byte buffer (~7 entries a call, ~4,300 calls),
// following cookies, and writes the number of entries it saw. fd_readdir re-listed the directory
// from the start on every call (O(N) host work per call, O(N^2) in all: ~130 million entries
// read here); the fd now keeps its listing.
TEST_P(ResourcesInterpreterOnly, ListingALargeDirectoryIsLinearAndPaidInFuel) {
  Scratch dir;
  const auto mount = mount_dir(dir, "many");
  constexpr int kFiles = 30'000;
  for (int i = 0; i < kFiles; ++i) {
    const int fd = ::open((mount / ("entry-" + std::to_string(i))).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  const auto wasm = dir.write("list.wat", guest(R"(
  (memory (export "memory") 1)
  (func (export "_start") (local $cookie i64) (local $used i32) (local $at i32) (local $count i32) (local $len i32)
    (block $done
      (loop $call
        (if (call $fd_readdir (i32.const 3) (i32.const 1024) (i32.const 256) (local.get $cookie) (i32.const 16))
          (then (call $proc_exit (i32.const 3))))
        (local.set $used (i32.load (i32.const 16)))
        (local.set $at (i32.const 0))
        (block $cut
          (loop $record
            (br_if $cut (i32.gt_u (i32.add (local.get $at) (i32.const 24)) (local.get $used)))
            (local.set $len (i32.load (i32.add (i32.const 1040) (local.get $at))))
            (br_if $cut (i32.gt_u (i32.add (i32.add (local.get $at) (i32.const 24)) (local.get $len)) (local.get $used)))
            (local.set $cookie (i64.load (i32.add (i32.const 1024) (local.get $at))))
            (local.set $count (i32.add (local.get $count) (i32.const 1)))
            (local.set $at (i32.add (i32.add (local.get $at) (i32.const 24)) (local.get $len)))
            (br $record)))
        (br_if $done (i32.lt_u (local.get $used) (i32.const 256)))
        (br $call)))
    (i32.store (i32.const 100) (local.get $count))
    (i32.store (i32.const 0) (i32.const 100))
    (i32.store (i32.const 4) (i32.const 4))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
)"));
  WasmSandbox sandbox(config());
  auto request = job(wasm, 100'000'000);
  request.mounts.push_back(runtime::Mount{.host = mount, .guest = "/many", .writable = false});
  Bounds bounds(2.0, 32 * kMiB);  // linear: well under 0.1 s; the quadratic listing takes many seconds
  auto outcome = sandbox.run(request);
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  ASSERT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
  EXPECT_EQ(words(outcome->stdout_bytes), std::vector<std::uint32_t>{kFiles + 2});  // with "." and ".."
  // About 34 bytes per entry handed out, at one unit per 64 bytes: over 15,000 units of host work.
  EXPECT_GT(outcome->stats->fuel_consumed, 15'000u);
  bounds.check();
}

// ---------------------------------------------------------------- disk quota

// One fd_pwrite at offset 2^40 made a 1 TiB sparse file; each write call could store 128 MiB. With
// a 1 MiB quota the sparse write fails with EDQUOT (the hole counts by its size), then 64 KiB
// writes fill exactly the quota and the next one fails with EDQUOT: exit code 19.
TEST_P(Resources, WritesPastTheDiskQuotaFailWithEdquot) {
  Scratch dir;
  const auto mount = mount_dir(dir, "out");
  const auto wasm = dir.write("fill.wat", guest(R"(
  (memory (export "memory") 2)
  (data (i32.const 300) "big")
  (func (export "_start") (local $fd i32) (local $r i32)
    (if (call $path_open (i32.const 3) (i32.const 0) (i32.const 300) (i32.const 3) (i32.const 1)
                         (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 200))
      (then (call $proc_exit (i32.const 5))))
    (local.set $fd (i32.load (i32.const 200)))
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 1))
    (if (i32.ne (call $fd_pwrite (local.get $fd) (i32.const 0) (i32.const 1) (i64.const 1099511627776) (i32.const 8))
                (i32.const 19))
      (then (call $proc_exit (i32.const 60))))
    (i32.store (i32.const 4) (i32.const 65536))
    (loop $more
      (local.set $r (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)))
      (br_if $more (i32.eqz (local.get $r))))
    (call $proc_exit (local.get $r)))
)"));
  WasmSandbox sandbox(config({.max_disk_write_bytes = kMiB}));
  auto request = job(wasm, 100'000'000);
  request.mounts.push_back(runtime::Mount{.host = mount, .guest = "/out", .writable = true});
  Bounds bounds(5.0, 32 * kMiB);
  auto outcome = sandbox.run(request);
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{runtime::Failure{19}}) << trap_message(*outcome);
  EXPECT_EQ(outcome->stats->disk_write_bytes, kMiB);
  EXPECT_EQ(std::filesystem::file_size(mount / "big"), kMiB);
  bounds.check();
}

// ---------------------------------------------------------------- linear compilation

// Time and host memory of compiling and running a generated module, bounded per byte of wasm.
void expect_linear(const std::string& name, const std::vector<std::uint8_t>& wasm_bytes, double seconds_per_mib,
                   std::uint64_t memory_per_byte, std::uint64_t fuel = 1'000'000) {
  Scratch dir;
  const auto wasm = dir.write(name, wasm_bytes);
  const double mib = static_cast<double>(wasm_bytes.size()) / static_cast<double>(kMiB);
  WasmSandbox sandbox;
  Bounds bounds(1.0 + seconds_per_mib * mib, 16 * kMiB + memory_per_byte * wasm_bytes.size());
  auto outcome = sandbox.run(job(wasm, fuel));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << trap_message(*outcome);
  std::printf("  %s: %.2f MiB of wasm\n", name.c_str(), mib);
  bounds.check();
}

ww::Module start_only_module() {
  ww::Module m;
  m.memory = ww::Limits{1, 1};
  m.exports.push_back(ww::Export{"memory", 2, 0});
  return m;
}

TEST(Compile, AMillionTinyFunctions) {
  ww::Module m = start_only_module();
  const std::uint32_t returns_i32 = m.add_type({.params = {}, .results = {ww::type::i32}});
  for (std::int32_t i = 0; i < 1'000'000; ++i) {
    ww::Function f{.type_index = returns_i32, .locals = {}, .code = {}};
    ww::i32_const(f.code, i & 63);
    m.functions.push_back(std::move(f));
  }
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  m.functions.push_back(start);
  m.exports.push_back(ww::Export{"_start", 0, 1'000'000});
  // ~70 bytes of host memory per byte of wasm here (~400 bytes per function: its body record,
  // its compiled code, its FuncInst); it was 478 MiB before FuncInst lost its host-only fields.
  expect_linear("million_functions.wasm", m.build(), 20.0, 128);
}

// br_table of 200,000 targets spread over 20,000 nested blocks: a per-target search of the label
// stack made this O(targets x depth).
TEST(Compile, BrTableWithManyTargetsIntoDeepNesting) {
  ww::Module m = start_only_module();
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  constexpr std::uint32_t kDepth = 20'000, kTargets = 200'000;
  for (std::uint32_t i = 0; i < kDepth; ++i) start.code.insert(start.code.end(), {0x02, 0x40});
  ww::i32_const(start.code, 0);
  start.code.push_back(0x0e);  // br_table
  ww::uleb(start.code, kTargets);
  for (std::uint32_t i = 0; i < kTargets; ++i) ww::uleb(start.code, (i * 7919) % kDepth);
  ww::uleb(start.code, kDepth - 1);
  start.code.insert(start.code.end(), kDepth, 0x0b);
  m.functions.push_back(std::move(start));
  m.exports.push_back(ww::Export{"_start", 0, 0});
  expect_linear("br_table.wasm", m.build(), 20.0, 256);
}

TEST(Compile, DeepNesting) {
  ww::Module m = start_only_module();
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  constexpr std::size_t kDepth = 500'000;
  for (std::size_t i = 0; i < kDepth; ++i) start.code.insert(start.code.end(), {0x02, 0x40, 0x03, 0x40});
  start.code.insert(start.code.end(), 2 * kDepth, 0x0b);
  m.functions.push_back(std::move(start));
  m.exports.push_back(ww::Export{"_start", 0, 0});
  expect_linear("nesting.wasm", m.build(), 20.0, 256);
}

// 50,000 locals (the most a function may declare), each read and written once.
TEST(Compile, ManyLocals) {
  ww::Module m = start_only_module();
  constexpr std::uint32_t kLocals = 50'000;
  ww::Function start{.type_index = m.add_type({}), .locals = {{kLocals, ww::type::i32}}, .code = {}};
  for (std::uint32_t i = 0; i < kLocals; ++i) {
    ww::op_index(start.code, 0x20, i);                  // local.get i
    ww::op_index(start.code, 0x21, (i + 1) % kLocals);  // local.set i+1
  }
  m.functions.push_back(std::move(start));
  m.exports.push_back(ww::Export{"_start", 0, 0});
  expect_linear("locals.wasm", m.build(), 20.0, 256);
}

// One 32 MiB data segment: copied into linear memory, never duplicated beyond the module's
// own copies (the cached source and the decoded module).
TEST(Compile, HugeDataSegment) {
  ww::Module m = start_only_module();
  m.memory = ww::Limits{512, 512};
  m.datas.push_back(ww::DataSegment{.passive = false, .offset = 0, .bytes = ww::Bytes(32 * kMiB, 0x5a)});
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  m.functions.push_back(std::move(start));
  m.exports.push_back(ww::Export{"_start", 0, 0});
  expect_linear("data.wasm", m.build(), 20.0, 6);
}

// One element segment of a million references into a table of a million elements.
TEST(Compile, HugeElementSegment) {
  ww::Module m = start_only_module();
  m.table = ww::Limits{1'000'000, 1'000'000};
  ww::Function start{.type_index = m.add_type({}), .locals = {}, .code = {}};
  m.functions.push_back(std::move(start));
  m.elems.push_back(ww::ElemSegment{.offset = 0, .funcs = std::vector<std::uint32_t>(1'000'000, 0)});
  m.exports.push_back(ww::Export{"_start", 0, 0});
  expect_linear("elem.wasm", m.build(), 20.0, 128);
}

}  // namespace
}  // namespace sprawling::hostile
