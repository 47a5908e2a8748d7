// Decode + validate: bytes → an immutable, validated Module, or the first error with its
// byte offset and the spec testsuite's wording.
#pragma once

#include "wasm/syntax/module.hpp"

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>

namespace sprawling::wasm {

struct CompileError {
  enum class Kind : std::uint8_t {
    Malformed,    // not a well-formed binary (assert_malformed): "unexpected end", "magic header not detected", …
    Invalid,      // well-formed but does not validate (assert_invalid): "type mismatch", "unknown global 3", …
    Unsupported,  // valid, but uses what this engine cannot execute yet (compile() only)
  };
  Kind kind = Kind::Malformed;
  std::string message;     // the spec testsuite's wording first, detail after: "type mismatch: instruction requires [i32] but stack has [i64]"
  std::size_t offset = 0;  // byte offset in the module binary where the problem was found
};

// The WebAssembly 3.0 features beyond 2.0 that can be switched off (Wasmtime's -W tail-call=n,
// -W extended-const=n, -W relaxed-simd=n, -W multi-memory=n, -W memory64=n, -W exceptions=n,
// -W function-references=n). A
// module using a disabled one does not validate, with a message naming the feature; with all off
// (wasm2()), validation is WebAssembly 2.0's (the 2.0 spec testsuite runs so).
struct Features {
  bool tail_call = true;       // return_call, return_call_indirect
  bool extended_const = true;  // i32/i64 add, sub, mul in constant expressions, and global.get of
                               // earlier-defined immutable globals there (2.0: imported ones only)
  bool relaxed_simd = true;    // the 20 relaxed SIMD instructions (fixed-width SIMD is Module::simd_use)
  bool multi_memory = true;    // more than one memory; memory indices in memargs and memory.*
  bool memory64 = true;        // memories with i64 addresses (`(memory i64 …)`), u64 memarg offsets,
                               // and 64-bit tables (table64: `(table i64 …)`, i64 indexes)
  bool exceptions = true;      // tags, exnref, throw, throw_ref, try_table (and the legacy try,
                               // catch, catch_all, rethrow, delegate); Wasmtime's -W exceptions
  bool function_references = true;  // typed function references: (ref null? ht) types, call_ref,
                                    // return_call_ref, ref.as_non_null, br_on_null, br_on_non_null,
                                    // table initialisers; Wasmtime's -W function-references
  bool gc = true;  // garbage collection: rec groups, sub types, struct/array types, GC's heap
                   // types and instructions (needs function_references); Wasmtime's -W gc
  // Not a language feature (the decoder ignores it): how the module's code is made. Every float
  // operation that may make a NaN gives the canonical NaN instead of one whose sign and payload
  // depend on the CPU (Wasmtime's -W nan-canonicalization), so results are bit-identical on
  // every machine and tier. Off by default, as in Wasmtime.
  bool nan_canonicalization = false;
  [[nodiscard]] static constexpr Features wasm2() noexcept {
    return Features{.tail_call = false, .extended_const = false, .relaxed_simd = false, .multi_memory = false,
                    .memory64 = false, .exceptions = false, .function_references = false,
                    .gc = false};
  }
  bool operator==(const Features&) const = default;
};

// Decodes and validates a whole module (WebAssembly 2.0 with fixed-width SIMD, plus `features`).
// A valid module that uses SIMD is accepted; Module::simd_use names its first use.
[[nodiscard]] std::expected<Module, CompileError> decode_and_validate(std::span<const std::uint8_t> bytes,
                                                                      Features features = {});
// The same, taking the bytes over instead of copying them into the Module.
[[nodiscard]] std::expected<Module, CompileError> decode_and_validate(std::vector<std::uint8_t>&& bytes,
                                                                      Features features = {});

// The same for bytes that this engine build has validated before (a snapshot file vouches for
// them: docs/python.md, "Loading without validating twice"): every section is decoded and every
// module-level rule checked as above, but function bodies are not read past their local
// declarations — neither validated nor scanned for SIMD (Module::simd_use stays empty).
// Only for bytes whose SHA-256 a certificate of this build names, validated with at least
// `features`: on any other bytes the translator may misbehave.
// [start-up] `bytes` may be a snapshot file's mapping of the module (ModuleBytes).
[[nodiscard]] std::expected<Module, CompileError> decode_validated_before(ModuleBytes&& bytes,
                                                                          Features features = {});

}  // namespace sprawling::wasm
