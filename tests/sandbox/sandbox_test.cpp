// The promises of the seam's engine-free implementations: AbsentSandbox, EchoSandbox, FaultSandbox.
#include <sprawling/runtime/sandbox.hpp>
#include <sprawling/runtime/testing.hpp>

#include <gtest/gtest.h>

namespace sprawling::runtime {
namespace {

SandboxJob job_with_stdin(std::vector<std::uint8_t> stdin_bytes) {
  return SandboxJob{.wasm = "guest.wasm",
                    .argv = {"guest", "--flag"},
                    .env = {{"K", "V"}},
                    .stdin_bytes = std::move(stdin_bytes),
                    .mounts = {Mount{.host = "/tmp", .guest = "/tmp", .writable = false}},
                    .fuel = Fuel{1000}};
}

std::vector<std::uint8_t> bytes(std::string_view s) { return {s.begin(), s.end()}; }

TEST(AbsentSandbox, RefusesEveryCallWithToolUnavailableAndTheAlternative) {
  AbsentSandbox sandbox("container");
  for (int i = 0; i < 3; ++i) {
    auto outcome = sandbox.run(job_with_stdin(bytes("x")));
    ASSERT_FALSE(outcome.has_value());
    EXPECT_EQ(outcome.error().code, ErrorCode::ToolUnavailable);
    ASSERT_TRUE(outcome.error().alternative.has_value());
    EXPECT_EQ(*outcome.error().alternative, "container");
  }
  EXPECT_EQ(sandbox.alternative(), "container");
}

TEST(EchoSandbox, EchoesStdinByteForByte) {
  EchoSandbox sandbox;
  auto outcome = sandbox.run(job_with_stdin(bytes("hello\n")));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->stdout_bytes, bytes("hello\n"));
  EXPECT_TRUE(outcome->stderr_bytes.empty());
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}});
  EXPECT_FALSE(outcome->stats.has_value());
}

TEST(EchoSandbox, EchoesBinaryStdinIncludingNulAndHighBytes) {
  std::vector<std::uint8_t> binary;
  for (int b = 0; b < 256; ++b) binary.push_back(static_cast<std::uint8_t>(b));
  binary.push_back(0);
  EchoSandbox sandbox;
  auto outcome = sandbox.run(job_with_stdin(binary));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->stdout_bytes, binary);
}

TEST(EchoSandbox, EmptyStdinGivesEmptyStdout) {
  EchoSandbox sandbox;
  auto outcome = sandbox.run(job_with_stdin({}));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_TRUE(outcome->stdout_bytes.empty());
}

TEST(EchoSandbox, ScriptedOutputFollowsTheEchoInScriptOrder) {
  EchoSandbox sandbox;
  sandbox.script_stdout(bytes("first;"));
  sandbox.script_stdout(bytes("second"));
  sandbox.script_stderr(bytes("warn"));
  auto outcome = sandbox.run(job_with_stdin(bytes("in:")));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->stdout_bytes, bytes("in:first;second"));
  EXPECT_EQ(outcome->stderr_bytes, bytes("warn"));
}

TEST(EchoSandbox, ScriptedExitReplacesSuccess) {
  EchoSandbox sandbox;
  sandbox.script_exit(Failure{3});
  auto outcome = sandbox.run(job_with_stdin({}));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->exit, SandboxExit{Failure{3}});
}

TEST(EchoSandbox, RecordsEveryJobInOrder) {
  EchoSandbox sandbox;
  const auto a = job_with_stdin(bytes("a"));
  auto b = job_with_stdin(bytes("b"));
  b.fuel = Fuel{7};
  b.argv.push_back("extra");
  ASSERT_TRUE(sandbox.run(a).has_value());
  ASSERT_TRUE(sandbox.run(b).has_value());
  ASSERT_EQ(sandbox.jobs().size(), 2U);
  EXPECT_EQ(sandbox.jobs()[0], a);
  EXPECT_EQ(sandbox.jobs()[1], b);
}

TEST(FaultSandbox, ReturnsTheScriptedExitsInOrder) {
  FaultSandbox sandbox({Failure{2}, FuelExhausted{}, Trap{"unreachable"}, Success{}});
  const std::vector<SandboxExit> expected{Failure{2}, FuelExhausted{}, Trap{"unreachable"}, Success{}};
  for (const auto& want : expected) {
    auto outcome = sandbox.run(job_with_stdin(bytes("ignored")));
    ASSERT_TRUE(outcome.has_value());
    EXPECT_EQ(outcome->exit, want);
    EXPECT_TRUE(outcome->stdout_bytes.empty());
  }
  EXPECT_EQ(sandbox.remaining(), 0U);
}

TEST(FaultSandbox, StopsWithAHostErrorOnceTheScriptIsUsedUp) {
  FaultSandbox sandbox({FuelExhausted{}});
  ASSERT_TRUE(sandbox.run(job_with_stdin({})).has_value());
  for (int i = 0; i < 3; ++i) {
    auto outcome = sandbox.run(job_with_stdin({}));
    ASSERT_FALSE(outcome.has_value());
    EXPECT_EQ(outcome.error().code, ErrorCode::SandboxHost);
  }
}

TEST(FaultSandbox, AnEmptyScriptNeverInventsAnOutcome) {
  FaultSandbox sandbox({});
  auto outcome = sandbox.run(job_with_stdin({}));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::SandboxHost);
}

}  // namespace
}  // namespace sprawling::runtime
