// Linker: resolves a module's imports by (module, name) against defined externs; later
// definitions of the same name shadow earlier ones. Type checks happen at instantiation.
#include "wasm/runtime/linker.hpp"

namespace sprawling::wasm {

void Linker::define(std::string module, std::string name, Extern value) {
  entries_.emplace_back(std::make_pair(std::move(module), std::move(name)), value);
}

void Linker::define_instance(const std::string& module, const Instance& instance) {
  for (const Export& e : instance.compiled().module().exports) {
    if (auto ext = instance.find_export(e.name)) define(module, e.name, *ext);
  }
}

std::optional<Extern> Linker::find(std::string_view module, std::string_view name) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->first.first == module && it->first.second == name) return it->second;
  }
  return std::nullopt;
}

std::expected<std::vector<Extern>, LinkError> Linker::resolve(const Module& module) const {
  std::vector<Extern> out;
  out.reserve(module.imports.size());
  for (const Import& imp : module.imports) {
    auto ext = find(imp.module, imp.name);
    if (!ext) {
      return std::unexpected(LinkError{"unknown import: `" + imp.module + "::" + imp.name + "` has not been defined",
                                       imp.module, imp.name});
    }
    out.push_back(*ext);
  }
  return out;
}

}  // namespace sprawling::wasm
