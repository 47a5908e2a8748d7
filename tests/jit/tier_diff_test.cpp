// The compiled tier against the interpreter on real guests: the bench workloads and the example
// guests built in the tree (C through wasi-libc) run through the sandbox on both tiers, and with
// tier-up on and off, and the stdout, stderr, exit and fuel of each must be identical, metered
// and unmetered.
#include <sprawling/runtime/wasm_sandbox.hpp>

#include "wasm/jit/jit.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <string>
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

}  // namespace
}  // namespace sprawling::runtime
