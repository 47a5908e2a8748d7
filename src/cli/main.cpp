// `sprawl`: the command line — run a wasip1 module in the sandbox, run spec scripts, validate
// modules, inspect the internal code, run the python arm.
#include "cli/commands.hpp"
#include "cli/report.hpp"
#include "cli/run_job.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view kVersion = "sprawl 0.1.0 (sprawling-runtime)";

constexpr std::string_view kUsage = R"(sprawl — run WebAssembly (wasip1) modules in a capability sandbox

Usage:
  sprawl run [OPTIONS] MODULE [ARGS...]    run a .wasm or .wat command module (its _start)
  sprawl python [OPTIONS] [PYTHON-ARGS...] run CPython (built for WASI) in the sandbox
  sprawl compile [OPTIONS] MODULE...       compile modules to machine code into the code cache
  sprawl wast FILE...                      run WebAssembly spec scripts (.wast)
  sprawl validate MODULE...                decode and validate modules
  sprawl inspect --internal MODULE [FUNC]  print the internal code the engine makes of MODULE
  sprawl help [COMMAND]                    this text, or a command's options
  sprawl --version

Run `sprawl run --help` for the options and the exit statuses.
)";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    sprawling::cli::print(stderr, kUsage);
    return sprawling::cli::status::kUsage;
  }
  const std::string_view command = args[0];
  const std::span<const std::string_view> rest(args.begin() + 1, args.end());
  if (command == "--help" || command == "-h") {
    sprawling::cli::print(stdout, kUsage);
    return 0;
  }
  if (command == "help") {
    if (rest.empty()) {
      sprawling::cli::print(stdout, kUsage);
      return 0;
    }
    const std::string_view help[] = {"--help"};
    if (rest[0] == "run") return sprawling::cli::run_command(help);
    if (rest[0] == "python") return sprawling::cli::python_command(help);
    if (rest[0] == "wast") return sprawling::cli::wast_command(help);
    if (rest[0] == "validate") return sprawling::cli::validate_command(help);
    if (rest[0] == "inspect") return sprawling::cli::inspect_command(help);
    if (rest[0] == "compile") return sprawling::cli::compile_command(help);
    std::fprintf(stderr, "sprawl: unknown command '%.*s' (see sprawl --help)\n", static_cast<int>(rest[0].size()),
                 rest[0].data());
    return sprawling::cli::status::kUsage;
  }
  if (command == "--version" || command == "-V") {
    sprawling::cli::print(stdout, kVersion);
    sprawling::cli::print(stdout, "\n");
    return 0;
  }
  // The job is over and everything it wrote is flushed: the process leaves without running the
  // destructors of what it loaded (a compiled module of thousands of functions, the caches; the
  // job's own state was left alone already: SandboxConfig::process_exits_after_run). That also
  // covers tier-up, which may compile hot functions in the background that would otherwise have
  // to end before exit destroys LLVM's statics: a compilation still running or queued is of no
  // use now. Only SPRAWLING_JIT_STATS, printed as modules' code is destroyed, needs the long way.
  if (command == "run" || command == "python") {
    if (sprawling::cli::exit_without_teardown()) sprawling::cli::heap_on_huge_pages();  // [start-up]
    const int status = command == "run" ? sprawling::cli::run_command(rest) : sprawling::cli::python_command(rest);
    if (sprawling::cli::exit_without_teardown() || sprawling::runtime::wasm_sandbox_tier_up_busy()) {
      std::fflush(nullptr);
      // What tier-up leaves unfinished, the next process compiles early (the hot set's wanted).
      sprawling::runtime::wasm_sandbox_tier_up_keep_unfinished();
      std::_Exit(status);
    }
    sprawling::runtime::wasm_sandbox_stop_tier_up();
    return status;
  }
  if (command == "wast") return sprawling::cli::wast_command(rest);
  if (command == "validate") return sprawling::cli::validate_command(rest);
  if (command == "inspect") return sprawling::cli::inspect_command(rest);
  if (command == "compile") return sprawling::cli::compile_command(rest);
  std::fprintf(stderr, "sprawl: unknown command '%.*s' (see sprawl --help)\n", static_cast<int>(command.size()),
               command.data());
  return sprawling::cli::status::kUsage;
}
