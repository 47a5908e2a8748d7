// The interpreter: one dispatch function over the internal code (code.hpp), threaded with
// computed goto, instantiated twice (unmetered / metered). Wasm calls push a Frame record and
// never recurse natively; the hot state (ip, fp, memory base and size, fuel) lives in locals.
#include "wasm/code.hpp"
#include "wasm/numeric.hpp"
#include "wasm/store_impl.hpp"
#if SPRAWLING_WITH_JIT
#include "wasm/jit/jit.hpp"
#endif

#include <algorithm>
#include <bit>
#include <cstring>

// Labels-as-values is a GNU extension; it is confined to this file.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"

namespace sprawling::wasm {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i32 = std::int32_t;
using i64 = std::int64_t;

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

template <bool Metered>
[[gnu::noinline]] void run(Store::Impl* store, FuncInst* entry_func, ExecOutcome* out_arg, std::int32_t* offsets_out) {
  static const void* const kLabels[] = {
#define X(Name) &&L_##Name,
      SPRAWLING_INTERNAL_OPS(X)
#undef X
#define SPRAWLING_LABEL_Un(Name) &&L_Num##Name,
#define SPRAWLING_LABEL_Bin(Name) &&L_Num##Name,
#define SPRAWLING_LABEL_BinImm(Name) &&L_Num##Name, &&L_Num##Name##Imm,
#define SPRAWLING_LABEL_BinFImm(Name) &&L_Num##Name, &&L_Num##Name##Imm,
#define SPRAWLING_SIMPLE_OP(Name, A, R, Form) SPRAWLING_LABEL_##Form(Name)
#include "wasm/simple_ops.inc"
#undef SPRAWLING_SIMPLE_OP
#undef SPRAWLING_LABEL_Un
#undef SPRAWLING_LABEL_Bin
#undef SPRAWLING_LABEL_BinImm
#undef SPRAWLING_LABEL_BinFImm
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
  // [cost visible=0]; when the balance is positive it is done here, saving a dispatch.
#define JUMP(off)                                                    \
  do {                                                               \
    const i32 off_ = static_cast<i32>(off);                          \
    ip += off_;                                                      \
    if constexpr (Metered) {                                         \
      if (off_ < 0 && fuel > 0) {                                    \
        fuel -= ip[1];                                               \
        ip += 3;                                                     \
      }                                                              \
    }                                                                \
    DISPATCH();                                                      \
  } while (0)
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
      fuel -= static_cast<i64>(n);                                                   \
      if (fuel <= 0) [[unlikely]] {                                                  \
        REFUEL(0);        \
      }                                                                              \
    }                                                                                \
  } while (0)

