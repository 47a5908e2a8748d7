// WasmSandbox (src/sandbox/engine.cpp): the A10 assertions of SPEC §6, link denial, each
// host-fault path, the resource caps, job and module errors, and the conformance check.
#include "tests/engine/guest.hpp"

#include <sprawling/runtime/conformance.hpp>
#include <sprawling/runtime/wasm_sandbox.hpp>

#include "sandbox/engine.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

namespace sprawling::runtime {
namespace {

using test::job_for;
using test::kOkGuest;
using test::TempDir;
using test::text;

// path_open("input.txt") under the first preopen (fd 3); on failure proc_exit(7).
constexpr std::string_view kOpenGuest = R"((module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "input.txt")
  (func (export "_start")
    (if (call $path_open (i32.const 3) (i32.const 0) (i32.const 16) (i32.const 9)
                         (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 64))
      (then (call $proc_exit (i32.const 7))))))
)";

constexpr std::string_view kInfiniteLoop = R"((module
  (memory (export "memory") 1)
  (func (export "_start") (loop $spin (br $spin))))
)";

std::string exit_guest(std::uint32_t code) {
  return R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $proc_exit (i32.const )" +
         std::to_string(static_cast<std::int32_t>(code)) + "))))\n";
}

std::string importing(std::string_view module, std::string_view name, std::string_view signature) {
  return "(module (import \"" + std::string(module) + "\" \"" + std::string(name) + "\" (func " +
         std::string(signature) + "))\n  (memory (export \"memory\") 1)\n  (func (export \"_start\")))\n";
}

// --------------------------------------------------------------------- SPEC §6 (A10)

TEST(A10, SuccessWithinFuelWritesOkByteForByte) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("ok.wat", kOkGuest), 1'000'000));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  EXPECT_EQ(text(outcome->stdout_bytes), "ok\n");
  EXPECT_TRUE(outcome->stderr_bytes.empty());
}

TEST(A10, UngrantedCapabilityIsRefusedAndTheSameGuestSucceedsWhenGranted) {
  TempDir dir;
  const auto wasm = dir.write("open.wat", kOpenGuest);
  TempDir data;
  data.write("input.txt", "hello");
  WasmSandbox sandbox;

  auto refused = sandbox.run(job_for(wasm));
  ASSERT_TRUE(refused.has_value()) << refused.error().to_string();
  EXPECT_EQ(refused->exit, SandboxExit{Failure{7}});

  auto job = job_for(wasm);
  job.mounts.push_back(Mount{.host = data.path(), .guest = "/data", .writable = false});
  auto granted = sandbox.run(job);
  ASSERT_TRUE(granted.has_value()) << granted.error().to_string();
  EXPECT_EQ(granted->exit, SandboxExit{Success{}});
}

TEST(A10, FuelExhaustionInterruptsAndIsAnOutcomeNotAnError) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("loop.wat", kInfiniteLoop), 10'000));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->exit, SandboxExit{FuelExhausted{}});
  ASSERT_TRUE(outcome->stats.has_value());
  EXPECT_EQ(outcome->stats->fuel_consumed, 10'000U);  // after exhaustion: exactly the budget
}

// --------------------------------------------------------------------- stats

TEST(Stats, FuelConsumedIsExactForAFinishedRun) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("ok.wat", kOkGuest)));
  ASSERT_TRUE(outcome.has_value());
  ASSERT_TRUE(outcome->stats.has_value());
  // _start: entry 1 + two stores (3 each) + four constants + the call = 12; drop and end cost 0.
  EXPECT_EQ(outcome->stats->fuel_consumed, 12U);
  EXPECT_EQ(outcome->stats->peak_memory_bytes, 65536U);
  EXPECT_FALSE(outcome->stats->stdout_truncated);
}

