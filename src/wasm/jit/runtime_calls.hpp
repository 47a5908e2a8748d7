// The functions compiled code calls (runtime_calls.cpp), by the names the compiler gives them in
// the JIT's symbol table, and the numeric helpers: one per simple operator, the interpreter's own
// num:: code, for the operators the compiler does not inline.
#pragma once

#include "wasm/icode/code.hpp"
#include "wasm/jit/jit.hpp"

#include <cstdint>
#include <span>
#include <string_view>

namespace sprawling::wasm::jit {

// A GC helper's "no slot" (struct.new_default, array.new_default).
inline constexpr std::uint32_t kGcNoSlot = 0xFFFFFFFFu;

extern "C" {
std::uint32_t sprawling_jit_refuel(Ctx* c, std::int64_t visible);
// Store::Impl::fuel_ahead on the counter in Ctx::fuel: 1 when the counter now holds `extra` more.
std::uint32_t sprawling_jit_fuel_ahead(Ctx* c, std::int64_t extra);
std::uint32_t sprawling_jit_call(Ctx* c, FuncInst* callee, std::uint64_t* nfp);
std::uint32_t sprawling_jit_call_indirect(Ctx* c, std::uint32_t type_index, std::uint32_t table_index,
                                          std::uint64_t element, std::uint64_t* nfp);
std::uint32_t sprawling_jit_memory_grow(Ctx* c, std::uint32_t delta);
// Tail calls (return_call, return_call_ref; return_call_indirect with its table checks): the
// interpreter's do_tail_call steps for `callee`, whose arguments are at nfp, in the frame at fp.
// A host callee runs there: 0 (its results at fp are the function's) or its trap. A wasm callee
// gets its entry made (stack check, refuel, entry charge, arguments moved to fp, locals zeroed)
// and is not run: kTailPending with Ctx::tail_callee set, or a trap of those checks.
std::uint32_t sprawling_jit_return_call(Ctx* c, FuncInst* callee, std::uint64_t* nfp, std::uint64_t* fp);
std::uint32_t sprawling_jit_return_call_indirect(Ctx* c, std::uint32_t type_index, std::uint32_t table_index,
                                                 std::uint64_t element, std::uint64_t* nfp, std::uint64_t* fp);
// A callee called natively at nfp returned kTailPending: runs Ctx::tail_callee there (and what it
// tail-calls) to its end, as the call's callee; 0 or a located trap.
std::uint32_t sprawling_jit_tail_resume(Ctx* c, std::uint64_t* nfp);
// Bulk memory and table instructions, as the interpreter's handlers: status as above.
std::uint32_t sprawling_jit_memory_fill(Ctx* c, std::uint32_t d, std::uint32_t value, std::uint32_t n);
std::uint32_t sprawling_jit_memory_copy(Ctx* c, std::uint32_t d, std::uint32_t s, std::uint32_t n);
std::uint32_t sprawling_jit_memory_init(Ctx* c, std::uint32_t seg, std::uint32_t d, std::uint32_t s, std::uint32_t n);
void sprawling_jit_data_drop(Ctx* c, std::uint32_t seg);
// A memory other than an i32 memory 0 (memidx `mem`): addresses and lengths in the memory's
// address type (u64 slots, read as the interpreter's MultiMemory handlers read them).
std::uint64_t sprawling_jit_memory_grow_m(Ctx* c, std::uint32_t mem, std::uint64_t delta);
std::uint32_t sprawling_jit_memory_fill_m(Ctx* c, std::uint32_t mem, std::uint64_t d, std::uint32_t value,
                                          std::uint64_t n);
std::uint32_t sprawling_jit_memory_copy_m(Ctx* c, std::uint32_t dst_mem, std::uint32_t src_mem, std::uint64_t d,
                                          std::uint64_t s, std::uint64_t n);
std::uint32_t sprawling_jit_memory_init_m(Ctx* c, std::uint32_t seg, std::uint32_t mem, std::uint64_t d,
                                          std::uint32_t s, std::uint32_t n);
// Tables: indexes and lengths as u64 slots (i32 ones zero-extended, table64's whole).
std::uint32_t sprawling_jit_table_get(Ctx* c, std::uint32_t t, std::uint64_t i, std::uint64_t* out);
std::uint32_t sprawling_jit_table_set(Ctx* c, std::uint32_t t, std::uint64_t i, std::uint64_t value);
std::uint32_t sprawling_jit_table_size(Ctx* c, std::uint32_t t);
std::uint32_t sprawling_jit_table_grow(Ctx* c, std::uint32_t t, std::uint64_t init, std::uint64_t n,
                                       std::uint64_t* out);
std::uint32_t sprawling_jit_table_fill(Ctx* c, std::uint32_t t, std::uint64_t i, std::uint64_t value, std::uint64_t n);
std::uint32_t sprawling_jit_table_copy(Ctx* c, std::uint32_t dt, std::uint32_t st, std::uint64_t d, std::uint64_t s,
                                       std::uint64_t n);
std::uint32_t sprawling_jit_table_init(Ctx* c, std::uint32_t seg, std::uint32_t t, std::uint64_t d, std::uint32_t s,
                                       std::uint32_t n);
void sprawling_jit_elem_drop(Ctx* c, std::uint32_t seg);
// Garbage collection (the Gc ops the compiled code does not inline): each calls the gc_ops.hpp
// operation the interpreter's handler calls, on the frame at fp: operand and result slots are
// indexes into it (the caller stores the operands there first and reloads the results);
// frame_slots bounds the value stack a collection scans. Status as above (a refused object is
// GcHeapLimit).
std::uint32_t sprawling_jit_ref_test(Ctx* c, std::uint64_t v, std::uint32_t heap, std::uint32_t flags);  // 0 or 1
std::uint32_t sprawling_jit_struct_new(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                       std::uint32_t base, std::uint32_t frame_slots);  // base kGcNoSlot: default
std::uint32_t sprawling_jit_array_new(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                      std::uint32_t init, std::uint32_t n_slot, std::uint32_t frame_slots);  // init kGcNoSlot: default
std::uint32_t sprawling_jit_array_new_fixed(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                            std::uint32_t base, std::uint32_t n, std::uint32_t frame_slots);
std::uint32_t sprawling_jit_array_new_data(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                           std::uint32_t data, std::uint32_t s_slot, std::uint32_t n_slot,
                                           std::uint32_t frame_slots);
std::uint32_t sprawling_jit_array_new_elem(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                           std::uint32_t elem, std::uint32_t s_slot, std::uint32_t n_slot,
                                           std::uint32_t frame_slots);
std::uint32_t sprawling_jit_array_fill(Ctx* c, std::uint64_t* fp, std::uint32_t ref, std::uint32_t d_slot,
                                       std::uint32_t val, std::uint32_t n_slot, std::uint32_t size);
std::uint32_t sprawling_jit_array_copy(Ctx* c, std::uint64_t* fp, std::uint32_t dref, std::uint32_t d_slot,
                                       std::uint32_t sref, std::uint32_t s_slot, std::uint32_t n_slot,
                                       std::uint32_t size);
std::uint32_t sprawling_jit_array_init_data(Ctx* c, std::uint64_t* fp, std::uint32_t data, std::uint32_t ref,
                                            std::uint32_t d_slot, std::uint32_t s_slot, std::uint32_t n_slot,
                                            std::uint32_t size);
std::uint32_t sprawling_jit_array_init_elem(Ctx* c, std::uint64_t* fp, std::uint32_t elem, std::uint32_t ref,
                                            std::uint32_t d_slot, std::uint32_t s_slot, std::uint32_t n_slot);
// Exception handling (docs/compiled-tier.md, "Exceptions"): a throw makes the exception as the
// interpreter's L_Throw does (tag `tag` of this instance, its values at `values`, the value stack
// live up to `top`) and leaves it pending in the store (Store::Impl::pending_exception, a root of
// every collection): the status is UncaughtException, or ExceptionLimit when the store's account
// refuses the object. throw_ref pends `exn`, or NullExceptionReference for a null one.
std::uint32_t sprawling_jit_throw(Ctx* c, std::uint32_t tag, const std::uint64_t* values, const std::uint64_t* top);
std::uint32_t sprawling_jit_throw_ref(Ctx* c, std::uint64_t exn);
// One catch clause against the pending exception: 0 when `tag` (this instance's tag index, or
// CatchClause::kAnyTag) does not match it; else its values are copied to `values` (when not
// null), the exception stops pending, and its handle (the exnref) is returned.
std::uint64_t sprawling_jit_catch(Ctx* c, std::uint32_t tag, std::uint64_t* values);
}

// A numeric helper: result slot bits of `op a b` (b ignored by unary ones); *trap set when it traps.
using NumHelper = std::uint64_t (*)(std::uint64_t a, std::uint64_t b, std::uint32_t* trap);
// Indexed by Op: the helper of each simple operator, null for other ops.
NumHelper num_helper(Op op) noexcept;

// A SIMD helper (`sprawling_jit_simd_<op>`): the interpreter's lane function of one SIMD op over the
// operand block io (v128 operands at io[0], io[2], io[4], as two slots each; a shuffle's lanes at
// io[4]), the result written to io[0..1] (a scalar result to io[0]); mem the accessed bytes (bounds
// checked by the caller), x a scalar operand, lane the lane immediate.
using SimdHelper = void (*)(std::uint64_t* io, std::uint8_t* mem, std::uint64_t x, std::uint32_t lane) noexcept;
// Indexed by Op: the helper of each SIMD op, null for other ops.
SimdHelper simd_helper(Op op) noexcept;

struct HelperSymbol {
  std::string_view name;
  void* address;
};
// Every runtime function above, for the JIT's symbol table.
std::span<const HelperSymbol> runtime_symbols();

}  // namespace sprawling::wasm::jit
