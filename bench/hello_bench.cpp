// In-process instantiate-and-run of a hello module through WasmSandbox (Google Benchmark): the
// cost a harness pays per job, reported as time per job and jobs per second.
#include <sprawling/runtime/wasm_sandbox.hpp>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <variant>

namespace {

using sprawling::runtime::ExecutionTier;
using sprawling::runtime::Failure;
using sprawling::runtime::Fuel;
using sprawling::runtime::FuelExhausted;
using sprawling::runtime::SandboxConfig;
using sprawling::runtime::SandboxExit;
using sprawling::runtime::SandboxJob;
using sprawling::runtime::Success;
using sprawling::runtime::Trap;
using sprawling::runtime::WasmSandbox;

std::string describe(const SandboxExit& exit) {
  if (const auto* failure = std::get_if<Failure>(&exit)) return "exit code " + std::to_string(failure->code);
  if (std::holds_alternative<FuelExhausted>(exit)) return "fuel exhausted";
  if (const auto* trap = std::get_if<Trap>(&exit)) return "trap: " + trap->message;
  return "success";
}

// Every iteration's outcome is checked: a job that traps, fails or prints the wrong bytes stops
// the benchmark with the reason, so a broken engine cannot report a fast time.
void run_hello_jobs(benchmark::State& state, const std::filesystem::path& module, bool meter_fuel) {
  if (!std::filesystem::is_regular_file(module)) {
    state.SkipWithError((module.string() + " is missing (bench/run builds it)").c_str());
    return;
  }
  SandboxConfig config;
  config.meter_fuel = meter_fuel;
  // SPRAWL_BENCH_TIER=interpret|compile|auto: the tier (default: SandboxConfig's, auto).
  if (const char* tier = std::getenv("SPRAWL_BENCH_TIER"); tier != nullptr) {
    const std::string_view t(tier);
    config.tier = t == "interpret" ? ExecutionTier::Interpret
                  : t == "compile" ? ExecutionTier::Compile
                                   : ExecutionTier::Auto;
  }
  WasmSandbox sandbox(config);
  SandboxJob job;
  job.wasm = module;
  job.argv = {"hello"};
  job.fuel = Fuel{10'000'000};
  constexpr std::string_view expected = "hello\n";
  for (auto _ : state) {
    auto outcome = sandbox.run(job);
    if (!outcome) {
      state.SkipWithError(("sandbox error: " + outcome.error().to_string()).c_str());
      break;
    }
    if (!std::holds_alternative<Success>(outcome->exit)) {
      state.SkipWithError(("the hello job did not succeed: " + describe(outcome->exit)).c_str());
      break;
    }
    const std::string_view out(reinterpret_cast<const char*>(outcome->stdout_bytes.data()),
                               outcome->stdout_bytes.size());
    if (out != expected) {
      state.SkipWithError("the hello job printed something other than \"hello\\n\"");
      break;
    }
    benchmark::DoNotOptimize(outcome);
  }
  state.SetItemsProcessed(state.iterations());
}

// A hand-written module: one fd_write and proc_exit, so the time is the engine's fixed cost.
void BM_HelloWat(benchmark::State& state) { run_hello_jobs(state, SPRAWLING_HELLO_WAT_MODULE, true); }
void BM_HelloWatNoFuel(benchmark::State& state) { run_hello_jobs(state, SPRAWLING_HELLO_WAT_MODULE, false); }

// printf("hello\n") through wasi-libc (built by bench/run): adds libc start-up and a bigger module.
void BM_HelloC(benchmark::State& state) {
  const char* env = std::getenv("SPRAWL_BENCH_HELLO_C");
  run_hello_jobs(state, env != nullptr ? env : SPRAWLING_HELLO_C_MODULE, true);
}

}  // namespace

BENCHMARK(BM_HelloWat)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HelloWatNoFuel)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HelloC)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
