// `sprawl` as a user runs it: each subcommand, flag and exit status, through the real binary.
#include "tests/cli/process.hpp"
#include "tests/engine/guest.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sprawling::cli {
namespace {

using test::ProcessResult;
using test::run_process;
using test::TempDir;

ProcessResult sprawl(std::vector<std::string> args, const std::string& input = {}, bool merge = false,
                     const std::vector<std::string>& env = {}) {
  args.insert(args.begin(), SPRAWL_BINARY);
  return run_process(args, input, merge, env);
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

constexpr std::string_view kLoop = R"((module (memory (export "memory") 1) (func (export "_start") (loop $l (br $l)))))";

std::string exit_guest(int code) {
  return R"((module (import "wasi_snapshot_preview1" "proc_exit" (func $e (param i32)))
    (memory (export "memory") 1) (func (export "_start") (call $e (i32.const )" + std::to_string(code) + "))))";
}

// Writes "a" to stdout, "b" to stderr, "c" to stdout, in that order.
constexpr std::string_view kInterleave = R"((module
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "abc")
  (func $put (param $fd i32) (param $at i32)
    (i32.store (i32.const 0) (local.get $at))
    (i32.store (i32.const 4) (i32.const 1))
    (drop (call $w (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func (export "_start")
    (call $put (i32.const 1) (i32.const 100))
    (call $put (i32.const 2) (i32.const 101))
    (call $put (i32.const 1) (i32.const 102))))
)";

// Copies stdin to stdout until EOF.
constexpr std::string_view kCat = R"((module
  (import "wasi_snapshot_preview1" "fd_read" (func $r (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $more
      (i32.store (i32.const 0) (i32.const 1024))
      (i32.store (i32.const 4) (i32.const 4096))
      (drop (call $r (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
      (if (i32.load (i32.const 8))
        (then
          (i32.store (i32.const 4) (i32.load (i32.const 8)))
          (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 12)))
          (br $more))))))
)";

// Creates "/data/new.txt"; exits with path_open's errno (0 = created).
constexpr std::string_view kCreate = R"((module
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $e (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "new.txt")
  (func (export "_start")
    (call $e (call $open (i32.const 3) (i32.const 0) (i32.const 16) (i32.const 7)
                         (i32.const 1) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 64)))))
)";

// Exits with the number of environment variables.
constexpr std::string_view kEnvCount = R"((module
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $s (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $e (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (drop (call $s (i32.const 0) (i32.const 4))) (call $e (i32.load (i32.const 0)))))
)";

TEST(Cli, HelpListsEverySubcommandAndVersionPrints) {
  auto help = sprawl({"--help"});
  EXPECT_EQ(help.status, 0);
  for (const char* word : {"run", "python", "wast", "validate"}) EXPECT_TRUE(contains(help.out, word)) << word;
  auto version = sprawl({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_TRUE(contains(version.out, "sprawl "));
}

TEST(Cli, RunHelpDocumentsEveryFlagAndStatus) {
  auto help = sprawl({"run", "--help"});
  EXPECT_EQ(help.status, 0);
  for (const char* word : {"--dir HOST::GUEST::ro", "--env NAME=VALUE", "--fuel", "-W fuel=N", "--max-memory-size",
                           "--timeout", "--hostcall-fuel", "-S hostcall-fuel=BYTES", "--tier auto|interpret|compile", "-C cache=y|n", "--json", "--stdin", "134", "135", "136", "133", "132", "131", "128", "126"}) {
    EXPECT_TRUE(contains(help.out, word)) << word;
  }
  for (const char* sub : {"wast", "validate", "python", "compile"}) {
    auto sub_help = sprawl({sub, "--help"});
    EXPECT_EQ(sub_help.status, 0) << sub;
    EXPECT_TRUE(contains(sub_help.out, "Usage: sprawl")) << sub;
  }
}

TEST(Cli, RunsAGuestAndPassesItsOutputThrough) {
  TempDir dir;
  auto result = sprawl({"run", dir.write("ok.wat", test::kOkGuest).string()});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out, "ok\n");
}

TEST(Cli, TheGuestsExitCodeIsTheStatus) {
  TempDir dir;
  EXPECT_EQ(sprawl({"run", dir.write("e.wat", exit_guest(42)).string()}).status, 42);
  EXPECT_EQ(sprawl({"run", dir.write("e0.wat", exit_guest(0)).string()}).status, 0);
}

TEST(Cli, TrapIs134) {
  TempDir dir;
  auto result = sprawl({"run", dir.write("t.wat", R"((module (memory (export "memory") 1) (func (export "_start") unreachable)))").string()});
  EXPECT_EQ(result.status, 134);
  EXPECT_TRUE(contains(result.err, "unreachable")) << result.err;
}

// Typed function references: on by default (a call_ref on null is a trap, 134), refused as an
// invalid module (132) naming the feature with -W function-references=n.
TEST(Cli, FunctionReferencesSwitch) {
  TempDir dir;
  const auto wasm = dir.write("ref.wat", R"((module (memory (export "memory") 1) (type $t (func))
    (func (export "_start") (call_ref $t (ref.null $t)))))").string();
  auto on = sprawl({"run", wasm});
  EXPECT_EQ(on.status, 134);
  EXPECT_TRUE(contains(on.err, "null function reference")) << on.err;
  auto off = sprawl({"run", "-W", "function-references=n", wasm});
  EXPECT_EQ(off.status, 132);
  EXPECT_TRUE(contains(off.err, "the function-references feature is off")) << off.err;
}

