// wasi_snapshot_preview1 ABI: errno values, flag bits, enum values and the guest-side layout
// (offsets, sizes, alignments) of every record the host reads or writes, as the witx defines them.
#pragma once

#include <cstdint>

namespace sprawling::wasi::abi {

using Errno = std::uint16_t;

// https://github.com/WebAssembly/WASI/blob/main/legacy/preview1/docs.md#errno
namespace errno_ {
inline constexpr Errno success = 0, toobig = 1, acces = 2, addrinuse = 3, addrnotavail = 4, afnosupport = 5,
                       again = 6, already = 7, badf = 8, badmsg = 9, busy = 10, canceled = 11, child = 12,
                       connaborted = 13, connrefused = 14, connreset = 15, deadlk = 16, destaddrreq = 17,
                       dom = 18, dquot = 19, exist = 20, fault = 21, fbig = 22, hostunreach = 23, idrm = 24,
                       ilseq = 25, inprogress = 26, intr = 27, inval = 28, io = 29, isconn = 30, isdir = 31,
                       loop = 32, mfile = 33, mlink = 34, msgsize = 35, multihop = 36, nametoolong = 37,
                       netdown = 38, netreset = 39, netunreach = 40, nfile = 41, nobufs = 42, nodev = 43,
                       noent = 44, noexec = 45, nolck = 46, nolink = 47, nomem = 48, nomsg = 49,
                       noprotoopt = 50, nospc = 51, nosys = 52, notconn = 53, notdir = 54, notempty = 55,
                       notrecoverable = 56, notsock = 57, notsup = 58, notty = 59, nxio = 60, overflow = 61,
                       ownerdead = 62, perm = 63, pipe = 64, proto = 65, protonosupport = 66, prototype = 67,
                       range = 68, rofs = 69, spipe = 70, srch = 71, stale = 72, timedout = 73, txtbsy = 74,
                       xdev = 75, notcapable = 76;
}  // namespace errno_

namespace filetype {
inline constexpr std::uint8_t unknown = 0, block_device = 1, character_device = 2, directory = 3,
                              regular_file = 4, socket_dgram = 5, socket_stream = 6, symbolic_link = 7;
}

namespace fdflags {
inline constexpr std::uint16_t append = 1, dsync = 2, nonblock = 4, rsync = 8, sync = 16;
inline constexpr std::uint16_t all = 31;
}  // namespace fdflags

namespace oflags {
inline constexpr std::uint16_t creat = 1, directory = 2, excl = 4, trunc = 8;
inline constexpr std::uint16_t all = 15;
}  // namespace oflags

namespace lookupflags {
inline constexpr std::uint32_t symlink_follow = 1;
inline constexpr std::uint32_t all = 1;
}  // namespace lookupflags

namespace fstflags {
inline constexpr std::uint16_t atim = 1, atim_now = 2, mtim = 4, mtim_now = 8;
inline constexpr std::uint16_t all = 15;
}  // namespace fstflags

namespace whence {
inline constexpr std::uint8_t set = 0, cur = 1, end = 2;
}

namespace clockid {
inline constexpr std::uint32_t realtime = 0, monotonic = 1, process_cputime = 2, thread_cputime = 3;
}

namespace eventtype {
inline constexpr std::uint8_t clock = 0, fd_read = 1, fd_write = 2;
}

inline constexpr std::uint16_t subclockflags_abstime = 1;
inline constexpr std::uint16_t eventrwflags_hangup = 1;
inline constexpr std::uint8_t advice_max = 5;      // normal … noreuse
inline constexpr std::uint8_t signal_max = 30;     // none … sys
inline constexpr std::uint16_t riflags_all = 3;    // recv_peek | recv_waitall
inline constexpr std::uint8_t sdflags_all = 3;     // rd | wr
inline constexpr std::uint8_t preopentype_dir = 0;

namespace rights {
inline constexpr std::uint64_t fd_datasync = 1ull << 0, fd_read = 1ull << 1, fd_seek = 1ull << 2,
                               fd_fdstat_set_flags = 1ull << 3, fd_sync = 1ull << 4, fd_tell = 1ull << 5,
                               fd_write = 1ull << 6, fd_advise = 1ull << 7, fd_allocate = 1ull << 8,
                               path_create_directory = 1ull << 9, path_create_file = 1ull << 10,
                               path_link_source = 1ull << 11, path_link_target = 1ull << 12,
                               path_open = 1ull << 13, fd_readdir = 1ull << 14, path_readlink = 1ull << 15,
                               path_rename_source = 1ull << 16, path_rename_target = 1ull << 17,
                               path_filestat_get = 1ull << 18, path_filestat_set_size = 1ull << 19,
                               path_filestat_set_times = 1ull << 20, fd_filestat_get = 1ull << 21,
                               fd_filestat_set_size = 1ull << 22, fd_filestat_set_times = 1ull << 23,
                               path_symlink = 1ull << 24, path_remove_directory = 1ull << 25,
                               path_unlink_file = 1ull << 26, poll_fd_readwrite = 1ull << 27,
                               sock_shutdown = 1ull << 28, sock_accept = 1ull << 29;
inline constexpr std::uint64_t all = (1ull << 30) - 1;
}  // namespace rights

// Guest-side records: size, alignment and field offsets (witx "calculated offsets").
namespace layout {
inline constexpr std::uint32_t iovec_size = 8, iovec_align = 4;  // buf u32 @0, buf_len u32 @4

inline constexpr std::uint32_t fdstat_size = 24, fdstat_align = 8;
inline constexpr std::uint32_t fdstat_filetype = 0, fdstat_flags = 2, fdstat_rights_base = 8,
                               fdstat_rights_inheriting = 16;

inline constexpr std::uint32_t filestat_size = 64, filestat_align = 8;
inline constexpr std::uint32_t filestat_dev = 0, filestat_ino = 8, filestat_filetype = 16, filestat_nlink = 24,
                               filestat_size_field = 32, filestat_atim = 40, filestat_mtim = 48, filestat_ctim = 56;

inline constexpr std::uint32_t prestat_size = 8, prestat_align = 4;  // tag u8 @0, pr_name_len u32 @4

inline constexpr std::uint32_t dirent_size = 24;  // d_next u64 @0, d_ino u64 @8, d_namlen u32 @16, d_type u8 @20

inline constexpr std::uint32_t subscription_size = 48, subscription_align = 8;
inline constexpr std::uint32_t subscription_userdata = 0, subscription_tag = 8, subscription_clock_id = 16,
                               subscription_clock_timeout = 24, subscription_clock_precision = 32,
                               subscription_clock_flags = 40, subscription_fd = 16;

inline constexpr std::uint32_t event_size = 32, event_align = 8;
inline constexpr std::uint32_t event_userdata = 0, event_error = 8, event_type = 10, event_nbytes = 16,
                               event_flags = 24;
}  // namespace layout

}  // namespace sprawling::wasi::abi
