// Self-recursive functions inlined into themselves (private to the jit plugin). A body that calls
// itself directly (the doubly recursive Fibonacci function, a tree walk, a recursive sort) pays
// the whole call protocol at every level: the native call and return, the callee-saved
// registers, the result's return. LLVM's inliner never inlines a function into itself; V8 does,
// a few levels, and runs such recursion faster than clang's native code. This pass copies the
// function and inlines the copy at each of its self-calls, so one native call covers two wasm
// calls (or four after a second round). Only the `call` instruction of the fast path is
// replaced: the call site's checks (stack and call depth, value-stack room, the fuel entry
// protocol) stay as the emitter made them, and the inlined code computes the callee's frame, its
// frame record and its counter as the callee would, so results, traps (the same function, the
// same offsets), the call depth at which recursion traps and fuel are the interpreter's.
#pragma once

namespace llvm {
class Function;
}  // namespace llvm

namespace sprawling::wasm::jit {

// Inlines `f` into its own direct calls while the function stays within `max_instructions` IR
// instructions, at most `max_rounds` times (each round doubles the levels one native call
// covers). Returns the rounds made.
unsigned inline_self_recursion(llvm::Function& f, unsigned max_instructions, unsigned max_rounds);

// Splits a self-recursive `f` whose entry either returns at once, with no side effect (the base
// case), or goes on: `f` keeps the test and the base case and tail-calls a copy with the rest,
// whose self-calls test the base case inline. False (and `f` unchanged) when `f` has no such
// shape or more than `max_instructions` IR instructions.
bool peel_base_case(llvm::Function& f, unsigned max_instructions);

}  // namespace sprawling::wasm::jit