TEST(Cli, FuelExhaustionIs135InBothSpellings) {
  TempDir dir;
  const auto wasm = dir.write("loop.wat", kLoop).string();
  EXPECT_EQ(sprawl({"run", "--fuel", "10000", wasm}).status, 135);
  EXPECT_EQ(sprawl({"run", "-W", "fuel=10000", wasm}).status, 135);
  EXPECT_EQ(sprawl({"run", "--fuel=10000", wasm}).status, 135);
}

// The compiled tier gives the same output, exit status and fuel as the interpreter; a build
// without it refuses --tier compile with E_TOOL_UNAVAILABLE (127) and runs nothing.
TEST(Cli, TierCompileRunsTheSameOrIsUnavailable) {
  TempDir dir;
  const auto ok = dir.write("ok.wat", test::kOkGuest).string();
  const auto loop = dir.write("loop.wat", kLoop).string();
  if (runtime::wasm_sandbox_has_compiled_tier()) {
    auto result = sprawl({"run", "--tier", "compile", ok});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(result.out, "ok\n");
    EXPECT_EQ(sprawl({"run", "--tier", "compile", "--fuel", "10000", loop}).status, 135);
    auto interp = sprawl({"run", "--fuel", "100000", "--json", "-", ok});
    auto compiled = sprawl({"run", "--tier", "compile", "--fuel", "100000", "--json", "-", ok});
    const auto fuel_of = [](const std::string& report) {
      const auto at = report.find("\"fuel_consumed\":");
      return at == std::string::npos ? std::string("none") : report.substr(at, report.find(',', at) - at);
    };
    EXPECT_EQ(fuel_of(interp.err), fuel_of(compiled.err));
  } else {
    auto result = sprawl({"run", "--tier", "compile", ok});
    EXPECT_EQ(result.status, 127);
    EXPECT_TRUE(contains(result.err, "no compiled tier")) << result.err;
    EXPECT_EQ(result.out, "");
  }
}

// `sprawl compile` fills the code cache (SPRAWLING_CACHE_DIR) and says what it wrote; `sprawl run`
// (tier auto, the default) then starts on that machine code, with the interpreter's output and
// fuel; -C cache=n and --tier interpret leave it alone.
TEST(Cli, CompileFillsTheCodeCacheThatRunStartsFrom) {
  TempDir dir;
  const auto ok = dir.write("ok.wat", test::kOkGuest).string();
  const std::vector<std::string> env{"SPRAWLING_CACHE_DIR=" + (dir.path() / "code").string(), "SPRAWLING_JIT_STATS=1"};
  if (!runtime::wasm_sandbox_has_compiled_tier()) {
    auto result = sprawl({"compile", ok}, {}, false, env);
    EXPECT_EQ(result.status, 127);
    EXPECT_TRUE(contains(result.err, "no compiled tier")) << result.err;
    return;
  }
  auto compiled = sprawl({"compile", ok}, {}, false, env);
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  EXPECT_TRUE(contains(compiled.out, "unmetered code: " + (dir.path() / "code").string())) << compiled.out;
  EXPECT_TRUE(contains(compiled.out, "metered code: ")) << compiled.out;
  const auto fuel_of = [](const std::string& report) {
    const auto at = report.find("\"fuel_consumed\":");
    return at == std::string::npos ? std::string("none") : report.substr(at, report.find(',', at) - at);
  };
  for (const char* fuel : {"", "100000"}) {
    std::vector<std::string> args{"run"};
    if (*fuel != '\0') args.insert(args.end(), {"--fuel", fuel});
    args.insert(args.end(), {"--json", "-", ok});
    auto cached = sprawl(args, {}, false, env);
    EXPECT_EQ(cached.status, 0) << cached.err;
    EXPECT_EQ(cached.out, "ok\n");
    EXPECT_TRUE(contains(cached.err, "loaded from the code cache")) << cached.err;
    args.insert(args.begin() + 1, {"--tier", "interpret"});
    auto interpreted = sprawl(args, {}, false, env);
    EXPECT_EQ(interpreted.out, "ok\n");
    EXPECT_FALSE(contains(interpreted.err, "sprawl jit:")) << interpreted.err;
    EXPECT_EQ(fuel_of(cached.err), fuel_of(interpreted.err));
  }
  auto off = sprawl({"run", "-C", "cache=n", ok}, {}, false, env);
  EXPECT_EQ(off.out, "ok\n");
  EXPECT_FALSE(contains(off.err, "sprawl jit: tier-up")) << off.err;
  EXPECT_FALSE(contains(off.err, "in the background")) << off.err;
  EXPECT_EQ(sprawl({"compile", dir.write("bad.wat", "(module (func (result i32)))").string()}, {}, false, env).status, 132);
  EXPECT_EQ(sprawl({"compile"}, {}, false, env).status, 128);
}

