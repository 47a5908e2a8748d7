// wasi_snapshot_preview1 fd_* functions: reads, writes, seeks, stat and flags of open fds, the
// preopen descriptions, directory listing, renumbering and closing.
#include "wasi/host_call.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace sprawling::wasi {

namespace e = abi::errno_;
namespace L = abi::layout;

std::uint8_t filetype_of(mode_t mode) noexcept {
  switch (mode & S_IFMT) {
    case S_IFREG: return abi::filetype::regular_file;
    case S_IFDIR: return abi::filetype::directory;
    case S_IFLNK: return abi::filetype::symbolic_link;
    case S_IFCHR: return abi::filetype::character_device;
    case S_IFBLK: return abi::filetype::block_device;
    default: return abi::filetype::unknown;  // FIFOs (preview1 has no code) and sockets (never opened)
  }
}

namespace {

Result<std::uint64_t> timestamp_ns(const struct timespec& ts) {
  if (ts.tv_sec < 0) return fail(e::overflow);
  const auto seconds = static_cast<std::uint64_t>(ts.tv_sec);
  if (seconds > (UINT64_MAX - 999'999'999ull) / 1'000'000'000ull) return fail(e::overflow);
  return seconds * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

Result<void> store_filestat(Call& c, std::uint32_t ptr, const struct stat& st) {
  auto atim = timestamp_ns(st.st_atim);
  auto mtim = timestamp_ns(st.st_mtim);
  auto ctim = timestamp_ns(st.st_ctim);
  if (!atim || !mtim || !ctim) return fail(e::overflow);
  auto record = c.memory.bytes(ptr, L::filestat_size, L::filestat_align);
  if (!record) return std::unexpected(std::move(record).error());
  std::memset(record->data(), 0, L::filestat_size);
  put<std::uint64_t>(*record, L::filestat_dev, static_cast<std::uint64_t>(st.st_dev));
  put<std::uint64_t>(*record, L::filestat_ino, static_cast<std::uint64_t>(st.st_ino));
  put<std::uint8_t>(*record, L::filestat_filetype, filetype_of(st.st_mode));
  put<std::uint64_t>(*record, L::filestat_nlink, static_cast<std::uint64_t>(st.st_nlink));
  put<std::uint64_t>(*record, L::filestat_size_field, static_cast<std::uint64_t>(st.st_size));
  put<std::uint64_t>(*record, L::filestat_atim, *atim);
  put<std::uint64_t>(*record, L::filestat_mtim, *mtim);
  put<std::uint64_t>(*record, L::filestat_ctim, *ctim);
  return {};
}

Result<std::uint32_t> write_output(OutputStream& out, std::span<const std::uint8_t> data) {
  if (data.empty()) return 0u;
  if (out.truncated) return fail(e::io);
  const std::uint64_t room = out.accepted < out.cap ? out.cap - out.accepted : 0;
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(room, data.size()));
  if (n > 0) {
    auto accepted = data.first(n);
    if (out.sink) {
      // The sink is the embedder's code: whatever it throws must not unwind through the engine.
      // A sink that cannot take the output ends the stream as a full cap would.
      try {
        out.sink(accepted);
      } catch (...) {
        out.truncated = true;
        return fail(e::io);
      }
    }
    if (out.keep) out.bytes.insert(out.bytes.end(), accepted.begin(), accepted.end());
    out.accepted += n;
  }
  if (n < data.size()) {
    out.truncated = true;
    return fail(e::io);
  }
  return static_cast<std::uint32_t>(n);
}

Result<void> wait_ready(const WasiState& state, int fd, short events) {
  for (;;) {
    int timeout_ms = -1;
    if (state.deadline) {
      const auto left = *state.deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds::zero()) return deadline_exceeded();
      timeout_ms =
          static_cast<int>(std::min<std::int64_t>(std::chrono::ceil<std::chrono::milliseconds>(left).count(), INT_MAX));
    }
    struct pollfd p {
      fd, events, 0
    };
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready > 0) return {};
    if (ready < 0 && errno != EINTR) return fail_host(errno);
  }
}

