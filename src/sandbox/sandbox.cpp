// AbsentSandbox: the product sandbox of builds without the engine.
#include <sprawling/runtime/sandbox.hpp>

namespace sprawling::runtime {

AbsentSandbox::AbsentSandbox(std::string alternative) : alternative_(std::move(alternative)) {}

std::expected<SandboxOutcome, AxError> AbsentSandbox::run(const SandboxJob& job) {
  return std::unexpected(AxError{
      .code = ErrorCode::ToolUnavailable,
      .message = "this build of sprawling-runtime has no WebAssembly engine; the job '" + job.wasm.string() +
                 "' was not run",
      .alternative = alternative_,
      .detail = {{"wasm", job.wasm.string()}},
  });
}

}  // namespace sprawling::runtime
