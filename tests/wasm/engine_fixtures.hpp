// Shared helpers of the engine tests: load a WAT fixture assembled at build time, compile it,
// and call exports with plain integers.
#pragma once

#include "wasm/runtime.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
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

inline FuncInst* export_func(const Instance& inst, std::string_view name) {
  auto e = inst.find_export(name);
  EXPECT_TRUE(e.has_value()) << "no export " << name;
  return e ? std::get<FuncInst*>(*e) : nullptr;
}

inline HostStatus host_nop(HostCall&) { return HostStatus::Ok; }

}  // namespace sprawling::wasm::testing