TEST(Stats, FuelIsCheckedAtEntryAndLoopHeadersSoAStraightLineRunMayOverdrawAsInWasmtime) {
  TempDir dir;
  const auto wasm = dir.write("ok.wat", kOkGuest);
  WasmSandbox sandbox;
  auto exact = sandbox.run(job_for(wasm, 12));
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->exit, SandboxExit{Success{}});
  // The entry check sees 1 unit spent (the entry charge) and passes; nothing checks again.
  auto overdrawn = sandbox.run(job_for(wasm, 2));
  ASSERT_TRUE(overdrawn.has_value());
  EXPECT_EQ(overdrawn->exit, SandboxExit{Success{}});
  EXPECT_EQ(overdrawn->stats->fuel_consumed, 12U);
  // A budget of 1 is spent by the entry charge itself: the entry check stops the guest.
  for (std::uint64_t budget : {0U, 1U}) {
    auto none = sandbox.run(job_for(wasm, budget));
    ASSERT_TRUE(none.has_value());
    EXPECT_EQ(none->exit, SandboxExit{FuelExhausted{}}) << budget;
    EXPECT_EQ(none->stats->fuel_consumed, budget);  // the budget, not the entry charge's 1 (F4's fix)
    EXPECT_TRUE(none->stdout_bytes.empty());
  }
}

// --------------------------------------------------------------------- exits and traps

TEST(Exit, ProcExitZeroIsSuccessAndOneToOneHundredTwentyFiveIsFailure) {
  TempDir dir;
  WasmSandbox sandbox;
  for (std::uint32_t code : {0U, 1U, 42U, 125U}) {
    auto outcome = sandbox.run(job_for(dir.write("exit.wat", exit_guest(code))));
    ASSERT_TRUE(outcome.has_value()) << code;
    if (code == 0) {
      EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
    } else {
      EXPECT_EQ(outcome->exit, SandboxExit{Failure{code}});
    }
  }
}

TEST(Trap, UnreachableIsATrapNamingIt) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("trap.wat", R"((module (memory (export "memory") 1)
    (func $boom (export "_start") unreachable)))")));
  ASSERT_TRUE(outcome.has_value());
  const auto* trap = std::get_if<Trap>(&outcome->exit);
  ASSERT_NE(trap, nullptr);
  EXPECT_NE(trap->message.find("unreachable"), std::string::npos) << trap->message;
}

TEST(Trap, OutOfBoundsGuestPointerInAHostCallTraps) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("oob.wat", R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 1)
    (func (export "_start") (drop (call $fd_write (i32.const 1) (i32.const 70000) (i32.const 1) (i32.const 0))))))")));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_TRUE(std::holds_alternative<Trap>(outcome->exit));
}

// --------------------------------------------------------------------- link denial

TEST(LinkDenial, SocketImportsAreDeniedNamingTheImportAndTheGuestNeverRuns) {
  TempDir dir;
  WasmSandbox sandbox;
  for (const char* name : {"sock_connect", "sock_open", "sock_bind"}) {
    auto outcome = sandbox.run(job_for(dir.write("sock.wat", importing("wasi_snapshot_preview1", name, "(param i32) (result i32)"))));
    ASSERT_FALSE(outcome.has_value()) << name;
    EXPECT_EQ(outcome.error().code, ErrorCode::SandboxDenied);
    EXPECT_EQ(outcome.error().detail.at("import"), std::string("wasi_snapshot_preview1::") + name);
  }
}

TEST(LinkDenial, ImportsFromAnotherModuleAreDenied) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("env.wat", importing("env", "host_exec", "(param i32)"))));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::SandboxDenied);
  EXPECT_EQ(outcome.error().detail.at("import"), "env::host_exec");
}

TEST(LinkDenial, AWasiFunctionWithTheWrongTypeIsAnInvalidModule) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("bad.wat", importing("wasi_snapshot_preview1", "fd_write", "(param i32)"))));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule);
}

// --------------------------------------------------------------------- features

// Prints "ok" when i32x4.add works; with SIMD turned off (-W simd=n) the module is refused.
constexpr std::string_view kSimdGuest = R"((module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 8) "\00\00\00\00\03\00\00\00")
  (func (export "_start")
    (v128.store (i32.const 16) (i32x4.add (v128.const i8x16 0x6e 0x6a 0x09 0 0 0 0 0 0 0 0 0 0 0 0 0)
                                          (v128.const i8x16 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0)))
    (i32.store (i32.const 8) (i32.const 16))
    (drop (call $fd_write (i32.const 1) (i32.const 8) (i32.const 1) (i32.const 0)))))
)";

