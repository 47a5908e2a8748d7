// The compiled tier's runtime side: entering compiled code from the interpreter, and the helpers
// compiled code calls for what it does not inline (refuel, calls that leave the module's machine
// code, host calls, memory.grow). Each follows the interpreter's handler of the same operation.
#include "wasm/jit/runtime_calls.hpp"
#include "wasm/interp/interpreter.hpp"
#include "wasm/jit/jit.hpp"
#include "wasm/exec/numeric.hpp"
#include "wasm/exec/relaxed_simd.hpp"
#include "wasm/exec/simd.hpp"
#include "wasm/icode/simd_shape.hpp"
#include "wasm/runtime/heap/gc_heap.hpp"
#include "wasm/runtime/heap/gc_ops.hpp"

#include <pthread.h>
#include <algorithm>
#include <atomic>
#include <array>
#include <bit>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace sprawling::wasm::jit {

namespace {

// Room left on this thread's stack for compiled frames and whatever they call (host functions
// included) before calls fall back to the interpreter, which does not recurse natively.
constexpr std::size_t kNativeStackReserve = std::size_t{256} << 10;

char* compute_native_limit() noexcept {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return nullptr;
  void* low = nullptr;
  std::size_t size = 0;
  const int rc = pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  if (rc != 0 || size <= kNativeStackReserve) {
    // Unknown or tiny stack: never enter compiled code from here.
    return reinterpret_cast<char*>(~std::uintptr_t{0});
  }
  return static_cast<char*>(low) + kNativeStackReserve;
}

std::uint32_t run_pending(Ctx* c, std::uint64_t* fp, char* fr);

// Machine code writes Ctx::fr only before what reads it and never restores it, so after it
// returns the context may hold a callee's deeper record top: the runtime's calls into machine code
// put the caller's back when they leave, and the caller's Ctx::fr_lim, which they set for the
// code they run (segment_limit).
struct KeepFrameRecordTop {
  Ctx* const c;
  char* const top;
  char* const lim;
  explicit KeepFrameRecordTop(Ctx* ctx) : c(ctx), top(ctx->fr), lim(ctx->fr_lim) {}
  KeepFrameRecordTop(const KeepFrameRecordTop&) = delete;
  KeepFrameRecordTop& operator=(const KeepFrameRecordTop&) = delete;
  ~KeepFrameRecordTop() {
    c->fr = top;
    c->fr_lim = lim;
  }
};

// Ctx::fr_lim for machine code that starts running here: its first activation has record top
// `top` and frame `fp`, and `slot` is its function's. A call one deeper takes at most
// ModuleCode::segment_slots of the value stack and segment_bytes of the native stack, so the
// activations below the limit returned can each make a direct call with room on both stacks and
// within the depth limit, and their calls test only the limit. A call past it takes the
// helper, which makes the interpreter's tests and, when the callee runs as machine code, sets
// a limit for it from there (so a deep recursion costs one helper call per segment). Code
// without those bounds: `top` (its calls make their own tests).
[[gnu::noinline]] char* segment_limit(const Ctx* c, const Slot* slot, const std::uint64_t* fp, char* top) {
  const ModuleCode* code = slot != nullptr ? slot->code : nullptr;
  if (code == nullptr || code->segment_slots == 0 || code->segment_bytes == 0) return top;
  // This function's frame and the runtime's call into machine code, with room to spare.
  constexpr std::uintptr_t kSlack = 4096;
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const auto limit = reinterpret_cast<std::uintptr_t>(c->native_limit);
  if (sp < limit || sp - limit < kSlack || fp > c->stack_end || top > c->fr_end) return top;
  const std::uint64_t by_native = (sp - limit - kSlack) / code->segment_bytes;
  const std::uint64_t by_values = static_cast<std::uint64_t>(c->stack_end - fp) / code->segment_slots;
  const std::uint64_t by_depth = static_cast<std::uint64_t>(c->fr_end - top) / sizeof(Frame);
  return top + std::min({by_native, by_values, by_depth}) * sizeof(Frame);
}

// Runs `callee` interpreted in a nested run whose frame is at fp and whose frame record is `fr`
// (with entry_made, its entry was made already: a pending tail callee), then hands back the
// counter and, on a trap, what locates it.
std::uint32_t run_interpreted(Ctx* c, Store::Impl& s, FuncInst* callee, std::uint64_t* fp, Frame* fr,
                              bool entry_made) {
  s.entry_fp = fp;
  s.entry_frame = fr;
  s.counter = c->fuel;
  if (entry_made) s.entry_made = true;
  ExecOutcome o;
  if (c->metered) {
    execute<true>(s, callee, o);
  } else {
    execute<false>(s, callee, o);
  }
  c->fuel = s.counter;
  if (o.trap == TrapKind::None) return 0;
  c->out->host_message = std::move(o.host_message);
  c->out->exit_code = o.exit_code;
  c->out->element_index = o.element_index;
  c->loc_fn = o.func;
  c->loc_ip = o.ip;
  return static_cast<std::uint32_t>(o.trap) | kLocated;
}

// A function's machine code found published and the function resolved in this store: machine
// code's call_indirect and call_ref call it inline from now on (FuncInst::native and ::body).
void resolved(FuncInst& callee, int variant, const Slot& slot, Entry entry) {
  callee.native[variant] = entry;
  const std::vector<void*>& bodies = slot.code->bodies;
  const auto d = static_cast<std::size_t>(&slot - slot.code->entries.data());
  callee.body[variant] = d < bodies.size() ? bodies[d] : nullptr;
}

// The caller's side of a call to a wasm function that is not entered directly as machine code:
// the interpreter's do_call checks, then the callee runs in a nested interpreter run (which may
// itself enter the callee's machine code).
std::uint32_t call_wasm(Ctx* c, FuncInst* callee, std::uint64_t* nfp) {
  Store::Impl& s = *c->store;
  auto* fr = reinterpret_cast<Frame*>(c->fr);
  const int variant = c->metered ? kMetered : kUnmetered;
  // Lazy translation, as the interpreter's do_call: tier-up code does not resolve every function
  // up front, and the checks below need the callee's frame size and entry charge.
  if (callee->entry[variant] == nullptr) resolve_code(*callee, variant);
  if (c->fr == c->fr_end || static_cast<std::uint64_t>(c->stack_end - nfp) < callee->frame_slots)
    return static_cast<std::uint32_t>(TrapKind::CallStackExhausted);
  if (c->metered && c->fuel <= 1) {
    const TrapKind k = s.refuel(c->fuel, 1);
    if (k != TrapKind::None) return static_cast<std::uint32_t>(k);
  }
  // Machine code for the callee (call_indirect, or a callee of another instance): enter it
  // directly, after the entry charge the interpreter's do_call makes (locals: the callee zeroes).
  if (const Slot* slot = callee->jit[variant]; slot != nullptr) {
    const Entry entry = slot->entry.load(std::memory_order_acquire);
    if (entry != nullptr) resolved(*callee, variant, *slot, entry);  // resolved above: the inline paths may call it
    if (entry != nullptr && native_stack_ok()) {
      if (c->metered) c->fuel -= callee->entry_fuel;
      if (callee->instance == c->inst) {
        const KeepFrameRecordTop keep(c);
        c->fr = keep.top + sizeof(Frame);
        c->fr_lim = segment_limit(c, slot, nfp, c->fr);
        const std::uint32_t st = entry(c, nfp).status;
        if (st == kTailPending) return run_pending(c, nfp, keep.top + sizeof(Frame));
        return st == 0 ? 0 : st | kLocated;  // located by the callee, in this same context
      }
      const Result r = enter(entry, s, callee, nfp, fr + 1, c->fuel, *c->out, c->metered);
      c->fuel = r.fuel;
      if (r.tail != nullptr) {
        c->tail_callee = r.tail;
        return run_pending(c, nfp, c->fr + sizeof(Frame));
      }
      if (r.trap == TrapKind::None) return 0;
      c->loc_fn = r.func;
      c->loc_ip = r.ip;
      return static_cast<std::uint32_t>(r.trap) | kLocated;
    }
  }
  // The nested run makes the entry charge itself: the balance is above 1, so its own entry
  // check passes without a refill, exactly as the interpreter's single check did.
  return run_interpreted(c, s, callee, nfp, fr + 1, false);
}

// Runs the pending tail callee (Ctx::tail_callee) in the frame at fp, its entry made, to its end,
// with `fr` its frame-record top (the call's record pushed): machine code of this instance
// natively, another instance's through enter, an interpreted one in a nested run that skips the
// entry protocol. A callee that itself leaves a tail call pending is followed in this loop, so
// the native stack stays bounded however long the chain. 0 or a located trap. Ctx::fr is `fr` as
// each callee starts and the caller's again on return.
std::uint32_t run_pending(Ctx* c, std::uint64_t* fp, char* fr) {
  Store::Impl& s = *c->store;
  const int variant = c->metered ? kMetered : kUnmetered;
  const KeepFrameRecordTop keep(c);
  for (;;) {
    c->fr = fr;
    FuncInst* const callee = c->tail_callee;
    if (const Slot* slot = callee->jit[variant]; slot != nullptr) {
      if (const Entry entry = slot->entry.load(std::memory_order_acquire); entry != nullptr && native_stack_ok()) {
        if (callee->instance == c->inst) {
          c->fr_lim = segment_limit(c, slot, fp, fr);
          const std::uint32_t st = entry(c, fp).status;
          if (st == kTailPending) continue;
          return st == 0 ? 0 : st | kLocated;
        }
        const Result r = enter(entry, s, callee, fp, reinterpret_cast<Frame*>(fr), c->fuel, *c->out, c->metered);
        c->fuel = r.fuel;
        if (r.tail != nullptr) {
          c->tail_callee = r.tail;
          continue;
        }
        if (r.trap == TrapKind::None) return 0;
        c->loc_fn = r.func;
        c->loc_ip = r.ip;
        return static_cast<std::uint32_t>(r.trap) | kLocated;
      }
    }
    return run_interpreted(c, s, callee, fp, reinterpret_cast<Frame*>(fr), true);
  }
}

}  // namespace

