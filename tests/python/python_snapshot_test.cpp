// Jobs started from the interpreter snapshot (python/wasi_snapshot_main.c through WasmSandbox)
// stay independent: fresh randomness, their own argv/env/mounts, nothing one job changes is
// visible to the next, no job data or host secret in the image, and the same answers as cold.
#include <sprawling/runtime/wasm_sandbox.hpp>

#include <gtest/gtest.h>

#include "sandbox/engine_snapshot.hpp"
#include "tests/python/python_support.hpp"

#include <cstdlib>
#include <thread>

namespace sprawling::runtime::python_test {
namespace {

class PythonSnapshot : public WithPythonArtifact<::testing::Test> {
 protected:
  [[nodiscard]] SandboxJob job(std::vector<std::string> args, bool snapshot = true) const {
    SandboxJob j;
    j.wasm = artifact_.wasm;
    j.argv = {"python3.11"};
    j.argv.insert(j.argv.end(), args.begin(), args.end());
    j.mounts = {Mount{.host = artifact_.lib, .guest = std::string(kStdlibGuestPath), .writable = false}};
    j.fuel = kPlentyOfFuel;
    j.snapshot = SnapshotPolicy{.enabled = snapshot, .init_mounts = 1};
    return j;
  }

  // Runs `job`; checks it ended well and started as asked.
  [[nodiscard]] std::string run_ok(const SandboxJob& j, WasmSandbox& sandbox) const {
    auto outcome = sandbox.run(j);
    EXPECT_TRUE(outcome.has_value()) << (outcome ? "" : outcome.error().to_string());
    if (!outcome) return {};
    EXPECT_EQ(outcome->exit, SandboxExit{Success{}}) << report(*outcome);
    EXPECT_EQ(outcome->stats->from_snapshot, j.snapshot.enabled) << report(*outcome);
    return text(outcome->stdout_bytes);
  }
  [[nodiscard]] std::string run_ok(const SandboxJob& j) const {
    WasmSandbox sandbox;
    return run_ok(j, sandbox);
  }
};

TEST_F(PythonSnapshot, EveryJobHasFreshRandomness) {
  const std::string script = "import random, os; print(random.random(), random.getrandbits(64), os.urandom(8).hex())";
  const auto a = run_ok(job({"-c", script}));
  const auto b = run_ok(job({"-c", script}));
  ASSERT_FALSE(a.empty());
  EXPECT_NE(a, b);
  // Field by field: random's state was reseeded, not only os.urandom.
  EXPECT_NE(a.substr(0, a.find(' ')), b.substr(0, b.find(' ')));
}

TEST_F(PythonSnapshot, NothingAJobChangesReachesTheNext) {
  TempDir work;
  ASSERT_FALSE(work.path().empty());
  auto a = job({"-c", R"py(
import builtins, json, os, sys, random
builtins.LEAK = 1
json.dumps = None
os.environ['LEAKED'] = '1'
sys.path.append('/leak')
sys.modules['leaky_module'] = object()
os.chdir('/work')
kept = open('/work/kept.txt', 'w'); kept.write('x')
kept_read = open('/usr/local/lib/python3.11/os.py')
random.seed(1234)
print('a done')
)py"});
  a.mounts.push_back(Mount{.host = work.path(), .guest = "/work", .writable = true});
  EXPECT_EQ(run_ok(a), "a done\n");

  const std::string probe = R"py(
import builtins, json, os, sys, random
open_fds = []
for fd in range(3, 32):
    try:
        os.fstat(fd); open_fds.append(fd)
    except OSError:
        pass
print(hasattr(builtins, 'LEAK'), json.dumps is None, 'LEAKED' in os.environ, '/leak' in sys.path,
      'leaky_module' in sys.modules, os.getcwd(), open_fds, os.path.exists('/work'),
      random.random() == random.Random(1234).random())
)py";
  const std::string expected = "False False False False False / [3] False False\n";
  EXPECT_EQ(run_ok(job({"-c", probe})), expected);
  EXPECT_EQ(run_ok(job({"-c", probe}, /*snapshot=*/false)), expected);
}

TEST_F(PythonSnapshot, ArgvEnvAndPathsAreExactlyTheJobsAndMatchACold) {
  TempDir src;
  ASSERT_FALSE(src.path().empty());
  write_file(src.path() / "main.py",
             "import os, sys\nprint(sys.argv, sys.orig_argv, sys.path[0], dict(os.environ), __name__, __file__)\n");
  const std::string cmd = "import os, sys; print(sys.argv, sys.orig_argv, repr(sys.path[0]), dict(os.environ), sys.flags.isolated)";
  for (const auto& args : std::vector<std::vector<std::string>>{{"-c", cmd, "one", "two"}, {"/src/main.py", "x", "--y"}}) {
    std::string outputs[2];
    for (const bool snapshot : {false, true}) {
      auto j = job(args, snapshot);
      j.env = {{"FOO", "bar"}, {"HOME", "/home/guest"}};
      j.mounts.push_back(Mount{.host = src.path(), .guest = "/src", .writable = false});
      outputs[snapshot ? 1 : 0] = run_ok(j);
    }
    EXPECT_NE(outputs[1].find("'FOO': 'bar'"), std::string::npos) << outputs[1];
    EXPECT_EQ(outputs[1], outputs[0]) << "snapshot and cold jobs disagree for " << args[0];
  }
}

TEST_F(PythonSnapshot, ModuleAndStdinFormsMatchACold) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"-m", "json.tool"}, {}, {"-"}}) {
    std::string outputs[2];
    for (const bool snapshot : {false, true}) {
      auto j = job(args, snapshot);
      const std::string input = args.empty() || args[0] == "-" ? "import sys; print(sys.argv, 6 * 7)\n" : "{\"b\": [1, 2]}";
      j.stdin_bytes.assign(input.begin(), input.end());
      outputs[snapshot ? 1 : 0] = run_ok(j);
    }
    EXPECT_FALSE(outputs[0].empty());
    EXPECT_EQ(outputs[1], outputs[0]);
  }
}