TEST(Features, SimdRunsByDefaultAndIsRefusedWhenTurnedOff) {
  TempDir dir;
  const auto path = dir.write("simd.wat", kSimdGuest);
  auto on = WasmSandbox{}.run(job_for(path, 1'000'000));
  ASSERT_TRUE(on.has_value()) << on.error().to_string();
  EXPECT_EQ(on->exit, SandboxExit{Success{}});
  EXPECT_EQ(text(on->stdout_bytes), "ok\n");
  SandboxConfig config;
  config.simd = false;
  auto off = WasmSandbox{config}.run(job_for(path, 1'000'000));
  ASSERT_FALSE(off.has_value());
  EXPECT_EQ(off.error().code, ErrorCode::InvalidModule);
  EXPECT_NE(off.error().to_string().find("the module uses SIMD (function 1 uses SIMD instruction v128.const) and SIMD "
                                         "is turned off (-W simd=n)"),
            std::string::npos)
      << off.error().to_string();
  // A module without SIMD runs either way.
  auto scalar = WasmSandbox{config}.run(job_for(dir.write("ok.wat", kOkGuest), 1'000'000));
  ASSERT_TRUE(scalar.has_value()) << scalar.error().to_string();
  EXPECT_EQ(scalar->exit, SandboxExit{Success{}});
}

// --------------------------------------------------------------------- host faults

TEST(HostFault, ProcExitAtOrAbove126IsAHostErrorNeverClamped) {
  TempDir dir;
  WasmSandbox sandbox;
  for (std::uint32_t code : {126U, 255U, 0xFFFFFFFFU}) {
    auto outcome = sandbox.run(job_for(dir.write("exit.wat", exit_guest(code))));
    ASSERT_FALSE(outcome.has_value()) << code;
    EXPECT_EQ(outcome.error().code, ErrorCode::SandboxHost);
    EXPECT_EQ(outcome.error().detail.at("exit_code"), std::to_string(code));
  }
}

engine::RunRecord clean_record() {
  engine::RunRecord record;
  record.stdout_bytes = std::vector<std::uint8_t>{'x'};
  record.stderr_bytes = std::vector<std::uint8_t>{};
  record.fuel_consumed = 5;
  return record;
}

TEST(HostFault, UnrecoverableOutputIsAHostErrorNotEmptyOutput) {
  auto record = clean_record();
  record.stdout_bytes.reset();
  auto outcome = engine::classify(std::move(record));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::SandboxHost);

  auto record2 = clean_record();
  record2.stderr_bytes.reset();
  EXPECT_FALSE(engine::classify(std::move(record2)).has_value());
}

TEST(HostFault, UnreadableFuelIsAHostErrorNotZero) {
  auto record = clean_record();
  record.fuel_consumed.reset();
  auto outcome = engine::classify(std::move(record));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::SandboxHost);
}

TEST(HostFault, AnEngineStopWithoutAReasonIsAHostError) {
  auto record = clean_record();
  record.trap = wasm::Trap{.kind = wasm::TrapKind::None, .message = {}, .exit_code = 0, .func_index = {}, .func_name = {},
                           .offset = 0};
  auto outcome = engine::classify(std::move(record));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::SandboxHost);
}

TEST(Classify, KeepsTheFactsOfACleanRun) {
  auto outcome = engine::classify(clean_record());
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  EXPECT_EQ(text(outcome->stdout_bytes), "x");
  EXPECT_EQ(outcome->stats->fuel_consumed, 5U);
}

// --------------------------------------------------------------------- resources

TEST(Resources, MemoryBombStopsAtTheCapAndTheGuestSeesGrowFail) {
  TempDir dir;
  // Grows one page at a time until memory.grow returns -1, then exits 3.
  const auto wasm = dir.write("bomb.wat", R"((module
    (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
    (memory (export "memory") 1)
    (func (export "_start")
      (block $done (loop $grow
        (br_if $done (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $grow)))
      (call $proc_exit (i32.const 3)))))");
  WasmSandbox sandbox(SandboxConfig{.max_memory_bytes = 16 << 20});
  auto outcome = sandbox.run(job_for(wasm, 10'000'000));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->exit, SandboxExit{Failure{3}});
  EXPECT_EQ(outcome->stats->peak_memory_bytes, std::uint64_t{16} << 20);
}

