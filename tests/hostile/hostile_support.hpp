// Shared by the hostile-guest suite and the soak: scratch folders, jobs, and the host-side
// measurements (resident memory, open fds, wall time) the tests bound.
#pragma once

#include "engine/guest.hpp"

#include <sprawling/runtime/sandbox.hpp>
#include <sprawling/runtime/wasm_sandbox.hpp>

#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SPRAWLING_HOSTILE_SANITIZED 1
// From the sanitizer runtime's allocator interface (GCC ships no header for it).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace sprawling::hostile {

// A scratch folder removed with everything in it (the tests' one TempDir).
using Scratch = test::TempDir;

inline runtime::SandboxJob job(const std::filesystem::path& wasm, std::uint64_t fuel) {
  return runtime::SandboxJob{.wasm = wasm, .argv = {"guest"}, .env = {}, .stdin_bytes = {}, .mounts = {},
                             .fuel = runtime::Fuel{fuel}};
}

// Resident set size of this process now (VmRSS), in bytes.
inline std::uint64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// Peak resident set since the last reset_peak_resident() (VmHWM), in bytes.
inline std::uint64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// Resets VmHWM to the current resident set (Linux ≥ 4.0: "5" to /proc/self/clear_refs).
inline bool reset_peak_resident() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

// The memory figure the suite bounds. Normally the resident set. Under ASan/TSan the resident
// set is no measure (freed blocks sit in the sanitizer's quarantine, shadow memory comes and
// goes), so the figure is the heap bytes in use — which still catches anything a run keeps.
inline std::uint64_t memory_figure() {
#ifdef SPRAWLING_HOSTILE_SANITIZED
  return __sanitizer_get_current_allocated_bytes();
#else
  return resident_bytes();
#endif
}

inline constexpr const char* kMemoryFigureName =
#ifdef SPRAWLING_HOSTILE_SANITIZED
    "heap in use (sanitizer build)";
#else
    "resident memory";
#endif

// Open fds of this process (the /proc/self/fd entries, less the one reading them).
inline std::size_t open_fds() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') ++n;
    }
    ::closedir(d);
  }
  return n - 1;
}

inline std::string text(const std::vector<std::uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

// Little-endian u32 words a guest wrote to stdout (how guests here report counts).
inline std::vector<std::uint32_t> words(const std::vector<std::uint8_t>& bytes) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    out.push_back(bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (std::uint32_t{bytes[i + 3]} << 24));
  }
  return out;
}

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Wall time and memory growth of one run, checked against the test's bounds. The growth is the
// peak resident set during the run over the resident set before it (so a transient allocation
// counts, not only what is kept); under sanitizers, whose quarantine and shadow make resident
// figures meaningless, it is the growth of the heap in use.
class Bounds {
 public:
  Bounds(double max_seconds, std::uint64_t max_growth) : max_seconds_(max_seconds), max_growth_(max_growth) {
#ifndef SPRAWLING_HOSTILE_SANITIZED
    peak_tracked_ = reset_peak_resident();
#endif
    before_ = memory_figure();
    start_ = Clock::now();
  }
  void check() const {
    const double elapsed = seconds_since(start_);
    const std::uint64_t after = peak_tracked_ ? peak_resident_bytes() : memory_figure();
    const std::uint64_t growth = after > before_ ? after - before_ : 0;
    EXPECT_LT(elapsed, max_seconds_) << "the host took too long";
    EXPECT_LT(growth, max_growth_) << (peak_tracked_ ? "peak resident memory" : kMemoryFigureName) << " grew by "
                                   << growth / kMiB << " MiB";
    std::printf("  host: %.3f s, %s +%.1f MiB\n", elapsed, peak_tracked_ ? "peak resident" : kMemoryFigureName,
                static_cast<double>(growth) / static_cast<double>(kMiB));
  }

 private:
  double max_seconds_;
  std::uint64_t max_growth_;
  bool peak_tracked_ = false;
  std::uint64_t before_ = 0;
  Clock::time_point start_;
};

// The trap's message, or what the run ended as instead (so a failure says what happened).
inline std::string trap_message(const runtime::SandboxOutcome& outcome) {
  if (const auto* trap = std::get_if<runtime::Trap>(&outcome.exit)) return trap->message;
  if (std::holds_alternative<runtime::Success>(outcome.exit)) return "(not a trap: Success)";
  if (const auto* f = std::get_if<runtime::Failure>(&outcome.exit))
    return "(not a trap: Failure " + std::to_string(f->code) + ")";
  return "(not a trap: FuelExhausted after " + std::to_string(outcome.stats ? outcome.stats->fuel_consumed : 0) +
         " fuel)";
}

// The hostile guests run on each tier this build has (the compiled tier where it is built): a
// guest must end the same way under both, with the same fuel. A suite derives from it and is
// instantiated with ValuesIn(tiers()) and tier_name.
class Tiered : public ::testing::TestWithParam<runtime::ExecutionTier> {
 protected:
  // The first compiled run of a process sets LLVM up once (targets, the first JIT: about 18 MiB
  // of peak resident memory). That is not the guest's doing, so it is paid before the test's
  // bounds start, by one tiny guest.
  void SetUp() override {
    if (GetParam() != runtime::ExecutionTier::Compile) return;
    static const bool warm = [] {
      Scratch dir;
      const auto wasm = dir.write("warm.wat", std::string_view(R"((module (memory (export "memory") 1)
        (func (export "_start"))))"));
      runtime::WasmSandbox sandbox(config());
      auto outcome = sandbox.run(runtime::SandboxJob{.wasm = wasm, .argv = {"warm"}, .env = {}, .stdin_bytes = {},
                                                     .mounts = {}, .fuel = runtime::Fuel{1'000}});
      return outcome.has_value() && std::holds_alternative<runtime::Success>(outcome->exit);
    }();
    ASSERT_TRUE(warm) << "a one-function guest did not run on the compiled tier";
  }

  // The configuration `c` with the tier under test.
  [[nodiscard]] static runtime::SandboxConfig config(runtime::SandboxConfig c = {}) {
    c.tier = GetParam();
    return c;
  }
};

inline std::vector<runtime::ExecutionTier> tiers() {
  std::vector<runtime::ExecutionTier> out{runtime::ExecutionTier::Interpret};
  if (runtime::wasm_sandbox_has_compiled_tier()) out.push_back(runtime::ExecutionTier::Compile);
  return out;
}

inline std::string tier_name(const ::testing::TestParamInfo<runtime::ExecutionTier>& info) {
  return info.param == runtime::ExecutionTier::Compile ? "compile" : "interpret";
}

}  // namespace sprawling::hostile
