// `sprawl inspect --internal MODULE [FUNC]`: prints the internal code the engine translates a
// module's functions into (the disassembler, src/wasm/icode/internal_disasm.hpp).
#include "cli/commands.hpp"
#include "cli/report.hpp"

#include "wasm/icode/internal_disasm.hpp"
#include "wasm/runtime/runtime.hpp"
#include "wasm/text/wat.hpp"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace sprawling::cli {

namespace {
constexpr std::string_view kInspectHelp = R"(Usage: sprawl inspect --internal [--metered] MODULE [FUNC]

Prints the internal code the engine translates MODULE (.wasm or .wat) into, as the interpreter
runs it (docs/interpreter.md): for every defined function, or only FUNC (a function index,
imports counted first, or an export name, or a name-section name), a header line, then one line
per instruction: its first word, the op, and each operand by name: slots as p<i> (parameters),
l<i> (declared locals), t<i> (operand-stack temporaries); branch offsets with their target word
(off=-12->@3); fuel words (cost, post, fall) as the cost of the segment they charge; and
`; traps @0x..` with the wasm byte offset of an instruction that can trap.

Options:
  --internal   the internal code (required: it is the only view `inspect` has)
  --metered    the metered variant (what a run with --fuel or --timeout executes) instead of
               the unmetered one

Exit status: 0 printed; 128 usage error (no --internal, no MODULE, a file that cannot be read,
FUNC not found or an imported function); 132 MODULE is malformed or invalid.
)";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "sprawl inspect: %s (see sprawl inspect --help)\n", message.c_str());
  return status::kUsage;
}

// FUNC as a function index: a number, an export name or a name-section name.
std::optional<std::uint32_t> find_function(const wasm::Module& m, std::string_view func) {
  std::uint32_t index = 0;
  const auto [end, ec] = std::from_chars(func.data(), func.data() + func.size(), index);
  if (ec == std::errc{} && end == func.data() + func.size()) return index;
  for (const wasm::Export& e : m.exports)
    if (e.kind == wasm::ExternKind::Func && e.name == func) return e.index;
  for (const auto& [i, name] : m.function_names)
    if (name == func) return i;
  return std::nullopt;
}
}  // namespace

int inspect_command(std::span<const std::string_view> args) {
  bool internal = false;
  bool metered = false;
  std::vector<std::string_view> positional;
  for (const auto arg : args) {
    if (arg == "--help" || arg == "-h") {
      print(stdout, kInspectHelp);
      return 0;
    }
    if (arg == "--internal") {
      internal = true;
    } else if (arg == "--metered") {
      metered = true;
    } else if (arg.starts_with("-")) {
      return usage_error("unknown option '" + std::string(arg) + "'");
    } else {
      positional.push_back(arg);
    }
  }
  if (!internal) return usage_error("say --internal: the internal code is the only view inspect has");
  if (positional.empty()) return usage_error("missing MODULE");
  if (positional.size() > 2) return usage_error("too many arguments: one MODULE and at most one FUNC");

  const std::string path(positional[0]);
  std::ifstream in(path, std::ios::binary);
  if (!in) return usage_error("cannot read '" + path + "'");
  const std::vector<std::uint8_t> source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto binary = wasm::text::load_module_bytes(source);
  if (!binary) {
    std::fprintf(stderr, "sprawl inspect: %s: malformed text: %s\n", path.c_str(), binary.error().c_str());
    return status::kInvalidModule;
  }
  auto compiled = wasm::compile(*binary);
  if (!compiled) {
    const auto& e = compiled.error();
    std::fprintf(stderr, "sprawl inspect: %s: %s at byte 0x%zx: %s\n", path.c_str(),
                 e.kind == wasm::CompileError::Kind::Malformed ? "malformed" : "invalid", e.offset, e.message.c_str());
    return status::kInvalidModule;
  }
  const wasm::CompiledModule& cm = **compiled;
  const wasm::Module& m = cm.module();
  std::uint32_t first = m.imported_funcs;
  auto last = static_cast<std::uint32_t>(m.imported_funcs + m.code.size());
  if (positional.size() == 2) {
    const auto f = find_function(m, positional[1]);
    if (!f || *f >= last)
      return usage_error("no function '" + std::string(positional[1]) + "' in " + path +
                         " (a function index, an export name or a name-section name)");
    if (*f < m.imported_funcs)
      return usage_error("function " + std::to_string(*f) + " is imported: it has no internal code");
    first = *f;
    last = *f + 1;
  }
  for (std::uint32_t i = first; i < last; ++i) {
    if (i != first) print(stdout, "\n");
    print(stdout, wasm::disassemble(cm, i, metered));  // translates only the functions shown
  }
  return 0;
}

}  // namespace sprawling::cli