TEST(Resources, DeadlineStopsAnUnmeteredInfiniteLoop) {
  TempDir dir;
  WasmSandbox sandbox(SandboxConfig{.timeout = std::chrono::milliseconds(100), .meter_fuel = false});
  const auto before = std::chrono::steady_clock::now();
  auto outcome = sandbox.run(job_for(dir.write("loop.wat", kInfiniteLoop)));
  const auto took = std::chrono::steady_clock::now() - before;
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->exit, SandboxExit{Trap{"deadline exceeded"}});
  EXPECT_LT(took, std::chrono::seconds(10));
}

TEST(Resources, DeadlineStopsAGuestSleepingInPollOneoff) {
  TempDir dir;
  // One relative monotonic-clock subscription of 60 s.
  const auto wasm = dir.write("sleep.wat", R"((module
    (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 1)
    (func (export "_start")
      (i32.store8 (i32.const 8) (i32.const 0))
      (i32.store (i32.const 16) (i32.const 1))
      (i64.store (i32.const 24) (i64.const 60000000000))
      (drop (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 200))))))");
  WasmSandbox sandbox(SandboxConfig{.timeout = std::chrono::milliseconds(100)});
  const auto before = std::chrono::steady_clock::now();
  auto outcome = sandbox.run(job_for(wasm));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->exit, SandboxExit{Trap{"deadline exceeded"}});
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
}

TEST(Resources, OutputFloodIsCutAtTheCapAndTheGuestSeesTheWriteFail) {
  TempDir dir;
  // Writes 4 KiB blocks to stdout until fd_write fails, then exits 5.
  const auto wasm = dir.write("flood.wat", R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
    (memory (export "memory") 1)
    (func (export "_start")
      (memory.fill (i32.const 64) (i32.const 120) (i32.const 4096))
      (i32.store (i32.const 0) (i32.const 64))
      (i32.store (i32.const 4) (i32.const 4096))
      (loop $write
        (br_if $write (i32.eqz (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
      (call $proc_exit (i32.const 5)))))");
  WasmSandbox sandbox(SandboxConfig{.max_stdout_bytes = 1 << 20});
  auto outcome = sandbox.run(job_for(wasm, 100'000'000));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->exit, SandboxExit{Failure{5}});
  EXPECT_EQ(outcome->stdout_bytes.size(), std::size_t{1} << 20);
  EXPECT_TRUE(outcome->stats->stdout_truncated);
}

// --------------------------------------------------------------------- job and module errors

TEST(JobErrors, MissingModuleFileIsAnInvalidJob) {
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for("/nonexistent/guest.wasm"));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::InvalidJob);
}

TEST(JobErrors, BadMountsAreInvalidJobsSayingWhich) {
  TempDir dir;
  const auto wasm = dir.write("ok.wat", kOkGuest);
  WasmSandbox sandbox;
  auto relative = job_for(wasm);
  relative.mounts.push_back(Mount{.host = dir.path(), .guest = "data", .writable = false});
  auto missing = job_for(wasm);
  missing.mounts.push_back(Mount{.host = dir.path() / "absent", .guest = "/data", .writable = false});
  auto duplicate = job_for(wasm);
  duplicate.mounts.push_back(Mount{.host = dir.path(), .guest = "/data", .writable = false});
  duplicate.mounts.push_back(Mount{.host = dir.path(), .guest = "/data", .writable = true});
  for (const auto& job : {relative, missing, duplicate}) {
    auto outcome = sandbox.run(job);
    ASSERT_FALSE(outcome.has_value());
    EXPECT_EQ(outcome.error().code, ErrorCode::InvalidJob) << outcome.error().message;
    EXPECT_TRUE(outcome.error().detail.contains("guest"));
  }
}

TEST(ModuleErrors, MalformedBinaryIsAnInvalidModuleWithTheOffset) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("bad.wasm", std::string("\0asm\x01\x00\x00\x00\x01\x05", 10))));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule);
  EXPECT_TRUE(outcome.error().detail.contains("offset"));
}

