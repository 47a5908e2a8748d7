// AxError: the error value of the public API — a stable code, a human message, the
// alternative arm to use (for E_TOOL_UNAVAILABLE) and structured detail.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sprawling::runtime {

// Stable codes: part of the public API. Tests assert on these, never on message text.
enum class ErrorCode : std::uint8_t {
  ToolUnavailable,  // E_TOOL_UNAVAILABLE: this build or machine cannot run the job at all
  SandboxDenied,    // E_SANDBOX_DENIED: the module asks for a capability the sandbox does not grant
  SandboxHost,      // E_SANDBOX_HOST: the host failed (never the guest's doing)
  InvalidModule,    // E_INVALID_MODULE: the module is malformed or does not validate
  InvalidJob,       // E_INVALID_JOB: the job itself is wrong (missing file, bad mount …)
};

// The stable string of a code, e.g. "E_SANDBOX_DENIED".
[[nodiscard]] std::string_view name(ErrorCode code) noexcept;

struct AxError {
  ErrorCode code;
  std::string message;
  // The arm to use instead; set by AbsentSandbox (E_TOOL_UNAVAILABLE).
  std::optional<std::string> alternative;
  // Structured detail, e.g. {"import": "wasi_snapshot_preview1::sock_connect"},
  // {"offset": "123"}, {"path": "/x"}. Keys are documented where the error is made.
  std::map<std::string, std::string> detail;

  // "E_CODE: message", for logs and the CLI.
  [[nodiscard]] std::string to_string() const;
};

}  // namespace sprawling::runtime
