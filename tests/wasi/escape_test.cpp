// The sandbox-escape suite (escape_*) and the advisory regressions (GHSA_*): a hostile guest
// tries to read, write or learn something outside its mounts, or to change a read-only mount.
// Each attempt asserts the errno it gets AND that the host tree is byte-for-byte unchanged.
#include "wasi_test_support.hpp"

#include "wasi/state.hpp"

#include <atomic>
#include <cstdio>
#include <fcntl.h>
#include <thread>
#include <unistd.h>

namespace sprawling::wasi::test {
namespace {

namespace o = abi::oflags;
constexpr std::uint64_t kRW = r::fd_read | r::fd_write | r::fd_seek;
constexpr std::uint32_t kRwFd = 3;  // preopen "/rw" (writable)
constexpr std::uint32_t kRoFd = 4;  // preopen "/ro" (read-only)

// world/
//   outside/secret.txt, outside/victim       — never reachable
//   rw/  (writable mount)  a.txt, sub/inside.txt, and host-planted symlinks that point out
//   ro/  (read-only mount) ro.txt, rodir/file
struct Escape : ::testing::Test {
  TempTree world;
  std::string before;
  std::unique_ptr<FakeGuest> guest;

  void SetUp() override {
    world.dir("outside");
    world.file("outside/secret.txt", "secret");
    world.file("outside/victim", "victim");
    world.dir("rw/sub");
    world.file("rw/a.txt", "aaa");
    world.file("rw/sub/inside.txt", "inside");
    world.symlink("/", "rw/to_root");
    world.symlink("../..", "rw/up2");
    world.symlink("chain2", "rw/chain1");
    world.symlink("sub/../chain3", "rw/chain2");
    world.symlink("../outside", "rw/chain3");
    world.symlink("../outside/secret.txt", "rw/to_secret");
    world.symlink(world.path("outside").string(), "rw/abs_outside");
    world.symlink("../outside/created", "rw/dangling_out");
    world.dir("ro/rodir");
    world.file("ro/ro.txt", "read only");
    world.file("ro/rodir/file", "ro file");
    WasiConfig config;
    config.preopens.push_back({world.path("rw"), "/rw", true});
    config.preopens.push_back({world.path("ro"), "/ro", false});
    guest = std::make_unique<FakeGuest>(std::move(config));
    before = tree_fingerprint(world.root());
  }

  void expect_unchanged() { EXPECT_EQ(tree_fingerprint(world.root()), before); }

