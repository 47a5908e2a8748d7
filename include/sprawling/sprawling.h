/* The C API of sprawling-runtime (C11): run a wasip1 command module in the sandbox from C, or
 * from any language that calls C (the Python module `sprawling` is built on it). */
#ifndef SPRAWLING_SPRAWLING_H
#define SPRAWLING_SPRAWLING_H

/*
 * Overview
 *
 *   sprawling_config*  the limits of a sandbox (memory cap, deadline, output caps, fuel metering …),
 *                      set field by field: new limits arrive as new setters, never as a changed
 *                      struct, so programs built against an older header keep working.
 *   sprawling_sandbox* made from a config (the config is copied; free it whenever you like).
 *   sprawling_job*     the module (a path or its bytes), argv, env, stdin, mounts and fuel.
 *   sprawling_run()    runs a job in a sandbox and gives either a sprawling_outcome* (the guest ran:
 *                      success, failure, fuel exhausted or trap, its output and measurements) or a
 *                      sprawling_error* (the job could not run: a stable code such as
 *                      "E_SANDBOX_DENIED" and a message).
 *
 * Ownership: every handle returned through an out-parameter of a *_new or sprawling_run call is
 * owned by the caller and released with its own *_free function (each accepts NULL). Every
 * pointer the library returns from an accessor (strings, byte buffers) is owned by the handle it
 * came from and stays valid until that handle is freed; it is never to be freed by the caller.
 * Every pointer the caller passes in is only read during the call (strings and bytes are copied).
 *
 * Threads: the library has no global mutable state visible to callers (a module cache shared
 * inside the process is internally locked). Distinct handles may be used from distinct threads at
 * the same time. A sandbox may be shared between threads: its runs are then serialized (one job at
 * a time per sandbox, as the C++ seam requires); use one sandbox per thread to run in parallel.
 * A config or a job may be read by several threads at once (sprawling_sandbox_new, sprawling_run)
 * but must not be changed while another thread uses it.
 *
 * Strings: functions taking (const char* s, size_t len) accept SPRAWLING_NUL_TERMINATED as len to
 * mean strlen(s). Strings are passed to the guest byte for byte; the sandbox refuses a job whose
 * argv or env holds a NUL byte (E_INVALID_JOB), so those are reported, never silently cut.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SPRAWLING_API __attribute__((visibility("default")))
#else
#define SPRAWLING_API
#endif

/* The length that means "up to the terminating NUL". */
#define SPRAWLING_NUL_TERMINATED ((size_t)-1)

/* What every function returns. */
typedef enum sprawling_status {
  SPRAWLING_OK = 0,
  SPRAWLING_ERROR = 1,         /* sprawling_run only: the job did not run; see the sprawling_error */
  SPRAWLING_EINVAL = 2,        /* a required pointer was NULL, or a value is outside its range */
  SPRAWLING_ENOMEM = 3         /* an allocation failed; nothing was changed */
} sprawling_status;

/* How a guest that ran ended. */
typedef enum sprawling_exit_kind {
  SPRAWLING_EXIT_SUCCESS = 0,        /* _start returned, or proc_exit(0) */
  SPRAWLING_EXIT_FAILURE = 1,        /* proc_exit(code) with 0 < code < 126 */
  SPRAWLING_EXIT_FUEL_EXHAUSTED = 2, /* the job's fuel ran out: not an error, the guest was stopped */
  SPRAWLING_EXIT_TRAP = 3            /* a wasm trap, or the deadline (message "deadline exceeded") */
} sprawling_exit_kind;

/* Which tier runs the guest's functions; every tier gives the same results, traps and fuel.
 * New tiers get the next numbers (sprawling_tier_name says which ones this library knows). */
typedef enum sprawling_tier {
  SPRAWLING_TIER_INTERPRET = 0, /* the interpreter alone: no compilation, instant start */
  SPRAWLING_TIER_COMPILE = 1,   /* machine code: from the code cache when it holds the module, else LLVM
                                 * compiles each function the compiled tier supports on its first call;
                                 * only where sprawling_compiled_tier_available(), else every run ends
                                 * in E_TOOL_UNAVAILABLE */
  SPRAWLING_TIER_AUTO = 2       /* the default: machine code when the code cache (see
                                 * sprawling_config_set_code_cache_dir) holds the module, else the
                                 * interpreter, with tier-up when the config turns it on
                                 * (sprawling_config_set_tier_up; off by default, and then nothing
                                 * is compiled during a run) */
} sprawling_tier;

