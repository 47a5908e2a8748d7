// The fuzz module generator: turns arbitrary input bytes into a *valid* WebAssembly module
// (typed expression trees, bounded loops, calls, call_indirect, tail calls, memory and bulk ops,
// fixed-width SIMD, exception handling, typed function references and GC), so the
// run and differential targets reach execution instead of stopping at the validator.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sprawling::fuzz {

struct GenOptions {
  // For differential runs: no operation whose result may legitimately differ between engines
  // (NaN payloads leaking into integers or memory through reinterpret or float stores).
  bool deterministic_only = false;
  // For the tiers target (interpreter against compiled tier): f32/f64 add, sub, mul and div whose
  // operands are *both* NaN give the canonical NaN, and so do such lanes of f32x4/f64x2 add, sub,
  // mul and div. There the spec allows any arithmetic NaN and
  // x86 returns the first source operand's payload, so the result depends on which operand each
  // compiler put first; with one NaN operand the hardware propagates it whatever the order, so
  // every other NaN stays as computed and is compared bit for bit, also through reinterprets,
  // float stores and copysign, which this mode keeps.
  bool canonical_nan_pairs = false;
  // Tail calls (return_call, return_call_indirect).
  bool tail_calls = true;
  // Fixed-width SIMD: v128 locals, constants, splats, lane extracts and replaces, shuffles, the
  // lane operators, v128 loads and stores (plain, splat, extend, zero, lane), each tree of them
  // ending in a scalar (extract_lane, any_true, all_true, bitmask), so exports keep scalar types.
  // Under deterministic_only no operator producing float lanes (their NaN payloads may differ
  // between engines) and no float splat or replace (a float expression's NaN payload would
  // reach integer lanes). Relaxed SIMD is never generated.
  bool simd = true;
  // Multiple memories and memory64 (WebAssembly 3.0): with multi_memory a second memory, which
  // loads, stores and memory.* address by index; with memory64 as well, that memory is sometimes
  // 64-bit (i64 addresses, offsets past 2^32, addresses near 2^64 that must trap, not wrap).
  // Memory 0 stays i32. With memory64 the table is sometimes 64-bit (table64: call_indirect and
  // return_call_indirect take i64 indexes, some of them 2^32 + k, which must trap, not reach
  // slot k).
  bool multi_memory = true;
  bool memory64 = true;
  // Exception handling (WebAssembly 3.0 and the legacy form): two tags (one with no values, one
  // with an i32), `throw` of either, `try_table` with catch, catch_ref, catch_all and
  // catch_all_ref clauses (a caught i32 goes to global 0), `throw_ref` of a caught exnref, and the
  // legacy try/catch/catch_all/rethrow/delegate. Off by default (the other targets' corpora and
  // wasm-interp predate it); the tiers target turns it on.
  bool exceptions = false;
  // Typed function references and GC (WebAssembly 3.0): a struct type (mutable i32 and i64
  // fields) and two array types (mutable i32, mutable packed i8); locals of structref, arrayref,
  // eqref and funcref; struct.new/new_default/get/set, array.new/new_default/new_fixed/get
  // (plain, _s, _u)/set/len/fill/copy, ref.i31 and i31.get_s/_u, ref.test and ref.cast (null and
  // non-null, concrete and abstract targets, so casts fail and trap), ref.eq, ref.is_null,
  // ref.as_non_null, br_on_null and br_on_non_null, ref.func and call_ref (directly, or through
  // a funcref local cast to the callee's type). Off by default (wasm-interp has none of it); the
  // tiers target turns it on.
  bool gc = false;
  // After each function's results, while input is left: a counted loop through memory 0, each
  // round a store or a load at base + counter * stride (strides up and down, counts both sides
  // of 16, bases near both ends of memory and past them), the shape the compiled tier runs
  // without bounds checks once its entry test proves them. Off by default; the tiers target
  // turns it on. An input used up by the body gives the module it gave before the option.
  bool strided_loops = false;
};

struct GeneratedModule {
  std::vector<std::uint8_t> binary;
  std::uint32_t function_count = 0;  // every function is exported as "f<index>", in order
};

[[nodiscard]] GeneratedModule generate_module(std::span<const std::uint8_t> input, const GenOptions& options);

// The fuel given to each exported-function call by the run and diff targets.
inline constexpr std::uint64_t kFuelPerCall = 200'000;
// Memory bounds of generated modules: 1 page initially, at most 4 (and a 1 MiB store cap).
inline constexpr std::uint64_t kMemoryCapBytes = std::uint64_t{1} << 20;

}  // namespace sprawling::fuzz