  std::uint16_t open(std::uint32_t dir, std::string_view path, std::uint32_t oflags = 0,
                     std::uint64_t rights = r::fd_read, std::uint32_t lookup = abi::lookupflags::symlink_follow,
                     std::uint32_t* fd = nullptr) {
    std::uint32_t ignored = 0;
    return guest->open(dir, path, fd != nullptr ? fd : &ignored, oflags, rights, 0, lookup);
  }
  std::uint16_t two_paths(std::string_view fn, std::uint32_t from_fd, std::string_view from, std::uint32_t to_fd,
                          std::string_view to) {
    const std::uint32_t a = guest->put(from);
    const std::uint32_t b = guest->put(to);
    if (fn == "path_link") return guest->errno_of(fn, {from_fd, 0, a, from.size(), to_fd, b, to.size()});
    return guest->errno_of(fn, {from_fd, a, from.size(), to_fd, b, to.size()});
  }
  std::uint16_t symlink(std::string_view target, std::uint32_t dir, std::string_view name) {
    const std::uint32_t a = guest->put(target);
    const std::uint32_t b = guest->put(name);
    return guest->errno_of("path_symlink", {a, target.size(), dir, b, name.size()});
  }
  std::uint16_t stat(std::uint32_t dir, std::string_view path, std::uint32_t lookup) {
    const std::uint32_t p = guest->put(path);
    return guest->errno_of("path_filestat_get", {dir, lookup, p, path.size(), guest->alloc(64, 8)});
  }
  std::uint16_t set_times(std::uint32_t dir, std::string_view path) {
    const std::uint32_t p = guest->put(path);
    return guest->errno_of("path_filestat_set_times", {dir, 1, p, path.size(), 0, 0, abi::fstflags::mtim_now});
  }
  int host_fd_of(std::uint32_t guest_fd) { return guest->context().state().fds.find(guest_fd)->host.get(); }
};

// ---------------------------------------------------------------- `..` and absolute paths

TEST_F(Escape, escape_dotdot_chains) {
  for (const char* path : {"..", "../outside/secret.txt", "sub/../../outside/secret.txt", "sub/../..",
                           "../../../../../../../../etc/passwd", "./sub/./../../rw/a.txt", "sub/../../outside"}) {
    EXPECT_EQ(open(kRwFd, path), e::perm) << path;
    EXPECT_EQ(stat(kRwFd, path, 0), e::perm) << path;
  }
  for (const char* path : {"..", "../outside/secret.txt", "rodir/../../outside/secret.txt", "rodir/../..",
                           "../ro/ro.txt", "../rw/a.txt"}) {
    EXPECT_EQ(open(kRoFd, path), e::perm) << path;
    EXPECT_EQ(stat(kRoFd, path, 1), e::perm) << path;
  }
  EXPECT_EQ(open(kRwFd, "../outside/new", o::creat, kRW), e::perm);
  EXPECT_EQ(open(kRwFd, "../outside/victim", o::trunc, kRW), e::perm);
  EXPECT_EQ(guest->path_call("path_create_directory", kRwFd, "../evil"), e::perm);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, "../outside/victim"), e::perm);
  EXPECT_EQ(guest->path_call("path_remove_directory", kRwFd, "../outside"), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRwFd, "a.txt", kRwFd, "../outside/a.txt"), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRwFd, "../outside/victim", kRwFd, "got"), e::perm);
  EXPECT_EQ(symlink("x", kRwFd, "../outside/link"), e::perm);
  EXPECT_EQ(set_times(kRwFd, "../outside/victim"), e::perm);
  // `..` as the last component names the mount's parent: refused for every entry operation.
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, ".."), e::perm);
  EXPECT_EQ(guest->path_call("path_remove_directory", kRwFd, ".."), e::perm);
  EXPECT_EQ(guest->path_call("path_create_directory", kRwFd, "sub/../.."), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRwFd, "..", kRwFd, "x"), e::perm);
  EXPECT_EQ(two_paths("path_link", kRwFd, "..", kRwFd, "x"), e::perm);
  expect_unchanged();
}

TEST_F(Escape, escape_absolute_paths) {
  const std::string outside = world.path("outside/secret.txt").string();
  for (const std::string& path : {std::string("/"), std::string("/etc/passwd"), outside, std::string("//etc"),
                                  world.path("rw/a.txt").string()}) {
    EXPECT_EQ(open(kRwFd, path), e::perm) << path;
    EXPECT_EQ(stat(kRoFd, path, 1), e::perm) << path;
  }
  EXPECT_EQ(open(kRwFd, world.path("outside/new").string(), o::creat, kRW), e::perm);
  EXPECT_EQ(guest->path_call("path_create_directory", kRwFd, "/tmp/sprawling-evil"), e::perm);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, world.path("outside/victim").string()), e::perm);
  EXPECT_EQ(guest->path_call("path_create_directory", kRwFd, "/"), e::perm);
  EXPECT_EQ(symlink("/etc/passwd", kRwFd, "pw"), e::perm);  // absolute link targets are refused
  EXPECT_EQ(two_paths("path_link", kRwFd, outside, kRwFd, "stolen"), e::perm);
  expect_unchanged();
}

// ---------------------------------------------------------------- symlinks that point out

TEST_F(Escape, escape_symlink_to_root) {
  EXPECT_EQ(open(kRwFd, "to_root"), e::perm);
  EXPECT_EQ(open(kRwFd, "to_root/etc/passwd"), e::perm);
  EXPECT_EQ(open(kRwFd, "to_root/", o::directory), e::perm);
  EXPECT_EQ(open(kRwFd, "to_root", 0, r::fd_read, 0), e::loop);  // not followed: the link itself
  EXPECT_EQ(open(kRwFd, "abs_outside/secret.txt"), e::perm);
  EXPECT_EQ(stat(kRwFd, "to_root", 1), e::perm);
  EXPECT_EQ(stat(kRwFd, "to_root", 0), e::success);  // lstat of a link inside the mount
  EXPECT_EQ(set_times(kRwFd, "to_root"), e::perm);
  EXPECT_EQ(guest->path_call("path_create_directory", kRwFd, "to_root/tmp/evil"), e::perm);
  EXPECT_EQ(open(kRwFd, "to_root/tmp/evil", o::creat, kRW), e::perm);
  expect_unchanged();
}