typedef struct sprawling_config sprawling_config;
typedef struct sprawling_sandbox sprawling_sandbox;
typedef struct sprawling_job sprawling_job;
typedef struct sprawling_outcome sprawling_outcome;
typedef struct sprawling_error sprawling_error;
typedef struct sprawling_cancel sprawling_cancel;

/* ---- library ------------------------------------------------------------------------------- */

/* The library's version, e.g. "0.1.0" (static storage). */
SPRAWLING_API const char* sprawling_version(void);
/* 1 when this build carries the engine; 0 when every run ends in E_TOOL_UNAVAILABLE. */
SPRAWLING_API int sprawling_engine_available(void);
/* "SPRAWLING_OK", "SPRAWLING_EINVAL" … (static storage; "SPRAWLING_UNKNOWN" for other values). */
SPRAWLING_API const char* sprawling_status_name(sprawling_status status);
/* "success", "failure", "fuel_exhausted", "trap" (static storage; "unknown" for other values). */
SPRAWLING_API const char* sprawling_exit_kind_name(sprawling_exit_kind kind);
/* "interpret", "compile" … (static storage); NULL for a value this library does not know, so
 * tiers can be listed by counting up from 0 until NULL. */
SPRAWLING_API const char* sprawling_tier_name(sprawling_tier tier);
/* 1 when this build carries the compiled tier (SPRAWLING_TIER_COMPILE can run); 0 otherwise. */
SPRAWLING_API int sprawling_compiled_tier_available(void);
/* Ends tier-up's background compilation (sprawling_config_set_tier_up) for the rest of the
 * process: drops the functions queued and waits for the one being compiled, which is cancelled at
 * its next phase. A process that ran any job with tier-up on must call it before it exits
 * (returning from main or calling exit()): exit destroys the compiler's (LLVM's) static state, and
 * a compilation still running then can crash the process as it ends. The library's own exit
 * handler stops it too, but a compilation in flight at exit may have made LLVM state that is
 * destroyed before that handler runs, so do not rely on it. Jobs may still run afterwards, from any
 * thread, with the machine code compiled so far (nothing more is compiled). Safe to call more than
 * once, from any thread, and when no job used tier-up; a no-op in builds without the compiled
 * tier (or the engine). */
SPRAWLING_API void sprawling_stop_tier_up(void);
/* 1 while that compilation runs or has functions queued, else 0 (always 0 without the compiled
 * tier). A process about to end that would rather not wait in sprawling_stop_tier_up may, when it
 * is 1, flush its own output and call _exit(), which runs no exit handler or destructor (the
 * `sprawl` CLI does). */
SPRAWLING_API int sprawling_tier_up_busy(void);
/* The WebAssembly features a config can turn off, by their `sprawl run -W NAME=y|n` names
 * ("simd", "tail-call", "exceptions", …; static storage), counting up from 0; NULL past the last. */
SPRAWLING_API const char* sprawling_feature_name(size_t index);

/* ---- config -------------------------------------------------------------------------------- */

/* A config holding the defaults: memory cap 4 GiB (wasm32's whole space), no deadline, 64 MiB
 * per output stream, fuel metered, not deterministic, 128 MiB host-call copy limit, 10,000,000
 * table elements, 100 tables, 100 memories, store limit = memory cap + 256 MiB, 1 GiB disk
 * writes, the auto tier without tier-up and without a code cache (so: the interpreter), no
 * snapshot folder (the C++ SandboxConfig's defaults).
 * Setters return SPRAWLING_EINVAL for a NULL config or a value outside the documented range and
 * then leave the config unchanged. */
SPRAWLING_API sprawling_status sprawling_config_new(sprawling_config** out);
SPRAWLING_API void sprawling_config_free(sprawling_config* config);

/* Cap on each linear memory in bytes; memory.grow past it returns -1 to the guest. */
SPRAWLING_API sprawling_status sprawling_config_set_max_memory_bytes(sprawling_config* config, uint64_t bytes);
/* Wall-clock limit of one run in nanoseconds (> 0); reaching it ends the run with a trap
 * "deadline exceeded". sprawling_config_clear_timeout removes it (the default). */
SPRAWLING_API sprawling_status sprawling_config_set_timeout_ns(sprawling_config* config, uint64_t nanoseconds);
SPRAWLING_API sprawling_status sprawling_config_clear_timeout(sprawling_config* config);
/* Caps on captured stdout / stderr in bytes; past one the guest's write fails with EIO and the
 * outcome's *_truncated flag is set. */
