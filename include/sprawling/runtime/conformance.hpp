// assert_sandbox_conformance: a check any Sandbox implementation can be run through
// (built with SPRAWLING_CONFORMANCE).
#pragma once

#include <sprawling/runtime/sandbox.hpp>

#include <stdexcept>

namespace sprawling::runtime {

// Thrown by assert_sandbox_conformance; what() names the rule that was broken.
class ConformanceError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Runs `job` twice back to back on `sandbox`. Both calls must return an outcome (a sandbox
// poisoned by its first call fails), each outcome must have a legal shape (Failure.code in
// 1..125, Trap.message non-empty), and the second must end the same way as the first.
void assert_sandbox_conformance(Sandbox& sandbox, const SandboxJob& job);

}  // namespace sprawling::runtime