// Tier-up keeps what it compiles in the code cache (the hot set): the next `sprawl run` of the
// module links it on its first request instead of compiling it, with the same output.
TEST(Cli, RunKeepsHotFunctionsForTheNextRun) {
  if (!runtime::wasm_sandbox_has_compiled_tier()) GTEST_SKIP() << "no compiled tier in this build";
  TempDir dir;
  const auto hot = dir.write("hot.wat", R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 1)
    (data (i32.const 8) "ok\n")
    (func $sq (param i32) (result i32) (i32.mul (local.get 0) (local.get 0)))
    (func (export "_start") (local $i i32)
      (loop $l
        (drop (call $sq (local.get $i)))
        (br_if $l (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (i32.const 10000000))))
      (i32.store (i32.const 0) (i32.const 8))
      (i32.store (i32.const 4) (i32.const 3))
      (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16))))))")
                       .string();
  const std::vector<std::string> env{"SPRAWLING_CACHE_DIR=" + (dir.path() / "code").string(), "SPRAWLING_JIT_STATS=1",
                                     "SPRAWLING_JIT_TIER_UP_CALLS=10"};
  // A run's exit does not wait for a compilation in flight (the loop gives it about 0.1 s): run
  // until a run found everything that turned hot in the hot set and compiled nothing.
  const auto linked_all = [](const std::string& err) {
    return contains(err, " functions linked from the hot set") && !contains(err, "tier-up: 0 functions linked") &&
           contains(err, "(0 wasm code bytes)");
  };
  std::string err;
  for (int i = 0; i < 20 && !linked_all(err); ++i) {
    auto next = sprawl({"run", hot}, {}, false, env);
    EXPECT_EQ(next.out, "ok\n");
    err = next.err;
  }
  EXPECT_TRUE(linked_all(err)) << err;
  auto off = sprawl({"run", "-C", "cache=n", hot}, {}, false, env);
  EXPECT_EQ(off.out, "ok\n");
  EXPECT_FALSE(contains(off.err, "functions linked from the hot set")) << off.err;
}

// `sprawl compile` under limits it passes at once: exit status 126, the limit and the function
// named, no entry written; the limits' spellings; a thread count is a whole number from 1.
TEST(Cli, CompileStopsAtItsLimitsAndWritesNothing) {
  if (!runtime::wasm_sandbox_has_compiled_tier()) GTEST_SKIP() << "no compiled tier in this build";
  TempDir dir;
  const auto ok = dir.write("ok.wat", test::kOkGuest).string();
  const auto code = dir.path() / "code";
  const std::vector<std::string> env{"SPRAWLING_CACHE_DIR=" + code.string()};
  const auto entries = [&] {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(code, ec); !ec && it != std::filesystem::end(it); it.increment(ec))
      ++n;
    return n;
  };
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"compile", "--compile-timeout", "1ns", ok},
        std::vector<std::string>{"compile", "--compile-timeout=1ns", "--jobs", "2", ok},
        std::vector<std::string>{"compile", "-W", "compile-timeout=1ns,jobs=1", ok}}) {
    auto r = sprawl(args, {}, false, env);
    EXPECT_EQ(r.status, 126) << r.err;
    EXPECT_TRUE(contains(r.err, "stopped past the compile time limit of 1e-09 s while translating function ")) << r.err;
    EXPECT_EQ(entries(), 0U);
  }
  for (const std::vector<std::string>& args : {std::vector<std::string>{"compile", "--compile-memory", "1", ok},
                                               std::vector<std::string>{"compile", "-Wcompile-memory=1", "-j", "2", ok},
                                               std::vector<std::string>{"compile", "-j2", "--compile-memory=1", ok}}) {
    auto r = sprawl(args, {}, false, env);
    EXPECT_EQ(r.status, 126) << r.err;
    EXPECT_TRUE(contains(r.err, "stopped past the compile memory limit of 1 bytes")) << r.err;
    EXPECT_TRUE(contains(r.err, " function ")) << r.err;
    EXPECT_EQ(entries(), 0U);
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"compile", "--jobs", "0", ok}, std::vector<std::string>{"compile", "-j", "x", ok},
        std::vector<std::string>{"compile", "-j0", ok}, std::vector<std::string>{"compile", "-jx", ok},
        std::vector<std::string>{"compile", "--compile-timeout", "soon", ok},
        std::vector<std::string>{"compile", "--compile-memory", "lots", ok},
        std::vector<std::string>{"compile", "-W", "fuel=1", ok}}) {
    EXPECT_EQ(sprawl(args, {}, false, env).status, 128) << args[1];
  }
  // Within the limits: written, with what it cost (one partition: one thread, whatever --jobs).
  auto r = sprawl({"compile", "--jobs", "2", "--compile-timeout", "10m", "--compile-memory", "4G", ok}, {}, false, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "1 of 1 functions")) << r.out;
  EXPECT_TRUE(contains(r.out, " on 1 thread, ")) << r.out;
  EXPECT_EQ(entries(), 3U);  // both variants, and the plugin's key parts (code_cache.cpp)
  auto help = sprawl({"compile", "--help"});
  for (const char* word : {"--compile-timeout DURATION", "--compile-memory BYTES", "-j, --jobs N",
                           "-W compile-timeout=DURATION,compile-memory=BYTES,jobs=N", "default 10m plus 2m per MB", "default 4G"})
    EXPECT_TRUE(contains(help.out, word)) << word;
}

