// The sandbox seam: the job, the outcome, the Sandbox interface, the product implementation for
// engine-less builds (AbsentSandbox) and, through testing.hpp (included at the end, as the
// contract's layout has the seam hold them), the test doubles EchoSandbox and FaultSandbox. The
// engine sandbox is in wasm_sandbox.hpp, the conformance check in conformance.hpp.
#pragma once

#include <sprawling/runtime/error.hpp>

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sprawling::runtime {

// CPU budget in fuel units (one unit ≈ one executed wasm operator; Wasmtime's cost model).
struct Fuel {
  std::uint64_t units;
  friend bool operator==(const Fuel&, const Fuel&) = default;
};

// One preopened directory. The mount set *is* the guest's file capability scope.
struct Mount {
  std::filesystem::path host;
  std::string guest;  // absolute guest path, e.g. "/data"
  bool writable;
  friend bool operator==(const Mount&, const Mount&) = default;
};

// [snapshots] Whether a job may start from a snapshot of its module's initialised instance
// (WasmSandbox, modules exporting `wizer.initialize`; docs/snapshots.md). Other sandboxes ignore it.
struct SnapshotPolicy {
  bool enabled = true;
  // The first `init_mounts` of the job's mounts are the only thing the initialisation sees
  // (read-only; no other mount, no argv beyond argv[0], no environment, no stdin). A snapshot is
  // reused only by jobs whose mounts start with the same ones.
  std::size_t init_mounts = 0;
  // [start-up] When a snapshot is built (not loaded): the arguments, after argv[0], of one
  // training job run from it at once (its own bare context: no environment, empty stdin, the
  // init mounts read-only; output discarded; it changes nothing in the snapshot). The functions
  // it calls are translated and their code saved in the snapshot file with the initialisation's,
  // so that later processes copy rather than translate what a job calls first after resuming.
  // Empty: no training job. Not part of the snapshot's key: it decides which code the file
  // carries, never what a job runs or sees.
  std::vector<std::string> training_args{};
  friend bool operator==(const SnapshotPolicy&, const SnapshotPolicy&) = default;
};

struct SandboxJob {
  std::filesystem::path wasm;  // a wasip1 command module, binary (.wasm) or text (.wat)
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::uint8_t> stdin_bytes;
  // Streamed stdin: when set, the guest's fd 0 reads this host fd (a pipe, a file, a socket) on
  // demand and stdin_bytes is ignored: at most the guest's buffer per read, straight into guest
  // memory, so nothing is buffered on the host, and a read that waits for data stops at the
  // deadline. Borrowed: the caller keeps it open until run() returns. WasmSandbox reads it; the
  // other sandboxes ignore it.
  std::optional<int> stdin_fd{};
  std::vector<Mount> mounts;
  Fuel fuel;
  SnapshotPolicy snapshot{};  // [snapshots]
  friend bool operator==(const SandboxJob&, const SandboxJob&) = default;
};

struct Success {
  friend bool operator==(const Success&, const Success&) = default;
};
struct Failure {
  std::uint64_t code;
  friend bool operator==(const Failure&, const Failure&) = default;
};
struct FuelExhausted {
  friend bool operator==(const FuelExhausted&, const FuelExhausted&) = default;
};
struct Trap {
  std::string message;
  friend bool operator==(const Trap&, const Trap&) = default;
};
using SandboxExit = std::variant<Success, Failure, FuelExhausted, Trap>;

// Measurements of a real run (the engine sandbox fills them; the doubles leave them empty).
struct RunStats {
  std::uint64_t fuel_consumed = 0;           // exact: the sum of the costs of what ran
  std::chrono::nanoseconds wall_time{0};
  std::uint64_t peak_memory_bytes = 0;       // peak linear-memory size
  bool stdout_truncated = false;             // the guest wrote past the stdout cap
  bool stderr_truncated = false;
  std::uint64_t disk_write_bytes = 0;  // charged to the disk quota: bytes written to mounts + holes made
  // [snapshots] The job started from a snapshot (fuel_consumed then excludes the initialisation).
  bool from_snapshot = false;
  friend bool operator==(const RunStats&, const RunStats&) = default;
};

struct SandboxOutcome {
  std::vector<std::uint8_t> stdout_bytes;
  std::vector<std::uint8_t> stderr_bytes;
  SandboxExit exit;
  std::optional<RunStats> stats;
};

// The seam. One job at a time per instance (the Rust original's `&mut self`).
class Sandbox {
 public:
  virtual ~Sandbox() = default;
  virtual std::expected<SandboxOutcome, AxError> run(const SandboxJob& job) = 0;
};

// The product implementation for builds without the engine: every call is refused with
// E_TOOL_UNAVAILABLE naming the arm to use instead. Absence is a verdict, not a stand-in.
class AbsentSandbox final : public Sandbox {
 public:
  explicit AbsentSandbox(std::string alternative);
  std::expected<SandboxOutcome, AxError> run(const SandboxJob& job) override;
  [[nodiscard]] const std::string& alternative() const noexcept { return alternative_; }

 private:
  std::string alternative_;
};

// What make_sandbox builds.
struct SandboxFactoryConfig {
  // The arm named by AbsentSandbox when this build has no engine.
  std::string alternative_arm = "container";
};

// The product sandbox of this build: the engine sandbox (WasmSandbox) when built with
// SPRAWLING_WITH_ENGINE, AbsentSandbox otherwise.
[[nodiscard]] std::unique_ptr<Sandbox> make_sandbox(const SandboxFactoryConfig& config = {});

// True when this build carries the engine.
[[nodiscard]] bool engine_available() noexcept;

}  // namespace sprawling::runtime

// The doubles are declared in a header of their own, which tests include directly; the seam
// brings them along so that every user of the seam has the contract's whole vocabulary.
#include <sprawling/runtime/testing.hpp>  // IWYU pragma: export