char* native_stack_limit() noexcept {
  // Constant-initialized and filled on first use: a thread_local with a dynamic initializer is
  // reached through a guard-checking wrapper on every access, which cost 2-4% of CPython's run
  // time under tier-up (this is asked at every interpreter-to-machine-code call).
  thread_local constinit char* limit = nullptr;
  thread_local constinit bool known = false;
  if (!known) [[unlikely]] {
    limit = compute_native_limit();
    known = true;
  }
  return limit;
}

namespace {
std::atomic<std::uint64_t> osr_count{0};
}  // namespace

std::uint64_t osr_entries() noexcept {
  return osr_count.load(std::memory_order_relaxed);
}

Result enter(Entry entry, Store::Impl& store, FuncInst* callee, std::uint64_t* nfp, Frame* fr, std::int64_t fuel,
             ExecOutcome& out, bool metered, std::uint32_t osr_at) {
  InstanceImpl* inst = callee->instance;
  Ctx c;
  c.fuel = fuel;
  c.fr = reinterpret_cast<char*>(fr);
  c.fr_end = reinterpret_cast<char*>(store.frames + store.limits.max_call_depth);
  c.stack_end = store.stack + store.limits.max_value_stack_slots;
  c.mem_base = &inst->memory0->base;
  c.mem_size = &inst->memory0->size;
  c.globals = inst->globals.data();
  c.funcs = inst->funcs.data();
  c.tables = inst->tables.data();
  c.types = inst->types.data();
  c.memories = inst->memories.data();
  c.native_limit = native_stack_limit();
  c.inst = inst;
  c.fr_lim = segment_limit(&c, callee->jit[metered ? kMetered : kUnmetered], nfp, c.fr);
  c.store = &store;
  c.gc_handles = &store.gc.handle_table();
  c.gc_inline = &store.gc.inline_state();
  c.out = &out;
  c.metered = metered;
  c.osr_at = osr_at;
  if (osr_at != 0) osr_count.fetch_add(1, std::memory_order_relaxed);
  // Compiled frames lie below this one: a garbage collection while they run scans the native
  // stack up to here (the outermost entry's frame when machine code and the interpreter nest).
  const bool outermost = store.native_roots_top == nullptr;
  if (outermost) store.native_roots_top = __builtin_frame_address(0);
  // A compilation this code triggers past the run's deadline takes this context's counter.
  JobLimits* const limits = store.job_limits;
  Ctx* const outer_ctx = limits != nullptr ? limits->ctx : nullptr;
  if (limits != nullptr) limits->ctx = &c;
  const std::uint32_t status = entry(&c, nfp).status;
  if (limits != nullptr) limits->ctx = outer_ctx;
  if (outermost) store.native_roots_top = nullptr;
  if (status == 0) return {c.fuel, TrapKind::None, nullptr, nullptr, nullptr};
  if (status == kTailPending) return {c.fuel, TrapKind::None, nullptr, nullptr, c.tail_callee};
  const std::uint32_t* ip = c.loc_ip;
  if (ip == nullptr) {
    // Machine code calls tiered-up callees natively, without the interpreter's lazy translation
    // of this store's FuncInst: the trapping function may not be resolved here yet.
    const int variant = metered ? kMetered : kUnmetered;
    if (c.loc_fn->code[variant] == nullptr) resolve_code(*c.loc_fn, variant);
    ip = c.loc_fn->code[variant]->code.data() + c.loc_word;
  }
  return {c.fuel, static_cast<TrapKind>(status & 0xFF), c.loc_fn, ip, nullptr};
}

