// The interpreter: one dispatch function over the internal code (code.hpp), threaded with
// computed goto, instantiated twice (unmetered / metered). Wasm calls push a Frame record and
// never recurse natively; the hot state (ip, fp, memory base and size, fuel) lives in locals.
#include "wasm/interp/interpreter.hpp"

#include "wasm/icode/code.hpp"
#include "wasm/interp/unwind.hpp"
#include "wasm/runtime/heap/gc_ops.hpp"
#include "wasm/exec/numeric.hpp"
#include "wasm/exec/relaxed_simd.hpp"
#include "wasm/exec/simd.hpp"
#include "wasm/runtime/store_impl.hpp"
#if SPRAWLING_WITH_JIT
#include "wasm/jit/jit.hpp"
#endif

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

// Labels-as-values is a GNU extension; it is confined to this file.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"

namespace sprawling::wasm {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i32 = std::int32_t;
using i64 = std::int64_t;

// A memory access's bytes (memory_access.def) as the C integer of that size, unsigned or signed.
template <unsigned Bytes>
using AccessU = std::conditional_t<Bytes == 1, std::uint8_t,
                                   std::conditional_t<Bytes == 2, std::uint16_t, std::conditional_t<Bytes == 4, u32, u64>>>;
template <unsigned Bytes>
using AccessS = std::make_signed_t<AccessU<Bytes>>;

template <class T>
inline T get(u64 s) noexcept {
  if constexpr (std::is_same_v<T, u32>) return static_cast<u32>(s);
  else if constexpr (std::is_same_v<T, u64>) return s;
  else if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(static_cast<u32>(s));
  else return std::bit_cast<double>(s);
}
template <class T>
inline u64 put(T v) noexcept {
  if constexpr (std::is_same_v<T, u32>) return v;
  else if constexpr (std::is_same_v<T, u64>) return v;
  else if constexpr (std::is_same_v<T, float>) return std::bit_cast<u32>(v);
  else return std::bit_cast<u64>(v);
}
template <class T>
inline T imm(u32 w) noexcept {
  if constexpr (std::is_same_v<T, u32>) return w;
  else return static_cast<u64>(static_cast<i64>(static_cast<i32>(w)));
}

// Refuels by value, so that `fuel` never has its address taken and can live in a register.
struct Refuelled {
  i64 fuel;
  TrapKind trap;
};
[[gnu::cold]] [[gnu::noinline]] Refuelled refuel_value(Store::Impl* S, i64 fuel, i64 visible) {
  const TrapKind k = S->refuel(fuel, visible);
  return {fuel, k};
}

template <class T>
inline T fimm(const u32* w) noexcept {
  if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(w[0]);
  else return std::bit_cast<double>(static_cast<u64>(w[0]) | (static_cast<u64>(w[1]) << 32));
}

}  // namespace

// Calls a host function whose arguments sit at nfp and writes its results back there. Kept out
// of the dispatch function so that nothing with a destructor lives in the computed-goto scope
// (an indirect goto out of it would skip the destructor; clang rejects it, GCC leaks).
// Also the compiled tier's way to host functions (store_impl.hpp).
[[gnu::noinline]] HostStatus call_host(const FuncInst& callee, u64* nfp, MemoryView memory, ExecOutcome& out) {
  u64 result_buffer[16];
  std::vector<u64> big;
  u64* results = result_buffer;
  if (callee.num_results > 16) {
    big.resize(callee.num_results);
    results = big.data();
  }
  HostCall hc{std::span<const u64>(nfp, callee.num_params), std::span<u64>(results, callee.num_results), memory,
              callee.host_context, {}, 0};
  const HostStatus st = callee.host(hc);
  if (st != HostStatus::Ok) {
    out.host_message = std::move(hc.trap_message);
    out.exit_code = hc.exit_code;
    return st;
  }
  // i32/f32 slots keep their upper half zero (i64.extend_i32_u relies on it), whatever the host wrote.
  for (u32 i = 0; i < callee.num_results; ++i) {
    const ValType t = callee.type->results[i];
    nfp[i] = (t == ValType::I32 || t == ValType::F32) ? static_cast<u32>(results[i]) : results[i];
  }
  return HostStatus::Ok;
}

