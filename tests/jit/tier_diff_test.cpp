// The compiled tier against the interpreter on real guests: the bench workloads and the example
// guests built in the tree (C through wasi-libc) run through the sandbox on both tiers, and with
// tier-up on and off, and the stdout, stderr, exit and fuel of each must be identical, metered
// and unmetered.
#include <sprawling/runtime/wasm_sandbox.hpp>

#include "wasm/jit/jit.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sprawling::runtime {
namespace {

struct Guest {
  std::string name;             // the test's name
  std::filesystem::path wasm;   // built by tests/jit/CMakeLists.txt or examples/
  std::vector<std::string> argv;
  bool mount_examples = false;  // examples/data at /data, read-only
  bool unmetered = true;        // also compare the unmetered variant
  std::uint64_t fuel = 2'000'000'000;
};

// The workloads at bench/run's smoke sizes or smaller. Each variant (metered, unmetered) of a
// guest costs LLVM 1.5-4 s of CPU (functions compile on their first call, printf's among them),
// so CI runs the two example guests only, metered (host calls through a mount, stdout and stderr,
// an exit status, fuel exhaustion; the fuzz target compares unmetered code on every module);
// SPRAWLING_TIER_DIFF_ALL=1 adds the unmetered variant and every bench workload (about two
// minutes of CPU).
std::vector<Guest> guests() {
  const std::filesystem::path built = SPRAWLING_TIER_DIFF_DIR;
  const bool all = std::getenv("SPRAWLING_TIER_DIFF_ALL") != nullptr;
  struct Workload {
    const char* name;
    const char* size;
  };
  static constexpr Workload kWorkloads[] = {
      {"base64", "4"},  {"bytecode", "100"}, {"crc32", "4"},  {"fib", "20"},     {"hashmap", "1"},
      {"indirect", "1"}, {"intarith", "2000"}, {"json", "2"}, {"matmul", "2"},  {"memops", "5"},
      {"nbody", "5000"}, {"quicksort", "1"}, {"sha256", "2"}, {"sieve", "1"},   {"strings", "2"},
  };
  std::vector<Guest> out;
  for (const Workload& w : kWorkloads) {
    if (all) out.push_back({.name = w.name, .wasm = built / (std::string(w.name) + ".wasm"), .argv = {w.name, w.size}});
  }
  const std::filesystem::path examples = SPRAWLING_EXAMPLES_WASM_DIR;
  out.push_back({.name = "wordcount", .wasm = examples / "wordcount.wasm",
                 .argv = {"wordcount", "/data/poem.txt", "/data/missing"}, .mount_examples = true, .unmetered = all});
  // greedy never ends: the fuel budget stops it, at the same instruction on both tiers (and
  // unmetered it would spin forever).
  out.push_back({.name = "greedy", .wasm = examples / "greedy.wasm", .argv = {"greedy", "/data/stolen.txt"},
                 .mount_examples = true, .unmetered = false, .fuel = 3'000'000});
  return out;
}

std::string exit_text(const SandboxExit& exit) {
  if (std::holds_alternative<Success>(exit)) return "success";
  if (const auto* f = std::get_if<Failure>(&exit)) return "failure " + std::to_string(f->code);
  if (std::holds_alternative<FuelExhausted>(exit)) return "fuel exhausted";
  return "trap: " + std::get<Trap>(exit).message;
}

struct Observed {
  std::string stdout_text, stderr_text, exit, error;
  std::uint64_t fuel = 0;
};

Observed run(const Guest& g, ExecutionTier tier, bool metered, bool tier_up = true) {
  WasmSandbox sandbox(SandboxConfig{.meter_fuel = metered, .tier = tier, .tier_up = tier_up});
  SandboxJob job{.wasm = g.wasm, .argv = g.argv, .env = {}, .stdin_bytes = {}, .mounts = {}, .fuel = Fuel{g.fuel}};
  if (g.mount_examples) job.mounts.push_back(Mount{.host = SPRAWLING_EXAMPLES_DATA_DIR, .guest = "/data", .writable = false});
  auto outcome = sandbox.run(job);
  Observed o;
  if (!outcome) {
    o.error = outcome.error().to_string();
    return o;
  }
  o.stdout_text.assign(outcome->stdout_bytes.begin(), outcome->stdout_bytes.end());
  o.stderr_text.assign(outcome->stderr_bytes.begin(), outcome->stderr_bytes.end());
  o.exit = exit_text(outcome->exit);
  o.fuel = outcome->stats ? outcome->stats->fuel_consumed : 0;
  return o;
}

// gtest prints a parameter in test listings (and CTest names): the guest's name, not its bytes.
void PrintTo(const Guest& g, std::ostream* os) { *os << g.name; }

class TierDiff : public ::testing::TestWithParam<Guest> {};

TEST_P(TierDiff, SameOutputExitAndFuelOnBothTiers) {
  const Guest& g = GetParam();
  ASSERT_TRUE(std::filesystem::exists(g.wasm)) << g.wasm << " was not built";
  for (const bool metered : {true, false}) {
    if (!metered && !g.unmetered) continue;
    const Observed interp = run(g, ExecutionTier::Interpret, metered);
    const Observed compiled = run(g, ExecutionTier::Compile, metered);
    const char* variant = metered ? "metered" : "unmetered";
    EXPECT_EQ(interp.error, "") << variant;
    EXPECT_FALSE(interp.stdout_text.empty()) << variant << ": the guest printed nothing, so nothing was compared";
    EXPECT_EQ(compiled.error, interp.error) << variant;
    EXPECT_EQ(compiled.stdout_text, interp.stdout_text) << variant;
    EXPECT_EQ(compiled.stderr_text, interp.stderr_text) << variant;
    EXPECT_EQ(compiled.exit, interp.exit) << variant;
    EXPECT_EQ(compiled.fuel, interp.fuel) << variant << " fuel";
    if (metered) {
      EXPECT_GT(interp.fuel, 0u);
    }
  }
}

// Tier-up: auto with hot functions compiled in the background against auto with it off (the
// interpreter). Functions turn hot after a few calls here, so that many are compiled while the
// first run goes on (whichever finish in time are entered); the second run of the same module
// (the sandbox keeps it) starts with all of them compiled.
TEST_P(TierDiff, SameOutputExitAndFuelWithTierUpOnAndOff) {
  const Guest& g = GetParam();
  ASSERT_TRUE(std::filesystem::exists(g.wasm)) << g.wasm << " was not built";
  wasm::jit::tier_up_set_calls(20);
  for (const bool metered : {true, false}) {
    if (!metered && !g.unmetered) continue;
    const Observed off = run(g, ExecutionTier::Auto, metered, false);
    const char* variant = metered ? "metered" : "unmetered";
    EXPECT_EQ(off.error, "") << variant;
    for (int pass = 0; pass < 2; ++pass) {
      const Observed on = run(g, ExecutionTier::Auto, metered, true);
      EXPECT_EQ(on.error, off.error) << variant << " pass " << pass;
      EXPECT_EQ(on.stdout_text, off.stdout_text) << variant << " pass " << pass;
      EXPECT_EQ(on.stderr_text, off.stderr_text) << variant << " pass " << pass;
      EXPECT_EQ(on.exit, off.exit) << variant << " pass " << pass;
      EXPECT_EQ(on.fuel, off.fuel) << variant << " pass " << pass << " fuel";
      ASSERT_TRUE(wasm::jit::tier_up_wait_idle(300'000));
    }
  }
  wasm::jit::tier_up_set_calls(20000);
}

INSTANTIATE_TEST_SUITE_P(Guests, TierDiff, ::testing::ValuesIn(guests()),
                         [](const ::testing::TestParamInfo<Guest>& info) { return info.param.name; });

// Prints the bits of 0/0 (f32), of a signalling NaN plus one (f64, its low word) and of its f32
// demotion, in hex, one per line: without NaN canonicalization x86 makes the negative default NaN
// and keeps a NaN operand's payload; with it every NaN is the canonical one.
constexpr std::string_view kNanGuest = R"((module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "0123456789abcdef")
  (global $at (mut i32) (i32.const 200))
  (func $hex (param $v i32)
    (local $i i32)
    (loop $digit
      (i32.store8 (i32.sub (i32.add (global.get $at) (i32.const 7)) (local.get $i))
        (i32.load8_u offset=100 (i32.and (i32.shr_u (local.get $v) (i32.shl (local.get $i) (i32.const 2))) (i32.const 15))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $i) (i32.const 8))))
    (i32.store8 offset=8 (global.get $at) (i32.const 10))
    (global.set $at (i32.add (global.get $at) (i32.const 9))))
  (func (export "_start")
    (local $zero f32) (local $d f64)
    (call $hex (i32.reinterpret_f32 (f32.div (local.get $zero) (local.get $zero))))
    (local.set $d (f64.add (f64.reinterpret_i64 (i64.const 0x7FF4000000000001)) (f64.const 1)))
    (call $hex (i32.wrap_i64 (i64.shr_u (i64.reinterpret_f64 (local.get $d)) (i64.const 32))))
    (call $hex (i32.reinterpret_f32 (f32.demote_f64 (local.get $d))))
    (i32.store (i32.const 0) (i32.const 200))
    (i32.store (i32.const 4) (i32.const 27))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
)";

TEST(Determinism, NanCanonicalizationAndDeterministicJobsGiveCanonicalNansOnBothTiersAtTheSameFuel) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sprawling-nan-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path wat = dir / "nan.wat";
  {
    std::FILE* f = std::fopen(wat.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(kNanGuest.data(), 1, kNanGuest.size(), f);
    std::fclose(f);
  }
  const std::string canonical = "7fc00000\n7ff80000\n7fc00000\n";
  std::uint64_t fuel = 0;
  for (const ExecutionTier tier : {ExecutionTier::Interpret, ExecutionTier::Compile}) {
    for (const int mode : {0, 1, 2}) {  // neither, nan_canonicalization, deterministic
      WasmSandbox sandbox(SandboxConfig{.deterministic = mode == 2, .tier = tier, .nan_canonicalization = mode == 1});
      auto outcome = sandbox.run(
          SandboxJob{.wasm = wat, .argv = {"nan"}, .env = {}, .stdin_bytes = {}, .mounts = {}, .fuel = Fuel{1'000'000}});
      ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
      const std::string out(outcome->stdout_bytes.begin(), outcome->stdout_bytes.end());
      const char* what = tier == ExecutionTier::Compile ? "compile" : "interpret";
      if (mode == 0) {
#if defined(__x86_64__)
        EXPECT_EQ(out, "ffc00000\n7ffc0000\n7fe00000\n") << what;  // the host's NaNs, payload kept
#endif
      } else {
        EXPECT_EQ(out, canonical) << what << " mode " << mode;
      }
      // Canonicalization is not a wasm instruction: it costs no fuel.
      ASSERT_TRUE(outcome->stats.has_value());
      if (fuel == 0) fuel = outcome->stats->fuel_consumed;
      EXPECT_EQ(outcome->stats->fuel_consumed, fuel) << what << " mode " << mode;
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sprawling::runtime
