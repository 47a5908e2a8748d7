// The runtime objects behind runtime.hpp's opaque handles: function, table, memory and global
// instances, module instances, the CompiledModule internals and the Store's state (its objects,
// execution stack, fuel counter). Private to the engine.
#pragma once

#include "wasm/icode/code.hpp"
#include "wasm/runtime/heap/exceptions.hpp"
#include "wasm/runtime/heap/gc_heap.hpp"
#include "wasm/runtime/host.hpp"
#include "wasm/runtime/runtime.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace sprawling::wasm {

struct HeapRoots;  // wasm/runtime/heap/roots.hpp

struct InstanceImpl;

// StoreLimits::max_store_bytes: what the store has allocated for guests. Shared by the store's
// tables and memories, which charge their growth to it.
struct ResourceAccount {
  std::uint64_t limit = UINT64_MAX;
  std::uint64_t used = 0;
  [[nodiscard]] bool take(std::uint64_t bytes) noexcept {
    if (bytes > limit - used) return false;
    used += bytes;
    return true;
  }
};
// The compiled tier (wasm/jit/, built with SPRAWLING_WITH_JIT): a compiled function's entry.
namespace jit {
struct Ctx;
struct JobLimits;
// What a compiled function returns: its status (0, a trap kind, or kTailPending...) and, in a
// second register, the value of its first result slot when it has exactly one (callers of the
// entry read results from the frame; a direct call inside one compiled module reads this).
struct EntryResult {
  std::uint32_t status;
  std::uint64_t value;
};
using Entry = EntryResult (*)(Ctx*, std::uint64_t*);
class ModuleCode;
// One defined function's machine code in a module variant: `entry` is null while the function
// runs interpreted and is published once (release). `countdown` is the tier-up's hotness: the
// interpreter takes one off per interpreted call (and loop samples) while `entry` is null, and
// asks for compilation when it reaches 0 (jit::tier_up_hot); slots of code that does not tier up
// start so high that it never matters. Relaxed and racy on purpose: a lost decrement only delays.
struct Slot {
  std::atomic<Entry> entry{nullptr};
  std::atomic<std::int32_t> countdown{INT32_MAX};
  // Tier-up: 1 + the loop header word where the interpreter last took a loop sample
  // in this function while it had no entry (0: none), written by the interpreter; and 1 + the
  // one loop header where the entry also continues a running interpreted activation (on-stack
  // replacement, Ctx::osr_at; 0: none), set by the compiler before `entry` is published.
  std::atomic<std::uint32_t> loop_hint{0};
  std::atomic<std::uint32_t> osr{0};
  const ModuleCode* code = nullptr;  // the code this slot is part of
};
}  // namespace jit

// A bulk operation's charge of `units` taken from a fuel counter, as both tiers make it: saturated
// at INT64_MIN instead of wrapping. No budget reaches that far (budgets are at most 2^62), so the
// refill that follows finds the run out of fuel; a counter that wrapped would have become a huge
// balance (a table.grow of 2^63 elements charges INT64_MAX, and subtracting that wraps once the
// counter is below -1, as it is when the segment overdrew it).
inline std::int64_t fuel_minus(std::int64_t counter, std::uint64_t units) noexcept {
  std::int64_t out = 0;
  if (units > static_cast<std::uint64_t>(INT64_MAX) ||
      __builtin_sub_overflow(counter, static_cast<std::int64_t>(units), &out))
    return INT64_MIN;
  return out;
}

// Code variant: unmetered or metered (fuel ops present). Indexes FuncInst::entry.
inline constexpr int kUnmetered = 0;
inline constexpr int kMetered = 1;

