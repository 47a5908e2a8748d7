// Shared helpers of the engine tests: load a WAT fixture assembled at build time (or compile a
// module written as text, for features Debian's wat2wasm predates), and call exports.
#pragma once

#include "wasm/runtime/runtime.hpp"
#include "wasm/text/wat.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm::testing {

inline std::vector<std::uint8_t> fixture_bytes(const std::string& stem) {
  std::ifstream in(std::string(SPRAWLING_WASM_FIXTURES) + "/" + stem + ".wasm", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::shared_ptr<const CompiledModule> compile_fixture(const std::string& stem) {
  const auto bytes = fixture_bytes(stem);
  EXPECT_FALSE(bytes.empty()) << "fixture " << stem << " missing";
  auto compiled = compile(bytes);
  EXPECT_TRUE(compiled.has_value()) << (compiled ? "" : compiled.error().message);
  return compiled ? *compiled : nullptr;
}

// A module given as text, through this engine's own text front end (wabt 1.0.32 lacks exnref,
// try_table, table64).
inline std::shared_ptr<const CompiledModule> compile_text(std::string_view wat) {
  auto bin = text::wat_to_binary(wat);
  EXPECT_TRUE(bin.has_value()) << (bin ? "" : bin.error().to_string());
  if (!bin) return nullptr;
  auto m = compile(*bin);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().message);
  return m ? *m : nullptr;
}

inline FuncInst* export_func(const Instance& inst, std::string_view name) {
  auto e = inst.find_export(name);
  EXPECT_TRUE(e.has_value()) << "no export " << name;
  return e ? std::get<FuncInst*>(*e) : nullptr;
}

inline HostStatus host_nop(HostCall&) { return HostStatus::Ok; }

}  // namespace sprawling::wasm::testing