namespace {

// Aligned to a cache line, and its handlers to 32 bytes (-falign-labels, src/CMakeLists.txt), so
// that where the linker happens to place it does not move the handlers against the front end's
// fetch blocks: that alone made the same object code 15-25% slower or faster on single programs.
template <bool Metered>
[[gnu::noinline, gnu::aligned(64)]] void run(Store::Impl* store, FuncInst* entry_func, ExecOutcome* out_arg, std::int32_t* offsets_out) {
  // One label per op, in Op order (both generated from internal_ops.def).
  static const void* const kLabels[] = {
#define SPRAWLING_OP(Name, Layout, Family, Variant, Trap, Segment) &&L_##Name,
#include "wasm/icode/internal_ops.def"
#undef SPRAWLING_OP
  };
  static_assert(sizeof(kLabels) / sizeof(kLabels[0]) == kOpCount);
  char* const base = static_cast<char*>(&&L_Unreachable);
  if (offsets_out != nullptr) {
    for (std::size_t i = 0; i < kOpCount; ++i)
      offsets_out[i] = static_cast<std::int32_t>(static_cast<const char*>(kLabels[i]) - base);
    return;
  }

  // The current function is needed only by calls, returns and traps: kept in memory (volatile)
  // so that the registers go to the hot state.
  FuncInst* volatile func = entry_func;
  Store::Impl* volatile const S = store;
  ExecOutcome* volatile const out = out_arg;
  // Hot state.
  const u32* ip = entry_func->entry[Metered ? 1 : 0];
  u64* fp = S->entry_fp;
  // Call-path state, also kept in memory: only calls and returns touch it.
  struct CallState {
    u64* stack_end;
    Frame* fr_base;
    Frame* fr_end;
    Frame* fr;
  };
  volatile CallState cs{S->stack + S->limits.max_value_stack_slots, S->entry_frame,
                        S->frames + S->limits.max_call_depth, S->entry_frame};
#define stack_end (cs.stack_end)
#define fr_base (cs.fr_base)
#define fr_end (cs.fr_end)
  // Metered code also keeps the fuel counter in a register; the instance (globals, tables,
  // calls) then yields its register to the memory base and size.
  std::conditional_t<Metered, InstanceImpl* volatile, InstanceImpl*> inst = entry_func->instance;
  std::uint8_t* mem = inst->memory0->base;
  u64 memsize = inst->memory0->size;
  i64 fuel = S->counter;
  TrapKind trap = TrapKind::None;

  // Call sequence state shared by call / call_indirect.
  FuncInst* callee = nullptr;
  u64* nfp = nullptr;
  const u32* ret_ip = nullptr;
  // Exception in flight (do_throw): its handle, and whether the search starts at the caller.
  u64 thrown = 0;
  bool throw_from_caller = false;
  // Where it was thrown: an exception nobody catches is located there (as a trap would be).
  FuncInst* throw_func = nullptr;
  const u32* throw_ip = nullptr;

#define DISPATCH() goto* static_cast<void*>(base + static_cast<i32>(*ip))
#define NEXT(n)  \
  do {           \
    ip += (n);   \
    DISPATCH();  \
  } while (0)
#define SLOT(n) fp[ip[n]]
  // A conditional branch not taken: metered code charges the fall-through segment (word n).
#define FALLTHROUGH(n)            \
  do {                            \
    if constexpr (Metered) {      \
      fuel -= ip[n];              \
      NEXT((n) + 1);              \
    } else {                      \
      NEXT(n);                    \
    }                             \
  } while (0)
  // A taken branch. Metered code: every backward branch lands on a loop header's FuelCheck
  // [cost visible=0] (the verifier checks it); when the balance is positive it is done here,
  // saving a dispatch. Every backward branch also counts down loop_samples (LOOP_SAMPLE).
#define JUMP(off)                                                    \
  do {                                                               \
    const i32 off_ = static_cast<i32>(off);                          \
    ip += off_;                                                      \
    if (off_ < 0) {                                                  \
      if constexpr (Metered) {                                       \
        if (fuel > 0) {                                              \
          fuel -= ip[layout::FuelCheck::cost];                       \
          ip += layout::FuelCheck::kWords;                           \
          LOOP_SAMPLE(); /* past the check: where OSR continues */   \
        }                                                            \
      } else {                                                       \
        LOOP_SAMPLE();                                               \
      }                                                              \
    }                                                                \
    DISPATCH();                                                      \
  } while (0)
  // Tier-up's loop samples (SPRAWLING_WITH_JIT): every kLoopSample backward branches, the
  // function running then is counted as if called jit::kLoopSampleCalls times more
  // (L_loop_sample), so one called rarely but looping long turns hot too and is entered as machine code at its next call. The
  // counter lives in memory (volatile) so that it takes no register from the hot state; one
  // decrement per backward branch is all the interpreter tier pays.
#if SPRAWLING_WITH_JIT
  constexpr i32 kLoopSample = 1024;
  volatile i32 loop_samples = kLoopSample;
#define LOOP_SAMPLE()                                           \
  do {                                                          \
    const i32 left_ = loop_samples - 1;                          \
    loop_samples = left_;                                       \
    if (left_ == 0) [[unlikely]] goto L_loop_sample;            \
  } while (0)
#else
#define LOOP_SAMPLE() \
  do {                \
  } while (0)
#endif
  // The `post` word of the call (Call or CallIndirect, both with it last) that returns to ip.
  static_assert(layout::Call::post == layout::Call::kWords - 1 &&
                layout::CallIndirect::post == layout::CallIndirect::kWords - 1);
#define POST_CALL_FUEL(ret) (ret)[-1]
#define TRAP(k)        \
  do {                 \
    trap = (k);        \
    goto L_trap;       \
  } while (0)
#define REFUEL(visible)                                      \
  do {                                                       \
    const Refuelled r_ = refuel_value(S, fuel, (visible));   \
    fuel = r_.fuel;                                          \
    if (r_.trap != TrapKind::None) TRAP(r_.trap);            \
  } while (0)
#define RELOAD_MEMORY()            \
  do {                             \
    mem = inst->memory0->base;     \
    memsize = inst->memory0->size; \
  } while (0)
  // Bulk operations: charge per unit after the bounds check, then check the balance.
#define CHARGE_UNITS(n)                                                              \
  do {                                                                               \
    if constexpr (Metered) {                                                         \
      fuel = fuel_minus(fuel, static_cast<u64>(n));                                  \
      if (fuel <= 0) [[unlikely]] {                                                  \
        REFUEL(0);        \
      }                                                                              \
    }                                                                                \
  } while (0)

  // ---- compiled-tier hook (SPRAWLING_WITH_JIT): a callee with machine code runs there, its
  // entry protocol (stack check, entry fuel, frame record, zeroed locals) made here as always.
  // A callee with a slot but no machine code yet is counted for tier-up (jit.hpp): the countdown
  // reaching 0 queues it for compilation, and a later call finds its entry. Functions without a
  // slot (the interpreter tier, auto without code) pay only the null test, as before.
#if SPRAWLING_WITH_JIT
// An exception a compiled callee lets out (UncaughtException, the exception pending in the
// store) runs `on_exception_`, which continues unwinding in this run's frames.
#define JIT_ENTER(callee_, nfp_, then_, on_exception_)                                               \
  do {                                                                                             \
    jit::Slot* slot_ = (callee_)->jit[Metered ? 1 : 0];                                            \
    if (slot_ != nullptr) {                                                                        \
      const jit::Entry e_ = slot_->entry.load(std::memory_order_acquire);                         \
      if (e_ == nullptr) {                                                                         \
        const std::int32_t left_ = slot_->countdown.load(std::memory_order_relaxed) - 1;          \
        slot_->countdown.store(left_, std::memory_order_relaxed);                                  \
        if (left_ <= 0) [[unlikely]]                                                               \
          jit::tier_up_hot(*(callee_), Metered ? kMetered : kUnmetered);                           \
      } else if (jit::native_stack_ok()) {                                                         \
        const jit::Result r_ = jit::enter(e_, *S, (callee_), (nfp_), cs.fr, fuel, *out, Metered);  \
        fuel = r_.fuel;                                                                            \
        if (r_.tail != nullptr) {                                                                  \
          /* it tail-called a function it did not enter: that runs here, in its frame */           \
          fp = (nfp_);                                                                             \
          callee = r_.tail;                                                                        \
          RELOAD_MEMORY();                                                                         \
          goto do_tail_enter;                                                                      \
        }                                                                                          \
        if (r_.trap == TrapKind::UncaughtException) {                                              \
          thrown = S->pending_exception;                                                           \
          throw_func = r_.func;                                                                    \
          throw_ip = r_.ip;                                                                        \
          on_exception_;                                                                           \
        }                                                                                          \
        if (r_.trap != TrapKind::None) {                                                           \
          func = r_.func;                                                                          \
          ip = r_.ip;                                                                              \
          TRAP(r_.trap);                                                                           \
        }                                                                                          \
        then_;                                                                                     \
      }                                                                                            \
    }                                                                                              \
  } while (0)
#else
#define JIT_ENTER(callee_, nfp_, then_, on_exception_) \
  do {                                                 \
  } while (0)
#endif
  // ---- end of the compiled-tier hook

  // A compiled function's pending tail call (jit::run_pending) made this entry already.
  const bool entry_made = S->entry_made;
  S->entry_made = false;
  if (!entry_made && static_cast<u64>(stack_end - fp) < entry_func->frame_slots) {
    trap = TrapKind::CallStackExhausted;
    out->func = func;
    out->ip = ip;
    out->trap = trap;
    return;
  }
  if (!entry_made) {
    for (u32 i = entry_func->num_params; i < entry_func->num_locals; ++i) fp[i] = 0;
    if constexpr (Metered) {
      if (fuel <= 1) [[unlikely]] REFUEL(1);
      fuel -= entry_func->entry_fuel;
    }
  }
  JIT_ENTER(entry_func, fp, goto L_done, {});  // compiled tier (an exception leaves this run as it came)
  DISPATCH();

L_Unreachable:
  TRAP(TrapKind::Unreachable);
L_Br:
  JUMP(ip[layout::Jump::off]);
L_BrIf:
  if (static_cast<u32>(SLOT(layout::CondJump::cond)) != 0) JUMP(ip[layout::CondJump::off]);
  FALLTHROUGH(layout::CondJump::fall);
L_BrUnless:
  if (static_cast<u32>(SLOT(layout::CondJump::cond)) == 0) JUMP(ip[layout::CondJump::off]);
  FALLTHROUGH(layout::CondJump::fall);
L_BrTable: {
  using L = layout::JumpTable;
  u32 i = static_cast<u32>(SLOT(L::idx));
  const u32 n = ip[L::n];
  if (i > n) i = n;
  ip += static_cast<i32>(ip[L::targets + i]);
  DISPATCH();
}
L_Copy:
  SLOT(layout::Copy::dst) = SLOT(layout::Copy::src);
  NEXT(layout::Copy::kWords);
L_CanonF32: {
  const u64 v = SLOT(layout::Unary::a);
  SLOT(layout::Unary::dst) = num::nan_canonical_f32(static_cast<u32>(v));
  NEXT(layout::Unary::kWords);
}
L_CanonF64:
  SLOT(layout::Unary::dst) = num::nan_canonical_f64(SLOT(layout::Unary::a));
  NEXT(layout::Unary::kWords);
L_Copy2:
  SLOT(layout::Copy2::dst0) = SLOT(layout::Copy2::src0);
  SLOT(layout::Copy2::dst1) = SLOT(layout::Copy2::src1);
  NEXT(layout::Copy2::kWords);
L_Const32:
  SLOT(layout::Const32::dst) = ip[layout::Const32::imm];
  NEXT(layout::Const32::kWords);
L_Const64:
  SLOT(layout::Const64::dst) =
      static_cast<u64>(ip[layout::Const64::value]) | (static_cast<u64>(ip[layout::Const64::value_hi_]) << 32);
  NEXT(layout::Const64::kWords);
L_Call:
  callee = inst->funcs[ip[layout::Call::func]];
  nfp = fp + ip[layout::Call::base];
  ret_ip = ip + layout::Call::kWords;
  goto do_call;
// call_indirect and return_call_indirect: the callee from table L::table at slot L::idx, with
// the same traps in the same order; then the arguments' base. Table indexes are read as u64 (an
// i32 one is zero-extended in its slot, a 64-bit table's is whole) and a table has fewer than
// 2^32 elements (max_table_elements is a u32), so one compare serves both address types.
#define INDIRECT_CALLEE(L)                                                                            \
  do {                                                                                                \
    TableInst* t_ = inst->tables[ip[L::table]];                                                       \
    const u64 i_ = SLOT(L::idx);                                                                      \
    if (i_ >= t_->elements.size()) [[unlikely]] TRAP(TrapKind::UndefinedElement);                     \
    callee = reinterpret_cast<FuncInst*>(t_->elements[i_]);                                           \
    if (callee == nullptr) [[unlikely]] {                                                             \
      out->element_index = static_cast<u32>(i_);                                                      \
      TRAP(TrapKind::UninitializedElement);                                                           \
    }                                                                                                 \
    const FuncType* want_ = inst->types[ip[L::type]];                                                 \
    if (callee->type != want_ && !declared_subtype(*callee->type, *want_)) [[unlikely]]                                \
      TRAP(TrapKind::IndirectCallTypeMismatch);                                                       \
    nfp = fp + ip[L::base];                                                                           \
  } while (0)
L_CallIndirect: {
  using L = layout::CallIndirect;
  INDIRECT_CALLEE(L);
  ret_ip = ip + L::kWords;
  goto do_call;
}
// call_ref: the validator proved the reference's type, so only null is checked.
L_CallRef: {
  using L = layout::CallRef;
  static_assert(L::post == L::kWords - 1);
  callee = reinterpret_cast<FuncInst*>(SLOT(L::ref));
  if (callee == nullptr) [[unlikely]] TRAP(TrapKind::NullFunctionReference);
  nfp = fp + ip[L::base];
  ret_ip = ip + L::kWords;
  goto do_call;
}
do_call:
  if (callee->host != nullptr) [[unlikely]] {
    // A host function may call back into the store: that run starts above this frame, and
    // sees (and leaves) the fuel counter in the store. Only the `call` itself costs fuel.
    S->entry_fp = nfp + std::max(callee->num_params, callee->num_results);
    S->entry_frame = cs.fr;
    if constexpr (Metered) S->counter = fuel;
    const HostStatus st = call_host(*callee, nfp, MemoryView{mem, memsize}, *out);
    if constexpr (Metered) fuel = S->counter;
    if (st != HostStatus::Ok) [[unlikely]]
      TRAP(host_trap_kind(st));
    ip = ret_ip;
    if constexpr (Metered) fuel -= POST_CALL_FUEL(ip);
    DISPATCH();
  }
  // Lazy translation: a function's first call in this store (and variant) points it at its code,
  // translating it if no thread has; its frame size is known from then on.
  if (callee->entry[Metered ? 1 : 0] == nullptr) [[unlikely]]
    resolve_code(*callee, Metered ? kMetered : kUnmetered);
  // The stack check comes first, as Wasmtime's prologue stack check precedes its fuel entry
  // check: a call that cannot start is CallStackExhausted whatever the balance, and charges nothing.
  if (cs.fr == fr_end || static_cast<u64>(stack_end - nfp) < callee->frame_slots) [[unlikely]]
    TRAP(TrapKind::CallStackExhausted);
  // Metered: the call charges the callee's first segment, after the callee's entry check, which
  // sees only what ran plus the entry's own 1. The caller's next segment (the call's `post`
  // word, the last before ret_ip) is charged when the call returns, as Wasmtime adds the costs of
  // the operators after a call once it has returned: charged ahead, a deep recursion would see
  // the costs of code that has not run at its entry checks (and run out of fuel early), and a
  // trap would count them.
  if constexpr (Metered) {
    if (fuel <= 1) [[unlikely]] REFUEL(1);
    fuel -= callee->entry_fuel;
  }
  {
    Frame* const f = cs.fr;
    f->ip = ret_ip;
    f->fp = fp;
    f->func = func;
    cs.fr = f + 1;
  }
  for (u32 i = callee->num_params; i < callee->num_locals; ++i) nfp[i] = 0;
  // compiled tier: back here after the callee, as L_Return would (same instance: reload memory).
  JIT_ENTER(
      callee, nfp,
      {
        cs.fr = cs.fr - 1;
        RELOAD_MEMORY();
        ip = ret_ip;
        if constexpr (Metered) fuel -= ip[-1];
        DISPATCH();
      },
      {
        // As if the call instruction threw: its handlers first (the post segment is never charged).
        cs.fr = cs.fr - 1;
        ip = ret_ip - 1;
        throw_from_caller = false;
        goto do_throw;
      });
  fp = nfp;
  func = callee;
  if (inst != callee->instance) {
    inst = callee->instance;
    RELOAD_MEMORY();
  }
  ip = callee->entry[Metered ? 1 : 0];
  DISPATCH();
  // ---- tail calls: the callee takes over this frame (its arguments, at nfp, move down to slot
  // 0), keeps this function's frame record (it returns to this function's caller) and so uses
  // no frame record and no value stack beyond the larger of the two frames. Fuel as a call: the
  // instruction's 1 in its segment, the callee's entry check and first segment here.
L_ReturnCall:
  callee = inst->funcs[ip[layout::ReturnCall::func]];
  nfp = fp + ip[layout::ReturnCall::base];
  goto do_tail_call;
L_ReturnCallIndirect: {
  using L = layout::ReturnCallIndirect;
  INDIRECT_CALLEE(L);
  goto do_tail_call;
}
L_ReturnCallRef: {
  using L = layout::ReturnCallRef;
  callee = reinterpret_cast<FuncInst*>(SLOT(L::ref));
  if (callee == nullptr) [[unlikely]] TRAP(TrapKind::NullFunctionReference);
  nfp = fp + ip[L::base];
  goto do_tail_call;
}
do_tail_call:
  if (callee->host != nullptr) [[unlikely]] {
    // As do_call's host path, from this frame's slot 0; then this function returns the results.
    std::memmove(fp, nfp, sizeof(u64) * callee->num_params);
    S->entry_fp = fp + std::max(callee->num_params, callee->num_results);
    S->entry_frame = cs.fr;
    if constexpr (Metered) S->counter = fuel;
    const HostStatus st = call_host(*callee, fp, MemoryView{mem, memsize}, *out);
    if constexpr (Metered) fuel = S->counter;
    if (st != HostStatus::Ok) [[unlikely]]
      TRAP(host_trap_kind(st));
    goto L_Return;
  }
  // Lazy translation, as in do_call: the callee's code and frame size from its first call on.
  if (callee->entry[Metered ? 1 : 0] == nullptr) [[unlikely]]
    resolve_code(*callee, Metered ? kMetered : kUnmetered);
  // No frame record is taken, so only the value stack can run out (checked before the charge,
  // as in do_call); the trap is located at the tail call, in the calling function.
  if (static_cast<u64>(stack_end - fp) < callee->frame_slots) [[unlikely]] TRAP(TrapKind::CallStackExhausted);
  if constexpr (Metered) {
    if (fuel <= 1) [[unlikely]] REFUEL(1);
    fuel -= callee->entry_fuel;
  }
  std::memmove(fp, nfp, sizeof(u64) * callee->num_params);  // nfp >= fp: moving down is safe
  for (u32 i = callee->num_params; i < callee->num_locals; ++i) fp[i] = 0;
  // compiled tier: the callee's results are this function's; return them as L_Return does.
  // do_tail_enter: `callee` at fp with its entry made by machine code's pending tail call.
#if SPRAWLING_WITH_JIT
do_tail_enter:
#endif
  JIT_ENTER(
      callee, fp,
      {
        RELOAD_MEMORY();
        goto L_Return;
      },
      {
        // The callee replaced this function: the search starts at its caller.
        throw_from_caller = true;
        goto do_throw;
      });
  func = callee;
  if (inst != callee->instance) {
    inst = callee->instance;
    RELOAD_MEMORY();
  }
  ip = callee->entry[Metered ? 1 : 0];
  DISPATCH();
L_Return: {
  Frame* f = cs.fr;
  if (f == fr_base) goto L_done;
  --f;
  cs.fr = f;
  ip = f->ip;
  if constexpr (Metered) fuel -= POST_CALL_FUEL(ip);  // the caller's segment after the call (do_call)
  fp = f->fp;
  FuncInst* const caller = f->func;
  func = caller;
  // Same instance: mem/memsize are already current (a memory.grow in the callee updated them).
  if (caller->instance != inst) [[unlikely]] {
    inst = caller->instance;
    RELOAD_MEMORY();
  }
  DISPATCH();
}
  // ---- exception handling: throw makes an exception object (its values copied from the frame),
  // throw_ref rethrows one; do_throw finds the innermost handler in this run's frames
  // (find_handler: the handler regions of each function, callers' at their call), writes the
  // values there and continues in the handler. None: the run ends with UncaughtException and the
  // exception pending in the store, for whoever started the run (an interpreter that entered
  // compiled code continues unwinding; the host gets a trap).
L_Throw: {
  using L = layout::Throw;
  const TagInst* tag = inst->tags[ip[L::tag]];
  thrown = S->new_exception(tag, fp + ip[L::base], fp + func->frame_slots);
  if (thrown == 0) [[unlikely]] TRAP(TrapKind::ExceptionLimit);
  throw_from_caller = false;
  throw_func = func;
  throw_ip = ip;
  goto do_throw;
}
L_ThrowRef:
  thrown = SLOT(layout::ThrowRef::exn);
  if (S->gc.exception(thrown) == nullptr) [[unlikely]] TRAP(TrapKind::NullExceptionReference);
  throw_from_caller = false;
  throw_func = func;
  throw_ip = ip;
  goto do_throw;
do_throw: {
  const Caught c = find_handler(*S, thrown, ip, fp, func, cs.fr, fr_base, Metered ? kMetered : kUnmetered,
                                throw_from_caller);
  if (c.ip == nullptr) [[unlikely]] {
    S->pending_exception = thrown;
    func = throw_func;
    ip = throw_ip;
    TRAP(TrapKind::UncaughtException);
  }
  cs.fr = c.fr;
  fp = c.fp;
  func = c.func;
  inst = c.func->instance;
  RELOAD_MEMORY();
  ip = c.ip;
  DISPATCH();
}
L_Fuel:
  if constexpr (Metered) fuel -= ip[layout::Fuel::cost];
  NEXT(layout::Fuel::kWords);
L_FuelCheck:
  if constexpr (Metered) {
    if (fuel - static_cast<i64>(ip[layout::FuelCheck::visible]) <= 0) [[unlikely]] {
      REFUEL(ip[layout::FuelCheck::visible]);
    }
    fuel -= ip[layout::FuelCheck::cost];
  }
  NEXT(layout::FuelCheck::kWords);
L_Select: {
  using L = layout::Select;
  SLOT(L::dst) = static_cast<u32>(SLOT(L::cond)) != 0 ? SLOT(L::a) : SLOT(L::b);
  NEXT(L::kWords);
}
L_GlobalGet:
  SLOT(layout::GlobalGet::dst) = inst->globals[ip[layout::GlobalGet::global]]->bits;
  NEXT(layout::GlobalGet::kWords);
L_GlobalSet:
  inst->globals[ip[layout::GlobalSet::global]]->bits = SLOT(layout::GlobalSet::src);
  NEXT(layout::GlobalSet::kWords);
  // Tables: indexes and lengths read as u64 (an i32 one is zero-extended in its slot; table64's
  // are whole), bounds checked as `i > size || n > size - i`, which cannot wrap.
#define TABLE_OUT(t, i, n) ((i) > (t)->elements.size() || (n) > (t)->elements.size() - (i))
L_TableGet: {
  using L = layout::TableGet;
  TableInst* t = inst->tables[ip[L::table]];
  const u64 i = SLOT(L::idx);
  if (i >= t->elements.size()) [[unlikely]] TRAP(TrapKind::OutOfBoundsTableAccess);
  SLOT(L::dst) = t->elements[i];
  NEXT(L::kWords);
}
L_TableSet: {
  using L = layout::TableSet;
  TableInst* t = inst->tables[ip[L::table]];
  const u64 i = SLOT(L::idx);
  if (i >= t->elements.size()) [[unlikely]] TRAP(TrapKind::OutOfBoundsTableAccess);
  t->elements[i] = SLOT(L::val);
  NEXT(L::kWords);
}
L_TableSize:
  SLOT(layout::TableSize::dst) = static_cast<u32>(inst->tables[ip[layout::TableSize::table]]->elements.size());
  NEXT(layout::TableSize::kWords);
L_TableGrow: {
  using L = layout::TableGrow;
  TableInst* t = inst->tables[ip[L::table]];
  const u64 init = SLOT(L::init);
  const u64 n = SLOT(L::n);
  // A 64-bit table's n may pass 2^63: charged as the most fuel can hold, which exhausts it as n would.
  CHARGE_UNITS(std::min<u64>(n, std::numeric_limits<i64>::max()));
  const std::int64_t r = t->grow(n, init);
  SLOT(L::dst) = t->type.limits.is64 ? static_cast<u64>(r) : static_cast<u32>(r);  // -1 → 0xFFFFFFFF for i32
  NEXT(L::kWords);
}
L_TableFill: {
  using L = layout::TableFill;
  TableInst* t = inst->tables[ip[L::table]];
  const u64 i = SLOT(L::i);
  const u64 v = SLOT(L::val);
  const u64 n = SLOT(L::n);
  if (TABLE_OUT(t, i, n)) [[unlikely]] TRAP(TrapKind::OutOfBoundsTableAccess);
  CHARGE_UNITS(n);
  std::fill_n(t->elements.begin() + i, n, v);
  NEXT(L::kWords);
}
L_TableCopy: {
  using L = layout::TableCopy;
  TableInst* dt = inst->tables[ip[L::dst_table]];
  TableInst* st = inst->tables[ip[L::src_table]];
  const u64 d = SLOT(L::d);
  const u64 s = SLOT(L::s);
  const u64 n = SLOT(L::n);  // the smaller address type's: zero-extended unless both are 64-bit
  if (TABLE_OUT(dt, d, n) || TABLE_OUT(st, s, n)) [[unlikely]] TRAP(TrapKind::OutOfBoundsTableAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memmove(dt->elements.data() + d, st->elements.data() + s, n * sizeof(u64));
  NEXT(L::kWords);
}
L_TableInit: {
  using L = layout::TableInit;
  const std::vector<u64>& seg = inst->elements[ip[L::elem]];
  TableInst* t = inst->tables[ip[L::table]];
  const u64 d = SLOT(L::d);
  const u32 s = static_cast<u32>(SLOT(L::s));
  const u32 n = static_cast<u32>(SLOT(L::n));
  if (static_cast<u64>(s) + n > seg.size() || TABLE_OUT(t, d, u64{n})) [[unlikely]]
    TRAP(TrapKind::OutOfBoundsTableAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memcpy(t->elements.data() + d, seg.data() + s, n * sizeof(u64));
  NEXT(L::kWords);
}
#undef TABLE_OUT
L_ElemDrop:
  inst->elements[ip[layout::ElemDrop::elem]].clear();
  NEXT(layout::ElemDrop::kWords);
L_MemorySize:
  SLOT(layout::MemorySize::dst) = static_cast<u32>(memsize / kPageSize);
  NEXT(layout::MemorySize::kWords);
L_MemoryGrow: {
  using L = layout::MemoryGrow;
  const std::int64_t r = inst->memory0->grow(static_cast<u32>(SLOT(L::delta)));
  SLOT(L::dst) = static_cast<u32>(r);
  RELOAD_MEMORY();
  NEXT(L::kWords);
}
L_MemoryFill: {
  using L = layout::MemoryFill;
  const u32 d = static_cast<u32>(SLOT(L::d));
  const auto v = static_cast<std::uint8_t>(SLOT(L::val));
  const u32 n = static_cast<u32>(SLOT(L::n));
  if (static_cast<u64>(d) + n > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memset(mem + d, v, n);
  NEXT(L::kWords);
}
L_MemoryCopy: {
  using L = layout::MemoryCopy;
  const u32 d = static_cast<u32>(SLOT(L::d));
  const u32 s = static_cast<u32>(SLOT(L::s));
  const u32 n = static_cast<u32>(SLOT(L::n));
  if (static_cast<u64>(d) + n > memsize || static_cast<u64>(s) + n > memsize) [[unlikely]]
    TRAP(TrapKind::OutOfBoundsMemoryAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memmove(mem + d, mem + s, n);
  NEXT(L::kWords);
}
L_MemoryInit: {
  using L = layout::MemoryInit;
  const std::span<const std::uint8_t> seg = inst->datas[ip[L::data]];
  const u32 d = static_cast<u32>(SLOT(L::d));
  const u32 s = static_cast<u32>(SLOT(L::s));
  const u32 n = static_cast<u32>(SLOT(L::n));
  if (static_cast<u64>(s) + n > seg.size() || static_cast<u64>(d) + n > memsize) [[unlikely]]
    TRAP(TrapKind::OutOfBoundsMemoryAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memcpy(mem + d, seg.data() + s, n);
  NEXT(L::kWords);
}
L_DataDrop:
  inst->datas[ip[layout::DataDrop::data]] = {};
  NEXT(layout::DataDrop::kWords);

  // Multiple memories and memory64 (internal_ops.def's MultiMemory family): every bound check in
  // u64 arithmetic that cannot wrap (a memory64 address plus offset may exceed 2^64).
#define MEM_ADDR(m, v) ((m)->type.limits.is64 ? static_cast<u64>(v) : static_cast<u64>(static_cast<u32>(v)))
#define MEM_OUT(m, a, n) ((a) > (m)->size || (n) > (m)->size - (a))
L_MemAt: {
  using L = layout::MemAt;
  const MemoryInst* m = inst->memories[ip[L::mem]];
  const u64 offset = static_cast<u64>(ip[L::offset]) | (static_cast<u64>(ip[L::offset_hi_]) << 32);
  u64 ea = 0;
  if (__builtin_add_overflow(MEM_ADDR(m, SLOT(L::addr)), offset, &ea) || MEM_OUT(m, ea, u64{ip[L::width]}))
      [[unlikely]]
    TRAP(TrapKind::OutOfBoundsMemoryAccess);
  mem = m->base + ea;
  memsize = ip[L::width];
  SLOT(L::dst) = 0;
  NEXT(L::kWords);
}
L_MemRestore:
  RELOAD_MEMORY();
  NEXT(layout::Nullary::kWords);
L_MemorySizeM:
  SLOT(layout::MemorySizeM::dst) = inst->memories[ip[layout::MemorySizeM::mem]]->size / kPageSize;
  NEXT(layout::MemorySizeM::kWords);
L_MemoryGrowM: {
  using L = layout::MemoryGrowM;
  MemoryInst* m = inst->memories[ip[L::mem]];
  const std::int64_t r = m->grow(MEM_ADDR(m, SLOT(L::delta)));
  SLOT(L::dst) = MEM_ADDR(m, r);  // -1: 0xFFFFFFFF for an i32 memory
  RELOAD_MEMORY();
  NEXT(L::kWords);
}
L_MemoryFillM: {
  using L = layout::MemoryFillM;
  MemoryInst* m = inst->memories[ip[L::mem]];
  const u64 d = MEM_ADDR(m, SLOT(L::d));
  const auto v = static_cast<std::uint8_t>(SLOT(L::val));
  const u64 n = MEM_ADDR(m, SLOT(L::n));
  if (MEM_OUT(m, d, n)) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memset(m->base + d, v, n);
  NEXT(L::kWords);
}
L_MemoryCopyM: {
  using L = layout::MemoryCopyM;
  MemoryInst* dm = inst->memories[ip[L::dst_mem]];
  const MemoryInst* sm = inst->memories[ip[L::src_mem]];
  const u64 d = MEM_ADDR(dm, SLOT(L::d));
  const u64 s = MEM_ADDR(sm, SLOT(L::s));
  // The length has the smaller of the two address types.
  const u64 n = dm->type.limits.is64 && sm->type.limits.is64 ? SLOT(L::n) : static_cast<u32>(SLOT(L::n));
  if (MEM_OUT(dm, d, n) || MEM_OUT(sm, s, n)) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memmove(dm->base + d, sm->base + s, n);
  NEXT(L::kWords);
}
L_MemoryInitM: {
  using L = layout::MemoryInitM;
  const std::span<const std::uint8_t> seg = inst->datas[ip[L::data]];
  MemoryInst* m = inst->memories[ip[L::mem]];
  const u64 d = MEM_ADDR(m, SLOT(L::d));
  const u32 s = static_cast<u32>(SLOT(L::s));
  const u32 n = static_cast<u32>(SLOT(L::n));
  if (static_cast<u64>(s) + n > seg.size() || MEM_OUT(m, d, u64{n})) [[unlikely]]
    TRAP(TrapKind::OutOfBoundsMemoryAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memcpy(m->base + d, seg.data() + s, n);
  NEXT(L::kWords);
}
#undef MEM_ADDR
#undef MEM_OUT
L_RefIsNull:
  SLOT(layout::Unary::dst) = SLOT(layout::Unary::a) == 0 ? 1u : 0u;
  NEXT(layout::Unary::kWords);
L_RefFunc:
  SLOT(layout::RefFunc::dst) = reinterpret_cast<u64>(inst->funcs[ip[layout::RefFunc::func]]);
  NEXT(layout::RefFunc::kWords);
  // Typed function references: a reference is null when its whole slot is 0.
L_RefAsNonNull:
  if (SLOT(layout::Unary::a) == 0) [[unlikely]] TRAP(TrapKind::NullReference);
  SLOT(layout::Unary::dst) = SLOT(layout::Unary::a);
  NEXT(layout::Unary::kWords);
L_BrOnNull:
  if (SLOT(layout::CondJump::cond) == 0) JUMP(ip[layout::CondJump::off]);
  FALLTHROUGH(layout::CondJump::fall);
L_BrOnNonNull:
  if (SLOT(layout::CondJump::cond) != 0) JUMP(ip[layout::CondJump::off]);
  FALLTHROUGH(layout::CondJump::fall);

  // ---- garbage collection (gc_heap.hpp): references in the any hierarchy are 0, an i31, an
  // externalized host reference or an object handle; objects live in the store's GcHeap. A
  // new object may collect: its roots are the value stack up to this frame's end. The struct and
  // array operations are gc_ops.hpp's, shared with the compiled tier: a handler fetches the
  // operands and turns the returned trap kind into its trap.
#define GC_TOP (fp + func->frame_slots)
#define GC_TRY(op_)                                                      \
  do {                                                                   \
    if (const TrapKind k_ = (op_); k_ != TrapKind::None) [[unlikely]]    \
      TRAP(k_);                                                          \
  } while (0)
  // A bulk operation (its first two arguments the store and the fuel, GcFuel): the counter is
  // copied in and the balance back, so that `fuel` never has its address taken.
#define GC_CHARGED(op_, ...)                                             \
  do {                                                                   \
    GcFuel f_{fuel, Metered};                                            \
    const TrapKind k_ = op_(*S, f_, __VA_ARGS__);                        \
    fuel = f_.balance;                                                   \
    if (k_ != TrapKind::None) [[unlikely]] TRAP(k_);                     \
  } while (0)
L_RefEq:
  SLOT(layout::Binary::dst) = SLOT(layout::Binary::a) == SLOT(layout::Binary::b) ? 1u : 0u;
  NEXT(layout::Binary::kWords);
L_RefI31:
  SLOT(layout::Unary::dst) = gcref::from_i31(static_cast<u32>(SLOT(layout::Unary::a)));
  NEXT(layout::Unary::kWords);
L_I31GetS:
  if (SLOT(layout::Unary::a) == 0) [[unlikely]] TRAP(TrapKind::NullI31Reference);
  SLOT(layout::Unary::dst) = gcref::i31_s(SLOT(layout::Unary::a));
  NEXT(layout::Unary::kWords);
L_I31GetU:
  if (SLOT(layout::Unary::a) == 0) [[unlikely]] TRAP(TrapKind::NullI31Reference);
  SLOT(layout::Unary::dst) = gcref::i31_u(SLOT(layout::Unary::a));
  NEXT(layout::Unary::kWords);
L_AnyConvertExtern:
  SLOT(layout::Unary::dst) = gcref::to_any(SLOT(layout::Unary::a));
  NEXT(layout::Unary::kWords);
L_ExternConvertAny:
  SLOT(layout::Unary::dst) = gcref::to_extern(SLOT(layout::Unary::a));
  NEXT(layout::Unary::kWords);
L_RefTest: {
  using L = layout::RefTest;
  SLOT(L::dst) = gc_ref_test(S->gc, *inst, SLOT(L::ref), ip[L::heap], ip[L::flags]) ? 1u : 0u;
  NEXT(L::kWords);
}
L_RefCast: {
  using L = layout::RefTest;
  const u64 v = SLOT(L::ref);
  if (!gc_ref_test(S->gc, *inst, v, ip[L::heap], ip[L::flags])) [[unlikely]] TRAP(TrapKind::CastFailure);
  SLOT(L::dst) = v;
  NEXT(L::kWords);
}
L_BrOnCast: {
  using L = layout::BrOnCast;
  if (gc_ref_test(S->gc, *inst, SLOT(L::ref), ip[L::heap], ip[L::flags])) JUMP(ip[L::off]);
  FALLTHROUGH(L::fall);
}
L_BrOnCastFail: {
  using L = layout::BrOnCast;
  if (!gc_ref_test(S->gc, *inst, SLOT(L::ref), ip[L::heap], ip[L::flags])) JUMP(ip[L::off]);
  FALLTHROUGH(L::fall);
}
L_StructNew: {
  using L = layout::StructNew;
  const u64 h = gc_struct_new(*S, inst->types[ip[L::type]], fp + ip[L::base], GC_TOP);
  if (h == 0) [[unlikely]] TRAP(TrapKind::GcHeapLimit);
  SLOT(L::dst) = h;
  NEXT(L::kWords);
}
L_StructNewDefault: {
  using L = layout::StructNewDefault;
  const u64 h = gc_struct_new(*S, inst->types[ip[L::type]], nullptr, GC_TOP);
  if (h == 0) [[unlikely]] TRAP(TrapKind::GcHeapLimit);
  SLOT(L::dst) = h;
  NEXT(L::kWords);
}
#define STRUCT_GET(Label, sign)                                                                      \
  L_##Label : {                                                                                      \
    using L = layout::StructGet;                                                                     \
    GC_TRY(gc_struct_get(S->gc, SLOT(L::ref), ip[L::offset], ip[L::size], sign, fp + ip[L::dst]));   \
    NEXT(L::kWords);                                                                                 \
  }
STRUCT_GET(StructGet, false)
STRUCT_GET(StructGetS, true)
#undef STRUCT_GET
L_StructSet: {
  using L = layout::StructSet;
  GC_TRY(gc_struct_set(S->gc, SLOT(L::ref), ip[L::offset], ip[L::size], fp + ip[L::val]));
  NEXT(L::kWords);
}
L_ArrayNew: {
  using L = layout::ArrayNew;
  GC_CHARGED(gc_array_new, inst->types[ip[L::type]], static_cast<u32>(SLOT(L::n)), fp + ip[L::init], GC_TOP,
             fp + ip[L::dst]);
  NEXT(L::kWords);
}
L_ArrayNewDefault: {
  using L = layout::ArrayNewDefault;
  GC_CHARGED(gc_array_new, inst->types[ip[L::type]], static_cast<u32>(SLOT(L::n)), nullptr, GC_TOP, fp + ip[L::dst]);
  NEXT(L::kWords);
}
L_ArrayNewFixed: {
  using L = layout::ArrayNewFixed;
  const u64 h = gc_array_new_fixed(*S, inst->types[ip[L::type]], ip[L::n], fp + ip[L::base], GC_TOP);
  if (h == 0) [[unlikely]] TRAP(TrapKind::GcHeapLimit);
  SLOT(L::dst) = h;
  NEXT(L::kWords);
}
L_ArrayNewData: {
  using L = layout::ArrayNewData;
  GC_CHARGED(gc_array_new_data, inst->types[ip[L::type]], inst->datas[ip[L::data]], static_cast<u32>(SLOT(L::s)),
             static_cast<u32>(SLOT(L::n)), GC_TOP, fp + ip[L::dst]);
  NEXT(L::kWords);
}
L_ArrayNewElem: {
  using L = layout::ArrayNewElem;
  GC_CHARGED(gc_array_new_elem, inst->types[ip[L::type]], inst->elements[ip[L::elem]], static_cast<u32>(SLOT(L::s)),
             static_cast<u32>(SLOT(L::n)), GC_TOP, fp + ip[L::dst]);
  NEXT(L::kWords);
}
#define ARRAY_GET(Label, sign)                                                                                  \
  L_##Label : {                                                                                                 \
    using L = layout::ArrayGet;                                                                                 \
    GC_TRY(gc_array_get(S->gc, SLOT(L::ref), static_cast<u32>(SLOT(L::idx)), ip[L::size], sign, fp + ip[L::dst])); \
    NEXT(L::kWords);                                                                                            \
  }
ARRAY_GET(ArrayGet, false)
ARRAY_GET(ArrayGetS, true)
#undef ARRAY_GET
L_ArraySet: {
  using L = layout::ArraySet;
  GC_TRY(gc_array_set(S->gc, SLOT(L::ref), static_cast<u32>(SLOT(L::idx)), ip[L::size], fp + ip[L::val]));
  NEXT(L::kWords);
}
L_ArrayLen:
  GC_TRY(gc_array_len(S->gc, SLOT(layout::Unary::a), fp + ip[layout::Unary::dst]));
  NEXT(layout::Unary::kWords);
L_ArrayFill: {
  using L = layout::ArrayFill;
  GC_CHARGED(gc_array_fill, SLOT(L::ref), static_cast<u32>(SLOT(L::d)), fp + ip[L::val], static_cast<u32>(SLOT(L::n)),
             ip[L::size]);
  NEXT(L::kWords);
}
L_ArrayCopy: {
  using L = layout::ArrayCopy;
  GC_CHARGED(gc_array_copy, SLOT(L::dref), static_cast<u32>(SLOT(L::d)), SLOT(L::sref), static_cast<u32>(SLOT(L::s)),
             static_cast<u32>(SLOT(L::n)), ip[L::size]);
  NEXT(L::kWords);
}
L_ArrayInitData: {
  using L = layout::ArrayInitData;
  GC_CHARGED(gc_array_init_data, SLOT(L::ref), static_cast<u32>(SLOT(L::d)), inst->datas[ip[L::data]],
             static_cast<u32>(SLOT(L::s)), static_cast<u32>(SLOT(L::n)), ip[L::size]);
  NEXT(L::kWords);
}
L_ArrayInitElem: {
  using L = layout::ArrayInitElem;
  GC_CHARGED(gc_array_init_elem, SLOT(L::ref), static_cast<u32>(SLOT(L::d)), inst->elements[ip[L::elem]],
             static_cast<u32>(SLOT(L::s)), static_cast<u32>(SLOT(L::n)));
  NEXT(L::kWords);
}
#undef GC_TOP
#undef GC_TRY
#undef GC_CHARGED

  // Loads and stores, in their three address modes (internal_ops.def's VMEM): EA_* is the
  // effective address u64(u32 address) + offset.
#define EA_Plain(L) static_cast<u64>(static_cast<u32>(SLOT(L::addr))) + ip[L::offset]
#define EA_Add(L) static_cast<u64>(static_cast<u32>(SLOT(L::base)) + ip[L::imm]) + ip[L::offset]
#define EA_Abs(L) static_cast<u64>(ip[L::addr]) + ip[L::offset]
#define LOAD(Label, Layout, Mode, T, Convert)                                           \
  L_##Label : {                                                                         \
    using L = layout::Layout;                                                           \
    const u64 ea = EA_##Mode(L);                                                        \
    if (ea + sizeof(T) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess); \
    T v;                                                                                \
    std::memcpy(&v, mem + ea, sizeof(T));                                               \
    SLOT(L::dst) = Convert(v);                                                          \
    NEXT(L::kWords);                                                                    \
  }
#define STORE(Label, Layout, Mode, T)                                                   \
  L_##Label : {                                                                         \
    using L = layout::Layout;                                                           \
    const u64 ea = EA_##Mode(L);                                                        \
    if (ea + sizeof(T) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess); \
    const T v = static_cast<T>(SLOT(L::val));                                           \
    std::memcpy(mem + ea, &v, sizeof(T));                                               \
    NEXT(L::kWords);                                                                    \
  }
// memory_access.def's rows as handlers: the memory's bytes as a C integer of that size and
// sign, extended to the slot's width.
#define EXTEND_U32(v) static_cast<u64>(static_cast<u32>(v))
#define EXTEND_S32(v) static_cast<u64>(static_cast<u32>(static_cast<i32>(v)))
#define EXTEND_U64(v) static_cast<u64>(v)
#define EXTEND_S64(v) static_cast<u64>(static_cast<i64>(v))
#define ACCESS_Load(Name, Suffix, Mode, bytes, sign, width) \
  LOAD(Name##Suffix, Load##Suffix, Mode, Access##sign<bytes>, EXTEND_##sign##width)
#define ACCESS_Store(Name, Suffix, Mode, bytes, sign, width) STORE(Name##Suffix, Store##Suffix, Mode, AccessU<bytes>)
#define SPRAWLING_ACCESS(Name, Kind, bytes, sign, width) ACCESS_##Kind(Name, , Plain, bytes, sign, width)
#include "wasm/icode/memory_access.def"
#undef SPRAWLING_ACCESS
#define SPRAWLING_ACCESS(Name, Kind, bytes, sign, width) ACCESS_##Kind(Name, Add, Add, bytes, sign, width)
#include "wasm/icode/memory_access.def"
#undef SPRAWLING_ACCESS
#define SPRAWLING_ACCESS(Name, Kind, bytes, sign, width) ACCESS_##Kind(Name, Abs, Abs, bytes, sign, width)
#include "wasm/icode/memory_access.def"
#undef SPRAWLING_ACCESS
#undef ACCESS_Load
#undef ACCESS_Store
#undef EXTEND_U32
#undef EXTEND_S32
#undef EXTEND_U64
#undef EXTEND_S64
#undef LOAD
#undef STORE
#undef EA_Plain
#undef EA_Add
#undef EA_Abs

#define FUSED(Cmp, OPER, T)                                                                                  \
  L_BrIfI32##Cmp : if (static_cast<T>(SLOT(CB::a)) OPER static_cast<T>(SLOT(CB::b))) JUMP(ip[CB::off]);       \
  FALLTHROUGH(CB::fall);                                                                                     \
  L_BrIfI32##Cmp##Imm : if (static_cast<T>(SLOT(CIB::a)) OPER static_cast<T>(ip[CIB::imm])) JUMP(ip[CIB::off]); \
  FALLTHROUGH(CIB::fall);                                                                                    \
  L_BrUnlessI32##Cmp : if (!(static_cast<T>(SLOT(CB::a)) OPER static_cast<T>(SLOT(CB::b)))) JUMP(ip[CB::off]); \
  FALLTHROUGH(CB::fall);                                                                                     \
  L_BrUnlessI32##Cmp##Imm : if (!(static_cast<T>(SLOT(CIB::a)) OPER static_cast<T>(ip[CIB::imm])))             \
                                JUMP(ip[CIB::off]);                                                          \
  FALLTHROUGH(CIB::fall);
  {
    using CB = layout::CmpBranch;
    using CIB = layout::CmpImmBranch;
#define SPRAWLING_I32_COMPARISON(Cmp, op, type, predicate) FUSED(Cmp, op, type)
#include "wasm/icode/i32_comparisons.def"
#undef SPRAWLING_I32_COMPARISON
  }
#undef FUSED

#define SPRAWLING_HANDLER_Un(Name, A, R)                                                                \
  L_Num##Name : {                                                                                      \
    using L = layout::Unary;                                                                           \
    R r{};                                                                                             \
    if (const TrapKind k = num::un<Opcode::Name, A, R>(get<A>(SLOT(L::a)), r); k != TrapKind::None)     \
      [[unlikely]] TRAP(k);                                                                            \
    SLOT(L::dst) = put<R>(r);                                                                          \
    NEXT(L::kWords);                                                                                   \
  }
#define SPRAWLING_HANDLER_Bin(Name, A, R)                                                               \
  L_Num##Name : {                                                                                      \
    using L = layout::Binary;                                                                          \
    R r{};                                                                                             \
    if (const TrapKind k = num::bin<Opcode::Name, A, R>(get<A>(SLOT(L::a)), get<A>(SLOT(L::b)), r);   \
        k != TrapKind::None) [[unlikely]]                                                              \
      TRAP(k);                                                                                         \
    SLOT(L::dst) = put<R>(r);                                                                          \
    NEXT(L::kWords);                                                                                   \
  }
#define SPRAWLING_HANDLER_BinImm(Name, A, R)                                                            \
  SPRAWLING_HANDLER_Bin(Name, A, R) L_Num##Name##Imm : {                                               \
    using L = layout::BinaryImm;                                                                       \
    R r{};                                                                                             \
    if (const TrapKind k = num::bin<Opcode::Name, A, R>(get<A>(SLOT(L::a)), imm<A>(ip[L::imm]), r);   \
        k != TrapKind::None) [[unlikely]]                                                              \
      TRAP(k);                                                                                         \
    SLOT(L::dst) = put<R>(r);                                                                          \
    NEXT(L::kWords);                                                                                   \
  }
#define SPRAWLING_HANDLER_BinFImm(Name, A, R, Layout)                                                   \
  SPRAWLING_HANDLER_Bin(Name, A, R) L_Num##Name##Imm : {                                               \
    using L = layout::Layout;                                                                          \
    R r{};                                                                                             \
    (void)num::bin<Opcode::Name, A, R>(get<A>(SLOT(L::a)), fimm<A>(ip + L::value), r);                 \
    SLOT(L::dst) = put<R>(r);                                                                          \
    NEXT(L::kWords);                                                                                   \
  }
#define SPRAWLING_HANDLER_BinF32Imm(Name, A, R) SPRAWLING_HANDLER_BinFImm(Name, A, R, BinaryF32Imm)
#define SPRAWLING_HANDLER_BinF64Imm(Name, A, R) SPRAWLING_HANDLER_BinFImm(Name, A, R, BinaryF64Imm)
#define SPRAWLING_SIMPLE_OP(Name, A, R, Form, Trap) SPRAWLING_HANDLER_##Form(Name, A, R)
#include "wasm/icode/simple_ops.inc"
#undef SPRAWLING_SIMPLE_OP