extern "C" {

std::uint32_t sprawling_jit_refuel(Ctx* c, std::int64_t visible) {
  return static_cast<std::uint32_t>(c->store->refuel(c->fuel, visible));
}

std::uint32_t sprawling_jit_fuel_ahead(Ctx* c, std::int64_t extra) {
  return c->store->fuel_ahead(c->fuel, extra) ? 1 : 0;
}

std::uint32_t sprawling_jit_call(Ctx* c, FuncInst* callee, std::uint64_t* nfp) {
  if (callee->host == nullptr) return call_wasm(c, callee, nfp);
  // As the interpreter's host path: a callback into the store starts above this frame and sees
  // the counter in the store; only the `call` itself costs fuel.
  Store::Impl& s = *c->store;
  s.entry_fp = nfp + std::max(callee->num_params, callee->num_results);
  s.entry_frame = reinterpret_cast<Frame*>(c->fr);
  if (c->metered) s.counter = c->fuel;
  const HostStatus st = call_host(*callee, nfp, MemoryView{*c->mem_base, *c->mem_size}, *c->out);
  if (c->metered) c->fuel = s.counter;
  return static_cast<std::uint32_t>(host_trap_kind(st));  // 0 (None) for Ok
}

// Table indexes and lengths are u64, as the interpreter reads them: an i32 one is zero-extended
// in its slot, a 64-bit table's is whole.
std::uint32_t sprawling_jit_call_indirect(Ctx* c, std::uint32_t type_index, std::uint32_t table_index,
                                          std::uint64_t element, std::uint64_t* nfp) {
  InstanceImpl& inst = *c->inst;
  TableInst* t = inst.tables[table_index];
  if (element >= t->elements.size()) return static_cast<std::uint32_t>(TrapKind::UndefinedElement);
  auto* callee = reinterpret_cast<FuncInst*>(t->elements[element]);
  if (callee == nullptr) {
    c->out->element_index = static_cast<std::uint32_t>(element);
    return static_cast<std::uint32_t>(TrapKind::UninitializedElement);
  }
  const FuncType* want = inst.types[type_index];
  if (callee->type != want && !declared_subtype(*callee->type, *want))
    return static_cast<std::uint32_t>(TrapKind::IndirectCallTypeMismatch);
  return sprawling_jit_call(c, callee, nfp);
}

std::uint32_t sprawling_jit_memory_grow(Ctx* c, std::uint32_t delta) {
  return static_cast<std::uint32_t>(c->inst->memory0->grow(delta));
}

std::uint32_t sprawling_jit_return_call(Ctx* c, FuncInst* callee, std::uint64_t* nfp, std::uint64_t* fp) {
  Store::Impl& s = *c->store;
  if (callee->host != nullptr) {
    // As the interpreter's: the host function runs on this frame (from slot 0); only the
    // instruction itself costs fuel.
    std::memmove(fp, nfp, sizeof(std::uint64_t) * callee->num_params);
    s.entry_fp = fp + std::max(callee->num_params, callee->num_results);
    s.entry_frame = reinterpret_cast<Frame*>(c->fr);
    if (c->metered) s.counter = c->fuel;
    const HostStatus st = call_host(*callee, fp, MemoryView{*c->mem_base, *c->mem_size}, *c->out);
    if (c->metered) c->fuel = s.counter;
    return static_cast<std::uint32_t>(host_trap_kind(st));
  }
  const int variant = c->metered ? kMetered : kUnmetered;
  if (callee->entry[variant] == nullptr) resolve_code(*callee, variant);
  if (const Slot* slot = callee->jit[variant]; slot != nullptr && callee->native[variant] == nullptr) {
    if (const Entry entry = slot->entry.load(std::memory_order_acquire); entry != nullptr)
      resolved(*callee, variant, *slot, entry);  // as call_wasm's
  }
  // No frame record is taken: only the value stack can run out (before the charge).
  if (static_cast<std::uint64_t>(c->stack_end - fp) < callee->frame_slots)
    return static_cast<std::uint32_t>(TrapKind::CallStackExhausted);
  if (c->metered) {
    if (c->fuel <= 1) {
      const TrapKind k = s.refuel(c->fuel, 1);
      if (k != TrapKind::None) return static_cast<std::uint32_t>(k);
    }
    c->fuel -= callee->entry_fuel;
  }
  std::memmove(fp, nfp, sizeof(std::uint64_t) * callee->num_params);  // nfp >= fp
  for (std::uint32_t i = callee->num_params; i < callee->num_locals; ++i) fp[i] = 0;
  c->tail_callee = callee;
  return kTailPending;
}

std::uint32_t sprawling_jit_return_call_indirect(Ctx* c, std::uint32_t type_index, std::uint32_t table_index,
                                                 std::uint64_t element, std::uint64_t* nfp, std::uint64_t* fp) {
  InstanceImpl& inst = *c->inst;
  TableInst* t = inst.tables[table_index];
  if (element >= t->elements.size()) return static_cast<std::uint32_t>(TrapKind::UndefinedElement);
  auto* callee = reinterpret_cast<FuncInst*>(t->elements[element]);
  if (callee == nullptr) {
    c->out->element_index = static_cast<std::uint32_t>(element);
    return static_cast<std::uint32_t>(TrapKind::UninitializedElement);
  }
  const FuncType* want = inst.types[type_index];
  if (callee->type != want && !declared_subtype(*callee->type, *want))
    return static_cast<std::uint32_t>(TrapKind::IndirectCallTypeMismatch);
  return sprawling_jit_return_call(c, callee, nfp, fp);
}

std::uint32_t sprawling_jit_tail_resume(Ctx* c, std::uint64_t* nfp) {
  return run_pending(c, nfp, c->fr + sizeof(Frame));
}

}  // extern "C"

