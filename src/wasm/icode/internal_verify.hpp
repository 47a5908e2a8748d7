// The verifier of translated code: checks, against the declaration (internal_ops.def), the
// invariants the interpreter relies on without checking them while it runs.
#pragma once

#include "wasm/icode/code.hpp"

#include <string>

namespace sprawling::wasm {

// Empty when `f` (translated for the metered interpreter or not) holds every invariant:
// - it splits into whole instructions of known ops, with the declared word counts;
// - every branch (BRANCH and TARGETS words) lands on an instruction start inside the code;
// - metered: the code starts with the entry FuelCheck, and every backward branch lands on a
//   FuelCheck (the interpreter's taken branch performs that check inline and skips it);
//   unmetered: no Fuel or FuelCheck at all;
// - every slot operand (DST, SRC) is inside the frame, every callee frame BASE at most its end;
// - trap sites are ascending instruction starts of ops that can trap, and every such op has one;
// - the last instruction does not fall through (Return, Br, BrTable or Unreachable).
// Otherwise the first violation found, naming the word.
[[nodiscard]] std::string verify_code(const CompiledFunc& f, bool metered);

// Whether translate_function verifies everything it makes (and aborts on a violation, an engine
// bug): on in debug builds (no NDEBUG), when the environment sets SPRAWLING_VERIFY_CODE=1 (the
// test suites do), or after set_code_verification(true) (the fuzz targets); off otherwise, so
// release production runs pay nothing.
[[nodiscard]] bool code_verification_enabled() noexcept;
void set_code_verification(bool on) noexcept;

}  // namespace sprawling::wasm
