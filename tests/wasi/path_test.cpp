// path_* functions called directly on a writable mount: opening (flags, symlinks, errors),
// directories, stat and times, links, readlink, rename, symlink, unlink.
#include "wasi_test_support.hpp"

#include <sys/stat.h>

namespace sprawling::wasi::test {
namespace {

namespace o = abi::oflags;
constexpr std::uint64_t kRW = r::fd_read | r::fd_write | r::fd_seek;
constexpr std::uint32_t kNoFollow = 0;

struct PathTest : ::testing::Test {
  TempTree tree;
  void SetUp() override {
    tree.file("file", "content");
    tree.dir("dir/inner");
    tree.file("dir/inner/deep", "deep");
    tree.symlink("file", "to_file");
    tree.symlink("dir", "to_dir");
    tree.symlink("missing", "dangling");
    tree.symlink("loop", "loop");
  }
  FakeGuest guest{config_with_mount(tree.root(), true)};
};

// ---------------------------------------------------------------- path_open

TEST_F(PathTest, OpenCreateExclTrunc) {
  std::uint32_t fd = 0;
  EXPECT_EQ(guest.open(3, "new", &fd), e::noent);
  ASSERT_EQ(guest.open(3, "new", &fd, o::creat, kRW), e::success);
  ASSERT_EQ(guest.write(fd, "abc"), e::success);
  EXPECT_EQ(tree.read("new"), "abc");
  EXPECT_EQ(guest.open(3, "new", &fd, o::creat | o::excl, kRW), e::exist);
  ASSERT_EQ(guest.open(3, "new", &fd, o::trunc, kRW), e::success);
  EXPECT_EQ(tree.read("new"), "");
  // TRUNC with only FD_READ on a writable mount still truncates (write intent is implied).
  tree.file("t", "xyz");
  ASSERT_EQ(guest.open(3, "t", &fd, o::trunc, r::fd_read), e::success);
  EXPECT_EQ(tree.read("t"), "");
}

TEST_F(PathTest, OpenDirectoryFlag) {
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "dir", &fd, o::directory), e::success);
  EXPECT_EQ(guest.open(3, "file", &fd, o::directory), e::notdir);
  EXPECT_EQ(guest.open(3, "dir", &fd, o::directory | o::creat), e::inval);
  EXPECT_EQ(guest.open(3, "dir", &fd, o::directory | o::trunc), e::inval);
  EXPECT_EQ(guest.open(3, "dir", &fd, 0, kRW), e::isdir);
  // A directory opened without O_DIRECTORY is still a directory fd.
  ASSERT_EQ(guest.open(3, "dir", &fd), e::success);
  const std::uint32_t st = guest.alloc(24, 8);
  ASSERT_EQ(guest.errno_of("fd_fdstat_get", {fd, st}), e::success);
  EXPECT_EQ(guest.u8_at(st), abi::filetype::directory);
  std::uint32_t inner = 0;
  ASSERT_EQ(guest.open(fd, "inner/deep", &inner), e::success);
  std::string text;
  ASSERT_EQ(guest.read(inner, 10, &text), e::success);
  EXPECT_EQ(text, "deep");
  // path_open on a file fd: ENOTDIR; on stdio: EBADF.
  EXPECT_EQ(guest.open(inner, "x", &fd), e::notdir);
  EXPECT_EQ(guest.open(1, "x", &fd), e::badf);
  EXPECT_EQ(guest.open(42, "x", &fd), e::badf);
}

TEST_F(PathTest, OpenSymlinksFollowedOrNot) {
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "to_file", &fd), e::success);
  EXPECT_EQ(guest.open(3, "to_file", &fd, 0, r::fd_read, 0, kNoFollow), e::loop);
  EXPECT_EQ(guest.open(3, "to_dir", &fd, o::directory, r::fd_read, 0, kNoFollow), e::notdir);
  ASSERT_EQ(guest.open(3, "to_dir/inner/deep", &fd, 0, r::fd_read, 0, kNoFollow), e::success);
  EXPECT_EQ(guest.open(3, "dangling", &fd), e::noent);
  EXPECT_EQ(guest.open(3, "loop", &fd), e::loop);
  EXPECT_EQ(guest.open(3, "loop", &fd, 0, r::fd_read, 0, kNoFollow), e::loop);
  // O_CREAT through a dangling link creates its target (inside the mount).
  ASSERT_EQ(guest.open(3, "dangling", &fd, o::creat, kRW), e::success);
  EXPECT_TRUE(tree.exists("missing"));
}

