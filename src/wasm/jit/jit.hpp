// The compiled tier: LLVM machine code generated from the internal code (code.hpp), one native
// function per wasm function, run with the interpreter's frames, fuel, traps and limits.
// Private to the engine; built only with SPRAWLING_WITH_JIT (docs/compiled-tier.md). The LLVM
// side lives in a plugin loaded on first need (entry_points.def, loader.cpp).
#pragma once

#include "wasm/runtime/store_impl.hpp"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// The sanitizer runtime's count of the bytes its allocator has handed out (GCC ships no header
// declaring it).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace sprawling::wasm::jit {

// What compiled code and its runtime helpers share. Compiled code reads and writes these fields
// at fixed offsets (the compiler takes them with offsetof), so it stays standard-layout.
struct Ctx {
  std::int64_t fuel = 0;   // the interpreter's counter, current at calls, exits and traps
  char* fr = nullptr;      // the frame-record top (Frame*): counts the call depth
  char* fr_end = nullptr;  // frames + max_call_depth
  // Below this record top, a direct call between bodies of whole-module code skips its native
  // stack, call depth and value-stack tests: the runtime sets it wherever machine code starts
  // running (segment_limit) so that every deeper activation up to it has room for its frame on
  // both stacks, from the code's bounds (ModuleCode::segment_slots and segment_bytes).
  char* fr_lim = nullptr;
  std::uint64_t* stack_end = nullptr;
  std::uint8_t** mem_base = nullptr;  // &memory0->base: reloaded after calls and memory.grow
  std::uint64_t* mem_size = nullptr;  // &memory0->size
  GlobalInst** globals = nullptr;
  FuncInst** funcs = nullptr;
  TableInst* const* tables = nullptr;       // the instance's tables (call_indirect's inline path)
  const FuncType* const* types = nullptr;   // typeidx -> canonical FuncType (its type check)
  char* native_limit = nullptr;  // below it, calls go through the interpreter (no native recursion)
  InstanceImpl* inst = nullptr;
  Store::Impl* store = nullptr;
  ExecOutcome* out = nullptr;
  bool metered = false;
  // Where a trap happened: compiled code stores its function and word, helpers the ip.
  FuncInst* loc_fn = nullptr;
  const std::uint32_t* loc_ip = nullptr;
  std::uint32_t loc_word = 0;
  // On-stack replacement (Slot::osr): 1 + the word of the loop header where the entry continues
  // an interpreted activation, its slots read from the frame; 0 for a call. The entry clears it.
  std::uint32_t osr_at = 0;
  // The instance's memories: machine code reads a memory other than an i32 memory 0 through its
  // MemoryInst (base once per activation, size again after calls and memory.grow).
  MemoryInst* const* memories = nullptr;
  // A tail call machine code does not make itself (kTailPending): the callee, whose entry is made
  // in the returning function's frame (arguments moved to slot 0, locals zeroed, entry charged).
  FuncInst* tail_callee = nullptr;
  // The store's GC handle table (GcHeap::HandleTable): struct and array accesses resolve a handle
  // inline, as GcHeap::get does.
  const GcHeap::HandleTable* gc_handles = nullptr;
  // The heap's free lists, bump pointers, free slots and counts (GcHeap::Inline): struct and
  // array allocations take a block and a slot inline.
  GcHeap::Inline* gc_inline = nullptr;
};

// A helper's status: 0, a TrapKind to be located at the calling instruction, or a TrapKind with
// this bit when the trap is located already (inside a callee).
inline constexpr std::uint32_t kLocated = 0x100;
// A compiled function's status (never a helper's trap): it tail-called Ctx::tail_callee, which
// has not run; whoever called the function runs that callee in the same frame (fp) and takes its
// status as the function's. So a chain of tail calls between tiers never nests native frames.
inline constexpr std::uint32_t kTailPending = 0x200;