TEST(ModuleErrors, MalformedTextIsAnInvalidModule) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("bad.wat", "(module (func (export \"_start\") i32.bogus))")));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule);
}

TEST(ModuleErrors, AModuleWithoutStartIsNotACommand) {
  TempDir dir;
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job_for(dir.write("lib.wat", "(module (func (export \"f\")))")));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::InvalidModule);
}

TEST(ModuleErrors, FeatureSwitchesRefuseModulesUsingThem) {
  // A tail call and an extended constant expression: runs by default (3.0, as Wasmtime), and is
  // refused naming the feature with tail_call / extended_const off (-W tail-call=n, ...).
  TempDir dir;
  const auto tail = dir.write("tail.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func $exit (param i32) (call $proc_exit (local.get 0)))
  (func (export "_start") (return_call $exit (i32.const 3))))
)");
  const auto extended = dir.write("extended.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (global $code i32 (i32.add (i32.const 2) (i32.mul (i32.const 2) (i32.const 2))))
  (func (export "_start") (call $proc_exit (global.get $code))))
)");
  WasmSandbox on;
  auto ran = on.run(job_for(tail));
  ASSERT_TRUE(ran.has_value()) << ran.error().to_string();
  EXPECT_EQ(ran->exit, SandboxExit{Failure{3}});
  auto evaluated = on.run(job_for(extended));
  ASSERT_TRUE(evaluated.has_value()) << evaluated.error().to_string();
  EXPECT_EQ(evaluated->exit, SandboxExit{Failure{6}});

  // The compiled-module cache is shared: the same files must still be refused when switched off.
  WasmSandbox no_tail(SandboxConfig{.tail_call = false});
  auto refused = no_tail.run(job_for(tail));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::InvalidModule);
  EXPECT_NE(refused.error().message.find("tail calls are disabled"), std::string::npos) << refused.error().message;
  EXPECT_TRUE(no_tail.run(job_for(extended)).has_value());
  WasmSandbox no_extended(SandboxConfig{.extended_const = false});
  auto refused_const = no_extended.run(job_for(extended));
  ASSERT_FALSE(refused_const.has_value());
  EXPECT_EQ(refused_const.error().code, ErrorCode::InvalidModule);
  EXPECT_NE(refused_const.error().message.find("extended constant expressions are disabled"), std::string::npos)
      << refused_const.error().message;
}

TEST(ModuleErrors, RelaxedSimdSwitchRefusesModulesUsingIt) {
  // 2 * 3 + 1 by f32x4.relaxed_madd, exit code the first lane truncated: 7 by default (as
  // Wasmtime), refused naming the feature with relaxed_simd off (-W relaxed-simd=n).
  TempDir dir;
  const auto madd = dir.write("madd.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (call $proc_exit (i32.trunc_f32_s (f32x4.extract_lane 0
      (f32x4.relaxed_madd (f32x4.splat (f32.const 2)) (f32x4.splat (f32.const 3)) (f32x4.splat (f32.const 1))))))))
)");
  WasmSandbox on;
  auto ran = on.run(job_for(madd));
  ASSERT_TRUE(ran.has_value()) << ran.error().to_string();
  EXPECT_EQ(ran->exit, SandboxExit{Failure{7}});
  WasmSandbox off(SandboxConfig{.relaxed_simd = false});
  auto refused = off.run(job_for(madd));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::InvalidModule);
  EXPECT_NE(refused.error().message.find("relaxed SIMD is disabled"), std::string::npos) << refused.error().message;
}

TEST(ModuleErrors, MultiMemoryAndMemory64SwitchesRefuseModulesUsingThem) {
  // Two memories, the second 64-bit: runs by default (3.0, as Wasmtime); refused naming the
  // feature with multi_memory / memory64 off (-W multi-memory=n, -W memory64=n).
  TempDir dir;
  const auto two = dir.write("two.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (memory $wide i64 1)
  (func (export "_start")
    (i32.store $wide (i64.const 65532) (i32.const 9))
    (call $proc_exit (i32.load $wide offset=65532 (i64.const 0)))))
)");
  WasmSandbox on;
  auto ran = on.run(job_for(two));
  ASSERT_TRUE(ran.has_value()) << ran.error().to_string();
  EXPECT_EQ(ran->exit, SandboxExit{Failure{9}});
  WasmSandbox no_multi(SandboxConfig{.multi_memory = false});
  auto refused = no_multi.run(job_for(two));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::InvalidModule);
  EXPECT_NE(refused.error().message.find("multi-memory feature is off"), std::string::npos) << refused.error().message;
  WasmSandbox no_64(SandboxConfig{.memory64 = false});
  auto refused64 = no_64.run(job_for(two));
  ASSERT_FALSE(refused64.has_value());
  EXPECT_NE(refused64.error().message.find("memory64 feature is off"), std::string::npos) << refused64.error().message;
}

