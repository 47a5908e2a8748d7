// wasi_snapshot_preview1 path_* functions. Every guest path reaches the OS through
// resolve_beneath / resolve_parent (host_fs.cpp); a read-only mount refuses each mutating call
// with EPERM before any OS call, and its files are opened O_RDONLY at the OS as a second wall.
#include "wasi/host_call.hpp"

#include <cerrno>
#include <climits>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sprawling::wasi {

namespace e = abi::errno_;

namespace {

Result<void> check_lookupflags(std::uint32_t flags) {
  if ((flags & ~abi::lookupflags::all) != 0) return fail(e::inval);
  return {};
}

int nofollow_unless(std::uint32_t lookupflags) {
  return (lookupflags & abi::lookupflags::symlink_follow) != 0 ? 0 : O_NOFOLLOW;
}

// A directory fd and a path in it, read in the order Wasmtime reads them (fd first).
struct DirPath {
  FdEntry* dir = nullptr;
  std::string path;
};
Result<DirPath> dir_and_path(Call& c, std::uint32_t fd, std::uint32_t ptr, std::uint32_t len) {
  auto dir = dir_fd(c, fd);
  if (!dir) return std::unexpected(std::move(dir).error());
  auto path = read_path(c, ptr, len);
  if (!path) return std::unexpected(std::move(path).error());
  return DirPath{*dir, std::move(*path)};
}

}  // namespace