TEST_F(Escape, escape_symlink_to_dotdot) {
  EXPECT_EQ(open(kRwFd, "up2"), e::perm);
  EXPECT_EQ(open(kRwFd, "up2/outside/secret.txt"), e::perm);
  EXPECT_EQ(open(kRwFd, "to_secret"), e::perm);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, "up2/outside/victim"), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRwFd, "up2/outside/victim", kRwFd, "got"), e::perm);
  // O_CREAT through a dangling link whose target is outside: refused, nothing created.
  EXPECT_EQ(open(kRwFd, "dangling_out", o::creat, kRW), e::perm);
  EXPECT_FALSE(world.exists("outside/created"));
  // Trailing slashes (GHSA-vqjp-4c8c-hfgg's class): still confined, and entry operations on
  // "link/" never act on the link's target.
  EXPECT_EQ(open(kRwFd, "up2/", o::directory), e::perm);
  EXPECT_EQ(guest->path_call("path_remove_directory", kRwFd, "up2/"), e::notdir);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, "to_root/"), e::notdir);
  EXPECT_EQ(guest->path_call("path_create_directory", kRwFd, "dangling_out/"), e::exist);
  EXPECT_FALSE(world.exists("outside/created"));
  EXPECT_EQ(two_paths("path_rename", kRwFd, "up2/", kRwFd, "moved"), e::notdir);
  EXPECT_EQ(two_paths("path_rename", kRwFd, "a.txt", kRwFd, "to_root/"), e::notdir);
  EXPECT_EQ(two_paths("path_link", kRwFd, "up2/", kRwFd, "alias"), e::notdir);
  EXPECT_EQ(two_paths("path_link", kRwFd, "a.txt", kRwFd, "dangling_out/"), e::exist);
  EXPECT_EQ(symlink("x", kRwFd, "dangling_out/"), e::exist);
  EXPECT_EQ(stat(kRwFd, "up2/", 0), e::perm);
  EXPECT_EQ(set_times(kRwFd, "to_root/"), e::perm);
  EXPECT_FALSE(world.exists("outside/created"));
  expect_unchanged();
}

TEST_F(Escape, escape_guest_made_symlinks_that_point_out) {
  ASSERT_EQ(symlink("../../outside", kRwFd, "sub/mine"), e::success);  // relative targets may be stored
  ASSERT_EQ(symlink("../outside/made", kRwFd, "mine2"), e::success);
  const std::string after_links = tree_fingerprint(world.root());
  EXPECT_EQ(open(kRwFd, "sub/mine/secret.txt"), e::perm);
  EXPECT_EQ(open(kRwFd, "mine2", o::creat, kRW), e::perm);
  EXPECT_EQ(guest->path_call("path_create_directory", kRwFd, "sub/mine/newdir"), e::perm);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, "sub/mine/victim"), e::perm);
  EXPECT_FALSE(world.exists("outside/made"));
  EXPECT_EQ(tree_fingerprint(world.root()), after_links);
}

TEST_F(Escape, escape_symlink_chain_leaving_the_mount) {
  EXPECT_EQ(open(kRwFd, "chain1"), e::perm);
  EXPECT_EQ(open(kRwFd, "chain1/secret.txt"), e::perm);
  EXPECT_EQ(stat(kRwFd, "chain1/secret.txt", 1), e::perm);
  EXPECT_EQ(open(kRwFd, "chain1/victim", o::trunc, kRW), e::perm);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, "chain1/victim"), e::perm);
  expect_unchanged();
}

