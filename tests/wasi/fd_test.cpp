// fd_* functions called directly: stdio (stdin buffer, captured and capped output, sinks),
// file reads/writes/seeks, fdstat/filestat, sizes and times, advise/allocate/sync, readdir,
// renumber/close and fd numbering, and the guest-memory gate (out of bounds → trap).
#include "wasi_test_support.hpp"

#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>

namespace sprawling::wasi::test {
namespace {

constexpr std::uint64_t kRW = r::fd_read | r::fd_write | r::fd_seek | r::fd_tell | r::fd_filestat_get |
                              r::fd_filestat_set_size | r::fd_filestat_set_times | r::fd_advise | r::fd_allocate;

// ---------------------------------------------------------------- stdio

TEST(WasiStdio, StdinIsTheBufferThenEof) {
  WasiConfig config;
  config.stdin_bytes = {'a', 'b', 'c', 'd', 'e'};
  FakeGuest guest(std::move(config));
  std::string text;
  ASSERT_EQ(guest.read(0, 3, &text), e::success);
  EXPECT_EQ(text, "abc");
  ASSERT_EQ(guest.read(0, 10, &text), e::success);
  EXPECT_EQ(text, "de");
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(guest.read(0, 10, &text), e::success);
    EXPECT_EQ(text, "");
  }
}

TEST(WasiStdio, OutputIsCapturedPerStream) {
  FakeGuest guest(WasiConfig{});
  std::uint32_t n = 0;
  ASSERT_EQ(guest.write(1, "out\n", &n), e::success);
  EXPECT_EQ(n, 4u);
  ASSERT_EQ(guest.write(2, "err\n", &n), e::success);
  ASSERT_EQ(guest.write(1, "more", &n), e::success);
  EXPECT_EQ(std::string(guest.context().stdout_bytes().begin(), guest.context().stdout_bytes().end()), "out\nmore");
  EXPECT_EQ(std::string(guest.context().stderr_bytes().begin(), guest.context().stderr_bytes().end()), "err\n");
  auto taken = guest.context().take_stdout();
  EXPECT_EQ(taken.size(), 8u);
  EXPECT_TRUE(guest.context().stdout_bytes().empty());
  EXPECT_FALSE(guest.context().stdout_truncated());
}

TEST(WasiStdio, WritingPastTheCapGivesEioAndKeepsWhatFits) {
  WasiConfig config;
  config.stdout_cap = 10;
  FakeGuest guest(std::move(config));
  std::uint32_t n = 0;
  ASSERT_EQ(guest.write(1, "12345", &n), e::success);
  ASSERT_EQ(guest.write(1, "67890", &n), e::success);  // exactly up to the cap succeeds
  EXPECT_FALSE(guest.context().stdout_truncated());
  EXPECT_EQ(guest.write(1, "x"), e::io);
  EXPECT_TRUE(guest.context().stdout_truncated());
  EXPECT_EQ(guest.write(1, "y"), e::io);  // and stays failed
  EXPECT_EQ(guest.context().stdout_bytes().size(), 10u);
  EXPECT_FALSE(guest.context().stderr_truncated());
}

TEST(WasiStdio, PartialWriteAtTheCapKeepsThePrefix) {
  WasiConfig config;
  config.stderr_cap = 4;
  FakeGuest guest(std::move(config));
  EXPECT_EQ(guest.write(2, "abcdef"), e::io);
  EXPECT_EQ(std::string(guest.context().stderr_bytes().begin(), guest.context().stderr_bytes().end()), "abcd");
  EXPECT_TRUE(guest.context().stderr_truncated());
}

TEST(WasiStdio, SinksSeeEachAcceptedChunk) {
  std::string streamed;
  WasiConfig config;
  config.stdout_sink = [&](std::span<const std::uint8_t> bytes) { streamed.append(bytes.begin(), bytes.end()); };
  config.capture_streamed_output = false;
  config.stdout_cap = 6;
  FakeGuest guest(std::move(config));
  ASSERT_EQ(guest.write(1, "abc"), e::success);
  EXPECT_EQ(streamed, "abc");
  EXPECT_EQ(guest.write(1, "defgh"), e::io);
  EXPECT_EQ(streamed, "abcdef");
  EXPECT_TRUE(guest.context().stdout_bytes().empty());
  EXPECT_TRUE(guest.context().stdout_truncated());
}

TEST(WasiStdio, SinkAndCaptureTogether) {
  std::string streamed;
  WasiConfig config;
  config.stderr_sink = [&](std::span<const std::uint8_t> bytes) { streamed.append(bytes.begin(), bytes.end()); };
  FakeGuest guest(std::move(config));
  ASSERT_EQ(guest.write(2, "both"), e::success);
  EXPECT_EQ(streamed, "both");
  EXPECT_EQ(guest.context().stderr_bytes().size(), 4u);
}

TEST(WasiStdio, AThrowingSinkEndsTheStreamWithEio) {
  WasiConfig config;
  config.stdout_sink = [](std::span<const std::uint8_t>) { throw std::runtime_error("sink gone"); };
  FakeGuest guest(std::move(config));
  EXPECT_EQ(guest.write(1, "abc"), e::io);
  EXPECT_TRUE(guest.context().stdout_truncated());
  EXPECT_EQ(guest.write(1, "def"), e::io);
}

TEST(WasiStdio, WrongDirectionAndSeeking) {
  FakeGuest guest(WasiConfig{});
  std::string text;
  EXPECT_EQ(guest.write(0, "x"), e::badf);
  EXPECT_EQ(guest.read(1, 4, &text), e::badf);
  EXPECT_EQ(guest.read(2, 4, &text), e::badf);
  EXPECT_EQ(guest.pwrite(1, "x", 0), e::spipe);
  const std::uint32_t iov = guest.alloc(8, 4);
  const std::uint32_t out = guest.alloc(8, 8);
  guest.set_u32(iov, guest.alloc(4, 1));
  guest.set_u32(iov + 4, 4);
  EXPECT_EQ(guest.errno_of("fd_pread", {0, iov, 1, 0, out}), e::spipe);
  EXPECT_EQ(guest.errno_of("fd_pread", {1, iov, 1, 0, out}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_pwrite", {0, iov, 1, 0, out}), e::badf);
  for (std::uint32_t fd : {0u, 1u, 2u}) {
    EXPECT_EQ(guest.errno_of("fd_seek", {fd, 0, abi::whence::set, out}), e::spipe);
    EXPECT_EQ(guest.errno_of("fd_tell", {fd, out}), e::spipe);
  }
  EXPECT_EQ(guest.write(9, "x"), e::badf);
}

TEST(WasiStdio, FdstatAndFilestatOfStdio) {
  FakeGuest guest(WasiConfig{});
  const std::uint32_t st = guest.alloc(64, 8);
  ASSERT_EQ(guest.errno_of("fd_fdstat_get", {0, st}), e::success);
  EXPECT_EQ(guest.u8_at(st), abi::filetype::unknown);
  EXPECT_EQ(guest.u64_at(st + 8), r::fd_read);
  ASSERT_EQ(guest.errno_of("fd_fdstat_get", {1, st}), e::success);
  EXPECT_EQ(guest.u64_at(st + 8), r::fd_write);
  ASSERT_EQ(guest.errno_of("fd_filestat_get", {2, st}), e::success);
  for (std::uint32_t off = 0; off < 64; off += 8) EXPECT_EQ(guest.u64_at(st + off), 0u) << off;
}

TEST(WasiStdio, OnlyTheFirstNonEmptyIovecIsUsed) {
  FakeGuest guest(WasiConfig{});
  const std::uint32_t a = guest.put("AAA");
  const std::uint32_t b = guest.put("BBB");
  const std::uint32_t iovs = guest.alloc(24, 4);
  guest.set_u32(iovs, a);
  guest.set_u32(iovs + 4, 0);
  guest.set_u32(iovs + 8, b);
  guest.set_u32(iovs + 12, 3);
  guest.set_u32(iovs + 16, a);
  guest.set_u32(iovs + 20, 3);
  const std::uint32_t out = guest.alloc(4, 4);
  ASSERT_EQ(guest.errno_of("fd_write", {1, iovs, 3, out}), e::success);
  EXPECT_EQ(guest.u32_at(out), 3u);
  EXPECT_EQ(std::string(guest.context().stdout_bytes().begin(), guest.context().stdout_bytes().end()), "BBB");
  // All empty: a zero-length write.
  ASSERT_EQ(guest.errno_of("fd_write", {1, iovs, 1, out}), e::success);
  EXPECT_EQ(guest.u32_at(out), 0u);
}

// ---------------------------------------------------------------- the memory gate

TEST(WasiMemoryGate, OutOfBoundsPointersTrap) {
  FakeGuest guest(WasiConfig{}, 65536);
  const std::uint32_t size = guest.memory_size();
  auto out = guest.call("fd_fdstat_get", {1, size - 8});
  EXPECT_EQ(out.status, wasm::HostStatus::Trap);
  EXPECT_NE(out.trap_message.find("out of bounds"), std::string::npos);
  // An iovec that points past the end: trap, and nothing is captured.
  const std::uint32_t iov = guest.alloc(8, 4);
  guest.set_u32(iov, size - 2);
  guest.set_u32(iov + 4, 16);
  EXPECT_EQ(guest.call("fd_write", {1, iov, 1, guest.alloc(4, 4)}).status, wasm::HostStatus::Trap);
  EXPECT_TRUE(guest.context().stdout_bytes().empty());
  // ptr + len wrapping past 2^32 is out of bounds too.
  guest.set_u32(iov, 0xFFFFFFF0u);
  guest.set_u32(iov + 4, 0x20);
  EXPECT_EQ(guest.call("fd_write", {1, iov, 1, guest.alloc(4, 4)}).status, wasm::HostStatus::Trap);
  EXPECT_EQ(guest.call("random_get", {size - 4, 8}).status, wasm::HostStatus::Trap);
  EXPECT_EQ(guest.call("args_sizes_get", {size, 0}).status, wasm::HostStatus::Trap);
  EXPECT_EQ(guest.call("fd_write", {1, 0xFFFFFFFCu, 1, 0}).status, wasm::HostStatus::Trap);
}

TEST(WasiMemoryGate, MisalignedRecordsTrap) {
  FakeGuest guest(WasiConfig{});
  const std::uint32_t st = guest.alloc(80, 8);
  EXPECT_EQ(guest.call("fd_fdstat_get", {1, st + 4}).status, wasm::HostStatus::Trap);
  EXPECT_EQ(guest.call("clock_time_get", {1, 0, st + 1}).status, wasm::HostStatus::Trap);
  EXPECT_EQ(guest.call("args_sizes_get", {st + 2, st + 8}).status, wasm::HostStatus::Trap);
}

TEST(WasiMemoryGate, NoMemoryAtAllTraps) {
  WasiConfig config;
  auto context = WasiContext::create(std::move(config));
  ASSERT_TRUE(context);
  for (const auto& def : WasiContext::functions()) {
    if (def.name != "fd_write") continue;
    std::vector<std::uint64_t> args{1, 0, 1, 0};
    std::vector<std::uint64_t> results(1);
    wasm::HostCall hc{args, results, wasm::MemoryView{nullptr, 0}, context->get(), {}, 0};
    EXPECT_EQ(def.fn(hc), wasm::HostStatus::Trap);
  }
}

// ---------------------------------------------------------------- files

struct FileFixture : ::testing::Test {
  TempTree tree;
  void SetUp() override {
    tree.file("data.txt", "hello world");
    tree.dir("sub");
  }
};

TEST_F(FileFixture, ReadSeekTell) {
  FakeGuest guest(config_with_mount(tree.root(), false));
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &fd), e::success);
  EXPECT_EQ(fd, 4u);
  std::string text;
  ASSERT_EQ(guest.read(fd, 5, &text), e::success);
  EXPECT_EQ(text, "hello");
  const std::uint32_t pos = guest.alloc(8, 8);
  ASSERT_EQ(guest.errno_of("fd_tell", {fd, pos}), e::success);
  EXPECT_EQ(guest.u64_at(pos), 5u);
  ASSERT_EQ(guest.errno_of("fd_seek", {fd, static_cast<std::uint64_t>(-5), abi::whence::end, pos}), e::success);
  EXPECT_EQ(guest.u64_at(pos), 6u);
  ASSERT_EQ(guest.read(fd, 100, &text), e::success);
  EXPECT_EQ(text, "world");
  ASSERT_EQ(guest.errno_of("fd_seek", {fd, 2, abi::whence::set, pos}), e::success);
  ASSERT_EQ(guest.errno_of("fd_seek", {fd, 1, abi::whence::cur, pos}), e::success);
  EXPECT_EQ(guest.u64_at(pos), 3u);
  // Negative positions are refused; past the end is allowed.
  EXPECT_EQ(guest.errno_of("fd_seek", {fd, static_cast<std::uint64_t>(-1), abi::whence::set, pos}), e::inval);
  EXPECT_EQ(guest.errno_of("fd_seek", {fd, static_cast<std::uint64_t>(-10), abi::whence::cur, pos}), e::inval);
  EXPECT_EQ(guest.errno_of("fd_seek", {fd, 100, abi::whence::set, pos}), e::success);
  EXPECT_EQ(guest.errno_of("fd_seek", {fd, 0, 3, pos}), e::inval);
  // Directories are not seekable streams.
  EXPECT_EQ(guest.errno_of("fd_seek", {3, 0, abi::whence::set, pos}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_tell", {3, pos}), e::badf);
  EXPECT_EQ(guest.read(3, 4, &text), e::badf);
}

TEST_F(FileFixture, PreadPwriteLeaveTheOffsetAlone) {
  FakeGuest guest(config_with_mount(tree.root(), true));
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &fd, 0, kRW), e::success);
  ASSERT_EQ(guest.pwrite(fd, "J", 6), e::success);
  const std::uint32_t buf = guest.alloc(16, 1);
  const std::uint32_t iov = guest.alloc(8, 4);
  guest.set_u32(iov, buf);
  guest.set_u32(iov + 4, 5);
  const std::uint32_t n = guest.alloc(4, 4);
  ASSERT_EQ(guest.errno_of("fd_pread", {fd, iov, 1, 6, n}), e::success);
  EXPECT_EQ(guest.bytes_at(buf, guest.u32_at(n)), "Jorld");
  const std::uint32_t pos = guest.alloc(8, 8);
  ASSERT_EQ(guest.errno_of("fd_tell", {fd, pos}), e::success);
  EXPECT_EQ(guest.u64_at(pos), 0u);
  EXPECT_EQ(tree.read("data.txt"), "hello Jorld");
  EXPECT_EQ(guest.errno_of("fd_pread", {fd, iov, 1, 1ull << 63, n}), e::inval);
}

TEST_F(FileFixture, AppendFlagAndFdstat) {
  FakeGuest guest(config_with_mount(tree.root(), true));
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &fd, 0, kRW, abi::fdflags::append), e::success);
  ASSERT_EQ(guest.write(fd, "!"), e::success);
  EXPECT_EQ(tree.read("data.txt"), "hello world!");
  const std::uint32_t st = guest.alloc(24, 8);
  ASSERT_EQ(guest.errno_of("fd_fdstat_get", {fd, st}), e::success);
  EXPECT_EQ(guest.u8_at(st), abi::filetype::regular_file);
  EXPECT_EQ(guest.u16_at(st + 2), abi::fdflags::append);
  EXPECT_NE(guest.u64_at(st + 8) & r::fd_write, 0u);
  EXPECT_NE(guest.u64_at(st + 8) & r::fd_read, 0u);
  // Clear APPEND, set NONBLOCK: both reported back; SYNC kinds are refused.
  ASSERT_EQ(guest.errno_of("fd_fdstat_set_flags", {fd, abi::fdflags::nonblock}), e::success);
  ASSERT_EQ(guest.errno_of("fd_fdstat_get", {fd, st}), e::success);
  EXPECT_EQ(guest.u16_at(st + 2), abi::fdflags::nonblock);
  EXPECT_EQ(guest.errno_of("fd_fdstat_set_flags", {fd, abi::fdflags::sync}), e::inval);
  EXPECT_EQ(guest.errno_of("fd_fdstat_set_flags", {fd, 0x100}), e::inval);
  EXPECT_EQ(guest.errno_of("fd_fdstat_set_flags", {1, 0}), e::badf);
  ASSERT_EQ(guest.pwrite(fd, "H", 0), e::success);
  EXPECT_EQ(tree.read("data.txt"), "Hello world!");
}