TEST(Memory64, GrowPastTheMemoryLimitReturnsMinusOneAndAccessesNeverWrap) {
  // memory.grow of a 64-bit memory beyond max_memory_bytes (here 1 MiB, 16 pages) returns -1
  // (also for 2^48 pages, and for the 4 GiB a 32-bit memory could not even name); an address
  // whose sum with the offset passes 2^64 traps instead of wrapping to a small one.
  TempDir dir;
  const auto grow = dir.write("grow.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (memory $wide i64 1)
  (func (export "_start")
    (if (i64.ne (memory.grow $wide (i64.const 0x1_0000)) (i64.const -1)) (then (call $proc_exit (i32.const 1))))
    (if (i64.ne (memory.grow $wide (i64.const 0x1_0000_0000_0000)) (i64.const -1)) (then (call $proc_exit (i32.const 2))))
    (if (i64.ne (memory.grow $wide (i64.const -1)) (i64.const -1)) (then (call $proc_exit (i32.const 3))))
    (if (i64.ne (memory.grow $wide (i64.const 15)) (i64.const 1)) (then (call $proc_exit (i32.const 4))))
    (if (i64.ne (memory.size $wide) (i64.const 16)) (then (call $proc_exit (i32.const 5))))
    (drop (i32.load $wide offset=16 (i64.const -8)))
    (call $proc_exit (i32.const 0))))
)");
  WasmSandbox sandbox(SandboxConfig{.max_memory_bytes = std::uint64_t{1} << 20});
  auto ran = sandbox.run(job_for(grow));
  ASSERT_TRUE(ran.has_value()) << ran.error().to_string();
  ASSERT_TRUE(std::holds_alternative<Trap>(ran->exit));
  EXPECT_NE(std::get<Trap>(ran->exit).message.find("out of bounds memory access"), std::string::npos)
      << std::get<Trap>(ran->exit).message;
}

TEST(Table64, GrowPastMaxTableElementsReturnsMinusOneAndTheMemory64SwitchRefusesIt) {
  // A 64-bit table (table64, under -W memory64 as in Wasmtime) grows up to max_table_elements
  // (here 100); past it, a hostile 2^40 and 2^64 - 1 included, table.grow returns the i64 -1; an
  // index of 2^32 traps. Metered, the 2^40 grow is charged per element as an i32 table's grow
  // and exhausts the job's fuel. With memory64 off the module is refused naming table64.
  TempDir dir;
  const auto grow = dir.write("grow.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (table $t i64 1 funcref)
  (func (export "_start")
    (if (i64.ne (table.grow $t (ref.null func) (i64.const 100)) (i64.const -1)) (then (call $proc_exit (i32.const 1))))
    (if (i64.ne (table.grow $t (ref.null func) (i64.const 0x100_0000_0000)) (i64.const -1)) (then (call $proc_exit (i32.const 2))))
    (if (i64.ne (table.grow $t (ref.null func) (i64.const -1)) (i64.const -1)) (then (call $proc_exit (i32.const 3))))
    (if (i64.ne (table.grow $t (ref.null func) (i64.const 99)) (i64.const 1)) (then (call $proc_exit (i32.const 4))))
    (if (i64.ne (table.size $t) (i64.const 100)) (then (call $proc_exit (i32.const 5))))
    (drop (table.get $t (i64.const 0x1_0000_0000)))
    (call $proc_exit (i32.const 0))))
)");
  WasmSandbox sandbox(SandboxConfig{.max_table_elements = 100, .meter_fuel = false});
  auto ran = sandbox.run(job_for(grow));
  ASSERT_TRUE(ran.has_value()) << ran.error().to_string();
  ASSERT_TRUE(std::holds_alternative<Trap>(ran->exit));
  EXPECT_NE(std::get<Trap>(ran->exit).message.find("out of bounds table access"), std::string::npos)
      << std::get<Trap>(ran->exit).message;
  WasmSandbox metered(SandboxConfig{.max_table_elements = 100});
  auto out_of_fuel = metered.run(job_for(grow));
  ASSERT_TRUE(out_of_fuel.has_value()) << out_of_fuel.error().to_string();
  EXPECT_TRUE(std::holds_alternative<FuelExhausted>(out_of_fuel->exit));
  WasmSandbox no_64(SandboxConfig{.memory64 = false});
  auto refused = no_64.run(job_for(grow));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::InvalidModule);
  EXPECT_NE(refused.error().message.find("a 64-bit table (table64), and the memory64 feature is off"), std::string::npos)
      << refused.error().message;
}