TEST_F(Escape, escape_symlink_swapped_mid_walk) {
  world.file("rw/sub/victim", "inner victim");
  world.symlink("sub", "rw/flip");
  const std::string outside_before = tree_fingerprint(world.path("outside"));
  std::atomic<bool> stop{false};
  // The host side swaps "flip" between an inside and an outside target as fast as it can.
  std::thread swapper([&] {
    const std::string flip = world.path("rw/flip").string();
    const std::string tmp = world.path("rw/flip.tmp").string();
    bool out = false;
    while (!stop.load()) {
      ::unlink(tmp.c_str());
      if (::symlink(out ? "../outside" : "sub", tmp.c_str()) == 0) ::rename(tmp.c_str(), flip.c_str());
      out = !out;
    }
  });
  int inside_reads = 0;
  int refusals = 0;
  for (int i = 0; i < 3000; ++i) {
    std::uint32_t fd = 0;
    const std::uint16_t err = open(kRwFd, "flip/secret.txt", 0, r::fd_read, 1, &fd);
    EXPECT_TRUE(err == e::perm || err == e::noent) << err;  // sub/ has no secret.txt
    if (err == e::success) (void)guest->errno_of("fd_close", {fd});
    const std::uint16_t victim = open(kRwFd, "flip/victim", 0, r::fd_read, 1, &fd);
    if (victim == e::success) {
      std::string text;
      ASSERT_EQ(guest->read(fd, 64, &text), e::success);
      EXPECT_EQ(text, "inner victim");
      ++inside_reads;
      (void)guest->errno_of("fd_close", {fd});
    } else {
      EXPECT_TRUE(victim == e::perm || victim == e::noent) << victim;
      if (victim == e::perm) ++refusals;
    }
    const std::uint16_t unlinked = guest->path_call("path_unlink_file", kRwFd, "flip/victim");
    if (unlinked == e::success) world.file("rw/sub/victim", "inner victim");
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(tree_fingerprint(world.path("outside")), outside_before);
  EXPECT_TRUE(world.exists("outside/victim"));
  // Both states of the link were met (the race was real), and neither ever leaked.
  std::printf("swapped link: %d inside reads, %d refusals\n", inside_reads, refusals);
  EXPECT_GT(inside_reads + refusals, 0);
}

// ---------------------------------------------------------------- links

TEST_F(Escape, escape_hard_link_to_an_outside_file) {
  EXPECT_EQ(two_paths("path_link", kRwFd, "../outside/secret.txt", kRwFd, "stolen"), e::perm);
  EXPECT_EQ(two_paths("path_link", kRwFd, "up2/outside/secret.txt", kRwFd, "stolen"), e::perm);
  EXPECT_EQ(two_paths("path_link", kRwFd, "chain1/secret.txt", kRwFd, "stolen"), e::perm);
  // SYMLINK_FOLLOW (which would link the outside target itself) is refused.
  const std::uint32_t a = guest->put("to_secret");
  const std::uint32_t b = guest->put("stolen");
  EXPECT_EQ(guest->errno_of("path_link", {kRwFd, abi::lookupflags::symlink_follow, a, 9, kRwFd, b, 6}), e::inval);
  EXPECT_FALSE(world.exists("rw/stolen"));
  expect_unchanged();
  // Linking the symlink itself only copies the link, which stays confined when followed.
  ASSERT_EQ(two_paths("path_link", kRwFd, "to_secret", kRwFd, "stolen"), e::success);
  EXPECT_EQ(open(kRwFd, "stolen"), e::perm);
  EXPECT_EQ(world.read("outside/secret.txt"), "secret");
}

// ---------------------------------------------------------------- read-only mounts

TEST_F(Escape, escape_rename_out_of_into_and_across_read_only_mounts) {
  EXPECT_EQ(two_paths("path_rename", kRoFd, "ro.txt", kRwFd, "stolen"), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRwFd, "a.txt", kRoFd, "planted"), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRoFd, "ro.txt", kRoFd, "renamed"), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRoFd, "rodir", kRoFd, "rodir2"), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRoFd, "rodir/file", kRwFd, "sub/file"), e::perm);
  EXPECT_EQ(two_paths("path_link", kRoFd, "ro.txt", kRwFd, "alias"), e::perm);
  EXPECT_EQ(two_paths("path_link", kRwFd, "a.txt", kRoFd, "alias"), e::perm);
  EXPECT_EQ(two_paths("path_link", kRoFd, "ro.txt", kRoFd, "alias"), e::perm);
  expect_unchanged();
}

