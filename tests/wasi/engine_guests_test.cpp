// C guests (tests/wasi/guests/*.c, compiled to wasm32-wasi with clang-14 + wasi-libc at build
// time) run through our engine: compile, link every WASI function, instantiate, invoke _start.
#include "wasi_test_support.hpp"

#include "wasm/runtime.hpp"

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

GuestRun run_guest(std::string_view name, WasiConfig config) {
  GuestRun run;
  const fs::path file = fs::path(SPRAWLING_WASI_GUEST_DIR) / (std::string(name) + ".wasm");
  std::ifstream in(file, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing guest " << file;
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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
    ADD_FAILURE() << "link " << name << ": " << imports.error().message;
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

}  // namespace
}  // namespace sprawling::wasi::test
