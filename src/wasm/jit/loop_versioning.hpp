// Loop versioning on range checks (private to the jit plugin): a loop whose trap checks
// (`x > limit` branching out of the loop, as every bounds check is) have addresses that move
// by a constant step each iteration gets a second, check-free copy. One test in the preheader
// proves every check of every iteration the loop can run would pass, from the loop's maximal
// trip count, and picks the copy; when it cannot prove it, the original loop runs with all its
// checks. Traps, their offsets and the memory they leave are therefore the original's by
// construction; the check-free copy is what LICM, IndVarSimplify and the backend then make fast.
// Before that, i32 counters the emitter left in i64 slots (`and (add phi, x), 0xFFFFFFFF`) are
// rewritten as i32 phis, so ScalarEvolution can count the loop.
#pragma once

namespace llvm {
class Function;
}

namespace sprawling::wasm::jit {

// Versions the innermost loops of `f` that qualify (at most a few per function, each at most a
// bounded size); returns how many it versioned. Loops not in loop-simplify form are left alone.
unsigned version_loops_on_range_checks(llvm::Function& f);

}  // namespace sprawling::wasm::jit
