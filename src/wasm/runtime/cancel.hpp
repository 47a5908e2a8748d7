// Cancelling a run from another thread: a flag the thread that runs a job installs for its runs,
// checked where the deadline is checked (on entry and at every fuel refill).
#pragma once

#include <atomic>

namespace sprawling::wasm {

// Installs `flag` (nullptr: none) for the runs the calling thread makes from now on and returns
// the one it replaces. While a flag is installed, metered runs refuel in the deadline's chunks
// (so a long loop reaches a check), and a run that finds the flag set ends with
// TrapKind::DeadlineExceeded at its next check. The flag is read, never written, by the engine;
// it must outlive the runs it is installed for. Unmetered runs (no fuel, no deadline) never check.
const std::atomic<bool>* set_thread_cancel_flag(const std::atomic<bool>* flag) noexcept;
// Whether the calling thread's flag is installed and set.
[[nodiscard]] bool thread_cancel_requested() noexcept;

}  // namespace sprawling::wasm
