// Figures of Python jobs started from the interpreter snapshot (docs/python.md, "Snapshots"):
// in-process cost of a `print(1)` job through WasmSandbox cold and from the snapshot, jobs/s
// per core, the private memory a job dirties, and the snapshot's size. A benchmark, not a test.
#include <sprawling/runtime/wasm_sandbox.hpp>

#include "wasi/wasi.hpp"
#include "wasm/runtime/runtime.hpp"
#include "wasm/snapshot/snapshot_impl.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace sprawling;  // NOLINT(google-build-using-namespace): a benchmark's main file

fs::path from_env_or(const char* name, const fs::path& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? fs::path(v) : fallback;
}

runtime::SandboxJob python_job(const fs::path& wasm, const fs::path& lib, const std::string& code, bool snapshot) {
  runtime::SandboxJob job;
  job.wasm = wasm;
  job.argv = {"python3.11", "-c", code};
  job.mounts = {runtime::Mount{.host = lib, .guest = "/usr/local/lib", .writable = false}};
  job.fuel = runtime::Fuel{10'000'000'000};
  job.snapshot = runtime::SnapshotPolicy{.enabled = snapshot, .init_mounts = 1};
  // As `sprawl python` does (src/cli/python.cpp): the snapshot's file carries the code a job calls first.
  if (snapshot) job.snapshot.training_args = {"-c", "print(1, 'x', 2.5, [None], {'k': (True,)})"};
  return job;
}

double median(std::vector<double> v) {
  std::ranges::sort(v);
  return v[v.size() / 2];
}

// This thread's CPU time in µs: on a shared machine, wall time also counts the other processes'
// turns on the core.
double thread_cpu_micros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

struct JobTimes {
  double wall = 0;  // median µs per job
  double cpu = 0;   // median µs of CPU per job
};

// Medians per job through one WasmSandbox (the first, warm-up job is not counted).
JobTimes job_micros(const runtime::SandboxJob& job, int jobs, bool& from_snapshot) {
  runtime::WasmSandbox sandbox;
  std::vector<double> times;
  std::vector<double> cpu;
  for (int i = 0; i <= jobs; ++i) {
    const double c0 = thread_cpu_micros();
    const auto t0 = std::chrono::steady_clock::now();
    auto outcome = sandbox.run(job);
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = thread_cpu_micros();
    if (!outcome || outcome->exit != runtime::SandboxExit{runtime::Success{}} ||
        std::string(outcome->stdout_bytes.begin(), outcome->stdout_bytes.end()) != "1\n") {
      std::fprintf(stderr, "python_snapshot_bench: the job did not print 1\n");
      std::exit(1);
    }
    from_snapshot = outcome->stats->from_snapshot;
    if (i > 0) {
      times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      cpu.push_back(c1 - c0);
    }
  }
  return {median(times), median(cpu)};
}

// Private memory (KiB) in [begin, end) of this process: pages present and not file pages
// (/proc/self/pagemap bits 63 and 61), i.e. the copies the job's writes made of image pages plus
// any anonymous pages past the image. (smaps' Private_Dirty would also count image pages still
// dirty in the page cache from the snapshot file's own writing, shared by every job.)
std::uint64_t private_kib(std::uintptr_t begin, std::uintptr_t end) {
  std::ifstream pagemap("/proc/self/pagemap", std::ios::binary);
  std::vector<std::uint64_t> entries((end - begin) / 4096);
  pagemap.seekg(static_cast<std::streamoff>(begin / 4096 * 8));
  pagemap.read(reinterpret_cast<char*>(entries.data()), static_cast<std::streamsize>(entries.size() * 8));
  std::uint64_t pages = 0;
  for (const std::uint64_t e : entries) pages += ((e >> 63) & 1) != 0 && ((e >> 61) & 1) == 0 ? 1 : 0;
  return pages * 4;
}

// Runs one job from `snapshot` at the engine level and measures the private pages its memory
// holds at the end (what a concurrent job costs beyond the shared image).
std::uint64_t job_private_kib(const std::shared_ptr<const wasm::CompiledModule>& module,
                              const std::shared_ptr<const wasm::InstanceSnapshot>& snapshot, const fs::path& lib,
                              const std::string& code) {
  wasi::WasiConfig config;
  config.args = {"python3.11", "-c", code};
  config.preopens = {wasi::Preopen{.host = lib, .guest = "/usr/local/lib", .writable = false}};
  auto context = wasi::WasiContext::create(std::move(config));
  wasm::Store store;
  std::vector<wasm::Extern> imports;
  for (const auto& import : module->module().imports) {
    for (const auto& def : wasi::WasiContext::functions()) {
      if (def.name == import.name) imports.emplace_back(store.add_host_function(def.type, def.fn, context->get(), std::string(def.name)));
    }
  }
  auto instance = store.instantiate(module, imports, snapshot.get());
  auto resume = (*instance)->find_export("wizer.resume");
  // The job ends through proc_exit (an Exit trap with status 0).
  if (auto ended = store.invoke(std::get<wasm::FuncInst*>(*resume), {});
      ended || ended.error().kind != wasm::TrapKind::Exit || ended.error().exit_code != 0) {
    std::fprintf(stderr, "python_snapshot_bench: `%s` did not exit with status 0\n", code.c_str());
    std::exit(1);
  }
  wasm::MemoryInst* mem = (*instance)->memory(0);
  const auto base = reinterpret_cast<std::uintptr_t>(wasm::memory_data(mem));
  return private_kib(base, base + wasm::memory_size_bytes(mem));
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 50;
  const fs::path dir = fs::path(SPRAWLING_SOURCE_DIR) / ".artifacts" / "python-wasi";
  const fs::path wasm = from_env_or("SPRAWLING_PYTHON_WASM", dir / "python.wasm");
  const fs::path lib = from_env_or("SPRAWLING_PYTHON_LIB", dir / "lib");

  bool from_snapshot = false;
  const JobTimes cold = job_micros(python_job(wasm, lib, "print(1)", false), std::max(5, jobs / 10), from_snapshot);
  const JobTimes snap = job_micros(python_job(wasm, lib, "print(1)", true), jobs, from_snapshot);
  if (!from_snapshot) {
    std::fprintf(stderr, "python_snapshot_bench: the snapshot was not used\n");
    return 1;
  }
  std::printf("print(1) through WasmSandbox (fuel metered), median of runs (jobs/s per core from CPU time):\n");
  std::printf("  cold           %10.0f us/job wall  %10.0f us/job CPU  %8.1f jobs/s per core\n", cold.wall, cold.cpu,
              1e6 / cold.cpu);
  std::printf("  from snapshot  %10.0f us/job wall  %10.0f us/job CPU  %8.1f jobs/s per core\n", snap.wall, snap.cpu,
              1e6 / snap.cpu);

  // Engine level: the snapshot's size and what one job dirties.
  std::ifstream in(wasm, std::ios::binary);
  const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto module = *wasm::compile(bytes);
  runtime::WasmSandbox builder(runtime::SandboxConfig{.snapshot_dir = fs::temp_directory_path() / "sprawling-bench-snapshots"});
  if (auto built = builder.run(python_job(wasm, lib, "print(1)", true)); !built || !built->stats->from_snapshot) {
    std::fprintf(stderr, "python_snapshot_bench: no snapshot was built\n");
    return 1;
  }
  fs::path file;
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path() / "sprawling-bench-snapshots")) {
    if (e.path().extension() == ".snap") file = e.path();  // not the stamp beside it
  }
  auto snapshot = wasm::load_snapshot(module, wasm::sha256(module->module().bytes),
                                      std::strtoull(file.stem().string().substr(65).c_str(), nullptr, 16), file);
  if (!snapshot) {
    std::fprintf(stderr, "python_snapshot_bench: %s\n", snapshot.error().c_str());
    return 1;
  }
  std::printf("snapshot: memory %llu KiB, image %llu KiB, %llu non-zero 4 KiB pages, file %llu KiB\n",
              static_cast<unsigned long long>((*snapshot)->memory_bytes() >> 10),
              static_cast<unsigned long long>((*snapshot)->image_bytes() >> 10),
              static_cast<unsigned long long>((*snapshot)->nonzero_pages()),
              static_cast<unsigned long long>(fs::file_size(file) >> 10));
  for (const char* code : {"print(1)", "import json; print(json.dumps({'a': [1, 2]}))",
                           "import email.message, xml.dom.minidom; print(1)",
                           // Ending in os._exit: what the resumed job's ending (atexit, flushes, its own
                           // modules' teardown) adds in pages.
                           "import os, sys; print(1); sys.stdout.flush(); os._exit(0)"}) {
    std::printf("private memory after `%s`: %llu KiB\n", code,
                static_cast<unsigned long long>(job_private_kib(module, *snapshot, lib, code)));
  }
  fs::remove_all(fs::temp_directory_path() / "sprawling-bench-snapshots");
  return 0;
}
