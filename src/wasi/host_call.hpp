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
#include "wasm/runtime/host.hpp"

#include <sys/stat.h>
#include <array>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sprawling::wasi {

// The wasm types of WASI parameters, as C++ types: a body's parameter list is its signature.
// U32 → i32 (fds, pointers, lengths, flags), U64 → i64 (offsets, sizes, rights, timestamps,
// cookies). Nothing else may appear, so a parameter cannot be read at the wrong width.
using U32 = std::uint32_t;
using U64 = std::uint64_t;

template <class T>
struct WasmParam;
template <>
struct WasmParam<U32> {
  static constexpr wasm::ValType type = wasm::ValType::I32;
  // i32 arguments travel in the low 32 bits of their slot.
  static U32 from(std::uint64_t slot) noexcept { return static_cast<U32>(slot); }
};
template <>
struct WasmParam<U64> {
  static constexpr wasm::ValType type = wasm::ValType::I64;
  static U64 from(std::uint64_t slot) noexcept { return slot; }
};

struct Call {
  wasm::HostCall& host;
  WasiState& state;
  GuestMemory memory;
  std::uint64_t copy_left = 0;  // of WasiState::hostcall_copy_limit, for this call
};

// A body's type, taken apart: its wasm parameter types and how to call it with a HostCall's slots.
template <class Sig>
struct BodyTraits;
template <class... P>
struct BodyTraits<Result<void> (*)(Call&, P...)> {
  static std::vector<wasm::ValType> params() { return {WasmParam<P>::type...}; }
  template <Result<void> (*F)(Call&, P...), std::size_t... I>
  static Result<void> invoke(Call& c, std::index_sequence<I...> /*indices*/) {
    return F(c, WasmParam<P>::from(c.host.args[I])...);
  }
  template <Result<void> (*F)(Call&, P...)>
  static Result<void> invoke(Call& c) {
    return invoke<F>(c, std::index_sequence_for<P...>{});
  }
};

// steady_clock's time read from CLOCK_MONOTONIC_COARSE (the same clock, at the kernel tick's
// resolution, a few ms): the check after every host call costs ~5 ns instead of ~40 ns, and a
// deadline is at most one tick late.
[[nodiscard]] inline std::chrono::steady_clock::time_point coarse_now() noexcept {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::chrono::steady_clock::time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
}

// Runs a body and reports its ending the way the engine expects: errno in result 0 (functions
// that have it), a trap with its message, or proc_exit's code. The engine checked the argument
// count against the signature BodyTraits derived from the same body.
template <auto F>
wasm::HostStatus thunk(wasm::HostCall& call) {
  auto* context = static_cast<WasiContext*>(call.context);
  if (context == nullptr) {
    call.trap_message = "WASI function called without its WasiContext";
    return wasm::HostStatus::Trap;
  }
  Call c{call, context->state(), GuestMemory(call.memory), context->state().hostcall_copy_limit};
  Result<void> result = BodyTraits<decltype(F)>::template invoke<F>(c);
  // The deadline is checked after every call (the interpreter checks it only at fuel refills,
  // every 2^20 units): a guest that spends its time in host calls stops on time too.
  const bool returns = result || result.error().kind == Failure::Kind::Errno;
  if (returns && c.state.deadline && coarse_now() >= *c.state.deadline) {
    return wasm::HostStatus::DeadlineExceeded;
  }
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
    case Failure::Kind::Deadline: return wasm::HostStatus::DeadlineExceeded;
    case Failure::Kind::OutOfFuel: return wasm::HostStatus::OutOfFuel;
  }
  call.trap_message = "WASI host: unknown failure kind";
  return wasm::HostStatus::Trap;
}

// Waits until `fd` (a pipe, FIFO or character device) is ready for `events` (POLLIN / POLLOUT),
// at most until the run's deadline: then the call fails with Failure::Kind::Deadline. Without a
// deadline it waits as long as it takes, as a blocking read would.
[[nodiscard]] Result<void> wait_ready(const WasiState& state, int fd, short events);

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

// Host work in fuel: one unit per kBytesPerFuel bytes a call moves or produces (rounded down, so a
// small call costs only its `call`), on top of the wasm cost of the call. Charged before the work
// when its size is known (writes, random_get, strings, subscriptions), after it otherwise (reads,
// directory entries); either way one call's work is bounded by the hostcall copy limit.
inline constexpr std::uint64_t kBytesPerFuel = 64;
[[nodiscard]] inline Result<void> charge_bytes(Call& c, std::uint64_t bytes) {
  if (c.state.charge_fuel && !c.state.charge_fuel(bytes / kBytesPerFuel)) return out_of_fuel();
  return {};
}

