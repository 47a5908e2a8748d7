// A table64 module shared by the fuel tests of both tiers (tests/wasm/interp/interpreter_test.cpp,
// tests/jit/compiler_test.cpp): "grow" runs ten instructions, then a table.grow of its argument.
// Grown by 2^63 elements or more, that table.grow charges the most fuel a counter holds, with the
// counter already overdrawn by its segment's charge on a small budget.
#pragma once

#include <string_view>

namespace sprawling::wasm::fuel_testing {

constexpr std::string_view kTable64GrowModule = R"((module
  (table $t i64 1 funcref)
  (func (export "grow") (param i64) (result i64)
    (drop (i64.add (i64.mul (local.get 0) (i64.const 3)) (i64.const 1)))
    (drop (i64.add (i64.mul (local.get 0) (i64.const 5)) (i64.const 7)))
    (table.grow $t (ref.null func) (local.get 0)))))";

}  // namespace sprawling::wasm::fuel_testing
