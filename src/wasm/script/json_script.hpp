// Reads wast2json's output (a .json command list plus the .wasm/.wat files next to it) into a
// Script for run_script. https://github.com/WebAssembly/wabt/blob/main/docs/wast2json.md
#pragma once

#include "wasm/script/script.hpp"

#include <expected>
#include <string>

namespace sprawling::wasm::script {

// Loads `json_path` and every module file it names (relative to the JSON's folder). Binary
// modules become ModuleSource::Binary, text ones (.wat: assert_malformed's quoted modules)
// ModuleSource::Text. Fails with a message on unreadable files or JSON it does not understand.
[[nodiscard]] std::expected<Script, std::string> load_json_script(const std::string& json_path);

}  // namespace sprawling::wasm::script