  // ---- compiled-tier hook (SPRAWLING_WITH_JIT): a callee with machine code runs there, its
  // entry protocol (stack check, entry fuel, frame record, zeroed locals) made here as always.
#if SPRAWLING_WITH_JIT
#define JIT_ENTER(callee_, nfp_, then_)                                                              \
  do {                                                                                             \
    const std::atomic<jit::Entry>* slot_ = (callee_)->jit[Metered ? 1 : 0];                        \
    if (slot_ != nullptr) {                                                                        \
      const jit::Entry e_ = slot_->load(std::memory_order_acquire);                               \
      if (e_ != nullptr && jit::native_stack_ok()) {                                               \
        const jit::Result r_ = jit::enter(e_, *S, (callee_), (nfp_), cs.fr, fuel, *out, Metered);  \
        fuel = r_.fuel;                                                                            \
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
#define JIT_ENTER(callee_, nfp_, then_) \
  do {                                  \
  } while (0)
#endif
  // ---- end of the compiled-tier hook

  if (static_cast<u64>(stack_end - fp) < entry_func->frame_slots) {
    trap = TrapKind::CallStackExhausted;
    out->func = func;
    out->ip = ip;
    out->trap = trap;
    return;
  }
  for (u32 i = entry_func->num_params; i < entry_func->num_locals; ++i) fp[i] = 0;
  if constexpr (Metered) {
    if (fuel <= 1) [[unlikely]] REFUEL(1);
    fuel -= entry_func->entry_fuel;
  }
  JIT_ENTER(entry_func, fp, goto L_done);  // compiled tier
  DISPATCH();

L_Unreachable:
  TRAP(TrapKind::Unreachable);
L_Br:
  JUMP(ip[1]);
L_BrIf:
  if (static_cast<u32>(SLOT(1)) != 0) JUMP(ip[2]);
  FALLTHROUGH(3);
L_BrUnless:
  if (static_cast<u32>(SLOT(1)) == 0) JUMP(ip[2]);
  FALLTHROUGH(3);
L_BrTable: {
  u32 i = static_cast<u32>(SLOT(1));
  const u32 n = ip[2];
  if (i > n) i = n;
  ip += static_cast<i32>(ip[3 + i]);
  DISPATCH();
}
L_Copy:
  SLOT(1) = SLOT(2);
  NEXT(3);
L_Copy2:
  SLOT(1) = SLOT(2);
  SLOT(3) = SLOT(4);
  NEXT(5);
L_Const32:
  SLOT(1) = ip[2];
  NEXT(3);
L_Const64:
  SLOT(1) = static_cast<u64>(ip[2]) | (static_cast<u64>(ip[3]) << 32);
  NEXT(4);
L_Call:
  callee = inst->funcs[ip[1]];
  nfp = fp + ip[2];
  ret_ip = ip + 4;
  goto do_call;
L_CallIndirect: {
  TableInst* t = inst->tables[ip[2]];
  const u32 i = static_cast<u32>(SLOT(4));
  if (i >= t->elements.size()) [[unlikely]] TRAP(TrapKind::UndefinedElement);
  callee = reinterpret_cast<FuncInst*>(t->elements[i]);
  if (callee == nullptr) [[unlikely]] {
    out->element_index = i;
    TRAP(TrapKind::UninitializedElement);
  }
  const FuncType* want = inst->types[ip[1]];
  if (callee->type != want && !(*callee->type == *want)) [[unlikely]] TRAP(TrapKind::IndirectCallTypeMismatch);
  nfp = fp + ip[3];
  ret_ip = ip + 6;
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
    if (st != HostStatus::Ok) [[unlikely]] TRAP(st == HostStatus::Trap ? TrapKind::Host : TrapKind::Exit);
    ip = ret_ip;
    if constexpr (Metered) fuel -= ip[-1];
    DISPATCH();
  }
  // The stack check comes first, as Wasmtime's prologue stack check precedes its fuel entry
  // check: a call that cannot start is CallStackExhausted whatever the balance, and charges nothing.
  if (cs.fr == fr_end || static_cast<u64>(stack_end - nfp) < callee->frame_slots) [[unlikely]]
    TRAP(TrapKind::CallStackExhausted);
  // Metered: the call charges the callee's first segment, after the callee's entry check, which
  // sees only what ran plus the entry's own 1. The caller's next segment (ret_ip[-1], the `post`
  // word) is charged when the call returns, as Wasmtime adds the costs of the operators after a
  // call once it has returned: charged ahead, a deep recursion would see the costs of code that
  // has not run at its entry checks (and run out of fuel early), and a trap would count them.
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
  JIT_ENTER(callee, nfp, {
    cs.fr = cs.fr - 1;
    RELOAD_MEMORY();
    ip = ret_ip;
    if constexpr (Metered) fuel -= ip[-1];
    DISPATCH();
  });
  fp = nfp;
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
  if constexpr (Metered) fuel -= ip[-1];  // the caller's segment after the call (do_call)
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
L_Fuel:
  if constexpr (Metered) fuel -= ip[1];
  NEXT(2);
L_FuelCheck:
  if constexpr (Metered) {
    if (fuel - static_cast<i64>(ip[2]) <= 0) [[unlikely]] {
      REFUEL(ip[2]);
    }
    fuel -= ip[1];
  }
  NEXT(3);
L_Select:
  SLOT(1) = static_cast<u32>(SLOT(4)) != 0 ? SLOT(2) : SLOT(3);
  NEXT(5);
L_GlobalGet:
  SLOT(1) = inst->globals[ip[2]]->bits;
  NEXT(3);
L_GlobalSet:
  inst->globals[ip[1]]->bits = SLOT(2);
  NEXT(3);
L_TableGet: {
  TableInst* t = inst->tables[ip[2]];
  const u32 i = static_cast<u32>(SLOT(3));
  if (i >= t->elements.size()) [[unlikely]] TRAP(TrapKind::OutOfBoundsTableAccess);
  SLOT(1) = t->elements[i];
  NEXT(4);
}
L_TableSet: {
  TableInst* t = inst->tables[ip[1]];
  const u32 i = static_cast<u32>(SLOT(2));
  if (i >= t->elements.size()) [[unlikely]] TRAP(TrapKind::OutOfBoundsTableAccess);
  t->elements[i] = SLOT(3);
  NEXT(4);
}
L_TableSize:
  SLOT(1) = static_cast<u32>(inst->tables[ip[2]]->elements.size());
  NEXT(3);
L_TableGrow: {
  TableInst* t = inst->tables[ip[2]];
  const u64 init = SLOT(3);
  const u32 n = static_cast<u32>(SLOT(4));
  CHARGE_UNITS(n);
  const u64 old = t->elements.size();
  if (old + n > t->max_elements) {
    SLOT(1) = 0xFFFFFFFFu;
  } else {
    t->elements.resize(old + n, init);
    SLOT(1) = static_cast<u32>(old);
  }
  NEXT(5);
}
L_TableFill: {
  TableInst* t = inst->tables[ip[1]];
  const u32 i = static_cast<u32>(SLOT(2));
  const u64 v = SLOT(3);
  const u32 n = static_cast<u32>(SLOT(4));
  if (static_cast<u64>(i) + n > t->elements.size()) [[unlikely]] TRAP(TrapKind::OutOfBoundsTableAccess);
  CHARGE_UNITS(n);
  std::fill_n(t->elements.begin() + i, n, v);
  NEXT(5);
}
L_TableCopy: {
  TableInst* dt = inst->tables[ip[1]];
  TableInst* st = inst->tables[ip[2]];
  const u32 d = static_cast<u32>(SLOT(3));
  const u32 s = static_cast<u32>(SLOT(4));
  const u32 n = static_cast<u32>(SLOT(5));
  if (static_cast<u64>(d) + n > dt->elements.size() || static_cast<u64>(s) + n > st->elements.size()) [[unlikely]]
    TRAP(TrapKind::OutOfBoundsTableAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memmove(dt->elements.data() + d, st->elements.data() + s, n * sizeof(u64));
  NEXT(6);
}
L_TableInit: {
  const std::vector<u64>& seg = inst->elements[ip[1]];
  TableInst* t = inst->tables[ip[2]];
  const u32 d = static_cast<u32>(SLOT(3));
  const u32 s = static_cast<u32>(SLOT(4));
  const u32 n = static_cast<u32>(SLOT(5));
  if (static_cast<u64>(s) + n > seg.size() || static_cast<u64>(d) + n > t->elements.size()) [[unlikely]]
    TRAP(TrapKind::OutOfBoundsTableAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memcpy(t->elements.data() + d, seg.data() + s, n * sizeof(u64));
  NEXT(6);
}
L_ElemDrop:
  inst->elements[ip[1]].clear();
  NEXT(2);
L_MemorySize:
  SLOT(1) = static_cast<u32>(memsize / kPageSize);
  NEXT(2);
L_MemoryGrow: {
  const std::int64_t r = inst->memory0->grow(static_cast<u32>(SLOT(2)));
  SLOT(1) = static_cast<u32>(r);
  RELOAD_MEMORY();
  NEXT(3);
}
L_MemoryFill: {
  const u32 d = static_cast<u32>(SLOT(1));
  const auto v = static_cast<std::uint8_t>(SLOT(2));
  const u32 n = static_cast<u32>(SLOT(3));
  if (static_cast<u64>(d) + n > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memset(mem + d, v, n);
  NEXT(4);
}
L_MemoryCopy: {
  const u32 d = static_cast<u32>(SLOT(1));
  const u32 s = static_cast<u32>(SLOT(2));
  const u32 n = static_cast<u32>(SLOT(3));
  if (static_cast<u64>(d) + n > memsize || static_cast<u64>(s) + n > memsize) [[unlikely]]
    TRAP(TrapKind::OutOfBoundsMemoryAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memmove(mem + d, mem + s, n);
  NEXT(4);
}
L_MemoryInit: {
  const std::span<const std::uint8_t> seg = inst->datas[ip[1]];
  const u32 d = static_cast<u32>(SLOT(2));
  const u32 s = static_cast<u32>(SLOT(3));
  const u32 n = static_cast<u32>(SLOT(4));
  if (static_cast<u64>(s) + n > seg.size() || static_cast<u64>(d) + n > memsize) [[unlikely]]
    TRAP(TrapKind::OutOfBoundsMemoryAccess);
  CHARGE_UNITS(n);
  if (n != 0) std::memcpy(mem + d, seg.data() + s, n);
  NEXT(5);
}
L_DataDrop:
  inst->datas[ip[1]] = {};
  NEXT(2);
L_RefIsNull:
  SLOT(1) = SLOT(2) == 0 ? 1u : 0u;
  NEXT(3);
L_RefFunc:
  SLOT(1) = reinterpret_cast<u64>(inst->funcs[ip[2]]);
  NEXT(3);

#define LOAD(Name, T, Convert)                                                          \
  L_##Name : {                                                                          \
    const u64 ea = static_cast<u64>(static_cast<u32>(SLOT(2))) + ip[3];                 \
    if (ea + sizeof(T) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess); \
    T v;                                                                                \
    std::memcpy(&v, mem + ea, sizeof(T));                                               \
    SLOT(1) = Convert(v);                                                               \
    NEXT(4);                                                                            \
  }
#define ZX32(v) static_cast<u64>(static_cast<u32>(v))
#define SX32(v) static_cast<u64>(static_cast<u32>(static_cast<i32>(v)))
#define ZX64(v) static_cast<u64>(v)
#define SX64(v) static_cast<u64>(static_cast<i64>(v))
  LOAD(I32Load, u32, ZX32)
  LOAD(I64Load, u64, ZX64)
  LOAD(I32Load8S, std::int8_t, SX32)
  LOAD(I32Load8U, std::uint8_t, ZX32)
  LOAD(I32Load16S, std::int16_t, SX32)
  LOAD(I32Load16U, std::uint16_t, ZX32)
  LOAD(I64Load8S, std::int8_t, SX64)
  LOAD(I64Load8U, std::uint8_t, ZX64)
  LOAD(I64Load16S, std::int16_t, SX64)
  LOAD(I64Load16U, std::uint16_t, ZX64)
  LOAD(I64Load32S, std::int32_t, SX64)
  LOAD(I64Load32U, std::uint32_t, ZX64)
#undef LOAD
#define STORE(Name, T)                                                                  \
  L_##Name : {                                                                          \
    const u64 ea = static_cast<u64>(static_cast<u32>(SLOT(1))) + ip[3];                 \
    if (ea + sizeof(T) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess); \
    const T v = static_cast<T>(SLOT(2));                                                \
    std::memcpy(mem + ea, &v, sizeof(T));                                               \
    NEXT(4);                                                                            \
  }
  STORE(I32Store, u32)
  STORE(I64Store, u64)
  STORE(I32Store8, std::uint8_t)
  STORE(I32Store16, std::uint16_t)
  STORE(I64Store8, std::uint8_t)
  STORE(I64Store16, std::uint16_t)
  STORE(I64Store32, std::uint32_t)
#undef STORE
#define LOAD_ADD(Name, T, Convert)                                                       \
  L_##Name##Add : {                                                                     \
    const u64 ea = static_cast<u64>(static_cast<u32>(SLOT(2)) + ip[3]) + ip[4];         \
    if (ea + sizeof(T) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess); \
    T v;                                                                                \
    std::memcpy(&v, mem + ea, sizeof(T));                                               \
    SLOT(1) = Convert(v);                                                               \
    NEXT(5);                                                                            \
  }
  LOAD_ADD(I32Load, u32, ZX32)
  LOAD_ADD(I64Load, u64, ZX64)
  LOAD_ADD(I32Load8S, std::int8_t, SX32)
  LOAD_ADD(I32Load8U, std::uint8_t, ZX32)
  LOAD_ADD(I32Load16S, std::int16_t, SX32)
  LOAD_ADD(I32Load16U, std::uint16_t, ZX32)
  LOAD_ADD(I64Load8S, std::int8_t, SX64)
  LOAD_ADD(I64Load8U, std::uint8_t, ZX64)
  LOAD_ADD(I64Load16S, std::int16_t, SX64)
  LOAD_ADD(I64Load16U, std::uint16_t, ZX64)
  LOAD_ADD(I64Load32S, std::int32_t, SX64)
  LOAD_ADD(I64Load32U, std::uint32_t, ZX64)
#undef LOAD_ADD
#define STORE_ADD(Name, T)                                                               \
  L_##Name##Add : {                                                                     \
    const u64 ea = static_cast<u64>(static_cast<u32>(SLOT(1)) + ip[2]) + ip[4];         \
    if (ea + sizeof(T) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess); \
    const T v = static_cast<T>(SLOT(3));                                                \
    std::memcpy(mem + ea, &v, sizeof(T));                                               \
    NEXT(5);                                                                            \
  }
  STORE_ADD(I32Store, u32)
  STORE_ADD(I64Store, u64)
  STORE_ADD(I32Store8, std::uint8_t)
  STORE_ADD(I32Store16, std::uint16_t)
  STORE_ADD(I64Store8, std::uint8_t)
  STORE_ADD(I64Store16, std::uint16_t)
  STORE_ADD(I64Store32, std::uint32_t)
#undef STORE_ADD
#define LOAD_ABS(Name, T, Convert)                                                       \
  L_##Name##Abs : {                                                                     \
    const u64 ea = static_cast<u64>(ip[2]) + ip[3];                                     \
    if (ea + sizeof(T) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess); \
    T v;                                                                                \
    std::memcpy(&v, mem + ea, sizeof(T));                                               \
    SLOT(1) = Convert(v);                                                               \
    NEXT(4);                                                                            \
  }
  LOAD_ABS(I32Load, u32, ZX32)
  LOAD_ABS(I64Load, u64, ZX64)
  LOAD_ABS(I32Load8S, std::int8_t, SX32)
  LOAD_ABS(I32Load8U, std::uint8_t, ZX32)
  LOAD_ABS(I32Load16S, std::int16_t, SX32)
  LOAD_ABS(I32Load16U, std::uint16_t, ZX32)
  LOAD_ABS(I64Load8S, std::int8_t, SX64)
  LOAD_ABS(I64Load8U, std::uint8_t, ZX64)
  LOAD_ABS(I64Load16S, std::int16_t, SX64)
  LOAD_ABS(I64Load16U, std::uint16_t, ZX64)
  LOAD_ABS(I64Load32S, std::int32_t, SX64)
  LOAD_ABS(I64Load32U, std::uint32_t, ZX64)
#undef LOAD_ABS
#define STORE_ABS(Name, T)                                                               \
  L_##Name##Abs : {                                                                     \
    const u64 ea = static_cast<u64>(ip[1]) + ip[3];                                     \
    if (ea + sizeof(T) > memsize) [[unlikely]] TRAP(TrapKind::OutOfBoundsMemoryAccess); \
    const T v = static_cast<T>(SLOT(2));                                                \
    std::memcpy(mem + ea, &v, sizeof(T));                                               \
    NEXT(4);                                                                            \
  }
  STORE_ABS(I32Store, u32)
  STORE_ABS(I64Store, u64)
  STORE_ABS(I32Store8, std::uint8_t)
  STORE_ABS(I32Store16, std::uint16_t)
  STORE_ABS(I64Store8, std::uint8_t)
  STORE_ABS(I64Store16, std::uint16_t)
  STORE_ABS(I64Store32, std::uint32_t)
#undef STORE_ABS

#define FUSED(Cmp, OPER, T)                                                                     \
  L_BrIfI32##Cmp : if (static_cast<T>(SLOT(1)) OPER static_cast<T>(SLOT(2))) JUMP(ip[3]);         \
  FALLTHROUGH(4);                                                                                      \
  L_BrIfI32##Cmp##Imm : if (static_cast<T>(SLOT(1)) OPER static_cast<T>(ip[2])) JUMP(ip[3]);      \
  FALLTHROUGH(4);                                                                                      \
  L_BrUnlessI32##Cmp : if (!(static_cast<T>(SLOT(1)) OPER static_cast<T>(SLOT(2)))) JUMP(ip[3]);  \
  FALLTHROUGH(4);                                                                                      \
  L_BrUnlessI32##Cmp##Imm : if (!(static_cast<T>(SLOT(1)) OPER static_cast<T>(ip[2]))) JUMP(ip[3]); \
  FALLTHROUGH(4);
  FUSED(Eq, ==, u32)
  FUSED(Ne, !=, u32)
  FUSED(LtS, <, i32)
  FUSED(LtU, <, u32)
  FUSED(GtS, >, i32)
  FUSED(GtU, >, u32)
  FUSED(LeS, <=, i32)
  FUSED(LeU, <=, u32)
  FUSED(GeS, >=, i32)
  FUSED(GeU, >=, u32)
#undef FUSED

#define SPRAWLING_HANDLER_Un(Name, A, R)                                                     \
  L_Num##Name : {                                                                           \
    R r{};                                                                                  \
    if (const TrapKind k = num::un<Opcode::Name, A, R>(get<A>(SLOT(2)), r); k != TrapKind::None) \
      [[unlikely]] TRAP(k);                                                                 \
    SLOT(1) = put<R>(r);                                                                    \
    NEXT(3);                                                                                \
  }
#define SPRAWLING_HANDLER_Bin(Name, A, R)                                                               \
  L_Num##Name : {                                                                                      \
    R r{};                                                                                             \
    if (const TrapKind k = num::bin<Opcode::Name, A, R>(get<A>(SLOT(2)), get<A>(SLOT(3)), r); k != TrapKind::None) \
      [[unlikely]] TRAP(k);                                                                            \
    SLOT(1) = put<R>(r);                                                                               \
    NEXT(4);                                                                                           \
  }
