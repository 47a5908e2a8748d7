// The boundary between the engine and the compiled tier's plugin (libsprawling_jit.so): the
// plugin's table of entry points (one slot per line of entry_points.def), the engine services the
// plugin's code calls back, and the handshake that refuses a plugin built from other sources.
#pragma once

#include "wasm/icode/internal_code.hpp"
#include "wasm/jit/jit.hpp"
#include "wasm/jit/runtime_calls.hpp"

#include <cstdint>
#include <span>

namespace sprawling::wasm::jit {

// The plugin's entry points, filled by the plugin from entry_points.def.
struct PluginTable {
#define SPRAWLING_JIT_ENTRY(R, name, params, args) R(*name) params;
#include "wasm/jit/entry_points.def"
};

// What the plugin's code calls in the engine. The plugin links no engine code: these are the
// engine functions the compiler uses that are not inline in a header (the plugin defines them as
// forwarders to this table, plugin_entry.cpp), so an engine built as a static library, a
// program or libsprawling.so (which exports only the C API) all serve it the same way. A new
// one: a slot here, its address in loader.cpp's services(), a forwarder in plugin_entry.cpp (the
// plugin is linked with --no-undefined, so a missing one fails the build naming the function).
struct EngineServices {
  Op (*op_of_word)(std::uint32_t word, bool metered);
  std::expected<std::vector<Instr>, std::string> (*decode_instructions)(std::span<const std::uint32_t> code,
                                                                         bool metered);
  std::span<const HelperSymbol> (*runtime_symbols)();
  const CompiledFunc& (*module_code)(const CompiledModule::Impl& module, std::uint32_t defined, bool metered);
};

// The one symbol the plugin exports (C linkage, so dlsym finds it by this name). It returns its
// table when `abi` is the token it was built with (SPRAWLING_JIT_ABI: a hash of the engine
// headers both sides compile against and of the compiler flags), else null: the layouts the two
// sides share (Ctx, FuncInst, CompiledFunc, the module's records) would not agree.
inline constexpr const char* kPluginSymbol = "sprawling_jit_plugin_v1";
using PluginInit = const PluginTable* (*)(const char* abi, const EngineServices* services);

}  // namespace sprawling::wasm::jit