namespace {

// The first non-empty buffer of an iovec array (Wasmtime reads and writes only that one; libc
// loops on short counts). The whole array counts against the copy limit first (so 2^29 empty
// iovecs are ENOMEM, not a long scan); each record is checked as it is read; all empty → empty.
Result<std::span<std::uint8_t>> first_buffer(Call& c, std::uint32_t iovs, std::uint32_t iovs_len) {
  if (auto taken = take_copy(c, std::uint64_t{iovs_len} * L::iovec_size); !taken)
    return std::unexpected(std::move(taken).error());
  for (std::uint32_t i = 0; i < iovs_len; ++i) {
    const std::uint64_t at = std::uint64_t{iovs} + std::uint64_t{i} * L::iovec_size;
    if (at > UINT32_MAX) return trap("out of bounds memory access in a WASI function");
    auto record = c.memory.bytes(static_cast<std::uint32_t>(at), L::iovec_size, L::iovec_align);
    if (!record) return std::unexpected(std::move(record).error());
    const auto buf = get<std::uint32_t>(*record, 0);
    const auto len = get<std::uint32_t>(*record, 4);
    if (len == 0) continue;
    return c.memory.bytes(buf, len);
  }
  return std::span<std::uint8_t>();
}

// Appends the next getdents64 chunk of `cursor`'s listing to its pending entries ("." and ".."
// are left out: the cursor starts with its own); nothing appended at the end of the directory.
Result<void> read_entries(DirCursor& cursor) {
  if (cursor.exhausted) return {};
  alignas(8) char chunk[16384];
  for (;;) {
    const long got = ::syscall(SYS_getdents64, cursor.listing.get(), chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail_host(errno);
    }
    if (got == 0) {
      cursor.exhausted = true;
      return {};
    }
    for (long at = 0; at < got;) {
      std::uint64_t d_ino = 0;
      std::uint16_t reclen = 0;
      std::uint8_t d_type = 0;
      std::memcpy(&d_ino, chunk + at, 8);
      std::memcpy(&reclen, chunk + at + 16, 2);
      std::memcpy(&d_type, chunk + at + 18, 1);
      const std::string_view name(chunk + at + 19);
      at += reclen;
      if (name == "." || name == "..") continue;
      std::uint8_t type = abi::filetype::unknown;
      switch (d_type) {
        case DT_REG: type = abi::filetype::regular_file; break;
        case DT_DIR: type = abi::filetype::directory; break;
        case DT_LNK: type = abi::filetype::symbolic_link; break;
        case DT_CHR: type = abi::filetype::character_device; break;
        case DT_BLK: type = abi::filetype::block_device; break;
        case DT_UNKNOWN: {
          // Filesystems that leave d_type empty: look at the entry itself (a single name, no follow).
          struct stat st {};
          if (::fstatat(cursor.listing.get(), std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            type = filetype_of(st.st_mode);
          }
          break;
        }
        default: break;
      }
      cursor.pending.push_back(DirListEntry{std::string(name), d_ino, type});
    }
    if (!cursor.pending.empty()) return {};
  }
}

Result<void> store_size(Call& c, std::uint32_t ptr, std::uint64_t n) {
  return c.memory.store<std::uint32_t>(ptr, static_cast<std::uint32_t>(n));
}

Result<std::uint32_t> host_read(int fd, std::span<std::uint8_t> buffer, std::optional<std::uint64_t> offset) {
  if (buffer.empty()) return 0u;
  if (offset && *offset > static_cast<std::uint64_t>(INT64_MAX)) return fail(e::inval);
  for (;;) {
    const ssize_t n = offset ? ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(*offset))
                             : ::read(fd, buffer.data(), buffer.size());
    if (n >= 0) return static_cast<std::uint32_t>(n);
    if (errno != EINTR) return fail_host(errno);
  }
}

Result<std::uint32_t> host_write(int fd, std::span<const std::uint8_t> buffer, std::optional<std::uint64_t> offset) {
  if (buffer.empty()) return 0u;
  if (offset && *offset > static_cast<std::uint64_t>(INT64_MAX)) return fail(e::inval);
  for (;;) {
    const ssize_t n = offset ? ::pwrite(fd, buffer.data(), buffer.size(), static_cast<off_t>(*offset))
                             : ::write(fd, buffer.data(), buffer.size());
    if (n >= 0) return static_cast<std::uint32_t>(n);
    if (errno != EINTR) return fail_host(errno);
  }
}

// A read or write on a pollable fd (non-blocking on the host): tries first (a FIFO without a
// writer reads EOF at once), waits under the deadline while the OS says EAGAIN. A guest that set
// NONBLOCK gets EAGAIN instead of the wait.
Result<std::uint32_t> pollable_io(Call& c, const FdEntry& entry, std::span<std::uint8_t> buffer, bool write) {
  if (buffer.empty()) return 0u;
  const int fd = entry.host.get();
  for (;;) {
    const ssize_t n = write ? ::write(fd, buffer.data(), buffer.size()) : ::read(fd, buffer.data(), buffer.size());
    if (n >= 0) return static_cast<std::uint32_t>(n);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return fail_host(errno);
    if (entry.nonblock) return fail(e::again);
    SPRAWLING_WASI_CHECK(wait_ready(c.state, fd, write ? POLLOUT : POLLIN));
  }
}

// fd 0 from a host fd (WasiConfig::stdin_fd). The fd is the embedder's — perhaps the CLI's own
// stdin, whose flags are shared with other processes — so it stays blocking: poll() waits
// under the deadline, then one read() that cannot block takes what is there.
Result<std::uint32_t> stream_stdin(Call& c, std::span<std::uint8_t> buffer) {
  if (buffer.empty()) return 0u;
  SPRAWLING_WASI_CHECK(wait_ready(c.state, c.state.stdin_host_fd, POLLIN));
  for (;;) {
    const ssize_t n = ::read(c.state.stdin_host_fd, buffer.data(), buffer.size());
    if (n >= 0) return static_cast<std::uint32_t>(n);
    if (errno != EINTR) return fail_host(errno);
  }
}

// The disk quota's charge for writing `n` bytes at `offset` (or the fd's position; the end with
// O_APPEND): the bytes, plus the hole between the file's end and where they land.
Result<void> charge_file_write(Call& c, int fd, std::uint64_t n, std::optional<std::uint64_t> offset) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail_host(errno);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::uint64_t at = size;
  if (offset) {
    at = *offset;
  } else {
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl < 0) return fail_host(errno);
    if ((fl & O_APPEND) == 0) {
      const off_t pos = ::lseek(fd, 0, SEEK_CUR);
      if (pos < 0) return fail_host(errno);
      at = static_cast<std::uint64_t>(pos);
    }
  }
  const std::uint64_t hole = at > size ? at - size : 0;
  if (hole > UINT64_MAX - n) return fail(e::dquot);
  return charge_disk(c, n + hole);
}

