// The stable names of the public error codes.
#include <sprawling/runtime/error.hpp>

namespace sprawling::runtime {

std::string_view name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::ToolUnavailable: return "E_TOOL_UNAVAILABLE";
    case ErrorCode::SandboxDenied: return "E_SANDBOX_DENIED";
    case ErrorCode::SandboxHost: return "E_SANDBOX_HOST";
    case ErrorCode::InvalidModule: return "E_INVALID_MODULE";
    case ErrorCode::InvalidJob: return "E_INVALID_JOB";
  }
  return "E_UNKNOWN";
}

std::string AxError::to_string() const {
  std::string out(name(code));
  out += ": ";
  out += message;
  if (alternative) {
    out += " (use instead: ";
    out += *alternative;
    out += ")";
  }
  return out;
}

}  // namespace sprawling::runtime