TEST_F(FileFixture, ReadOnlyOpenReportsNoWriteRight) {
  FakeGuest guest(config_with_mount(tree.root(), true));
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &fd, 0, r::fd_read), e::success);
  const std::uint32_t st = guest.alloc(24, 8);
  ASSERT_EQ(guest.errno_of("fd_fdstat_get", {fd, st}), e::success);
  EXPECT_EQ(guest.u64_at(st + 8) & r::fd_write, 0u);
  EXPECT_EQ(guest.write(fd, "x"), e::badf);  // the OS refuses: opened O_RDONLY
  EXPECT_EQ(guest.errno_of("fd_filestat_set_size", {fd, 1}), e::badf);
  EXPECT_EQ(tree.read("data.txt"), "hello world");
}

TEST_F(FileFixture, PreopenFdstatRightsDependOnTheMount) {
  const std::uint32_t st_off = 0;
  (void)st_off;
  FakeGuest rw(config_with_mount(tree.root(), true));
  FakeGuest ro(config_with_mount(tree.root(), false));
  const std::uint32_t a = rw.alloc(24, 8);
  const std::uint32_t b = ro.alloc(24, 8);
  ASSERT_EQ(rw.errno_of("fd_fdstat_get", {3, a}), e::success);
  ASSERT_EQ(ro.errno_of("fd_fdstat_get", {3, b}), e::success);
  EXPECT_EQ(rw.u8_at(a), abi::filetype::directory);
  EXPECT_NE(rw.u64_at(a + 8) & r::path_create_file, 0u);
  EXPECT_NE(rw.u64_at(a + 8) & r::path_open, 0u);
  EXPECT_EQ(ro.u64_at(b + 8) & (r::path_create_file | r::path_unlink_file | r::path_rename_source), 0u);
  EXPECT_NE(ro.u64_at(b + 8) & (r::path_open | r::fd_readdir), 0u);
  EXPECT_NE(rw.u64_at(a + 16) & r::fd_write, 0u);
  EXPECT_NE(ro.u64_at(b + 16) & r::fd_write, 0u);  // so that write opens reach path_open's EPERM
}