// A run that compiles nothing never loads the compiled tier's plugin, nor libLLVM with it (the
// dynamic loader's own trace says what it mapped); a run that needs it names every place it
// looked when the plugin is not there, and auto then interprets (docs/compiled-tier.md, "Linkage").
TEST(Cli, OnlyARunThatCompilesLoadsTheCompilerPlugin) {
  TempDir dir;
  const auto ok = dir.write("ok.wat", test::kOkGuest).string();
  const std::string cache = "SPRAWLING_CACHE_DIR=" + (dir.path() / "code").string();
  for (const char* tier : {"auto", "interpret"}) {
    auto result = sprawl({"run", "--tier", tier, ok}, {}, false, {cache, "LD_DEBUG=files"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(result.out, "ok\n");
    EXPECT_TRUE(contains(result.err, "libc.so")) << "the loader's trace is there: " << result.err;
    EXPECT_FALSE(contains(result.err, "libLLVM")) << tier << ": " << result.err;
    EXPECT_FALSE(contains(result.err, "libsprawling_jit")) << tier << ": " << result.err;
  }
#if SPRAWLING_WITH_JIT
  auto compiled = sprawl({"run", "--tier", "compile", ok}, {}, false, {cache, "LD_DEBUG=files"});
  EXPECT_EQ(compiled.status, 0) << compiled.err;
  EXPECT_TRUE(contains(compiled.err, "libsprawling_jit.so")) << compiled.err;
  EXPECT_TRUE(contains(compiled.err, "libLLVM")) << compiled.err;

  const std::string missing = (dir.path() / "missing" / "libsprawling_jit.so").string();
  const std::string not_a_plugin = dir.write("not-a-plugin.so", "not an ELF file").string();
  for (const std::string& plugin : {missing, not_a_plugin}) {
    const std::vector<std::string> env{cache, "SPRAWLING_JIT_PLUGIN=" + plugin, "SPRAWLING_JIT_STATS=1"};
    auto run = sprawl({"run", "--tier", "compile", ok}, {}, false, env);
    EXPECT_EQ(run.status, 127) << run.err;
    EXPECT_TRUE(contains(run.err, "E_TOOL_UNAVAILABLE")) << run.err;
    EXPECT_TRUE(contains(run.err, "'" + plugin + "'")) << run.err;
    auto precompiled = sprawl({"compile", ok}, {}, false, env);
    EXPECT_EQ(precompiled.status, 127) << precompiled.err;
    EXPECT_TRUE(contains(precompiled.err, "'" + plugin + "'")) << precompiled.err;
  }
  EXPECT_TRUE(contains(sprawl({"run", "--tier", "compile", ok}, {}, false,
                              {cache, "SPRAWLING_JIT_PLUGIN=" + missing}).err, "not found"));

  // With an entry in the cache, auto runs its machine code linked by the engine: no plugin, no
  // libLLVM (the plugin is not even there). Told to link with LLVM's linker, it needs the plugin
  // to check the entry, and without the plugin it interprets and says why.
  ASSERT_EQ(sprawl({"compile", ok}, {}, false, {cache}).status, 0);
  auto warm = sprawl({"run", ok}, {}, false,
                     {cache, "SPRAWLING_JIT_PLUGIN=" + missing, "SPRAWLING_JIT_STATS=1", "LD_DEBUG=files"});
  EXPECT_EQ(warm.status, 0) << warm.err;
  EXPECT_EQ(warm.out, "ok\n");
  EXPECT_TRUE(contains(warm.err, "1 of 1 functions loaded from the code cache")) << warm.err;
  EXPECT_TRUE(contains(warm.err, "(by the engine)")) << warm.err;
  EXPECT_FALSE(contains(warm.err, "libLLVM")) << warm.err;
  EXPECT_FALSE(contains(warm.err, "libsprawling_jit")) << warm.err;
  // --tier compile too, fuel on or off, when the cache holds the variant it runs.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"run", "--tier", "compile", ok},
                                               std::vector<std::string>{"run", "--tier", "compile", "--fuel", "100000", ok}}) {
    auto compiled_warm = sprawl(args, {}, false,
                                {cache, "SPRAWLING_JIT_PLUGIN=" + missing, "SPRAWLING_JIT_STATS=1", "LD_DEBUG=files"});
    EXPECT_EQ(compiled_warm.status, 0) << compiled_warm.err;
    EXPECT_EQ(compiled_warm.out, "ok\n");
    EXPECT_TRUE(contains(compiled_warm.err, "(by the engine)")) << compiled_warm.err;
    EXPECT_FALSE(contains(compiled_warm.err, "libLLVM")) << compiled_warm.err;
  }
  auto refused = sprawl({"run", ok}, {}, false,
                        {cache, "SPRAWLING_JIT_PLUGIN=" + missing, "SPRAWLING_JIT_STATS=1", "SPRAWLING_JIT_LINKER=llvm"});
  EXPECT_EQ(refused.status, 0) << refused.err;
  EXPECT_EQ(refused.out, "ok\n");
  EXPECT_TRUE(contains(refused.err, "sprawl jit: auto: entry ")) << refused.err;
  EXPECT_TRUE(contains(refused.err, missing)) << refused.err;
  auto loaded = sprawl({"run", ok}, {}, false, {cache, "SPRAWLING_JIT_STATS=1", "SPRAWLING_JIT_LINKER=llvm"});
  EXPECT_TRUE(contains(loaded.err, "1 of 1 functions loaded from the code cache")) << loaded.err;
  EXPECT_TRUE(contains(loaded.err, "(by LLVM's JITLink)")) << loaded.err;
#endif
}