  // ---- fixed-width SIMD (the Simd family): a v128 lives in two consecutive slots, lanes 0..7
  // of its bytes in the first. Handlers read every operand before writing (slots may overlap);
  // the lane semantics are wasm/simd.hpp's, one function per instruction (simd_opcodes.def's fn).
#define VGET(n) simd::from_slots(fp + ip[n])
#define VPUT(n, v) simd::to_slots(fp + ip[n], (v))
#define SIMD_EA(L) (static_cast<u64>(static_cast<u32>(SLOT(L::addr))) + ip[L::offset])
L_VCopy: {
  using L = layout::VCopy;
  const simd::V128 v = VGET(L::src);
  VPUT(L::dst, v);
  NEXT(L::kWords);
}
L_VSelect: {
  using L = layout::VSelect;
  const simd::V128 v = static_cast<u32>(SLOT(L::cond)) != 0 ? VGET(L::a) : VGET(L::b);
  VPUT(L::dst, v);
  NEXT(L::kWords);
}
L_VCanonF32x4: {
  using L = layout::VUnary;
  const simd::V128 v = VGET(L::a);
  const auto lanes = [](u64 w) {
    return u64{num::nan_canonical_f32(static_cast<u32>(w))} | (u64{num::nan_canonical_f32(static_cast<u32>(w >> 32))} << 32);
  };
  VPUT(L::dst, (simd::V128{lanes(v.lo), lanes(v.hi)}));
  NEXT(L::kWords);
}
L_VCanonF64x2: {
  using L = layout::VUnary;
  const simd::V128 v = VGET(L::a);
  VPUT(L::dst, (simd::V128{num::nan_canonical_f64(v.lo), num::nan_canonical_f64(v.hi)}));
  NEXT(L::kWords);
}
L_VGlobalGet: {
  using L = layout::VGlobalGet;
  const GlobalInst* g = inst->globals[ip[L::global]];
  VPUT(L::dst, (simd::V128{g->bits, g->bits_hi}));
  NEXT(L::kWords);
}
L_VGlobalSet: {
  using L = layout::VGlobalSet;
  GlobalInst* g = inst->globals[ip[L::global]];
  const simd::V128 v = VGET(L::src);
  g->bits = v.lo;
  g->bits_hi = v.hi;
  NEXT(L::kWords);
}
#define SIMD_V(Name, Layout, expr) \
  L_Simd##Name : {                 \
    using L = layout::Layout;      \
    const simd::V128 r_ = (expr);  \
    VPUT(L::dst, r_);              \
    NEXT(L::kWords);               \
  }
