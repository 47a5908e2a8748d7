// `sprawl wast FILE...`: runs WebAssembly spec scripts in-process (text parser + script runner
// with the `spectest` module) and prints per-file results and the totals.
#include "cli/commands.hpp"
#include "cli/report.hpp"

#include "wasm/script/script.hpp"
#include "wasm/text/wast.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace sprawling::cli {

namespace {
constexpr std::string_view kWastHelp = R"(Usage: sprawl wast [--verbose] [--wasm2] [--tier interpret|compile] [--metered]
                  [--ahead-of-time] [--nan-canonicalization] FILE...

Runs each WebAssembly spec script (.wast): modules, registrations, invocations and every
assert_* command, with the spec's `spectest` host module. Prints each failure with its
file:line, a `FILE: N passed, M failed` line per file, and the totals last:
`N passed, M failed, K skipped`.

Modules validate as WebAssembly 3.0 as far as the engine has it (tail calls, extended constant
expressions, relaxed SIMD, multiple memories, memory64, exception handling, typed function
references, garbage collection). --wasm2 validates as 2.0 instead (those off, as -W tail-call=n,
extended-const=n,relaxed-simd=n,multi-memory=n,memory64=n,exceptions=n,function-references=n,
gc=n), for the 2.0
testsuite, some of whose assertions 3.0 reverses. A result written (either V...) passes when any
of the listed values matches.

--tier compile runs every function the compiled tier supports as machine code (the others, and
every function of a build without the compiled tier, stay interpreted: the second is a usage
error); the default is the interpreter. --metered runs the fuel-metered code under an unbounded
budget, so both code variants can be checked against the same expectations. With --tier
compile, functions compile at their first call unless --ahead-of-time is given: then each module
is compiled whole before it is instantiated, as `sprawl compile` does (into a code cache held in
memory for the run), and a module any function of which would stay interpreted fails.
--nan-canonicalization compiles every module as `sprawl run -W nan-canonicalization` does: a
float operation that makes a NaN makes the canonical one.

Exit status: 0 nothing failed; 1 at least one assertion failed (a file that does not parse
counts as one failure); 128 usage error or a file that cannot be read.
)";
}  // namespace

int wast_command(std::span<const std::string_view> args) {
  bool verbose = false;
  bool wasm2 = false;
  bool metered = false;
  bool nan_canonicalization = false;
  bool ahead_of_time = false;
  wasm::Tier tier = wasm::Tier::Interpret;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      sprawling::cli::print(stdout, kWastHelp);
      return 0;
    }
    if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (arg == "--wasm2") {
      wasm2 = true;
    } else if (arg == "--metered") {
      metered = true;
    } else if (arg == "--ahead-of-time") {
      ahead_of_time = true;
    } else if (arg == "--nan-canonicalization") {
      nan_canonicalization = true;
    } else if (arg == "--tier") {
      const std::string_view value = i + 1 < args.size() ? args[++i] : std::string_view{};
      if (value == "interpret") {
        tier = wasm::Tier::Interpret;
      } else if (value == "compile") {
        if (!wasm::compiled_tier_available()) {
          std::fprintf(stderr, "sprawl wast: --tier compile: %s\n", wasm::compiled_tier_unavailable_reason().c_str());
          return status::kUsage;
        }
        tier = wasm::Tier::Compile;
      } else {
        std::fprintf(stderr, "sprawl wast: --tier takes interpret or compile, not '%.*s'\n", static_cast<int>(value.size()),
                     value.data());
        return status::kUsage;
      }
    } else if (arg.starts_with("-")) {
      std::fprintf(stderr, "sprawl wast: unknown option '%.*s' (see sprawl wast --help)\n",
                   static_cast<int>(arg.size()), arg.data());
      return status::kUsage;
    } else {
      files.emplace_back(arg);
    }
  }
  if (ahead_of_time && tier != wasm::Tier::Compile) {
    std::fputs("sprawl wast: --ahead-of-time needs --tier compile\n", stderr);
    return status::kUsage;
  }
  if (files.empty()) {
    std::fputs("sprawl wast: missing FILE (see sprawl wast --help)\n", stderr);
    return status::kUsage;
  }
  for (const auto& file : files) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
      std::fprintf(stderr, "sprawl wast: cannot read '%s'\n", file.c_str());
      return status::kUsage;
    }
  }
  wasm::script::RunOptions options;
  options.verbose = verbose;
  options.tier = tier;
  options.metered = metered;
  options.ahead_of_time = ahead_of_time;
  if (wasm2) options.features = wasm::Features::wasm2();
  options.features.nan_canonicalization = nan_canonicalization;
  options.text_compiler = wasm::text::text_compiler(wasm::text::WatOptions{
      .memory64 = options.features.memory64, .function_references = options.features.function_references});
  wasm::script::Counts total;
  for (const auto& file : files) total += wasm::text::run_wast_file(file, options, std::cout);
  std::cout << total.passed << " passed, " << total.failed << " failed, " << total.skipped << " skipped" << std::endl;
  return total.failed == 0 ? 0 : 1;
}

}  // namespace sprawling::cli