TEST_F(FileFixture, FilestatOfFdAndSetSize) {
  FakeGuest guest(config_with_mount(tree.root(), true));
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &fd, 0, kRW), e::success);
  const std::uint32_t st = guest.alloc(64, 8);
  ASSERT_EQ(guest.errno_of("fd_filestat_get", {fd, st}), e::success);
  struct stat host {};
  ASSERT_EQ(::stat(tree.path("data.txt").c_str(), &host), 0);
  EXPECT_EQ(guest.u64_at(st + 8), static_cast<std::uint64_t>(host.st_ino));
  EXPECT_EQ(guest.u8_at(st + 16), abi::filetype::regular_file);
  EXPECT_EQ(guest.u64_at(st + 24), 1u);
  EXPECT_EQ(guest.u64_at(st + 32), 11u);
  EXPECT_EQ(guest.u64_at(st + 48),
            static_cast<std::uint64_t>(host.st_mtim.tv_sec) * 1'000'000'000ull + host.st_mtim.tv_nsec);
  ASSERT_EQ(guest.errno_of("fd_filestat_set_size", {fd, 5}), e::success);
  EXPECT_EQ(tree.read("data.txt"), "hello");
  ASSERT_EQ(guest.errno_of("fd_filestat_set_size", {fd, 7}), e::success);
  EXPECT_EQ(tree.read("data.txt"), std::string("hello\0\0", 7));
  EXPECT_EQ(guest.errno_of("fd_filestat_set_size", {3, 0}), e::badf);  // a directory
  EXPECT_EQ(guest.errno_of("fd_filestat_set_size", {fd, 1ull << 63}), e::fbig);
  ASSERT_EQ(guest.errno_of("fd_filestat_get", {3, st}), e::success);
  EXPECT_EQ(guest.u8_at(st + 16), abi::filetype::directory);
}