#define SIMD_Un(Name, fn) SIMD_V(Name, VUnary, simd::fn(VGET(L::a)))
#define SIMD_Bin(Name, fn) SIMD_V(Name, VBinary, simd::fn(VGET(L::a), VGET(L::b)))
#define SIMD_Tern(Name, fn) SIMD_V(Name, VTernary, simd::fn(VGET(L::a), VGET(L::b), VGET(L::c)))
#define SIMD_Shift(Name, fn) SIMD_V(Name, VShift, simd::fn(VGET(L::a), static_cast<u32>(SLOT(L::b))))
#define SIMD_Splat32(Name, fn) SIMD_V(Name, VSplat, simd::fn(static_cast<u32>(SLOT(L::a))))
#define SIMD_Splat64(Name, fn) SIMD_V(Name, VSplat, simd::fn(SLOT(L::a)))
#define SIMD_Const(Name, fn) SIMD_V(Name, VConst, (simd::V128{L::read(ip).value.lo, L::read(ip).value.hi}))
#define SIMD_Replace32(Name, fn) \
  SIMD_V(Name, VReplace, simd::fn(VGET(L::a), ip[L::lane], static_cast<u32>(SLOT(L::b))))
#define SIMD_Replace64(Name, fn) SIMD_V(Name, VReplace, simd::fn(VGET(L::a), ip[L::lane], SLOT(L::b)))
#define SIMD_Shuffle(Name, fn)                                          \
  L_Simd##Name : {                                                      \
    using L = layout::VShuffle;                                         \
    std::uint8_t lanes_[16];                                            \
    std::memcpy(lanes_, ip + L::lanes, sizeof lanes_);                  \
    const simd::V128 r_ = simd::fn(VGET(L::a), VGET(L::b), lanes_);     \
    VPUT(L::dst, r_);                                                   \
    NEXT(L::kWords);                                                    \
  }
