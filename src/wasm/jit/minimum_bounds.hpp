// Bounds checks no access can fail (private to the jit plugin). A memory never has fewer bytes
// than its type's minimum: instantiation gives it that many (an imported memory at least as many,
// import matching checks it) and nothing shrinks it. So an access whose end is at most that
// minimum, whatever the values it is computed from, is in bounds: a lookup in a static table,
// `table[x & 0xFF]`, is one. The emitter tags each bounds check it makes (`icmp ugt end, size`)
// with the memory's minimum in bytes (kMinimumBytesKind); once SROA has made the slots SSA values,
// this pass folds every tagged check whose end's known bits bound it by that minimum to false.
#pragma once

namespace llvm {
class Function;
}  // namespace llvm

namespace sprawling::wasm::jit {

// The metadata kind of the tag: one i64 operand, the memory's minimum size in bytes.
inline constexpr const char* kMinimumBytesKind = "sprawling.minimum_bytes";

// Folds every tagged check of `f` that no access can fail; returns how many it folded.
unsigned fold_checks_below_minimum(llvm::Function& f);

}  // namespace sprawling::wasm::jit