// Tier-up under auto (docs/compiled-tier.md "Tier-up"): with a threshold of one call, _start is
// compiled in the background while it runs and the process ends with the compilation in flight
// or done (sprawl leaves without waiting for it, or stops the idle thread); the exit status, the
// output and the fuel are the interpreter's. (Before sprawl did so, a compilation in flight at
// exit crashed in LLVM's destroyed statics.)
TEST(Cli, TierUpKeepsTheInterpretersOutputAndFuelAndEndsCleanly) {
  TempDir dir;
  const auto ok = dir.write("ok.wat", test::kOkGuest).string();
  const std::vector<std::string> env{"SPRAWLING_CACHE_DIR=" + (dir.path() / "code").string(), "SPRAWLING_JIT_STATS=1",
                                     "SPRAWLING_JIT_TIER_UP_CALLS=1"};
  auto interpreted = sprawl({"run", "--tier", "interpret", "--fuel", "100000", "--json", "-", ok}, {}, false, env);
  ASSERT_EQ(interpreted.status, 0) << interpreted.err;
  const auto at = interpreted.err.find("\"fuel_consumed\":");
  ASSERT_NE(at, std::string::npos) << interpreted.err;
  const std::string fuel = interpreted.err.substr(at, interpreted.err.find(',', at) - at);
  for (int i = 0; i < 3; ++i) {
    auto tiered = sprawl({"run", "--fuel", "100000", "--json", "-", ok}, {}, false, env);
    EXPECT_EQ(tiered.status, 0) << tiered.err;
    EXPECT_EQ(tiered.out, "ok\n");
    EXPECT_TRUE(contains(tiered.err, fuel)) << tiered.err;
  }
  auto off = sprawl({"run", "-C", "tier-up=n", ok}, {}, false, env);
  EXPECT_EQ(off.out, "ok\n");
  EXPECT_FALSE(contains(off.err, "sprawl jit: tier-up")) << off.err;
  EXPECT_FALSE(contains(off.err, "in the background")) << off.err;
  EXPECT_EQ(sprawl({"run", "--tier-up", "n", ok}, {}, false, env).out, "ok\n");
  auto bad = sprawl({"run", "--tier-up", "maybe", ok}, {}, false, env);
  EXPECT_EQ(bad.status, 128);
  EXPECT_TRUE(contains(bad.err, "tier-up='maybe': expected y or n")) << bad.err;
}

TEST(Cli, DeadlineIs136InBothSpellings) {
  TempDir dir;
  const auto wasm = dir.write("loop.wat", kLoop).string();
  EXPECT_EQ(sprawl({"run", "--timeout", "100ms", wasm}).status, 136);
  EXPECT_EQ(sprawl({"run", "-W", "timeout=100ms", wasm}).status, 136);
}

TEST(Cli, DeniedImportIs133NamingTheErrorCode) {
  TempDir dir;
  auto result = sprawl({"run", dir.write("s.wat", R"((module
    (import "wasi_snapshot_preview1" "sock_connect" (func (param i32) (result i32)))
    (memory (export "memory") 1) (func (export "_start"))))").string()});
  EXPECT_EQ(result.status, 133);
  EXPECT_TRUE(contains(result.err, "E_SANDBOX_DENIED")) << result.err;
  EXPECT_TRUE(contains(result.err, "sock_connect")) << result.err;
}

TEST(Cli, InvalidModuleIs132) {
  TempDir dir;
  auto result = sprawl({"run", dir.write("bad.wasm", std::string("\0asm\x02\0\0\0", 8)).string()});
  EXPECT_EQ(result.status, 132);
  EXPECT_TRUE(contains(result.err, "E_INVALID_MODULE")) << result.err;
}

TEST(Cli, ExitCodeAbove125IsAHostFault126) {
  TempDir dir;
  auto result = sprawl({"run", dir.write("e.wat", exit_guest(200)).string()});
  EXPECT_EQ(result.status, 126);
  EXPECT_TRUE(contains(result.err, "E_SANDBOX_HOST")) << result.err;
}

TEST(Cli, UsageErrorsAre128WithOneClearLineAndNothingRuns) {
  TempDir dir;
  const auto wasm = dir.write("ok.wat", test::kOkGuest).string();
  struct Case {
    std::vector<std::string> args;
    std::string_view says;
  };
  const std::vector<Case> cases = {
      {{"run"}, "missing MODULE"},
      {{"run", "--bogus", wasm}, "unknown option '--bogus'"},
      {{"run", "--dir", "a::b::rx", wasm}, "expected --dir HOST"},
      {{"run", "--dir", (dir.path() / "absent").string() + "::/x", wasm}, "does not exist"},
      {{"run", "--fuel", "lots", wasm}, "expected a whole number"},
      {{"run", "--timeout", "soon", wasm}, "expected a duration"},
      {{"run", (dir.path() / "absent.wasm").string()}, "does not exist"},
      {{"frobnicate"}, "unknown command"},
  };
  for (const auto& c : cases) {
    auto result = sprawl(c.args);
    EXPECT_EQ(result.status, 128) << c.says;
    EXPECT_TRUE(contains(result.err, c.says)) << c.says << " / got: " << result.err;
    EXPECT_TRUE(result.out.empty()) << c.says;
  }
}

TEST(Cli, StdoutAndStderrAreStreamedInTheOrderTheGuestWrites) {
  TempDir dir;
  auto result = sprawl({"run", dir.write("i.wat", kInterleave).string()}, {}, /*merge=*/true);
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.out, "abc");
}