TEST_F(Escape, escape_write_rights_on_read_only_files) {
  EXPECT_EQ(open(kRoFd, "ro.txt", o::trunc), e::perm);
  EXPECT_EQ(open(kRoFd, "ro.txt", o::creat), e::perm);
  EXPECT_EQ(open(kRoFd, "new.txt", o::creat, kRW), e::perm);
  EXPECT_EQ(open(kRoFd, "ro.txt", o::creat | o::excl), e::perm);
  EXPECT_EQ(open(kRoFd, "ro.txt", o::excl), e::perm);
  EXPECT_EQ(open(kRoFd, "ro.txt", 0, r::fd_write), e::perm);
  EXPECT_EQ(open(kRoFd, "ro.txt", 0, kRW), e::perm);
  EXPECT_EQ(open(kRoFd, "rodir/file", o::trunc, kRW), e::perm);
  // Opened for reading: every mutation through the fd is refused before the OS…
  std::uint32_t fd = 0;
  ASSERT_EQ(open(kRoFd, "ro.txt", 0, r::fd_read, 1, &fd), e::success);
  EXPECT_EQ(guest->write(fd, "x"), e::perm);
  EXPECT_EQ(guest->pwrite(fd, "x", 0), e::perm);
  EXPECT_EQ(guest->errno_of("fd_filestat_set_size", {fd, 0}), e::perm);
  EXPECT_EQ(guest->errno_of("fd_filestat_set_times", {fd, 0, 0, abi::fstflags::mtim_now}), e::perm);
  EXPECT_EQ(guest->errno_of("fd_allocate", {fd, 0, 4096}), e::perm);
  // … and the host fd itself is read-only, so the rule holds at the OS too.
  EXPECT_EQ(::fcntl(host_fd_of(fd), F_GETFL) & O_ACCMODE, O_RDONLY);
  EXPECT_EQ(::write(host_fd_of(fd), "x", 1), -1);
  // The directory: every entry operation is refused.
  EXPECT_EQ(guest->path_call("path_create_directory", kRoFd, "newdir"), e::perm);
  EXPECT_EQ(guest->path_call("path_remove_directory", kRoFd, "rodir"), e::perm);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRoFd, "ro.txt"), e::perm);
  EXPECT_EQ(symlink("ro.txt", kRoFd, "link"), e::perm);
  EXPECT_EQ(set_times(kRoFd, "ro.txt"), e::perm);
  EXPECT_EQ(guest->errno_of("fd_filestat_set_times", {kRoFd, 0, 0, abi::fstflags::mtim_now}), e::perm);
  std::uint32_t dir = 0;
  ASSERT_EQ(open(kRoFd, "rodir", o::directory, r::fd_read, 1, &dir), e::success);
  EXPECT_EQ(open(dir, "file", o::trunc), e::perm);
  EXPECT_EQ(guest->path_call("path_unlink_file", dir, "file"), e::perm);
  // Reading is allowed.
  std::string text;
  ASSERT_EQ(guest->read(fd, 64, &text), e::success);
  EXPECT_EQ(text, "read only");
  expect_unchanged();
}

TEST_F(Escape, escape_fd_renumber_over_a_preopen) {
  std::uint32_t ro_file = 0;
  ASSERT_EQ(open(kRoFd, "ro.txt", 0, r::fd_read, 1, &ro_file), e::success);
  ASSERT_EQ(guest->errno_of("fd_renumber", {ro_file, kRwFd}), e::success);
  // fd 3 is now the read-only file, not the writable directory.
  EXPECT_EQ(open(kRwFd, "a.txt", o::trunc, kRW), e::notdir);
  EXPECT_EQ(guest->write(kRwFd, "x"), e::perm);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, "a.txt"), e::badf);
  const std::uint32_t prestat = guest->alloc(8, 4);
  EXPECT_EQ(guest->errno_of("fd_prestat_get", {kRwFd, prestat}), e::badf);
  // The read-only preopen renumbered onto another number keeps its permission.
  ASSERT_EQ(guest->errno_of("fd_renumber", {kRoFd, 1}), e::success);
  EXPECT_EQ(open(1, "ro.txt", o::trunc), e::perm);
  EXPECT_EQ(guest->path_call("path_unlink_file", 1, "ro.txt"), e::perm);
  expect_unchanged();
}

