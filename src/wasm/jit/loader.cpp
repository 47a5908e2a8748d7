// The engine's side of plugin_abi.hpp: finds and loads the compiled tier's plugin
// (libsprawling_jit.so, which links libLLVM) the first time something needs it, and forwards each
// entry point of entry_points.def to it. A process that never compiles never loads it, so it
// never maps or relocates libLLVM (docs/compiled-tier.md, "Linkage").
#include "wasm/jit/plugin_abi.hpp"

#include "jit_abi_token.hpp"  // generated: SPRAWLING_JIT_ABI (src/CMakeLists.txt)
#include "wasm/support/sha256.hpp"
#include "wasm/support/build_id.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace sprawling::wasm::jit {

namespace {

constexpr const char* kPluginName = "libsprawling_jit.so";

const EngineServices& services() {
  static const EngineServices s{
      .op_of_word = &wasm::op_of_word,
      .decode_instructions = &wasm::decode_instructions,
      .runtime_symbols = &jit::runtime_symbols,
      .module_code = [](const CompiledModule::Impl& module, std::uint32_t defined, bool metered) -> const CompiledFunc& {
        return module.code(defined, metered);
      },
  };
  return s;
}

// The file of the loaded object (program or shared library) holding this code.
struct ObjectSearch {
  std::uintptr_t code = 0;
  std::string path;
  bool found = false;
};
int find_object(dl_phdr_info* info, std::size_t, void* data) {
  auto& search = *static_cast<ObjectSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && search.code >= start && search.code - start < ph.p_memsz) {
      search.found = true;
      search.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
      return 1;
    }
  }
  return 0;
}
std::filesystem::path engine_binary() {
  ObjectSearch search;
  search.code = reinterpret_cast<std::uintptr_t>(&find_object);
  dl_iterate_phdr(find_object, &search);
  std::error_code ec;
  // The program itself has no name in the loader's list: /proc/self/exe is its file.
  if (search.found && search.path.empty()) return std::filesystem::read_symlink("/proc/self/exe", ec);
  return search.path;
}

// Where the plugin may be, in order: SPRAWLING_JIT_PLUGIN alone when set; else beside the binary
// holding the engine (libsprawling.so, or a program installed beside it), the install tree's
// library folder as seen from a program in its bin folder, that folder's absolute path as
// installed, the build tree's copy (tests and fuzzers run from the build tree: for them it comes
// before the installed one), and the dynamic loader's search path. A candidate
// built from other sources is refused by the handshake, so the next one is tried.
std::vector<std::filesystem::path> candidates() {
  if (const char* env = std::getenv("SPRAWLING_JIT_PLUGIN"); env != nullptr && *env != '\0') return {env};
  std::vector<std::filesystem::path> out;
  const std::filesystem::path dir = engine_binary().parent_path();
  if (!dir.empty()) {
    out.push_back(dir / kPluginName);
    out.push_back((dir / SPRAWLING_JIT_LIBDIR_FROM_BINDIR / kPluginName).lexically_normal());
  }
  // A program of the build tree (tests, fuzzers) takes the build tree's plugin before an
  // installed one, which may come from other sources with the same token.
  const std::string_view build_root = SPRAWLING_JIT_BUILD_ROOT "/";
  if (dir.native().starts_with(build_root)) out.emplace_back(SPRAWLING_JIT_BUILD_PATH);
  out.emplace_back(SPRAWLING_JIT_INSTALLED_PATH);
  out.emplace_back(SPRAWLING_JIT_BUILD_PATH);
  // Last, the bare name: the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache, /usr/lib),
  // which finds the packaged plugin for a program linking the static libraries from anywhere.
  out.emplace_back(kPluginName);
  std::vector<std::filesystem::path> unique;
  for (auto& p : out) {
    if (std::ranges::find(unique, p) == unique.end()) unique.push_back(std::move(p));
  }
  return unique;
}

struct Loaded {
  PluginStatus status;
  const PluginTable* table = nullptr;
};

Loaded load() {
  Loaded out;
  std::string why;
  const auto failed = [&why](const std::filesystem::path& path, std::string_view what) {
    if (!why.empty()) why += "; ";
    why += '\'';
    why += path.string();
    why += "': ";
    why += what;
  };
  for (const std::filesystem::path& path : candidates()) {
    std::error_code ec;
    if (path.has_parent_path() && !std::filesystem::exists(path, ec)) {
      failed(path, "not found");
      continue;
    }
    // RTLD_LOCAL: the plugin's and libLLVM's symbols stay out of the process's global scope.
    // RTLD_LAZY, as a program linking libLLVM binds it: RTLD_NOW binds every PLT slot of libLLVM
    // up front (about 1-2 ms more on a warm-cache start). The plugin is linked with --no-undefined
    // against libLLVM-19's versioned symbols, so there is nothing left to fail later.
    void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = ::dlerror();
      failed(path, e != nullptr ? e : "dlopen failed");
      continue;
    }
    auto* init = reinterpret_cast<PluginInit>(::dlsym(handle, kPluginSymbol));
    const PluginTable* table = init != nullptr ? init(SPRAWLING_JIT_ABI, &services()) : nullptr;
    if (table == nullptr) {
      failed(path, init == nullptr ? "not the compiled tier's plugin (no sprawling_jit_plugin_v1)"
                                   : "built from other engine sources or flags than this engine");
      ::dlclose(handle);
      continue;
    }
    out.table = table;
    out.status.loaded = true;
    out.status.path = path.string();
    out.status.build_id = to_hex(build_id_of(reinterpret_cast<const void*>(init)));
    return out;
  }
  out.status.error = "the compiled tier's plugin " + std::string(kPluginName) + " could not be loaded (" + why + ")";
  return out;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

const PluginTable& table() {
  const Loaded& l = loaded();
  if (l.table == nullptr) {
    std::fprintf(stderr, "sprawl: %s; the engine called it without checking jit::plugin() first\n",
                 l.status.error.c_str());
    std::abort();
  }
  return *l.table;
}

}  // namespace

const PluginStatus& plugin() { return loaded().status; }

#define SPRAWLING_JIT_ENTRY(R, name, params, args) \
  R name params { return table().name args; }
#include "wasm/jit/entry_points.def"

}  // namespace sprawling::wasm::jit
