// assert_sandbox_conformance passes on a well-behaved sandbox and names the rule a bad one breaks.
#include <sprawling/runtime/conformance.hpp>
#include <sprawling/runtime/testing.hpp>

#include <gtest/gtest.h>

#include <string>

namespace sprawling::runtime {
namespace {

const SandboxJob kJob{.wasm = "guest.wasm", .argv = {"guest"}, .env = {}, .stdin_bytes = {'h', 'i'}, .mounts = {},
                      .fuel = Fuel{1'000'000}};

std::string conformance_failure(Sandbox& sandbox) {
  try {
    assert_sandbox_conformance(sandbox, kJob);
  } catch (const ConformanceError& e) {
    return e.what();
  }
  return {};
}

TEST(Conformance, PassesOnEcho) {
  EchoSandbox sandbox;
  EXPECT_NO_THROW(assert_sandbox_conformance(sandbox, kJob));
  EXPECT_EQ(sandbox.jobs().size(), 2U);
}

TEST(Conformance, FailsOnAOneEntryFaultSandboxBecauseTheSecondCallIsPoisoned) {
  FaultSandbox sandbox({Success{}});
  const std::string message = conformance_failure(sandbox);
  ASSERT_FALSE(message.empty()) << "a one-entry FaultSandbox must fail the check";
  EXPECT_NE(message.find("second call returned an error"), std::string::npos) << message;
  EXPECT_NE(message.find("E_SANDBOX_HOST"), std::string::npos) << message;
}

TEST(Conformance, FailsOnAnIllegalFailureCode) {
  FaultSandbox sandbox({Failure{0}, Failure{0}});
  const std::string message = conformance_failure(sandbox);
  EXPECT_NE(message.find("must be in 1..125"), std::string::npos) << message;
}

TEST(Conformance, FailsOnAFailureCodeAbove125) {
  FaultSandbox sandbox({Failure{126}, Failure{126}});
  EXPECT_NE(conformance_failure(sandbox).find("must be in 1..125"), std::string::npos);
}

TEST(Conformance, FailsOnATrapWithoutAMessage) {
  FaultSandbox sandbox({Trap{""}, Trap{""}});
  EXPECT_NE(conformance_failure(sandbox).find("empty message"), std::string::npos);
}

TEST(Conformance, FailsWhenTheSecondRunEndsDifferently) {
  FaultSandbox sandbox({Success{}, FuelExhausted{}});
  EXPECT_NE(conformance_failure(sandbox).find("ended differently"), std::string::npos);
}

TEST(Conformance, PassesOnMatchingLegalFaults) {
  FaultSandbox sandbox({Failure{7}, Failure{7}});
  EXPECT_NO_THROW(assert_sandbox_conformance(sandbox, kJob));
}

}  // namespace
}  // namespace sprawling::runtime
