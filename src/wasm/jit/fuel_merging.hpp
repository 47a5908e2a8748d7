// Fuel checks merged into the call that follows them (private to the jit plugin). In metered
// code a loop header checks the counter (`fuel - visible <= 0`: refuel) and a call soon after
// checks it again on its fast path (`fuel - charges <= 1`: the slow path, which refuels); a
// recursive function's loop (clang turns `f(n-1) + f(n-2)` into one) pays both on every call.
// Where the call's test is in the block the header's check leads to, the header tests once for
// enough fuel for both and, when it has it, runs a copy of that block whose call test knows its
// fuel part false; below that, the checks run as written, in order, on a copy of the block. So
// refuels, out-of-fuel traps and the counter are the interpreter's by construction.
#pragma once

#include <llvm/ADT/StringRef.h>

namespace llvm {
class BasicBlock;
class Function;
class Instruction;
}  // namespace llvm

namespace sprawling::wasm::jit {

// The helper a metered fuel check's cold path calls (emitter.hpp), and whether `bb` calls it:
// how this pass and loop versioning's fuel proofs find the emitter's fuel checks.
constexpr llvm::StringLiteral kRefuelHelper = "sprawling_jit_refuel";
bool is_refuel_call(const llvm::Instruction& i);
bool calls_refuel(const llvm::BasicBlock& bb);

// Merges the fuel checks of `f` that qualify (each copied block at most a bounded size); returns
// how many it merged.
unsigned merge_fuel_checks_into_calls(llvm::Function& f);

// A loop header's fuel check (`counter < a`: refuel) followed by the block's charge
// (`counter - c`, c >= a) becomes a test of the charged counter's sign (`counter - c < 0`), which
// code generation makes from the subtraction's own flags: one instruction fewer per iteration.
// When the sign is negative a new cold block makes the check as written (counter < a: refuel;
// else on with the charged counter), so refuels, traps and the counter are the interpreter's.
// Runs last (the passes before read the checks as the emitter made them); returns how many it
// rewrote.
unsigned test_fuel_after_charge(llvm::Function& f);

}  // namespace sprawling::wasm::jit
