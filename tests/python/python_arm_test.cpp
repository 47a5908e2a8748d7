// Integration tests of the python arm: CPython for WASI (scripts/build-python-wasi) run through
// WasmSandbox, its standard library mounted read-only at /usr/local/lib.
#include <sprawling/runtime/wasm_sandbox.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <expected>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include <unistd.h>

#include "tests/python/python_support.hpp"

namespace sprawling::runtime {
namespace {

using python_test::kPlentyOfFuel;
using python_test::kStdlibGuestPath;
using python_test::read_file;
using python_test::report;
using python_test::TempDir;
using python_test::text;
using python_test::write_file;
namespace fs = std::filesystem;

// Every test runs twice: cold (`_start`) and from a snapshot of the initialised interpreter
// (`wizer.initialize` once, `wizer.resume` per job; docs/python.md): same outputs, same endings.
class PythonArm : public python_test::WithPythonArtifact<::testing::TestWithParam<bool>> {
 protected:
  // python3.11 ARGS… with the standard library mounted read-only, plus `mounts`.
  [[nodiscard]] SandboxJob python_job(std::vector<std::string> args, const std::vector<Mount>& mounts = {},
                                      Fuel fuel = kPlentyOfFuel) const {
    SandboxJob job;
    job.wasm = artifact_.wasm;
    job.argv = {"python3.11"};
    job.argv.insert(job.argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
    job.mounts = {Mount{.host = artifact_.lib, .guest = std::string(kStdlibGuestPath), .writable = false}};
    job.mounts.insert(job.mounts.end(), mounts.begin(), mounts.end());
    job.fuel = fuel;
    job.snapshot = SnapshotPolicy{.enabled = GetParam(), .init_mounts = 1};
    return job;
  }

  // Runs `python3.11 -c script` in a sandbox built from `config`; a host error fails the test.
  [[nodiscard]] SandboxOutcome run_script(const std::string& script, const std::vector<Mount>& mounts = {},
                                          Fuel fuel = kPlentyOfFuel, SandboxConfig config = {}) const {
    WasmSandbox sandbox(std::move(config));
    auto outcome = sandbox.run(python_job({"-c", script}, mounts, fuel));
    EXPECT_TRUE(outcome.has_value()) << (outcome ? std::string() : outcome.error().to_string());
    if (!outcome)
      return SandboxOutcome{.stdout_bytes = {}, .stderr_bytes = {}, .exit = Trap{"host error"}, .stats = {}};
    // The snapshot is really used when asked for (a failed init would silently start cold).
    EXPECT_EQ(outcome->stats.has_value() && outcome->stats->from_snapshot, GetParam());
    return std::move(*outcome);
  }

};

TEST_P(PythonArm, PrintsTheSumOfARange) {
  const auto outcome = run_script("print(sum(range(10)))");
  EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "45\n") << report(outcome);
  EXPECT_EQ(text(outcome.stderr_bytes), "");
  ASSERT_TRUE(outcome.stats.has_value());
  EXPECT_GT(outcome.stats->fuel_consumed, 0U);
}

TEST_P(PythonArm, ImportsJsonReCollectionsAndPathlib) {
  const auto outcome = run_script(R"py(
import collections, json, pathlib, re
data = json.loads('{"b": [1, 2, 3], "a": "x"}')
counts = collections.Counter(re.findall(r"[a-z]+", "the cat and the hat"))
p = pathlib.PurePosixPath("/data/dir/file.txt")
print(json.dumps(data, sort_keys=True), counts.most_common(1), p.suffix, p.parent.name)
print(pathlib.Path("/usr/local/lib/python3.11/json/__init__.py").is_file())
)py");
  EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "{\"a\": \"x\", \"b\": [1, 2, 3]} [('the', 2)] .txt dir\nTrue\n")
      << report(outcome);
}

TEST_P(PythonArm, StdinReachesTheScript) {
  WasmSandbox sandbox;
  auto job = python_job({"-c", "import sys; print(sys.stdin.read().upper(), end='')"});
  const std::string input = "through stdin\n";
  job.stdin_bytes.assign(input.begin(), input.end());
  const auto outcome = sandbox.run(job);
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << report(*outcome);
  EXPECT_EQ(text(outcome->stdout_bytes), "THROUGH STDIN\n") << report(*outcome);
}

TEST_P(PythonArm, RunsAScriptFileFromAMount) {
  TempDir src;
  ASSERT_FALSE(src.path().empty());
  write_file(src.path() / "main.py", "import sys\nprint('argv', sys.argv[1:])\n");
  WasmSandbox sandbox;
  const auto outcome = sandbox.run(
      python_job({"/src/main.py", "one", "two"}, {Mount{.host = src.path(), .guest = "/src", .writable = false}}));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().to_string();
  EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << report(*outcome);
  EXPECT_EQ(text(outcome->stdout_bytes), "argv ['one', 'two']\n") << report(*outcome);
}

TEST_P(PythonArm, ReadsAFileFromAReadOnlyMount) {
  TempDir data;
  ASSERT_FALSE(data.path().empty());
  write_file(data.path() / "input.txt", "hello from the host\n");
  const auto outcome = run_script("print(open('/data/input.txt').read(), end='')",
                                  {Mount{.host = data.path(), .guest = "/data", .writable = false}});
  EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "hello from the host\n") << report(outcome);
}

