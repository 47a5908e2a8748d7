// The seam's test doubles, for tests of code that takes a Sandbox: EchoSandbox (pass-through,
// records the jobs) and FaultSandbox (scripted exits, then errors). They never run a guest.
// Declared here, in a header of their own that tests include; sandbox.hpp (the seam) includes it
// at its end, as the contract's layout keeps the doubles with the seam.
#pragma once

#include <sprawling/runtime/sandbox.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <expected>
#include <vector>

namespace sprawling::runtime {

// Pass-through double: stdout = the job's stdin_bytes (its stdin_fd is not read), then the output
// scripted beforehand; exit Success unless scripted otherwise. Records every job, in order.
class EchoSandbox final : public Sandbox {
 public:
  EchoSandbox() = default;
  std::expected<SandboxOutcome, AxError> run(const SandboxJob& job) override;

  // Appended to stdout / stderr of every following outcome, after the echoed stdin.
  void script_stdout(std::vector<std::uint8_t> bytes);
  void script_stderr(std::vector<std::uint8_t> bytes);
  void script_exit(SandboxExit exit);
  [[nodiscard]] const std::vector<SandboxJob>& jobs() const noexcept { return jobs_; }

 private:
  std::vector<std::uint8_t> scripted_stdout_;
  std::vector<std::uint8_t> scripted_stderr_;
  SandboxExit exit_ = Success{};
  std::vector<SandboxJob> jobs_;
};

// Fault double: call n returns the n-th scripted exit (with empty output); once the
// script is used up every further call is an E_SANDBOX_HOST error, never an invented outcome.
class FaultSandbox final : public Sandbox {
 public:
  explicit FaultSandbox(std::vector<SandboxExit> script);
  std::expected<SandboxOutcome, AxError> run(const SandboxJob& job) override;
  [[nodiscard]] std::size_t remaining() const noexcept { return script_.size(); }

 private:
  std::deque<SandboxExit> script_;
  std::size_t calls_ = 0;
};

}  // namespace sprawling::runtime
