// WasmSandbox: the engine at the seam — runs wasip1 command modules with our own engine and
// WASI host, under a fuel budget, a memory cap, a deadline and output caps.
#pragma once

#include <sprawling/runtime/sandbox.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace sprawling::runtime {

// Which tier runs the guest's functions (all give the same results, traps and fuel).
// Interpret: the interpreter alone, no compilation (instant start). Compile: machine code for
// every function the compiled tier supports, from the code cache (code_cache_dir) when it holds
// the module, else compiled by LLVM as each function is first called; the rest interpreted. Only
// in builds with the compiled tier (wasm_sandbox_has_compiled_tier()), otherwise run() fails with
// E_TOOL_UNAVAILABLE. Auto: machine code from the code cache when it holds the module (filled by
// precompile_module, `sprawl compile`), else the interpreter, with the functions it finds hot
// compiled on a background thread and run as machine code from their next call (tier_up); the
// interpreter in builds without the tier.
enum class ExecutionTier : std::uint8_t { Interpret, Compile, Auto };
[[nodiscard]] bool wasm_sandbox_has_compiled_tier() noexcept;
// Ends SandboxConfig::tier_up's background compilation for the rest of the process: drops what is
// queued and waits for the one function being compiled (cancelled at its next phase). Call it
// before the process exits (returning from main included) when jobs ran with tier_up: LLVM's
// statics are destroyed at exit and must not be in use then. Jobs may still run after it, with
// the machine code compiled so far. A no-op in builds without the compiled tier.
void wasm_sandbox_stop_tier_up() noexcept;
// Whether that background compilation is running or has work queued: a process about to exit may
// then flush its output and _exit rather than wait in wasm_sandbox_stop_tier_up (the CLI does).
[[nodiscard]] bool wasm_sandbox_tier_up_busy() noexcept;
// Before such an _exit: notes in the code cache's hot set each function the background
// compilation was compiling or had queued, so the next process of the module compiles it early
// in its run instead of only when it turns hot again (a function that turns hot as jobs end
// would otherwise be compiled by every process and kept by none). Cheap; no-op when idle.
void wasm_sandbox_tier_up_keep_unfinished() noexcept;