namespace {

constexpr auto kOobMemory = static_cast<std::uint32_t>(TrapKind::OutOfBoundsMemoryAccess);
constexpr auto kOobTable = static_cast<std::uint32_t>(TrapKind::OutOfBoundsTableAccess);

// The interpreter's CHARGE_UNITS: per unit after the bounds check, then the balance is checked.
std::uint32_t charge_units(Ctx* c, std::uint64_t n) {
  if (!c->metered) return 0;
  c->fuel = fuel_minus(c->fuel, n);
  if (c->fuel > 0) return 0;
  return static_cast<std::uint32_t>(c->store->refuel(c->fuel, 0));
}

// The interpreter's TABLE_OUT and MEM_OUT: `i > size || n > size - i`, which cannot wrap.
bool table_out(const TableInst& t, std::uint64_t i, std::uint64_t n) {
  return i > t.elements.size() || n > t.elements.size() - i;
}
bool mem_out(const MemoryInst& m, std::uint64_t a, std::uint64_t n) {
  return a > m.size || n > m.size - a;
}
// An address or length as memory m's address type reads it (MEM_ADDR).
std::uint64_t mem_addr(const MemoryInst& m, std::uint64_t v) {
  return m.type.limits.is64 ? v : static_cast<std::uint32_t>(v);
}

}  // namespace