// The limits of the job whose thread compiles (Tier::Compile: the module's IR modules and lazy
// stubs, set up when a store first needs them, and each function, whose IR is made and compiled
// at its first call). Store::call sets them around every run on that tier (set_job_limits).
//
// The deadline (time_point::max() without one): compiling checks it between functions and
// records in `passed` that it ran past it, and the run then ends with DeadlineExceeded; so does
// a run that compiled something (`compiled`) and returns past its deadline.
//
// The compile memory (`compile_memory` bytes, 0: none; -W compile-memory): how far the process's
// heap may grow since the module's compile began (ModuleCode::heap_base, as heap_bytes_in_use
// counts it), checked before each function's IR is made at its first call, with that
// function's expected cost added (kIrBytesPerCodeByte and kCompileBytesPerCodeByte). A function that would pass it stays interpreted (for every later
// job too: the code is the module's), with a reason naming the limit; results, traps and fuel
// are the interpreter's.
struct JobLimits {
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::time_point::max();
  std::uint64_t compile_memory = 0;
  bool passed = false;
  bool compiled = false;
  // The innermost machine code running for the run (jit::enter), whose counter a compilation
  // past the deadline hands back to the store's reserve: its next fuel check then refuels,
  // which finds the deadline past (DeadlineExceeded), with the fuel consumed exact.
  Ctx* ctx = nullptr;
  [[nodiscard]] bool overrun() const {
    return passed || (compiled && std::chrono::steady_clock::now() >= at);
  }
};

// What compiling a function on the lazy path is expected to take of the heap, per wasm code byte:
// its IR (measured: about 100 bytes for straight-line code, 370 for CPython's), and the
// compilation's own peak beyond it (straight-line metered code, the costliest per byte the
// compile budget admits: about 180 bytes). Rounded up: the compile memory limit's check adds
// them to the heap's growth so far, so a compile stays within its limit instead of passing it
// by a function.
inline constexpr std::uint64_t kIrBytesPerCodeByte = 384;
inline constexpr std::uint64_t kCompileBytesPerCodeByte = 256;

// The bytes malloc has handed out and not had back, every thread's (mallinfo2: arenas and
// mmapped chunks). LLVM allocates through malloc (operator new), so growth across a compile is
// what it holds; freed memory that stays resident in malloc's pools does not count, as it would
// in the resident set. It walks malloc's free lists: a call costs microseconds, more with a
// fragmented heap, so compiling measures it between functions, not per allocation.
// Under AddressSanitizer or ThreadSanitizer the sanitizer's allocator replaces malloc's, which
// mallinfo2 would report as empty: the sanitizer's own count stands in for it there.
inline std::uint64_t heap_bytes_in_use() noexcept {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 mi = ::mallinfo2();
  return static_cast<std::uint64_t>(mi.uordblks) + static_cast<std::uint64_t>(mi.hblkhd);
#endif
}

// The compiled code of one module variant (metered or not): an entry per defined function,
// null where the function stays interpreted. Entries are published once, read with acquire.
class ModuleCode {
 public:
  struct Impl;
  // Defined here, not in the plugin: the engine makes and destroys these too (the LLVM state in
  // `impl` goes through the deleter the plugin gave its shared_ptr).
  explicit ModuleCode(std::size_t functions) : entries(functions), reasons(functions) {
    for (Slot& slot : entries) slot.code = this;
  }
  ~ModuleCode() { print_stats(); }
  ModuleCode(const ModuleCode&) = delete;
  ModuleCode& operator=(const ModuleCode&) = delete;