struct SandboxConfig {
  // Cap on each linear memory; memory.grow past it returns -1. Default: wasm32's 4 GiB.
  std::uint64_t max_memory_bytes = std::uint64_t{4} << 30;
  // Cap on each table's elements (Wasmtime's max-table-elements); table.grow past it returns -1
  // and a larger declared minimum refuses instantiation.
  std::uint32_t max_table_elements = 10'000'000;
  // Tables and memories the module may define (Wasmtime's max-tables / max-memories; a job has
  // exactly one instance). Past one, instantiation fails naming the limit.
  std::uint32_t max_tables = 100;
  std::uint32_t max_memories = 100;
  // One account of everything the guest makes the host allocate: linear memories (current size),
  // tables (8 bytes per element), functions, globals, element segments as materialised
  // references, data segment records and the module's compiled code (counted twice when fuel is
  // metered: two variants). Instantiation past it fails; memory.grow / table.grow return -1.
  // Empty: max_memory_bytes + 256 MiB.
  std::optional<std::uint64_t> max_store_bytes{};
  // Wall-clock limit of one run, compilation included; hit → Trap{"deadline exceeded"}. Empty: none.
  std::optional<std::chrono::nanoseconds> timeout{};
  // Caps on captured output; past one the guest's write fails with EIO and stats say so.
  std::uint64_t max_stdout_bytes = std::uint64_t{64} << 20;
  std::uint64_t max_stderr_bytes = std::uint64_t{64} << 20;
  // When false, fuel is not metered at all (Fuel in the job is ignored): for benchmarks only.
  bool meter_fuel = true;
  // Streaming: when set, output is also handed over as the guest writes it (the CLI uses this).
  std::function<void(std::span<const std::uint8_t>)> stdout_sink{};
  std::function<void(std::span<const std::uint8_t>)> stderr_sink{};
  // Reproducible runs: fixed clocks, seeded randomness, and NaN canonicalization (below) on.
  bool deterministic = false;
  std::uint64_t random_seed = 0;
  // What one WASI call may take from guest memory (Wasmtime's "hostcall fuel", same default):
  // iovec arrays, written buffers, paths, poll subscriptions, random_get's buffer; past it the
  // call fails with ENOMEM. Bounds the host work a single `call` can cost.
  std::uint64_t hostcall_copy_limit = std::uint64_t{128} << 20;
  // Write quota of the job on its writable mounts: bytes written to files plus the size of every
  // hole a write past the end or a size increase adds (a sparse extension counts as its size).
  // A write or resize that would pass it fails with EDQUOT; stats.disk_write_bytes says how
  // much was charged. Default 1 GiB.
  std::uint64_t max_disk_write_bytes = std::uint64_t{1} << 30;
  // [snapshots] A folder (created 0700 when missing) where snapshots of initialised instances are
  // also kept between processes, checksummed; a corrupt or foreign file is rebuilt. Empty: the
  // in-memory cache only.
  std::filesystem::path snapshot_dir{};
  ExecutionTier tier = ExecutionTier::Auto;
  // ExecutionTier::Auto when the code cache does not hold the module: compile the functions the
  // interpreter finds hot (calls counted per function, for the module across jobs of this
  // process) on one background thread, and enter their machine code from their next call. The
  // job never waits for it; results, traps and fuel are the same either way. false: the
  // interpreter alone (no LLVM work in the process). Off by default in the library: a process
  // that turns it on must call wasm_sandbox_stop_tier_up() before it exits (a compilation still
  // running while exit destroys LLVM's statics crashes). The sprawl CLI turns it on (its auto).
  bool tier_up = false;
  // The compiled-code cache (docs/compiled-tier.md, "Code cache"): a folder (created 0700 when
  // missing; not used when another user owns it or others may write it) of machine code per
  // module, engine build, LLVM version, CPU features and fuel mode, checked on every read (a
  // corrupt, truncated or foreign entry is ignored). Empty: no cache.
  std::filesystem::path code_cache_dir{};
  // Its size bound: past it, writing an entry removes the least recently used ones (down to 70%).
  std::uint64_t code_cache_max_bytes = std::uint64_t{1} << 30;
  // ExecutionTier::Compile, when the module is compiled on first use (not from the code cache):
  // how far the process's heap may grow while it is (each function compiled at its first call),
  // counted from the start of that module's compile and checked before each function with
  // what compiling it is expected to take. A function that would pass it stays interpreted (also
  // for later jobs of the process: the code is the module's), with the same results, traps and
  // fuel; SPRAWLING_JIT_STATS=1 lists it. 0: no limit. Default 1 GiB (room for the costliest
  // function the compile budget admits; CPython's compile grows the heap by less than 256 MiB).
  std::uint64_t compile_memory_bytes = std::uint64_t{1} << 30;
  // Fixed-width SIMD (v128 and its 236 instructions; Wasmtime's -W simd). When false a module
  // that uses any of it is refused before it runs, naming its first use.
  bool simd = true;
  // WebAssembly 3.0 features beyond 2.0, on by default as in Wasmtime; a module using one that is
  // off is refused (an invalid-module error naming the feature). Wasmtime's -W tail-call=n and
  // -W extended-const=n. extended_const also covers a constant expression's global.get of a
  // defined (not imported) global.
  bool tail_call = true;       // return_call, return_call_indirect
  bool exceptions = true;      // exception handling: tags, exnref, throw, throw_ref, try_table (and the
                               // legacy try/catch/rethrow/delegate); Wasmtime's -W exceptions=n
  bool function_references = true;  // typed function references: (ref null? $t), call_ref,
                                    // return_call_ref, ref.as_non_null, br_on_null/br_on_non_null,
                                    // non-nullable locals; Wasmtime's -W function-references=n
  bool gc = true;  // garbage collection: rec/sub/struct/array types, GC heap types, i31, casts,
                   // struct and array objects (needs function_references); Wasmtime's -W gc=n
  bool extended_const = true;  // i32/i64 add, sub, mul in constant expressions
  bool relaxed_simd = true;    // the 20 relaxed SIMD instructions (-W relaxed-simd=n), one
                               // deterministic result each (docs/interpreter.md)
  // Wasmtime's -W multi-memory=n and -W memory64=n (both on by default in its 3.0 releases).
  // A memory64 memory is still capped by max_memory_bytes (memory.grow past it returns -1).
  bool multi_memory = true;  // more than one memory, memory indices in instructions
  bool memory64 = true;      // memories with i64 addresses, 64-bit tables (table64; capped by
                             // max_table_elements as any table)
  // Every float operation that may make a NaN makes the canonical quiet NaN, not one whose sign
  // and payload depend on the CPU (Wasmtime's -W nan-canonicalization): the same bits on every
  // machine and both tiers. Implied by `deterministic`. The module's code is made for it (its own
  // entries in the module and code caches and in snapshots).
  bool nan_canonicalization = false;
  // A process that ends right after its job (the `sprawl` CLI): the job's Store (its instance,
  // linear memory, functions) and WASI context are left for the operating system to reclaim at
  // exit instead of being torn down one object and one mapping at a time. Memory stays in use
  // until the process exits: never for a process that runs further jobs.
  bool process_exits_after_run = false;
};

