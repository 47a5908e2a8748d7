// `sprawl compile`: a module compiled whole to machine code ahead of time, into the compiled-code
// cache where later `sprawl run` / `sprawl python` jobs (tier auto or compile) find it.
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/report.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace sprawling::cli {

namespace {

constexpr std::string_view kCompileHelp = R"(Usage: sprawl compile [--metered | --unmetered] MODULE...

Compiles every function of each MODULE (.wasm or .wat) to machine code with LLVM, ahead of time,
into the compiled-code cache: SPRAWLING_CACHE_DIR, else $XDG_CACHE_HOME/sprawling/code, else
~/.cache/sprawling/code (created 0700). Later runs of the same module (`sprawl run`, `sprawl
python`; --tier auto, the default, or compile) by this same sprawl binary on this CPU start on that
machine code instead of the interpreter. Prints each entry written. An entry is specific to the
module's bytes, this build of sprawl and of its compiler plugin (libsprawling_jit.so), the LLVM
library, the CPU's features and the fuel mode;
entries are checked on every read (a corrupt or foreign one is ignored), and the folder is kept
under 1 GiB by removing the least recently used entries.

Options:
  --unmetered   only the code for runs without --fuel
  --metered     only the code for runs with --fuel (fuel metering compiled in)
                (default: both)
  -h, --help    this text

Exit status: 0 when every entry was written; 127 without the compiled tier (a build without it, or
its plugin libsprawling_jit.so not found: the message says where it looked); 128 usage;
132 an invalid module; 126 the cache could not be written.
)";

}  // namespace

int compile_command(std::span<const std::string_view> args) {
  bool metered = true;
  bool unmetered = true;
  std::vector<std::string_view> modules;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      print(stdout, kCompileHelp);
      return 0;
    }
    if (arg == "--metered") {
      unmetered = false;
    } else if (arg == "--unmetered") {
      metered = false;
    } else if (arg == "--") {
      modules.insert(modules.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    } else if (arg.starts_with("-")) {
      std::fprintf(stderr, "sprawl compile: unknown option '%.*s' (see --help)\n", static_cast<int>(arg.size()),
                   arg.data());
      return status::kUsage;
    } else {
      modules.push_back(arg);
    }
  }
  if (!metered && !unmetered) {
    std::fputs("sprawl compile: --metered and --unmetered exclude each other (default: both)\n", stderr);
    return status::kUsage;
  }
  if (modules.empty()) {
    std::fputs("sprawl compile: missing MODULE (a .wasm or .wat file)\n", stderr);
    return status::kUsage;
  }
  runtime::SandboxConfig config;
  config.code_cache_dir = user_cache_folder("SPRAWLING_CACHE_DIR", "code");
  if (config.code_cache_dir.empty()) {
    std::fputs("sprawl compile: no cache folder: set SPRAWLING_CACHE_DIR, XDG_CACHE_HOME or HOME\n", stderr);
    return status::kUsage;
  }
  for (const std::string_view module : modules) {
    const auto written = runtime::precompile_module(std::string(module), config, metered, unmetered);
    if (!written) {
      std::fprintf(stderr, "sprawl compile: %s\n", written.error().to_string().c_str());
      return exit_status(written.error().code);
    }
    for (const auto& e : *written) {
      const double kb = static_cast<double>(e.wasm_code_bytes) / 1000.0;
      std::printf("%s: %s code: %s (%zu bytes): %zu of %zu functions, %.1f KB of wasm code in %.2f s CPU (%.1f KB/s)\n",
                  std::string(module).c_str(), e.metered ? "metered" : "unmetered", e.file.c_str(), e.entry_bytes,
                  e.compiled, e.functions, kb, e.cpu_seconds, e.cpu_seconds > 0 ? kb / e.cpu_seconds : 0.0);
    }
  }
  return 0;
}

}  // namespace sprawling::cli