TEST(Cli, StdinIsPassedThroughAndStdinFileWorks) {
  TempDir dir;
  const auto wasm = dir.write("cat.wat", kCat).string();
  std::string big(100'000, 'z');
  big += "end";
  auto piped = sprawl({"run", wasm}, big);
  EXPECT_EQ(piped.status, 0);
  EXPECT_EQ(piped.out, big);
  const auto file = dir.write("in.txt", "from a file");
  auto from_file = sprawl({"run", "--stdin", file.string(), wasm}, "ignored");
  EXPECT_EQ(from_file.out, "from a file");
}

// stdin is streamed on demand, under --timeout: a pipe that stays open and silent ends the run
// at the deadline (136) instead of blocking the CLI before the guest even starts.
TEST(Cli, StdinThatNeverClosesStopsAtTheTimeout) {
  TempDir dir;
  const auto wasm = dir.write("cat.wat", kCat).string();
  int in[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(SPRAWL_BINARY, SPRAWL_BINARY, "run", "--timeout", "300ms", wasm.c_str(), static_cast<char*>(nullptr));
    ::_exit(255);
  }
  ::close(in[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(in[1]);  // held open (and silent) until the CLI ended
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 136);
  EXPECT_GE(elapsed, 0.25);
  EXPECT_LT(elapsed, 5.0);
}

// A gigabyte piped to a guest that never reads it costs the host nothing: the CLI reads no
// stdin ahead (before, it read it all: 2 GB of host memory). The bound is the largest resident
// set of any process of the pipeline (head's is tiny).
TEST(Cli, AGigabyteOfStdinNeverReadCostsNoHostMemory) {
  TempDir dir;
  const auto wasm = dir.write("exit0.wat", exit_guest(0)).string();
  const std::string command = "head -c 1073741824 /dev/zero | '" + std::string(SPRAWL_BINARY) + "' run '" + wasm + "'";
  // A fresh process runs the pipeline, so that RUSAGE_CHILDREN counts this pipeline only.
  int report[2];
  ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int rc = std::system(command.c_str());
    struct rusage usage {};
    ::getrusage(RUSAGE_CHILDREN, &usage);
    const long figures[2] = {rc, usage.ru_maxrss};
    [[maybe_unused]] const ssize_t sent = ::write(report[1], figures, sizeof figures);
    ::_exit(0);
  }
  ::close(report[1]);
  long figures[2] = {-1, -1};
  ASSERT_EQ(::read(report[0], figures, sizeof figures), static_cast<ssize_t>(sizeof figures));
  ::close(report[0]);
  ::waitpid(pid, nullptr, 0);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(figures[0], 0) << "the pipeline's status";
  EXPECT_GT(figures[1], 0);
  EXPECT_LT(figures[1], 256 * 1024) << "KiB of resident memory";  // ru_maxrss is in KiB
  EXPECT_LT(elapsed, 20.0);
}

TEST(Cli, ReadOnlyDirRefusesCreationAndWritableDirAllowsIt) {
  TempDir dir;
  TempDir data;
  const auto wasm = dir.write("create.wat", kCreate).string();
  auto ro = sprawl({"run", "--dir", data.path().string() + "::/data::ro", wasm});
  EXPECT_EQ(ro.status, 63);  // EPERM, as Wasmtime reports a write refused by a read-only mount
  EXPECT_FALSE(std::filesystem::exists(data.path() / "new.txt"));
  auto rw = sprawl({"run", "--dir", data.path().string() + "::/data", wasm});
  EXPECT_EQ(rw.status, 0);
  EXPECT_TRUE(std::filesystem::exists(data.path() / "new.txt"));
}

TEST(Cli, EnvIsSetExplicitlyOrPassedThroughAndNothingElseIsInherited) {
  TempDir dir;
  const auto wasm = dir.write("env.wat", kEnvCount).string();
  EXPECT_EQ(sprawl({"run", wasm}, {}, false, {"SPRAWL_TEST_HOST_VAR=1"}).status, 0);
  EXPECT_EQ(sprawl({"run", "--env", "A=1", "--env", "B=2", wasm}).status, 2);
  EXPECT_EQ(sprawl({"run", "--env", "SPRAWL_TEST_HOST_VAR", wasm}, {}, false, {"SPRAWL_TEST_HOST_VAR=1"}).status, 1);
  EXPECT_EQ(sprawl({"run", "--env", "SPRAWL_TEST_UNSET_VAR", wasm}).status, 0);
}

TEST(Cli, JsonReportGoesToStderrOrAFile) {
  TempDir dir;
  const auto wasm = dir.write("ok.wat", test::kOkGuest).string();
  auto to_stderr = sprawl({"run", "--fuel", "1000", "--json", "-", wasm});
  EXPECT_EQ(to_stderr.status, 0);
  EXPECT_TRUE(contains(to_stderr.err, R"("exit":"success")")) << to_stderr.err;
  EXPECT_TRUE(contains(to_stderr.err, R"("fuel_consumed":12)")) << to_stderr.err;
  EXPECT_TRUE(contains(to_stderr.err, R"("stdout_bytes":3)")) << to_stderr.err;
  const auto report = dir.path() / "report.json";
  auto to_file = sprawl({"run", "--fuel", "1000", "--json", report.string(), dir.write("l.wat", kLoop).string()});
  EXPECT_EQ(to_file.status, 135);
  std::ifstream in(report);
  std::stringstream json;
  json << in.rdbuf();
  EXPECT_TRUE(contains(json.str(), R"("exit":"fuel_exhausted")")) << json.str();
}

TEST(Cli, MaxMemorySizeCapsGrowth) {
  TempDir dir;
  const auto wasm = dir.write("bomb.wat", R"((module
    (import "wasi_snapshot_preview1" "proc_exit" (func $e (param i32)))
    (memory (export "memory") 1)
    (func (export "_start")
      (block $done (loop $g (br_if $done (i32.eq (memory.grow (i32.const 1)) (i32.const -1))) (br $g)))
      (call $e (i32.const 3)))))").string();
  auto result = sprawl({"run", "--max-memory-size", "2M", "--json", "-", wasm});
  EXPECT_EQ(result.status, 3);
  EXPECT_TRUE(contains(result.err, R"("peak_memory_bytes":2097152)")) << result.err;
  EXPECT_EQ(sprawl({"run", "-W", "max-memory-size=2097152", wasm}).status, 3);
}