#define SIMD_S(Name, Layout, expr) \
  L_Simd##Name : {                 \
    using L = layout::Layout;      \
    SLOT(L::dst) = (expr);         \
    NEXT(L::kWords);               \
  }
#define SIMD_Test(Name, fn) SIMD_S(Name, VTest, simd::fn(VGET(L::a)))
#define SIMD_Extract32(Name, fn) SIMD_S(Name, VExtract, simd::fn(VGET(L::a), ip[L::lane]))
#define SIMD_Extract64(Name, fn) SIMD_S(Name, VExtract, simd::fn(VGET(L::a), ip[L::lane]))
  // Memory: exact bounds checks on the accessed width, as the scalar accesses.
#define SIMD_LOAD(Name, fn, W)                                                           \
  L_Simd##Name : {                                                                       \
    using L = layout::VLoad;                                                             \
    const u64 ea = SIMD_EA(L);                                                           \
    if (ea + (W) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess);        \
    VPUT(L::dst, simd::fn(mem + ea));                                                    \
    NEXT(L::kWords);                                                                     \
  }
#define SIMD_LOAD_LANE(Name, fn, W)                                                      \
  L_Simd##Name : {                                                                       \
    using L = layout::VLoadLane;                                                         \
    const u64 ea = SIMD_EA(L);                                                           \
    if (ea + (W) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess);        \
    const simd::V128 r_ = simd::fn(mem + ea, VGET(L::v), ip[L::lane]);                   \
    VPUT(L::dst, r_);                                                                    \
    NEXT(L::kWords);                                                                     \
  }
