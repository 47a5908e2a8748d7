// `sprawl validate MODULE...`: decode and validate each module (.wasm or .wat), one line each.
#include "cli/commands.hpp"
#include "cli/report.hpp"

#include "wasm/binary/decoder.hpp"
#include "wasm/text/wat.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

namespace sprawling::cli {

namespace {
constexpr std::string_view kValidateHelp = R"(Usage: sprawl validate MODULE...

Decodes and validates each MODULE (.wasm binary or .wat text) as WebAssembly 2.0 and prints
`MODULE: ok` or the first error with its byte offset (binary) or line:column (text).

Exit status: 0 all valid; 132 at least one module is malformed or invalid; 128 usage error
(no module given, or a file that cannot be read).
)";
}  // namespace

int validate_command(std::span<const std::string_view> args) {
  if (args.empty()) {
    std::fputs("sprawl validate: missing MODULE (see sprawl validate --help)\n", stderr);
    return status::kUsage;
  }
  for (const auto arg : args) {
    if (arg == "--help" || arg == "-h") {
      sprawling::cli::print(stdout, kValidateHelp);
      return 0;
    }
  }
  int result = 0;
  for (const auto arg : args) {
    const std::string path(arg);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "sprawl validate: cannot read '%s'\n", path.c_str());
      return status::kUsage;
    }
    const std::vector<std::uint8_t> source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto binary = wasm::text::load_module_bytes(source);
    if (!binary) {
      std::printf("%s: malformed text: %s\n", path.c_str(), binary.error().c_str());
      result = status::kInvalidModule;
      continue;
    }
    auto module = wasm::decode_and_validate(*binary);
    if (!module) {
      const auto& e = module.error();
      std::printf("%s: %s at byte 0x%zx: %s\n", path.c_str(),
                  e.kind == wasm::CompileError::Kind::Malformed ? "malformed" : "invalid", e.offset, e.message.c_str());
      result = status::kInvalidModule;
      continue;
    }
    std::printf("%s: ok\n", path.c_str());
  }
  return result;
}

}  // namespace sprawling::cli
