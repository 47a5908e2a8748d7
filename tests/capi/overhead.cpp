// Measurement, not a test (target capi_overhead, not built by default): the per-job time of a
// short guest through the C++ seam and through the C API, to set the bindings' cost against.
//   capi_overhead GUEST.wasm [RUNS]   prints µs per job, best of five batches, for each way.
#include <sprawling/runtime/wasm_sandbox.hpp>
#include <sprawling/sprawling.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

namespace {

double best_us_per_job(int runs, const std::function<bool()>& job) {
  double best = 1e300;
  for (int batch = 0; batch < 5; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) {
      if (!job()) {
        std::fputs("capi_overhead: a run failed\n", stderr);
        std::exit(1);
      }
    }
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count() / runs);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: capi_overhead GUEST.wasm [RUNS]\n", stderr);
    return 2;
  }
  const std::string guest = argv[1];
  const int runs = argc > 2 ? std::atoi(argv[2]) : 500;
  using namespace sprawling::runtime;

  WasmSandbox cpp;
  const SandboxJob job{.wasm = guest, .argv = {"guest", "hello"}, .env = {}, .stdin_bytes = {}, .mounts = {},
                       .fuel = Fuel{100'000'000}};
  const double cpp_us = best_us_per_job(runs, [&] {
    auto out = cpp.run(job);
    return out && !out->stdout_bytes.empty();
  });

  sprawling_job* cjob = nullptr;
  sprawling_sandbox* csb = nullptr;
  if (sprawling_job_new(&cjob) != SPRAWLING_OK || sprawling_sandbox_new(nullptr, &csb) != SPRAWLING_OK ||
      sprawling_job_set_module_path(cjob, guest.c_str()) != SPRAWLING_OK ||
      sprawling_job_add_arg(cjob, "guest", SPRAWLING_NUL_TERMINATED) != SPRAWLING_OK ||
      sprawling_job_add_arg(cjob, "hello", SPRAWLING_NUL_TERMINATED) != SPRAWLING_OK ||
      sprawling_job_set_fuel(cjob, 100'000'000) != SPRAWLING_OK) {
    std::fputs("capi_overhead: cannot build the C job\n", stderr);
    return 1;
  }
  auto c_run = [&](sprawling_sandbox* sandbox) {
    sprawling_outcome* outcome = nullptr;
    const bool ok = sprawling_run(sandbox, cjob, &outcome, nullptr) == SPRAWLING_OK;
    size_t len = 0;
    sprawling_outcome_stdout(outcome, &len);
    sprawling_outcome_free(outcome);
    return ok && len > 0;
  };
  const double c_us = best_us_per_job(runs, [&] { return c_run(csb); });
  // What the Python module does: a fresh sandbox per run (so one Sandbox serves many threads).
  const double c_fresh_us = best_us_per_job(runs, [&] {
    sprawling_sandbox* fresh = nullptr;
    if (sprawling_sandbox_new(nullptr, &fresh) != SPRAWLING_OK) return false;
    const bool ok = c_run(fresh);
    sprawling_sandbox_free(fresh);
    return ok;
  });
  sprawling_sandbox_free(csb);
  sprawling_job_free(cjob);
  std::printf("per job, best of 5 x %d runs of %s with argv [guest, hello]:\n", runs, guest.c_str());
  std::printf("  C++ seam (WasmSandbox::run)          %8.1f us\n", cpp_us);
  std::printf("  C API (sprawling_run, one sandbox)   %8.1f us  (+%.1f)\n", c_us, c_us - cpp_us);
  std::printf("  C API (a sandbox per run)            %8.1f us  (+%.1f)\n", c_fresh_us, c_fresh_us - cpp_us);
  return 0;
}