SPRAWLING_API sprawling_status sprawling_config_set_max_stdout_bytes(sprawling_config* config, uint64_t bytes);
SPRAWLING_API sprawling_status sprawling_config_set_max_stderr_bytes(sprawling_config* config, uint64_t bytes);
/* 0: fuel is not metered at all (the job's fuel is ignored, fuel consumed reads 0); for
 * benchmarks only. Non-zero: metered (the default). */
SPRAWLING_API sprawling_status sprawling_config_set_meter_fuel(sprawling_config* config, int enabled);
/* Non-zero: reproducible runs (fixed clocks, randomness from the seed). */
SPRAWLING_API sprawling_status sprawling_config_set_deterministic(sprawling_config* config, int enabled);
/* Non-zero: every float operation that may make a NaN makes the canonical quiet NaN
 * (0x7FC00000, 0x7FF8000000000000), not one whose sign and payload depend on the CPU: the same
 * bits on every machine and tier (Wasmtime's nan-canonicalization; `sprawl run -W
 * nan-canonicalization=y`). Default off; deterministic runs imply it. */
SPRAWLING_API sprawling_status sprawling_config_set_nan_canonicalization(sprawling_config* config, int enabled);
SPRAWLING_API sprawling_status sprawling_config_set_random_seed(sprawling_config* config, uint64_t seed);
/* What one WASI call may take from guest memory in bytes; past it the call fails with ENOMEM. */
SPRAWLING_API sprawling_status sprawling_config_set_hostcall_copy_limit(sprawling_config* config, uint64_t bytes);

/* Cap on each table's elements (<= UINT32_MAX); table.grow past it returns -1 to the guest and a
 * module declaring a larger table is refused (E_INVALID_MODULE). */
SPRAWLING_API sprawling_status sprawling_config_set_max_table_elements(sprawling_config* config, uint64_t elements);
/* How many tables / memories the module may define (each <= UINT32_MAX); past one the module is
 * refused (E_INVALID_MODULE). */
SPRAWLING_API sprawling_status sprawling_config_set_max_tables(sprawling_config* config, uint64_t tables);
SPRAWLING_API sprawling_status sprawling_config_set_max_memories(sprawling_config* config, uint64_t memories);
/* One account of everything the guest makes the host allocate (linear memories, tables, functions,
 * globals, segments, compiled code) in bytes: a module past it is refused (E_INVALID_MODULE),
 * memory.grow / table.grow past it return -1. sprawling_config_clear_max_store_bytes restores the
 * default (the memory cap + 256 MiB). */
SPRAWLING_API sprawling_status sprawling_config_set_max_store_bytes(sprawling_config* config, uint64_t bytes);
SPRAWLING_API sprawling_status sprawling_config_clear_max_store_bytes(sprawling_config* config);
/* Write quota of a job on its writable mounts in bytes (bytes written plus the holes a write past
 * the end adds); past it the guest's write fails with EDQUOT. See sprawling_outcome_disk_write_bytes. */
SPRAWLING_API sprawling_status sprawling_config_set_max_disk_write_bytes(sprawling_config* config, uint64_t bytes);
/* The execution tier; SPRAWLING_EINVAL for a value sprawling_tier_name does not know. */
SPRAWLING_API sprawling_status sprawling_config_set_tier(sprawling_config* config, sprawling_tier tier);
/* Tier-up (docs/compiled-tier.md, "Tier-up") for SPRAWLING_TIER_AUTO when the code cache does not
 * hold the module: non-zero compiles the functions the interpreter finds hot (counted per module
 * across the jobs of the process) on one background thread of the process, and runs each as
 * machine code from its next call. A job never waits for it; its output, exit, traps and fuel are
 * the same whether or when a compilation finishes. 0: no compilation during runs (the default
 * here, unlike the `sprawl` CLI's: embedders built before this setter see no change). A process
 * that runs a job with it on must call sprawling_stop_tier_up() before it exits. Accepted in
 * builds without the compiled tier, where it changes nothing (auto is the interpreter there);
 * the other tiers ignore it. */
SPRAWLING_API sprawling_status sprawling_config_set_tier_up(sprawling_config* config, int enabled);
/* A folder (created 0700 when missing) where snapshots of initialised instances are also kept
 * between processes, checksummed (a corrupt or foreign file is rebuilt); copied. NULL or "": the
 * in-memory snapshot cache of the process only (the default). See sprawling_job_set_snapshot. */
