// The unwinder the interpreter calls when an exception is thrown (unwind.cpp): it searches the
// handler regions of the frames on the interpreter's own frame stack, innermost first, and never
// unwinds through the host's frames. Private to the engine.
#pragma once

#include "wasm/runtime/store_impl.hpp"

#include <cstdint>

namespace sprawling::wasm {

// Exception `exn` raised at code word `at` of `func` (frame fp; frame records up to fr, the run's
// first at fr_base): the innermost handler of this run that catches it, its values written into
// the handler's frame; with skip_current the search starts at func's caller.
Caught find_handler(Store::Impl& store, std::uint64_t exn, const std::uint32_t* at, std::uint64_t* fp, FuncInst* func,
                    Frame* fr, const Frame* fr_base, int variant, bool skip_current);

}  // namespace sprawling::wasm