Result<std::uint32_t> read_impl(Call& c, U32 fd, U32 iovs, U32 iovs_len, std::optional<std::uint64_t> offset) {
  auto buffer = first_buffer(c, iovs, iovs_len);
  if (!buffer) return std::unexpected(std::move(buffer).error());
  auto entry = any_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  switch ((*entry)->kind) {
    case FdKind::Stdin: {
      if (offset) return fail(e::spipe);
      if (c.state.stdin_host_fd >= 0) return stream_stdin(c, *buffer);
      const std::size_t left = c.state.stdin_bytes.size() - c.state.stdin_pos;
      const std::size_t n = std::min(left, buffer->size());
      if (n > 0) std::memcpy(buffer->data(), c.state.stdin_bytes.data() + c.state.stdin_pos, n);
      c.state.stdin_pos += n;
      return static_cast<std::uint32_t>(n);
    }
    case FdKind::File:
      if ((*entry)->pollable && !offset) return pollable_io(c, **entry, *buffer, false);
      return host_read((*entry)->host.get(), *buffer, offset);
    default: return fail(e::badf);
  }
}

Result<std::uint32_t> write_impl(Call& c, U32 fd, U32 iovs, U32 iovs_len, std::optional<std::uint64_t> offset) {
  auto buffer = first_buffer(c, iovs, iovs_len);
  if (!buffer) return std::unexpected(std::move(buffer).error());
  if (auto taken = take_copy(c, buffer->size()); !taken) return std::unexpected(std::move(taken).error());
  SPRAWLING_WASI_CHECK(charge_bytes(c, buffer->size()));
  auto entry = any_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  switch ((*entry)->kind) {
    case FdKind::Stdout:
    case FdKind::Stderr:
      if (offset) return fail(e::spipe);
      return write_output((*entry)->kind == FdKind::Stdout ? c.state.out : c.state.err, *buffer);
    case FdKind::File:
      if (!(*entry)->mount_writable) return fail(e::perm);
      if ((*entry)->pollable && !offset) return pollable_io(c, **entry, *buffer, true);
      SPRAWLING_WASI_CHECK(charge_file_write(c, (*entry)->host.get(), buffer->size(), offset));
      return host_write((*entry)->host.get(), *buffer, offset);
    default: return fail(e::badf);
  }
}

}  // namespace

