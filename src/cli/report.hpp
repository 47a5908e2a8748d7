// The CLI's exit-status policy and its --json outcome report.
#pragma once

#include <sprawling/runtime/sandbox.hpp>

#include <cstdio>
#include <expected>
#include <string>

namespace sprawling::cli {

// Exit statuses of `sprawl`. A guest's own code (0..125) passes through unchanged; everything
// the CLI adds is >= 126 so the two can never be confused.
namespace status {
inline constexpr int kHostFault = 126;        // E_SANDBOX_HOST
inline constexpr int kToolUnavailable = 127;  // E_TOOL_UNAVAILABLE (e.g. no python artifact)
inline constexpr int kUsage = 128;            // bad command line
inline constexpr int kInvalidJob = 131;       // E_INVALID_JOB (missing module file, bad mount …)
inline constexpr int kInvalidModule = 132;    // E_INVALID_MODULE (malformed / invalid module)
inline constexpr int kDenied = 133;           // E_SANDBOX_DENIED (an import the sandbox does not grant)
inline constexpr int kTrap = 134;             // the guest trapped (as Wasmtime)
inline constexpr int kFuelExhausted = 135;    // the fuel budget ran out
inline constexpr int kDeadline = 136;         // the --timeout deadline passed
}  // namespace status

[[nodiscard]] int exit_status(const std::expected<runtime::SandboxOutcome, runtime::AxError>& result);
[[nodiscard]] int exit_status(runtime::ErrorCode code);

// One JSON object describing the outcome (or the error), newline-terminated.
[[nodiscard]] std::string json_report(const std::expected<runtime::SandboxOutcome, runtime::AxError>& result);

// Writes `text` to `stream` (no terminator needed, unlike fputs).
void print(std::FILE* stream, std::string_view text);

// JSON string escaping (quotes included).
[[nodiscard]] std::string json_string(std::string_view text);

}  // namespace sprawling::cli