#define SPRAWLING_HANDLER_BinImm(Name, A, R)                                                        \
  SPRAWLING_HANDLER_Bin(Name, A, R) L_Num##Name##Imm : {                                           \
    R r{};                                                                                         \
    if (const TrapKind k = num::bin<Opcode::Name, A, R>(get<A>(SLOT(2)), imm<A>(ip[3]), r); k != TrapKind::None) \
      [[unlikely]] TRAP(k);                                                                        \
    SLOT(1) = put<R>(r);                                                                           \
    NEXT(4);                                                                                       \
  }
#define SPRAWLING_HANDLER_BinFImm(Name, A, R)                                               \
  SPRAWLING_HANDLER_Bin(Name, A, R) L_Num##Name##Imm : {                                   \
    R r{};                                                                                 \
    (void)num::bin<Opcode::Name, A, R>(get<A>(SLOT(2)), fimm<A>(ip + 3), r);               \
    SLOT(1) = put<R>(r);                                                                   \
    NEXT(sizeof(A) == 8 ? 5 : 4);                                                          \
  }
#define SPRAWLING_SIMPLE_OP(Name, A, R, Form) SPRAWLING_HANDLER_##Form(Name, A, R)
#include "wasm/simple_ops.inc"
#undef SPRAWLING_SIMPLE_OP

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
#undef NEXT
#undef SLOT
#undef stack_end
#undef fr_base
#undef fr_end
#undef FALLTHROUGH
#undef JUMP
#undef TRAP
#undef RELOAD_MEMORY
#undef REFUEL
#undef CHARGE_UNITS
#undef JIT_ENTER

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
  run<Metered>(&store, func, &out, nullptr);
}
template void execute<false>(Store::Impl&, FuncInst*, ExecOutcome&);
template void execute<true>(Store::Impl&, FuncInst*, ExecOutcome&);

}  // namespace sprawling::wasm

#pragma GCC diagnostic pop