  std::vector<Slot> entries;
  std::size_t compiled = 0;          // functions with an entry (a stub until their first call)
  // Whole-module code (compile_object, the code cache): what one call deeper takes at most of
  // the value stack (slots: the largest base of a call plus the largest frame) and of the native
  // stack (bytes: an entry's and a body's frames with their return addresses), read from the
  // objects when they are linked. 0: not known, and every call of this code makes its own tests.
  std::uint64_t segment_slots = 0;
  std::uint64_t segment_bytes = 0;
  // Whole-module code: per defined function, its exported register-argument entry point
  // (`wasm_r<d>`: the body of a function the module calls directly or through a reference, or an
  // adapter to the entry of a referenced function whose code has tail calls); null where it has
  // none. Empty for other code. FuncInst::body holds it once the function is resolved.
  std::vector<void*> bodies;
  // Tier-up (tier_up_code): every entry starts null and the interpreter counts calls; a function
  // whose count runs out is compiled on the tier-up thread and its entry published there. The
  // fields below that the thread writes (compiled, reasons, the seconds) are read only once it is
  // idle (tier_up_wait_idle) or the code is gone.
  bool tier_up = false;
  bool metered = false;               // the variant (tier-up code compiles it function by function)
  std::size_t tier_up_requested = 0;  // functions queued for compilation
  std::size_t tier_up_too_large = 0;  // of which stayed interpreted for their size
  // The hot set: the code cache tier-up keeps each function it compiles in, and links what an
  // earlier process kept from on its first request (tiering.cpp); null without a cache. Only
  // the tier-up thread touches these, as it does `compiled`.
  std::shared_ptr<CodeCacheStorage> hot_cache;
  bool hot_set_loaded = false;
  std::size_t from_hot_set = 0;  // functions whose code came from the hot set
  // Per defined function: its entry is quick code (TierUpObject::quick), which tier-up replaces
  // with optimized code once the process has run long enough (tiering.cpp, upgrades); and how
  // many it replaced so.
  std::vector<std::uint8_t> quick;
  std::size_t upgraded = 0;
  std::string error;                 // LLVM's message when the module could not be compiled at all
  bool stopped_at_deadline = false;  // emitting the IR stopped at the job's deadline (not kept)
  // The lazy path's compile memory (JobLimits::compile_memory): the heap when its compile began,
  // and the functions it left interpreted for the limit (their reasons say so).
  std::uint64_t heap_base = 0;
  std::size_t over_memory = 0;
  std::vector<std::string> reasons;  // per defined function: why it stays interpreted ("" if compiled)
  // Compile cost: the wasm code bytes, seconds emitting IR for every function and setting up the
  // stubs, then (functions compile lazily, on their first call) how many were compiled and the
  // seconds their optimization took. SPRAWLING_JIT_STATS=1 prints them when the code goes away.
  std::size_t code_bytes = 0;
  double seconds_ir = 0;
  double seconds_codegen = 0;
  double seconds_opt = 0;
  std::size_t materialized = 0;
  std::size_t materialized_bytes = 0;  // their wasm code bytes
  bool from_cache = false;             // loaded from the code cache (seconds_codegen: the linking)
  bool checksum_skipped = false;       // and verified before under the same identity (stamps)
  std::string cache_miss;              // why the code cache gave nothing, when it was asked
  std::shared_ptr<Impl> impl;          // the JIT that owns the machine code (made in the plugin)
  // Or the mappings that hold it, linked by the engine (object_linker.hpp): whole-module code
  // from the cache, or tier-up's hot set.
  std::vector<std::shared_ptr<void>> linked;
  std::size_t linked_bytes = 0;  // their size (tier-up's memory cap counts the hot set's)

  // Whole-module code's frame bounds from what its objects say (the largest value-stack frame in
  // slots, the largest native frame in bytes): one call deeper takes at most a call's base within
  // its caller's frame and the callee's frame, each at most the largest frame; and an entry and
  // its body, each with its return address and, to spare, more callee-saved registers than
  // x86-64 has, should a frame size leave them out. Unset unless both are known and sane.
  void set_frame_bounds(bool known, std::uint64_t slots, std::uint64_t native) {
    constexpr std::uint64_t kFrameExtra = 8 + 16 * 8;
    if (known && slots < (std::uint64_t{1} << 32) && native < (std::uint64_t{1} << 32)) {
      segment_slots = 2 * slots;
      segment_bytes = 2 * (native + kFrameExtra);
    }
  }