namespace fn {

// fd_read(fd, iovs, iovs_len, nread*)
Result<void> fd_read(Call& c, U32 fd, U32 iovs, U32 iovs_len, U32 nread_out) {
  auto n = read_impl(c, fd, iovs, iovs_len, std::nullopt);
  if (!n) return std::unexpected(std::move(n).error());
  SPRAWLING_WASI_CHECK(charge_bytes(c, *n));
  return store_size(c, nread_out, *n);
}

// fd_pread(fd, iovs, iovs_len, offset: u64, nread*)
Result<void> fd_pread(Call& c, U32 fd, U32 iovs, U32 iovs_len, U64 offset, U32 nread_out) {
  auto n = read_impl(c, fd, iovs, iovs_len, offset);
  if (!n) return std::unexpected(std::move(n).error());
  SPRAWLING_WASI_CHECK(charge_bytes(c, *n));
  return store_size(c, nread_out, *n);
}

// fd_write(fd, iovs, iovs_len, nwritten*)
Result<void> fd_write(Call& c, U32 fd, U32 iovs, U32 iovs_len, U32 nwritten_out) {
  auto n = write_impl(c, fd, iovs, iovs_len, std::nullopt);
  if (!n) return std::unexpected(std::move(n).error());
  return store_size(c, nwritten_out, *n);
}

// fd_pwrite(fd, iovs, iovs_len, offset: u64, nwritten*)
Result<void> fd_pwrite(Call& c, U32 fd, U32 iovs, U32 iovs_len, U64 offset, U32 nwritten_out) {
  auto n = write_impl(c, fd, iovs, iovs_len, offset);
  if (!n) return std::unexpected(std::move(n).error());
  return store_size(c, nwritten_out, *n);
}

// fd_seek(fd, offset: s64, whence, newoffset*)
Result<void> fd_seek(Call& c, U32 fd, U64 offset, U32 whence, U32 newoffset_out) {
  if (whence > abi::whence::end) return fail(e::inval);
  auto entry = any_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  const FdKind kind = (*entry)->kind;
  if (kind == FdKind::Stdin || kind == FdKind::Stdout || kind == FdKind::Stderr) return fail(e::spipe);
  if (kind != FdKind::File) return fail(e::badf);
  const int how = whence == abi::whence::set ? SEEK_SET : whence == abi::whence::cur ? SEEK_CUR : SEEK_END;
  const off_t pos = ::lseek((*entry)->host.get(), static_cast<off_t>(static_cast<std::int64_t>(offset)), how);
  if (pos < 0) return fail_host(errno);
  return c.memory.store<std::uint64_t>(newoffset_out, static_cast<std::uint64_t>(pos));
}

// fd_tell(fd, offset*)
Result<void> fd_tell(Call& c, U32 fd, U32 offset_out) {
  auto entry = any_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  const FdKind kind = (*entry)->kind;
  if (kind == FdKind::Stdin || kind == FdKind::Stdout || kind == FdKind::Stderr) return fail(e::spipe);
  if (kind != FdKind::File) return fail(e::badf);
  const off_t pos = ::lseek((*entry)->host.get(), 0, SEEK_CUR);
  if (pos < 0) return fail_host(errno);
  return c.memory.store<std::uint64_t>(offset_out, static_cast<std::uint64_t>(pos));
}

// fd_close(fd)
Result<void> fd_close(Call& c, U32 fd) {
  if (!c.state.fds.remove(fd)) return fail(e::badf);
  return {};
}

// fd_renumber(from, to): `to` must be open too; its host fd is closed (GHSA-3p27-qvp9-27qf).
Result<void> fd_renumber(Call& c, U32 from, U32 to) {
  return c.state.fds.renumber(from, to);
}

// fd_advise(fd, offset: u64, len: u64, advice)
Result<void> fd_advise(Call& c, U32 fd, U64 offset, U64 len, U32 advice) {
  if (advice > abi::advice_max) return fail(e::inval);
  auto entry = file_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if (offset > static_cast<std::uint64_t>(INT64_MAX) || len > static_cast<std::uint64_t>(INT64_MAX)) {
    return fail(e::inval);
  }
  static constexpr int kAdvice[] = {POSIX_FADV_NORMAL,   POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM,
                                    POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED,   POSIX_FADV_NOREUSE};
  const int rc = ::posix_fadvise((*entry)->host.get(), static_cast<off_t>(offset), static_cast<off_t>(len),
                                 kAdvice[advice]);
  if (rc != 0) return fail_host(rc);
  return {};
}

// fd_allocate(fd, offset, len): Wasmtime answers ENOTSUP for every file; a read-only mount EPERM.
Result<void> fd_allocate(Call& c, U32 fd, U64 /*offset*/, U64 /*len*/) {
  auto entry = file_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if (!(*entry)->mount_writable) return fail(e::perm);
  return fail(e::notsup);
}

// fd_datasync(fd)
Result<void> fd_datasync(Call& c, U32 fd) {
  auto entry = file_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if (::fdatasync((*entry)->host.get()) != 0) return fail_host(errno);
  return {};
}

// fd_sync(fd)
Result<void> fd_sync(Call& c, U32 fd) {
  auto entry = file_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if (::fsync((*entry)->host.get()) != 0) return fail_host(errno);
  return {};
}

// fd_fdstat_get(fd, fdstat*)
Result<void> fd_fdstat_get(Call& c, U32 guest_fd, U32 fdstat_out) {
  namespace r = abi::rights;
  auto entry = any_fd(c, guest_fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  const FdEntry& fd = **entry;
  std::uint8_t filetype = abi::filetype::unknown;
  std::uint16_t flags = 0;
  std::uint64_t base = 0;
  std::uint64_t inheriting = 0;
  // What a directory can hand to the files it opens: every file right. A read-only mount keeps
  // FD_WRITE here so that libc passes a write request on to path_open, which refuses it with
  // EPERM, instead of silently opening the file read-only.
  constexpr std::uint64_t kFileRights = r::fd_datasync | r::fd_read | r::fd_seek | r::fd_fdstat_set_flags |
                                        r::fd_sync | r::fd_tell | r::fd_write | r::fd_advise | r::fd_allocate |
                                        r::fd_filestat_get | r::fd_filestat_set_size | r::fd_filestat_set_times |
                                        r::poll_fd_readwrite;
  switch (fd.kind) {
    case FdKind::Stdin: base = inheriting = r::fd_read; break;
    case FdKind::Stdout:
    case FdKind::Stderr: base = inheriting = r::fd_write; break;
    case FdKind::Directory: {
      filetype = abi::filetype::directory;
      if (fd.preopen_name) {
        // Wasmtime's fixed preopen set ("expected by many userlands").
        base = r::path_create_directory | r::path_create_file | r::path_link_source | r::path_link_target |
               r::path_open | r::fd_readdir | r::path_readlink | r::path_rename_source | r::path_rename_target |
               r::path_symlink | r::path_remove_directory | r::path_unlink_file | r::path_filestat_get |
               r::path_filestat_set_times | r::fd_filestat_get | r::fd_filestat_set_times;
      } else {
        base = r::all & ~(r::fd_seek | r::fd_filestat_set_size | r::path_filestat_set_size | r::fd_write);
      }
      if (!fd.mount_writable) base &= ~kMutatingRights;
      inheriting = base | kFileRights;
      break;
    }
    case FdKind::File: {
      struct stat st {};
      if (::fstat(fd.host.get(), &st) != 0) return fail_host(errno);
      filetype = filetype_of(st.st_mode);
      base = r::all;
      if (!fd.readable) base &= ~(r::fd_read | r::fd_readdir);
      if (!fd.writable) base &= ~(r::fd_write | r::fd_allocate | r::fd_filestat_set_size);
      if (!fd.mount_writable) base &= ~kMutatingRights;
      inheriting = base;
      const int fl = ::fcntl(fd.host.get(), F_GETFL);
      if (fl < 0) return fail_host(errno);
      if ((fl & O_APPEND) != 0) flags |= abi::fdflags::append;
      if (fd.nonblock) flags |= abi::fdflags::nonblock;
      break;
    }
  }
  auto record = c.memory.bytes(fdstat_out, L::fdstat_size, L::fdstat_align);
  if (!record) return std::unexpected(std::move(record).error());
  std::memset(record->data(), 0, L::fdstat_size);
  put<std::uint8_t>(*record, L::fdstat_filetype, filetype);
  put<std::uint16_t>(*record, L::fdstat_flags, flags);
  put<std::uint64_t>(*record, L::fdstat_rights_base, base);
  put<std::uint64_t>(*record, L::fdstat_rights_inheriting, inheriting);
  return {};
}

// fd_fdstat_set_flags(fd, fdflags): only APPEND and NONBLOCK may change (SYNC kinds → EINVAL).
Result<void> fd_fdstat_set_flags(Call& c, U32 guest_fd, U32 flags) {
  if ((flags & ~std::uint32_t{abi::fdflags::all}) != 0) return fail(e::inval);
  auto entry = file_fd(c, guest_fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if ((flags & (abi::fdflags::dsync | abi::fdflags::rsync | abi::fdflags::sync)) != 0) return fail(e::inval);
  const int fd = (*entry)->host.get();
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0) return fail_host(errno);
  const int wanted = (flags & abi::fdflags::append) != 0 ? (fl | O_APPEND) : (fl & ~O_APPEND);
  if (wanted != fl && ::fcntl(fd, F_SETFL, wanted) != 0) return fail_host(errno);
  (*entry)->nonblock = (flags & abi::fdflags::nonblock) != 0;
  return {};
}

// fd_fdstat_set_rights(fd, base, inheriting): not supported (Wasmtime), after validating the fd.
Result<void> fd_fdstat_set_rights(Call& c, U32 fd, U64 base, U64 inheriting) {
  if ((base & ~abi::rights::all) != 0 || (inheriting & ~abi::rights::all) != 0) return fail(e::inval);
  auto entry = fs_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  return fail(e::notsup);
}

// fd_filestat_get(fd, filestat*): stdio reports zeros (filetype unknown: never a terminal here).
Result<void> fd_filestat_get(Call& c, U32 fd, U32 filestat_out) {
  auto entry = any_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if ((*entry)->kind != FdKind::File && (*entry)->kind != FdKind::Directory) {
    auto record = c.memory.bytes(filestat_out, L::filestat_size, L::filestat_align);
    if (!record) return std::unexpected(std::move(record).error());
    std::memset(record->data(), 0, L::filestat_size);
    return {};
  }
  struct stat st {};
  if (::fstat((*entry)->host.get(), &st) != 0) return fail_host(errno);
  return store_filestat(c, filestat_out, st);
}

// fd_filestat_set_size(fd, size)
Result<void> fd_filestat_set_size(Call& c, U32 fd, U64 size) {
  auto entry = file_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if (!(*entry)->mount_writable) return fail(e::perm);
  if (!(*entry)->writable) return fail(e::badf);
  if (size > static_cast<std::uint64_t>(INT64_MAX)) return fail(e::fbig);
  struct stat st {};
  if (::fstat((*entry)->host.get(), &st) != 0) return fail_host(errno);
  const auto old_size = static_cast<std::uint64_t>(st.st_size);
  if (size > old_size) SPRAWLING_WASI_CHECK(charge_disk(c, size - old_size));  // the hole it adds
  if (::ftruncate((*entry)->host.get(), static_cast<off_t>(size)) != 0) return fail_host(errno);
  return {};
}

}  // namespace fn

// Shared with path_filestat_set_times: the two timespecs utimensat wants, from WASI's fstflags.
Result<std::array<struct timespec, 2>> times_from_flags(std::uint64_t atim, std::uint64_t mtim, std::uint32_t flags) {
  if ((flags & ~std::uint32_t{abi::fstflags::all}) != 0) return fail(e::inval);
  auto one = [](bool set, bool now, std::uint64_t ns) -> Result<struct timespec> {
    if (set && now) return fail(e::inval);
    struct timespec ts {};
    if (set) {
      ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000ull);
      ts.tv_nsec = static_cast<long>(ns % 1'000'000'000ull);
    } else {
      ts.tv_nsec = now ? UTIME_NOW : UTIME_OMIT;
    }
    return ts;
  };
  auto a = one((flags & abi::fstflags::atim) != 0, (flags & abi::fstflags::atim_now) != 0, atim);
  if (!a) return std::unexpected(std::move(a).error());
  auto m = one((flags & abi::fstflags::mtim) != 0, (flags & abi::fstflags::mtim_now) != 0, mtim);
  if (!m) return std::unexpected(std::move(m).error());
  return std::array<struct timespec, 2>{*a, *m};
}

namespace fn {

// fd_filestat_set_times(fd, atim, mtim, fst_flags)
Result<void> fd_filestat_set_times(Call& c, U32 fd, U64 atim, U64 mtim, U32 fst_flags) {
  auto times = times_from_flags(atim, mtim, fst_flags);
  if (!times) return std::unexpected(std::move(times).error());
  auto entry = fs_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if (!(*entry)->mount_writable) return fail(e::perm);
  if (::futimens((*entry)->host.get(), times->data()) != 0) return fail_host(errno);
  return {};
}

// fd_prestat_get(fd, prestat*)
Result<void> fd_prestat_get(Call& c, U32 fd, U32 prestat_out) {
  auto entry = any_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if (!(*entry)->preopen_name) return fail(e::badf);
  auto record = c.memory.bytes(prestat_out, L::prestat_size, L::prestat_align);
  if (!record) return std::unexpected(std::move(record).error());
  std::memset(record->data(), 0, L::prestat_size);
  put<std::uint8_t>(*record, 0, abi::preopentype_dir);
  put<std::uint32_t>(*record, 4, static_cast<std::uint32_t>((*entry)->preopen_name->size()));
  return {};
}

// fd_prestat_dir_name(fd, path*, path_len): the name without NUL; too small a buffer → ENAMETOOLONG.
Result<void> fd_prestat_dir_name(Call& c, U32 fd, U32 path, U32 path_len) {
  auto entry = any_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  if (!(*entry)->preopen_name) return fail(e::notdir);
  const std::string& name = *(*entry)->preopen_name;
  if (name.size() > path_len) return fail(e::nametoolong);
  return c.memory.write(path, std::span(reinterpret_cast<const std::uint8_t*>(name.data()), name.size()));
}

// fd_readdir(fd, buf*, buf_len, cookie, bufused*): ".", "..", then the OS order; the cookie of
// an entry is its index + 1; the last entry is cut to fill the buffer (the guest calls again).
// The fd keeps its listing (DirCursor): a call whose cookie is where the last one stopped reads
// on, so listing a directory of N entries costs O(N) host work in all, not O(N) per call. Any
// other cookie starts over and pays, in fuel, for the entries it skips.
Result<void> fd_readdir(Call& c, U32 fd, U32 buf, U32 buf_len, U64 cookie, U32 bufused_out) {
  auto entry = dir_fd(c, fd);
  if (!entry) return std::unexpected(std::move(entry).error());
  auto buffer = c.memory.bytes(buf, buf_len);
  if (!buffer) return std::unexpected(std::move(buffer).error());

  std::unique_ptr<DirCursor>& cursor = (*entry)->listing;
  if (!cursor || cursor->next != cookie) {
    struct stat self {};
    if (::fstat((*entry)->host.get(), &self) != 0) return fail_host(errno);
    // A fresh open description: the listing starts at the beginning.
    auto listing = resolve_beneath((*entry)->host.get(), ".", O_RDONLY | O_DIRECTORY);
    if (!listing) return std::unexpected(std::move(listing).error());
    cursor = std::make_unique<DirCursor>();
    cursor->listing = std::move(*listing);
    // ".." reports the directory's own inode: the parent may lie outside the mount.
    cursor->pending.push_back(DirListEntry{".", self.st_ino, abi::filetype::directory});
    cursor->pending.push_back(DirListEntry{"..", self.st_ino, abi::filetype::directory});
    std::uint64_t skipped_bytes = 0;
    while (cursor->next < cookie) {
      if (cursor->pending.empty()) {
        SPRAWLING_WASI_CHECK(read_entries(*cursor));
        if (cursor->pending.empty()) break;
        continue;
      }
      skipped_bytes += L::dirent_size + cursor->pending.front().name.size();
      cursor->pending.pop_front();
      ++cursor->next;
    }
    SPRAWLING_WASI_CHECK(charge_bytes(c, skipped_bytes));
  }

  std::uint32_t used = 0;
  while (used < buf_len) {
    if (cursor->pending.empty()) {
      SPRAWLING_WASI_CHECK(read_entries(*cursor));
      if (cursor->pending.empty()) break;
    }
    const DirListEntry& d = cursor->pending.front();
    std::uint8_t header[L::dirent_size] = {};
    put<std::uint64_t>(std::span(header), 0, cursor->next + 1);  // d_next: the entry after this one
    put<std::uint64_t>(std::span(header), 8, d.ino);
    put<std::uint32_t>(std::span(header), 16, static_cast<std::uint32_t>(d.name.size()));
    put<std::uint8_t>(std::span(header), 20, d.type);
    const std::uint32_t h = std::min<std::uint32_t>(L::dirent_size, buf_len - used);
    std::memcpy(buffer->data() + used, header, h);
    used += h;
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(d.name.size(), buf_len - used));
    std::memcpy(buffer->data() + used, d.name.data(), n);
    used += n;
    if (h < L::dirent_size || n < d.name.size()) break;  // cut: the next call asks for it again
    cursor->pending.pop_front();
    ++cursor->next;
  }
  SPRAWLING_WASI_CHECK(charge_bytes(c, used));
  return store_size(c, bufused_out, used);
}

}  // namespace fn

}  // namespace sprawling::wasi
