// Exit statuses and the --json report of `sprawl run`.
#include "cli/report.hpp"

#include <cstdio>

namespace sprawling::cli {

namespace {
constexpr std::string_view kDeadlineMessage = "deadline exceeded";
}

void print(std::FILE* stream, std::string_view text) { std::fwrite(text.data(), 1, text.size(), stream); }

int exit_status(runtime::ErrorCode code) {
  switch (code) {
    case runtime::ErrorCode::ToolUnavailable: return status::kToolUnavailable;
    case runtime::ErrorCode::SandboxDenied: return status::kDenied;
    case runtime::ErrorCode::SandboxHost: return status::kHostFault;
    case runtime::ErrorCode::InvalidModule: return status::kInvalidModule;
    case runtime::ErrorCode::InvalidJob: return status::kInvalidJob;
  }
  return status::kHostFault;
}

int exit_status(const std::expected<runtime::SandboxOutcome, runtime::AxError>& result) {
  if (!result) return exit_status(result.error().code);
  struct Visitor {
    int operator()(const runtime::Success&) const { return 0; }
    int operator()(const runtime::Failure& f) const { return static_cast<int>(f.code); }
    int operator()(const runtime::FuelExhausted&) const { return status::kFuelExhausted; }
    int operator()(const runtime::Trap& t) const {
      return t.message.starts_with(kDeadlineMessage) ? status::kDeadline : status::kTrap;
    }
  };
  return std::visit(Visitor{}, result->exit);
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string json_report(const std::expected<runtime::SandboxOutcome, runtime::AxError>& result) {
  std::string out = "{";
  if (!result) {
    const auto& e = result.error();
    out += "\"exit\":\"error\",\"error\":{\"code\":" + json_string(runtime::name(e.code)) +
           ",\"message\":" + json_string(e.message);
    if (e.alternative) out += ",\"alternative\":" + json_string(*e.alternative);
    if (!e.detail.empty()) {
      out += ",\"detail\":{";
      bool first = true;
      for (const auto& [k, v] : e.detail) {
        if (!first) out += ',';
        first = false;
        out += json_string(k) + ":" + json_string(v);
      }
      out += "}";
    }
    out += "},\"status\":" + std::to_string(exit_status(result)) + "}\n";
    return out;
  }
  struct Visitor {
    std::string operator()(const runtime::Success&) const { return "\"exit\":\"success\",\"code\":0"; }
    std::string operator()(const runtime::Failure& f) const {
      return "\"exit\":\"failure\",\"code\":" + std::to_string(f.code);
    }
    std::string operator()(const runtime::FuelExhausted&) const { return "\"exit\":\"fuel_exhausted\""; }
    std::string operator()(const runtime::Trap& t) const {
      return std::string("\"exit\":") + (t.message.starts_with(kDeadlineMessage) ? "\"deadline\"" : "\"trap\"") +
             ",\"trap\":" + json_string(t.message);
    }
  };
  out += std::visit(Visitor{}, result->exit);
  out += ",\"status\":" + std::to_string(exit_status(result));
  out += ",\"stdout_bytes\":" + std::to_string(result->stdout_bytes.size());
  out += ",\"stderr_bytes\":" + std::to_string(result->stderr_bytes.size());
  if (result->stats) {
    const auto& s = *result->stats;
    out += ",\"fuel_consumed\":" + std::to_string(s.fuel_consumed);
    out += ",\"wall_time_ns\":" + std::to_string(s.wall_time.count());
    out += ",\"peak_memory_bytes\":" + std::to_string(s.peak_memory_bytes);
    out += std::string(",\"stdout_truncated\":") + (s.stdout_truncated ? "true" : "false");
    out += std::string(",\"stderr_truncated\":") + (s.stderr_truncated ? "true" : "false");
    out += ",\"disk_write_bytes\":" + std::to_string(s.disk_write_bytes);
    out += std::string(",\"from_snapshot\":") + (s.from_snapshot ? "true" : "false");  // [snapshots]
  }
  out += "}\n";
  return out;
}

}  // namespace sprawling::cli