 private:
  // SPRAWLING_JIT_STATS=1: where the code came from and what it cost.
  void print_stats() const {
    if (std::getenv("SPRAWLING_JIT_STATS") == nullptr) return;
    if (tier_up) {
      // Nothing to say when nothing turned hot (a short job): tier-up did no LLVM work.
      if (tier_up_requested == 0) return;
      std::fprintf(stderr,
                   "sprawl jit: tier-up: %zu of %zu functions hot, %zu compiled (%zu wasm code bytes), %zu too large; "
                   "%zu linked from the hot set, %zu upgraded; IR %.3f s, optimizing %.3f s, code generation %.3f s%s%s\n",
                   tier_up_requested, entries.size(), compiled, materialized_bytes, tier_up_too_large, from_hot_set,
                   upgraded, seconds_ir, seconds_opt, seconds_codegen, error.empty() ? "" : "; error: ", error.c_str());
      print_over_budget(reasons);
      return;
    }
    if ((impl == nullptr && linked.empty()) || !error.empty()) return;
    if (from_cache) {
      std::fprintf(stderr, "sprawl jit: %zu of %zu functions loaded from the code cache; linking %.3f s (%s)\n", compiled,
                   entries.size(), seconds_codegen,
                   linked.empty() ? "by LLVM's JITLink" : checksum_skipped ? "by the engine, verified before" : "by the engine");
    } else {
      std::fprintf(stderr,
                   "sprawl jit: %zu of %zu functions compilable, %zu compiled on first call (%zu of %zu wasm code "
                   "bytes), %zu left interpreted by the compile memory limit; IR %.3f s, optimizing %.3f s; heap "
                   "growth since the compile began %.1f MiB\n",
                   compiled, entries.size(), materialized, materialized_bytes, code_bytes, over_memory, seconds_ir,
                   seconds_opt, static_cast<double>(std::max(heap_bytes_in_use(), heap_base) - heap_base) / 1048576.0);
    }
    print_over_budget(reasons);
  }

 public:
  // SPRAWLING_JIT_STATS: each function the compile budget keeps interpreted, with its reason
  // (scan.cpp, CompileBudget), and the first past the lazy path's module budget (the others say
  // only "module budget"); SPRAWLING_JIT_STATS=2: each function that stays interpreted,
  // whatever the reason (tests check that none of a script's functions falls back for a given
  // one). Also for the whole-module path (compile_object).
  static void print_over_budget(const std::vector<std::string>& why) {
    const char* stats = std::getenv("SPRAWLING_JIT_STATS");
    const bool every = stats != nullptr && std::string_view(stats) == "2";
    for (std::size_t i = 0; i < why.size(); ++i) {
      const bool budget = why[i].find("over the compile budget") != std::string::npos ||
                          why[i].starts_with("past the lazy compile's module budget") ||
                          why[i].starts_with("past the compile memory limit of");
      if (why[i].empty() || (!every && !budget)) continue;
      std::fprintf(stderr, "sprawl jit: defined function %zu stays interpreted: %s\n", i, why[i].c_str());
    }
  }
};

// ---- tier-up (tiering.cpp, engine side; docs/compiled-tier.md "Tier-up"): functions start
// interpreted; the interpreter counts calls and loop samples per function, and one a count marks
// hot is compiled on a background thread (one per process, bounded queue) and entered at its next
// call. Results, traps and fuel are the same whichever tier runs a call, so nothing depends on
// when it finishes. The thread loads the compiler plugin on its first job (compile_function,
// entry_points.def), so a process whose functions never turn hot never loads LLVM.

// What one loop sample (1024 backward branches in the interpreter, L_loop_sample) counts for, in
// calls. A call of a small function is some 20-100 internal instructions, an iteration of a loop
// some 5-20, so 1024 iterations are worth about a hundred calls: at 128, a function entered
// rarely but looping long (CPython's builtin sum over a generator, 50,000 items a call) turns hot
// after about 160,000 iterations instead of 20 million (at 1 a sample, it never did there), and
// is machine code from its next call on.
inline constexpr std::int32_t kLoopSampleCalls = 128;
// The code of a module variant whose functions are compiled when hot: every entry null, every
// countdown at the threshold (size-scaled without a hot set: tiering.cpp). `hot_cache`: the code
// cache its hot set lives in, or null. No LLVM work happens here (the thread sets LLVM up on its
// first job).
std::shared_ptr<ModuleCode> tier_up_code(const CompiledModule::Impl& module, bool metered,
                                         std::shared_ptr<CodeCacheStorage> hot_cache = nullptr);
