// The translator (translator.cpp): one validated function body into internal code (code.hpp).
// Private to the engine.
#pragma once

#include "wasm/icode/code.hpp"
#include "wasm/syntax/module.hpp"

#include <cstdint>
#include <span>

namespace sprawling::wasm {

// Translates defined function `defined_index` of a validated module, for the metered interpreter
// or not; `canonical_type` maps each type index to the first index of an equal type. With
// `nan_canonical` (Features::nan_canonicalization) every float operation that may make a NaN is
// followed by a CanonF32/CanonF64 (VCanonF32x4/VCanonF64x2 for the two SIMD conversions whose NaN
// lanes keep their payload; every other SIMD float op gives canonical NaNs already).
CompiledFunc translate_function(const Module& module, std::span<const std::uint32_t> canonical_type,
                                std::uint32_t defined_index, bool metered, bool nan_canonical = false);

}  // namespace sprawling::wasm
