// The seam's test doubles (testing.hpp): EchoSandbox and FaultSandbox.
#include <sprawling/runtime/testing.hpp>

#include <string>
#include <utility>

namespace sprawling::runtime {

void EchoSandbox::script_stdout(std::vector<std::uint8_t> bytes) {
  scripted_stdout_.insert(scripted_stdout_.end(), bytes.begin(), bytes.end());
}

void EchoSandbox::script_stderr(std::vector<std::uint8_t> bytes) {
  scripted_stderr_.insert(scripted_stderr_.end(), bytes.begin(), bytes.end());
}

void EchoSandbox::script_exit(SandboxExit exit) { exit_ = std::move(exit); }

std::expected<SandboxOutcome, AxError> EchoSandbox::run(const SandboxJob& job) {
  jobs_.push_back(job);
  SandboxOutcome outcome{.stdout_bytes = job.stdin_bytes, .stderr_bytes = scripted_stderr_, .exit = exit_, .stats = {}};
  outcome.stdout_bytes.insert(outcome.stdout_bytes.end(), scripted_stdout_.begin(), scripted_stdout_.end());
  return outcome;
}

FaultSandbox::FaultSandbox(std::vector<SandboxExit> script) : script_(script.begin(), script.end()) {}

std::expected<SandboxOutcome, AxError> FaultSandbox::run(const SandboxJob& job) {
  ++calls_;
  if (script_.empty()) {
    return std::unexpected(AxError{
        .code = ErrorCode::SandboxHost,
        .message = "FaultSandbox script is used up (call " + std::to_string(calls_) + "); it does not invent outcomes",
        .alternative = std::nullopt,
        .detail = {{"call", std::to_string(calls_)}, {"wasm", job.wasm.string()}},
    });
  }
  SandboxOutcome outcome{.stdout_bytes = {}, .stderr_bytes = {}, .exit = std::move(script_.front()), .stats = {}};
  script_.pop_front();
  return outcome;
}

}  // namespace sprawling::runtime