extern "C" {

std::uint32_t sprawling_jit_memory_fill(Ctx* c, std::uint32_t d, std::uint32_t value, std::uint32_t n) {
  if (std::uint64_t{d} + n > *c->mem_size) return kOobMemory;
  if (const std::uint32_t k = charge_units(c, n)) return k;
  if (n != 0) std::memset(*c->mem_base + d, static_cast<std::uint8_t>(value), n);
  return 0;
}

std::uint32_t sprawling_jit_memory_copy(Ctx* c, std::uint32_t d, std::uint32_t s, std::uint32_t n) {
  if (std::uint64_t{d} + n > *c->mem_size || std::uint64_t{s} + n > *c->mem_size) return kOobMemory;
  if (const std::uint32_t k = charge_units(c, n)) return k;
  if (n != 0) std::memmove(*c->mem_base + d, *c->mem_base + s, n);
  return 0;
}

std::uint32_t sprawling_jit_memory_init(Ctx* c, std::uint32_t seg, std::uint32_t d, std::uint32_t s, std::uint32_t n) {
  const std::span<const std::uint8_t> data = c->inst->datas[seg];
  if (std::uint64_t{s} + n > data.size() || std::uint64_t{d} + n > *c->mem_size) return kOobMemory;
  if (const std::uint32_t k = charge_units(c, n)) return k;
  if (n != 0) std::memcpy(*c->mem_base + d, data.data() + s, n);
  return 0;
}

// Memories other than an i32 memory 0 (the MultiMemory ops), as the interpreter's handlers.
std::uint64_t sprawling_jit_memory_grow_m(Ctx* c, std::uint32_t mem, std::uint64_t delta) {
  MemoryInst& m = *c->inst->memories[mem];
  return mem_addr(m, static_cast<std::uint64_t>(m.grow(mem_addr(m, delta))));  // -1: 0xFFFFFFFF for an i32 memory
}

std::uint32_t sprawling_jit_memory_fill_m(Ctx* c, std::uint32_t mem, std::uint64_t d, std::uint32_t value,
                                          std::uint64_t n) {
  MemoryInst& m = *c->inst->memories[mem];
  d = mem_addr(m, d);
  n = mem_addr(m, n);
  if (mem_out(m, d, n)) return kOobMemory;
  if (const std::uint32_t k = charge_units(c, n)) return k;
  if (n != 0) std::memset(m.base + d, static_cast<std::uint8_t>(value), n);
  return 0;
}

std::uint32_t sprawling_jit_memory_copy_m(Ctx* c, std::uint32_t dst_mem, std::uint32_t src_mem, std::uint64_t d,
                                          std::uint64_t s, std::uint64_t n) {
  MemoryInst& dm = *c->inst->memories[dst_mem];
  const MemoryInst& sm = *c->inst->memories[src_mem];
  d = mem_addr(dm, d);
  s = mem_addr(sm, s);
  // The length has the smaller of the two address types.
  if (!(dm.type.limits.is64 && sm.type.limits.is64)) n = static_cast<std::uint32_t>(n);
  if (mem_out(dm, d, n) || mem_out(sm, s, n)) return kOobMemory;
  if (const std::uint32_t k = charge_units(c, n)) return k;
  if (n != 0) std::memmove(dm.base + d, sm.base + s, n);
  return 0;
}

std::uint32_t sprawling_jit_memory_init_m(Ctx* c, std::uint32_t seg, std::uint32_t mem, std::uint64_t d,
                                          std::uint32_t s, std::uint32_t n) {
  const std::span<const std::uint8_t> data = c->inst->datas[seg];
  MemoryInst& m = *c->inst->memories[mem];
  d = mem_addr(m, d);
  if (std::uint64_t{s} + n > data.size() || mem_out(m, d, n)) return kOobMemory;
  if (const std::uint32_t k = charge_units(c, n)) return k;
  if (n != 0) std::memcpy(m.base + d, data.data() + s, n);
  return 0;
}

void sprawling_jit_data_drop(Ctx* c, std::uint32_t seg) {
  c->inst->datas[seg] = {};
}

std::uint32_t sprawling_jit_table_get(Ctx* c, std::uint32_t t, std::uint64_t i, std::uint64_t* out) {
  const TableInst* table = c->inst->tables[t];
  if (i >= table->elements.size()) return kOobTable;
  *out = table->elements[i];
  return 0;
}

std::uint32_t sprawling_jit_table_set(Ctx* c, std::uint32_t t, std::uint64_t i, std::uint64_t value) {
  TableInst* table = c->inst->tables[t];
  if (i >= table->elements.size()) return kOobTable;
  table->elements[i] = value;
  return 0;
}

std::uint32_t sprawling_jit_table_size(Ctx* c, std::uint32_t t) {
  return static_cast<std::uint32_t>(c->inst->tables[t]->elements.size());
}

std::uint32_t sprawling_jit_table_grow(Ctx* c, std::uint32_t t, std::uint64_t init, std::uint64_t n,
                                       std::uint64_t* out) {
  TableInst* table = c->inst->tables[t];
  // A 64-bit table's n may pass 2^63: charged as the most fuel can hold, as the interpreter does.
  if (const std::uint32_t k = charge_units(c, std::min<std::uint64_t>(n, INT64_MAX))) return k;
  const std::int64_t r = table->grow(n, init);  // -1 past max_elements or the account
  *out = table->type.limits.is64 ? static_cast<std::uint64_t>(r) : static_cast<std::uint32_t>(r);
  return 0;
}

std::uint32_t sprawling_jit_table_fill(Ctx* c, std::uint32_t t, std::uint64_t i, std::uint64_t value, std::uint64_t n) {
  TableInst* table = c->inst->tables[t];
  if (table_out(*table, i, n)) return kOobTable;
  if (const std::uint32_t k = charge_units(c, n)) return k;
  std::fill_n(table->elements.begin() + i, n, value);
  return 0;
}

std::uint32_t sprawling_jit_table_copy(Ctx* c, std::uint32_t dt, std::uint32_t st, std::uint64_t d, std::uint64_t s,
                                       std::uint64_t n) {
  TableInst* dst = c->inst->tables[dt];
  const TableInst* src = c->inst->tables[st];
  if (table_out(*dst, d, n) || table_out(*src, s, n)) return kOobTable;
  if (const std::uint32_t k = charge_units(c, n)) return k;
  if (n != 0) std::memmove(dst->elements.data() + d, src->elements.data() + s, n * sizeof(std::uint64_t));
  return 0;
}

std::uint32_t sprawling_jit_table_init(Ctx* c, std::uint32_t seg, std::uint32_t t, std::uint64_t d, std::uint32_t s,
                                       std::uint32_t n) {
  const std::vector<std::uint64_t>& elems = c->inst->elements[seg];
  TableInst* table = c->inst->tables[t];
  if (std::uint64_t{s} + n > elems.size() || table_out(*table, d, n)) return kOobTable;
  if (const std::uint32_t k = charge_units(c, n)) return k;
  if (n != 0) std::memcpy(table->elements.data() + d, elems.data() + s, n * sizeof(std::uint64_t));
  return 0;
}

void sprawling_jit_elem_drop(Ctx* c, std::uint32_t seg) {
  c->inst->elements[seg].clear();
}

// As the interpreter's L_Throw and L_ThrowRef: the exception made (or taken) here is pending in
// the store until a handler takes it (sprawling_jit_catch) or it leaves the run.
std::uint32_t sprawling_jit_throw(Ctx* c, std::uint32_t tag, const std::uint64_t* values, const std::uint64_t* top) {
  Store::Impl& s = *c->store;
  const std::uint64_t exn = s.new_exception(c->inst->tags[tag], values, top);
  if (exn == 0) return static_cast<std::uint32_t>(TrapKind::ExceptionLimit);
  s.pending_exception = exn;
  return static_cast<std::uint32_t>(TrapKind::UncaughtException);
}

std::uint32_t sprawling_jit_throw_ref(Ctx* c, std::uint64_t exn) {
  Store::Impl& s = *c->store;
  if (s.gc.exception(exn) == nullptr) return static_cast<std::uint32_t>(TrapKind::NullExceptionReference);
  s.pending_exception = exn;
  return static_cast<std::uint32_t>(TrapKind::UncaughtException);
}

// find_handler's test of one clause (unwind.cpp): the tag of this instance's index against the
// exception's, then its values into the clause's slots.
std::uint64_t sprawling_jit_catch(Ctx* c, std::uint32_t tag, std::uint64_t* values) {
  Store::Impl& s = *c->store;
  const std::uint64_t exn = s.pending_exception;
  const GcObject* obj = s.gc.exception(exn);
  if (obj == nullptr) return 0;
  if (tag != CatchClause::kAnyTag && c->inst->tags[tag] != obj->tag) return 0;
  if (values != nullptr) std::ranges::copy(obj->values(), values);
  s.pending_exception = 0;
  return exn;
}

}  // extern "C"

// ---- garbage collection: the struct and array operations are gc_ops.hpp's, the functions the
// interpreter's Gc handlers call; a helper fetches the operands from the compiled frame's slots
// at fp (the caller stores the operand slots there and reloads the result slots) and returns the
// trap kind as its status. A new object may collect: its roots are the value stack up to
// fp + frame_slots (this frame's stored operands included) and, through
// Store::Impl::heap_roots, the native stack, where compiled frames keep every other live
// reference.
namespace {

constexpr auto kGcHeapLimit = static_cast<std::uint32_t>(TrapKind::GcHeapLimit);

std::uint32_t as_status(TrapKind k) { return static_cast<std::uint32_t>(k); }

// Runs a bulk operation `op(GcFuel&)` on the context's counter, copied in and back out.
template <class Op>
std::uint32_t charged(Ctx* c, Op op) {
  GcFuel fuel{c->fuel, c->metered};
  const TrapKind k = op(fuel);
  c->fuel = fuel.balance;
  return as_status(k);
}

// An i32 operand (an index or a count) from its slot.
std::uint32_t u32_at(const std::uint64_t* fp, std::uint32_t slot) { return static_cast<std::uint32_t>(fp[slot]); }

}  // namespace