TEST_P(PythonArm, WritingToAReadOnlyMountIsAPermissionError) {
  TempDir data;
  ASSERT_FALSE(data.path().empty());
  write_file(data.path() / "input.txt", "original\n");
  // Creating a new file is refused too; then the overwrite is left uncaught, as a script would.
  const auto outcome = run_script(R"py(
try:
    open("/data/new.txt", "x")
except PermissionError:
    print("create: PermissionError")
open("/data/input.txt", "w").write("overwritten")
print("not reached")
)py",
                                  {Mount{.host = data.path(), .guest = "/data", .writable = false}});
  EXPECT_EQ(outcome.exit, SandboxExit{Failure{1}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "create: PermissionError\n") << report(outcome);
  EXPECT_NE(text(outcome.stderr_bytes).find("PermissionError"), std::string::npos) << report(outcome);
  EXPECT_EQ(read_file(data.path() / "input.txt"), "original\n");
  EXPECT_FALSE(fs::exists(data.path() / "new.txt"));
}

TEST_P(PythonArm, WritingToAWritableMountReachesTheHost) {
  TempDir out;
  ASSERT_FALSE(out.path().empty());
  const auto outcome = run_script(R"py(
import os
os.mkdir("/out/sub")
with open("/out/sub/result.txt", "w") as f:
    f.write("written by the guest\n")
print(sorted(os.listdir("/out")))
)py",
                                  {Mount{.host = out.path(), .guest = "/out", .writable = true}});
  EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "['sub']\n") << report(outcome);
  EXPECT_EQ(read_file(out.path() / "sub" / "result.txt"), "written by the guest\n");
}

TEST_P(PythonArm, FilesOutsideTheMountsCannotBeOpened) {
  const auto outcome = run_script(R"py(
try:
    data = open("/etc/passwd").read()
except (FileNotFoundError, PermissionError) as e:
    print(type(e).__name__)
else:
    print("read", len(data), "bytes")
)py");
  EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << report(outcome);
  const std::string said = text(outcome.stdout_bytes);
  EXPECT_TRUE(said == "FileNotFoundError\n" || said == "PermissionError\n") << report(outcome);
}

TEST_P(PythonArm, SocketsCannotConnect) {
  // 192.0.2.1 (TEST-NET-1): no name lookup involved, and nothing would answer anyway.
  const auto outcome = run_script(R"py(
import socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=1)
except Exception as e:
    print("refused", type(e).__name__)
else:
    print("connected")
)py");
  EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes).rfind("refused ", 0), 0U) << report(outcome);
}

TEST_P(PythonArm, AnEndlessLoopRunsOutOfFuel) {
  // The budget is what start-up costs plus a margin, measured: `-c pass` fits in it, so the
  // exhaustion below is the loop's, not a budget too small to start the interpreter.
  const auto baseline = run_script("pass");
  ASSERT_EQ(baseline.exit, SandboxExit{Success{}}) << report(baseline);
  ASSERT_TRUE(baseline.stats.has_value());
  const Fuel budget{baseline.stats->fuel_consumed + baseline.stats->fuel_consumed / 2 + 1'000'000};

  const auto fits = run_script("pass", {}, budget);
  EXPECT_EQ(fits.exit, SandboxExit{Success{}}) << report(fits);

  const auto looping = run_script("while True: pass", {}, budget);
  EXPECT_EQ(looping.exit, SandboxExit{FuelExhausted{}}) << report(looping);
  ASSERT_TRUE(looping.stats.has_value());
  EXPECT_GE(looping.stats->fuel_consumed, baseline.stats->fuel_consumed);
}

