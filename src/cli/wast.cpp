// `sprawl wast FILE...`: runs WebAssembly spec scripts in-process (text parser + script runner
// with the `spectest` module) and prints per-file results and the totals.
#include "cli/commands.hpp"
#include "cli/report.hpp"

#include "wasm/script/script.hpp"
#include "wasm/text/wast.hpp"
#include "wasm/text/wat.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace sprawling::cli {

namespace {
constexpr std::string_view kWastHelp = R"(Usage: sprawl wast [--verbose] FILE...

Runs each WebAssembly spec script (.wast): modules, registrations, invocations and every
assert_* command, with the spec's `spectest` host module. Prints each failure with its
file:line, a `FILE: N passed, M failed` line per file, and the totals last:
`N passed, M failed, K skipped`.

Exit status: 0 nothing failed; 1 at least one assertion failed; 128 usage error or a file that
cannot be read or parsed.
)";
}  // namespace

int wast_command(std::span<const std::string_view> args) {
  bool verbose = false;
  std::vector<std::string> files;
  for (const auto arg : args) {
    if (arg == "--help" || arg == "-h") {
      sprawling::cli::print(stdout, kWastHelp);
      return 0;
    }
    if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (arg.starts_with("-")) {
      std::fprintf(stderr, "sprawl wast: unknown option '%.*s' (see sprawl wast --help)\n",
                   static_cast<int>(arg.size()), arg.data());
      return status::kUsage;
    } else {
      files.emplace_back(arg);
    }
  }
  if (files.empty()) {
    std::fputs("sprawl wast: missing FILE (see sprawl wast --help)\n", stderr);
    return status::kUsage;
  }
  wasm::script::RunOptions options;
  options.verbose = verbose;
  options.text_compiler = [](std::string_view text) -> std::expected<std::vector<std::uint8_t>, std::string> {
    auto binary = wasm::text::wat_to_binary(text);
    if (!binary) return std::unexpected(binary.error().to_string());
    return std::move(*binary);
  };
  wasm::script::Counts total;
  bool unreadable = false;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "sprawl wast: cannot read '%s'\n", file.c_str());
      unreadable = true;
      continue;
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    auto script = wasm::text::parse_wast(buffer.str(), file);
    if (!script) {
      std::fprintf(stderr, "%s:%zu:%zu: %s\n", file.c_str(), script.error().line, script.error().column,
                   script.error().message.c_str());
      unreadable = true;
      continue;
    }
    const auto counts = wasm::script::run_script(*script, options, std::cout);
    std::cout << file << ": " << counts.passed << " passed, " << counts.failed << " failed";
    if (counts.skipped != 0) std::cout << ", " << counts.skipped << " skipped";
    std::cout << '\n';
    total += counts;
  }
  std::cout << total.passed << " passed, " << total.failed << " failed, " << total.skipped << " skipped" << std::endl;
  if (unreadable) return status::kUsage;
  return total.failed == 0 ? 0 : 1;
}

}  // namespace sprawling::cli
