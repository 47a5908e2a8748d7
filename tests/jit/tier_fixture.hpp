// Shared by the compiled-tier tests: assemble WAT, run one export under a tier and a budget, and
// record everything the two tiers must agree on (results, trap kind/function/offset, fuel).
#pragma once

#include "wasm/jit/jit.hpp"
#include "wasm/runtime/linker.hpp"
#include "wasm/runtime/runtime.hpp"
#include "wasm/runtime/store_impl.hpp"
#include "wasm/text/wat.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <span>
#include <expected>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm::jit_testing {

inline std::shared_ptr<const CompiledModule> compile_wat(std::string_view wat) {
  auto bin = text::wat_to_binary(wat);
  EXPECT_TRUE(bin.has_value()) << (bin ? "" : bin.error().message);
  if (!bin) return nullptr;
  auto m = compile(*bin);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().message);
  return m ? *m : nullptr;
}

// Every function the module defines has machine code in both variants (unmetered, metered): no
// compile error, no reason to stay interpreted, each entry published.
inline void expect_all_compiled(const CompiledModule& module) {
  for (int variant : {kUnmetered, kMetered}) {
    const jit::ModuleCode& code = module.impl().jit(variant);
    EXPECT_EQ(code.error, "") << "variant " << variant;
    ASSERT_EQ(code.reasons.size(), module.module().code.size()) << "variant " << variant;
    for (std::size_t i = 0; i < code.reasons.size(); ++i) {
      EXPECT_EQ(code.reasons[i], "") << "variant " << variant << ", function " << i;
      EXPECT_NE(code.entries[i].entry.load(), nullptr) << "variant " << variant << ", function " << i;
    }
    EXPECT_EQ(code.compiled, code.reasons.size()) << "variant " << variant;
  }
}

// A code cache in memory. Tier-up reads and writes it from its own thread (the hot set).
class MemoryCache final : public CodeCacheStorage {
 public:
  std::optional<std::vector<std::uint8_t>> read(std::string_view name) override {
    const std::lock_guard lock(mutex_);
    const auto it = entries_.find(std::string(name));
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  std::expected<void, std::string> write(std::string_view name, std::span<const std::uint8_t> bytes) override {
    const std::lock_guard lock(mutex_);
    entries_[std::string(name)].assign(bytes.begin(), bytes.end());
    return {};
  }
  // The names of the entries (in order), and one entry's bytes to change.
  std::vector<std::string> names() {
    const std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [name, bytes] : entries_) out.push_back(name);
    return out;
  }
  template <typename F>
  void change(const std::string& name, F&& f) {
    const std::lock_guard lock(mutex_);
    f(entries_.at(name));
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::vector<std::uint8_t>> entries_;
};

struct Outcome {
  std::vector<Value> results;
  TrapKind trap = TrapKind::None;
  std::optional<std::uint32_t> func_index;
  std::size_t offset = 0;
  std::uint64_t fuel = 0;
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

inline std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  os << "{trap " << static_cast<int>(o.trap) << " func " << (o.func_index ? static_cast<int>(*o.func_index) : -1)
     << " offset " << o.offset << " fuel " << o.fuel << " results";
  for (const Value& v : o.results) os << ' ' << v.bits;
  return os << '}';
}

// Host function "env" "add1": i32 -> i32.
inline HostStatus host_add1(HostCall& call) {
  call.results[0] = static_cast<std::uint32_t>(call.args[0] + 1);
  return HostStatus::Ok;
}

// What an invoke gave, with the store's fuel figure.
inline Outcome outcome_of(const Store& store, const std::expected<std::vector<Value>, Trap>& r) {
  Outcome o;
  if (r) {
    o.results = *r;
  } else {
    o.trap = r.error().kind;
    o.func_index = r.error().func_index;
    o.offset = r.error().offset;
  }
  o.fuel = store.fuel_consumed();
  return o;
}

// Instantiates `module` in a fresh Store on `tier` (with the code cache `cache`, if any, and the
// compile memory limit `compile_memory`) and runs `name` under `fuel` (none: unmetered).
inline Outcome run(const std::shared_ptr<const CompiledModule>& module, Tier tier, std::string_view name,
                   const std::vector<Value>& args, std::optional<std::uint64_t> fuel, StoreLimits limits = {},
                   std::shared_ptr<CodeCacheStorage> cache = nullptr,
                   std::uint64_t compile_memory = kDefaultCompileMemory) {
  Store store(limits);
  EXPECT_TRUE(store.set_tier(tier));
  store.set_code_cache(std::move(cache));
  store.set_compile_memory(compile_memory);
  FuncInst* add1 = store.add_host_function(FuncType{{ValType::I32}, {ValType::I32}}, host_add1, nullptr, "add1");
  Linker linker;
  linker.define("env", "add1", add1);
  auto imports = linker.resolve(module->module());
  EXPECT_TRUE(imports.has_value());
  store.set_budget({fuel, std::nullopt});
  auto inst = store.instantiate(module, *imports);
  EXPECT_TRUE(inst.has_value()) << (inst ? "" : inst.error().message);
  if (!inst) return {};
  auto e = (*inst)->find_export(name);
  EXPECT_TRUE(e.has_value()) << name;
  return outcome_of(store, store.invoke(std::get<FuncInst*>(*e), args));
}

// Dead code that keeps the function it is put in interpreted, for tests of mixed tiers: blocks
// nested past the compile budget's nesting depth (2000), each one branched out of, behind a
// condition that is always false. Every tier runs it as a skipped `if`.
// Flat instructions (the text format bounds folded nesting).
inline std::string kept_interpreted() {
  const std::string never = "ref.null func ref.is_null i32.eqz ";
  std::string s = "\n" + never + "if\n";
  for (int i = 0; i < 2001; ++i) s += "block " + never + "br_if 0\n";
  for (int i = 0; i < 2001; ++i) s += "end ";
  s += "end\n";
  return s;
}

// Runs `name`(arg) under both tiers and expects one Outcome; returns the interpreter's.
inline Outcome tiers_agree(const std::shared_ptr<const CompiledModule>& module, std::string_view name, Value arg,
                           std::optional<std::uint64_t> fuel) {
  const Outcome want = run(module, Tier::Interpret, name, {arg}, fuel);
  const Outcome got = run(module, Tier::Compile, name, {arg}, fuel);
  EXPECT_EQ(want, got) << name << "(" << arg.bits << ") fuel " << (fuel ? static_cast<long long>(*fuel) : -1);
  return want;
}

// The lines of the IR functions SPRAWLING_JIT_DUMP_IR wrote to `dir`, each with its function's
// name (`@wasm_f0`) and its block's label.
struct DumpedLine {
  std::string function;
  std::string block;
  std::string line;
};
inline std::vector<DumpedLine> dumped_ir(const std::filesystem::path& dir) {
  std::vector<DumpedLine> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    std::string line;
    std::string function;
    std::string block;
    while (std::getline(in, line)) {
      if (line.starts_with("define ")) {
        function = line.substr(line.find('@'), line.find('(') - line.find('@'));
        block.clear();
      } else if (line.starts_with("}") || line.starts_with("declare")) {
        function.clear();
      } else if (!line.empty() && !line.starts_with(" ") && line.find(':') != std::string::npos) {
        block = line.substr(0, line.find(':'));
      }
      if (!function.empty()) out.push_back({function, block, line});
    }
  }
  return out;
}

}  // namespace sprawling::wasm::jit_testing
