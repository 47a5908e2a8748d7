// The interpreter's entry points (interpreter.cpp): running a wasm function's internal code, calling
// a host function, and the handler offsets that name an instruction's op in translated code.
// Private to the engine.
#pragma once

#include "wasm/runtime/store_impl.hpp"

#include <cstdint>

namespace sprawling::wasm {

// Runs `func` (its arguments in the store's stack at frame 0) to completion, a trap or an
// uncaught exception, metered or not.
template <bool Metered>
void execute(Store::Impl& store, FuncInst* func, ExecOutcome& out);
// Calls host function `callee` with its arguments at nfp; results written back there (interpreter.cpp).
HostStatus call_host(const FuncInst& callee, std::uint64_t* nfp, MemoryView memory, ExecOutcome& out);

// Handler offsets from the interpreter's base label, per variant (interpreter.cpp).
const std::int32_t* handler_offsets(bool metered);

}  // namespace sprawling::wasm
