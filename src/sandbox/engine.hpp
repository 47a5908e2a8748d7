// Private parts of the engine adapter that tests reach directly: the facts a run produced
// (RunRecord), `classify` (facts → SandboxExit or host fault) and `host_error`.
#pragma once

#include <sprawling/runtime/sandbox.hpp>

#include "wasm/runtime/runtime.hpp"

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

namespace sprawling::runtime::engine {

// Everything a finished run left behind, before it is judged.
struct RunRecord {
  // How _start ended: returned normally, or a trap (including Exit and OutOfFuel).
  std::optional<wasm::Trap> trap;
  // The captured pipes; empty when they could not be recovered.
  std::optional<std::vector<std::uint8_t>> stdout_bytes;
  std::optional<std::vector<std::uint8_t>> stderr_bytes;
  // Fuel consumed; empty when metering was on but the figure could not be read back.
  std::optional<std::uint64_t> fuel_consumed;
  bool fuel_metered = true;
  std::chrono::nanoseconds wall_time{0};
  std::uint64_t peak_memory_bytes = 0;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::uint64_t disk_write_bytes = 0;
  bool from_snapshot = false;  // [snapshots]
};

// The one constructor of host faults (E_SANDBOX_HOST): the host could not establish a fact.
[[nodiscard]] AxError host_error(std::string message, std::map<std::string, std::string> detail = {});

// Judges a run (SPEC §3): returned or proc_exit(0) → Success; proc_exit(1..125) → Failure;
// fuel out → FuelExhausted; any other trap → Trap{message naming the trap, function, offset};
// proc_exit ≥ 126, unrecoverable output, unreadable fuel, or an engine error that is not the
// guest's → host_error. Never a default in place of a fact.
[[nodiscard]] std::expected<SandboxOutcome, AxError> classify(RunRecord record);

// "out of bounds memory access in function 3 `$name` at offset 0x1a2"
[[nodiscard]] std::string describe_trap(const wasm::Trap& trap);

}  // namespace sprawling::runtime::engine