TEST_F(PythonSnapshot, AnInterpreterOptionIsRefusedClearlyNotMisrun) {
  WasmSandbox sandbox;
  auto outcome = sandbox.run(job({"-X", "dev", "-c", "print(1)"}));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->exit, SandboxExit{Failure{2}}) << report(*outcome);
  EXPECT_NE(text(outcome->stderr_bytes).find("'-X' cannot be honoured by a job started from a snapshot"), std::string::npos)
      << report(*outcome);
  auto env = job({"-c", "print(1)"});
  env.env = {{"PYTHONHASHSEED", "0"}};
  outcome = sandbox.run(env);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->exit, SandboxExit{Failure{2}}) << report(*outcome);
  EXPECT_NE(text(outcome->stderr_bytes).find("PYTHONHASHSEED is read at initialisation"), std::string::npos);
}

TEST_F(PythonSnapshot, NoJobDataOrHostSecretIsInTheImage) {
  engine::clear_snapshot_cache();  // the snapshot is built by the first job below
  TempDir snaps;
  TempDir data;
  ASSERT_FALSE(snaps.path().empty());
  ASSERT_FALSE(data.path().empty());
  ::setenv("SPRAWLING_HOST_CANARY", "host-canary-7f3a9", 1);
  write_file(data.path() / "secret.txt", "file-canary-51c2e");
  auto j = job({"-c", "import sys; print(open('/mnt-canary-3b7/secret.txt').read(), sys.stdin.read(), sys.argv[1])", "argv-canary-0d8b"});
  j.env = {{"ENV_CANARY", "env-canary-9e44"}};
  j.stdin_bytes = {'s', 't', 'd', 'i', 'n', '-', 'c', 'a', 'n', 'a', 'r', 'y'};
  j.mounts.push_back(Mount{.host = data.path(), .guest = "/mnt-canary-3b7", .writable = false});
  WasmSandbox sandbox(SandboxConfig{.snapshot_dir = snaps.path()});
  EXPECT_EQ(run_ok(j, sandbox), "file-canary-51c2e stdin-canary argv-canary-0d8b\n");
  ::unsetenv("SPRAWLING_HOST_CANARY");
  // The snapshot file, and the stamp beside it when python.wasm is settled (docs/snapshots.md).
  std::vector<fs::path> files;
  std::size_t snapshots = 0;
  for (const auto& e : fs::directory_iterator(snaps.path())) {
    files.push_back(e.path());
    if (e.path().extension() == ".snap") {
      ++snapshots;
      EXPECT_GT(fs::file_size(e.path()), std::uintmax_t{1} << 20);
    } else {
      EXPECT_EQ(e.path().extension(), ".stamp") << e.path();
    }
  }
  ASSERT_EQ(snapshots, 1u);
  for (const auto& file : files) {
    const std::string bytes = read_file(file);
    for (const char* canary : {"host-canary", "file-canary", "stdin-canary", "argv-canary", "env-canary", "mnt-canary"}) {
      EXPECT_EQ(bytes.find(canary), std::string::npos) << canary << " is in " << file;
    }
  }
  engine::clear_snapshot_cache();
}