TEST_F(Escape, escape_write_through_a_renumbered_read_only_fd) {
  std::uint32_t ro_file = 0;
  std::uint32_t rw_file = 0;
  ASSERT_EQ(open(kRoFd, "ro.txt", 0, r::fd_read, 1, &ro_file), e::success);
  ASSERT_EQ(open(kRwFd, "a.txt", 0, kRW, 1, &rw_file), e::success);
  ASSERT_EQ(guest->errno_of("fd_renumber", {ro_file, rw_file}), e::success);
  EXPECT_EQ(guest->write(rw_file, "overwrite"), e::perm);
  EXPECT_EQ(guest->pwrite(rw_file, "overwrite", 0), e::perm);
  EXPECT_EQ(guest->errno_of("fd_filestat_set_size", {rw_file, 0}), e::perm);
  std::uint32_t again = 0;
  ASSERT_EQ(open(kRoFd, "ro.txt", 0, r::fd_read, 1, &again), e::success);
  ASSERT_EQ(guest->errno_of("fd_renumber", {again, 1}), e::success);  // over stdout
  EXPECT_EQ(guest->write(1, "overwrite"), e::perm);
  EXPECT_TRUE(guest->context().stdout_bytes().empty());
  expect_unchanged();
}

// ---------------------------------------------------------------- magic links

TEST_F(Escape, escape_proc_magic_links) {
  const int outside_fd = ::open(world.path("outside/secret.txt").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(outside_fd, 0);
  world.symlink("/proc/self/fd/" + std::to_string(outside_fd), "rw/pfd");
  world.symlink("/proc/self/root", "rw/proot");
  before = tree_fingerprint(world.root());
  EXPECT_EQ(open(kRwFd, "pfd"), e::perm);
  EXPECT_EQ(open(kRwFd, "proot/etc/passwd"), e::perm);
  EXPECT_EQ(open(kRwFd, "pfd", o::trunc, kRW), e::perm);
  // With /proc itself mounted (read-only), the magic links inside it are refused by the kernel.
  WasiConfig config;
  config.preopens.push_back({"/proc", "/proc", false});
  FakeGuest proc(std::move(config));
  std::uint32_t fd = 0;
  for (const std::string& path : std::vector<std::string>{"self/root", "self/root/etc/passwd", "self/cwd", "self/exe",
                                                        "thread-self/root", "self/fd/" + std::to_string(outside_fd),
                                                        "self/fd/0"}) {
    EXPECT_EQ(proc.open(3, path, &fd), e::loop) << path;
  }
  // Plain files in /proc stay readable: the refusal is about magic links, not /proc.
  EXPECT_EQ(proc.open(3, "self/status", &fd), e::success);
  ::close(outside_fd);
  expect_unchanged();
}

// ---------------------------------------------------------------- malformed paths

TEST_F(Escape, escape_very_long_paths) {
  std::string many_dots;
  for (int i = 0; i < 1000; ++i) many_dots += "../";
  EXPECT_EQ(open(kRwFd, many_dots + "outside/secret.txt"), e::perm);
  std::string too_long;
  while (too_long.size() < 5000) too_long += "sub/../";
  EXPECT_EQ(open(kRwFd, too_long + "a.txt"), e::nametoolong);
  EXPECT_EQ(open(kRwFd, std::string(70000, 'x')), e::nametoolong);
  EXPECT_EQ(guest->path_call("path_create_directory", kRwFd, std::string(256, 'd')), e::nametoolong);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, too_long + "a.txt"), e::nametoolong);
  // A path as long as guest memory allows, running off its end: a trap, not a host over-read.
  const std::uint32_t out = guest->alloc(4, 4);
  EXPECT_EQ(guest->call("path_open", {kRwFd, 1, 16, guest->memory_size(), 0, r::fd_read, 0, 0, out}).status,
            wasm::HostStatus::Trap);
  expect_unchanged();
}