TEST_P(PythonArm, ATwoGigabyteAllocationAgainstA256MegabyteCapIsAMemoryError) {
  constexpr std::uint64_t kCap = std::uint64_t{256} << 20;
  SandboxConfig capped;
  capped.max_memory_bytes = kCap;
  const auto outcome = run_script("b = bytearray(2_000_000_000)\nprint('not reached')", {}, kPlentyOfFuel, capped);
  EXPECT_EQ(outcome.exit, SandboxExit{Failure{1}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "") << report(outcome);
  EXPECT_NE(text(outcome.stderr_bytes).find("MemoryError"), std::string::npos) << report(outcome);
  ASSERT_TRUE(outcome.stats.has_value());
  EXPECT_LE(outcome.stats->peak_memory_bytes, kCap);
}

TEST_P(PythonArm, AnAllocationWithinTheCapSucceeds) {
  // The pair of the test above: the cap refuses what exceeds it, not allocation as such.
  SandboxConfig capped;
  capped.max_memory_bytes = std::uint64_t{256} << 20;
  const auto outcome = run_script("b = bytearray(100_000_000)\nprint(len(b))", {}, kPlentyOfFuel, capped);
  EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "100000000\n") << report(outcome);
  ASSERT_TRUE(outcome.stats.has_value());
  EXPECT_GE(outcome.stats->peak_memory_bytes, 100'000'000U);
}

TEST_P(PythonArm, SysExitThreeIsFailureThree) {
  const auto outcome = run_script("import sys; sys.exit(3)");
  EXPECT_EQ(outcome.exit, SandboxExit{Failure{3}}) << report(outcome);
}

TEST_P(PythonArm, AnUncaughtExceptionIsFailureOne) {
  const auto outcome = run_script("raise ValueError('boom')");
  EXPECT_EQ(outcome.exit, SandboxExit{Failure{1}}) << report(outcome);
  EXPECT_NE(text(outcome.stderr_bytes).find("ValueError: boom"), std::string::npos) << report(outcome);
}

// How a job ends: a job from the snapshot skips CPython's full teardown (docs/python.md), yet
// runs what a job can observe of it as a cold one does — atexit callbacks (also after sys.exit
// and an uncaught exception, same statuses), __del__ of objects its modules hold, files it left
// open flushed (one hung on a preimported module too), stdout without a final newline flushed.
TEST_P(PythonArm, AtexitFinalisersAndUnclosedFilesRunAtTheEnd) {
  TempDir out;
  ASSERT_FALSE(out.path().empty());
  const std::vector<Mount> mounts{Mount{.host = out.path(), .guest = "/out", .writable = true}};
  auto outcome = run_script(R"py(
import atexit, json, sys
atexit.register(print, "bye")
class Noisy:
    def __del__(self):
        print("del ran")
noisy = Noisy()
f = open("/out/main.txt", "w")
f.write("left open in __main__\n")
json.hung = open("/out/hung.txt", "w")
json.hung.write("hung on a preimported module\n")
sys.stdout.write("no newline")
)py",
                            mounts);
  EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "no newlinebye\ndel ran\n") << report(outcome);
  EXPECT_EQ(read_file(out.path() / "main.txt"), "left open in __main__\n");
  EXPECT_EQ(read_file(out.path() / "hung.txt"), "hung on a preimported module\n");

  outcome = run_script("import atexit, sys; atexit.register(print, 'bye'); sys.exit(3)");
  EXPECT_EQ(outcome.exit, SandboxExit{Failure{3}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "bye\n") << report(outcome);
  outcome = run_script("import atexit; atexit.register(print, 'bye'); 1/0");
  EXPECT_EQ(outcome.exit, SandboxExit{Failure{1}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "bye\n") << report(outcome);
  EXPECT_NE(text(outcome.stderr_bytes).find("ZeroDivisionError"), std::string::npos) << report(outcome);
}

TEST_P(PythonArm, DeepRecursionIsARecursionErrorNotATrap) {
  const auto outcome = run_script(R"py(
def down(n):
    return down(n + 1)
try:
    down(0)
except RecursionError:
    print("RecursionError")
)py");
  EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << report(outcome);
  EXPECT_EQ(text(outcome.stdout_bytes), "RecursionError\n") << report(outcome);
}

}  // namespace
INSTANTIATE_TEST_SUITE_P(Start, PythonArm, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "FromSnapshot" : "Cold"; });

}  // namespace sprawling::runtime
