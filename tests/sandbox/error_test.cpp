// The stable names of the public error codes.
#include <sprawling/runtime/error.hpp>

#include <gtest/gtest.h>

namespace sprawling::runtime {
namespace {

TEST(ErrorCode, NamesAreStable) {
  EXPECT_EQ(name(ErrorCode::ToolUnavailable), "E_TOOL_UNAVAILABLE");
  EXPECT_EQ(name(ErrorCode::SandboxDenied), "E_SANDBOX_DENIED");
  EXPECT_EQ(name(ErrorCode::SandboxHost), "E_SANDBOX_HOST");
  EXPECT_EQ(name(ErrorCode::InvalidModule), "E_INVALID_MODULE");
  EXPECT_EQ(name(ErrorCode::InvalidJob), "E_INVALID_JOB");
}

TEST(AxError, ToStringLeadsWithTheCode) {
  const AxError error{.code = ErrorCode::SandboxDenied, .message = "import x", .alternative = {}, .detail = {}};
  EXPECT_EQ(error.to_string().rfind("E_SANDBOX_DENIED: ", 0), 0U);
}

}  // namespace
}  // namespace sprawling::runtime