// The interpreter's cold path when the countdown of `f`'s slot in `variant` ran out: queues f for
// compilation if its code tiers up (once; again later if the queue was full).
void tier_up_hot(FuncInst& f, int variant);
// Waits until the tier-up thread has no job queued or running, at most `timeout_ms`; true when
// idle. For tests and measurements: compiled code is never waited for otherwise.
bool tier_up_wait_idle(unsigned timeout_ms);
// For tests and measurements: the interpreted calls after which a function is compiled, for code
// made after this (replaces SPRAWLING_JIT_TIER_UP_CALLS; at least 1).
void tier_up_set_calls(std::int32_t calls);
// Threads that may compile at once, for jobs queued after this (replaces
// SPRAWLING_JIT_TIER_UP_THREADS; 1 to 256; default 1). Two jobs of one module variant never
// compile at once.
void tier_up_set_threads(unsigned threads);
// The heap tier-up's compiles may hold, process-wide (replaces SPRAWLING_JIT_TIER_UP_MEMORY;
// default 1 GiB): each compile is charged the heap's growth across it for as long as its code
// lives; a hot function found with the charges at or over the cap stays interpreted, its reason
// naming the cap.
void tier_up_set_memory_cap(std::uint64_t bytes);
// For tests and measurements: the most compiles that ran at once, the threads started so far,
// and the bytes charged to live code.
unsigned tier_up_peak_threads();
std::size_t tier_up_threads_started();
std::uint64_t tier_up_memory_held();
// Ends tier-up for the rest of the process: drops the queue, cancels the compilation in flight
// at its next phase and joins the thread (later requests are refused; what was published stays).
// Runs at exit too (atexit), but a process should call it before exit (wasm::stop_tier_up):
// LLVM destroys statics it made on first use at exit, possibly before that handler runs.
void tier_up_stop();
// Whether the tier-up thread has a job queued or running (a process about to exit may then
// leave without waiting for it, as the CLI does: wasm::tier_up_busy).
bool tier_up_busy();
// Before such an exit: each function of a code with a hot set that the thread is compiling or has
// queued is noted there as wanted (hot_set_want), so that the next process compiles it right
// after linking the hot set. Called while the thread may still run; it reads the jobs, not the
// compilation.
void tier_up_keep_unfinished();
// For tests and measurements: how long after quick code of a function is in use (compiled, or
// linked from the hot set) tier-up replaces it with optimized code, for upgrades registered after
// this (replaces SPRAWLING_JIT_TIER_UP_UPGRADE_MS); nullopt: the default, the expected compile
// time from the function's size, doubled for each earlier attempt the hot set records.
void tier_up_set_upgrade_delay(std::optional<std::chrono::milliseconds> delay);
// The delay before an upgrade of a function of `code_bytes` of wasm code that processes began
// `attempts` upgrades of before (the setting above, else its default).
std::chrono::steady_clock::duration tier_up_upgrade_delay(std::size_t code_bytes, std::uint32_t attempts);
// Wasm code bytes above which a hot function stays interpreted (LLVM's time grows faster than
// linearly with a function's size; SPRAWLING_JIT_TIER_UP_MAX_BYTES overrides, 0: no bound).
std::size_t tier_up_max_bytes();

