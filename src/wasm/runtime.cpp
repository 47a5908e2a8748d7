// The embedding API of runtime.hpp: compile (decode + validate + translate), the Store and its
// objects, instantiation with the 2.0 import, segment and start-function rules, invoke with fuel
// and deadline, extern accessors and trap messages.
#include "wasm/runtime.hpp"

#include "wasm/snapshot.hpp"
#include "wasm/store_impl.hpp"
#if SPRAWLING_WITH_JIT
#include "wasm/jit/jit.hpp"
#endif

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <sys/mman.h>

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

// ---------------------------------------------------------------- compile

CompiledModule::CompiledModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledModule::~CompiledModule() = default;
const Module& CompiledModule::module() const noexcept { return impl_->module; }
const Sha256Digest& CompiledModule::content_digest() const { return impl_->content_digest(); }
void CompiledModule::remember_content_digest(const Sha256Digest& digest) const { impl_->remember_content_digest(digest); }
const Sha256Digest& CompiledModule::Impl::content_digest() const {
  std::call_once(digest_once, [this] { digest = sha256(module.bytes); });
  return digest;
}
void CompiledModule::Impl::remember_content_digest(const Sha256Digest& d) const {
  std::call_once(digest_once, [this, &d] { digest = d; });
}

CompiledModule::Impl::~Impl() {
  for (const auto& slots : translated) {
    if (!slots) continue;
    for (std::size_t i = 0; i < module.code.size(); ++i) delete slots[i].load(std::memory_order_relaxed);
  }
}

const CompiledFunc& CompiledModule::Impl::code(std::uint32_t defined, bool metered) const {
  std::atomic<const CompiledFunc*>& slot = translated[metered ? kMetered : kUnmetered][defined];
  if (const CompiledFunc* done = slot.load(std::memory_order_acquire)) return *done;
  std::unique_ptr<const CompiledFunc> made;
  // [snapshot code] A snapshot file of this build may hold it, translated in an earlier process.
  if (const auto source = pretranslated_source()) {
    if (auto adopted = pretranslated_code(*source, defined, metered))
      made = std::make_unique<const CompiledFunc>(std::move(*adopted));
  }
  if (!made) made = std::make_unique<const CompiledFunc>(translate_function(module, canonical_type, defined, metered));
  const CompiledFunc* expected = nullptr;
  if (slot.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel, std::memory_order_acquire))
    return *made.release();
  return *expected;  // another thread published the same translation first; ours is dropped
}

std::size_t CompiledModule::Impl::translated_count(bool metered) const noexcept {
  std::size_t n = 0;
  for (std::uint32_t i = 0; i < module.code.size(); ++i) n += translated_code(i, metered) != nullptr ? 1 : 0;
  return n;
}

void resolve_code(FuncInst& f, int variant) {
  const CompiledModule::Impl& cm = f.instance->compiled_module->impl();
  const CompiledFunc& code = cm.code(f.func_index - f.instance->module->imported_funcs, variant == kMetered);
  f.code[variant] = &code;
  // Both variants have the same frame (fuel ops use no slot); max() keeps the larger regardless.
  f.frame_slots = std::max(f.frame_slots, code.frame_slots);
  if (variant == kMetered) {
    // Word 0 is the entry FuelCheck [cost visible=1]; callers charge and check it instead.
    f.entry_fuel = code.code[layout::FuelCheck::cost];
    f.entry[kMetered] = code.code.data() + layout::FuelCheck::kWords;
  } else {
    f.entry[kUnmetered] = code.code.data();
  }
}

namespace {
// Bytes of translated code charged per byte of function body (compile()). Measured on
// python.wasm (8,124 functions, 3.35 MB of bodies): translating all of it makes 5.1 bytes per
// body byte unmetered and 5.6 metered, records included.
constexpr std::uint64_t kCodeChargePerByte = 8;

// A string of type codes, not a vector<uint8_t>: GCC 12 at -O3 inlines vector's <=> in the map
// into a memcmp whose length it cannot bound and reports a false -Wstringop-overread there.
// A type naming other types (typed function references) is keyed by its structure's identity.
std::string type_key(const FuncType& t) {
  std::string k;
  if (t.has_type_refs) {
    k.push_back('R');
    k.append(t.structure.begin(), t.structure.end());
    return k;
  }
  k.reserve(4 * (t.params.size() + t.results.size()) + 1);
  const auto put = [&](ValType v) {
    for (int i = 0; i < 4; ++i) k.push_back(static_cast<char>((v.bits() >> (8 * i)) & 0xFF));
  };
  for (ValType v : t.params) put(v);
  k.push_back(0);
  for (ValType v : t.results) put(v);
  return k;
}
}  // namespace