struct FuncInst {
  const FuncType* type = nullptr;     // canonical within its module, so equal pointers mean equal types
  InstanceImpl* instance = nullptr;   // null for host functions
  HostFn host = nullptr;
  void* host_context = nullptr;
  std::uint32_t func_index = 0;       // index in its module (wasm functions)
  std::uint32_t num_params = 0;
  std::uint32_t num_locals = 0;
  std::uint32_t frame_slots = 0;
  std::uint32_t num_results = 0;
  // Per variant: this function's published machine code, once it is also resolved in this store
  // (frame_slots and entry_fuel known), else null. The runtime's call helpers set it the first
  // time they find both (an entry is published once and stays callable while its code lives), so
  // machine code's call_indirect and call_ref read one field instead of the resolution, the slot
  // and the slot's entry. Only this store's thread reads and writes it.
  jit::Entry native[2] = {nullptr, nullptr};
  // Per variant, set with `native`: the same code's register-argument entry point when its
  // module variant's code has one for this function (ModuleCode::bodies: whole-module code, a
  // function that may be called through a reference, at most kRegisterArgs argument slots and
  // one result slot), else null. Whole-module code's call_indirect and call_ref call it with the
  // arguments and the result in registers instead of through the frame.
  void* body[2] = {nullptr, nullptr};
  // Per variant: the translated code and its entry, null until the function first runs in that
  // variant in this store (lazy translation: resolve_code fills them, frame_slots and entry_fuel).
  const CompiledFunc* code[2] = {nullptr, nullptr};
  // Metered entry: the first segment's charge, made by the caller after the entry check; the
  // metered entry pointer skips the FuelCheck this replaces. 0 for host functions.
  std::int64_t entry_fuel = 0;
  const std::uint32_t* entry[2] = {nullptr, nullptr};
  // Compiled tier, per variant: the module's slot for this function (null: interpreted, uncounted).
  jit::Slot* jit[2] = {nullptr, nullptr};
  // Host functions keep their type and name in Store::Impl::host_infos: a module's million
  // functions should not each carry an empty FuncType and string (80 bytes apiece).
};

// What a host function has that a wasm function does not: the storage its `type` points at.
struct HostFuncInfo {
  FuncType type;
  std::string debug_name;
};

// Typed function references: a global's or table's type may name a function type of the module
// that defined it; `heap_type` points at that type (the CompiledModule keeps it), so an import
// in another module can be matched against it (extern_type_matches); null otherwise.
struct GlobalInst {
  GlobalType type;
  std::uint64_t bits = 0;
  std::uint64_t bits_hi = 0;
  const FuncType* heap_type = nullptr;
};

struct TableInst {
  TableType type;
  const FuncType* heap_type = nullptr;
  std::vector<std::uint64_t> elements;  // FuncInst* bits or externref payloads; 0 = null
  std::uint32_t max_elements = 0;       // the declared max clamped by StoreLimits
  ResourceAccount* account = nullptr;   // charged 8 bytes per element (none: unlimited)
  // table.grow: the old size, or -1 past max_elements or the account (n: a 64-bit table's may be
  // any u64; refused before anything is charged or allocated).
  [[nodiscard]] std::int64_t grow(std::uint64_t n, std::uint64_t init);
};

// What a ResourcePool recycles: a value stack + frame array, or a memory reservation whose
// first `committed` bytes are read-write and zero.
struct StackBlock {
  std::uint64_t* stack = nullptr;
  std::size_t stack_bytes = 0;
  struct Frame* frames = nullptr;
  std::size_t frames_bytes = 0;
};
struct MemoryBlock {
  std::uint8_t* base = nullptr;
  std::uint64_t reserved = 0;
  std::uint64_t committed = 0;
};

struct ResourcePool::Impl {
  std::size_t max_cached = 0;
  std::mutex mutex;
  std::vector<StackBlock> stacks;
  std::vector<MemoryBlock> memories;
  ~Impl();
  [[nodiscard]] std::optional<StackBlock> take_stack(std::size_t stack_bytes, std::size_t frames_bytes);
  [[nodiscard]] bool give_stack(const StackBlock& b);
  [[nodiscard]] std::optional<MemoryBlock> take_memory(std::uint64_t reserved);
  // Zeroes the first `dirty` bytes (or drops them from memory when large) before keeping it.
  [[nodiscard]] bool give_memory(MemoryBlock b, std::uint64_t dirty);
};

// Linear memory: one reservation of `reserved` bytes made at creation, committed read-write up
// to `size` as it grows, so `base` never moves.
struct MemoryInst {
  MemoryType type;
  std::uint8_t* base = nullptr;
  std::uint64_t size = 0;
  std::uint64_t peak = 0;
  std::uint64_t reserved = 0;
  std::uint64_t max_pages = 0;  // the declared max clamped by StoreLimits
  std::uint64_t committed = 0;  // read-write bytes from base (>= size when recycled)
  std::shared_ptr<ResourcePool> pool;  // where the reservation goes back to, if any
  ResourceAccount* account = nullptr;  // charged the size as it grows (none: unlimited)
  // [snapshots] Bytes from base mapped copy-on-write from a snapshot image (snapshot.cpp), 0 if none.
  std::uint64_t image_bytes = 0;

