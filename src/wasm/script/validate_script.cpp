// validate_script: the decode/validate half of run_script (no execution engine needed), for
// diagnosing the decoder and validator on the spec testsuite.
#include "wasm/script/expectations.hpp"
#include "wasm/script/script.hpp"

#include <ostream>

namespace sprawling::wasm::script {

Counts validate_script(const Script& script, const RunOptions& options, std::ostream& log) {
  Counts counts;
  for (const Command& cmd : script.commands) {
    const std::string where = script.file + ":" + std::to_string(cmd.line) + ": ";
    if (!cmd.has_module) {
      ++counts.skipped;
      continue;
    }
    std::vector<std::uint8_t> text_binary;
    const std::vector<std::uint8_t>* bytes = &cmd.module.bytes;
    std::string problem;
    if (cmd.module.kind == ModuleSource::Kind::Text) {
      if (!options.text_compiler) {
        ++counts.skipped;
        continue;
      }
      auto b = options.text_compiler(cmd.module.text);
      if (!b) {
        if (cmd.kind != Command::Kind::AssertMalformed) {
          problem = "text module does not parse: " + b.error();
        } else if (!starts_with(b.error(), cmd.text)) {
          problem = "expected \"" + cmd.text + "\", got \"" + b.error() + "\"";
        }
        if (problem.empty()) {
          ++counts.passed;
        } else {
          ++counts.failed;
          log << where << "FAILED: " << problem << '\n';
        }
        continue;
      }
      text_binary = std::move(*b);
      bytes = &text_binary;
    }
    const auto r = decode_and_validate(*bytes, options.features);
    if (cmd.kind == Command::Kind::AssertInvalid || cmd.kind == Command::Kind::AssertMalformed) {
      const auto want =
          cmd.kind == Command::Kind::AssertInvalid ? CompileError::Kind::Invalid : CompileError::Kind::Malformed;
      problem = check_rejection(r, cmd.text, want, find_lossy(script.file, cmd.line));
    } else if (!r) {
      problem = "module does not validate: \"" + r.error().message + "\" at offset " + std::to_string(r.error().offset);
    }
    if (problem.empty()) {
      ++counts.passed;
      if (options.verbose) log << where << "passed\n";
    } else {
      ++counts.failed;
      log << where << "FAILED: " << problem << '\n';
    }
  }
  return counts;
}

}  // namespace sprawling::wasm::script