// A whole module variant compiled ahead of time (compile_object): the code cache's payload.
// The functions are compiled in partitions (consecutive functions, a bounded amount of wasm code
// each, the same whatever the thread count), one object each; calls between partitions are linked
// when the objects are loaded.
struct ObjectImage {
  std::vector<std::string> reasons;  // per defined function: why it stays interpreted ("" if compiled)
  std::vector<std::vector<std::uint8_t>> objects;  // ELF relocatable objects, helpers referenced by name
  // What the compile cost (not in the payload): wall and CPU seconds (all its threads), the
  // threads, and the most the process's heap grew by at a check (CompileOptions::memory_limit).
  double wall_seconds = 0;
  double cpu_seconds = 0;
  unsigned threads = 0;
  std::uint64_t peak_heap_growth = 0;
};
using ObjectResult = std::expected<ObjectImage, std::string>;
// A function tier-up compiled, as the code cache's hot set keeps it: its relocatable object (it
// names no address of the process that made it) and its on-stack replacement header (Slot::osr).
// Empty when nothing was compiled. `quick`: compiled with the fast code generator (FastISel: a
// function too large for the optimizing one to pay back within a job), so an upgrade candidate;
// an upgrade's object is optimized and defines the function under its upgrade name
// (tier_up_symbol), so that it links beside the quick code it replaces.
struct TierUpObject {
  std::uint32_t osr = 0;
  std::vector<std::uint8_t> object;
  bool quick = false;
  bool upgraded = false;
};
// A function the hot set holds as quick code, and how many upgrades of it processes began (each
// doubles the delay before the next: jobs too short to finish one stop starting it).
struct QuickFunction {
  std::uint32_t defined = 0;
  std::uint32_t attempts = 0;
};
// The symbols whole-module objects define and the loaders look up: a defined function's entry
// (`wasm_f<d>`) and its register-argument body (`wasm_r<d>`, ModuleCode::bodies), and the section
// holding an object's largest value-stack frame (a u64: ModuleCode::segment_slots).
inline std::string entry_symbol(std::size_t defined) { return "wasm_f" + std::to_string(defined); }
inline std::string body_symbol(std::size_t defined) { return "wasm_r" + std::to_string(defined); }
inline constexpr const char* kFrameSlotsSection = ".sprawling.frame_slots";
// A tier-up object's function: its entry symbol, or for an upgrade a name of its own (it is
// linked beside the quick code it replaces, which activations may still run); and the symbol its
// code reads its callees' slots through (ModuleCode::entries of the code it is linked into).
inline std::string tier_up_symbol(std::size_t defined, bool upgraded) {
  return upgraded ? entry_symbol(defined) + "_upgraded" : entry_symbol(defined);
}
inline constexpr const char* kTierUpSlotsSymbol = "sprawling_tier_up_slots";
// An image as read from the code cache: the object stays in the entry's bytes (a 21 MB object
// for CPython: copying it twice cost more than linking it).
struct ObjectView {
  std::vector<std::string> reasons;
  std::vector<std::span<const std::uint8_t>> objects;
};

// The target machine code is generated for.
struct TargetId {
  std::string triple;
  std::string cpu;
  std::string features;
};
using TargetResult = std::expected<TargetId, std::string>;

// The entry points the plugin implements (entry_points.def has each one's contract). In the
// engine these forward to the plugin, loading it on first use: callers check plugin() first,
// a call without a loadable plugin is a bug and aborts naming why it did not load.
#define SPRAWLING_JIT_ENTRY(R, name, params, args) R name params;
#include "wasm/jit/entry_points.def"

// The plugin as this process found it (loaded on the first call; thread-safe). The engine's
// start path never calls this: only a store that compiles, or finds an entry in the code cache.
struct PluginStatus {
  bool loaded = false;
  std::string path;      // the file loaded, when loaded
  std::string build_id;  // its GNU build-id (hex): part of the code cache's key
  std::string error;     // when not loaded: every place looked at and why each failed
};
const PluginStatus& plugin();

// Runs compiled `entry` for `callee` whose frame is at nfp, after the caller made the entry
// protocol (stack and depth check, entry fuel, frame record pushed at fr - 1, locals zeroed).
struct Result {
  std::int64_t fuel;
  TrapKind trap;
  FuncInst* func;           // on trap: the innermost function
  const std::uint32_t* ip;  // and its instruction
  // Not null: the callee returned kTailPending; this function is to run at nfp, its entry made
  // (the interpreter continues there as after its own tail call's entry protocol).
  FuncInst* tail;
};
// `osr_at` (Slot::osr entries only): 1 + the loop header's word where the interpreted activation of
// `callee` at nfp continues as machine code (on-stack replacement); 0 for a call.
Result enter(Entry entry, Store::Impl& store, FuncInst* callee, std::uint64_t* nfp, Frame* fr, std::int64_t fuel,
             ExecOutcome& out, bool metered, std::uint32_t osr_at = 0);

// On-stack replacements made in this process so far (enter with osr_at != 0): for tests and
// measurements.
std::uint64_t osr_entries() noexcept;

// True while this thread has native stack to spare for compiled frames: compiled calls recurse
// natively, so below the margin calls run in the interpreter instead (same results and fuel).
char* native_stack_limit() noexcept;
[[nodiscard]] inline bool native_stack_ok() noexcept {
  return static_cast<char*>(__builtin_frame_address(0)) > native_stack_limit();
}

}  // namespace sprawling::wasm::jit
