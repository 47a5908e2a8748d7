// `sprawl run`: a module, its arguments and the options → one job in a WasmSandbox, output
// streamed as the guest writes it, the ending turned into an exit status (and --json).
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/report.hpp"
#include "cli/run_job.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iterator>

namespace sprawling::cli {

namespace {

constexpr std::string_view kRunHelp = R"(Usage: sprawl run [OPTIONS] MODULE [ARGS...]

Runs the wasip1 command module MODULE (.wasm binary or .wat text) in the sandbox: its _start
with argv = [MODULE's file name, ARGS...]. The guest sees only the directories given with
--dir and only the environment given with --env; it has no network and cannot start processes.

Options:
  --dir HOST::GUEST        mount host directory HOST at guest path GUEST, writable
  --dir HOST::GUEST::ro    the same, read-only (no create, write, truncate, rename, link,
                           unlink, mkdir, rmdir or set-times inside it); HOST::GUEST:ro too
  --dir HOST               mount HOST at /HOST (relative paths are anchored at /), writable
  --env NAME=VALUE         set a guest environment variable (nothing is inherited otherwise)
  --env NAME               pass the host's NAME through (skipped when unset)
  --fuel N, -W fuel=N      CPU budget in fuel units (about one per wasm operator, Wasmtime's
                           cost model); default: unmetered
  --max-memory-size BYTES, -W max-memory-size=BYTES
                           cap on linear memory (suffixes K, M, G); memory.grow past it
                           fails; default 4G (wasm32's limit)
  --max-table-elements N, -W max-table-elements=N
                           cap on each table's elements; table.grow past it returns -1;
                           default 10000000
  --max-tables N, -W max-tables=N
                           tables the module may define; default 100
  --max-memories N, -W max-memories=N
                           memories the module may define; default 100
  --max-store-size BYTES, -W max-store-size=BYTES
                           one account of everything the guest makes the host allocate:
                           linear memory, tables (8 bytes per element), functions, globals,
                           segments and the compiled code; instantiation past it fails,
                           memory.grow and table.grow return -1; default max-memory-size
                           + 256M
  --timeout DURATION, -W timeout=DURATION
                           wall-clock limit (500ms, 2s, 1m); default: none
  -W simd=y|n              fixed-width SIMD (v128); n refuses a module that uses any of it,
                           naming its first use; default y (as Wasmtime)
  -W tail-call=y|n         WebAssembly 3.0 tail calls (return_call, return_call_indirect);
                           n refuses a module using them; default y (as Wasmtime)
  -W exceptions=y|n        WebAssembly 3.0 exception handling (tags, exnref, throw, throw_ref,
                           try_table; the legacy try/catch/rethrow/delegate); n refuses a
                           module using it; default y (as Wasmtime since 47). An exception
                           no wasm frame catches ends the run with a trap naming its tag
  -W function-references=y|n
                           WebAssembly 3.0 typed function references ((ref null? $t) types,
                           call_ref, return_call_ref, ref.as_non_null, br_on_null,
                           br_on_non_null, non-nullable locals, table initialisers); n refuses
                           a module using them; default y (as Wasmtime's 3.0 releases)
  -W gc=y|n                WebAssembly 3.0 garbage collection (rec groups, sub types, struct
                           and array types and objects, i31, ref.test/ref.cast/br_on_cast,
                           any/extern conversions); n refuses a module using it; default y
                           (as Wasmtime since 47). Objects count against -W max-store-size
  -W extended-const=y|n    WebAssembly 3.0 extended constant expressions (i32/i64 add, sub,
                           mul in initialisers and offsets, global.get of a defined global
                           there); n refuses a module using them; default y (as Wasmtime)
  -W relaxed-simd=y|n      the 20 relaxed SIMD instructions, each with one deterministic result
                           (Wasmtime's relaxed_simd_deterministic choice); n refuses a module
                           using them; default y (as Wasmtime)
  -W multi-memory=y|n      WebAssembly 3.0 multiple memories (memory indices in loads, stores
                           and memory.*); n refuses a module with more than one memory;
                           default y (as Wasmtime)
  -W memory64=y|n          WebAssembly 3.0 64-bit memories and tables (i64 addresses and
                           indexes; still capped by max-memory-size, max-table-elements); n
                           refuses a module with one; default y (as Wasmtime's 3.0 releases)
  -W nan-canonicalization=y|n
                           every float operation that makes a NaN makes the canonical one
                           (0x7FC00000, 0x7FF8000000000000) instead of a sign and payload that
                           depend on the CPU: results bit-identical on every machine and
                           tier; default n (as Wasmtime)
  --hostcall-fuel BYTES, -S hostcall-fuel=BYTES
                           what one WASI call may take from guest memory (iovecs, written
                           buffers, paths, poll subscriptions, random_get's buffer); past
                           it the call fails with ENOMEM; default 128M (as Wasmtime)
  --max-disk-write BYTES, -S max-disk-write=BYTES
                           write quota on writable mounts: bytes written plus the size of
                           any hole a write past the end or a resize adds; past it writes
                           fail with EDQUOT; default 1G (--json reports disk_write_bytes)
  --tier auto|interpret|compile
                           which tier runs the guest's functions; all give the same output,
                           traps and fuel. auto (default): machine code when the code cache
                           holds the module (see `sprawl compile`), else the interpreter, and
                           functions it finds hot (20000 calls) are compiled on a background
                           thread and run as machine code from their next call (tier-up; the
                           run never waits for it), and kept in the code cache, where later
                           runs of the module find them at their first hot function (the hot
                           set). interpret: the interpreter alone. compile:
                           machine code from the cache, else LLVM compiles each function on its
                           first call (the time counts towards --timeout). A function over the
                           compile budget (a fact of its code: size, nesting, branch targets,
                           locals, ...) or past -W compile-memory stays interpreted on every
                           tier. The compiler is the plugin libsprawling_jit.so, loaded only
                           when something is compiled or a cached entry is used: compile
                           without it (or in a build without the compiled tier) is exit status
                           127; auto is then the interpreter
  -W compile-memory=BYTES  under --tier compile, how far this process's heap may grow while the
                           module is compiled on first use (each function at its first call),
                           each function checked with its expected cost before it is
                           compiled; one that would pass it stays interpreted (same output,
                           traps and fuel); 0: no limit; default 1G (`sprawl compile` has its
                           own)
  -C cache=y|n, --cache y|n
                           use the compiled-code cache (default y): SPRAWLING_CACHE_DIR, else
                           $XDG_CACHE_HOME/sprawling/code, else ~/.cache/sprawling/code; read
                           for the module's code, written by tier-up (its hot set)
  -C tier-up=y|n, --tier-up y|n
                           under --tier auto, compile hot functions in the background (default
                           y); n: auto is the interpreter unless the cache holds the module
  --stdin FILE             the guest's stdin comes from FILE (default: this process's stdin
                           when it is a pipe or file; empty when it is a terminal); read on
                           demand as the guest reads, nothing ahead, and a read waiting for
                           data stops at --timeout
  --json FILE              write a JSON outcome report to FILE ('-' = stderr): exit kind, code,
                           trap message, fuel consumed, wall time, peak memory, output sizes,
                           truncation flags
  -h, --help               this text

Exit status:
  0..125  the guest's own exit code (0 = success)
  126     host fault (E_SANDBOX_HOST), e.g. the guest called proc_exit with a code >= 126
  127     the tool is unavailable (E_TOOL_UNAVAILABLE)
  128     usage error (bad option, malformed --dir, missing module or directory)
  131     invalid job (E_INVALID_JOB)
  132     invalid module (E_INVALID_MODULE): malformed or does not validate
  133     denied (E_SANDBOX_DENIED): the module imports something the sandbox does not
          provide, e.g. wasi_snapshot_preview1::sock_connect; the guest never ran
  134     the guest trapped (as Wasmtime)
  135     fuel exhausted
  136     the --timeout deadline passed
)";

void write_all(int fd, std::span<const std::uint8_t> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the terminal went away; the outcome still holds the captured output
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::expected<GuestStdin, std::string> open_stdin_for_guest(const RunRequest& request) {
  GuestStdin in;
  if (request.stdin_path) {
    // O_NONBLOCK while opening only: a FIFO without a writer must not hang the CLI in open(2).
    in.owned = ::open(request.stdin_path->c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (in.owned < 0) return std::unexpected("--stdin '" + *request.stdin_path + "': " + std::strerror(errno));
    const int flags = ::fcntl(in.owned, F_GETFL);
    if (flags < 0 || ::fcntl(in.owned, F_SETFL, flags & ~O_NONBLOCK) != 0) {
      return std::unexpected("--stdin '" + *request.stdin_path + "': " + std::strerror(errno));
    }
    in.fd = in.owned;
    return in;
  }
  // No stdin at all (closed fd 0) or a terminal: the guest sees EOF.
  if (::fcntl(STDIN_FILENO, F_GETFD) < 0 || ::isatty(STDIN_FILENO) != 0) return in;
  in.fd = STDIN_FILENO;
  return in;
}

GuestStdin::~GuestStdin() {
  if (owned >= 0) ::close(owned);
}

bool exit_without_teardown() { return std::getenv("SPRAWLING_JIT_STATS") == nullptr; }

void heap_on_huge_pages() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)  // their allocators are not glibc's
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  constexpr int kReserve = 64 << 20;
  if (::mallopt(M_TOP_PAD, kReserve) == 0 || ::mallopt(M_TRIM_THRESHOLD, 2 * kReserve) == 0 ||
      ::mallopt(M_MMAP_THRESHOLD, 32 << 20) == 0)
    return;
  void* grow = std::malloc(kHuge);  // more than the top of the heap holds: it grows by this and the pad
  if (grow == nullptr) return;
  const auto start = reinterpret_cast<std::uintptr_t>(grow);
  const std::uintptr_t first = (start + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t last = reinterpret_cast<std::uintptr_t>(::sbrk(0)) & ~(kHuge - 1);
  std::free(grow);  // back into the top of the heap, where the next blocks come from
  if (last <= first || ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) != 0) return;
  // The heap below `first` stays on 4 KiB pages: one block, never used nor freed, takes it (its
  // pages are never touched, so they cost nothing), and later blocks start on the huge pages.
  if (first - start > 4096) {
    void* const below_huge_pages = std::malloc(first - start - 64);
    // (Asked, so that the block is kept: an allocation whose pointer goes nowhere may be elided.)
    if (below_huge_pages != nullptr && ::malloc_usable_size(below_huge_pages) < first - start - 64) std::abort();
  }
#endif
}

int run_job(const RunRequest& request, std::vector<std::string> argv, std::vector<runtime::Mount> extra_mounts,
            std::string_view wasm_path, runtime::SnapshotPolicy snapshot, std::filesystem::path snapshot_dir) {
  auto guest_stdin = open_stdin_for_guest(request);
  if (!guest_stdin) {
    std::fprintf(stderr, "sprawl: %s\n", guest_stdin.error().c_str());
    return status::kUsage;
  }
  runtime::SandboxConfig config;
  if (request.max_memory_bytes) config.max_memory_bytes = *request.max_memory_bytes;
  config.timeout = request.timeout;
  if (request.hostcall_copy_limit) config.hostcall_copy_limit = *request.hostcall_copy_limit;
  if (request.max_table_elements) config.max_table_elements = *request.max_table_elements;
  if (request.max_tables) config.max_tables = *request.max_tables;
  if (request.max_memories) config.max_memories = *request.max_memories;
  config.max_store_bytes = request.max_store_bytes;
  if (request.compile_memory) config.compile_memory_bytes = *request.compile_memory;
  config.tail_call = request.tail_call;
  config.exceptions = request.exceptions;
  config.function_references = request.function_references;
  config.gc = request.gc;
  config.extended_const = request.extended_const;
  config.relaxed_simd = request.relaxed_simd;
  config.nan_canonicalization = request.nan_canonicalization;
  config.multi_memory = request.multi_memory;
  config.memory64 = request.memory64;
  if (request.max_disk_write_bytes) config.max_disk_write_bytes = *request.max_disk_write_bytes;
  config.meter_fuel = request.fuel.has_value();
  config.tier = request.tier;
  config.tier_up = request.tier_up;
  config.simd = request.simd;
  // The compiled-code cache (filled by `sprawl compile`): where auto and compile find machine code.
  if (request.code_cache && request.tier != runtime::ExecutionTier::Interpret)
    config.code_cache_dir = user_cache_folder("SPRAWLING_CACHE_DIR", "code");
  config.stdout_sink = [](std::span<const std::uint8_t> bytes) { write_all(STDOUT_FILENO, bytes); };
  config.stderr_sink = [](std::span<const std::uint8_t> bytes) { write_all(STDERR_FILENO, bytes); };
  config.snapshot_dir = std::move(snapshot_dir);  // [snapshots]
  config.process_exits_after_run = exit_without_teardown();  // main() leaves right after this job

  runtime::SandboxJob job{.wasm = std::filesystem::path(wasm_path),
                          .argv = std::move(argv),
                          .env = request.env,
                          .stdin_bytes = {},
                          // Streamed: the guest reads what it asks for, when it asks, under
                          // --timeout; nothing is read ahead (a pipe that never closes or a
                          // gigabyte never read costs the host nothing).
                          .stdin_fd = guest_stdin->fd,
                          .mounts = std::move(extra_mounts),
                          .fuel = runtime::Fuel{request.fuel.value_or(0)}};
  job.mounts.insert(job.mounts.end(), request.mounts.begin(), request.mounts.end());
  job.snapshot = std::move(snapshot);  // [snapshots]

  runtime::WasmSandbox sandbox(std::move(config));
  const auto result = sandbox.run(job);

  if (!result) {
    std::fprintf(stderr, "sprawl: %s\n", result.error().to_string().c_str());
  } else if (const auto* trap = std::get_if<runtime::Trap>(&result->exit)) {
    std::fprintf(stderr, "sprawl: guest trapped: %s\n", trap->message.c_str());
  } else if (std::holds_alternative<runtime::FuelExhausted>(result->exit)) {
    std::fprintf(stderr, "sprawl: fuel exhausted (budget %llu units)\n",
                 static_cast<unsigned long long>(request.fuel.value_or(0)));
  }
  if (request.json_path) {
    const std::string report = json_report(result);
    if (*request.json_path == "-") {
      std::fputs(report.c_str(), stderr);
    } else {
      std::ofstream out(*request.json_path, std::ios::binary | std::ios::trunc);
      out << report;
      if (!out) {
        std::fprintf(stderr, "sprawl: --json '%s': cannot write the report\n", request.json_path->c_str());
        return status::kHostFault;
      }
    }
  }
  return exit_status(result);
}

int run_command(std::span<const std::string_view> args) {
  for (const auto arg : args) {
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h") {
      sprawling::cli::print(stdout, kRunHelp);
      return 0;
    }
    if (!arg.starts_with("-")) break;
  }
  auto request = parse_run(args);
  if (!request) {
    std::fprintf(stderr, "sprawl run: %s\n", request.error().message.c_str());
    return status::kUsage;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(request->module, ec)) {
    std::fprintf(stderr, "sprawl run: module '%s' does not exist or is not a file\n", request->module.c_str());
    return status::kUsage;
  }
  std::vector<std::string> argv{std::filesystem::path(request->module).filename().string()};
  argv.insert(argv.end(), request->args.begin(), request->args.end());
  return run_job(*request, std::move(argv), {}, request->module);
}

}  // namespace sprawling::cli
