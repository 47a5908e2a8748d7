// Every WASI function called thousands of times with hostile arguments (pointers at and past the
// end of memory, huge lengths, junk flags, paths that climb out): the host must never touch memory
// outside the guest's (ASan watches the vector), never change anything outside the writable
// mount, and never leak a host fd.
#include "wasi_test_support.hpp"

#include <random>

namespace sprawling::wasi::test {
namespace {

TEST(WasiRandomCalls, HostileArgumentsNeverEscapeOrOverrun) {
  TempTree world;
  world.dir("outside");
  world.file("outside/secret.txt", "secret");
  world.dir("rw/sub");
  world.file("rw/a.txt", "aaa");
  world.symlink("../outside", "rw/out");
  world.dir("ro/d");
  world.file("ro/r.txt", "read only");
  const std::string outside_before = tree_fingerprint(world.path("outside"));
  const std::string ro_before = tree_fingerprint(world.path("ro"));
  const std::size_t host_fds_before = host_fd_count();
  {
    WasiConfig config;
    config.args = {"fuzz", "arg"};
    config.env = {{"K", "V"}};
    config.stdin_bytes = {'i', 'n'};
    config.deterministic = true;  // poll_oneoff sleeps are virtual
    config.stdout_cap = 4096;
    config.preopens.push_back({world.path("rw"), "/rw", true});
    config.preopens.push_back({world.path("ro"), "/ro", false});
    config.max_fds = 64;
    constexpr std::uint32_t kMemory = 65536;
    FakeGuest guest(std::move(config), kMemory);
    // Paths the fuzzer's pointers may land on.
    const std::vector<std::string> paths = {"a.txt", "../outside/secret.txt", "sub", "/etc/passwd", "out/secret.txt",
                                            "r.txt", "d", "new", "sub/../..", "out"};
    std::vector<std::uint32_t> path_ptrs;
    std::vector<std::uint32_t> path_lens;
    for (const auto& p : paths) {
      path_ptrs.push_back(guest.put(p));
      path_lens.push_back(static_cast<std::uint32_t>(p.size()));
    }
    std::mt19937_64 rng(20261130);
    auto pick_u32 = [&]() -> std::uint64_t {
      switch (rng() % 12) {
        case 0: return rng() % 8;                                  // small fds / counts
        case 1: return path_ptrs[rng() % path_ptrs.size()];        // a real path
        case 2: return path_lens[rng() % path_lens.size()];        // a real length
        case 3: return kMemory - (rng() % 16);                     // at the end
        case 4: return kMemory + (rng() % 16);                     // past the end
        case 5: return 0xFFFFFFFFu - (rng() % 16);                 // wraps
        case 6: return 0x80000000u;
        case 7: return rng() % kMemory;                            // anywhere inside
        case 8: return (rng() % (kMemory / 8)) * 8;                // aligned inside
        case 9: return rng() & 0xFFFFFFFFu;                        // anything
        case 10: return 1u << (rng() % 32);                        // one flag bit
        default: return rng() % 64;
      }
    };
    auto pick_u64 = [&]() -> std::uint64_t {
      switch (rng() % 6) {
        case 0: return 0;
        case 1: return rng() % 4096;
        case 2: return std::uint64_t{1} << 63;
        case 3: return UINT64_MAX;
        case 4: return rng() % (std::uint64_t{1} << 40);
        default: return rng();
      }
    };
    std::size_t traps = 0, exits = 0, errnos = 0, successes = 0;
    for (int round = 0; round < 300; ++round) {
      for (const auto& def : WasiContext::functions()) {
        std::vector<std::uint64_t> args;
        for (wasm::ValType t : def.type.params) args.push_back(t == wasm::ValType::I64 ? pick_u64() : pick_u32());
        std::vector<std::uint64_t> results(def.type.results.size(), 0);
        wasm::HostCall hc{args, results, guest.view(), &guest.context(), {}, 0};
        CallOutcome out;
        out.status = def.fn(hc);
        out.errno_value = results.empty() ? 0 : static_cast<std::uint16_t>(results[0]);
        switch (out.status) {
          case wasm::HostStatus::Trap: ++traps; break;
          case wasm::HostStatus::Exit: ++exits; break;
          case wasm::HostStatus::DeadlineExceeded:
          case wasm::HostStatus::OutOfFuel: ADD_FAILURE() << def.name << " hit a limit this run does not set"; break;
          case wasm::HostStatus::Ok:
            if (out.errno_value == 0) {
              ++successes;
            } else {
              ++errnos;
              EXPECT_LE(out.errno_value, abi::errno_::notcapable) << def.name;
            }
            break;
        }
      }
    }
    // The mix exercised every ending.
    EXPECT_GT(traps, 0u);
    EXPECT_GT(exits, 0u);
    EXPECT_GT(errnos, 0u);
    EXPECT_GT(successes, 0u);
    EXPECT_LE(guest.context().open_fd_count(), 64u);
  }
  EXPECT_EQ(tree_fingerprint(world.path("outside")), outside_before);
  EXPECT_EQ(tree_fingerprint(world.path("ro")), ro_before);
  EXPECT_EQ(host_fd_count(), host_fds_before);
}

}  // namespace
}  // namespace sprawling::wasi::test