SPRAWLING_API sprawling_status sprawling_config_set_snapshot_dir(sprawling_config* config, const char* dir);
/* The compiled-code cache (docs/compiled-tier.md): a folder (created 0700 when missing; ignored
 * when another user owns it or others may write it) of machine code per module, engine build,
 * LLVM version, CPU features and fuel mode, checked on every read; `sprawl compile` fills it.
 * Copied. NULL or "": no cache (the default), so SPRAWLING_TIER_AUTO is the interpreter. */
SPRAWLING_API sprawling_status sprawling_config_set_code_cache_dir(sprawling_config* config, const char* dir);
/* Its size bound in bytes (default 1 GiB; 0 is SPRAWLING_EINVAL): past it, writing an entry
 * removes the least recently used ones. */
SPRAWLING_API sprawling_status sprawling_config_set_code_cache_max_bytes(sprawling_config* config, uint64_t bytes);
/* SPRAWLING_TIER_COMPILE, when a module is compiled on first use (not from the code cache): how
 * far the process's heap may grow while it is (each function compiled at its first call),
 * checked before each function with what compiling it is expected to take. A function that would
 * pass it stays interpreted, for later jobs too (the same output, exit and fuel). 0: no limit.
 * Default 1 GiB (CPython's compile grows the heap by less than 256 MiB). `sprawl run -W
 * compile-memory=BYTES`. */
SPRAWLING_API sprawling_status sprawling_config_set_compile_memory_bytes(sprawling_config* config, uint64_t bytes);

/* Turns the feature `name` (a sprawling_feature_name, as `sprawl run -W NAME=y|n` spells it) on
 * (non-zero, every feature's default) or off: a module using a feature that is off is refused
 * (E_INVALID_MODULE naming the feature). SPRAWLING_EINVAL for an unknown name. */
SPRAWLING_API sprawling_status sprawling_config_set_feature(sprawling_config* config, const char* name, int enabled);

/* Streaming: called with each piece of output as the guest writes it, on the thread running the
 * job, before sprawling_run returns (the outcome still holds the whole capped output). `user` is
 * passed back unchanged and must stay valid as long as a sandbox made from this config exists.
 * NULL removes the sink. */
typedef void (*sprawling_output_sink)(void* user, const uint8_t* bytes, size_t len);
SPRAWLING_API sprawling_status sprawling_config_set_stdout_sink(sprawling_config* config, sprawling_output_sink sink,
                                                                void* user);
SPRAWLING_API sprawling_status sprawling_config_set_stderr_sink(sprawling_config* config, sprawling_output_sink sink,
                                                                void* user);

/* ---- sandbox ------------------------------------------------------------------------------- */

/* A sandbox with a copy of `config` (NULL: the defaults). */
SPRAWLING_API sprawling_status sprawling_sandbox_new(const sprawling_config* config, sprawling_sandbox** out);
SPRAWLING_API void sprawling_sandbox_free(sprawling_sandbox* sandbox);

/* ---- job ----------------------------------------------------------------------------------- */

/* An empty job: no module yet, no argv, env, stdin or mounts, fuel UINT64_MAX (no budget: set one
 * with sprawling_job_set_fuel, or a deadline in the config, to bound a hostile guest). */
SPRAWLING_API sprawling_status sprawling_job_new(sprawling_job** out);
SPRAWLING_API void sprawling_job_free(sprawling_job* job);

/* The module: a file (binary .wasm or text .wat), read when the job runs … */
SPRAWLING_API sprawling_status sprawling_job_set_module_path(sprawling_job* job, const char* path);
/* … or its bytes, copied now (binary or text). Either call replaces the other. */
SPRAWLING_API sprawling_status sprawling_job_set_module_bytes(sprawling_job* job, const uint8_t* bytes, size_t len);
/* Appends one argv entry (argv[0] is the program name the guest sees). */
SPRAWLING_API sprawling_status sprawling_job_add_arg(sprawling_job* job, const char* arg, size_t len);
/* Appends one environment variable, in order. */
SPRAWLING_API sprawling_status sprawling_job_add_env(sprawling_job* job, const char* key, size_t key_len,
                                                     const char* value, size_t value_len);
