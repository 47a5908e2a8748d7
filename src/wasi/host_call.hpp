// Shared plumbing of the wasi_snapshot_preview1 host functions: the per-call view (arguments,
// guest memory gate, run state), the thunk that turns a body's Result into a HostStatus, and
// helpers used by several function families (fd lookup, guest paths, filestat records, rights).
#pragma once

#include "wasi/abi.hpp"
#include "wasi/guest_memory.hpp"
#include "wasi/host_fs.hpp"
#include "wasi/result.hpp"
#include "wasi/state.hpp"
#include "wasi/wasi.hpp"
#include "wasm/host.hpp"

#include <array>
#include <cstdint>
#include <ctime>
#include <span>
#include <string>
#include <sys/stat.h>

namespace sprawling::wasi {

struct Call {
  wasm::HostCall& host;
  WasiState& state;
  GuestMemory memory;
  std::uint64_t copy_left = 0;  // of WasiState::hostcall_copy_limit, for this call

  // i32 arguments travel in the low 32 bits of their slot; i64 ones fill it.
  [[nodiscard]] std::uint32_t u32(std::size_t index) const noexcept { return static_cast<std::uint32_t>(host.args[index]); }
  [[nodiscard]] std::uint64_t u64(std::size_t index) const noexcept { return host.args[index]; }
};

using Body = Result<void> (*)(Call&);

// Runs a body and reports its ending the way the engine expects: errno in result 0 (functions
// that have it), a trap with its message, or proc_exit's code.
template <Body F>
wasm::HostStatus thunk(wasm::HostCall& call) {
  auto* context = static_cast<WasiContext*>(call.context);
  if (context == nullptr) {
    call.trap_message = "WASI function called without its WasiContext";
    return wasm::HostStatus::Trap;
  }
  Call c{call, context->state(), GuestMemory(call.memory), context->state().hostcall_copy_limit};
  Result<void> result = F(c);
  if (result) {
    if (!call.results.empty()) call.results[0] = abi::errno_::success;
    return wasm::HostStatus::Ok;
  }
  Failure& failure = result.error();
  switch (failure.kind) {
    case Failure::Kind::Errno:
      if (!call.results.empty()) call.results[0] = failure.code;
      return wasm::HostStatus::Ok;
    case Failure::Kind::Trap:
      call.trap_message = std::move(failure.message);
      return wasm::HostStatus::Trap;
    case Failure::Kind::Exit:
      call.exit_code = failure.exit_code;
      return wasm::HostStatus::Exit;
  }
  call.trap_message = "WASI host: unknown failure kind";
  return wasm::HostStatus::Trap;
}

// Any open fd (EBADF otherwise).
[[nodiscard]] inline Result<FdEntry*> any_fd(Call& c, std::uint32_t fd) {
  FdEntry* entry = c.state.fds.find(fd);
  if (entry == nullptr) return fail(abi::errno_::badf);
  return entry;
}
// A regular-file-like fd opened by path_open (EBADF for stdio, directories, closed fds).
[[nodiscard]] inline Result<FdEntry*> file_fd(Call& c, std::uint32_t fd) {
  FdEntry* entry = c.state.fds.find(fd);
  if (entry == nullptr || entry->kind != FdKind::File) return fail(abi::errno_::badf);
  return entry;
}
// A directory fd (EBADF otherwise).
[[nodiscard]] inline Result<FdEntry*> dir_fd(Call& c, std::uint32_t fd) {
  FdEntry* entry = c.state.fds.find(fd);
  if (entry == nullptr || entry->kind != FdKind::Directory) return fail(abi::errno_::badf);
  return entry;
}
// A file or directory (EBADF for stdio and closed fds).
[[nodiscard]] inline Result<FdEntry*> fs_fd(Call& c, std::uint32_t fd) {
  FdEntry* entry = c.state.fds.find(fd);
  if (entry == nullptr || (entry->kind != FdKind::File && entry->kind != FdKind::Directory)) {
    return fail(abi::errno_::badf);
  }
  return entry;
}

// Takes `bytes` of this call's hostcall copy limit (WasiConfig::hostcall_copy_limit): ENOMEM, as
// Wasmtime's hostcall fuel, when they are not left.
[[nodiscard]] inline Result<void> take_copy(Call& c, std::uint64_t bytes) {
  if (bytes > c.copy_left) return fail(abi::errno_::nomem);
  c.copy_left -= bytes;
  return {};
}

// A guest path string: the copy limit (ENOMEM), bounds (trap), then length / NUL / UTF-8 (errno).
// The length comes first so that a path of gigabytes is refused without being scanned.
[[nodiscard]] inline Result<std::string> read_path(Call& c, std::uint32_t ptr, std::uint32_t len) {
  if (auto taken = take_copy(c, len); !taken) return std::unexpected(std::move(taken).error());
  auto bytes = c.memory.bytes(ptr, len);
  if (!bytes) return std::unexpected(std::move(bytes).error());
  return checked_guest_path(*bytes);
}

[[nodiscard]] std::uint8_t filetype_of(mode_t mode) noexcept;
// Writes a filestat record (64 bytes, 8-aligned) for `st`; EOVERFLOW for pre-1970 timestamps.
[[nodiscard]] Result<void> store_filestat(Call& c, std::uint32_t ptr, const struct stat& st);

// Rights a read-only mount never grants (the calls they name are refused with EPERM).
inline constexpr std::uint64_t kMutatingRights =
    abi::rights::fd_write | abi::rights::fd_allocate | abi::rights::fd_filestat_set_size |
    abi::rights::fd_filestat_set_times | abi::rights::path_create_directory | abi::rights::path_create_file |
    abi::rights::path_link_source | abi::rights::path_link_target | abi::rights::path_rename_source |
    abi::rights::path_rename_target | abi::rights::path_filestat_set_size | abi::rights::path_filestat_set_times |
    abi::rights::path_symlink | abi::rights::path_remove_directory | abi::rights::path_unlink_file;

// Appends guest output to a stream under its cap; EIO once the cap is passed.
[[nodiscard]] Result<std::uint32_t> write_output(OutputStream& out, std::span<const std::uint8_t> data);

// fstflags + the two timestamps → utimensat's pair (EINVAL for unknown bits or SET with NOW).
[[nodiscard]] Result<std::array<struct timespec, 2>> times_from_flags(std::uint64_t atim, std::uint64_t mtim,
                                                                     std::uint32_t flags);

// Deterministic-mode random bytes (xoshiro256**).
void fill_deterministic(std::array<std::uint64_t, 4>& s, std::span<std::uint8_t> out) noexcept;
void seed_deterministic(std::array<std::uint64_t, 4>& s, std::uint64_t seed) noexcept;

// The host functions, one body each (functions_fd.cpp, functions_path.cpp, functions_proc.cpp).
namespace fn {
#define SPRAWLING_WASI_FUNCTION(name) Result<void> name(Call& c);
SPRAWLING_WASI_FUNCTION(args_get)
SPRAWLING_WASI_FUNCTION(args_sizes_get)
SPRAWLING_WASI_FUNCTION(environ_get)
SPRAWLING_WASI_FUNCTION(environ_sizes_get)
SPRAWLING_WASI_FUNCTION(clock_res_get)
SPRAWLING_WASI_FUNCTION(clock_time_get)
SPRAWLING_WASI_FUNCTION(fd_advise)
SPRAWLING_WASI_FUNCTION(fd_allocate)
SPRAWLING_WASI_FUNCTION(fd_close)
SPRAWLING_WASI_FUNCTION(fd_datasync)
SPRAWLING_WASI_FUNCTION(fd_fdstat_get)
SPRAWLING_WASI_FUNCTION(fd_fdstat_set_flags)
SPRAWLING_WASI_FUNCTION(fd_fdstat_set_rights)
SPRAWLING_WASI_FUNCTION(fd_filestat_get)
SPRAWLING_WASI_FUNCTION(fd_filestat_set_size)
SPRAWLING_WASI_FUNCTION(fd_filestat_set_times)
SPRAWLING_WASI_FUNCTION(fd_pread)
SPRAWLING_WASI_FUNCTION(fd_prestat_get)
SPRAWLING_WASI_FUNCTION(fd_prestat_dir_name)
SPRAWLING_WASI_FUNCTION(fd_pwrite)
SPRAWLING_WASI_FUNCTION(fd_read)
SPRAWLING_WASI_FUNCTION(fd_readdir)
SPRAWLING_WASI_FUNCTION(fd_renumber)
SPRAWLING_WASI_FUNCTION(fd_seek)
SPRAWLING_WASI_FUNCTION(fd_sync)
SPRAWLING_WASI_FUNCTION(fd_tell)
SPRAWLING_WASI_FUNCTION(fd_write)
SPRAWLING_WASI_FUNCTION(path_create_directory)
SPRAWLING_WASI_FUNCTION(path_filestat_get)
SPRAWLING_WASI_FUNCTION(path_filestat_set_times)
SPRAWLING_WASI_FUNCTION(path_link)
SPRAWLING_WASI_FUNCTION(path_open)
SPRAWLING_WASI_FUNCTION(path_readlink)
SPRAWLING_WASI_FUNCTION(path_remove_directory)
SPRAWLING_WASI_FUNCTION(path_rename)
SPRAWLING_WASI_FUNCTION(path_symlink)
SPRAWLING_WASI_FUNCTION(path_unlink_file)
SPRAWLING_WASI_FUNCTION(poll_oneoff)
SPRAWLING_WASI_FUNCTION(proc_exit)
SPRAWLING_WASI_FUNCTION(proc_raise)
SPRAWLING_WASI_FUNCTION(random_get)
SPRAWLING_WASI_FUNCTION(sched_yield)
SPRAWLING_WASI_FUNCTION(sock_accept)
SPRAWLING_WASI_FUNCTION(sock_recv)
SPRAWLING_WASI_FUNCTION(sock_send)
SPRAWLING_WASI_FUNCTION(sock_shutdown)
#undef SPRAWLING_WASI_FUNCTION
}  // namespace fn

}  // namespace sprawling::wasi