TEST(Cli, HostcallFuelLimitsWhatOneWasiCallTakes) {
  // Writes 100 bytes to stdout in one fd_write and exits with its errno.
  TempDir dir;
  const auto wasm = dir.write("write100.wat", R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "proc_exit" (func $e (param i32)))
    (memory (export "memory") 1)
    (func (export "_start")
      (i32.store (i32.const 0) (i32.const 1024))
      (i32.store (i32.const 4) (i32.const 100))
      (call $e (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))))").string();
  auto fits = sprawl({"run", wasm});
  EXPECT_EQ(fits.status, 0);
  EXPECT_EQ(fits.out.size(), 100u);
  auto refused = sprawl({"run", "-S", "hostcall-fuel=100", wasm});  // 8 (the iovec) + 100 > 100
  EXPECT_EQ(refused.status, 48);  // ENOMEM
  EXPECT_TRUE(refused.out.empty());
  EXPECT_EQ(sprawl({"run", "--hostcall-fuel", "108", wasm}).status, 0);
}

TEST(Cli, ValidateSaysOkOrTheFirstErrorWithItsOffset) {
  TempDir dir;
  const auto good = dir.write("ok.wat", test::kOkGuest).string();
  const auto bad = dir.write("bad.wasm", std::string("\0asm\x01\0\0\0\x0a\x01", 10)).string();
  auto ok = sprawl({"validate", good});
  EXPECT_EQ(ok.status, 0);
  EXPECT_EQ(ok.out, good + ": ok\n");
  auto fail = sprawl({"validate", good, bad});
  EXPECT_EQ(fail.status, 132);
  EXPECT_TRUE(contains(fail.out, bad + ": malformed at byte 0x")) << fail.out;
}

TEST(Cli, WastRunsAScriptAndCountsPassesAndFailures) {
  TempDir dir;
  const auto wast = dir.write("t.wast", R"((module (func (export "add") (param i32 i32) (result i32)
      (i32.add (local.get 0) (local.get 1))))
    (assert_return (invoke "add" (i32.const 1) (i32.const 2)) (i32.const 3))
    (assert_return (invoke "add" (i32.const 1) (i32.const 2)) (i32.const 4))
    (assert_trap (module (func $f unreachable) (start $f)) "unreachable")
  )");
  auto result = sprawl({"wast", wast.string()});
  EXPECT_EQ(result.status, 1);
  EXPECT_TRUE(contains(result.out, "3 passed, 1 failed")) << result.out;  // the module command counts too
}

