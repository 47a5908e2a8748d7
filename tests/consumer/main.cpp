// A consumer of the installed package: runs a job through the seam's Echo double and the product sandbox.
#include <sprawling/runtime/sandbox.hpp>
#include <sprawling/runtime/testing.hpp>

#include <cstdio>

int main() {
  using namespace sprawling::runtime;
  EchoSandbox echo;
  const SandboxJob job{.wasm = "none.wasm", .argv = {}, .env = {}, .stdin_bytes = {'o', 'k'}, .mounts = {},
                       .fuel = Fuel{1}};
  auto outcome = echo.run(job);
  if (!outcome || outcome->stdout_bytes != job.stdin_bytes) {
    std::puts("consumer: echo through the installed seam failed");
    return 1;
  }
  auto product = make_sandbox();
  std::printf("consumer: ok (engine %s)\n", engine_available() ? "built in" : "absent");
  return product ? 0 : 1;
}
