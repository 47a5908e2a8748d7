// The disassembler of translated code: the text `sprawl inspect --internal` prints, one line per
// instruction, driven by the declaration (internal_ops.def). See docs/interpreter.md.
#pragma once

#include "wasm/runtime/runtime.hpp"
#include "wasm/syntax/module.hpp"

#include <cstdint>
#include <string>

namespace sprawling::wasm {

struct CompiledFunc;  // wasm/icode/code.hpp, private to the engine

// The text of `f`, function `func_index` (index space: imports first) of `module`, translated
// for the metered interpreter or not. A header line, then per instruction its first word, op and
// operands by name: slots as p<i> (parameters), l<i> (declared locals), t<i> (operand-stack
// temporaries); branch offsets with their target word; fuel words as segment costs; `traps @0x..`
// with the wasm byte offset of each trap site. Code that does not decode ends in an error line.
[[nodiscard]] std::string disassemble(const Module& module, std::uint32_t func_index, const CompiledFunc& f,
                                      bool metered);

// The same for defined function `func_index` of `module`, translated on demand (only the functions
// asked for are); for callers outside the engine, which see no CompiledFunc.
[[nodiscard]] std::string disassemble(const CompiledModule& module, std::uint32_t func_index, bool metered);

}  // namespace sprawling::wasm