// What precompile_module wrote, per fuel mode.
struct PrecompiledEntry {
  bool metered = false;              // the variant with fuel metering (SandboxConfig::meter_fuel)
  std::filesystem::path file;        // the entry written
  std::size_t functions = 0;         // defined functions
  std::size_t compiled = 0;          // of which have machine code
  std::size_t wasm_code_bytes = 0;   // the function bodies' bytes
  std::size_t entry_bytes = 0;
  double cpu_seconds = 0;            // compiling, every compiling thread
  double wall_seconds = 0;           // compiling
  unsigned threads = 0;              // threads that compiled
  std::uint64_t peak_heap_growth = 0;  // the most the heap grew by while compiling (at a check)
};
// How precompile_module may spend time, memory and cores. Past a limit the compile stops between
// two functions with E_SANDBOX_HOST naming the limit and the function, and writes no entry.
struct PrecompileOptions {
  // Wall time of one variant's compile (zero: none). Unset: 10 minutes plus 2 minutes per MB of
  // wasm code, about half of what one core compiles (docs/compiled-tier.md, "Ahead of time").
  std::optional<std::chrono::nanoseconds> time_limit;
  // Bytes the process's heap may grow by while compiling one variant (zero: none): 4 GiB.
  std::uint64_t memory_limit = std::uint64_t{4} << 30;
  // Compiling threads (0: the cores this process may run on); the machine code is the same.
  unsigned jobs = 0;
  // Called as partitions of functions finish: functions done so far, the module's total.
  std::function<void(std::size_t done, std::size_t total)> progress;
};
// Compiles the whole module `wasm` ahead of time into config.code_cache_dir (`sprawl compile`),
// for the metered variant, the unmetered one, or both; later runs with ExecutionTier::Auto or
// Compile start on that machine code. Errors: the module (E_INVALID_MODULE), no compiled tier
// (E_TOOL_UNAVAILABLE), no cache folder (E_INVALID_JOB), a failed write or a limit of `options`
// reached (E_SANDBOX_HOST).
[[nodiscard]] std::expected<std::vector<PrecompiledEntry>, AxError> precompile_module(
    const std::filesystem::path& wasm, const SandboxConfig& config, bool metered, bool unmetered,
    const PrecompileOptions& options = {});

class WasmSandbox final : public Sandbox {
 public:
  explicit WasmSandbox(SandboxConfig config = {});
  ~WasmSandbox() override;
  WasmSandbox(const WasmSandbox&) = delete;
  WasmSandbox& operator=(const WasmSandbox&) = delete;

  std::expected<SandboxOutcome, AxError> run(const SandboxJob& job) override;

  [[nodiscard]] const SandboxConfig& config() const noexcept { return config_; }

 private:
  SandboxConfig config_;
};

}  // namespace sprawling::runtime