TEST_F(PathTest, OpenPathErrors) {
  std::uint32_t fd = 0;
  EXPECT_EQ(guest.open(3, "", &fd), e::noent);
  EXPECT_EQ(guest.open(3, "file/", &fd), e::notdir);
  EXPECT_EQ(guest.open(3, "file/x", &fd), e::notdir);
  EXPECT_EQ(guest.open(3, std::string("fi\0le", 5), &fd), e::inval);
  EXPECT_EQ(guest.open(3, "\xff\xfe", &fd), e::ilseq);
  EXPECT_EQ(guest.open(3, "\xc0\xaf", &fd), e::ilseq);  // overlong "/"
  EXPECT_EQ(guest.open(3, std::string(5000, 'a'), &fd), e::nametoolong);
  EXPECT_EQ(guest.open(3, std::string(300, 'a'), &fd), e::nametoolong);  // one component > NAME_MAX
  EXPECT_EQ(guest.open(3, "file", &fd, 0x10), e::inval);                  // unknown oflag
  EXPECT_EQ(guest.open(3, "file", &fd, 0, r::fd_read, 0x20), e::inval);   // unknown fdflag
  EXPECT_EQ(guest.open(3, "file", &fd, 0, 1ull << 31), e::inval);         // unknown right
  EXPECT_EQ(guest.open(3, "file", &fd, 0, r::fd_read, 0, 2), e::inval);   // unknown lookupflag
  EXPECT_EQ(guest.open(3, "file", &fd, 0, kRW, abi::fdflags::sync), e::notsup);
  EXPECT_EQ(guest.open(3, "file", &fd, 0, kRW, abi::fdflags::dsync), e::notsup);
  // UTF-8 names are fine.
  ASSERT_EQ(guest.open(3, "\xc3\xa9t\xc3\xa9", &fd, o::creat, kRW), e::success);
  EXPECT_TRUE(tree.exists("\xc3\xa9t\xc3\xa9"));
  // `..` that stays inside is allowed.
  ASSERT_EQ(guest.open(3, "dir/inner/../../file", &fd), e::success);
  ASSERT_EQ(guest.open(3, "./dir/./inner/deep", &fd), e::success);
}

TEST_F(PathTest, OpenPathOutOfBoundsTraps) {
  const std::uint32_t out = guest.alloc(4, 4);
  auto outcome = guest.call("path_open", {3, 1, guest.memory_size() - 2, 10, 0, r::fd_read, 0, 0, out});
  EXPECT_EQ(outcome.status, wasm::HostStatus::Trap);
  const std::uint32_t p = guest.put("file");
  EXPECT_EQ(guest.call("path_open", {3, 1, p, 4, 0, r::fd_read, 0, 0, guest.memory_size()}).status,
            wasm::HostStatus::Trap);
}

// ---------------------------------------------------------------- directories

TEST_F(PathTest, CreateAndRemoveDirectories) {
  EXPECT_EQ(guest.path_call("path_create_directory", 3, "made"), e::success);
  EXPECT_TRUE(std::filesystem::is_directory(tree.path("made")));
  EXPECT_EQ(guest.path_call("path_create_directory", 3, "made"), e::exist);
  EXPECT_EQ(guest.path_call("path_create_directory", 3, "made/a/b"), e::noent);
  EXPECT_EQ(guest.path_call("path_create_directory", 3, "made/a/"), e::success);
  EXPECT_EQ(guest.path_call("path_create_directory", 3, "file/x"), e::notdir);
  EXPECT_EQ(guest.path_call("path_create_directory", 3, "."), e::exist);
  EXPECT_EQ(guest.path_call("path_create_directory", 3, ""), e::noent);
  EXPECT_EQ(guest.path_call("path_remove_directory", 3, "made"), e::notempty);
  EXPECT_EQ(guest.path_call("path_remove_directory", 3, "made/a"), e::success);
  EXPECT_EQ(guest.path_call("path_remove_directory", 3, "made/"), e::success);
  EXPECT_FALSE(tree.exists("made"));
  EXPECT_EQ(guest.path_call("path_remove_directory", 3, "file"), e::notdir);
  EXPECT_EQ(guest.path_call("path_remove_directory", 3, "to_dir"), e::notdir);
  EXPECT_EQ(guest.path_call("path_remove_directory", 3, "nothing"), e::noent);
  EXPECT_EQ(guest.path_call("path_remove_directory", 3, "."), e::inval);
  EXPECT_EQ(guest.path_call("path_remove_directory", 1, "dir"), e::badf);
}