/* The guest's stdin, copied (bytes may be NULL when len is 0). Replaces any earlier stdin. */
SPRAWLING_API sprawling_status sprawling_job_set_stdin(sprawling_job* job, const uint8_t* bytes, size_t len);
/* Streamed stdin: the guest's fd 0 reads host fd `fd` (a pipe, a file, a socket) on demand, at most
 * the guest's buffer per read, under the deadline; nothing is read ahead. Borrowed, not closed:
 * keep it open until sprawling_run returns (a job whose fd is closed by then is E_INVALID_JOB).
 * SPRAWLING_EINVAL when fd < 0 or not open. Replaces any earlier stdin, as set_stdin replaces this. */
SPRAWLING_API sprawling_status sprawling_job_set_stdin_fd(sprawling_job* job, int fd);
/* Preopens host directory `host` at absolute guest path `guest`; writable 0: read-only. The mount
 * set is the whole file capability of the guest. Checked when the job runs (E_INVALID_JOB). */
SPRAWLING_API sprawling_status sprawling_job_add_mount(sprawling_job* job, const char* host, const char* guest,
                                                       int writable);
/* CPU budget in fuel units (one unit ~ one executed wasm operator). */
SPRAWLING_API sprawling_status sprawling_job_set_fuel(sprawling_job* job, uint64_t fuel);
/* Start-up snapshots, for modules exporting `wizer.initialize` (docs/snapshots.md): enabled
 * (non-zero, the default) lets the job start from a snapshot of the initialised instance, built
 * by the first such job and cached in the process (and in the config's snapshot folder). The
 * first `init_mounts` mounts (default 0) are all the initialisation sees, read-only; the job must
 * have at least that many mounts when it runs (E_INVALID_JOB otherwise). 0: start cold. */
SPRAWLING_API sprawling_status sprawling_job_set_snapshot(sprawling_job* job, int enabled, size_t init_mounts);
/* Appends one argument (after argv[0]) of the snapshot's training job: when this job builds a
 * snapshot (not when it loads one), a job with these arguments runs from it at once, output
 * discarded, and the code it calls is kept in the snapshot (docs/snapshots.md). No arguments (the
 * default): no training job. Never changes what a job runs or sees. */
SPRAWLING_API sprawling_status sprawling_job_add_training_arg(sprawling_job* job, const char* arg, size_t len);
/* Lets another thread stop the job: a job holding `cancel` (borrowed: keep it alive until
 * sprawling_run returns; NULL removes it) ends at its next deadline check once
 * sprawling_cancel_request was called, as a trap with message "cancelled"
 * (sprawling_outcome_cancelled says 1). Checks happen on entry and every 1,048,576 fuel units
 * (under a millisecond) while fuel is metered (the default); a compiled loop that took its fuel
 * ahead runs up to 4,194,304 units between two checks. A job run with fuel metering off cannot be
 * stopped this way. */
SPRAWLING_API sprawling_status sprawling_job_set_cancel(sprawling_job* job, sprawling_cancel* cancel);

/* ---- cancel -------------------------------------------------------------------------------- */

/* A cancel flag, not set. One flag may be held by several jobs. */
SPRAWLING_API sprawling_status sprawling_cancel_new(sprawling_cancel** out);
SPRAWLING_API void sprawling_cancel_free(sprawling_cancel* cancel);
/* Sets the flag (from any thread, at any time; repeatable): the jobs holding it stop at their
 * next check, and a job started later with it stops on entry. */
SPRAWLING_API void sprawling_cancel_request(sprawling_cancel* cancel);
/* 1 once sprawling_cancel_request was called on it, else 0. */
SPRAWLING_API int sprawling_cancel_requested(const sprawling_cancel* cancel);

/* ---- run ----------------------------------------------------------------------------------- */

/* Runs `job` in `sandbox`, blocking until it ends. On SPRAWLING_OK *outcome is set (and *error is
 * NULL); on SPRAWLING_ERROR *error is set (and *outcome is NULL); on SPRAWLING_EINVAL or
 * SPRAWLING_ENOMEM neither is set. `error` may be NULL when the caller does not want the detail. */
SPRAWLING_API sprawling_status sprawling_run(sprawling_sandbox* sandbox, const sprawling_job* job,
                                             sprawling_outcome** outcome, sprawling_error** error);

