// The translator (translator.cpp): one validated function body into internal code (code.hpp).
// Private to the engine.
#pragma once

#include "wasm/icode/code.hpp"
#include "wasm/syntax/module.hpp"

#include <cstdint>
#include <span>

namespace sprawling::wasm {

// Translates defined function `defined_index` of a validated module, for the metered interpreter
// or not; `canonical_type` maps each type index to the first index of an equal type.
CompiledFunc translate_function(const Module& module, std::span<const std::uint32_t> canonical_type,
                                std::uint32_t defined_index, bool metered);

}  // namespace sprawling::wasm
