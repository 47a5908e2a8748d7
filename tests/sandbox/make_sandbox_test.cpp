// make_sandbox gives this build's product sandbox: the Absent verdict without the engine.
#include <sprawling/runtime/sandbox.hpp>

#include <gtest/gtest.h>

namespace sprawling::runtime {
namespace {

#if !SPRAWLING_WITH_ENGINE
TEST(MakeSandbox, EngineOffBuildGivesTheAbsentVerdictWithTheConfiguredAlternative) {
  EXPECT_FALSE(engine_available());
  auto sandbox = make_sandbox(SandboxFactoryConfig{.alternative_arm = "python-container"});
  ASSERT_NE(sandbox, nullptr);
  auto outcome = sandbox->run(SandboxJob{.wasm = "x.wasm", .argv = {}, .env = {}, .stdin_bytes = {}, .mounts = {},
                                         .fuel = Fuel{10}});
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::ToolUnavailable);
  EXPECT_EQ(outcome.error().alternative, std::optional<std::string>("python-container"));
}
#else
TEST(MakeSandbox, EngineBuildReportsTheEngine) { EXPECT_TRUE(engine_available()); }
#endif

}  // namespace
}  // namespace sprawling::runtime
