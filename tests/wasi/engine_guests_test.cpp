// C guests (tests/wasi/guests/*.c, compiled to wasm32-wasi with clang-14 + wasi-libc at build
// time) run through our engine: compile, link every WASI function, instantiate, invoke _start.
#include "wasi_test_support.hpp"

#include "wasm/runtime/runtime.hpp"
#include "wasm/runtime/linker.hpp"
#include "wasm/text/wat.hpp"

#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>

#ifndef SPRAWLING_WASI_GUEST_DIR
#error "SPRAWLING_WASI_GUEST_DIR must name the folder of the compiled guests"
#endif

namespace sprawling::wasi::test {
namespace {

struct GuestRun {
  std::optional<std::uint32_t> exit_code;  // proc_exit's code, or 0 when _start returned
  std::optional<wasm::Trap> trap;          // any other ending
  std::string out;
  std::string err;
};

// Links every WASI function (so a missing one is the engine's "unknown import") and runs _start.
GuestRun run_module(std::string_view name, std::span<const std::uint8_t> bytes, WasiConfig config,
                    std::string* link_error = nullptr) {
  GuestRun run;
  auto compiled = wasm::compile(bytes);
  if (!compiled) {
    ADD_FAILURE() << "compile " << name << ": " << compiled.error().message;
    return run;
  }
  auto context = WasiContext::create(std::move(config));
  if (!context) {
    ADD_FAILURE() << context.error().message;
    return run;
  }
  wasm::Store store;
  wasm::Linker linker;
  for (const auto& def : WasiContext::functions()) {
    linker.define(std::string(def.module), std::string(def.name),
                  store.add_host_function(def.type, def.fn, context->get(), std::string(def.name)));
  }
  auto imports = linker.resolve((*compiled)->module());
  if (!imports) {
    if (link_error != nullptr) {
      *link_error = imports.error().message;
    } else {
      ADD_FAILURE() << "link " << name << ": " << imports.error().message;
    }
    return run;
  }
  store.set_budget(wasm::ExecutionBudget{std::uint64_t{2'000'000'000}, std::nullopt});
  auto instance = store.instantiate(*compiled, *imports);
  if (!instance) {
    ADD_FAILURE() << "instantiate " << name << ": " << instance.error().message;
    return run;
  }
  auto start = (*instance)->find_export("_start");
  auto* func = start ? std::get_if<wasm::FuncInst*>(&*start) : nullptr;
  if (func == nullptr) {
    ADD_FAILURE() << name << " has no _start";
    return run;
  }
  auto result = store.invoke(*func, {});
  if (result) {
    run.exit_code = 0;
  } else if (result.error().kind == wasm::TrapKind::Exit) {
    run.exit_code = result.error().exit_code;
  } else {
    run.trap = result.error();
  }
  auto out = (*context)->take_stdout();
  auto err = (*context)->take_stderr();
  run.out.assign(out.begin(), out.end());
  run.err.assign(err.begin(), err.end());
  return run;
}

GuestRun run_guest(std::string_view name, WasiConfig config) {
  const fs::path file = fs::path(SPRAWLING_WASI_GUEST_DIR) / (std::string(name) + ".wasm");
  std::ifstream in(file, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing guest " << file;
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return run_module(name, bytes, std::move(config));
}

GuestRun run_wat(std::string_view wat, WasiConfig config, std::string* link_error = nullptr) {
  auto bytes = wasm::text::wat_to_binary(wat);
  if (!bytes) {
    ADD_FAILURE() << bytes.error().to_string();
    return {};
  }
  return run_module("wat guest", *bytes, std::move(config), link_error);
}

TEST(WasiGuests, HelloArgsEnvStdioAndExitCode) {
  WasiConfig config;
  config.args = {"hello", "7"};
  config.env = {{"GREETING", "bonjour"}};
  GuestRun run = run_guest("hello", std::move(config));
  EXPECT_FALSE(run.trap) << run.trap->message;
  EXPECT_EQ(run.exit_code, 7u);
  EXPECT_EQ(run.out, "argc=2\nargv[0]=hello\nargv[1]=7\nGREETING=bonjour\n");
  EXPECT_EQ(run.err, "to stderr\n");
}

TEST(WasiGuests, HelloReturningZeroEndsNormally) {
  WasiConfig config;
  config.args = {"hello"};
  GuestRun run = run_guest("hello", std::move(config));
  EXPECT_EQ(run.exit_code, 0u);
  EXPECT_NE(run.out.find("GREETING=(unset)"), std::string::npos);
}

TEST(WasiGuests, HelloLargeExitCodesPassThrough) {
  WasiConfig config;
  config.args = {"hello", "200"};
  GuestRun run = run_guest("hello", std::move(config));
  EXPECT_EQ(run.exit_code, 200u);  // the adapter, not the WASI host, decides what ≥ 126 means
}

TEST(WasiGuests, StdinToStdoutSleepClockAndRandom) {
  WasiConfig config;
  config.args = {"stdio"};
  const std::string input = "Hello, guest!\nline two";
  config.stdin_bytes.assign(input.begin(), input.end());
  GuestRun run = run_guest("stdio", std::move(config));
  EXPECT_EQ(run.exit_code, 0u);
  EXPECT_EQ(run.out, "HELLO, GUEST!\nLINE TWO");
  EXPECT_EQ(run.err, "read 22 bytes, slept enough, random ok\n");
}

TEST(WasiGuests, StdoutCapCutsTheGuestOff) {
  WasiConfig config;
  config.args = {"stdio"};
  config.stdin_bytes.assign(10000, 'a');
  config.stdout_cap = 100;
  GuestRun run = run_guest("stdio", std::move(config));
  EXPECT_FALSE(run.trap);
  EXPECT_EQ(run.out, std::string(100, 'A'));  // what fitted; the rest was refused with EIO
}

TEST(WasiGuests, FileWorkAndReadOnlyMount) {
  TempTree tree;
  tree.dir("rw");
  tree.dir("ro");
  tree.file("ro/input.txt", "read me");
  WasiConfig config;
  config.args = {"files"};
  config.preopens.push_back({tree.path("rw"), "/rw", true});
  config.preopens.push_back({tree.path("ro"), "/ro", false});
  const std::string ro_before = tree_fingerprint(tree.path("ro"));
  GuestRun run = run_guest("files", std::move(config));
  EXPECT_FALSE(run.trap) << run.trap->message;
  EXPECT_EQ(run.exit_code, 0u) << run.out;
  EXPECT_EQ(run.out, "files ok\n");
  EXPECT_EQ(tree_fingerprint(tree.path("ro")), ro_before);
  EXPECT_FALSE(tree.exists("rw/stolen.txt"));
  EXPECT_FALSE(tree.exists("rw/alias.txt"));
}

TEST(WasiGuests, EscapeAttemptsThroughLibcAreAllRefused) {
  TempTree tree;
  tree.dir("rw");
  tree.dir("outside");
  tree.file("outside/secret.txt", "secret");
  WasiConfig config;
  config.args = {"escape"};
  config.preopens.push_back({tree.path("rw"), "/rw", true});
  const std::string outside_before = tree_fingerprint(tree.path("outside"));
  GuestRun run = run_guest("escape", std::move(config));
  EXPECT_EQ(run.exit_code, 0u) << run.out;
  EXPECT_NE(run.out.find("0 leaks"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("LEAK"), std::string::npos) << run.out;
  EXPECT_EQ(tree_fingerprint(tree.path("outside")), outside_before);
}

TEST(WasiGuests, LargeDirectoryListsCompletelyAcrossManyReaddirCalls) {
  TempTree tree;
  tree.dir("big");
  unsigned long name_bytes = 3;  // "." and ".."
  for (int i = 0; i < 700; ++i) {
    const std::string name = "entry-" + std::to_string(i) + "-" + std::string(40, 'x');
    tree.file("big/" + name, "");
    name_bytes += name.size();
  }
  WasiConfig config;
  config.args = {"listdir", "/data/big"};
  config.preopens.push_back({tree.root(), "/data", false});
  GuestRun run = run_guest("listdir", std::move(config));
  EXPECT_EQ(run.exit_code, 0u) << run.out << run.err;
  EXPECT_EQ(run.out, "total=702 entries=700 dot=1 dotdot=1 name_bytes=" + std::to_string(name_bytes) + "\n");
}

TEST(WasiGuests, DeterministicModeReproducesARunByteForByte) {
  auto run_with_seed = [](std::uint64_t seed) {
    WasiConfig config;
    config.args = {"determinism"};
    config.stdin_bytes = {'x'};
    config.deterministic = true;
    config.random_seed = seed;
    return run_guest("determinism", std::move(config));
  };
  const auto start = std::chrono::steady_clock::now();
  GuestRun a = run_with_seed(42);
  GuestRun b = run_with_seed(42);
  GuestRun c = run_with_seed(43);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));  // the 1 s sleeps are virtual
  EXPECT_EQ(a.exit_code, 0u);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_NE(a.out.find("realtime=946684800000000000 monotonic=1000000\n"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("slept=1001000000\n"), std::string::npos) << a.out;  // the sleep, plus one clock step
  EXPECT_NE(a.out.find("poll=1 revents=1\n"), std::string::npos) << a.out;
}

// ---------------------------------------------------------------- WAT guests (finer control)

// Opens "data.txt" in fd 3 and copies it to stdout; if path_open fails, proc_exit(7).
constexpr std::string_view kCatWat = R"((module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "data.txt")
  (func (export "_start")
    (if (call $path_open (i32.const 3) (i32.const 1) (i32.const 16) (i32.const 8) (i32.const 0)
                         (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 32))
      (then (call $proc_exit (i32.const 7))))
    ;; iovec at 64: buf 256, len 100
    (i32.store (i32.const 64) (i32.const 256))
    (i32.store (i32.const 68) (i32.const 100))
    (drop (call $fd_read (i32.load (i32.const 32)) (i32.const 64) (i32.const 1) (i32.const 72)))
    (i32.store (i32.const 68) (i32.load (i32.const 72)))
    (drop (call $fd_write (i32.const 1) (i32.const 64) (i32.const 1) (i32.const 72))))))";

TEST(WasiWatGuests, UngrantedCapabilityIsRefusedAndGrantedOneWorks) {
  GuestRun refused = run_wat(kCatWat, WasiConfig{});
  EXPECT_EQ(refused.exit_code, 7u);
  EXPECT_EQ(refused.out, "");
  TempTree tree;
  tree.file("data.txt", "granted\n");
  GuestRun granted = run_wat(kCatWat, config_with_mount(tree.root(), false));
  EXPECT_EQ(granted.exit_code, 0u);
  EXPECT_EQ(granted.out, "granted\n");
}

TEST(WasiWatGuests, OutOfBoundsPointerTrapsTheGuest) {
  GuestRun run = run_wat(R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
    (memory 1)
    (func (export "_start")
      (i32.store (i32.const 0) (i32.const 65530))
      (i32.store (i32.const 4) (i32.const 100))
      (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))))",
                         WasiConfig{});
  ASSERT_TRUE(run.trap);
  EXPECT_EQ(run.trap->kind, wasm::TrapKind::Host);
  EXPECT_NE(run.trap->message.find("out of bounds"), std::string::npos) << run.trap->message;
  EXPECT_EQ(run.out, "");
}

TEST(WasiWatGuests, ProcExitUnwindsWithItsCode) {
  GuestRun run = run_wat(R"((module
    (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
    (func (export "_start") (call $proc_exit (i32.const 42)) (unreachable))))",
                         WasiConfig{});
  EXPECT_FALSE(run.trap);
  EXPECT_EQ(run.exit_code, 42u);
}

TEST(WasiWatGuests, SocketOpeningImportsDoNotLink) {
  for (const char* name : {"sock_open", "sock_connect", "sock_bind"}) {
    const std::string wat = std::string(R"((module (import "wasi_snapshot_preview1" ")") + name +
                            R"(" (func (param i32 i32 i32) (result i32))) (func (export "_start"))))";
    std::string link_error;
    GuestRun run = run_wat(wat, WasiConfig{}, &link_error);
    EXPECT_FALSE(run.exit_code) << name;
    EXPECT_NE(link_error.find(std::string("wasi_snapshot_preview1::") + name), std::string::npos) << link_error;
  }
}

}  // namespace
}  // namespace sprawling::wasi::test
