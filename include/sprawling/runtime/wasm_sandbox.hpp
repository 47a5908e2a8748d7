// WasmSandbox: the engine at the seam — runs wasip1 command modules with our own engine and
// WASI host, under a fuel budget, a memory cap, a deadline and output caps.
#pragma once

#include <sprawling/runtime/sandbox.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>

namespace sprawling::runtime {

// Which tier runs the guest's functions (both give the same results, traps and fuel).
// Interpret: the interpreter alone, no compilation (instant start). Compile: every function the
// compiled tier supports is compiled with LLVM before the guest starts and runs as machine code,
// the rest interpreted; only in builds with the compiled tier (wasm_sandbox_has_compiled_tier()),
// otherwise run() fails with E_TOOL_UNAVAILABLE.
enum class ExecutionTier : std::uint8_t { Interpret, Compile };
[[nodiscard]] bool wasm_sandbox_has_compiled_tier() noexcept;

struct SandboxConfig {
  // Cap on each linear memory; memory.grow past it returns -1. Default: wasm32's 4 GiB.
  std::uint64_t max_memory_bytes = std::uint64_t{4} << 30;
  // Wall-clock limit of one run; hit → Trap{"deadline exceeded"}. Empty: none.
  std::optional<std::chrono::nanoseconds> timeout{};
  // Caps on captured output; past one the guest's write fails with EIO and stats say so.
  std::uint64_t max_stdout_bytes = std::uint64_t{64} << 20;
  std::uint64_t max_stderr_bytes = std::uint64_t{64} << 20;
  // When false, fuel is not metered at all (Fuel in the job is ignored): for benchmarks only.
  bool meter_fuel = true;
  // Streaming: when set, output is also handed over as the guest writes it (the CLI uses this).
  std::function<void(std::span<const std::uint8_t>)> stdout_sink{};
  std::function<void(std::span<const std::uint8_t>)> stderr_sink{};
  // Reproducible runs: fixed clocks and seeded randomness.
  bool deterministic = false;
  std::uint64_t random_seed = 0;
  // What one WASI call may take from guest memory (Wasmtime's "hostcall fuel", same default):
  // iovec arrays, written buffers, paths, poll subscriptions, random_get's buffer; past it the
  // call fails with ENOMEM. Bounds the host work a single `call` can cost.
  std::uint64_t hostcall_copy_limit = std::uint64_t{128} << 20;
  // Interpret by default: the compiled tier compiles the whole module first (no tiering yet).
  ExecutionTier tier = ExecutionTier::Interpret;
};

class WasmSandbox final : public Sandbox {
 public:
  explicit WasmSandbox(SandboxConfig config = {});
  ~WasmSandbox() override;
  WasmSandbox(const WasmSandbox&) = delete;
  WasmSandbox& operator=(const WasmSandbox&) = delete;

  std::expected<SandboxOutcome, AxError> run(const SandboxJob& job) override;

  [[nodiscard]] const SandboxConfig& config() const noexcept { return config_; }

 private:
  SandboxConfig config_;
};

}  // namespace sprawling::runtime