TEST_F(PathTest, UnlinkFiles) {
  EXPECT_EQ(guest.path_call("path_unlink_file", 3, "to_dir"), e::success);  // the link, not the target
  EXPECT_FALSE(tree.exists("to_dir"));
  EXPECT_TRUE(tree.exists("dir/inner/deep"));
  EXPECT_EQ(guest.path_call("path_unlink_file", 3, "dir"), e::isdir);
  EXPECT_EQ(guest.path_call("path_unlink_file", 3, "file/"), e::notdir);
  EXPECT_EQ(guest.path_call("path_unlink_file", 3, "nothing"), e::noent);
  EXPECT_EQ(guest.path_call("path_unlink_file", 3, "file"), e::success);
  EXPECT_FALSE(tree.exists("file"));
  EXPECT_EQ(guest.path_call("path_unlink_file", 3, ".."), e::perm);  // names the parent of the mount
}

// ---------------------------------------------------------------- stat and times

TEST_F(PathTest, FilestatFollowsOrNot) {
  const std::uint32_t st = guest.alloc(64, 8);
  const std::uint32_t p = guest.put("to_file");
  ASSERT_EQ(guest.errno_of("path_filestat_get", {3, 1, p, 7, st}), e::success);
  EXPECT_EQ(guest.u8_at(st + 16), abi::filetype::regular_file);
  EXPECT_EQ(guest.u64_at(st + 32), 7u);
  ASSERT_EQ(guest.errno_of("path_filestat_get", {3, 0, p, 7, st}), e::success);
  EXPECT_EQ(guest.u8_at(st + 16), abi::filetype::symbolic_link);
  EXPECT_EQ(guest.u64_at(st + 32), 4u);  // "file"
  const std::uint32_t d = guest.put("dangling");
  EXPECT_EQ(guest.errno_of("path_filestat_get", {3, 1, d, 8, st}), e::noent);
  ASSERT_EQ(guest.errno_of("path_filestat_get", {3, 0, d, 8, st}), e::success);
  const std::uint32_t dir = guest.put("dir");
  ASSERT_EQ(guest.errno_of("path_filestat_get", {3, 0, dir, 3, st}), e::success);
  EXPECT_EQ(guest.u8_at(st + 16), abi::filetype::directory);
  EXPECT_EQ(guest.errno_of("path_filestat_get", {3, 4, dir, 3, st}), e::inval);
  EXPECT_EQ(guest.errno_of("path_filestat_get", {0, 0, dir, 3, st}), e::badf);
}

