// spec_json_runner: runs wast2json outputs (FILE.json…) through the engine and prints per-file
// counts and the closing line "N passed, M failed, K skipped"; exits non-zero on any failure.
// --validate-only checks just decoding/validation (modules must validate, binary
// assert_invalid/assert_malformed must be rejected with the expected message).
// --tier compile runs every function the compiled tier supports as machine code; --metered runs
// the metered code (fuel operations present) under an unbounded budget. Modules validate as
// WebAssembly 2.0 (Features::wasm2()): the suite it runs is 2.0's.
#include "wasm/script/json_script.hpp"
#include "wasm/script/script.hpp"

#ifdef SPRAWLING_SPEC_TEXT
#include "wasm/text/wat.hpp"
#endif

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace sprawling::wasm;
using namespace sprawling::wasm::script;

}  // namespace

int main(int argc, char** argv) {
  bool validate = false;
  RunOptions options;
  // The testsuite it runs is WebAssembly 2.0's, some of whose assertions 3.0 reverses (a
  // constant expression reading a defined global, i32.add in one): validate as 2.0 does.
  options.features = Features::wasm2();
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--validate-only") {
      validate = true;
    } else if (arg == "--metered") {
      options.metered = true;
    } else if (arg == "--verbose" || arg == "-v") {
      options.verbose = true;
    } else if (arg == "--tier" && i + 1 < argc && std::string_view(argv[i + 1]) == "compile") {
      ++i;
      if (!compiled_tier_available()) {
        std::cerr << "spec_json_runner: --tier compile: " << compiled_tier_unavailable_reason() << "\n";
        return 2;
      }
      options.tier = Tier::Compile;
    } else if (arg == "--tier" && i + 1 < argc && std::string_view(argv[i + 1]) == "interpret") {
      ++i;
      options.tier = Tier::Interpret;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: spec_json_runner [--validate-only] [--verbose] [--tier interpret|compile] [--metered] FILE.json...\n";
      return 0;
    } else {
      files.emplace_back(arg);
    }
  }
  if (files.empty()) {
    std::cerr << "usage: spec_json_runner [--validate-only] [--verbose] [--tier interpret|compile] [--metered] FILE.json...\n";
    return 2;
  }
#ifdef SPRAWLING_SPEC_TEXT
  options.text_compiler = [](std::string_view source) -> std::expected<std::vector<std::uint8_t>, std::string> {
    auto r = text::wat_to_binary(source, text::WatOptions{.memory64 = false, .function_references = false});  // 2.0
    if (!r) return std::unexpected(r.error().message);
    return std::move(*r);
  };
#endif
  Counts total;
  bool load_error = false;
  for (const std::string& file : files) {
    auto script = load_json_script(file);
    if (!script) {
      std::cerr << script.error() << '\n';
      load_error = true;
      continue;
    }
    const Counts c = validate ? validate_script(*script, options, std::cout) : run_script(*script, options, std::cout);
    std::cout << script->file << ": " << c.passed << " passed, " << c.failed << " failed, " << c.skipped
              << " skipped\n";
    total += c;
  }
  std::cout << total.passed << " passed, " << total.failed << " failed, " << total.skipped << " skipped\n";
  return total.failed != 0 || load_error ? 1 : 0;
}