TEST_F(FileFixture, SetTimesOnFdsAndItsFlagRules) {
  FakeGuest guest(config_with_mount(tree.root(), true));
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &fd, 0, kRW), e::success);
  const std::uint64_t t = 1'000'000'000ull * 1'234'567 + 89;
  ASSERT_EQ(guest.errno_of("fd_filestat_set_times", {fd, t, t + 1, abi::fstflags::atim | abi::fstflags::mtim}),
            e::success);
  struct stat host {};
  ASSERT_EQ(::stat(tree.path("data.txt").c_str(), &host), 0);
  EXPECT_EQ(host.st_atim.tv_sec, 1'234'567);
  EXPECT_EQ(host.st_atim.tv_nsec, 89);
  EXPECT_EQ(host.st_mtim.tv_nsec, 90);
  EXPECT_EQ(guest.errno_of("fd_filestat_set_times", {fd, t, t, abi::fstflags::atim | abi::fstflags::atim_now}),
            e::inval);
  EXPECT_EQ(guest.errno_of("fd_filestat_set_times", {fd, t, t, 0x10}), e::inval);
  EXPECT_EQ(guest.errno_of("fd_filestat_set_times", {1, t, t, abi::fstflags::mtim_now}), e::badf);
  ASSERT_EQ(guest.errno_of("fd_filestat_set_times", {3, 0, 0, abi::fstflags::mtim_now}), e::success);
}