  MemoryInst() = default;
  MemoryInst(const MemoryInst&) = delete;
  MemoryInst& operator=(const MemoryInst&) = delete;
  ~MemoryInst();
  // Reserves and commits the initial pages; false when the minimum is over the cap or the
  // account, or mmap fails.
  [[nodiscard]] bool create(MemoryType t, std::uint64_t max_bytes, std::shared_ptr<ResourcePool> from = nullptr,
                            ResourceAccount* charge_to = nullptr);
  // Makes [0, bytes) read-write.
  [[nodiscard]] bool commit(std::uint64_t bytes);
  // memory.grow: the old size in pages, or -1.
  // memory64's deltas are u64 (an i32 memory's are zero-extended u32s).
  [[nodiscard]] std::int64_t grow(std::uint64_t delta_pages);
  // [snapshots] Replaces the image mapping by zero pages (snapshot.cpp).
  void drop_image();
};

class FunctionCode;
struct PretranslatedCode;

struct CompiledModule::Impl {
  Module module;
  std::vector<std::uint32_t> canonical_type;  // typeidx -> first typeidx with an equal FuncType
  bool nan_canonical = false;  // Features::nan_canonicalization: its code canonicalizes NaNs
  // What an instance charges its store's account for code (StoreLimits::max_store_bytes), twice
  // when metered: fixed by the module, not by what has been translated so far (see compile()).
  std::uint64_t code_bytes = 0;
  // Lazy translation: per variant (kUnmetered, kMetered) and defined function, its code, null
  // until the first call of the function in that variant (code()). Shared by every thread and
  // Store that runs the module; a slot is set once and never changes after.
  std::unique_ptr<std::atomic<const CompiledFunc*>[]> translated[2];

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl();
  // The code of defined function `defined` in that variant, translated (and, when verification
  // is on, verified) on first use. Thread-safe: threads that race on a first use may each
  // translate it, the first to finish publishes its result, the others drop theirs (the
  // translation is deterministic, so all are equal).
  [[nodiscard]] const CompiledFunc& code(std::uint32_t defined, bool metered) const;
  // The code if it has been translated, else null (never translates).
  [[nodiscard]] const CompiledFunc* translated_code(std::uint32_t defined, bool metered) const noexcept {
    return translated[metered ? kMetered : kUnmetered][defined].load(std::memory_order_acquire);
  }
  // Every defined function's code in one variant, each translated when first read (the compiled
  // tier, the disassembler and tests walk it).
  [[nodiscard]] FunctionCode all_code(bool metered) const;
  // How many functions of a variant have been translated so far.
  [[nodiscard]] std::size_t translated_count(bool metered) const noexcept;
  // [snapshot code] Translations from a snapshot file (load_snapshot), which code() copies
  // instead of translating; null when none. Replaced whole under the mutex.
  mutable std::mutex pretranslated_mutex;
  mutable std::shared_ptr<const PretranslatedCode> pretranslated;
  [[nodiscard]] std::shared_ptr<const PretranslatedCode> pretranslated_source() const {
    std::lock_guard lock(pretranslated_mutex);
    return pretranslated;
  }
  // The compiled tier's code per variant (wasm/jit/), made on first use by a Store on that tier:
  // loaded from the code cache (tried once per variant), else (Tier::Compile) compiled lazily.
  // CompiledModule::content_digest: SHA-256 of module.bytes, computed or given once.
  [[nodiscard]] const Sha256Digest& content_digest() const;
  void remember_content_digest(const Sha256Digest& d) const;
  mutable std::once_flag digest_once;
  mutable Sha256Digest digest{};
  mutable std::mutex jit_mutex;
  mutable std::shared_ptr<jit::ModuleCode> jit_code[2];     // whole module: cached, or Tier::Compile
  mutable std::shared_ptr<jit::ModuleCode> jit_tier_up[2];  // Tier::Auto with tier-up, not cached
  mutable bool jit_cache_tried[2] = {false, false};
  const jit::ModuleCode& jit(int variant) const;  // compiled now (lazily per function), no cache
  // The code for a store on `tier` with `cache` (may be null); null: none (Auto, not cached, and
  // `tier_up` off). Auto with `tier_up`: code whose functions are compiled when hot (tiering.cpp),
  // unless whole-module code exists by then.
  jit::ModuleCode* jit_for(int variant, Tier tier, const std::shared_ptr<CodeCacheStorage>& cache,
                           bool tier_up = false) const;
};