TEST(ModuleErrors, ExceptionsSwitchRefusesModulesUsingThemAndUncaughtIsATrap) {
  // Exception handling runs by default (Wasmtime 47+); an exception leaving _start is a trap
  // naming its tag; with exceptions off the module is refused naming its first use.
  TempDir dir;
  const auto thrower = dir.write("throw.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (tag $t (param i32))
  (func $inner (throw $t (i32.const 4)))
  (func (export "_start")
    (block $h (result i32) (try_table (catch $t $h) (call $inner)) (i32.const 0))
    (call $proc_exit)))
)");
  const auto uncaught = dir.write("uncaught.wat", R"((module
  (memory (export "memory") 1)
  (tag $t (param i64 f32))
  (func (export "_start") (throw $t (i64.const 1) (f32.const 2))))
)");
  WasmSandbox on;
  auto caught = on.run(job_for(thrower));
  ASSERT_TRUE(caught.has_value()) << caught.error().to_string();
  EXPECT_EQ(caught->exit, SandboxExit{Failure{4}});
  auto trapped = on.run(job_for(uncaught));
  ASSERT_TRUE(trapped.has_value()) << trapped.error().to_string();
  const auto* trap = std::get_if<runtime::Trap>(&trapped->exit);
  ASSERT_NE(trap, nullptr);
  EXPECT_EQ(trap->message.rfind("uncaught exception: tag 0 [i64 f32]", 0), 0u) << trap->message;
  WasmSandbox off(SandboxConfig{.exceptions = false});
  auto refused = off.run(job_for(thrower));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::InvalidModule);
  EXPECT_NE(refused.error().message.find("exception handling is disabled"), std::string::npos)
      << refused.error().message;
}

TEST(ModuleErrors, FunctionReferencesSwitchRefusesModulesUsingThem) {
  // Typed function references run by default: a call_ref through a table's initial element,
  // exiting with its result; with the feature off the module is refused naming the feature.
  TempDir dir;
  const auto module = dir.write("refs.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (type $i (func (result i32)))
  (func $seven (type $i) (i32.const 7))
  (table 1 (ref $i) (ref.func $seven))
  (func (export "_start") (call $proc_exit (call_ref $i (table.get 0 (i32.const 0))))))
)");
  WasmSandbox on;
  auto ran = on.run(job_for(module));
  ASSERT_TRUE(ran.has_value()) << ran.error().to_string();
  EXPECT_EQ(ran->exit, SandboxExit{Failure{7}});
  WasmSandbox off(SandboxConfig{.function_references = false});
  auto refused = off.run(job_for(module));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::InvalidModule);
  EXPECT_NE(refused.error().message.find("the function-references feature is off"), std::string::npos)
      << refused.error().message;
}