#define SIMD_STORE_LANE(Name, fn, W)                                                     \
  L_Simd##Name : {                                                                       \
    using L = layout::VStoreLane;                                                        \
    const u64 ea = SIMD_EA(L);                                                           \
    if (ea + (W) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess);        \
    simd::fn(mem + ea, VGET(L::val), ip[L::lane]);                                       \
    NEXT(L::kWords);                                                                     \
  }
#define SIMD_Load1(Name, fn) SIMD_LOAD(Name, fn, 1)
#define SIMD_Load2(Name, fn) SIMD_LOAD(Name, fn, 2)
#define SIMD_Load4(Name, fn) SIMD_LOAD(Name, fn, 4)
#define SIMD_Load8(Name, fn) SIMD_LOAD(Name, fn, 8)
#define SIMD_Load16(Name, fn) SIMD_LOAD(Name, fn, 16)
#define SIMD_Store16(Name, fn)                                                           \
  L_Simd##Name : {                                                                       \
    using L = layout::VStore;                                                            \
    const u64 ea = SIMD_EA(L);                                                           \
    if (ea + 16 > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess);         \
    simd::fn(mem + ea, VGET(L::val));                                                    \
    NEXT(L::kWords);                                                                     \
  }
#define SIMD_LoadLane1(Name, fn) SIMD_LOAD_LANE(Name, fn, 1)
#define SIMD_LoadLane2(Name, fn) SIMD_LOAD_LANE(Name, fn, 2)
#define SIMD_LoadLane4(Name, fn) SIMD_LOAD_LANE(Name, fn, 4)
#define SIMD_LoadLane8(Name, fn) SIMD_LOAD_LANE(Name, fn, 8)
#define SIMD_StoreLane1(Name, fn) SIMD_STORE_LANE(Name, fn, 1)
#define SIMD_StoreLane2(Name, fn) SIMD_STORE_LANE(Name, fn, 2)
#define SIMD_StoreLane4(Name, fn) SIMD_STORE_LANE(Name, fn, 4)
#define SIMD_StoreLane8(Name, fn) SIMD_STORE_LANE(Name, fn, 8)
#define SIMD_HANDLER_(Name, fn, Shape) SIMD_##Shape(Name, fn)
#define SIMD_HANDLER(Name, fn, Shape) SIMD_HANDLER_(Name, fn, Shape)
#define WASM_SIMD_OPCODE(code, Name, text, imm, sig, fn) SIMD_HANDLER(Name, fn, SPRAWLING_SIMD_SHAPE(imm, sig))
#include "wasm/syntax/simd_opcodes.def"
#include "wasm/syntax/relaxed_simd_opcodes.def"
#undef WASM_SIMD_OPCODE
#undef SIMD_HANDLER
#undef SIMD_HANDLER_
#undef SIMD_V
#undef SIMD_S
#undef SIMD_Un
#undef SIMD_Bin
#undef SIMD_Tern
#undef SIMD_Shift
#undef SIMD_Splat32
#undef SIMD_Splat64
#undef SIMD_Const
#undef SIMD_Replace32
#undef SIMD_Replace64
#undef SIMD_Shuffle
#undef SIMD_Test
#undef SIMD_Extract32
#undef SIMD_Extract64
#undef SIMD_LOAD
#undef SIMD_LOAD_LANE
#undef SIMD_STORE_LANE
#undef SIMD_Load1
#undef SIMD_Load2
#undef SIMD_Load4
#undef SIMD_Load8
#undef SIMD_Load16
#undef SIMD_Store16
#undef SIMD_LoadLane1
#undef SIMD_LoadLane2
#undef SIMD_LoadLane4
#undef SIMD_LoadLane8
#undef SIMD_StoreLane1
#undef SIMD_StoreLane2
#undef SIMD_StoreLane4
#undef SIMD_StoreLane8
#undef SIMD_EA
#undef VGET
#undef VPUT