extern "C" {

std::uint32_t sprawling_jit_ref_test(Ctx* c, std::uint64_t v, std::uint32_t heap, std::uint32_t flags) {
  return gc_ref_test(c->store->gc, *c->inst, v, heap, flags) ? 1 : 0;
}

std::uint32_t sprawling_jit_struct_new(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                       std::uint32_t base, std::uint32_t frame_slots) {
  const std::uint64_t h = gc_struct_new(*c->store, c->inst->types[type], base == kGcNoSlot ? nullptr : fp + base,
                                        fp + frame_slots);
  if (h == 0) return kGcHeapLimit;
  fp[dst] = h;
  return 0;
}

// array.new (init: its slot) and array.new_default (init kGcNoSlot).
std::uint32_t sprawling_jit_array_new(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                      std::uint32_t init, std::uint32_t n_slot, std::uint32_t frame_slots) {
  return charged(c, [&](GcFuel& fuel) {
    return gc_array_new(*c->store, fuel, c->inst->types[type], u32_at(fp, n_slot),
                        init == kGcNoSlot ? nullptr : fp + init, fp + frame_slots, fp + dst);
  });
}

std::uint32_t sprawling_jit_array_new_fixed(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                            std::uint32_t base, std::uint32_t n, std::uint32_t frame_slots) {
  const std::uint64_t h = gc_array_new_fixed(*c->store, c->inst->types[type], n, fp + base, fp + frame_slots);
  if (h == 0) return kGcHeapLimit;
  fp[dst] = h;
  return 0;
}

std::uint32_t sprawling_jit_array_new_data(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                           std::uint32_t data, std::uint32_t s_slot, std::uint32_t n_slot,
                                           std::uint32_t frame_slots) {
  return charged(c, [&](GcFuel& fuel) {
    return gc_array_new_data(*c->store, fuel, c->inst->types[type], c->inst->datas[data], u32_at(fp, s_slot),
                             u32_at(fp, n_slot), fp + frame_slots, fp + dst);
  });
}

std::uint32_t sprawling_jit_array_new_elem(Ctx* c, std::uint64_t* fp, std::uint32_t dst, std::uint32_t type,
                                           std::uint32_t elem, std::uint32_t s_slot, std::uint32_t n_slot,
                                           std::uint32_t frame_slots) {
  return charged(c, [&](GcFuel& fuel) {
    return gc_array_new_elem(*c->store, fuel, c->inst->types[type], c->inst->elements[elem], u32_at(fp, s_slot),
                             u32_at(fp, n_slot), fp + frame_slots, fp + dst);
  });
}

std::uint32_t sprawling_jit_array_fill(Ctx* c, std::uint64_t* fp, std::uint32_t ref, std::uint32_t d_slot,
                                       std::uint32_t val, std::uint32_t n_slot, std::uint32_t size) {
  return charged(c, [&](GcFuel& fuel) {
    return gc_array_fill(*c->store, fuel, fp[ref], u32_at(fp, d_slot), fp + val, u32_at(fp, n_slot), size);
  });
}

std::uint32_t sprawling_jit_array_copy(Ctx* c, std::uint64_t* fp, std::uint32_t dref, std::uint32_t d_slot,
                                       std::uint32_t sref, std::uint32_t s_slot, std::uint32_t n_slot,
                                       std::uint32_t size) {
  return charged(c, [&](GcFuel& fuel) {
    return gc_array_copy(*c->store, fuel, fp[dref], u32_at(fp, d_slot), fp[sref], u32_at(fp, s_slot),
                         u32_at(fp, n_slot), size);
  });
}

std::uint32_t sprawling_jit_array_init_data(Ctx* c, std::uint64_t* fp, std::uint32_t data, std::uint32_t ref,
                                            std::uint32_t d_slot, std::uint32_t s_slot, std::uint32_t n_slot,
                                            std::uint32_t size) {
  return charged(c, [&](GcFuel& fuel) {
    return gc_array_init_data(*c->store, fuel, fp[ref], u32_at(fp, d_slot), c->inst->datas[data], u32_at(fp, s_slot),
                              u32_at(fp, n_slot), size);
  });
}

std::uint32_t sprawling_jit_array_init_elem(Ctx* c, std::uint64_t* fp, std::uint32_t elem, std::uint32_t ref,
                                            std::uint32_t d_slot, std::uint32_t s_slot, std::uint32_t n_slot) {
  return charged(c, [&](GcFuel& fuel) {
    return gc_array_init_elem(*c->store, fuel, fp[ref], u32_at(fp, d_slot), c->inst->elements[elem],
                              u32_at(fp, s_slot), u32_at(fp, n_slot));
  });
}

}  // extern "C"

}  // namespace sprawling::wasm::jit

// ---------------------------------------------------------------- numeric helpers