namespace fn {

// path_open(fd, dirflags, path, path_len, oflags, rights_base, rights_inheriting, fdflags, fd*)
Result<void> path_open(Call& c, U32 dirfd, U32 dirflags, U32 path_ptr, U32 path_len, U32 oflags, U64 base,
                       U64 inheriting, U32 fdflags, U32 fd_out) {
  namespace o = abi::oflags;
  SPRAWLING_WASI_CHECK(check_lookupflags(dirflags));
  if ((oflags & ~std::uint32_t{o::all}) != 0 || (fdflags & ~std::uint32_t{abi::fdflags::all}) != 0 ||
      (base & ~abi::rights::all) != 0 || (inheriting & ~abi::rights::all) != 0) {
    return fail(e::inval);
  }
  auto path = read_path(c, path_ptr, path_len);
  if (!path) return std::unexpected(std::move(path).error());
  FdEntry* dir = c.state.fds.find(dirfd);
  if (dir == nullptr) return fail(e::badf);
  if (dir->kind == FdKind::File) return fail(e::notdir);
  if (dir->kind != FdKind::Directory) return fail(e::badf);

  if ((oflags & o::directory) != 0 && (oflags & (o::creat | o::excl | o::trunc)) != 0) return fail(e::inval);
  if ((fdflags & (abi::fdflags::dsync | abi::fdflags::rsync | abi::fdflags::sync)) != 0) return fail(e::notsup);

  // TRUNC and CREAT/EXCL are write intent as much as FD_WRITE is (GHSA-2r75-cxrj-cmph).
  const bool wants_write = (base & abi::rights::fd_write) != 0 || (oflags & o::trunc) != 0;
  const bool write_intent = wants_write || (oflags & (o::creat | o::excl)) != 0;
  if (write_intent && !dir->mount_writable) return fail(e::perm);
  if (c.state.fds.full()) return fail(e::mfile);

  const bool wants_read = (base & abi::rights::fd_read) != 0 || !wants_write;
  int access = O_RDONLY;
  if (wants_write && dir->mount_writable) access = wants_read ? O_RDWR : O_WRONLY;
  // O_NONBLOCK while opening: a FIFO in the mount must not hang the host in open(2).
  int flags = access | O_NOCTTY | O_NONBLOCK | nofollow_unless(dirflags);
  if ((oflags & o::directory) != 0) flags |= O_DIRECTORY;
  if (dir->mount_writable) {
    if ((oflags & o::creat) != 0) flags |= O_CREAT;
    if ((oflags & o::excl) != 0) flags |= O_EXCL;
    if ((oflags & o::trunc) != 0) flags |= O_TRUNC;
  }
  if ((fdflags & abi::fdflags::append) != 0) flags |= O_APPEND;

  auto opened = resolve_beneath(dir->host.get(), *path, flags, 0666);
  if (!opened) return std::unexpected(std::move(opened).error());
  struct stat st {};
  if (::fstat(opened->get(), &st) != 0) return fail_host(errno);

  FdEntry entry;
  entry.host = std::move(*opened);
  entry.mount_writable = dir->mount_writable;
  entry.nonblock = (fdflags & abi::fdflags::nonblock) != 0;
  if (S_ISDIR(st.st_mode)) {
    entry.kind = FdKind::Directory;
    entry.readable = true;
  } else {
    entry.kind = FdKind::File;
    entry.readable = access != O_WRONLY;
    entry.writable = access != O_RDONLY;
    entry.pollable = S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode);
    if (!entry.pollable) {
      const int fl = ::fcntl(entry.host.get(), F_GETFL);
      if (fl < 0 || ::fcntl(entry.host.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) return fail_host(errno);
    }
  }
  auto fd = c.state.fds.insert(std::move(entry));
  if (!fd) return std::unexpected(std::move(fd).error());
  return c.memory.store<std::uint32_t>(fd_out, *fd);
}

// path_filestat_get(fd, flags, path, path_len, filestat*)
Result<void> path_filestat_get(Call& c, U32 fd, U32 flags, U32 path_ptr, U32 path_len, U32 filestat_out) {
  SPRAWLING_WASI_CHECK(check_lookupflags(flags));
  auto dp = dir_and_path(c, fd, path_ptr, path_len);
  if (!dp) return std::unexpected(std::move(dp).error());
  auto target = resolve_beneath(dp->dir->host.get(), dp->path, O_PATH | nofollow_unless(flags));
  if (!target) return std::unexpected(std::move(target).error());
  struct stat st {};
  if (::fstat(target->get(), &st) != 0) return fail_host(errno);
  return store_filestat(c, filestat_out, st);
}

// path_filestat_set_times(fd, flags, path, path_len, atim, mtim, fst_flags)
Result<void> path_filestat_set_times(Call& c, U32 fd, U32 flags, U32 path_ptr, U32 path_len, U64 atim, U64 mtim,
                                     U32 fst_flags) {
  SPRAWLING_WASI_CHECK(check_lookupflags(flags));
  auto times = times_from_flags(atim, mtim, fst_flags);
  if (!times) return std::unexpected(std::move(times).error());
  auto dp = dir_and_path(c, fd, path_ptr, path_len);
  if (!dp) return std::unexpected(std::move(dp).error());
  if (!dp->dir->mount_writable) return fail(e::perm);
  auto target = resolve_beneath(dp->dir->host.get(), dp->path, O_PATH | nofollow_unless(flags));
  if (!target) return std::unexpected(std::move(target).error());
  if (::utimensat(target->get(), "", times->data(), AT_EMPTY_PATH) != 0) return fail_host(errno);
  return {};
}

// path_create_directory(fd, path_ptr, path_len)
Result<void> path_create_directory(Call& c, U32 fd, U32 path_ptr, U32 path_len) {
  auto dp = dir_and_path(c, fd, path_ptr, path_len);
  if (!dp) return std::unexpected(std::move(dp).error());
  if (!dp->dir->mount_writable) return fail(e::perm);
  auto at = resolve_parent(dp->dir->host.get(), dp->path);
  if (!at) return std::unexpected(std::move(at).error());
  if (::mkdirat(at->parent.get(), at->name.c_str(), 0777) != 0) return fail_host(errno);
  return {};
}

// path_remove_directory(fd, path_ptr, path_len)
Result<void> path_remove_directory(Call& c, U32 fd, U32 path_ptr, U32 path_len) {
  auto dp = dir_and_path(c, fd, path_ptr, path_len);
  if (!dp) return std::unexpected(std::move(dp).error());
  if (!dp->dir->mount_writable) return fail(e::perm);
  auto at = resolve_parent(dp->dir->host.get(), dp->path);
  if (!at) return std::unexpected(std::move(at).error());
  if (::unlinkat(at->parent.get(), at->name.c_str(), AT_REMOVEDIR) != 0) return fail_host(errno);
  return {};
}

// path_unlink_file(fd, path_ptr, path_len)
Result<void> path_unlink_file(Call& c, U32 fd, U32 path_ptr, U32 path_len) {
  auto dp = dir_and_path(c, fd, path_ptr, path_len);
  if (!dp) return std::unexpected(std::move(dp).error());
  if (!dp->dir->mount_writable) return fail(e::perm);
  auto at = resolve_parent(dp->dir->host.get(), dp->path);
  if (!at) return std::unexpected(std::move(at).error());
  if (::unlinkat(at->parent.get(), at->name.c_str(), 0) != 0) return fail_host(errno);
  return {};
}

// path_symlink(old_path, old_path_len, fd, new_path_ptr, new_path_len): an absolute target is
// refused with EPERM (cap-std); relative targets are stored as given and confined when followed.
Result<void> path_symlink(Call& c, U32 old_path_ptr, U32 old_path_len, U32 fd, U32 new_path_ptr, U32 new_path_len) {
  auto target = read_path(c, old_path_ptr, old_path_len);
  if (!target) return std::unexpected(std::move(target).error());
  auto dp = dir_and_path(c, fd, new_path_ptr, new_path_len);
  if (!dp) return std::unexpected(std::move(dp).error());
  if (!dp->dir->mount_writable) return fail(e::perm);
  if (!target->empty() && target->front() == '/') return fail(e::perm);
  auto at = resolve_parent(dp->dir->host.get(), dp->path);
  if (!at) return std::unexpected(std::move(at).error());
  if (::symlinkat(target->c_str(), at->parent.get(), at->name.c_str()) != 0) return fail_host(errno);
  return {};
}

// path_readlink(fd, path, path_len, buf*, buf_len, bufused*): the target cut to buf_len silently.
Result<void> path_readlink(Call& c, U32 fd, U32 path_ptr, U32 path_len, U32 buf, U32 buf_len, U32 bufused_out) {
  auto dp = dir_and_path(c, fd, path_ptr, path_len);
  if (!dp) return std::unexpected(std::move(dp).error());
  auto link = resolve_beneath(dp->dir->host.get(), dp->path, O_PATH | O_NOFOLLOW);
  if (!link) return std::unexpected(std::move(link).error());
  struct stat st {};
  if (::fstat(link->get(), &st) != 0) return fail_host(errno);
  if (!S_ISLNK(st.st_mode)) return fail(e::inval);
  char target[PATH_MAX];
  const ssize_t n = ::readlinkat(link->get(), "", target, sizeof target);
  if (n < 0) return fail_host(errno);
  const auto len = static_cast<std::uint32_t>(std::min<std::size_t>(static_cast<std::size_t>(n), buf_len));
  SPRAWLING_WASI_CHECK(c.memory.write(buf, std::span(reinterpret_cast<const std::uint8_t*>(target), len)));
  return c.memory.store<std::uint32_t>(bufused_out, len);
}

// path_link(old_fd, old_flags, old_path, old_path_len, new_fd, new_path_ptr, new_path_len)
Result<void> path_link(Call& c, U32 old_fd, U32 old_flags, U32 old_path_ptr, U32 old_path_len, U32 new_fd,
                       U32 new_path_ptr, U32 new_path_len) {
  SPRAWLING_WASI_CHECK(check_lookupflags(old_flags));
  auto from = dir_fd(c, old_fd);
  if (!from) return std::unexpected(std::move(from).error());
  auto to = dir_fd(c, new_fd);
  if (!to) return std::unexpected(std::move(to).error());
  auto old_path = read_path(c, old_path_ptr, old_path_len);
  if (!old_path) return std::unexpected(std::move(old_path).error());
  auto new_path = read_path(c, new_path_ptr, new_path_len);
  if (!new_path) return std::unexpected(std::move(new_path).error());
  // A link may not carry a file across a permission boundary, nor into or out of a read-only
  // mount (GHSA-4ch3-9j33-3pmj): with two permission levels, either side read-only is refused.
  if (!(*from)->mount_writable || !(*to)->mount_writable) return fail(e::perm);
  if ((old_flags & abi::lookupflags::symlink_follow) != 0) return fail(e::inval);
  auto old_at = resolve_parent((*from)->host.get(), *old_path);
  if (!old_at) return std::unexpected(std::move(old_at).error());
  if (old_at->trailing_slash) {
    // "name/" would make the kernel follow a symlink named `name`; answer without following.
    struct stat st {};
    if (::fstatat(old_at->parent.get(), old_at->bare_name().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail_host(errno);
    }
    return fail(S_ISDIR(st.st_mode) ? e::perm : e::notdir);
  }
  auto new_at = resolve_parent((*to)->host.get(), *new_path);
  if (!new_at) return std::unexpected(std::move(new_at).error());
  if (::linkat(old_at->parent.get(), old_at->name.c_str(), new_at->parent.get(), new_at->name.c_str(), 0) != 0) {
    return fail_host(errno);
  }
  return {};
}

// path_rename(fd, old_path, old_path_len, new_fd, new_path_ptr, new_path_len)
Result<void> path_rename(Call& c, U32 fd, U32 old_path_ptr, U32 old_path_len, U32 new_fd, U32 new_path_ptr,
                         U32 new_path_len) {
  auto from = dir_fd(c, fd);
  if (!from) return std::unexpected(std::move(from).error());
  auto to = dir_fd(c, new_fd);
  if (!to) return std::unexpected(std::move(to).error());
  auto old_path = read_path(c, old_path_ptr, old_path_len);
  if (!old_path) return std::unexpected(std::move(old_path).error());
  auto new_path = read_path(c, new_path_ptr, new_path_len);
  if (!new_path) return std::unexpected(std::move(new_path).error());
  // Out of, into or across read-only mounts: refused (GHSA-4ch3-9j33-3pmj).
  if (!(*from)->mount_writable || !(*to)->mount_writable) return fail(e::perm);
  auto old_at = resolve_parent((*from)->host.get(), *old_path);
  if (!old_at) return std::unexpected(std::move(old_at).error());
  auto new_at = resolve_parent((*to)->host.get(), *new_path);
  if (!new_at) return std::unexpected(std::move(new_at).error());
  if (::renameat(old_at->parent.get(), old_at->name.c_str(), new_at->parent.get(), new_at->name.c_str()) != 0) {
    return fail_host(errno);
  }
  return {};
}

}  // namespace fn

}  // namespace sprawling::wasi
