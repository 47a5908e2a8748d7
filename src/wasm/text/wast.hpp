// The WAST script front end: a .wast file → script::Script for run_script, the TextCompiler
// that lets the runner compile quoted modules, and the `sprawl wast` driver for one file.
// https://github.com/WebAssembly/spec/tree/main/interpreter#scripts
#pragma once

#include "wasm/script/script.hpp"
#include "wasm/text/wat.hpp"

#include <expected>
#include <iosfwd>
#include <string>
#include <string_view>

namespace sprawling::wasm::text {

// Parses a whole script. Ordinary `(module …)` forms are compiled here (ModuleSource::Binary);
// `(module quote …)` forms, and ordinary modules that do not compile, become
// ModuleSource::Text for the runner's TextCompiler (so a failing assert_malformed is judged
// by the runner, with the testsuite's expected message).
// `options`: how its modules are encoded (a 2.0 script: WatOptions{.function_references = false}).
[[nodiscard]] std::expected<script::Script, TextError> parse_wast(std::string_view source, std::string file_name,
                                                                  const WatOptions& options = {});

// wat_to_binary as a script::TextCompiler; the error is TextError::to_string(), which starts
// with the testsuite's wording.
[[nodiscard]] script::TextCompiler text_compiler(const WatOptions& options = {});

// Reads, parses and runs one .wast file with `options` (a text compiler is supplied if none
// is set), logging failures and then "<file>: N passed, M failed[, K skipped]" to `out`. A file
// that cannot be read or parsed counts as one failure.
script::Counts run_wast_file(const std::string& path, const script::RunOptions& options, std::ostream& out);

}  // namespace sprawling::wasm::text
