// The Store (runtime.hpp): its objects and stacks, fuel and deadline, the tier it runs on, extern
// accessors, invoke, and the messages of traps.
#include "wasm/runtime/runtime.hpp"
#include "wasm/runtime/cancel.hpp"

#include "wasm/interp/interpreter.hpp"
#include "wasm/runtime/store_impl.hpp"
#if SPRAWLING_WITH_JIT
#include "wasm/jit/jit.hpp"
#endif

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

namespace sprawling::wasm {

// ---------------------------------------------------------------- traps

std::string_view trap_message(TrapKind kind) noexcept {
  switch (kind) {
    case TrapKind::None: return "no trap";
    case TrapKind::Unreachable: return "unreachable";
    case TrapKind::IntegerDivideByZero: return "integer divide by zero";
    case TrapKind::IntegerOverflow: return "integer overflow";
    case TrapKind::InvalidConversionToInteger: return "invalid conversion to integer";
    case TrapKind::OutOfBoundsMemoryAccess: return "out of bounds memory access";
    case TrapKind::OutOfBoundsTableAccess: return "out of bounds table access";
    case TrapKind::UndefinedElement: return "undefined element";
    case TrapKind::UninitializedElement: return "uninitialized element";
    case TrapKind::IndirectCallTypeMismatch: return "indirect call type mismatch";
    case TrapKind::CallStackExhausted: return "call stack exhausted";
    case TrapKind::OutOfFuel: return "all fuel consumed by WebAssembly";
    case TrapKind::DeadlineExceeded: return "deadline exceeded";
    case TrapKind::Host: return "host function trapped";
    case TrapKind::Exit: return "exit requested";
    case TrapKind::UncaughtException: return "uncaught exception";
    case TrapKind::NullExceptionReference: return "null exception reference";
    case TrapKind::NullFunctionReference: return "null function reference";
    case TrapKind::NullReference: return "null reference";
    case TrapKind::ExceptionLimit: return "exception objects exceed the store's resource limit (max-store-size)";
    case TrapKind::CastFailure: return "cast failure";
    case TrapKind::NullStructReference: return "null structure reference";
    case TrapKind::NullArrayReference: return "null array reference";
    case TrapKind::NullI31Reference: return "null i31 reference";
    case TrapKind::OutOfBoundsArrayAccess: return "out of bounds array access";
    case TrapKind::GcHeapLimit:
      return "GC objects exceed the store's resource limit (max-store-size), or one object is larger than 1 GiB";
  }
  return "unknown trap";
}

// ---------------------------------------------------------------- extern accessors

ExternKind kind_of(const Extern& e) noexcept { return static_cast<ExternKind>(e.index()); }
const FuncType& func_type(const FuncInst* f) noexcept { return *f->type; }
GlobalType global_type(const GlobalInst* g) noexcept { return g->type; }
Value global_get(const GlobalInst* g) noexcept { return Value{g->type.type, g->bits, g->bits_hi}; }
void global_set(GlobalInst* g, Value v) noexcept {
  const bool narrow = g->type.type == ValType::I32 || g->type.type == ValType::F32;
  g->bits = narrow ? (v.bits & 0xFFFFFFFFu) : v.bits;
  g->bits_hi = v.bits_hi;
}
TableType table_type(const TableInst* t) noexcept {
  TableType out = t->type;
  out.limits.min = t->elements.size();
  return out;
}
MemoryType memory_type(const MemoryInst* m) noexcept {
  MemoryType out = m->type;
  out.limits.min = m->size / kPageSize;
  return out;
}
std::uint8_t* memory_data(MemoryInst* m) noexcept { return m->base; }
std::uint64_t memory_size_bytes(const MemoryInst* m) noexcept { return m->size; }
std::uint64_t memory_peak_bytes(const MemoryInst* m) noexcept { return m->peak; }

std::optional<Extern> InstanceImpl::find_export(std::string_view name) const {
  for (const Export& e : module->exports) {
    if (e.name != name) continue;
    switch (e.kind) {
      case ExternKind::Func: return Extern{funcs[e.index]};
      case ExternKind::Table: return Extern{tables[e.index]};
      case ExternKind::Memory: return Extern{memories[e.index]};
      case ExternKind::Global: return Extern{globals[e.index]};
      case ExternKind::Tag: return Extern{tags[e.index]};
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- store

namespace {
constexpr std::uint64_t kUnboundedFuel = std::uint64_t{1} << 62;
// With a deadline or a cancel flag, the counter gets the budget in chunks of this many units, and
// each refuel reads the clock (and the flag): every 0.4 ms or so in the interpreter, 40 us in
// compiled code (measured on the bench's json: 2.9 and 27 units per ns). 65,536 units cost
// compiled code 3-4% in clock reads.
constexpr std::uint64_t kDeadlineChunk = std::uint64_t{1} << 20;
// A compiled loop that asks for its fuel ahead (fuel_ahead) then runs what it asked for with no
// deadline or cancel check. It is given up to this much at once; more only with a deadline and
// no cancel flag, and only as long as the loop would end before the deadline even at
// kSlowestUnit per unit (a cache miss every few units): the deadline is then checked after it.
constexpr std::int64_t kMaxFuelAhead = std::int64_t{1} << 22;
constexpr std::chrono::nanoseconds kSlowestUnit{32};
// The calling thread's cancel flag (cancel.hpp): the thread running a job reads it at the same
// checks as the deadline; another thread sets the flag itself.
thread_local const std::atomic<bool>* tl_cancel_flag = nullptr;

// Whether the counter gets the budget in chunks (a deadline or a cancel flag: checks to reach).
bool chunked(const ExecutionBudget& budget) { return budget.deadline.has_value() || tl_cancel_flag != nullptr; }
// The next part of `reserve` the counter gets (all of it when not chunked; 0 when it is empty).
std::uint64_t take_from(std::uint64_t& reserve, bool in_chunks) {
  const std::uint64_t part = in_chunks ? std::min(reserve, kDeadlineChunk) : reserve;
  reserve -= part;
  return part;
}
}  // namespace

Store::Impl::~Impl() {
  if (stack == nullptr) return;
  if (pool && pool->impl().give_stack(StackBlock{stack, stack_bytes, frames, frames_bytes})) return;
  munmap(stack, stack_bytes);
  munmap(frames, frames_bytes);
}

bool Store::Impl::ensure_stack() {
  if (stack != nullptr) return true;
  stack_bytes = static_cast<std::size_t>(limits.max_value_stack_slots) * sizeof(std::uint64_t);
  frames_bytes = std::max<std::size_t>(static_cast<std::size_t>(limits.max_call_depth) * sizeof(Frame), 1);
  if (pool) {
    if (auto b = pool->impl().take_stack(stack_bytes, frames_bytes)) {
      stack = b->stack;
      frames = b->frames;
      return true;
    }
  }
  void* s = mmap(nullptr, stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (s == MAP_FAILED) return false;
  void* f = mmap(nullptr, frames_bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (f == MAP_FAILED) {
    munmap(s, stack_bytes);
    return false;
  }
  stack = static_cast<std::uint64_t*>(s);
  frames = static_cast<Frame*>(f);
  return true;
}

const std::atomic<bool>* set_thread_cancel_flag(const std::atomic<bool>* flag) noexcept {
  return std::exchange(tl_cancel_flag, flag);
}

bool thread_cancel_requested() noexcept {
  return tl_cancel_flag != nullptr && tl_cancel_flag->load(std::memory_order_relaxed);
}

TrapKind Store::Impl::refuel(std::int64_t& counter_io, std::int64_t visible) {
  const bool in_chunks = chunked(budget);
  for (;;) {
    if (budget.deadline && std::chrono::steady_clock::now() >= *budget.deadline) return TrapKind::DeadlineExceeded;
    if (thread_cancel_requested()) return TrapKind::DeadlineExceeded;
    if (counter_io - visible > 0) return TrapKind::None;
    if (reserve == 0) {
      out_of_fuel = true;
      return TrapKind::OutOfFuel;
    }
    counter_io += static_cast<std::int64_t>(take_from(reserve, in_chunks));
  }
}

bool Store::Impl::fuel_ahead(std::int64_t& counter_io, std::int64_t extra) {
  if (thread_cancel_requested()) return false;
  if (budget.deadline) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= *budget.deadline) return false;
    if (extra > kMaxFuelAhead && (tl_cancel_flag != nullptr || extra > (*budget.deadline - now) / kSlowestUnit)) {
      return false;
    }
  } else if (extra > kMaxFuelAhead) {
    return false;
  }
  const bool in_chunks = chunked(budget);
  for (std::int64_t moved = 0; moved < extra;) {
    if (reserve == 0) return false;
    const auto part = static_cast<std::int64_t>(take_from(reserve, in_chunks));
    counter_io += part;
    moved += part;
  }
  return true;
}

bool compiled_tier_built() noexcept {
#if SPRAWLING_WITH_JIT
  return true;
#else
  return false;
#endif
}

bool compiled_tier_available() noexcept {
#if SPRAWLING_WITH_JIT
  return jit::plugin().loaded;
#else
  return false;
#endif
}

void stop_tier_up() noexcept {
#if SPRAWLING_WITH_JIT
  jit::tier_up_stop();
#endif
}

bool tier_up_busy() noexcept {
#if SPRAWLING_WITH_JIT
  return jit::tier_up_busy();
#else
  return false;
#endif
}

void tier_up_keep_unfinished() noexcept {
#if SPRAWLING_WITH_JIT
  jit::tier_up_keep_unfinished();
#endif
}

std::string compiled_tier_unavailable_reason() {
#if SPRAWLING_WITH_JIT
  return jit::plugin().error;
#else
  return "this build has no compiled tier (built with SPRAWLING_WITH_JIT=OFF)";
#endif
}

// Compile loads the plugin now (the job will need it); auto does not: it needs the plugin only
// when the code cache holds an entry for a module (code_cache.cpp), or when a function turns hot
// under tier-up (the tier-up thread loads it, tiering.cpp).
bool Store::set_tier(Tier tier, bool code_ready) noexcept {
  if (tier == Tier::Compile && !code_ready && !compiled_tier_available()) return false;
  impl_->compile_code_ready = tier == Tier::Compile && code_ready;
  impl_->tier = compiled_tier_built() ? tier : Tier::Interpret;
  return true;
}

#if !SPRAWLING_WITH_JIT
std::expected<PrecompileReport, std::string> precompile(const CompiledModule&, bool, CodeCacheStorage&,
                                                        const CompileOptions&) {
  return std::unexpected(std::string("this build has no compiled tier (built with SPRAWLING_WITH_JIT=OFF)"));
}
#endif

void Store::set_code_cache(std::shared_ptr<CodeCacheStorage> cache) noexcept { impl_->code_cache = std::move(cache); }

bool cached_code_ready([[maybe_unused]] const CompiledModule& module, [[maybe_unused]] bool metered,
                       [[maybe_unused]] const std::shared_ptr<CodeCacheStorage>& cache) {
#if SPRAWLING_WITH_JIT
  if (cache == nullptr) return false;
  // Interpret only looks: whole-module code from the cache, or nothing (no compile, no tier-up).
  const jit::ModuleCode* code = module.impl().jit_for(metered ? kMetered : kUnmetered, Tier::Interpret, cache, false);
  return code != nullptr && !code->tier_up && code->error.empty();
#else
  return false;
#endif
}
void Store::track_first_calls() noexcept { impl_->track_first_calls = true; }
void Store::set_tier_up(bool on) noexcept { impl_->tier_up = on; }

void Store::set_compile_memory(std::uint64_t bytes) noexcept { impl_->compile_memory = bytes; }

void Store::Impl::ensure_jit_code([[maybe_unused]] int variant) {
#if SPRAWLING_WITH_JIT
  if (all_jit_ready[variant]) return;
  for (auto& inst : instances) {
    if (inst->jit_ready[variant]) continue;
    jit::ModuleCode* code = inst->compiled_module->impl().jit_for(variant, tier, code_cache, tier_up);
    // Tier-up code made for another store stays unused by a store with tier-up off.
    if (code != nullptr && (!code->tier_up || tier_up)) {
      const std::uint32_t imported = inst->module->imported_funcs;
      for (std::uint32_t i = 0; i < code->entries.size(); ++i) inst->funcs[imported + i]->jit[variant] = &code->entries[i];
      // Translation stays lazy whichever code this is (CPython: 8,124 functions, about 30 ms and
      // 40 MB to translate all): machine code calls its callees with frame sizes and entry charges
      // known when it was compiled, an inline call_indirect takes the helper for a callee not yet
      // resolved here (which resolves it), and jit::enter resolves a trapping function to locate it.
    }
    inst->jit_ready[variant] = true;
  }
  all_jit_ready[variant] = true;
#endif
}

Store::Store(StoreLimits limits, std::shared_ptr<ResourcePool> pool)
    : impl_(std::make_unique<Impl>(limits, std::move(pool))) {
#ifdef SPRAWLING_WASM_FORCE_METERED
  // Test hook: a build with this defined runs everything (the spec suite) on the metered code.
  set_budget({kUnboundedFuel, std::nullopt});
#else
  set_budget({});
#endif
}
Store::~Store() = default;

const StoreLimits& Store::limits() const noexcept { return impl_->limits; }
std::uint64_t Store::store_bytes() const noexcept {
  return impl_->account.used;
}

void Store::set_budget(ExecutionBudget budget) {
  Impl& s = *impl_;
  s.budget = budget;
  s.metered = budget.fuel.has_value() || budget.deadline.has_value();
  s.total = budget.fuel ? std::min(*budget.fuel, kUnboundedFuel) : kUnboundedFuel;
  s.reserve = s.total;
  s.counter = static_cast<std::int64_t>(take_from(s.reserve, chunked(budget)));
  s.out_of_fuel = false;
}

bool Store::charge_fuel(std::uint64_t units) noexcept {
  Impl& s = *impl_;
  if (!s.metered || !s.budget.fuel || units == 0) return true;
  // The interpreter keeps `counter` in the store during a host call and reloads it after.
  const std::int64_t left = s.counter + static_cast<std::int64_t>(s.reserve);  // reserve <= 2^62
  if (left <= 0 || units > static_cast<std::uint64_t>(left)) {
    s.out_of_fuel = true;
    return false;
  }
  const auto charge = static_cast<std::int64_t>(units);
  if (s.counter >= charge) {
    s.counter -= charge;
  } else {
    s.reserve -= static_cast<std::uint64_t>(charge - s.counter);
    s.counter = 0;
  }
  return true;
}

std::uint64_t Store::fuel_consumed() const noexcept {
  const Impl& s = *impl_;
  if (!s.metered) return 0;
  const auto consumed = static_cast<std::uint64_t>(static_cast<std::int64_t>(s.total - s.reserve) - s.counter);
  // After an OutOfFuel stop the figure is the budget, as Wasmtime's get_fuel says 0 left: a bulk
  // operation charges its whole count before the check that stops it (that work never ran), and
  // an entry check stops with the entry's own 1 not yet charged. After a normal finish the figure
  // is exact even when the run ended overdrawn (charges are per segment; checks only at entries,
  // loop headers and bulk operations), where Wasmtime's get_fuel can only say 0 left.
  return s.budget.fuel && s.out_of_fuel ? *s.budget.fuel : consumed;
}

FuncInst* Store::add_host_function(const FuncType& type, HostFn fn, void* context, std::string debug_name) {
  HostFuncInfo& info = impl_->host_infos.emplace_back(HostFuncInfo{type, std::move(debug_name)});
  FuncInst& f = impl_->funcs.emplace_back();
  f.type = &info.type;
  f.host = fn;
  f.host_context = context;
  // In slots, as the interpreter hands them over (a v128 takes two; HostCall's spans are slots).
  f.num_params = value_slots(type.params);
  f.num_results = value_slots(type.results);
  return &f;
}

GlobalInst* Store::add_global(GlobalType type, Value init) {
  GlobalInst& g = impl_->globals.emplace_back();
  g.type = type;
  g.bits = (type.type == ValType::I32 || type.type == ValType::F32) ? (init.bits & 0xFFFFFFFFu) : init.bits;
  g.bits_hi = init.bits_hi;
  return &g;
}

TableInst* Store::add_table(TableType type, Value init) {
  const auto max_elements = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(type.limits.max.value_or(0xFFFFFFFFu), impl_->limits.max_table_elements));
  const auto initial = static_cast<std::uint32_t>(std::min<std::uint64_t>(type.limits.min, max_elements));
  if (!impl_->account.take(std::uint64_t{initial} * sizeof(std::uint64_t))) return nullptr;
  TableInst& t = impl_->tables.emplace_back();
  t.type = type;
  t.max_elements = max_elements;
  t.account = &impl_->account;
  t.elements.assign(initial, init.bits);
  return &t;
}

MemoryInst* Store::add_memory(MemoryType type) {
  MemoryInst& m = impl_->memories.emplace_back();
  if (!m.create(type, impl_->limits.max_memory_bytes, impl_->pool, &impl_->account)) {
    impl_->memories.pop_back();
    return nullptr;
  }
  return &m;
}

namespace {

Trap make_trap(const ExecOutcome& out, int variant) {
  Trap t;
  t.kind = out.trap;
  if (out.trap == TrapKind::Host) {
    t.message = out.host_message;
  } else {
    t.message = std::string(trap_message(out.trap));
  }
  // Two appends, not `" " + to_string(…)`: GCC 12 at -O3 reports a false -Wrestrict inside the
  // string insert that operator+(const char*, string&&) inlines to.
  if (out.trap == TrapKind::UncaughtException) t.message += out.host_message;  // the tag (Store::invoke)
  if (out.trap == TrapKind::UninitializedElement) {
    t.message += ' ';
    t.message += std::to_string(out.element_index);
  }
  t.exit_code = out.exit_code;
  if (out.func != nullptr && out.func->instance != nullptr) {
    const FuncInst* f = out.func;
    t.func_index = f->func_index;
    const Module& m = *f->instance->module;
    if (auto it = m.function_names.find(f->func_index); it != m.function_names.end()) t.func_name = it->second;
    const CompiledFunc* code = f->code[variant];
    if (code != nullptr && out.ip != nullptr) {
      const auto word = static_cast<std::uint32_t>(out.ip - code->code.data());
      auto it = std::upper_bound(code->trap_sites.begin(), code->trap_sites.end(), word,
                                 [](std::uint32_t w, const auto& site) { return w < site.first; });
      if (it != code->trap_sites.begin()) t.offset = std::prev(it)->second;
    }
  }
  return t;
}

}  // namespace

std::expected<std::vector<Value>, Trap> Store::invoke(FuncInst* func, std::span<const Value> args) {
  Impl& s = *impl_;
  const FuncType& type = *func->type;
  auto slot_of = [](const Value& v) -> std::uint64_t {
    return v.type == ValType::I32 || v.type == ValType::F32 ? v.bits & 0xFFFFFFFFu : v.bits;
  };
  // Typed function references: a host may not pass null where the type says (ref …); the code
  // would not check (it stays memory-safe: every use of a reference tests it, but it would run
  // outside the type system's promise).
  for (std::size_t i = 0; i < args.size() && i < type.params.size(); ++i) {
    if (type.params[i].is_ref() && !type.params[i].nullable() && args[i].bits == 0) {
      Trap t;
      t.kind = TrapKind::NullReference;
      t.message = "null reference: argument " + std::to_string(i) + " has the non-nullable type " + name(type.params[i]);
      return std::unexpected(std::move(t));
    }
  }
  std::vector<Value> results;
  results.reserve(type.results.size());
  // Values to and from frame slots (value_slots: a v128 takes two, low half first).
  auto put_args = [&](std::uint64_t* slots) {
    for (const Value& v : args) {
      *slots++ = slot_of(v);
      if (v.type == ValType::V128) *slots++ = v.bits_hi;
    }
  };
  auto take_results = [&](const std::uint64_t* slots) {
    for (const ValType t : type.results) {
      std::uint64_t bits = *slots++;
      std::uint64_t hi = 0;
      if (t == ValType::I32 || t == ValType::F32) bits &= 0xFFFFFFFFu;
      if (t == ValType::V128) hi = *slots++;
      results.push_back(Value{t, bits, hi});
      // The host holds it now: a root until its RootScope closes (Store::root). A concrete type
      // may be a struct or array type; funcref and nofunc name functions, which are not collected.
      if (t.is_ref() && bits != 0 && (t.concrete() || heap_top(t.heap()) != ValType::kFunc)) s.host_roots.push_back(bits);
    }
  };
  if (func->host != nullptr) {
    std::uint32_t arg_slots = 0;
    for (const Value& v : args) arg_slots += value_slots(v.type);
    std::vector<std::uint64_t> in(arg_slots), res(value_slots(type.results));
    put_args(in.data());
    HostCall hc{in, res, MemoryView{}, func->host_context, {}, 0};
    const HostStatus st = func->host(hc);
    if (st != HostStatus::Ok) {
      Trap t;
      t.kind = host_trap_kind(st);
      t.message = st == HostStatus::Trap ? hc.trap_message : std::string(trap_message(t.kind));
      t.exit_code = hc.exit_code;
      return std::unexpected(std::move(t));
    }
    take_results(res.data());
    return results;
  }
  if (!s.ensure_stack()) {
    Trap t;
    t.kind = TrapKind::CallStackExhausted;
    t.message = std::string(trap_message(t.kind));
    return std::unexpected(std::move(t));
  }
  // Nested (a host function calling back): start above the host call in progress.
  if (s.active_runs == 0) {
    s.entry_fp = s.stack;
    s.entry_frame = s.frames;
  }
  std::uint64_t* const base = s.entry_fp;
  std::uint32_t arg_slots = 0;
  for (const Value& v : args) arg_slots += value_slots(v.type);
  if (base + std::max(arg_slots, value_slots(type.results)) > s.stack + s.limits.max_value_stack_slots) {
    Trap t;
    t.kind = TrapKind::CallStackExhausted;
    t.message = std::string(trap_message(t.kind));
    return std::unexpected(std::move(t));
  }
  put_args(base);
  ExecOutcome out;
  const int variant = s.metered ? kMetered : kUnmetered;
#if SPRAWLING_WITH_JIT
  // Compilation this run triggers (Tier::Compile: the module's IR, each function on its first
  // call) checks the run's deadline between functions (a run it found past ends
  // DeadlineExceeded) and the store's compile memory limit (a function past it stays interpreted).
  struct LimitsWatch {
    Store::Impl& store;
    jit::JobLimits limits;
    jit::JobLimits* outer = nullptr;
    jit::JobLimits* outer_in_store = nullptr;
    bool set = false;
    ~LimitsWatch() {
      if (!set) return;
      jit::set_job_limits(outer);
      store.job_limits = outer_in_store;
    }
  } watch{s, {}};
  if (s.tier == Tier::Compile && !s.compile_code_ready) {
    if (s.budget.deadline) watch.limits.at = *s.budget.deadline;
    watch.limits.compile_memory = s.compile_memory;
    watch.outer = jit::set_job_limits(&watch.limits);
    watch.outer_in_store = s.job_limits;
    s.job_limits = &watch.limits;
    watch.set = true;
  }
  const auto compiled_past_deadline = [&] { return watch.set && watch.limits.overrun(); };
#else
  const auto compiled_past_deadline = [] { return false; };
#endif
  ++s.active_runs;
  // Auto without a code cache and without tier-up has nothing to find: the interpreter's path exactly.
  if (s.tier == Tier::Compile || (s.tier == Tier::Auto && (s.code_cache || s.tier_up))) s.ensure_jit_code(variant);
  if (s.metered) {
    // Entry check of the deadline: what ran before this call (instantiation) counts; the
    // interpreter checks again at every fuel refill.
    if ((s.budget.deadline && std::chrono::steady_clock::now() >= *s.budget.deadline) || thread_cancel_requested()) {
      --s.active_runs;
      Trap t;
      t.kind = TrapKind::DeadlineExceeded;
      t.message = std::string(trap_message(t.kind));
      return std::unexpected(std::move(t));
    }
    execute<true>(s, func, out);
  } else {
    execute<false>(s, func, out);
  }
  --s.active_runs;
  if (out.trap == TrapKind::UncaughtException) {
    // The exception stops here, at the host: this run's caller is no wasm frame.
    if (const GcObject* e = s.gc.exception(s.pending_exception); e != nullptr) {
      std::string types;
      for (const ValType v : e->tag->type.params) {
        types += types.empty() ? "" : " ";
        types += name(v);
      }
      out.host_message = ": tag " + std::to_string(e->tag->index) + " [" + types + "]";
    }
    s.pending_exception = 0;
  }
  if (compiled_past_deadline() && out.trap != TrapKind::DeadlineExceeded) {
    // Compiling ran past the deadline: whatever the guest did after it is not its outcome.
    Trap t;
    t.kind = TrapKind::DeadlineExceeded;
    t.message = std::string(trap_message(t.kind));
    return std::unexpected(std::move(t));
  }
  if (out.trap != TrapKind::None) return std::unexpected(make_trap(out, variant));
  take_results(base);
  return results;
}

}  // namespace sprawling::wasm
