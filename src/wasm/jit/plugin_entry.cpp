// The plugin's side of plugin_abi.hpp (built into libsprawling_jit.so only): the exported handshake
// that hands the engine the table of entry points, and the engine services the plugin's code
// calls, forwarded to the engine's table.
#include "wasm/jit/plugin_abi.hpp"

#include "jit_abi_token.hpp"  // generated: SPRAWLING_JIT_ABI (src/CMakeLists.txt)

#include <cstring>

namespace sprawling::wasm {

namespace {
const jit::EngineServices* g_engine = nullptr;  // set once by the handshake, before any entry point runs
}  // namespace

Op op_of_word(std::uint32_t word, bool metered) { return g_engine->op_of_word(word, metered); }
std::expected<std::vector<Instr>, std::string> decode_instructions(std::span<const std::uint32_t> code, bool metered) {
  return g_engine->decode_instructions(code, metered);
}
const CompiledFunc& CompiledModule::Impl::code(std::uint32_t defined, bool metered) const {
  return g_engine->module_code(*this, defined, metered);
}

namespace jit {
std::span<const HelperSymbol> runtime_symbols() { return g_engine->runtime_symbols(); }
}  // namespace jit

}  // namespace sprawling::wasm

extern "C" __attribute__((visibility("default"))) const sprawling::wasm::jit::PluginTable* sprawling_jit_plugin_v1(
    const char* abi, const sprawling::wasm::jit::EngineServices* services) {
  namespace jit = sprawling::wasm::jit;
  if (abi == nullptr || services == nullptr || std::strcmp(abi, SPRAWLING_JIT_ABI) != 0) return nullptr;
  sprawling::wasm::g_engine = services;
  static const jit::PluginTable table{
#define SPRAWLING_JIT_ENTRY(R, name, params, args) .name = &jit::name,
#include "wasm/jit/entry_points.def"
  };
  return &table;
}