TEST(Cli, WastRunsOnEitherTierAndMetered) {
  TempDir dir;
  const auto wast = dir.write("t.wast", R"((module (func (export "f") (param i32) (result i32)
      (if (result i32) (local.get 0) (then (call 0 (i32.sub (local.get 0) (i32.const 1)))) (else (i32.const 7)))))
    (assert_return (invoke "f" (i32.const 100)) (i32.const 7))
  )");
  for (const char* tier : {"interpret", "compile"}) {
    if (std::string_view(tier) == "compile" && !runtime::wasm_sandbox_has_compiled_tier()) {
      auto refused = sprawl({"wast", "--tier", tier, wast.string()});
      EXPECT_EQ(refused.status, 128);
      EXPECT_TRUE(contains(refused.err, "no compiled tier")) << refused.err;
      continue;
    }
    for (bool metered : {false, true}) {
      std::vector<std::string> args = {"wast", "--tier", tier};
      if (metered) args.emplace_back("--metered");
      args.push_back(wast.string());
      auto result = sprawl(args);
      EXPECT_EQ(result.status, 0) << tier << metered << result.out;
      EXPECT_TRUE(contains(result.out, "2 passed, 0 failed")) << result.out;
    }
  }
  auto bad = sprawl({"wast", "--tier", "jit", wast.string()});
  EXPECT_EQ(bad.status, 128);
  EXPECT_TRUE(contains(bad.err, "--tier takes interpret or compile, not 'jit'")) << bad.err;
}

TEST(Cli, WastModuleDefinitionsAreInstantiatedEachTimeAfresh) {
  // 3.0 scripts: a definition is compiled, not instantiated (its start function does not run);
  // each `module instance` is a new instance with its own state, the latest one current.
  TempDir dir;
  const auto wast = dir.write("d.wast", R"((module definition $M
      (global $g (mut i32) (i32.const 0))
      (func (export "bump") (result i32) (global.set $g (i32.add (global.get $g) (i32.const 1))) (global.get $g)))
    (module instance $I1 $M)
    (assert_return (invoke "bump") (i32.const 1))
    (assert_return (invoke "bump") (i32.const 2))
    (module instance $I2 $M)
    (assert_return (invoke "bump") (i32.const 1))
    (assert_return (invoke $I1 "bump") (i32.const 3))
    (module definition (func $f unreachable) (start $f))
    (assert_return (invoke $I2 "bump") (i32.const 2))
    (module instance $I3 $Nowhere)
  )");
  auto result = sprawl({"wast", wast.string()});
  EXPECT_EQ(result.status, 1);
  EXPECT_TRUE(contains(result.out, "9 passed, 1 failed")) << result.out;
  EXPECT_TRUE(contains(result.out, ":12: module instance: FAILED: no module definition $Nowhere")) << result.out;
}

TEST(Cli, WastValidatesAs30UnlessToldWasm2) {
  // 3.0 accepts an initialiser reading a defined global; 2.0 (--wasm2) reports it unknown.
  TempDir dir;
  const auto wast = dir.write("g.wast", R"((assert_invalid
      (module (global i32 (i32.const 0)) (global i32 (global.get 0))) "unknown global"))");
  auto as30 = sprawl({"wast", wast.string()});
  EXPECT_EQ(as30.status, 1);
  EXPECT_TRUE(contains(as30.out, "0 passed, 1 failed")) << as30.out;
  auto as20 = sprawl({"wast", "--wasm2", wast.string()});
  EXPECT_EQ(as20.status, 0) << as20.out;
  EXPECT_TRUE(contains(as20.out, "1 passed, 0 failed")) << as20.out;
}

TEST(Cli, PythonWithoutTheArtifactSaysHowToBuildItAnd127) {
  auto result = sprawl({"python", "-c", "print(1)"}, {}, false,
                       {"SPRAWLING_PYTHON_WASM=/nonexistent/python.wasm", "SPRAWLING_PYTHON_LIB=/nonexistent"});
  EXPECT_EQ(result.status, 127);
  EXPECT_TRUE(contains(result.err, "E_TOOL_UNAVAILABLE")) << result.err;
  EXPECT_TRUE(contains(result.err, "scripts/build-python-wasi")) << result.err;
}

// [snapshots] Skips when the artifact is absent (the command says 127 then).
TEST(Cli, PythonStartsFromASnapshotByDefaultAndColdWhenAskedOrWhenItMust) {
  TempDir dir;
  const std::vector<std::string> env{"SPRAWLING_SNAPSHOT_DIR=" + (dir.path() / "snapshots").string()};
  auto python = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"python", "--json", "-"});
    return sprawl(args, {}, false, env);
  };
  const auto first = python({"-c", "print(6 * 7)"});
  if (first.status == 127) GTEST_SKIP() << "no CPython-for-WASI artifact: " << first.err;
  // The first job builds the snapshot file, the second starts from it.
  for (const auto& result : {first, python({"-c", "print(6 * 7)"})}) {
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(result.out, "42\n");
    EXPECT_TRUE(contains(result.err, "\"from_snapshot\":true")) << result.err;
  }
  // Asked to start cold, or a form the snapshot cannot honour: the same answer, cold.
  for (const auto& args : std::vector<std::vector<std::string>>{{"--no-snapshot", "-c", "print(6 * 7)"},
                                                                 {"-X", "dev", "-c", "print(6 * 7)"},
                                                                 {"--env", "PYTHONHASHSEED=1", "-c", "print(6 * 7)"}}) {
    const auto result = python(args);
    EXPECT_EQ(result.status, 0) << args[0] << ": " << result.err;
    EXPECT_EQ(result.out, "42\n") << args[0];
    EXPECT_TRUE(contains(result.err, "\"from_snapshot\":false")) << args[0] << ": " << result.err;
  }
}

}  // namespace
}  // namespace sprawling::cli