TEST_F(Escape, escape_paths_with_nul) {
  const std::string sneaky("a.txt\0/../../outside/secret.txt", 31);
  EXPECT_EQ(open(kRwFd, sneaky), e::inval);
  EXPECT_EQ(open(kRwFd, sneaky, o::trunc, kRW), e::inval);
  EXPECT_EQ(guest->path_call("path_unlink_file", kRwFd, sneaky), e::inval);
  EXPECT_EQ(guest->path_call("path_create_directory", kRwFd, std::string("x\0y", 3)), e::inval);
  EXPECT_EQ(two_paths("path_rename", kRwFd, sneaky, kRwFd, "b"), e::inval);
  EXPECT_EQ(two_paths("path_link", kRwFd, "a.txt", kRwFd, std::string("b\0c", 3)), e::inval);
  EXPECT_EQ(symlink(std::string("/\0x", 3), kRwFd, "l"), e::inval);
  EXPECT_EQ(stat(kRwFd, sneaky, 1), e::inval);
  expect_unchanged();
}

TEST_F(Escape, escape_ten_thousand_open_files) {
  const std::size_t host_before = host_fd_count();
  std::vector<std::uint32_t> opened;
  std::uint16_t last_error = e::success;
  for (int i = 0; i < 10'000; ++i) {
    std::uint32_t fd = 0;
    const std::uint16_t err = open(kRwFd, "a.txt", 0, r::fd_read, 1, &fd);
    if (err == e::success) {
      opened.push_back(fd);
    } else {
      last_error = err;
    }
  }
  EXPECT_EQ(last_error, e::mfile);
  EXPECT_EQ(guest->context().open_fd_count(), 1024u);
  EXPECT_EQ(opened.size(), 1024u - 5u);
  // Exactly one host fd per guest fd: refused opens leaked nothing.
  EXPECT_EQ(host_fd_count(), host_before + opened.size());
  // Directories and creations are refused the same way once full.
  EXPECT_EQ(open(kRwFd, "sub", o::directory), e::mfile);
  EXPECT_EQ(open(kRwFd, "brand-new", o::creat, kRW), e::mfile);
  EXPECT_FALSE(world.exists("rw/brand-new"));
  for (std::uint32_t fd : opened) ASSERT_EQ(guest->errno_of("fd_close", {fd}), e::success);
  EXPECT_EQ(host_fd_count(), host_before);
  std::uint32_t fd = 0;
  EXPECT_EQ(open(kRwFd, "a.txt", 0, r::fd_read, 1, &fd), e::success);
  expect_unchanged();
}

// ---------------------------------------------------------------- advisories

TEST_F(Escape, GHSA_2r75_cxrj_cmph_path_open_trunc_on_read_only_mount) {
  // path_open(fd, 0, name, O_TRUNC, FD_READ, 0, 0): TRUNC alone is write intent.
  const std::uint32_t p = guest->put("ro.txt");
  const std::uint32_t out = guest->alloc(4, 4);
  EXPECT_EQ(guest->errno_of("path_open", {kRoFd, 0, p, 6, o::trunc, r::fd_read, 0, 0, out}), e::perm);
  EXPECT_EQ(guest->errno_of("path_open", {kRoFd, 1, p, 6, o::trunc, 0, 0, 0, out}), e::perm);
  EXPECT_EQ(world.read("ro/ro.txt"), "read only");
  expect_unchanged();
}

TEST_F(Escape, GHSA_4ch3_9j33_3pmj_link_between_mounts_of_different_permissions) {
  EXPECT_EQ(two_paths("path_link", kRoFd, "ro.txt", kRwFd, "writable-alias"), e::perm);
  EXPECT_EQ(two_paths("path_link", kRwFd, "a.txt", kRoFd, "readonly-alias"), e::perm);
  EXPECT_FALSE(world.exists("rw/writable-alias"));
  EXPECT_FALSE(world.exists("ro/readonly-alias"));
  expect_unchanged();
}

TEST_F(Escape, GHSA_4ch3_9j33_3pmj_rename_between_mounts_of_different_permissions) {
  EXPECT_EQ(two_paths("path_rename", kRoFd, "ro.txt", kRwFd, "moved"), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRwFd, "a.txt", kRoFd, "moved"), e::perm);
  // The two-step variant: an alias inside the read-only mount first, then a rename out.
  EXPECT_EQ(two_paths("path_link", kRoFd, "ro.txt", kRoFd, "alias"), e::perm);
  EXPECT_EQ(two_paths("path_rename", kRoFd, "alias", kRwFd, "moved"), e::perm);
  EXPECT_EQ(world.read("ro/ro.txt"), "read only");
  expect_unchanged();
}

}  // namespace
}  // namespace sprawling::wasi::test
