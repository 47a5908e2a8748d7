// The soak: many back-to-back jobs of mixed guests on one WasmSandbox, or on two
// sandboxes in two threads sharing the module cache; resident memory and open fds measured after a
// warm-up and at the end. The test runs it small; bench/soak runs it full size.
#pragma once

#include "hostile/hostile_support.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <barrier>
#include <cstdint>
#include <expected>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sprawling::hostile::soak {

struct Figures {
  std::size_t jobs = 0;        // all jobs, warm-up included
  std::size_t wrong = 0;       // jobs whose outcome was not the expected one
  std::string first_wrong;     // what the first wrong one was
  std::uint64_t rss_warm = 0;  // memory_figure() after the warm-up: resident bytes (heap in use under sanitizers)
  std::uint64_t rss_end = 0;
  std::size_t fds_warm = 0;
  std::size_t fds_end = 0;
  double seconds = 0;
};

// The guests of the mix: a success with output, a read through a mount, a trap, fuel exhaustion,
// a failure exit, a memory grower. Each knows its expected outcome.
class Mix {
 public:
  static constexpr std::uint64_t kFuel = 200'000;  // the spinning guest's budget: enough for the others

  Mix() {
    data_.write("input.txt", std::string_view("soak input\n"));
    paths_.push_back(dir_.write("ok.wat", std::string_view(R"((module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 8) "ok\n")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 8))
    (i32.store (i32.const 4) (i32.const 3))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
)")));
    paths_.push_back(dir_.write("cat.wat", std::string_view(R"((module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "input.txt")
  (func (export "_start")
    (if (call $path_open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 9)
                         (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 200))
      (then (call $proc_exit (i32.const 7))))
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 1024))
    (if (call $fd_read (i32.load (i32.const 200)) (i32.const 0) (i32.const 1) (i32.const 8))
      (then (call $proc_exit (i32.const 8))))
    (i32.store (i32.const 4) (i32.load (i32.const 8)))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    (drop (call $fd_close (i32.load (i32.const 200))))))
)")));
    paths_.push_back(dir_.write("trap.wat", std::string_view(R"((module
  (memory (export "memory") 1)
  (func (export "_start") unreachable))
)")));
    paths_.push_back(dir_.write("spin.wat", std::string_view(R"((module
  (memory (export "memory") 1)
  (func (export "_start") (loop $spin (br $spin))))
)")));
    paths_.push_back(dir_.write("exit3.wat", std::string_view(R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $proc_exit (i32.const 3))))
)")));
    paths_.push_back(dir_.write("grow.wat", std::string_view(R"((module
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (memory.grow (i32.const 63)))
    (memory.fill (i32.const 0) (i32.const 7) (i32.const 150000))
    (i32.store (i32.const 4194300) (i32.const 7))))
)")));
  }

  [[nodiscard]] std::size_t size() const { return paths_.size(); }

  [[nodiscard]] runtime::SandboxJob job(std::size_t i) const {
    auto j = hostile::job(paths_[i % size()], kFuel);
    if (i % size() == 1) j.mounts.push_back(runtime::Mount{.host = data_.path(), .guest = "/data", .writable = false});
    return j;
  }

  // Empty when the outcome is the expected one; otherwise what went wrong.
  [[nodiscard]] std::string check(std::size_t i, const std::expected<runtime::SandboxOutcome, runtime::AxError>& r) const {
    if (!r) return "job " + std::to_string(i) + ": " + r.error().to_string();
    const auto& o = *r;
    bool ok = false;
    switch (i % size()) {
      case 0: ok = o.exit == runtime::SandboxExit{runtime::Success{}} && text(o.stdout_bytes) == "ok\n"; break;
      case 1: ok = o.exit == runtime::SandboxExit{runtime::Success{}} && text(o.stdout_bytes) == "soak input\n"; break;
      case 2: {
        const auto* trap = std::get_if<runtime::Trap>(&o.exit);
        ok = trap != nullptr && trap->message.rfind("unreachable", 0) == 0;
        break;
      }
      case 3: ok = o.exit == runtime::SandboxExit{runtime::FuelExhausted{}} && o.stats->fuel_consumed == kFuel; break;
      case 4: ok = o.exit == runtime::SandboxExit{runtime::Failure{3}}; break;
      default: ok = o.exit == runtime::SandboxExit{runtime::Success{}} && o.stats->peak_memory_bytes == (64u << 16); break;
    }
    return ok ? std::string() : "job " + std::to_string(i) + " (guest " + paths_[i % size()].filename().string() +
                                    ") ended unexpectedly";
  }

 private:
  Scratch dir_;
  Scratch data_;
  std::vector<std::filesystem::path> paths_;
};

inline constexpr std::size_t kWarmup = 100;

// `threads` threads, each with its own WasmSandbox (the module cache is process-wide, so shared),
// each running `jobs_per_thread` jobs; the first kWarmup of each thread are the warm-up.
inline Figures run(std::size_t threads, std::size_t jobs_per_thread) {
  Mix mix;
  Figures f;
  std::mutex lock;
  std::barrier warm(static_cast<std::ptrdiff_t>(threads) + 1);
  std::barrier measured(static_cast<std::ptrdiff_t>(threads) + 1);
  auto worker = [&](std::size_t t) {
    // Without tier-up: a function turning hot loads the compiler plugin (tens of MiB of libLLVM)
    // once per process, which is not growth per job, the thing measured here (TierUp.* and
    // TierDiff test tier-up itself).
    runtime::WasmSandbox sandbox(runtime::SandboxConfig{.tier_up = false});
    std::size_t wrong = 0;
    std::string first;
    for (std::size_t i = 0; i < jobs_per_thread; ++i) {
      if (i == kWarmup) {
        warm.arrive_and_wait();      // everyone warmed up
        measured.arrive_and_wait();  // the main thread has taken its measurement
      }
      const std::size_t n = i + t;  // threads start at different guests
      const std::string problem = mix.check(n, sandbox.run(mix.job(n)));
      if (!problem.empty() && wrong++ == 0) first = problem;
    }
    if (jobs_per_thread <= kWarmup) {
      warm.arrive_and_wait();
      measured.arrive_and_wait();
    }
    std::lock_guard guard(lock);
    f.wrong += wrong;
    if (f.first_wrong.empty()) f.first_wrong = first;
  };
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  warm.arrive_and_wait();
  f.rss_warm = memory_figure();
  f.fds_warm = open_fds();
  measured.arrive_and_wait();
  for (auto& th : pool) th.join();
  f.rss_end = memory_figure();
  f.fds_end = open_fds();
  f.jobs = threads * jobs_per_thread;
  f.seconds = seconds_since(start);
  return f;
}

}  // namespace sprawling::hostile::soak
