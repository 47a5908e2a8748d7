// Embedding the sandbox from C++ (<sprawling/runtime/...>, sprawling::runtime): runs the wordcount
// guest on a file of a host folder mounted read-only, with a fuel budget, and prints what came out.
//
//   embed_cpp wordcount.wasm examples/data     (guest and folder as arguments)
#include <sprawling/runtime/wasm_sandbox.hpp>

#include <chrono>
#include <cstdio>
#include <variant>

namespace rt = sprawling::runtime;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s GUEST.wasm FOLDER\n", argv[0]);
    return 2;
  }
  rt::WasmSandbox sandbox(rt::SandboxConfig{.timeout = std::chrono::seconds(5)});  // 5 s of wall clock at most
  const rt::SandboxJob job{.wasm = argv[1],
                           .argv = {"wordcount", "/data/poem.txt"},
                           .env = {},
                           .stdin_bytes = {},
                           .mounts = {rt::Mount{.host = argv[2], .guest = "/data", .writable = false}},
                           .fuel = rt::Fuel{100'000'000}};

  const auto outcome = sandbox.run(job);
  if (!outcome) {
    // The job did not run: a stable code to act on (error.code), a message for people.
    std::fprintf(stderr, "error: %s\n", outcome.error().to_string().c_str());
    return 1;
  }
  // The guest ran: its output, and how it ended.
  std::fwrite(outcome->stdout_bytes.data(), 1, outcome->stdout_bytes.size(), stdout);
  if (std::holds_alternative<rt::Success>(outcome->exit)) {
    std::printf("exit: success");
  } else if (const auto* failure = std::get_if<rt::Failure>(&outcome->exit)) {
    std::printf("exit: failure %llu", static_cast<unsigned long long>(failure->code));
  } else if (std::holds_alternative<rt::FuelExhausted>(outcome->exit)) {
    std::printf("exit: fuel exhausted");
  } else if (const auto* trap = std::get_if<rt::Trap>(&outcome->exit)) {
    std::printf("exit: trap (%s)", trap->message.c_str());
  }
  std::printf(", fuel used: %llu\n", static_cast<unsigned long long>(outcome->stats->fuel_consumed));
  return std::holds_alternative<rt::Success>(outcome->exit) ? 0 : 1;
}
