// Linker (linker.cpp): resolves a module's imports by (module, name) against defined externs;
// later definitions of the same name shadow earlier ones. Type checks happen at instantiation.
#pragma once

#include "wasm/runtime/runtime.hpp"
#include "wasm/syntax/module.hpp"

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sprawling::wasm {

struct LinkError {
  std::string message;  // "unknown import: `MODULE::NAME` has not been defined"
  std::string module;
  std::string name;
};

// Resolves a module's imports by (module, name).
class Linker {
 public:
  void define(std::string module, std::string name, Extern value);
  // Defines every export of `instance` under `module` (the spec's `register`).
  void define_instance(const std::string& module, const Instance& instance);
  [[nodiscard]] std::optional<Extern> find(std::string_view module, std::string_view name) const;
  // One Extern per import in order, or the first import that is not defined.
  [[nodiscard]] std::expected<std::vector<Extern>, LinkError> resolve(const Module& module) const;

 private:
  std::vector<std::pair<std::pair<std::string, std::string>, Extern>> entries_;
};

}  // namespace sprawling::wasm
