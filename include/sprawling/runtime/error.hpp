// AxError: the error of the public API (the seam's Sandbox::run, precompile_module), with its
// stable codes.
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

// AxError is the seam's error: what Sandbox::run returns, as
// std::expected<SandboxOutcome, AxError>, when the job could not be run as asked. The name is the
// one the sandbox contract gives it. It never describes the guest: a guest that fails, traps or
// runs out of fuel is an outcome (SandboxExit), not an AxError. An error means the guest did not
// run (refused module, wrong job, no engine) or the host failed while running it, and then no
// outcome is given rather than a guessed one.
//
// Callers branch on `code`, which is stable (ErrorCode above; name(code) is its string, the same
// in the C API's sprawling_error_code and the Python module's SandboxError.code). `message` is
// for people and may change between releases: never parse it. `alternative` names the arm to
// use instead when the job cannot run here at all (E_TOOL_UNAVAILABLE); `detail` holds the
// values a program may need (the denied import, the path, the offset).
//
//   auto outcome = sandbox.run(job);
//   if (!outcome) {
//     const AxError& e = outcome.error();
//     if (e.code == ErrorCode::ToolUnavailable && e.alternative) fall_back_to(*e.alternative);
//     else log(e.to_string());  // "E_SANDBOX_DENIED: the module imports …"
//   }
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