// CompiledModule::Impl::all_code: a view of one variant's code of every defined function, in
// defined-function order; reading element i translates function i if needed.
class FunctionCode {
 public:
  FunctionCode(const CompiledModule::Impl& cm, bool metered) noexcept : cm_(&cm), metered_(metered) {}
  [[nodiscard]] std::size_t size() const noexcept { return cm_->module.code.size(); }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] bool metered() const noexcept { return metered_; }
  [[nodiscard]] const CompiledFunc& operator[](std::size_t defined) const {
    return cm_->code(static_cast<std::uint32_t>(defined), metered_);
  }

  class iterator {
   public:
    iterator(const FunctionCode* view, std::size_t at) noexcept : view_(view), at_(at) {}
    const CompiledFunc& operator*() const { return (*view_)[at_]; }
    iterator& operator++() noexcept {
      ++at_;
      return *this;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.at_ == b.at_; }

   private:
    const FunctionCode* view_;
    std::size_t at_;
  };
  [[nodiscard]] iterator begin() const noexcept { return {this, 0}; }
  [[nodiscard]] iterator end() const noexcept { return {this, size()}; }

 private:
  const CompiledModule::Impl* cm_;
  bool metered_;
};

inline FunctionCode CompiledModule::Impl::all_code(bool metered) const { return {*this, metered}; }

struct InstanceImpl final : Instance {
  std::shared_ptr<const CompiledModule> compiled_module;
  const Module* module = nullptr;
  std::vector<FuncInst*> funcs;
  std::vector<TableInst*> tables;
  std::vector<MemoryInst*> memories;
  MemoryInst* memory0 = nullptr;  // never null: an empty placeholder when the module has no memory
  std::vector<GlobalInst*> globals;
  std::vector<TagInst*> tags;  // exception handling: imports first
  std::vector<const FuncType*> types;  // typeidx -> canonical FuncType
  std::vector<std::vector<std::uint64_t>> elements;  // element segments as references; cleared on drop
  std::vector<std::span<const std::uint8_t>> datas;  // data segments; emptied on drop
  bool jit_ready[2] = {false, false};

  [[nodiscard]] std::optional<Extern> find_export(std::string_view name) const override;
  [[nodiscard]] MemoryInst* memory(std::uint32_t index) const override {
    return index < memories.size() ? memories[index] : nullptr;
  }
  [[nodiscard]] const CompiledModule& compiled() const override { return *compiled_module; }
};

// A call frame record: where to resume the caller.
struct Frame {
  const std::uint32_t* ip;
  std::uint64_t* fp;
  FuncInst* func;
};

// Where a caught exception continues (interp/unwind.cpp): its handler's code, frame and function,
// and the frame records left; ip null when no frame of this run catches it.
struct Caught {
  const std::uint32_t* ip = nullptr;
  std::uint64_t* fp = nullptr;
  FuncInst* func = nullptr;
  Frame* fr = nullptr;
};

struct Store::Impl {
  std::shared_ptr<ResourcePool> pool;  // first member: outlives the memories that return to it
  StoreLimits limits;
  std::deque<FuncInst> funcs;
  std::deque<HostFuncInfo> host_infos;
  std::deque<GlobalInst> globals;
  std::deque<TableInst> tables;
  std::deque<MemoryInst> memories;
  std::vector<std::unique_ptr<InstanceImpl>> instances;
  std::deque<TagInst> tags;
  MemoryInst no_memory;  // memory0 of instances without one: size 0, every access traps
  ResourceAccount account;  // StoreLimits::max_store_bytes

  // Value stack and frame records, reserved on first use.
  std::uint64_t* stack = nullptr;
  std::size_t stack_bytes = 0;
  Frame* frames = nullptr;
  std::size_t frames_bytes = 0;
  Tier tier = Tier::Interpret;
  // Tier::Compile whose module has its machine code already (set_tier's `code_ready`): nothing
  // compiles during its runs, and the plugin may not be loaded at all.
  bool compile_code_ready = false;
  bool tier_up = true;  // Tier::Auto without cached code: compile hot functions in the background
  std::uint64_t compile_memory = kDefaultCompileMemory;  // Store::set_compile_memory
  std::shared_ptr<CodeCacheStorage> code_cache;  // Tier::Compile / Auto: where cached code is found
  bool all_jit_ready[2] = {true, true};
  bool track_first_calls = false;  // [snapshot code] Store::track_first_calls
  // Where the next run starts: the stack bottom, or — when a host function calls back into the
  // store — just above the frame and the frame record of the host call in progress.
  // (The interpreter records both before every host call.)
  std::uint64_t* entry_fp = nullptr;
  Frame* entry_frame = nullptr;
  // The next run's function has its entry made already (a compiled function's pending tail call,
  // jit::run_pending): the run skips the stack check, the locals' zeroing and the entry charge.
  bool entry_made = false;
  int active_runs = 0;