namespace sprawling::wasm::jit {
namespace {

using u32 = std::uint32_t;  // the spellings simple_ops.inc uses
using u64 = std::uint64_t;

template <class T>
T from_slot(std::uint64_t s) noexcept {
  if constexpr (std::is_same_v<T, std::uint32_t>)
    return static_cast<std::uint32_t>(s);
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return s;
  else if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<float>(static_cast<std::uint32_t>(s));
  else
    return std::bit_cast<double>(s);
}
template <class T>
std::uint64_t to_slot(T v) noexcept {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<std::uint32_t>(v);
  else if constexpr (std::is_same_v<T, double>)
    return std::bit_cast<std::uint64_t>(v);
  else
    return v;
}

template <Opcode O, class A, class R>
std::uint64_t un_helper(std::uint64_t a, std::uint64_t /*b*/, std::uint32_t* trap) {
  R r{};
  *trap = static_cast<std::uint32_t>(num::un<O, A, R>(from_slot<A>(a), r));
  return to_slot<R>(r);
}
template <Opcode O, class A, class R>
std::uint64_t bin_helper(std::uint64_t a, std::uint64_t b, std::uint32_t* trap) {
  R r{};
  *trap = static_cast<std::uint32_t>(num::bin<O, A, R>(from_slot<A>(a), from_slot<A>(b), r));
  return to_slot<R>(r);
}

// SIMD helpers: the interpreter's own lane function of each SIMD op (wasm/simd.hpp, relaxed_simd.hpp),
// one per op, over the operand block io (a in io[0..1], b in io[2..3], c or a shuffle's lanes in
// io[4..5]); the result goes to io[0..1] (a scalar to io[0]). `mem` is the accessed address, bounds
// checked by the caller; `x` a scalar operand; `lane` the lane immediate.
simd::V128 vin(const std::uint64_t* io, unsigned at) noexcept {
  return simd::from_slots(io + at);
}
#define SPRAWLING_JIT_SIMD_V(expr) simd::to_slots(io, (expr))
#define SPRAWLING_JIT_SIMD_Un(fn) SPRAWLING_JIT_SIMD_V(simd::fn(vin(io, 0)))
#define SPRAWLING_JIT_SIMD_Bin(fn) SPRAWLING_JIT_SIMD_V(simd::fn(vin(io, 0), vin(io, 2)))
#define SPRAWLING_JIT_SIMD_Tern(fn) SPRAWLING_JIT_SIMD_V(simd::fn(vin(io, 0), vin(io, 2), vin(io, 4)))
#define SPRAWLING_JIT_SIMD_Shift(fn) SPRAWLING_JIT_SIMD_V(simd::fn(vin(io, 0), static_cast<std::uint32_t>(x)))
#define SPRAWLING_JIT_SIMD_Splat32(fn) SPRAWLING_JIT_SIMD_V(simd::fn(static_cast<std::uint32_t>(x)))
#define SPRAWLING_JIT_SIMD_Splat64(fn) SPRAWLING_JIT_SIMD_V(simd::fn(x))
#define SPRAWLING_JIT_SIMD_Test(fn) io[0] = simd::fn(vin(io, 0))
#define SPRAWLING_JIT_SIMD_Const(fn) (void)0
#define SPRAWLING_JIT_SIMD_Shuffle(fn)                  \
  std::uint8_t lanes[16];                               \
  std::memcpy(lanes, io + 4, sizeof lanes);             \
  SPRAWLING_JIT_SIMD_V(simd::fn(vin(io, 0), vin(io, 2), lanes))
#define SPRAWLING_JIT_SIMD_Extract32(fn) io[0] = simd::fn(vin(io, 0), lane)
#define SPRAWLING_JIT_SIMD_Extract64(fn) io[0] = simd::fn(vin(io, 0), lane)
#define SPRAWLING_JIT_SIMD_Replace32(fn) \
  SPRAWLING_JIT_SIMD_V(simd::fn(vin(io, 0), lane, static_cast<std::uint32_t>(x)))
#define SPRAWLING_JIT_SIMD_Replace64(fn) SPRAWLING_JIT_SIMD_V(simd::fn(vin(io, 0), lane, x))
#define SPRAWLING_JIT_SIMD_Load1(fn) SPRAWLING_JIT_SIMD_V(simd::fn(mem))
#define SPRAWLING_JIT_SIMD_Load2(fn) SPRAWLING_JIT_SIMD_Load1(fn)
#define SPRAWLING_JIT_SIMD_Load4(fn) SPRAWLING_JIT_SIMD_Load1(fn)
#define SPRAWLING_JIT_SIMD_Load8(fn) SPRAWLING_JIT_SIMD_Load1(fn)
#define SPRAWLING_JIT_SIMD_Load16(fn) SPRAWLING_JIT_SIMD_Load1(fn)
#define SPRAWLING_JIT_SIMD_Store16(fn) simd::fn(mem, vin(io, 0))
#define SPRAWLING_JIT_SIMD_LoadLane1(fn) SPRAWLING_JIT_SIMD_V(simd::fn(mem, vin(io, 0), lane))
#define SPRAWLING_JIT_SIMD_LoadLane2(fn) SPRAWLING_JIT_SIMD_LoadLane1(fn)
#define SPRAWLING_JIT_SIMD_LoadLane4(fn) SPRAWLING_JIT_SIMD_LoadLane1(fn)
#define SPRAWLING_JIT_SIMD_LoadLane8(fn) SPRAWLING_JIT_SIMD_LoadLane1(fn)
#define SPRAWLING_JIT_SIMD_StoreLane1(fn) simd::fn(mem, vin(io, 0), lane)
#define SPRAWLING_JIT_SIMD_StoreLane2(fn) SPRAWLING_JIT_SIMD_StoreLane1(fn)
#define SPRAWLING_JIT_SIMD_StoreLane4(fn) SPRAWLING_JIT_SIMD_StoreLane1(fn)
#define SPRAWLING_JIT_SIMD_StoreLane8(fn) SPRAWLING_JIT_SIMD_StoreLane1(fn)
#define SPRAWLING_JIT_SIMD_BODY_(fn, Shape) SPRAWLING_JIT_SIMD_##Shape(fn)
#define SPRAWLING_JIT_SIMD_BODY(fn, Shape) SPRAWLING_JIT_SIMD_BODY_(fn, Shape)
#define WASM_SIMD_OPCODE(code, Name, text, imm, sig, fn)                                                  \
  void simd_##Name([[maybe_unused]] std::uint64_t* io, [[maybe_unused]] std::uint8_t* mem,                \
                   [[maybe_unused]] std::uint64_t x, [[maybe_unused]] std::uint32_t lane) noexcept { \
    SPRAWLING_JIT_SIMD_BODY(fn, SPRAWLING_SIMD_SHAPE(imm, sig));                                          \
  }
#include "wasm/syntax/simd_opcodes.def"
#include "wasm/syntax/relaxed_simd_opcodes.def"
#undef WASM_SIMD_OPCODE

struct NumTable {
  std::array<NumHelper, kOpCount> helpers{};
  std::array<SimdHelper, kOpCount> simd{};
  std::vector<std::string> names;
  std::vector<HelperSymbol> symbols;
  NumTable() {
#define SPRAWLING_JIT_Un(Name, A, R) helpers[static_cast<std::size_t>(Op::Num##Name)] = &un_helper<Opcode::Name, A, R>;
#define SPRAWLING_JIT_Bin(Name, A, R) \
  helpers[static_cast<std::size_t>(Op::Num##Name)] = &bin_helper<Opcode::Name, A, R>;
#define SPRAWLING_SIMPLE_OP(Name, A, R, Form, Trap) SPRAWLING_JIT_##Form(Name, A, R)
#define SPRAWLING_JIT_BinImm(Name, A, R) SPRAWLING_JIT_Bin(Name, A, R)
#define SPRAWLING_JIT_BinFImm(Name, A, R) SPRAWLING_JIT_Bin(Name, A, R)
#define SPRAWLING_JIT_BinF32Imm(Name, A, R) SPRAWLING_JIT_BinFImm(Name, A, R)
#define SPRAWLING_JIT_BinF64Imm(Name, A, R) SPRAWLING_JIT_BinFImm(Name, A, R)
#include "wasm/icode/simple_ops.inc"


#undef SPRAWLING_SIMPLE_OP
#undef SPRAWLING_JIT_Un
#undef SPRAWLING_JIT_Bin
#undef SPRAWLING_JIT_BinImm
#undef SPRAWLING_JIT_BinFImm
#undef SPRAWLING_JIT_BinF32Imm
#undef SPRAWLING_JIT_BinF64Imm
#define WASM_SIMD_OPCODE(code, Name, text, imm, sig, fn) simd[static_cast<std::size_t>(Op::Simd##Name)] = &simd_##Name;
#include "wasm/syntax/simd_opcodes.def"
#include "wasm/syntax/relaxed_simd_opcodes.def"
#undef WASM_SIMD_OPCODE
    names.reserve(kOpCount);
    for (std::size_t i = 0; i < kOpCount; ++i)
      if (helpers[i] != nullptr) names.push_back("sprawling_jit_num_" + std::to_string(i));
    for (std::size_t i = 0; i < kOpCount; ++i)
      if (simd[i] != nullptr) names.push_back("sprawling_jit_simd_" + std::to_string(i));
    symbols = {{"sprawling_jit_refuel", reinterpret_cast<void*>(&sprawling_jit_refuel)},
               {"sprawling_jit_fuel_ahead", reinterpret_cast<void*>(&sprawling_jit_fuel_ahead)},
               {"sprawling_jit_call", reinterpret_cast<void*>(&sprawling_jit_call)},
               {"sprawling_jit_call_indirect", reinterpret_cast<void*>(&sprawling_jit_call_indirect)},
               {"sprawling_jit_memory_grow", reinterpret_cast<void*>(&sprawling_jit_memory_grow)},
               {"sprawling_jit_return_call", reinterpret_cast<void*>(&sprawling_jit_return_call)},
               {"sprawling_jit_return_call_indirect", reinterpret_cast<void*>(&sprawling_jit_return_call_indirect)},
               {"sprawling_jit_tail_resume", reinterpret_cast<void*>(&sprawling_jit_tail_resume)},
               {"sprawling_jit_memory_fill", reinterpret_cast<void*>(&sprawling_jit_memory_fill)},
               {"sprawling_jit_memory_copy", reinterpret_cast<void*>(&sprawling_jit_memory_copy)},
               {"sprawling_jit_memory_init", reinterpret_cast<void*>(&sprawling_jit_memory_init)},
               {"sprawling_jit_data_drop", reinterpret_cast<void*>(&sprawling_jit_data_drop)},
               {"sprawling_jit_memory_grow_m", reinterpret_cast<void*>(&sprawling_jit_memory_grow_m)},
               {"sprawling_jit_memory_fill_m", reinterpret_cast<void*>(&sprawling_jit_memory_fill_m)},
               {"sprawling_jit_memory_copy_m", reinterpret_cast<void*>(&sprawling_jit_memory_copy_m)},
               {"sprawling_jit_memory_init_m", reinterpret_cast<void*>(&sprawling_jit_memory_init_m)},
               {"sprawling_jit_table_get", reinterpret_cast<void*>(&sprawling_jit_table_get)},
               {"sprawling_jit_table_set", reinterpret_cast<void*>(&sprawling_jit_table_set)},
               {"sprawling_jit_table_size", reinterpret_cast<void*>(&sprawling_jit_table_size)},
               {"sprawling_jit_table_grow", reinterpret_cast<void*>(&sprawling_jit_table_grow)},
               {"sprawling_jit_table_fill", reinterpret_cast<void*>(&sprawling_jit_table_fill)},
               {"sprawling_jit_table_copy", reinterpret_cast<void*>(&sprawling_jit_table_copy)},
               {"sprawling_jit_table_init", reinterpret_cast<void*>(&sprawling_jit_table_init)},
               {"sprawling_jit_elem_drop", reinterpret_cast<void*>(&sprawling_jit_elem_drop)},
               {"sprawling_jit_ref_test", reinterpret_cast<void*>(&sprawling_jit_ref_test)},
               {"sprawling_jit_struct_new", reinterpret_cast<void*>(&sprawling_jit_struct_new)},
               {"sprawling_jit_array_new", reinterpret_cast<void*>(&sprawling_jit_array_new)},
               {"sprawling_jit_array_new_fixed", reinterpret_cast<void*>(&sprawling_jit_array_new_fixed)},
               {"sprawling_jit_array_new_data", reinterpret_cast<void*>(&sprawling_jit_array_new_data)},
               {"sprawling_jit_array_new_elem", reinterpret_cast<void*>(&sprawling_jit_array_new_elem)},
               {"sprawling_jit_array_fill", reinterpret_cast<void*>(&sprawling_jit_array_fill)},
               {"sprawling_jit_array_copy", reinterpret_cast<void*>(&sprawling_jit_array_copy)},
               {"sprawling_jit_array_init_data", reinterpret_cast<void*>(&sprawling_jit_array_init_data)},
               {"sprawling_jit_array_init_elem", reinterpret_cast<void*>(&sprawling_jit_array_init_elem)},
               {"sprawling_jit_throw", reinterpret_cast<void*>(&sprawling_jit_throw)},
               {"sprawling_jit_throw_ref", reinterpret_cast<void*>(&sprawling_jit_throw_ref)},
               {"sprawling_jit_catch", reinterpret_cast<void*>(&sprawling_jit_catch)}};
    std::size_t k = 0;
    for (std::size_t i = 0; i < kOpCount; ++i)
      if (helpers[i] != nullptr) symbols.push_back({names[k++], reinterpret_cast<void*>(helpers[i])});
    for (std::size_t i = 0; i < kOpCount; ++i)
      if (simd[i] != nullptr) symbols.push_back({names[k++], reinterpret_cast<void*>(simd[i])});
  }
};
const NumTable& num_table() {
  static const NumTable table;
  return table;
}

}  // namespace

NumHelper num_helper(Op op) noexcept {
  return num_table().helpers[static_cast<std::size_t>(op)];
}
SimdHelper simd_helper(Op op) noexcept {
  return num_table().simd[static_cast<std::size_t>(op)];
}
std::span<const HelperSymbol> runtime_symbols() {
  return num_table().symbols;
}

}  // namespace sprawling::wasm::jit
