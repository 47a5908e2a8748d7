// The engine's embedding API: compile bytes into a shareable CompiledModule, create host
// objects, link imports, instantiate into a Store, invoke functions under a fuel budget and
// deadline. Traps are values (Trap), never C++ exceptions out of the interpreter.
//
// Contract shared by the engine (implementer) and its users (WASI host, sandbox adapter,
// script runner, tests). Add to it freely; rename nothing without updating every user.
#pragma once

#include "wasm/binary/decoder.hpp"
#include "wasm/runtime/host.hpp"
#include "wasm/syntax/module.hpp"
#include "wasm/support/sha256.hpp"
#include "wasm/syntax/types.hpp"

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sprawling::wasm {

// ---------------------------------------------------------------- traps

// 0 is reserved for "no trap" so hot helpers can return a bare TrapKind tested against zero.
enum class TrapKind : std::uint8_t {
  None = 0,
  Unreachable,                 // "unreachable"
  IntegerDivideByZero,         // "integer divide by zero"
  IntegerOverflow,             // "integer overflow"
  InvalidConversionToInteger,  // "invalid conversion to integer"
  OutOfBoundsMemoryAccess,     // "out of bounds memory access"
  OutOfBoundsTableAccess,      // "out of bounds table access"
  UndefinedElement,            // "undefined element"
  UninitializedElement,        // "uninitialized element"
  IndirectCallTypeMismatch,    // "indirect call type mismatch"
  CallStackExhausted,          // "call stack exhausted"
  OutOfFuel,                   // "all fuel consumed by WebAssembly"
  DeadlineExceeded,            // "deadline exceeded"
  Host,                        // a host function trapped; Trap::message is its message
  Exit,                        // a host function asked to end the run (proc_exit); Trap::exit_code
  UncaughtException,           // "uncaught exception": a wasm exception left the outermost wasm frame
  NullExceptionReference,      // "null exception reference" (throw_ref of null)
  ExceptionLimit,              // a new exception did not fit the store's limit (max-store-size)
  NullFunctionReference,       // "null function reference" (call_ref / return_call_ref of null)
  NullReference,               // "null reference" (ref.as_non_null of null)
  // Garbage collection
  CastFailure,                 // "cast failure" (ref.cast)
  NullStructReference,         // "null structure reference"
  NullArrayReference,          // "null array reference"
  NullI31Reference,            // "null i31 reference"
  OutOfBoundsArrayAccess,      // "out of bounds array access"
  GcHeapLimit,                 // a new GC object did not fit the store's limit (max-store-size)
};

// The trap a host call's ending stands for (None for HostStatus::Ok).
[[nodiscard]] constexpr TrapKind host_trap_kind(HostStatus status) noexcept {
  switch (status) {
    case HostStatus::Ok: return TrapKind::None;
    case HostStatus::Trap: return TrapKind::Host;
    case HostStatus::Exit: return TrapKind::Exit;
    case HostStatus::DeadlineExceeded: return TrapKind::DeadlineExceeded;
    case HostStatus::OutOfFuel: return TrapKind::OutOfFuel;
  }
  return TrapKind::Host;
}

// The spec testsuite's wording for each kind (Host/Exit: a generic phrase).
[[nodiscard]] std::string_view trap_message(TrapKind kind) noexcept;

struct Trap {
  TrapKind kind = TrapKind::None;
  std::string message;          // trap_message(kind), or the host function's message for Host
  std::uint32_t exit_code = 0;  // kind == Exit
  // Where it happened: the innermost wasm function on the stack, if any.
  std::optional<std::uint32_t> func_index;
  std::string func_name;        // from the name section when present
  std::size_t offset = 0;       // byte offset in the module binary of the trapping instruction
};

// ---------------------------------------------------------------- values

// A value crossing the host boundary. References: bits == 0 is null; a funcref's bits is an
// engine handle; an externref's bits is the embedder's payload (so payload 0 means null —
// embedders that need "extern 0" add one; and bit 63 stays clear: garbage collection's
// any.convert_extern marks a host reference inside the any hierarchy with it).
struct Value {
  ValType type = ValType::I32;
  std::uint64_t bits = 0;
  std::uint64_t bits_hi = 0;  // v128 only

  static Value i32(std::uint32_t v) { return {ValType::I32, v, 0}; }
  static Value i64(std::uint64_t v) { return {ValType::I64, v, 0}; }
  static Value f32_bits(std::uint32_t v) { return {ValType::F32, v, 0}; }
  static Value f64_bits(std::uint64_t v) { return {ValType::F64, v, 0}; }
  static Value null(ValType ref_type) { return {ref_type, 0, 0}; }
  static Value externref(std::uint64_t payload) { return {ValType::ExternRef, payload, 0}; }
  friend bool operator==(const Value&, const Value&) = default;
};

// ---------------------------------------------------------------- compile

// Decoded and validated code, translated lazily (each function on its first call): safe to share
// between threads and instantiate many times.
class CompiledModule {
 public:
  struct Impl;
  explicit CompiledModule(std::unique_ptr<Impl> impl);
  ~CompiledModule();
  CompiledModule(const CompiledModule&) = delete;
  CompiledModule& operator=(const CompiledModule&) = delete;

  [[nodiscard]] const Module& module() const noexcept;
  [[nodiscard]] const Impl& impl() const noexcept { return *impl_; }
  // SHA-256 of the module's bytes: its one identity, in the code cache's key and in snapshot
  // files. Computed on first use, once per module, unless the loader that hashed the bytes for
  // its own check gave it first (remember_content_digest, which must be given sha256(bytes)).
  [[nodiscard]] const Sha256Digest& content_digest() const;
  void remember_content_digest(const Sha256Digest& digest) const;

 private:
  std::unique_ptr<Impl> impl_;
};

// `features`: the 3.0 features beyond 2.0 the module may use (decoder.hpp); all on by default.
[[nodiscard]] std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile(std::span<const std::uint8_t> bytes,
                                                                                      Features features = {});
// compile() for bytes this engine build has validated before, as a certificate of this build
// says (a snapshot file naming their SHA-256: snapshot.hpp's snapshot_vouches_for): decodes them
// without validating the function bodies again (decode_validated_before). Never for other bytes,
// and only with the features they were validated with or more.
[[nodiscard]] std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile_validated_before(
    ModuleBytes&& bytes, Features features = {});
// compile() taking the bytes over instead of copying them (a 7 MB module: a copy and its page faults).
[[nodiscard]] std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile(std::vector<std::uint8_t>&& bytes,
                                                                                      Features features = {});

// ---------------------------------------------------------------- store objects

// Runtime objects live in a Store and are addressed by stable pointers valid for the Store's life.
struct FuncInst;
struct TableInst;
struct MemoryInst;
struct GlobalInst;
struct TagInst;
class InstanceSnapshot;  // snapshot.hpp
using Extern = std::variant<FuncInst*, TableInst*, MemoryInst*, GlobalInst*, TagInst*>;  // index = ExternKind

[[nodiscard]] ExternKind kind_of(const Extern& e) noexcept;
[[nodiscard]] const FuncType& func_type(const FuncInst* f) noexcept;
[[nodiscard]] GlobalType global_type(const GlobalInst* g) noexcept;
[[nodiscard]] Value global_get(const GlobalInst* g) noexcept;
void global_set(GlobalInst* g, Value v) noexcept;  // precondition: mutable, same type
[[nodiscard]] TableType table_type(const TableInst* t) noexcept;  // current size as limits.min
[[nodiscard]] MemoryType memory_type(const MemoryInst* m) noexcept;  // current pages as limits.min
[[nodiscard]] std::uint8_t* memory_data(MemoryInst* m) noexcept;
[[nodiscard]] std::uint64_t memory_size_bytes(const MemoryInst* m) noexcept;
[[nodiscard]] std::uint64_t memory_peak_bytes(const MemoryInst* m) noexcept;

class Instance {
 public:
  virtual ~Instance() = default;
  [[nodiscard]] virtual std::optional<Extern> find_export(std::string_view name) const = 0;
  [[nodiscard]] virtual MemoryInst* memory(std::uint32_t index = 0) const = 0;  // nullptr if none
  [[nodiscard]] virtual const CompiledModule& compiled() const = 0;
};

// Bounds that keep any guest from exhausting the host (Wasmtime's StoreLimits, plus one account).
struct StoreLimits {
  std::uint64_t max_memory_bytes = std::uint64_t{4} << 30;  // per memory; memory.grow past it returns -1
  std::uint32_t max_table_elements = 10'000'000;           // per table; table.grow past it returns -1
  std::uint32_t max_call_depth = 20'000;                   // deeper → "call stack exhausted"
  std::uint32_t max_value_stack_slots = 4u << 20;          // 32 MiB of 64-bit slots
  // Counts of objects in the store (Wasmtime's defaults); instantiating past one fails.
  std::uint32_t max_tables = 10'000;
  std::uint32_t max_memories = 10'000;
  std::uint32_t max_instances = 10'000;
  // The one account of host bytes a guest makes the store allocate: linear memories (their
  // current size), tables (8 bytes per element), functions, globals, element segments as
  // materialised references, data segment records, and the compiled code of each instantiated
  // module (a figure fixed by the module's size, since functions are translated lazily).
  // Instantiating past it fails; memory.grow / table.grow past it return -1.
  std::uint64_t max_store_bytes = UINT64_MAX;
};

// Store::set_compile_memory's default: 1 GiB, room for the costliest function the compile budget
// admits (1 MiB of code: about 640 MiB expected) beside what is held; CPython's compile on first
// use grows the heap by less than 256 MiB.
inline constexpr std::uint64_t kDefaultCompileMemory = std::uint64_t{1} << 30;

// What one invoke / instantiate (start function) may spend. Empty = unbounded.
struct ExecutionBudget {
  std::optional<std::uint64_t> fuel;  // Wasmtime cost model; exhaustion → TrapKind::OutOfFuel
  std::optional<std::chrono::steady_clock::time_point> deadline;  // → TrapKind::DeadlineExceeded
};

// Which tier runs wasm functions; all give the same results, traps and fuel.
// Interpret: the interpreter only. Compile: machine code for every function the compiled tier
// supports — from the code cache (Store::set_code_cache) when it holds the module, else compiled
// by LLVM, each function on its first call; the rest stay interpreted. Auto: machine code from the
// code cache when it holds the module, else the interpreter with tier-up (Store::set_tier_up):
// functions the interpreter finds hot are compiled on a background thread and entered from their
// next call; in a build without the compiled tier, the interpreter.
enum class Tier : std::uint8_t { Interpret, Compile, Auto };

// Whether the compiled tier can run here: this build has it (CMake option SPRAWLING_WITH_JIT) and
// its plugin, libsprawling_jit.so (which holds LLVM), loads. The first call loads the plugin.
[[nodiscard]] bool compiled_tier_available() noexcept;
// Why not, when it cannot ("" when it can): a build without it, or every place the plugin was
// looked for and why each failed. Loads the plugin too.
[[nodiscard]] std::string compiled_tier_unavailable_reason();
// Whether this build has the compiled tier, without loading anything (auto's start path).
[[nodiscard]] bool compiled_tier_built() noexcept;

// Ends tier-up's background compilation for the rest of the process (Store::set_tier_up): drops
// what is queued, waits for the function being compiled (cancelled at its next phase) and joins
// the thread. Call it before the process exits when stores ran on Tier::Auto (the CLI does):
// LLVM's statics are destroyed at exit, and a compilation must not be running then. Stores keep
// running after it, with the machine code published so far. No-op without the compiled tier.
void stop_tier_up() noexcept;
// Whether tier-up's thread is compiling or has compilations queued (false without the compiled
// tier). A process ending with it busy may flush and _exit instead of waiting in stop_tier_up.
[[nodiscard]] bool tier_up_busy() noexcept;
// Before such an _exit: the functions it was compiling or had queued, noted in their hot sets
// (jit::tier_up_keep_unfinished).
void tier_up_keep_unfinished() noexcept;

// Where compiled code persists between processes (docs/compiled-tier.md, "Code cache"). The
// engine names each entry (a hash of everything the machine code depends on) and writes
// self-checking bytes (a header with the full key and a checksum it verifies on every read), so
// an implementation only keeps bytes: the sandbox's keeps files (temp file + rename, a size bound).
// Thread-safe implementations only: several stores and threads may use one.
class CodeCacheStorage {
 public:
  virtual ~CodeCacheStorage() = default;
  // The bytes last written under `name`, or nothing (absent, unreadable).
  [[nodiscard]] virtual std::optional<std::vector<std::uint8_t>> read(std::string_view name) = 0;
  // Replaces the entry `name` atomically (a reader sees the old bytes or the new, whole); the
  // error says why it could not.
  [[nodiscard]] virtual std::expected<void, std::string> write(std::string_view name,
                                                               std::span<const std::uint8_t> bytes) = 0;
  // What identifies the bytes stored under `name` without reading them (for files: device, inode,
  // size and times), changing whenever they are written; nothing where the storage cannot say.
  // The engine then skips the checksum of a large entry it verified before under the same
  // identity (code_cache.cpp); without one, every read is checked in full.
  [[nodiscard]] virtual std::optional<std::string> identity(std::string_view name) {
    (void)name;
    return std::nullopt;
  }
};

// A code cache held in memory for the life of the process (`sprawl wast --ahead-of-time`, the
// fuzzers' whole-module runs). Tier-up may write it from its own thread.
class MemoryCodeCache final : public CodeCacheStorage {
 public:
  [[nodiscard]] std::optional<std::vector<std::uint8_t>> read(std::string_view name) override {
    const std::lock_guard lock(mutex_);
    const auto it = entries_.find(name);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  [[nodiscard]] std::expected<void, std::string> write(std::string_view name,
                                                       std::span<const std::uint8_t> bytes) override {
    const std::lock_guard lock(mutex_);
    entries_.insert_or_assign(std::string(name), std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
    return {};
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::vector<std::uint8_t>, std::less<>> entries_;
};

// Links `module`'s machine code of one variant (metered: a store with fuel or a deadline) from
// `cache` if the cache holds it, the engine linking it without the plugin where it can, and says
// whether the module now has it (false without the compiled tier, a cache or an entry). A store
// running only this module in that variant then needs no compiler (Store::set_tier's
// `code_ready`). Looks the cache up once per variant and process, as a store would.
[[nodiscard]] bool cached_code_ready(const CompiledModule& module, bool metered,
                                     const std::shared_ptr<CodeCacheStorage>& cache);

// What `precompile` did.
struct PrecompileReport {
  std::string entry;                 // the entry's name in the storage
  std::size_t functions = 0;         // defined functions
  std::size_t compiled = 0;          // of which have machine code (the rest stay interpreted)
  std::size_t wasm_code_bytes = 0;   // the code section's function bodies
  std::size_t entry_bytes = 0;       // what was written
  double cpu_seconds = 0;            // CPU time of the compiling threads, IR to objects
  double wall_seconds = 0;           // wall time, IR to objects
  unsigned threads = 0;              // threads that compiled
  std::uint64_t peak_heap_growth = 0;  // the most the heap grew by while compiling (at a check)
};
// How an ahead-of-time compile (precompile, `sprawl compile`) may spend time, memory and cores.
// Past a limit the compile stops between two functions (a function in flight finishes; the compile
// budget bounds what one function costs), returns an error naming the limit and the function, and
// writes nothing.
struct CompileOptions {
  // Wall time from the start of the compile (zero: none). Unset: 10 minutes plus 2 minutes per MB
  // of wasm code, about half of what one core compiles (docs/compiled-tier.md, "Ahead of time").
  std::optional<std::chrono::nanoseconds> time_limit;
  // Bytes the process's heap may grow by while compiling (zero: none; malloc's bytes in use, all threads:
  // LLVM's IR, its code generation and the objects made so far, and the module's internal code).
  std::uint64_t memory_limit = std::uint64_t{4} << 30;
  // Threads compiling partitions of the module at once (0: the cores this process may use). The
  // machine code is the same whatever the count.
  unsigned jobs = 0;
  // Called after each partition of functions is compiled, with the functions compiled (or left
  // interpreted) so far and the module's total, from whichever thread compiled it (one call at a
  // time).
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Compiles every function of `module` (variant: metered or not) to machine code ahead of time and
// writes it to `cache`, where stores on Tier::Compile or Tier::Auto with that cache find it. The
// error says what failed (no compiled tier in this build, LLVM, a limit of `options`, the storage).
[[nodiscard]] std::expected<PrecompileReport, std::string> precompile(const CompiledModule& module, bool metered,
                                                                      CodeCacheStorage& cache,
                                                                      const CompileOptions& options = {});

struct InstantiationError {
  enum class Kind : std::uint8_t {
    Link,  // "incompatible import type", too few imports, memory/table minimum above the limits
    Trap,  // segment initialisation or the start function trapped (Trap in `trap`)
  };
  Kind kind = Kind::Link;
  std::string message;
  std::optional<Trap> trap;
};

// Keeps the value stacks and linear-memory reservations of destroyed Stores for reuse by later
// ones (memories are zeroed before reuse), so that a short job pays no mmap/munmap and no fresh
// page faults. Optional; thread-safe; share one among the Stores of many jobs and threads.
class ResourcePool {
 public:
  // At most `max_cached` stacks and `max_cached` memory reservations are kept.
  explicit ResourcePool(std::size_t max_cached = 64);
  ~ResourcePool();
  ResourcePool(const ResourcePool&) = delete;
  ResourcePool& operator=(const ResourcePool&) = delete;

  struct Impl;
  [[nodiscard]] Impl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

class Store {
 public:
  explicit Store(StoreLimits limits = {}, std::shared_ptr<ResourcePool> pool = nullptr);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  FuncInst* add_host_function(const FuncType& type, HostFn fn, void* context, std::string debug_name);
  GlobalInst* add_global(GlobalType type, Value init);
  TableInst* add_table(TableType type, Value init);
  MemoryInst* add_memory(MemoryType type);

  // `imports` holds one Extern per module import, in import order (Linker::resolve builds it).
  // Type-checks them ("incompatible import type"), allocates, initialises segments and runs
  // the start function under the current budget.
  // [snapshots] With `from` (a snapshot of `module`, snapshot.hpp), memories, globals, tables and
  // dropped segments are restored from it instead (memory copy-on-write) and neither segments
  // nor the start function run again.
  [[nodiscard]] std::expected<Instance*, InstantiationError> instantiate(std::shared_ptr<const CompiledModule> module,
                                                                         std::span<const Extern> imports,
                                                                         const InstanceSnapshot* from = nullptr);

  // Calls a function (wasm or host). Arguments are type-checked by the caller's contract.
  [[nodiscard]] std::expected<std::vector<Value>, Trap> invoke(FuncInst* func, std::span<const Value> args);

  // Sets the budget for everything that runs after it and resets the consumed counter.
  void set_budget(ExecutionBudget budget);
  // Charges host work done for the guest (a host function calls it): false, with nothing
  // charged and the budget marked spent, when fewer than `units` are left. Always true when no
  // fuel budget is set.
  [[nodiscard]] bool charge_fuel(std::uint64_t units) noexcept;
  // Fuel consumed since set_budget: exact after a normal finish (sum of the costs of what ran).
  [[nodiscard]] std::uint64_t fuel_consumed() const noexcept;
  [[nodiscard]] const StoreLimits& limits() const noexcept;
  // Bytes charged to the account (StoreLimits::max_store_bytes) so far; nothing is given back
  // before the store dies, so this is also the peak.
  [[nodiscard]] std::uint64_t store_bytes() const noexcept;
  // The tier for what runs after it; false (and nothing changed) when the build lacks it
  // (Tier::Compile only: Tier::Auto then means the interpreter). Tier::Compile loads the compiler
  // plugin to check it is there, unless `code_ready`: the caller made sure (cached_code_ready)
  // that the only module this store runs, in the variant it runs, has its machine code already,
  // so nothing is left to compile.
  [[nodiscard]] bool set_tier(Tier tier, bool code_ready = false) noexcept;
  // Where Tier::Compile and Tier::Auto look for machine code made ahead of time (none: nowhere).
  // A module's code is looked up once per variant and process: the first store to need it decides.
  void set_code_cache(std::shared_ptr<CodeCacheStorage> cache) noexcept;
  // [snapshot code] Instances made after this call resolve each function's code on its first call
  // in this store even when it is translated already (by default such functions start resolved),
  // so that capture_snapshot can tell which functions ran here: those whose code the snapshot
  // file carries (the sandbox's initialisation store does this).
  void track_first_calls() noexcept;
  // Tier::Auto when the module's code is not cached: whether hot functions are compiled on a
  // background thread and entered from their next call (default on; the same results, traps and
  // fuel either way). Off: Auto without cached code is the interpreter exactly. Set it before
  // instantiating.
  void set_tier_up(bool on) noexcept;
  // Tier::Compile: how far the process's heap may grow while this store's runs compile a module
  // on first use (each function at its first call), counted from the start of that
  // module's compile and checked before each function with its expected cost; a function that
  // would pass it stays interpreted, for later stores too (the same results, traps and fuel).
  // 0: no limit. Default kDefaultCompileMemory. (Ahead-of-time compiles have their own limit:
  // CompileOptions::memory_limit; tier-up a process-wide one.)
  void set_compile_memory(std::uint64_t bytes) noexcept;

  // Garbage collection: what the bits of a reference in the any hierarchy (anyref, eqref, a
  // struct or array type, …) name in this store (docs/interpreter.md, "Garbage collection"):
  // Host is a host reference brought in by any.convert_extern; Dangling an object freed since
  // (its root released: see RootScope); Exception the bits of an exnref (exception objects live in
  // the same heap).
  enum class AnyRef : std::uint8_t { Null, I31, Struct, Array, Host, Dangling, Exception };
  [[nodiscard]] AnyRef any_ref_kind(std::uint64_t bits) noexcept;

  // References the host holds are roots of the store's collectors (GC objects, exceptions): every
  // reference outside the func hierarchy that invoke returns (anyref, externref — which may wrap
  // an object —, exnref, …), and every one passed to root(). They stay roots, in a last-in
  // first-out list, until the innermost RootScope open when they were rooted closes, or until the
  // store dies: a host calling in a loop without a scope keeps every reference it got (as
  // Wasmtime's Rooted does). A host function keeping an argument past its return roots it.
  void root(std::uint64_t bits);
  [[nodiscard]] std::size_t host_roots() const noexcept;
  class RootScope {
   public:
    explicit RootScope(Store& store) noexcept;
    ~RootScope();
    RootScope(const RootScope&) = delete;
    RootScope& operator=(const RootScope&) = delete;

   private:
    Store& store_;
    std::size_t mark_;
  };

  struct Impl;
  [[nodiscard]] Impl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sprawling::wasm