// [start-up] The training job (SnapshotPolicy::training_args, as `sprawl python` sets it) runs
// from the snapshot after it is captured: what it changes is in no job and not in the file.
TEST_F(PythonSnapshot, TheTrainingJobLeavesNothingForTheJobs) {
  engine::clear_snapshot_cache();
  TempDir snaps;
  ASSERT_FALSE(snaps.path().empty());
  auto j = job({"-c", "import builtins, os, sys; print(getattr(builtins, 'TRAINED', None), sys.argv[1:], "
                      "os.environ.get('TRAINING'))",
                "x"});
  j.snapshot.training_args = {"-c", "import builtins, os; builtins.TRAINED = 1; os.environ['TRAINING'] = 'y'; "
                                    "print('training-canary-4c1e')"};
  WasmSandbox sandbox(SandboxConfig{.snapshot_dir = snaps.path()});
  EXPECT_EQ(run_ok(j, sandbox), "None ['x'] None\n");
  EXPECT_EQ(run_ok(j, sandbox), "None ['x'] None\n");
  engine::clear_snapshot_cache();  // the next job starts from the file
  EXPECT_EQ(run_ok(j, sandbox), "None ['x'] None\n");
  for (const auto& e : fs::directory_iterator(snaps.path())) {
    EXPECT_EQ(read_file(e.path()).find("training-canary"), std::string::npos) << e.path();
  }
  engine::clear_snapshot_cache();
}

TEST_F(PythonSnapshot, TheHashSecretIsSharedWithinASnapshotAndNewAfterARebuild) {
  const std::string script = "print(hash('sprawling'))";
  engine::clear_snapshot_cache();
  const auto first = run_ok(job({"-c", script}));
  EXPECT_EQ(run_ok(job({"-c", script})), first);
  engine::clear_snapshot_cache();
  EXPECT_NE(run_ok(job({"-c", script})), first) << "a rebuilt snapshot must draw a new secret";
  // Cold jobs draw one each.
  EXPECT_NE(run_ok(job({"-c", script}, false)), run_ok(job({"-c", script}, false)));
}

TEST_F(PythonSnapshot, ConcurrentJobsFromOneSnapshotStayApart) {
  (void)run_ok(job({"-c", "pass"}));  // the snapshot exists before the threads start
  constexpr int kThreads = 2;
  constexpr int kJobs = 4;
  std::vector<std::string> seen[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      WasmSandbox sandbox;
      for (int i = 0; i < kJobs; ++i) {
        const std::string tag = std::to_string(t) + "-" + std::to_string(i);
        auto outcome = sandbox.run(job({"-c", "import sys, builtins\nprint(getattr(builtins, 'TAG', None), sys.argv[1])\n"
                                              "builtins.TAG = sys.argv[1]",
                                        tag}));
        seen[t].push_back(outcome ? text(outcome->stdout_bytes) : outcome.error().to_string());
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kJobs; ++i) {
      EXPECT_EQ(seen[t][static_cast<std::size_t>(i)], "None " + std::to_string(t) + "-" + std::to_string(i) + "\n");
    }
  }
}

}  // namespace
}  // namespace sprawling::runtime::python_test