TEST_F(PathTest, SetTimesByPath) {
  const std::uint32_t p = guest.put("to_file");
  const std::uint64_t t = 2'000'000'000ull * 1'000'000'000ull;
  ASSERT_EQ(guest.errno_of("path_filestat_set_times", {3, 1, p, 7, t, t, abi::fstflags::atim | abi::fstflags::mtim}),
            e::success);
  struct stat host {};
  ASSERT_EQ(::stat(tree.path("file").c_str(), &host), 0);
  EXPECT_EQ(host.st_mtim.tv_sec, 2'000'000'000);
  // Without follow: the link's own times.
  ASSERT_EQ(guest.errno_of("path_filestat_set_times", {3, 0, p, 7, 0, 5'000'000'000ull, abi::fstflags::mtim}),
            e::success);
  ASSERT_EQ(::lstat(tree.path("to_file").c_str(), &host), 0);
  EXPECT_EQ(host.st_mtim.tv_sec, 5);
  ASSERT_EQ(::stat(tree.path("file").c_str(), &host), 0);
  EXPECT_EQ(host.st_mtim.tv_sec, 2'000'000'000);
  EXPECT_EQ(guest.errno_of("path_filestat_set_times", {3, 1, p, 7, 0, 0, abi::fstflags::mtim | abi::fstflags::mtim_now}),
            e::inval);
}

// ---------------------------------------------------------------- links

TEST_F(PathTest, HardLinks) {
  const std::uint32_t a = guest.put("file");
  const std::uint32_t b = guest.put("dir/alias");
  ASSERT_EQ(guest.errno_of("path_link", {3, 0, a, 4, 3, b, 9}), e::success);
  EXPECT_EQ(tree.read("dir/alias"), "content");
  EXPECT_EQ(guest.errno_of("path_link", {3, 0, a, 4, 3, b, 9}), e::exist);
  EXPECT_EQ(guest.errno_of("path_link", {3, abi::lookupflags::symlink_follow, a, 4, 3, b, 9}), e::inval);
  const std::uint32_t d = guest.put("dir");
  const std::uint32_t c = guest.put("dir2");
  EXPECT_EQ(guest.errno_of("path_link", {3, 0, d, 3, 3, c, 4}), e::perm);  // directories cannot be linked
  const std::uint32_t fs = guest.put("file/");
  EXPECT_EQ(guest.errno_of("path_link", {3, 0, fs, 5, 3, c, 4}), e::notdir);
  // A symlink is linked as itself.
  const std::uint32_t l = guest.put("to_dir");
  const std::uint32_t l2 = guest.put("to_dir2");
  ASSERT_EQ(guest.errno_of("path_link", {3, 0, l, 6, 3, l2, 7}), e::success);
  EXPECT_TRUE(std::filesystem::is_symlink(tree.path("to_dir2")));
}

TEST_F(PathTest, Readlink) {
  const std::uint32_t p = guest.put("to_dir");
  const std::uint32_t buf = guest.alloc(16, 1);
  const std::uint32_t used = guest.alloc(4, 4);
  ASSERT_EQ(guest.errno_of("path_readlink", {3, p, 6, buf, 16, used}), e::success);
  EXPECT_EQ(guest.u32_at(used), 3u);
  EXPECT_EQ(guest.bytes_at(buf, 3), "dir");
  // Too small a buffer: cut silently.
  ASSERT_EQ(guest.errno_of("path_readlink", {3, p, 6, buf, 2, used}), e::success);
  EXPECT_EQ(guest.u32_at(used), 2u);
  EXPECT_EQ(guest.bytes_at(buf, 2), "di");
  const std::uint32_t f = guest.put("file");
  EXPECT_EQ(guest.errno_of("path_readlink", {3, f, 4, buf, 16, used}), e::inval);
  const std::uint32_t n = guest.put("none");
  EXPECT_EQ(guest.errno_of("path_readlink", {3, n, 4, buf, 16, used}), e::noent);
  EXPECT_EQ(guest.call("path_readlink", {3, p, 6, guest.memory_size() - 1, 16, used}).status, wasm::HostStatus::Trap);
}

TEST_F(PathTest, SymlinkCreation) {
  const std::uint32_t target = guest.put("dir/inner");
  const std::uint32_t name = guest.put("shortcut");
  ASSERT_EQ(guest.errno_of("path_symlink", {target, 9, 3, name, 8}), e::success);
  EXPECT_EQ(std::filesystem::read_symlink(tree.path("shortcut")), "dir/inner");
  EXPECT_EQ(guest.errno_of("path_symlink", {target, 9, 3, name, 8}), e::exist);
  const std::uint32_t absolute = guest.put("/etc/passwd");
  const std::uint32_t name2 = guest.put("abs");
  EXPECT_EQ(guest.errno_of("path_symlink", {absolute, 11, 3, name2, 3}), e::perm);
  EXPECT_FALSE(tree.exists("abs"));
  const std::uint32_t nul = guest.put(std::string("a\0b", 3));
  EXPECT_EQ(guest.errno_of("path_symlink", {nul, 3, 3, name2, 3}), e::inval);
  // Followed through the new link, the target resolves inside.
  std::uint32_t fd = 0;
  ASSERT_EQ(guest.open(3, "shortcut/deep", &fd), e::success);
}

TEST_F(PathTest, Rename) {
  const std::uint32_t a = guest.put("file");
  const std::uint32_t b = guest.put("dir/moved");
  ASSERT_EQ(guest.errno_of("path_rename", {3, a, 4, 3, b, 9}), e::success);
  EXPECT_FALSE(tree.exists("file"));
  EXPECT_EQ(tree.read("dir/moved"), "content");
  EXPECT_EQ(guest.errno_of("path_rename", {3, a, 4, 3, b, 9}), e::noent);
  // Renaming a directory over a non-empty one fails; into itself too.
  tree.dir("x/y");
  const std::uint32_t x = guest.put("x");
  const std::uint32_t d = guest.put("dir");
  EXPECT_EQ(guest.errno_of("path_rename", {3, x, 1, 3, d, 3}), e::notempty);
  const std::uint32_t xy = guest.put("x/y/z");
  EXPECT_EQ(guest.errno_of("path_rename", {3, x, 1, 3, xy, 5}), e::inval);
  // Through an opened subdirectory fd as the source.
  std::uint32_t dirfd = 0;
  ASSERT_EQ(guest.open(3, "dir", &dirfd, o::directory), e::success);
  const std::uint32_t moved = guest.put("moved");
  const std::uint32_t back = guest.put("back");
  ASSERT_EQ(guest.errno_of("path_rename", {dirfd, moved, 5, 3, back, 4}), e::success);
  EXPECT_EQ(tree.read("back"), "content");
  EXPECT_EQ(guest.errno_of("path_rename", {1, moved, 5, 3, back, 4}), e::badf);
}

}  // namespace
}  // namespace sprawling::wasi::test
