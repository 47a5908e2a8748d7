// `sprawl python`: CPython built for WASI (scripts/build-python-wasi) run in the sandbox with
// its standard library mounted read-only at /usr/local/lib.
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/report.hpp"
#include "cli/run_job.hpp"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <vector>

#ifndef SPRAWLING_DEFAULT_ARTIFACTS_DIR
#error "SPRAWLING_DEFAULT_ARTIFACTS_DIR must be defined by the build"
#endif

namespace sprawling::cli {

namespace {

constexpr std::string_view kPythonHelp = R"(Usage: sprawl python [OPTIONS] [PYTHON-ARGS...]

Runs CPython 3.11 built for WASI in the sandbox: the standard library is mounted read-only at
/usr/local/lib, and the guest sees nothing else but what --dir grants. Examples:
  sprawl python -c 'print(1)'
  sprawl python --dir ./work::/work /work/script.py

Options: the long options of `sprawl run` (--dir, --env, --fuel, --max-memory-size, --timeout,
--hostcall-fuel, --tier, --cache, --tier-up, --stdin, --json), and --no-snapshot, before the Python arguments; the first
argument that is not one of them (-c, a script, -W …, -S, or anything after --) starts Python's
own. Exit statuses: as `sprawl run`.

Start-up snapshot: a job of the form `-c CMD`, `-m MOD`, `SCRIPT` or stdin (no other interpreter
option, no PYTHON* variable in --env) starts from a snapshot of an initialised interpreter
(standard library modules preimported; docs/python.md) instead of initialising CPython. The
snapshot is built by the first such job (with one training job run from it, whose output is
discarded, so that the file also carries the code jobs call first) and kept in SPRAWLING_SNAPSHOT_DIR, else
$XDG_CACHE_HOME/sprawling/snapshots, else ~/.cache/sprawling/snapshots (checksummed; a corrupt
file is rebuilt). A stamp beside it lets later runs skip reading, hashing and checksumming while
neither python.wasm nor the snapshot file has changed (any change, and they are read again). Its
fuel is not charged to the job. Every job still gets its own argv,
environment, mounts and randomness; all jobs of one snapshot share the str hash secret. The
snapshot file also tells later runs that this build validated python.wasm, which they then load
without validating it again; so a --dir that would let the guest write the snapshot folder is
refused (mount it read-only, or a narrower folder).
  --no-snapshot            initialise CPython in this job (as `python` does; no snapshot)

The interpreter is found through SPRAWLING_PYTHON_WASM (python.wasm) and SPRAWLING_PYTHON_LIB
(the folder holding python3.11/), or else in .artifacts/python-wasi/ of the source tree. When
it is absent the command says how to build it (scripts/build-python-wasi) and exits 127
(E_TOOL_UNAVAILABLE).
)";

std::filesystem::path from_env_or(const char* name, const std::filesystem::path& fallback) {
  if (const char* value = std::getenv(name); value != nullptr && *value != '\0') return value;
  return fallback;
}

// [start-up] What the snapshot's training job runs (SnapshotPolicy::training_args).
constexpr std::string_view kTrainingArgs[] = {"-c", "print(1, 'x', 2.5, [None], {'k': (True,)})"};

// [snapshots] Removes --no-snapshot from our options (those before Python's arguments; see
// parse_run) and says whether it was there.
bool take_no_snapshot(std::vector<std::string_view>& args) {
  bool found = false;
  for (std::size_t i = 0; i < args.size();) {
    const std::string_view arg = args[i];
    if (arg == "--no-snapshot") {
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      found = true;
      continue;
    }
    if (arg == "--" || !arg.starts_with("--")) break;
    static constexpr std::string_view kWithValue[] = {"--dir", "--env", "--fuel", "--max-memory-size", "--timeout",
                                                      "--hostcall-fuel", "--json", "--stdin", "--tier", "--cache",
                                                      "--tier-up"};
    i += std::ranges::find(kWithValue, arg) != std::end(kWithValue) ? 2 : 1;  // `--opt=value` is one
  }
  return found;
}

// [snapshots] The command lines python.wasm's `wizer.resume` honours exactly as `python` would
// (python/wasi_snapshot_main.c): everything else was fixed at initialisation.
bool snapshot_can_run(const std::vector<std::string>& python_args, const std::vector<std::pair<std::string, std::string>>& env) {
  for (const auto& [name, value] : env) {
    if (name.starts_with("PYTHON")) return false;
  }
  if (python_args.empty()) return true;
  const std::string& first = python_args[0];
  if (first == "-c" || first == "-m") return python_args.size() >= 2;
  return first == "-" || !first.starts_with("-");
}

}  // namespace

int python_command(std::span<const std::string_view> command_args) {
  std::vector<std::string_view> args(command_args.begin(), command_args.end());
  const bool no_snapshot = take_no_snapshot(args);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    sprawling::cli::print(stdout, kPythonHelp);
    return 0;
  }
  const std::filesystem::path artifacts = std::filesystem::path(SPRAWLING_DEFAULT_ARTIFACTS_DIR) / "python-wasi";
  const auto wasm = from_env_or("SPRAWLING_PYTHON_WASM", artifacts / "python.wasm");
  const auto lib = from_env_or("SPRAWLING_PYTHON_LIB", artifacts / "lib");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(wasm, ec) || !std::filesystem::is_directory(lib / "python3.11", ec)) {
    std::fprintf(stderr,
                 "sprawl python: E_TOOL_UNAVAILABLE: no CPython-for-WASI artifact (looked for %s and %s/python3.11).\n"
                 "  Build it with scripts/build-python-wasi (a few minutes), or point SPRAWLING_PYTHON_WASM and\n"
                 "  SPRAWLING_PYTHON_LIB at an existing build.\n",
                 wasm.c_str(), lib.c_str());
    return status::kToolUnavailable;
  }
  auto request = parse_run(args, /*module_required=*/false);
  if (!request) {
    std::fprintf(stderr, "sprawl python: %s\n", request.error().message.c_str());
    return status::kUsage;
  }
  for (const auto& mount : request->mounts) {
    if (mount.guest == "/usr/local/lib") {
      std::fputs("sprawl python: --dir: /usr/local/lib is where the standard library is mounted\n", stderr);
      return status::kUsage;
    }
  }
  std::vector<std::string> argv{"python"};
  argv.insert(argv.end(), request->args.begin(), request->args.end());
  std::vector<runtime::Mount> stdlib{runtime::Mount{.host = lib, .guest = "/usr/local/lib", .writable = false}};
  // [snapshots] The initialisation sees the standard library (the first mount) and nothing else.
  // Without a folder to keep it in, a snapshot would be rebuilt by every process: start cold.
  const auto dir = user_cache_folder("SPRAWLING_SNAPSHOT_DIR", "snapshots");
  // The training job (SnapshotPolicy::training_args) runs what most jobs do: print values of the
  // common types, so that their code is in the snapshot file when jobs need it.
  runtime::SnapshotPolicy snapshot{
      .enabled = !no_snapshot && !dir.empty() && snapshot_can_run(request->args, request->env), .init_mounts = 1};
  if (snapshot.enabled) snapshot.training_args = std::vector<std::string>(std::begin(kTrainingArgs), std::end(kTrainingArgs));
  return run_job(*request, std::move(argv), std::move(stdlib), wasm.string(), std::move(snapshot), dir);
}

}  // namespace sprawling::cli
