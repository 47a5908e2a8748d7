// run_wast_file: one .wast file through parse_wast and script::run_script. Its own object file
// so that only users of the driver need sprawling_wasm_script at link time.
#include "wasm/text/wast.hpp"

#include <fstream>
#include <iterator>
#include <ostream>

namespace sprawling::wasm::text {

script::Counts run_wast_file(const std::string& path, const script::RunOptions& options, std::ostream& out) {
  script::Counts counts;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    out << path << ": cannot read the file\n";
    counts.failed = 1;
    return counts;
  }
  const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Modules encoded as the features read them (2.0: wabt's element-segment forms).
  auto parsed = parse_wast(source, path, WatOptions{.function_references = options.features.function_references});
  if (!parsed) {
    out << path << ":" << parsed.error().line << ":" << parsed.error().column << ": " << parsed.error().message << '\n';
    counts.failed = 1;
    return counts;
  }
  script::RunOptions opts = options;
  if (!opts.text_compiler) opts.text_compiler = text_compiler(WatOptions{.memory64 = opts.features.memory64,
                                                                              .function_references = opts.features.function_references});
  counts = script::run_script(*parsed, opts, out);
  out << path << ": " << counts.passed << " passed, " << counts.failed << " failed";
  if (counts.skipped) out << ", " << counts.skipped << " skipped";
  out << '\n';
  return counts;
}

}  // namespace sprawling::wasm::text