TEST(ModuleErrors, GcSwitchRefusesModulesUsingIt) {
  // Garbage collection runs by default (Wasmtime 47+): a struct made, a field read back as the
  // exit code; with gc off the module is refused naming the feature.
  TempDir dir;
  const auto module = dir.write("gc.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (type $pair (struct (field i32) (field (mut i8))))
  (func (export "_start") (local $p (ref null $pair))
    (local.set $p (struct.new $pair (i32.const 40) (i32.const 258)))
    (call $proc_exit (i32.add (struct.get $pair 0 (local.get $p)) (struct.get_u $pair 1 (local.get $p))))))
)");
  WasmSandbox on;
  auto ran = on.run(job_for(module));
  ASSERT_TRUE(ran.has_value()) << ran.error().to_string();
  EXPECT_EQ(ran->exit, SandboxExit{Failure{42}});  // 258 stored as an i8 is 2
  WasmSandbox off(SandboxConfig{.gc = false});
  auto refused = off.run(job_for(module));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::InvalidModule);
  EXPECT_NE(refused.error().message.find("the gc feature is off"), std::string::npos) << refused.error().message;
}

// --------------------------------------------------------------------- the seam

TEST(Seam, ConformanceCheckPassesOnWasmSandbox) {
  TempDir dir;
  WasmSandbox sandbox;
  EXPECT_NO_THROW(assert_sandbox_conformance(sandbox, job_for(dir.write("ok.wat", kOkGuest))));
  EXPECT_NO_THROW(assert_sandbox_conformance(sandbox, job_for(dir.write("loop.wat", kInfiniteLoop), 1000)));
}

TEST(Seam, MakeSandboxGivesTheEngineSandboxInEngineBuilds) {
  TempDir dir;
  ASSERT_TRUE(engine_available());
  auto sandbox = make_sandbox();
  auto outcome = sandbox->run(job_for(dir.write("ok.wat", kOkGuest)));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(text(outcome->stdout_bytes), "ok\n");
  EXPECT_TRUE(outcome->stats.has_value());
}

TEST(Seam, ArgvEnvAndStdinReachTheGuest) {
  TempDir dir;
  // Echoes stdin to stdout (one read of up to 64 bytes), then exits with argc + environ count.
  const auto wasm = dir.write("echo.wat", R"((module
    (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "args_sizes_get" (func $args (param i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "environ_sizes_get" (func $envs (param i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
    (memory (export "memory") 1)
    (func (export "_start")
      (i32.store (i32.const 0) (i32.const 256))
      (i32.store (i32.const 4) (i32.const 64))
      (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
      (i32.store (i32.const 4) (i32.load (i32.const 8)))
      (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
      (drop (call $args (i32.const 16) (i32.const 20)))
      (drop (call $envs (i32.const 24) (i32.const 28)))
      (call $proc_exit (i32.add (i32.load (i32.const 16)) (i32.load (i32.const 24)))))))");
  auto job = job_for(wasm);
  job.argv = {"echo", "a", "b"};
  job.env = {{"A", "1"}, {"B", "2"}, {"C", "3"}, {"D", "4"}};
  job.stdin_bytes = {'p', 'i', 'n', 'g'};
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(text(outcome->stdout_bytes), "ping");
  EXPECT_EQ(outcome->exit, SandboxExit{Failure{7}});
}

// Streamed stdin is the job's (SandboxJob::stdin_fd): it replaces the job's stdin_bytes, and the
// next job of the same sandbox reads its own stdin again.
TEST(Seam, StdinFdIsTheJobsOwn) {
  TempDir dir;
  // Echoes one read of up to 64 bytes of stdin to stdout.
  const auto wasm = dir.write("echo_stdin.wat", R"((module
    (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 1)
    (func (export "_start")
      (i32.store (i32.const 0) (i32.const 256))
      (i32.store (i32.const 4) (i32.const 64))
      (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
      (i32.store (i32.const 4) (i32.load (i32.const 8)))
      (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))))");
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ASSERT_EQ(::write(fds[1], "piped", 5), 5);
  ::close(fds[1]);
  WasmSandbox sandbox;
  auto streamed = job_for(wasm);
  streamed.stdin_bytes = {'b', 'y', 't', 'e', 's'};
  streamed.stdin_fd = fds[0];
  auto outcome = sandbox.run(streamed);
  ::close(fds[0]);
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(text(outcome->stdout_bytes), "piped");

  auto buffered = job_for(wasm);
  buffered.stdin_bytes = {'p', 'i', 'n', 'g'};
  outcome = sandbox.run(buffered);
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(text(outcome->stdout_bytes), "ping");
}

}  // namespace
}  // namespace sprawling::runtime