TEST_F(FileFixture, AdviseAllocateSync) {
  FakeGuest guest(config_with_mount(tree.root(), true));
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &fd, 0, kRW), e::success);
  for (std::uint64_t advice = 0; advice <= 5; ++advice) {
    EXPECT_EQ(guest.errno_of("fd_advise", {fd, 0, 10, advice}), e::success) << advice;
  }
  EXPECT_EQ(guest.errno_of("fd_advise", {fd, 0, 10, 6}), e::inval);
  EXPECT_EQ(guest.errno_of("fd_advise", {3, 0, 10, 0}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_allocate", {fd, 0, 100}), e::notsup);
  EXPECT_EQ(guest.errno_of("fd_allocate", {1, 0, 100}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_sync", {fd}), e::success);
  EXPECT_EQ(guest.errno_of("fd_datasync", {fd}), e::success);
  EXPECT_EQ(guest.errno_of("fd_sync", {1}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_datasync", {3}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_fdstat_set_rights", {fd, 0, 0}), e::notsup);
  EXPECT_EQ(guest.errno_of("fd_fdstat_set_rights", {1, 0, 0}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_fdstat_set_rights", {fd, 1ull << 40, 0}), e::inval);
}

// ---------------------------------------------------------------- numbering, close, renumber

TEST_F(FileFixture, HighestFreedNumberIsReusedFirst) {
  FakeGuest guest(config_with_mount(tree.root(), false));
  std::uint32_t a = 0, b = 0, c = 0, d = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &a), e::success);
  ASSERT_EQ(guest.open(3, "data.txt", &b), e::success);
  ASSERT_EQ(guest.open(3, "data.txt", &c), e::success);
  EXPECT_EQ(a, 4u);
  EXPECT_EQ(b, 5u);
  EXPECT_EQ(c, 6u);
  ASSERT_EQ(guest.errno_of("fd_close", {a}), e::success);
  ASSERT_EQ(guest.errno_of("fd_close", {b}), e::success);
  EXPECT_EQ(guest.errno_of("fd_close", {b}), e::badf);
  ASSERT_EQ(guest.open(3, "data.txt", &d), e::success);
  EXPECT_EQ(d, 5u);
  ASSERT_EQ(guest.open(3, "data.txt", &d), e::success);
  EXPECT_EQ(d, 4u);
  ASSERT_EQ(guest.open(3, "data.txt", &d), e::success);
  EXPECT_EQ(d, 7u);
}

TEST_F(FileFixture, RenumberMovesAndClosesTheTarget) {
  FakeGuest guest(config_with_mount(tree.root(), false));
  std::uint32_t a = 0, b = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &a), e::success);
  ASSERT_EQ(guest.open(3, "sub", &b, abi::oflags::directory), e::success);
  const std::size_t host_before = host_fd_count();
  ASSERT_EQ(guest.errno_of("fd_renumber", {a, b}), e::success);
  EXPECT_EQ(host_fd_count(), host_before - 1);  // b's host fd was closed, not leaked
  std::string text;
  ASSERT_EQ(guest.read(b, 5, &text), e::success);
  EXPECT_EQ(text, "hello");
  EXPECT_EQ(guest.read(a, 5, &text), e::badf);
  EXPECT_EQ(guest.errno_of("fd_renumber", {a, b}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_renumber", {b, 99}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_renumber", {b, b}), e::success);
  // Stdio can be renumbered over too.
  ASSERT_EQ(guest.errno_of("fd_renumber", {b, 1}), e::success);
  ASSERT_EQ(guest.read(1, 6, &text), e::success);
  EXPECT_EQ(text, " world");
}

TEST_F(FileFixture, ClosingAPreopenIsAllowed) {
  FakeGuest guest(config_with_mount(tree.root(), false));
  ASSERT_EQ(guest.errno_of("fd_close", {3}), e::success);
  std::uint32_t fd = 0;
  EXPECT_EQ(guest.open(3, "data.txt", &fd), e::badf);
  const std::uint32_t prestat = guest.alloc(8, 4);
  EXPECT_EQ(guest.errno_of("fd_prestat_get", {3, prestat}), e::badf);
}

TEST_F(FileFixture, PrestatDirNameRules) {
  FakeGuest guest(config_with_mount(tree.root(), false));
  const std::uint32_t name = guest.alloc(32, 1);
  EXPECT_EQ(guest.errno_of("fd_prestat_dir_name", {3, name, 3}), e::nametoolong);
  EXPECT_EQ(guest.errno_of("fd_prestat_dir_name", {9, name, 32}), e::badf);
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "sub", &fd, abi::oflags::directory), e::success);
  EXPECT_EQ(guest.errno_of("fd_prestat_dir_name", {fd, name, 32}), e::notdir);
  EXPECT_EQ(guest.errno_of("fd_prestat_dir_name", {0, name, 32}), e::notdir);
  ASSERT_EQ(guest.errno_of("fd_prestat_dir_name", {3, name, 8}), e::success);
  EXPECT_EQ(guest.bytes_at(name, 8), "/sandbox");
}

