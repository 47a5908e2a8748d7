// Process-level functions called directly: args/environ, clocks (host and deterministic),
// random_get, poll_oneoff, proc_exit/proc_raise, sched_yield and the sock_* refusals.
#include "wasi_test_support.hpp"

#include <chrono>

namespace sprawling::wasi::test {
namespace {

namespace L = abi::layout;

// ---------------------------------------------------------------- args / environ

TEST(WasiArgs, SizesAndStrings) {
  WasiConfig config;
  config.args = {"prog", "", "two words", "\xc3\xa9"};
  FakeGuest guest(std::move(config));
  const std::uint32_t count = guest.alloc(4, 4);
  const std::uint32_t size = guest.alloc(4, 4);
  ASSERT_EQ(guest.errno_of("args_sizes_get", {count, size}), e::success);
  EXPECT_EQ(guest.u32_at(count), 4u);
  EXPECT_EQ(guest.u32_at(size), 5u + 1u + 10u + 3u);
  const std::uint32_t argv = guest.alloc(16, 4);
  const std::uint32_t buf = guest.alloc(19, 1);
  ASSERT_EQ(guest.errno_of("args_get", {argv, buf}), e::success);
  EXPECT_EQ(guest.u32_at(argv), buf);
  EXPECT_EQ(guest.bytes_at(guest.u32_at(argv), 5), std::string("prog\0", 5));
  EXPECT_EQ(guest.bytes_at(guest.u32_at(argv + 4), 1), std::string("\0", 1));
  EXPECT_EQ(guest.bytes_at(guest.u32_at(argv + 8), 10), std::string("two words\0", 10));
  EXPECT_EQ(guest.bytes_at(guest.u32_at(argv + 12), 3), std::string("\xc3\xa9\0", 3));
  // A buffer ending too early traps instead of writing past memory.
  EXPECT_EQ(guest.call("args_get", {argv, guest.memory_size() - 10}).status, wasm::HostStatus::Trap);
}

TEST(WasiArgs, NothingImplied) {
  FakeGuest guest(WasiConfig{});
  const std::uint32_t count = guest.alloc(4, 4);
  const std::uint32_t size = guest.alloc(4, 4);
  ASSERT_EQ(guest.errno_of("args_sizes_get", {count, size}), e::success);
  EXPECT_EQ(guest.u32_at(count), 0u);
  EXPECT_EQ(guest.u32_at(size), 0u);
  ASSERT_EQ(guest.errno_of("environ_sizes_get", {count, size}), e::success);
  EXPECT_EQ(guest.u32_at(count), 0u);
}

TEST(WasiEnviron, KeyEqualsValueInOrderWithoutDeduplication) {
  WasiConfig config;
  config.env = {{"B", "2"}, {"A", "x=y"}, {"B", "3"}};
  FakeGuest guest(std::move(config));
  const std::uint32_t count = guest.alloc(4, 4);
  const std::uint32_t size = guest.alloc(4, 4);
  ASSERT_EQ(guest.errno_of("environ_sizes_get", {count, size}), e::success);
  EXPECT_EQ(guest.u32_at(count), 3u);
  EXPECT_EQ(guest.u32_at(size), 4u + 6u + 4u);
  const std::uint32_t env = guest.alloc(12, 4);
  const std::uint32_t buf = guest.alloc(14, 1);
  ASSERT_EQ(guest.errno_of("environ_get", {env, buf}), e::success);
  EXPECT_EQ(guest.bytes_at(buf, 14), std::string("B=2\0A=x=y\0B=3\0", 14));
  EXPECT_EQ(guest.u32_at(env + 8), buf + 10);
}

// ---------------------------------------------------------------- clocks

TEST(WasiClock, HostClocks) {
  FakeGuest guest(WasiConfig{});
  const std::uint32_t t = guest.alloc(8, 8);
  ASSERT_EQ(guest.errno_of("clock_time_get", {abi::clockid::realtime, 0, t}), e::success);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  EXPECT_LT(static_cast<std::int64_t>(guest.u64_at(t)) - now, 0);
  EXPECT_GT(static_cast<std::int64_t>(guest.u64_at(t)), now - 10'000'000'000);
  ASSERT_EQ(guest.errno_of("clock_time_get", {abi::clockid::monotonic, 0, t}), e::success);
  const std::uint64_t first = guest.u64_at(t);
  EXPECT_LT(first, 60'000'000'000ull);  // counts from the context's creation
  ASSERT_EQ(guest.errno_of("clock_time_get", {abi::clockid::monotonic, 0, t}), e::success);
  EXPECT_GE(guest.u64_at(t), first);
  ASSERT_EQ(guest.errno_of("clock_res_get", {abi::clockid::monotonic, t}), e::success);
  EXPECT_GE(guest.u64_at(t), 1u);
  EXPECT_EQ(guest.errno_of("clock_time_get", {abi::clockid::process_cputime, 0, t}), e::badf);
  EXPECT_EQ(guest.errno_of("clock_res_get", {abi::clockid::thread_cputime, t}), e::badf);
  EXPECT_EQ(guest.errno_of("clock_time_get", {4, 0, t}), e::inval);
  EXPECT_EQ(guest.call("clock_time_get", {0, 0, guest.memory_size() - 4}).status, wasm::HostStatus::Trap);
}

TEST(WasiClock, DeterministicClocksAreReproducible) {
  auto run = [] {
    WasiConfig config;
    config.deterministic = true;
    config.clock_step = std::chrono::microseconds(5);
    FakeGuest guest(std::move(config));
    const std::uint32_t t = guest.alloc(8, 8);
    std::vector<std::uint64_t> seen;
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(guest.errno_of("clock_time_get", {abi::clockid::monotonic, 0, t}), e::success);
      seen.push_back(guest.u64_at(t));
    }
    EXPECT_EQ(guest.errno_of("clock_time_get", {abi::clockid::realtime, 0, t}), e::success);
    seen.push_back(guest.u64_at(t));
    EXPECT_EQ(guest.errno_of("clock_res_get", {abi::clockid::realtime, t}), e::success);
    seen.push_back(guest.u64_at(t));
    return seen;
  };
  const auto a = run();
  EXPECT_EQ(a, run());
  EXPECT_EQ(a[0], 0u);
  EXPECT_EQ(a[1], 5'000u);
  EXPECT_EQ(a[2], 10'000u);
  EXPECT_EQ(a[3], 946'684'800'000'000'000ull + 15'000u);
  EXPECT_EQ(a[4], 5'000u);
}

// ---------------------------------------------------------------- random

TEST(WasiRandom, HostRandomFillsTheBuffer) {
  FakeGuest guest(WasiConfig{});
  const std::uint32_t a = guest.alloc(64, 1);
  const std::uint32_t b = guest.alloc(64, 1);
  ASSERT_EQ(guest.errno_of("random_get", {a, 64}), e::success);
  ASSERT_EQ(guest.errno_of("random_get", {b, 64}), e::success);
  EXPECT_NE(guest.bytes_at(a, 64), guest.bytes_at(b, 64));
  EXPECT_NE(guest.bytes_at(a, 64), std::string(64, '\0'));
  EXPECT_EQ(guest.errno_of("random_get", {a, 0}), e::success);
}

TEST(WasiRandom, SeededRandomIsReproducible) {
  auto draw = [](std::uint64_t seed) {
    WasiConfig config;
    config.deterministic = true;
    config.random_seed = seed;
    FakeGuest guest(std::move(config));
    const std::uint32_t a = guest.alloc(37, 1);
    EXPECT_EQ(guest.errno_of("random_get", {a, 37}), e::success);
    return guest.bytes_at(a, 37);
  };
  EXPECT_EQ(draw(7), draw(7));
  EXPECT_NE(draw(7), draw(8));
}

// ---------------------------------------------------------------- poll_oneoff

// Subscriptions and events laid out as the witx says, in the fake guest's memory.
struct Poll {
  FakeGuest& guest;
  std::uint32_t subs;
  std::uint32_t events;
  std::uint32_t count = 0;
  Poll(FakeGuest& g, std::uint32_t max) : guest(g), subs(g.alloc(max * 48, 8)), events(g.alloc(max * 32, 8)) {}

  void clock(std::uint64_t userdata, std::uint32_t id, std::uint64_t timeout, std::uint16_t flags = 0) {
    add(userdata, abi::eventtype::clock, id, timeout, flags);
  }
  void fd(std::uint64_t userdata, std::uint8_t type, std::uint32_t fd) { add(userdata, type, fd, 0, 0); }
  void add(std::uint64_t userdata, std::uint8_t tag, std::uint32_t id_or_fd, std::uint64_t timeout,
           std::uint16_t flags) {
    std::string record(48, '\0');
    std::memcpy(record.data() + L::subscription_userdata, &userdata, 8);
    std::memcpy(record.data() + L::subscription_tag, &tag, 1);
    std::memcpy(record.data() + L::subscription_clock_id, &id_or_fd, 4);
    std::memcpy(record.data() + L::subscription_clock_timeout, &timeout, 8);
    std::memcpy(record.data() + L::subscription_clock_flags, &flags, 2);
    guest.set_bytes(subs + count * 48, record);
    ++count;
  }
  std::uint16_t run(std::uint32_t* nevents) {
    const std::uint32_t out = guest.alloc(4, 4);
    const std::uint16_t err = guest.errno_of("poll_oneoff", {subs, events, count, out});
    *nevents = guest.u32_at(out);
    return err;
  }
  std::uint64_t userdata(std::uint32_t i) const { return guest.u64_at(events + i * 32); }
  std::uint16_t error(std::uint32_t i) const { return guest.u16_at(events + i * 32 + 8); }
  std::uint8_t type(std::uint32_t i) const { return guest.u8_at(events + i * 32 + 10); }
  std::uint64_t nbytes(std::uint32_t i) const { return guest.u64_at(events + i * 32 + 16); }
  std::uint16_t flags(std::uint32_t i) const { return guest.u16_at(events + i * 32 + 24); }
};

TEST(WasiPoll, RelativeClockSleeps) {
  FakeGuest guest(WasiConfig{});
  Poll poll(guest, 1);
  poll.clock(77, abi::clockid::monotonic, 20'000'000);  // 20 ms
  std::uint32_t n = 0;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(poll.run(&n), e::success);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(19));
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(poll.userdata(0), 77u);
  EXPECT_EQ(poll.error(0), e::success);
  EXPECT_EQ(poll.type(0), abi::eventtype::clock);
}

TEST(WasiPoll, EarliestOfSeveralClocksFires) {
  FakeGuest guest(WasiConfig{});
  Poll poll(guest, 3);
  poll.clock(1, abi::clockid::monotonic, 5'000'000'000ull);
  poll.clock(2, abi::clockid::realtime, 1'000'000);
  poll.clock(3, abi::clockid::monotonic, 0, abi::subclockflags_abstime);  // already past
  std::uint32_t n = 0;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(poll.run(&n), e::success);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(poll.userdata(0), 3u);
}

TEST(WasiPoll, AbsoluteRealtimeInThePastIsImmediate) {
  FakeGuest guest(WasiConfig{});
  Poll poll(guest, 1);
  poll.clock(9, abi::clockid::realtime, 1'000, abi::subclockflags_abstime);
  std::uint32_t n = 0;
  ASSERT_EQ(poll.run(&n), e::success);
  EXPECT_EQ(n, 1u);
}

TEST(WasiPoll, StdinIsReadyAndHangsUpAtEof) {
  WasiConfig config;
  config.stdin_bytes = {'x'};
  FakeGuest guest(std::move(config));
  Poll poll(guest, 3);
  poll.clock(1, abi::clockid::monotonic, 60'000'000'000ull);  // would block a minute
  poll.fd(2, abi::eventtype::fd_read, 0);
  poll.fd(3, abi::eventtype::fd_write, 1);
  std::uint32_t n = 0;
  ASSERT_EQ(poll.run(&n), e::success);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(poll.userdata(0), 2u);
  EXPECT_EQ(poll.type(0), abi::eventtype::fd_read);
  EXPECT_EQ(poll.nbytes(0), 1u);
  EXPECT_EQ(poll.flags(0), 0u);
  EXPECT_EQ(poll.userdata(1), 3u);
  EXPECT_EQ(poll.type(1), abi::eventtype::fd_write);
  std::string text;
  ASSERT_EQ(guest.read(0, 4, &text), e::success);
  Poll again(guest, 1);
  again.fd(5, abi::eventtype::fd_read, 0);
  ASSERT_EQ(again.run(&n), e::success);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(again.flags(0), abi::eventrwflags_hangup);
}

TEST(WasiPoll, Refusals) {
  TempTree tree;
  FakeGuest guest(config_with_mount(tree.root(), false));
  std::uint32_t n = 0;
  {
    Poll poll(guest, 1);
    EXPECT_EQ(poll.run(&n), e::inval);  // no subscriptions
  }
  {
    Poll poll(guest, 1);
    poll.fd(1, abi::eventtype::fd_read, 3);  // a directory
    EXPECT_EQ(poll.run(&n), e::badf);
  }
  {
    Poll poll(guest, 1);
    poll.fd(1, abi::eventtype::fd_read, 1);  // stdout cannot be read
    EXPECT_EQ(poll.run(&n), e::badf);
  }
  {
    Poll poll(guest, 1);
    poll.fd(1, abi::eventtype::fd_write, 99);
    EXPECT_EQ(poll.run(&n), e::badf);
  }
  {
    Poll poll(guest, 1);
    poll.clock(1, abi::clockid::process_cputime, 1);
    EXPECT_EQ(poll.run(&n), e::inval);
  }
  {
    Poll poll(guest, 1);
    poll.add(1, 7, 0, 0, 0);  // no such event type
    EXPECT_EQ(poll.run(&n), e::inval);
  }
  EXPECT_EQ(guest.call("poll_oneoff", {guest.memory_size() - 16, 1024, 1, 2048}).status, wasm::HostStatus::Trap);
}

TEST(WasiPoll, DeterministicSleepAdvancesTimeWithoutSleeping) {
  WasiConfig config;
  config.deterministic = true;
  config.clock_step = std::chrono::nanoseconds(0);
  FakeGuest guest(std::move(config));
  Poll poll(guest, 1);
  poll.clock(1, abi::clockid::monotonic, 3'600'000'000'000ull);  // an hour
  std::uint32_t n = 0;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(poll.run(&n), e::success);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  const std::uint32_t t = guest.alloc(8, 8);
  ASSERT_EQ(guest.errno_of("clock_time_get", {abi::clockid::monotonic, 0, t}), e::success);
  EXPECT_EQ(guest.u64_at(t), 3'600'000'000'000ull);
}

TEST(WasiPoll, SleepPastTheDeadlineTraps) {
  WasiConfig config;
  config.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
  FakeGuest guest(std::move(config));
  Poll poll(guest, 1);
  poll.clock(1, abi::clockid::monotonic, 3'600'000'000'000ull);
  const std::uint32_t out = guest.alloc(4, 4);
  const auto start = std::chrono::steady_clock::now();
  auto outcome = guest.call("poll_oneoff", {poll.subs, poll.events, 1, out});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(outcome.status, wasm::HostStatus::DeadlineExceeded);
}

// ---------------------------------------------------------------- proc, sched, sock

TEST(WasiProc, ExitPassesEveryCodeOn) {
  FakeGuest guest(WasiConfig{});
  for (std::uint32_t code : {0u, 7u, 125u, 126u, 255u, 0xFFFFFFFFu}) {
    auto outcome = guest.call("proc_exit", {code});
    EXPECT_EQ(outcome.status, wasm::HostStatus::Exit);
    EXPECT_EQ(outcome.exit_code, code);
  }
}

TEST(WasiProc, RaiseIsNotSupportedAndYieldIsANoOp) {
  FakeGuest guest(WasiConfig{});
  EXPECT_EQ(guest.errno_of("proc_raise", {6}), e::notsup);
  EXPECT_EQ(guest.errno_of("proc_raise", {31}), e::inval);
  EXPECT_EQ(guest.errno_of("sched_yield", {}), e::success);
}

TEST(WasiSock, NoFdIsASocket) {
  TempTree tree;
  tree.file("f", "x");
  FakeGuest guest(config_with_mount(tree.root(), true));
  std::uint32_t file = 0;
  ASSERT_EQ(guest.open(3, "f", &file), e::success);
  const std::uint32_t out = guest.alloc(8, 4);
  for (std::uint32_t fd : {0u, 1u, 2u, 3u, file}) {
    EXPECT_EQ(guest.errno_of("sock_accept", {fd, 0, out}), e::notsock) << fd;
    EXPECT_EQ(guest.errno_of("sock_recv", {fd, out, 0, 0, out, out + 4}), e::notsock) << fd;
    EXPECT_EQ(guest.errno_of("sock_send", {fd, out, 0, 0, out}), e::notsock) << fd;
    EXPECT_EQ(guest.errno_of("sock_shutdown", {fd, 3}), e::notsock) << fd;
  }
  EXPECT_EQ(guest.errno_of("sock_accept", {77, 0, out}), e::badf);
  EXPECT_EQ(guest.errno_of("sock_recv", {77, out, 0, 0, out, out + 4}), e::badf);
  EXPECT_EQ(guest.errno_of("sock_send", {77, out, 0, 0, out}), e::badf);
  EXPECT_EQ(guest.errno_of("sock_shutdown", {77, 1}), e::badf);
  EXPECT_EQ(guest.errno_of("sock_shutdown", {1, 4}), e::inval);
  EXPECT_EQ(guest.errno_of("sock_recv", {1, out, 0, 4, out, out + 4}), e::inval);
}

}  // namespace
}  // namespace sprawling::wasi::test