// Charges `bytes` to the run's disk write quota: EDQUOT, nothing charged, when they do not fit.
[[nodiscard]] inline Result<void> charge_disk(Call& c, std::uint64_t bytes) {
  if (bytes > c.state.disk_quota - c.state.disk_written) return fail(abi::errno_::dquot);
  c.state.disk_written += bytes;
  return {};
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
  SPRAWLING_WASI_CHECK(charge_bytes(c, len));
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
// These declarations are the one place a WASI signature is written: WasiContext::functions()
// derives each wasm type from them (every function but proc_exit returns an errno i32).
namespace fn {
Result<void> args_get(Call& c, U32 argv, U32 argv_buf);
Result<void> args_sizes_get(Call& c, U32 argc_out, U32 argv_buf_size_out);
Result<void> environ_get(Call& c, U32 environ, U32 environ_buf);
Result<void> environ_sizes_get(Call& c, U32 count_out, U32 buf_size_out);
Result<void> clock_res_get(Call& c, U32 id, U32 resolution_out);
Result<void> clock_time_get(Call& c, U32 id, U64 precision, U32 time_out);
Result<void> fd_advise(Call& c, U32 fd, U64 offset, U64 len, U32 advice);
Result<void> fd_allocate(Call& c, U32 fd, U64 offset, U64 len);
Result<void> fd_close(Call& c, U32 fd);
Result<void> fd_datasync(Call& c, U32 fd);
Result<void> fd_fdstat_get(Call& c, U32 fd, U32 fdstat_out);
Result<void> fd_fdstat_set_flags(Call& c, U32 fd, U32 flags);
Result<void> fd_fdstat_set_rights(Call& c, U32 fd, U64 base, U64 inheriting);
Result<void> fd_filestat_get(Call& c, U32 fd, U32 filestat_out);
Result<void> fd_filestat_set_size(Call& c, U32 fd, U64 size);
Result<void> fd_filestat_set_times(Call& c, U32 fd, U64 atim, U64 mtim, U32 fst_flags);
Result<void> fd_pread(Call& c, U32 fd, U32 iovs, U32 iovs_len, U64 offset, U32 nread_out);
Result<void> fd_prestat_get(Call& c, U32 fd, U32 prestat_out);
Result<void> fd_prestat_dir_name(Call& c, U32 fd, U32 path, U32 path_len);
Result<void> fd_pwrite(Call& c, U32 fd, U32 iovs, U32 iovs_len, U64 offset, U32 nwritten_out);
Result<void> fd_read(Call& c, U32 fd, U32 iovs, U32 iovs_len, U32 nread_out);
Result<void> fd_readdir(Call& c, U32 fd, U32 buf, U32 buf_len, U64 cookie, U32 bufused_out);
Result<void> fd_renumber(Call& c, U32 from, U32 to);
Result<void> fd_seek(Call& c, U32 fd, U64 offset, U32 whence, U32 newoffset_out);
Result<void> fd_sync(Call& c, U32 fd);
Result<void> fd_tell(Call& c, U32 fd, U32 offset_out);
Result<void> fd_write(Call& c, U32 fd, U32 iovs, U32 iovs_len, U32 nwritten_out);
Result<void> path_create_directory(Call& c, U32 fd, U32 path_ptr, U32 path_len);
Result<void> path_filestat_get(Call& c, U32 fd, U32 flags, U32 path_ptr, U32 path_len, U32 filestat_out);
Result<void> path_filestat_set_times(Call& c, U32 fd, U32 flags, U32 path_ptr, U32 path_len, U64 atim, U64 mtim,
                                     U32 fst_flags);
Result<void> path_link(Call& c, U32 old_fd, U32 old_flags, U32 old_path_ptr, U32 old_path_len, U32 new_fd,
                       U32 new_path_ptr, U32 new_path_len);
Result<void> path_open(Call& c, U32 dirfd, U32 dirflags, U32 path_ptr, U32 path_len, U32 oflags, U64 base,
                       U64 inheriting, U32 fdflags, U32 fd_out);
Result<void> path_readlink(Call& c, U32 fd, U32 path_ptr, U32 path_len, U32 buf, U32 buf_len, U32 bufused_out);
Result<void> path_remove_directory(Call& c, U32 fd, U32 path_ptr, U32 path_len);
Result<void> path_rename(Call& c, U32 fd, U32 old_path_ptr, U32 old_path_len, U32 new_fd, U32 new_path_ptr,
                         U32 new_path_len);
Result<void> path_symlink(Call& c, U32 old_path_ptr, U32 old_path_len, U32 fd, U32 new_path_ptr, U32 new_path_len);
Result<void> path_unlink_file(Call& c, U32 fd, U32 path_ptr, U32 path_len);
Result<void> poll_oneoff(Call& c, U32 subscriptions, U32 events_out, U32 nsubscriptions, U32 nevents_out);
Result<void> proc_exit(Call& c, U32 code);
Result<void> proc_raise(Call& c, U32 signal);
Result<void> random_get(Call& c, U32 buf, U32 buf_len);
Result<void> sched_yield(Call& c);
Result<void> sock_accept(Call& c, U32 fd, U32 flags, U32 fd_out);
Result<void> sock_recv(Call& c, U32 fd, U32 ri_data, U32 ri_data_len, U32 ri_flags, U32 ro_datalen_out,
                       U32 ro_flags_out);
Result<void> sock_send(Call& c, U32 fd, U32 si_data, U32 si_data_len, U32 si_flags, U32 so_datalen_out);
Result<void> sock_shutdown(Call& c, U32 fd, U32 how);
}  // namespace fn

}  // namespace sprawling::wasi
