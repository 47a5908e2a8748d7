// The hostcall copy limit (WasiConfig::hostcall_copy_limit, Wasmtime's "hostcall fuel"): what one
// WASI call may take from guest memory. Past it the call is ENOMEM and does nothing — so a guest
// cannot make the host scan 2^29 iovecs, a 3 GiB path or generate gigabytes of randomness for
// the price of one `call` (each of those took the host seconds before the limit).
#include "wasi_test_support.hpp"

namespace sprawling::wasi::test {
namespace {

WasiConfig limited(std::uint64_t limit) {
  WasiConfig config;
  config.hostcall_copy_limit = limit;
  return config;
}

TEST(HostcallCopyLimit, DefaultsToWasmtimes128MiB) {
  EXPECT_EQ(WasiConfig{}.hostcall_copy_limit, std::uint64_t{128} << 20);
}

TEST(HostcallCopyLimit, FdWriteCountsTheIovecArrayAndTheBuffer) {
  FakeGuest guest(limited(8 + 16));
  const std::uint32_t data = guest.put("0123456789abcdef!");
  const std::uint32_t iov = guest.alloc(8, 4);
  const std::uint32_t nwritten = guest.alloc(4, 4);
  guest.set_u32(iov, data);
  guest.set_u32(iov + 4, 16);  // 8 (the array) + 16 (the buffer): exactly the limit
  ASSERT_EQ(guest.errno_of("fd_write", {1, iov, 1, nwritten}), e::success);
  EXPECT_EQ(guest.u32_at(nwritten), 16u);
  guest.set_u32(iov + 4, 17);  // one byte more: nothing is written
  EXPECT_EQ(guest.errno_of("fd_write", {1, iov, 1, nwritten}), e::nomem);
  EXPECT_EQ(guest.context().stdout_bytes().size(), 16u);
}

TEST(HostcallCopyLimit, AHugeIovecCountIsRefusedWithoutScanningIt) {
  FakeGuest guest(WasiConfig{});
  const std::uint32_t nwritten = guest.alloc(4, 4);
  // 2^29 records of 8 bytes = 4 GiB of iovec array: ENOMEM at once, not a bounds trap after a
  // scan of the whole (empty) vector memory.
  EXPECT_EQ(guest.errno_of("fd_write", {1, 0, 1u << 29, nwritten}), e::nomem);
  EXPECT_EQ(guest.errno_of("fd_read", {0, 0, 1u << 29, nwritten}), e::nomem);
  // Within the limit, an out-of-bounds record still traps, as before.
  const CallOutcome oob = guest.call("fd_write", {1, guest.memory_size() - 4, 1, nwritten});
  EXPECT_EQ(oob.status, wasm::HostStatus::Trap);
}

TEST(HostcallCopyLimit, APathCountsItsLength) {
  TempTree tree;
  WasiConfig config = config_with_mount(tree.root(), true);
  config.hostcall_copy_limit = 3;
  FakeGuest guest(std::move(config));
  EXPECT_EQ(guest.path_call("path_create_directory", 3, "abc"), e::success);
  EXPECT_TRUE(tree.exists("abc"));
  EXPECT_EQ(guest.path_call("path_create_directory", 3, "abcd"), e::nomem);
  EXPECT_FALSE(tree.exists("abcd"));
}

TEST(HostcallCopyLimit, AnOverlongPathIsRefusedBeforeItsBytesAreChecked) {
  TempTree tree;
  FakeGuest guest(config_with_mount(tree.root(), true));
  // PATH_MAX bytes holding a NUL and bad UTF-8: ENAMETOOLONG from the length alone.
  std::string path(4096, 'a');
  path[10] = '\0';
  path[20] = '\xff';
  EXPECT_EQ(guest.path_call("path_create_directory", 3, path), e::nametoolong);
  // Past the copy limit: ENOMEM, whatever the bytes.
  EXPECT_EQ(guest.errno_of("path_create_directory", {3, 0, std::uint64_t{200} << 20}), e::nomem);
}

TEST(HostcallCopyLimit, RandomGetAndPollOneoffCountTheirBytes) {
  FakeGuest guest(limited(64));
  const std::uint32_t buf = guest.alloc(128, 8);
  EXPECT_EQ(guest.errno_of("random_get", {buf, 64}), e::success);
  EXPECT_EQ(guest.errno_of("random_get", {buf, 65}), e::nomem);
  // One subscription is 48 bytes, two are 96.
  const std::uint32_t subs = guest.alloc(96, 8);
  const std::uint32_t events = guest.alloc(64, 8);
  const std::uint32_t nevents = guest.alloc(4, 4);
  for (std::uint32_t s : {subs, subs + 48}) {
    guest.set_bytes(s, std::string(48, '\0'));
    guest.set_bytes(s + 8, std::string(1, '\0'));  // tag 0: clock
    guest.set_u32(s + 16, abi::clockid::monotonic);
  }
  EXPECT_EQ(guest.errno_of("poll_oneoff", {subs, events, 1, nevents}), e::success);
  EXPECT_EQ(guest.errno_of("poll_oneoff", {subs, events, 2, nevents}), e::nomem);
}

TEST(HostcallCopyLimit, TheLimitIsPerCall) {
  FakeGuest guest(limited(8 + 4));
  std::uint32_t n = 0;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(guest.write(1, "four", &n), e::success) << i;
  EXPECT_EQ(guest.context().stdout_bytes().size(), 400u);
}

}  // namespace
}  // namespace sprawling::wasi::test
