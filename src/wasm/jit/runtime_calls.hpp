// The functions compiled code calls (runtime_calls.cpp), by the names the compiler gives them in
// the JIT's symbol table, and the numeric helpers: one per simple operator, the interpreter's own
// num:: code, for the operators the compiler does not inline.
#pragma once

#include "wasm/code.hpp"
#include "wasm/jit/jit.hpp"

#include <cstdint>
#include <span>
#include <string_view>

namespace sprawling::wasm::jit {

extern "C" {
std::uint32_t sprawling_jit_refuel(Ctx* c, std::int64_t visible);
std::uint32_t sprawling_jit_call(Ctx* c, FuncInst* callee, std::uint64_t* nfp);
std::uint32_t sprawling_jit_call_indirect(Ctx* c, std::uint32_t type_index, std::uint32_t table_index,
                                          std::uint32_t element, std::uint64_t* nfp);
std::uint32_t sprawling_jit_memory_grow(Ctx* c, std::uint32_t delta);
}

// A numeric helper: result slot bits of `op a b` (b ignored by unary ones); *trap set when it traps.
using NumHelper = std::uint64_t (*)(std::uint64_t a, std::uint64_t b, std::uint32_t* trap);
// Indexed by Op: the helper of each simple operator, null for other ops.
NumHelper num_helper(Op op) noexcept;

struct HelperSymbol {
  std::string_view name;
  void* address;
};
// Every runtime function above, for the JIT's symbol table.
std::span<const HelperSymbol> runtime_symbols();

}  // namespace sprawling::wasm::jit