/* Compiles the module file `path` ahead of time into the config's code cache folder (as
 * `sprawl compile`), for the fuel-metered variant (`metered` non-zero), the unmetered one, or
 * both; later runs with SPRAWLING_TIER_AUTO or _COMPILE and that folder start on the machine code.
 * On SPRAWLING_OK, *functions and *compiled (either may be NULL) are the defined functions and how
 * many of them have machine code, summed over the variants written. SPRAWLING_ERROR with *error:
 * the module is invalid (E_INVALID_MODULE), no compiled tier (E_TOOL_UNAVAILABLE), no code cache
 * folder set or a failed write (E_INVALID_JOB, E_SANDBOX_HOST). */
SPRAWLING_API sprawling_status sprawling_precompile(const sprawling_config* config, const char* path, int metered,
                                                    int unmetered, size_t* functions, size_t* compiled,
                                                    sprawling_error** error);

/* ---- outcome ------------------------------------------------------------------------------- */
/* Accessors given a NULL outcome (or error) return 0, NULL or SPRAWLING_EXIT_SUCCESS. */

SPRAWLING_API void sprawling_outcome_free(sprawling_outcome* outcome);
SPRAWLING_API sprawling_exit_kind sprawling_outcome_exit_kind(const sprawling_outcome* outcome);
/* The exit code: non-zero for SPRAWLING_EXIT_FAILURE, 0 otherwise. */
SPRAWLING_API uint64_t sprawling_outcome_exit_code(const sprawling_outcome* outcome);
/* The trap's message (NUL-terminated) for SPRAWLING_EXIT_TRAP; NULL otherwise. */
SPRAWLING_API const char* sprawling_outcome_trap_message(const sprawling_outcome* outcome);
/* The captured output; *len receives its length. The pointer may be NULL when *len is 0. */
SPRAWLING_API const uint8_t* sprawling_outcome_stdout(const sprawling_outcome* outcome, size_t* len);
SPRAWLING_API const uint8_t* sprawling_outcome_stderr(const sprawling_outcome* outcome, size_t* len);
/* Measurements of the run (always present for the engine sandbox). */
SPRAWLING_API uint64_t sprawling_outcome_fuel_consumed(const sprawling_outcome* outcome);
SPRAWLING_API uint64_t sprawling_outcome_wall_time_ns(const sprawling_outcome* outcome);
SPRAWLING_API uint64_t sprawling_outcome_peak_memory_bytes(const sprawling_outcome* outcome);
SPRAWLING_API int sprawling_outcome_stdout_truncated(const sprawling_outcome* outcome);
SPRAWLING_API int sprawling_outcome_stderr_truncated(const sprawling_outcome* outcome);
/* Bytes charged to the disk write quota (sprawling_config_set_max_disk_write_bytes). */
SPRAWLING_API uint64_t sprawling_outcome_disk_write_bytes(const sprawling_outcome* outcome);
/* 1 when the job started from a snapshot (its fuel consumed then excludes the initialisation). */
SPRAWLING_API int sprawling_outcome_from_snapshot(const sprawling_outcome* outcome);
/* 1 when the job was stopped by its sprawling_cancel (the exit is then a trap "cancelled"). */
SPRAWLING_API int sprawling_outcome_cancelled(const sprawling_outcome* outcome);

/* ---- error --------------------------------------------------------------------------------- */

SPRAWLING_API void sprawling_error_free(sprawling_error* error);
/* The stable code: "E_TOOL_UNAVAILABLE", "E_SANDBOX_DENIED", "E_SANDBOX_HOST",
 * "E_INVALID_MODULE" or "E_INVALID_JOB" (static storage). Test on this, never on the message. */
SPRAWLING_API const char* sprawling_error_code(const sprawling_error* error);
/* The human message (owned by the error). */
SPRAWLING_API const char* sprawling_error_message(const sprawling_error* error);
/* The arm to use instead (E_TOOL_UNAVAILABLE), or NULL. */
SPRAWLING_API const char* sprawling_error_alternative(const sprawling_error* error);
/* Structured detail, e.g. "import" -> "wasi_snapshot_preview1::sock_open": the number of entries,
 * and entry i's key and value (NULL when i is out of range), in key order. */
SPRAWLING_API size_t sprawling_error_detail_count(const sprawling_error* error);
SPRAWLING_API const char* sprawling_error_detail_key(const sprawling_error* error, size_t index);
SPRAWLING_API const char* sprawling_error_detail_value(const sprawling_error* error, size_t index);

#ifdef __cplusplus
}
#endif

#endif /* SPRAWLING_SPRAWLING_H */