#if SPRAWLING_WITH_JIT
L_loop_sample: {
  // ip is already past the branch, at a loop header; metered code samples only once the
  // header's check is done too (JUMP), so ip is past that check there.
  loop_samples = kLoopSample;
  FuncInst* const f = func;
  constexpr int variant = Metered ? kMetered : kUnmetered;
  jit::Slot* const slot = f->jit[variant];
  // 1 + the loop header's word in the function's code: where the machine code can take this
  // activation over. (Metered entry points past the entry check, and ip past the header's.)
  const auto at = static_cast<u32>(ip - f->code[variant]->code.data()) + 1 - (Metered ? layout::FuelCheck::kWords : 0);
  if (slot != nullptr && slot->entry.load(std::memory_order_relaxed) == nullptr) {
    slot->loop_hint.store(at, std::memory_order_relaxed);  // Slot::loop_hint
    const std::int32_t left = slot->countdown.load(std::memory_order_relaxed) - jit::kLoopSampleCalls;
    slot->countdown.store(left, std::memory_order_relaxed);
    if (left <= 0) jit::tier_up_hot(*f, variant);
  } else {
    // On-stack replacement (tier-up code): this activation, at the loop header (metered: past
    // its check, with the counter as it stands), continues as the function's machine code,
    // which returns for it (L_Return).
    if (slot != nullptr && slot->osr.load(std::memory_order_relaxed) == at && jit::native_stack_ok()) {
      const jit::Entry e = slot->entry.load(std::memory_order_acquire);
      const jit::Result r = jit::enter(e, *S, f, fp, cs.fr, fuel, *out, Metered, at);
      fuel = r.fuel;
      if (r.tail != nullptr) {  // it tail-called a function it did not enter: that runs here
        callee = r.tail;
        RELOAD_MEMORY();
        goto do_tail_enter;
      }
      if (r.trap == TrapKind::UncaughtException) {
        // As a tail call's compiled callee: this activation is gone, the search starts at its caller.
        thrown = S->pending_exception;
        throw_func = r.func;
        throw_ip = r.ip;
        throw_from_caller = true;
        goto do_throw;
      }
      if (r.trap != TrapKind::None) {
        func = r.func;
        ip = r.ip;
        TRAP(r.trap);
      }
      RELOAD_MEMORY();
      goto L_Return;
    }
  }
  DISPATCH();
}
#endif
L_trap:
  out->trap = trap;
  out->func = func;
  out->ip = ip;
  S->counter = fuel;
  return;