// ---------------------------------------------------------------- readdir

struct Dirent {
  std::uint64_t next;
  std::uint64_t ino;
  std::uint8_t type;
  std::string name;
};

std::vector<Dirent> parse_dirents(const FakeGuest& guest, std::uint32_t buf, std::uint32_t used) {
  std::vector<Dirent> out;
  std::uint32_t at = 0;
  while (at + 24 <= used) {
    Dirent d{guest.u64_at(buf + at), guest.u64_at(buf + at + 8), guest.u8_at(buf + at + 20), {}};
    const std::uint32_t len = guest.u32_at(buf + at + 16);
    at += 24;
    if (at + len > used) break;
    d.name = guest.bytes_at(buf + at, len);
    at += len;
    out.push_back(d);
  }
  return out;
}

TEST_F(FileFixture, ReaddirListsDotEntriesThenTheDirectory) {
  tree.symlink("data.txt", "link");
  FakeGuest guest(config_with_mount(tree.root(), false));
  const std::uint32_t buf = guest.alloc(4096, 8);
  const std::uint32_t used = guest.alloc(4, 4);
  ASSERT_EQ(guest.errno_of("fd_readdir", {3, buf, 4096, 0, used}), e::success);
  auto entries = parse_dirents(guest, buf, guest.u32_at(used));
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[0].name, ".");
  EXPECT_EQ(entries[0].next, 1u);
  EXPECT_EQ(entries[0].type, abi::filetype::directory);
  EXPECT_EQ(entries[1].name, "..");
  EXPECT_EQ(entries[1].next, 2u);
  std::map<std::string, std::uint8_t> types;
  for (std::size_t i = 2; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].next, i + 1);
    types[entries[i].name] = entries[i].type;
  }
  EXPECT_EQ(types["data.txt"], abi::filetype::regular_file);
  EXPECT_EQ(types["sub"], abi::filetype::directory);
  EXPECT_EQ(types["link"], abi::filetype::symbolic_link);
  // Resuming at a cookie gives the rest; past the end gives nothing.
  ASSERT_EQ(guest.errno_of("fd_readdir", {3, buf, 4096, 3, used}), e::success);
  auto rest = parse_dirents(guest, buf, guest.u32_at(used));
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].name, entries[3].name);
  ASSERT_EQ(guest.errno_of("fd_readdir", {3, buf, 4096, 99, used}), e::success);
  EXPECT_EQ(guest.u32_at(used), 0u);
}

