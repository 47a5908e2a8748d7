// WasmSandbox in several threads: the compiled-module cache is shared safely and many jobs in
// a row leave the sandbox as they found it.
#include "tests/engine/guest.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace sprawling::runtime {
namespace {

TEST(ModuleCache, TwoSandboxesInTwoThreadsShareTheCompiledModule) {
  test::TempDir dir;
  const auto wasm = dir.write("ok.wat", test::kOkGuest);
  constexpr int kJobs = 200;
  int successes[2] = {0, 0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      WasmSandbox sandbox;
      for (int i = 0; i < kJobs; ++i) {
        auto outcome = sandbox.run(test::job_for(wasm));
        if (outcome && outcome->exit == SandboxExit{Success{}} && test::text(outcome->stdout_bytes) == "ok\n") {
          ++successes[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(successes[0], kJobs);
  EXPECT_EQ(successes[1], kJobs);
}

TEST(ModuleCache, TheCacheIsKeyedByContentNotByPath) {
  test::TempDir dir;
  WasmSandbox sandbox;
  const auto path = dir.write("guest.wat", test::kOkGuest);
  auto first = sandbox.run(test::job_for(path));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(test::text(first->stdout_bytes), "ok\n");
  // Same path, new content: the new module must run, not the cached one.
  dir.write("guest.wat", R"((module
    (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
    (memory (export "memory") 1)
    (func (export "_start") (call $proc_exit (i32.const 9)))))");
  auto second = sandbox.run(test::job_for(path));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->exit, SandboxExit{Failure{9}});
}

}  // namespace
}  // namespace sprawling::runtime
