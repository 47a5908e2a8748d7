// v128 values carried through phis as one vector (private to the jit plugin). The emitter keeps a
// v128 as its two 64-bit frame slots, so after SROA a v128 local that a loop carries (an
// accumulator, a vector induction variable) is two i64 phis: each iteration puts the halves
// together into a <2 x i64> for its first vector op and takes them apart again after its last,
// two inserts and two extracts on the loop's critical path per value. Where both halves of a pair
// of phis come, on every edge, from the two lanes of one vector (or from constants, or from the
// pair itself), the pair becomes one <2 x i64> phi; InstCombine then folds the inserts and
// extracts away.
#pragma once

namespace llvm {
class Function;
}  // namespace llvm

namespace sprawling::wasm::jit {

// Joins every qualifying pair of i64 phis of `f` into one vector phi; returns how many it joined.
unsigned join_v128_phis(llvm::Function& f);

}  // namespace sprawling::wasm::jit