namespace {

std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile_decoded(
    std::expected<Module, CompileError> decoded) {
  if (!decoded) return std::unexpected(std::move(decoded.error()));
  auto impl = std::make_unique<CompiledModule::Impl>();
  impl->module = std::move(*decoded);
  const Module& m = impl->module;
  std::map<std::string, std::uint32_t> first;
  impl->canonical_type.resize(m.types.size());
  for (std::uint32_t i = 0; i < m.types.size(); ++i)
    impl->canonical_type[i] = first.emplace(type_key(m.types[i]), i).first->second;
  // Lazy translation: no function is translated here (a job of a large module runs a few of its
  // functions); the first call of each in a variant translates it (CompiledModule::Impl::code).
  for (auto& slots : impl->translated) {
    slots = std::make_unique<std::atomic<const CompiledFunc*>[]>(m.code.size());
    for (std::size_t i = 0; i < m.code.size(); ++i) slots[i].store(nullptr, std::memory_order_relaxed);
  }
  // The store's charge for code cannot be what translation will make (that depends on which
  // functions run): it is a figure fixed by the module, kCodeChargePerByte per byte of function
  // bodies plus the per-function record, above what translation makes of ordinary code.
  impl->code_bytes = m.code.size() * (sizeof(CompiledFunc) + sizeof(std::atomic<const CompiledFunc*>));
  for (const FunctionBody& body : m.code) impl->code_bytes += body.code_size * kCodeChargePerByte;
  return std::make_shared<const CompiledModule>(std::move(impl));
}

}  // namespace

std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile(std::span<const std::uint8_t> bytes,
                                                                           Features features) {
  return compile_decoded(decode_and_validate(bytes, features));
}

std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile(std::vector<std::uint8_t>&& bytes,
                                                                           Features features) {
  return compile_decoded(decode_and_validate(std::move(bytes), features));
}