TEST_F(FileFixture, ReaddirFillsASmallBufferExactly) {
  FakeGuest guest(config_with_mount(tree.root(), false));
  const std::uint32_t buf = guest.alloc(64, 8);
  const std::uint32_t used = guest.alloc(4, 4);
  ASSERT_EQ(guest.errno_of("fd_readdir", {3, buf, 30, 0, used}), e::success);
  EXPECT_EQ(guest.u32_at(used), 30u);  // "." (25 bytes) then 5 bytes of ".."'s header
  EXPECT_EQ(guest.u64_at(buf), 1u);
  EXPECT_EQ(guest.bytes_at(buf + 24, 1), ".");
  ASSERT_EQ(guest.errno_of("fd_readdir", {3, buf, 10, 0, used}), e::success);
  EXPECT_EQ(guest.u32_at(used), 10u);
}

TEST_F(FileFixture, ReaddirOnNonDirectories) {
  FakeGuest guest(config_with_mount(tree.root(), false));
  const std::uint32_t buf = guest.alloc(64, 8);
  const std::uint32_t used = guest.alloc(4, 4);
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "data.txt", &fd), e::success);
  EXPECT_EQ(guest.errno_of("fd_readdir", {fd, buf, 64, 0, used}), e::badf);
  EXPECT_EQ(guest.errno_of("fd_readdir", {0, buf, 64, 0, used}), e::badf);
  EXPECT_EQ(guest.call("fd_readdir", {3, guest.memory_size() - 8, 64, 0, used}).status, wasm::HostStatus::Trap);
}

TEST_F(FileFixture, ReaddirOfAnOpenedSubdirectory) {
  tree.file("sub/x", "1");
  FakeGuest guest(config_with_mount(tree.root(), false));
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "sub", &fd, abi::oflags::directory), e::success);
  const std::uint32_t buf = guest.alloc(512, 8);
  const std::uint32_t used = guest.alloc(4, 4);
  ASSERT_EQ(guest.errno_of("fd_readdir", {fd, buf, 512, 0, used}), e::success);
  auto entries = parse_dirents(guest, buf, guest.u32_at(used));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[2].name, "x");
  // Twice in a row gives the same listing (each call starts from the beginning).
  ASSERT_EQ(guest.errno_of("fd_readdir", {fd, buf, 512, 0, used}), e::success);
  EXPECT_EQ(parse_dirents(guest, buf, guest.u32_at(used)).size(), 3u);
}

}  // namespace
}  // namespace sprawling::wasi::test