  // Fuel: the interpreter works on `counter` (remaining in the current chunk, may go negative
  // after the last check); `reserve` is what has not been handed out yet.
  ExecutionBudget budget;
  bool metered = false;
  std::int64_t counter = 0;
  std::uint64_t reserve = 0;
  std::uint64_t total = 0;  // everything handed out or reserved since set_budget
  bool out_of_fuel = false;  // a check found the budget spent since set_budget
  // A run on Tier::Compile: what the compilation it triggers checks (Store::call).
  jit::JobLimits* job_limits = nullptr;

  // Exception handling: the exception objects, and the one leaving a run uncaught (a run ends
  // with TrapKind::UncaughtException; whoever ran it rethrows it, or reports it as a trap).
  std::uint64_t pending_exception = 0;
  // A new exception object in the heap (exceptions.cpp); `top` is the end of the throwing frame,
  // up to which the value stack holds live values. 0 when the store's account refuses it.
  [[nodiscard]] std::uint64_t new_exception(const TagInst* tag, const std::uint64_t* values, const std::uint64_t* top);
  // The one heap: struct, array and exception objects (gc_heap.hpp). A new zeroed GC object
  // (roots.cpp); 0 when refused. Every collection reads the roots heap_roots enumerates.
  GcHeap gc;
  void heap_roots(const std::uint64_t* top, HeapRoots& out) const;
  // Roots outside the value stack (docs/interpreter.md, "Garbage collection"):
  // - references the host was given by Store::invoke (or rooted with Store::root), in a LIFO list
  //   that Store::RootScope truncates;
  // - while machine code runs, the native stack from the allocating call up to the outermost
  //   jit::enter's frame (set there, null otherwise): compiled frames keep references in
  //   registers and native stack slots the value-stack scan does not see.
  std::vector<std::uint64_t> host_roots;
  const void* native_roots_top = nullptr;
  // `extra`: more roots (what instantiation holds while it evaluates constant expressions).
  [[nodiscard]] std::uint64_t new_gc_object(const FuncType* type, std::uint32_t length, std::uint64_t bytes,
                                            const std::uint64_t* top,
                                            std::span<const std::span<const std::uint64_t>> extra = {});

  Impl(StoreLimits l, std::shared_ptr<ResourcePool> p) : pool(std::move(p)), limits(l) {
    account.limit = l.max_store_bytes;
  }
  ~Impl();
  [[nodiscard]] bool ensure_stack();
  // The out-of-fuel slow path: refills `counter` from the reserve (checking the deadline)
  // until counter > visible, or says why it cannot.
  [[nodiscard]] TrapKind refuel(std::int64_t& counter_io, std::int64_t visible);
  // Compiled tier: moves fuel from the reserve into `counter_io` ahead of need, in the deadline's
  // chunks, until it holds at least `extra` more than it did (a check-free loop copy then runs
  // without refuelling). Never traps: false, with the counter as it left it, when `extra` is
  // more than it gives at once (kMaxFuelAhead; more only as long as the deadline leaves time for
  // it), the reserve cannot cover it, or the deadline has passed or the job was cancelled (the
  // code then runs its checked copy, whose next refuel finds that out where the interpreter
  // would).
  [[nodiscard]] bool fuel_ahead(std::int64_t& counter_io, std::int64_t extra);
  // Compiled tier: points every instance's functions at the module's compiled code (and at
  // their translated code, all of it, as the compiled tier reads it all).
  void ensure_jit_code(int variant);
};

// Execution entry (interpreter.cpp): runs `func` with its arguments in stack[0, params);
// results are left in stack[0, results).
struct ExecOutcome {
  TrapKind trap = TrapKind::None;
  FuncInst* func = nullptr;             // innermost wasm function on trap
  const std::uint32_t* ip = nullptr;    // its trapping instruction
  std::string host_message;
  std::uint32_t exit_code = 0;
  std::uint32_t element_index = 0;      // UninitializedElement: the table index, for the message
};

// Lazy translation: points wasm function `f` at its code of `variant` (translating it if no
// thread has yet): code, entry, entry_fuel (metered) and frame_slots. Called where a function
// whose entry is still null is about to run: the interpreter's call path, execute(), and the
// compiled tier's set-up (runtime.cpp).
void resolve_code(FuncInst& f, int variant);

}  // namespace sprawling::wasm