std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile_validated_before(
    ModuleBytes&& bytes, Features features) {
  return compile_decoded(decode_validated_before(std::move(bytes), features));
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
constexpr std::uint64_t kDeadlineChunk = 65536;
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

TrapKind Store::Impl::refuel(std::int64_t& counter_io, std::int64_t visible) {
  for (;;) {
    if (budget.deadline && std::chrono::steady_clock::now() >= *budget.deadline) return TrapKind::DeadlineExceeded;
    if (counter_io - visible > 0) return TrapKind::None;
    if (reserve == 0) {
      out_of_fuel = true;
      return TrapKind::OutOfFuel;
    }
    const std::uint64_t chunk = budget.deadline ? std::min(reserve, kDeadlineChunk) : reserve;
    counter_io += static_cast<std::int64_t>(chunk);
    reserve -= chunk;
  }
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
bool Store::set_tier(Tier tier) noexcept {
  if (tier == Tier::Compile && !compiled_tier_available()) return false;
  impl_->tier = compiled_tier_built() ? tier : Tier::Interpret;
  return true;
}

#if !SPRAWLING_WITH_JIT
std::expected<PrecompileReport, std::string> precompile(const CompiledModule&, bool, CodeCacheStorage&) {
  return std::unexpected(std::string("this build has no compiled tier (built with SPRAWLING_WITH_JIT=OFF)"));
}
#endif

void Store::set_code_cache(std::shared_ptr<CodeCacheStorage> cache) noexcept { impl_->code_cache = std::move(cache); }
void Store::track_first_calls() noexcept { impl_->track_first_calls = true; }
void Store::set_tier_up(bool on) noexcept { impl_->tier_up = on; }

void Store::Impl::ensure_jit_code([[maybe_unused]] int variant) {
#if SPRAWLING_WITH_JIT
  if (all_jit_ready[variant]) return;
  for (auto& inst : instances) {
    if (inst->jit_ready[variant]) continue;
    jit::ModuleCode* code = inst->compiled_module->impl().jit_for(variant, tier, code_cache.get(), tier_up);
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
  const std::uint64_t first = budget.deadline ? std::min(s.total, kDeadlineChunk) : s.total;
  s.counter = static_cast<std::int64_t>(first);
  s.reserve = s.total - first;
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

bool limits_match(std::uint64_t actual_min, std::optional<std::uint64_t> actual_max, const Limits& want,
                  bool actual_is64 = false) {
  if (actual_is64 != want.is64) return false;  // memory64/table64: the address types must be equal
  if (actual_min < want.min) return false;
  if (want.max) {
    if (!actual_max || *actual_max > *want.max) return false;
  }
  return true;
}

// What evaluating constant expressions at instantiation needs for GC's allocations: the store,
// and the references instantiation holds so far that are no root yet (element segments being
// built); `refused` is set when the store's account refuses an object.
struct ConstEval {
  Store::Impl& store;
  std::vector<std::span<const std::uint64_t>> roots;
  bool refused = false;
};

// An extended constant expression (validated: one result). The stack holds frame-slot words
// (a v128 two, low first); i32 values stay zero-extended, as everywhere.
std::uint64_t eval_extended(const ConstExpr& e, const InstanceImpl& inst, ConstEval* gc) {
  using K = ConstExpr::Step::Kind;
  std::vector<std::uint64_t> stack;
  stack.reserve(e.steps.size() + 1);
  // A new object with the stack (its operands included) as a root: 0 when refused.
  const auto made = [&](std::uint64_t h) {
    if (h == 0) gc->refused = true;
    return h;
  };
  const auto extra = [&] {
    std::vector<std::span<const std::uint64_t>> r = gc->roots;
    r.emplace_back(stack);
    return r;
  };
  for (const ConstExpr::Step& s : e.steps) {
    if (gc != nullptr && gc->refused) return 0;
    switch (s.kind) {
      case K::Const: stack.push_back(s.value); continue;
      case K::ConstV128: stack.insert(stack.end(), {s.value, s.value2}); continue;
      case K::GlobalGet: {
        const GlobalInst& g = *inst.globals[s.value];
        stack.push_back(g.bits);
        if (g.type.type == ValType::V128) stack.push_back(g.bits_hi);
        continue;
      }
      case K::RefFunc: stack.push_back(reinterpret_cast<std::uint64_t>(inst.funcs[s.value])); continue;
      case K::RefI31: stack.back() = gcref::from_i31(static_cast<std::uint32_t>(stack.back())); continue;
      case K::AnyConvertExtern: stack.back() = gcref::to_any(stack.back()); continue;
      case K::ExternConvertAny: stack.back() = gcref::to_extern(stack.back()); continue;
      case K::StructNew:
      case K::StructNewDefault: {
        const FuncType* t = inst.types[s.value];
        std::size_t words = 0;
        if (s.kind == K::StructNew)
          for (const FieldType& f : t->fields) words += f.packed == FieldType::Packed::None ? value_slots(f.type) : 1;
        const auto r = extra();
        const std::uint64_t h = made(gc_struct_new(gc->store, t, s.kind == K::StructNew ? stack.data() + stack.size() - words : nullptr,
                                                   gc->store.entry_fp != nullptr ? gc->store.entry_fp : gc->store.stack, r));
        stack.resize(stack.size() - words);
        stack.push_back(h);
        continue;
      }
      case K::ArrayNew:
      case K::ArrayNewDefault:
      case K::ArrayNewFixed: {
        const FuncType* t = inst.types[s.value];
        const FieldType& f = t->fields[0];
        const std::uint32_t size = element_bytes(f);
        const std::size_t width = size == 16 ? 2 : 1;
        std::uint64_t n = s.value2;
        if (s.kind != K::ArrayNewFixed) {
          n = static_cast<std::uint32_t>(stack.back());
          stack.pop_back();
        }
        const std::size_t words = s.kind == K::ArrayNewDefault ? 0 : s.kind == K::ArrayNew ? width : width * n;
        const auto r = extra();
        const std::uint64_t h = made(gc->store.new_gc_object(
            t, static_cast<std::uint32_t>(n), n * size, gc->store.entry_fp != nullptr ? gc->store.entry_fp : gc->store.stack, r));
        if (h != 0 && words != 0) {
          GcObject* o = gc->store.gc.get(h);
          const std::uint64_t* v = stack.data() + stack.size() - words;
          for (std::uint64_t k = 0; k < n; ++k) std::memcpy(o->at(k * size), s.kind == K::ArrayNew ? v : v + k * width, size);
        }
        stack.resize(stack.size() - words);
        stack.push_back(h);
        continue;
      }
      default: break;
    }
    const std::uint64_t b = stack.back();
    stack.pop_back();
    const std::uint64_t a = stack.back();
    std::uint64_t r = 0;
    switch (s.kind) {
      case K::I32Add: case K::I64Add: r = a + b; break;
      case K::I32Sub: case K::I64Sub: r = a - b; break;
      default: r = a * b; break;
    }
    const bool i32 = s.kind == K::I32Add || s.kind == K::I32Sub || s.kind == K::I32Mul;
    stack.back() = i32 ? static_cast<std::uint32_t>(r) : r;
  }
  return stack.back();
}

std::uint64_t eval_const(const ConstExpr& e, const InstanceImpl& inst, ConstEval* gc = nullptr) {
  switch (e.op) {
    case ConstExpr::Op::Extended: return eval_extended(e, inst, gc);
    case ConstExpr::Op::GlobalGet: return inst.globals[e.index]->bits;
    case ConstExpr::Op::RefNull: return 0;
    case ConstExpr::Op::RefFunc: return reinterpret_cast<std::uint64_t>(inst.funcs[e.index]);
    default: return e.bits;
  }
}

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

namespace {
// Whether an exported global's or table's value type `actual` (naming *actual_heap when concrete)
// matches the import's `expected` (naming a type of module m); `both_ways`: equivalence (tables,
// mutable globals), else subtyping (immutable globals).
bool extern_type_matches(ValType actual, const FuncType* actual_heap, ValType expected, const Module& m, bool both_ways) {
  std::span<const FuncType> ta;
  if (actual.concrete()) {
    if (actual_heap == nullptr) return false;
    actual = ValType::ref(actual.nullable(), 0);  // index 0 of the one-type span below
    ta = std::span<const FuncType>(actual_heap, 1);
  }
  return matches(actual, ta, expected, m.types) && (!both_ways || matches(expected, m.types, actual, ta));
}
// The type `t` (of module m) names, for a global or table it defines.
const FuncType* heap_type_of(ValType t, const Module& m) { return t.concrete() ? &m.types[t.type_index()] : nullptr; }
}  // namespace

std::expected<Instance*, InstantiationError> Store::instantiate(std::shared_ptr<const CompiledModule> compiled,
                                                                std::span<const Extern> imports,
                                                                const InstanceSnapshot* from) {
  Impl& s = *impl_;
  const Module& m = compiled->module();
  auto link_error = [](std::string msg) {
    return std::unexpected(InstantiationError{InstantiationError::Kind::Link, std::move(msg), std::nullopt});
  };
  if (imports.size() != m.imports.size()) return link_error("wrong number of imports");
  if (from != nullptr && from->module() != compiled) return link_error("the snapshot was taken from another module");  // [snapshots]

  auto owned = std::make_unique<InstanceImpl>();
  InstanceImpl& inst = *owned;
  inst.compiled_module = std::move(compiled);
  inst.module = &m;
  const auto& ci = inst.compiled_module->impl();
  inst.types.resize(m.types.size());
  for (std::size_t i = 0; i < m.types.size(); ++i) inst.types[i] = &m.types[ci.canonical_type[i]];
  // A GC object a constant expression makes did not fit the store's account.
  auto gc_refused = [] {
    Trap t;
    t.kind = TrapKind::GcHeapLimit;
    t.message = std::string(trap_message(t.kind));
    std::string msg = t.message;
    return std::unexpected(InstantiationError{InstantiationError::Kind::Trap, std::move(msg), std::move(t)});
  };

  for (std::size_t i = 0; i < imports.size(); ++i) {
    const Import& imp = m.imports[i];
    const Extern& ext = imports[i];
    if (kind_of(ext) != imp.kind) return link_error("incompatible import type");
    switch (imp.kind) {
      case ExternKind::Func: {
        FuncInst* f = std::get<FuncInst*>(ext);
        if (!declared_subtype(*f->type, m.types[imp.type_index])) return link_error("incompatible import type");
        inst.funcs.push_back(f);
        break;
      }
      case ExternKind::Table: {
        TableInst* t = std::get<TableInst*>(ext);
        if (!extern_type_matches(t->type.element, t->heap_type, imp.table.element, m, true) ||
            !limits_match(t->elements.size(), t->type.limits.max, imp.table.limits, t->type.limits.is64))
          return link_error("incompatible import type");
        inst.tables.push_back(t);
        break;
      }
      case ExternKind::Memory: {
        MemoryInst* mem = std::get<MemoryInst*>(ext);
        if (!limits_match(mem->size / kPageSize, mem->type.limits.max, imp.memory.limits, mem->type.limits.is64))
          return link_error("incompatible import type");
        inst.memories.push_back(mem);
        break;
      }
      case ExternKind::Global: {
        GlobalInst* g = std::get<GlobalInst*>(ext);
        if (g->type.is_mutable != imp.global.is_mutable ||
            !extern_type_matches(g->type.type, g->heap_type, imp.global.type, m, imp.global.is_mutable))
          return link_error("incompatible import type");
        inst.globals.push_back(g);
        break;
      }
      case ExternKind::Tag: {
        TagInst* t = std::get<TagInst*>(ext);
        if (!(t->type == m.types[imp.type_index])) return link_error("incompatible import type");
        inst.tags.push_back(t);
        break;
      }
    }
  }

  // The store's counts and its account (StoreLimits), checked before anything is allocated.
  if (s.instances.size() >= s.limits.max_instances)
    return link_error("instance limit of " + std::to_string(s.limits.max_instances) + " reached (max-instances)");
  const std::size_t new_tables = m.tables.size() - m.imported_tables;
  const std::size_t new_memories = m.memories.size() - m.imported_memories;
  if (s.tables.size() + new_tables > s.limits.max_tables)
    return link_error("the module defines " + std::to_string(new_tables) + " tables; the store allows " +
                      std::to_string(s.limits.max_tables) + " in all (max-tables)");
  if (s.memories.size() + new_memories > s.limits.max_memories)
    return link_error("the module defines " + std::to_string(new_memories) + " memories; the store allows " +
                      std::to_string(s.limits.max_memories) + " in all (max-memories)");
  {
    std::uint64_t fixed = ci.code_bytes * (s.metered ? 2 : 1) + m.code.size() * sizeof(FuncInst) +
                          (m.globals.size() - m.imported_globals) * sizeof(GlobalInst) +
                          (m.tags.size() - m.imported_tags) * sizeof(TagInst) +
                          m.datas.size() * sizeof(std::span<const std::uint8_t>) + sizeof(InstanceImpl);
    for (const ElementSegment& seg : m.elements) fixed += seg.items.size() * sizeof(std::uint64_t);
    // The initial tables and memories are charged as they are created; summed here first, so
    // that a module whose objects cannot all fit allocates none of them.
    std::uint64_t initial = 0;
    for (std::size_t i = m.imported_tables; i < m.tables.size(); ++i)
      initial += std::min<std::uint64_t>(m.tables[i].limits.min, s.limits.max_table_elements) * sizeof(std::uint64_t);
    // A memory64 minimum may be up to 2^48 pages: clamp so the sum cannot wrap (it is over any limit).
    for (std::size_t i = m.imported_memories; i < m.memories.size(); ++i)
      initial += std::min<std::uint64_t>(m.memories[i].limits.min, kMaxPages64 / 16) * kPageSize;
    const std::uint64_t left = s.account.limit - s.account.used;
    if (fixed > left || initial > left - fixed || !s.account.take(fixed))
      return link_error("the module's code, functions, globals, segments, tables and memories need " +
                        std::to_string(fixed + initial) + " bytes, over what is left of the store's resource limit " +
                        "(max-store-size: " + std::to_string(s.limits.max_store_bytes) + " bytes)");
  }

  // Allocation: functions, tables, memories, globals (imports first in every index space).
  for (std::uint32_t i = 0; i < m.code.size(); ++i) {
    FuncInst& f = s.funcs.emplace_back();
    const std::uint32_t index = m.imported_funcs + i;
    f.type = inst.types[m.func_types[index]];
    f.instance = &inst;
    f.func_index = index;
    // In slots (a v128 takes two), as the translator lays out the frame.
    f.num_params = value_slots(f.type->params);
    f.num_locals = f.num_params + value_slots(m.code[i].locals);
    f.num_results = value_slots(f.type->results);
    // Functions some thread already translated start resolved; the others on their first call.
    for (const int variant : {kUnmetered, kMetered}) {
      if (!s.track_first_calls && ci.translated_code(i, variant == kMetered) != nullptr) resolve_code(f, variant);
    }
    inst.funcs.push_back(&f);
  }
  for (std::size_t i = m.imported_tables; i < m.tables.size(); ++i) {
    const TableType& tt = m.tables[i];
    if (tt.limits.min > s.limits.max_table_elements)
      return link_error("table minimum size of " + std::to_string(tt.limits.min) + " elements exceeds table limits");
    // Typed function references: a table may start with its initialiser's value (imports,
    // functions are in place; table initialisers may read only imported globals).
    const std::size_t defined = i - m.imported_tables;
    const bool has_init = defined < m.table_inits.size() && m.table_inits[defined].has_value();
    ConstEval ce{s, {}};
    const std::uint64_t init_bits = has_init ? eval_const(*m.table_inits[defined], inst, &ce) : 0;
    if (ce.refused) return gc_refused();
    TableInst* table = add_table(tt, has_init ? Value{tt.element, init_bits, 0} : Value::null(tt.element));
    if (table == nullptr)
      return link_error("table minimum size of " + std::to_string(tt.limits.min) +
                        " elements exceeds what is left of the store's resource limit (max-store-size: " +
                        std::to_string(s.limits.max_store_bytes) + " bytes)");
    table->heap_type = heap_type_of(tt.element, m);
    inst.tables.push_back(table);
  }
  for (std::size_t i = m.imported_memories; i < m.memories.size(); ++i) {
    MemoryInst* mem = add_memory(m.memories[i]);
    if (mem == nullptr)
      return link_error("memory minimum size of " + std::to_string(m.memories[i].limits.min) +
                        " pages exceeds memory limits (max-memory-size, or what is left of max-store-size)");
    if (from != nullptr && !restore_memory(*from, i - m.imported_memories, *mem))  // [snapshots]
      return link_error("the snapshot's memory " + std::to_string(i) + " exceeds memory limits or cannot be mapped");
    inst.memories.push_back(mem);
  }
  inst.memory0 = inst.memories.empty() ? &s.no_memory : inst.memories[0];
  for (std::size_t i = m.imported_globals; i < m.globals.size(); ++i) {
    GlobalInst& g = s.globals.emplace_back();
    g.type = m.globals[i];
    g.heap_type = heap_type_of(g.type.type, m);
    const ConstExpr& init = m.global_inits[i - m.imported_globals];
    ConstEval ce{s, {}};
    g.bits = eval_const(init, inst, &ce);
    if (ce.refused) return gc_refused();
    g.bits_hi = init.bits_hi;
    inst.globals.push_back(&g);
  }
  for (std::size_t i = m.imported_tags; i < m.tags.size(); ++i) {
    TagInst& t = s.tags.emplace_back();
    t.type = m.types[m.tags[i]];
    t.slots = value_slots(t.type.params);
    t.index = static_cast<std::uint32_t>(i);
    inst.tags.push_back(&t);
  }
  inst.elements.resize(m.elements.size());
  for (std::size_t i = 0; i < m.elements.size(); ++i) {
    const ElementSegment& seg = m.elements[i];
    auto& refs = inst.elements[i];
    refs.reserve(seg.items.size());
    for (const ConstExpr& e : seg.items) {
      // Objects made for the segments so far are roots until the instance is the store's.
      ConstEval ce{s, {}};
      for (std::size_t k = 0; k <= i; ++k) ce.roots.emplace_back(inst.elements[k]);
      refs.push_back(eval_const(e, inst, &ce));
      if (ce.refused) return gc_refused();
    }
  }
  inst.datas.reserve(m.datas.size());
  for (const DataSegment& d : m.datas) inst.datas.push_back(m.data_bytes(d));

  // From here the instance is live: functions of it may already sit in imported tables when a
  // later segment traps, so the store keeps it either way.
  s.instances.push_back(std::move(owned));
  s.all_jit_ready[kUnmetered] = s.all_jit_ready[kMetered] = false;
  if (from != nullptr) {  // [snapshots] the snapshot's state replaces segments and the start function
    restore_instance_state(*from, inst);
    return &inst;
  }

  auto trap_error = [](Trap t) {
    std::string msg = t.message;
    return std::unexpected(InstantiationError{InstantiationError::Kind::Trap, std::move(msg), std::move(t)});
  };
  for (std::size_t i = 0; i < m.elements.size(); ++i) {
    const ElementSegment& seg = m.elements[i];
    if (seg.mode == SegmentMode::Active) {
      TableInst* t = inst.tables[seg.table_index];
      // i32 offsets are zero-extended in their slot; a 64-bit table's are u64 (never wrapping below).
      const std::uint64_t offset = t->type.limits.is64 ? eval_const(seg.offset, inst)
                                                       : static_cast<std::uint32_t>(eval_const(seg.offset, inst));
      const auto& refs = inst.elements[i];
      if (offset > t->elements.size() || refs.size() > t->elements.size() - offset) {
        Trap tr;
        tr.kind = TrapKind::OutOfBoundsTableAccess;
        tr.message = std::string(trap_message(tr.kind));
        return trap_error(std::move(tr));
      }
      std::copy(refs.begin(), refs.end(), t->elements.begin() + offset);
    }
    if (seg.mode != SegmentMode::Passive) inst.elements[i].clear();
  }
  for (std::size_t i = 0; i < m.datas.size(); ++i) {
    const DataSegment& d = m.datas[i];
    if (d.mode != SegmentMode::Active) continue;
    MemoryInst* mem = inst.memories[d.memory_index];
    // i32 offsets are zero-extended in their slot; memory64 ones are u64 (never wrapping below).
    const std::uint64_t offset = mem->type.limits.is64 ? eval_const(d.offset, inst)
                                                       : static_cast<std::uint32_t>(eval_const(d.offset, inst));
    if (offset > mem->size || d.bytes_size > mem->size - offset) {
      Trap tr;
      tr.kind = TrapKind::OutOfBoundsMemoryAccess;
      tr.message = std::string(trap_message(tr.kind));
      return trap_error(std::move(tr));
    }
    if (d.bytes_size != 0) std::memcpy(mem->base + offset, m.bytes.data() + d.bytes_offset, d.bytes_size);
    inst.datas[i] = {};
  }
  if (m.start) {
    auto r = invoke(inst.funcs[*m.start], {});
    if (!r) return trap_error(std::move(r.error()));
  }
  return &inst;
}

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
  ++s.active_runs;
  // Auto without a code cache and without tier-up has nothing to find: the interpreter's path exactly.
  if (s.tier == Tier::Compile || (s.tier == Tier::Auto && (s.code_cache || s.tier_up))) s.ensure_jit_code(variant);
  if (s.metered) {
    // Entry check of the deadline: what ran before this call (instantiation) counts; the
    // interpreter checks again at every fuel refill.
    if (s.budget.deadline && std::chrono::steady_clock::now() >= *s.budget.deadline) {
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
    if (const ExnObject* e = s.exceptions.get(s.pending_exception); e != nullptr) {
      std::string types;
      for (const ValType v : e->tag->type.params) {
        types += types.empty() ? "" : " ";
        types += name(v);
      }
      out.host_message = ": tag " + std::to_string(e->tag->index) + " [" + types + "]";
    }
    s.pending_exception = 0;
  }
  if (out.trap != TrapKind::None) return std::unexpected(make_trap(out, variant));
  take_results(base);
  return results;
}

}  // namespace sprawling::wasm