L_done:
  out->trap = TrapKind::None;
  S->counter = fuel;
  return;
}

#undef DISPATCH
#undef POST_CALL_FUEL
#undef NEXT
#undef SLOT
#undef stack_end
#undef fr_base
#undef fr_end
#undef FALLTHROUGH
#undef JUMP
#undef LOOP_SAMPLE
#undef TRAP
#undef RELOAD_MEMORY
#undef REFUEL
#undef CHARGE_UNITS
#undef JIT_ENTER
#undef INDIRECT_CALLEE

struct OffsetTables {
  std::int32_t unmetered[kOpCount];
  std::int32_t metered[kOpCount];
  OffsetTables() {
    run<false>(nullptr, nullptr, nullptr, unmetered);
    run<true>(nullptr, nullptr, nullptr, metered);
  }
};

}  // namespace

const std::int32_t* handler_offsets(bool metered) {
  static const OffsetTables tables;
  return metered ? tables.metered : tables.unmetered;
}

template <bool Metered>
void execute(Store::Impl& store, FuncInst* func, ExecOutcome& out) {
  if (func->entry[Metered ? 1 : 0] == nullptr) resolve_code(*func, Metered ? kMetered : kUnmetered);  // lazy translation
  run<Metered>(&store, func, &out, nullptr);
}
template void execute<false>(Store::Impl&, FuncInst*, ExecOutcome&);
template void execute<true>(Store::Impl&, FuncInst*, ExecOutcome&);

}  // namespace sprawling::wasm

#pragma GCC diagnostic pop
