// Host side of the file capabilities: the openat2 resolution every guest path goes through,
// guest path checks, and the host → WASI errno table.
#include "wasi/host_fs.hpp"

#include "wasm/support/utf8.hpp"

#include <cerrno>
#include <climits>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sprawling::wasi {

void UniqueFd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

abi::Errno errno_from_host(int host_errno) noexcept {
  namespace e = abi::errno_;
  switch (host_errno) {
    case 0: return e::success;
    case EPERM: return e::perm;
    case ENOENT: return e::noent;
    case ESRCH: return e::srch;
    case EINTR: return e::intr;
    case EIO: return e::io;
    case ENXIO: return e::nxio;
    case E2BIG: return e::toobig;
    case ENOEXEC: return e::noexec;
    case EBADF: return e::badf;
    case ECHILD: return e::child;
    case EAGAIN: return e::again;
    case ENOMEM: return e::nomem;
    case EACCES: return e::acces;
    case EFAULT: return e::fault;
    case EBUSY: return e::busy;
    case EEXIST: return e::exist;
    case EXDEV: return e::xdev;
    case ENODEV: return e::nodev;
    case ENOTDIR: return e::notdir;
    case EISDIR: return e::isdir;
    case EINVAL: return e::inval;
    case ENFILE: return e::nfile;
    case EMFILE: return e::mfile;
    case ENOTTY: return e::notty;
    case ETXTBSY: return e::txtbsy;
    case EFBIG: return e::fbig;
    case ENOSPC: return e::nospc;
    case ESPIPE: return e::spipe;
    case EROFS: return e::rofs;
    case EMLINK: return e::mlink;
    case EPIPE: return e::pipe;
    case EDOM: return e::dom;
    case ERANGE: return e::range;
    case EDEADLK: return e::deadlk;
    case ENAMETOOLONG: return e::nametoolong;
    case ENOLCK: return e::nolck;
    case ENOSYS: return e::nosys;
    case ENOTEMPTY: return e::notempty;
    case ELOOP: return e::loop;
    case ENOMSG: return e::nomsg;
    case EIDRM: return e::idrm;
    case ENOLINK: return e::nolink;
    case EPROTO: return e::proto;
    case EMULTIHOP: return e::multihop;
    case EBADMSG: return e::badmsg;
    case EOVERFLOW: return e::overflow;
    case EILSEQ: return e::ilseq;
    case ENOTSOCK: return e::notsock;
    case EDESTADDRREQ: return e::destaddrreq;
    case EMSGSIZE: return e::msgsize;
    case EPROTOTYPE: return e::prototype;
    case ENOPROTOOPT: return e::noprotoopt;
    case EPROTONOSUPPORT: return e::protonosupport;
    case EOPNOTSUPP: return e::notsup;
    case EAFNOSUPPORT: return e::afnosupport;
    case EADDRINUSE: return e::addrinuse;
    case EADDRNOTAVAIL: return e::addrnotavail;
    case ENETDOWN: return e::netdown;
    case ENETUNREACH: return e::netunreach;
    case ENETRESET: return e::netreset;
    case ECONNABORTED: return e::connaborted;
    case ECONNRESET: return e::connreset;
    case ENOBUFS: return e::nobufs;
    case EISCONN: return e::isconn;
    case ENOTCONN: return e::notconn;
    case ETIMEDOUT: return e::timedout;
    case ECONNREFUSED: return e::connrefused;
    case EHOSTUNREACH: return e::hostunreach;
    case EALREADY: return e::already;
    case EINPROGRESS: return e::inprogress;
    case ESTALE: return e::stale;
    case EDQUOT: return e::dquot;
    case ECANCELED: return e::canceled;
    case EOWNERDEAD: return e::ownerdead;
    case ENOTRECOVERABLE: return e::notrecoverable;
    default: return e::io;
  }
}

Result<std::string> checked_guest_path(std::span<const std::uint8_t> bytes) {
  if (bytes.size() >= PATH_MAX) return fail(abi::errno_::nametoolong);  // before any scan
  for (std::uint8_t b : bytes) {
    if (b == 0) return fail(abi::errno_::inval);
  }
  if (!wasm::is_valid_utf8(bytes)) return fail(abi::errno_::ilseq);
  return std::string(bytes.begin(), bytes.end());
}

Result<UniqueFd> resolve_beneath(int dirfd, const std::string& path, int flags, unsigned mode) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(static_cast<unsigned>(flags | O_CLOEXEC));
  // O_TMPFILE includes the O_DIRECTORY bit, so it is tested as a whole.
  how.mode = ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  // EAGAIN: a concurrent rename made the kernel unsure that `..` stayed beneath; it asks to retry.
  for (int attempt = 0;; ++attempt) {
    const long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    const int error = errno;
    if (error == EINTR) continue;
    if (error == EAGAIN && attempt < 32) continue;
    if (error == EXDEV || error == EAGAIN) return fail(abi::errno_::perm);
    return fail_host(error);
  }
}

Result<ParentAndName> resolve_parent(int dirfd, const std::string& path) {
  if (path.empty()) return fail(abi::errno_::noent);
  std::size_t end = path.size();
  while (end > 0 && path[end - 1] == '/') --end;
  if (end == 0) return fail(abi::errno_::perm);  // "/", "//": an absolute path
  const bool trailing = end < path.size();
  const std::size_t slash = path.rfind('/', end - 1);
  const std::size_t start = slash == std::string::npos ? 0 : slash + 1;
  const std::string parent_path = slash == std::string::npos ? std::string(".") : path.substr(0, start);
  std::string component = path.substr(start, end - start);

  auto parent = resolve_beneath(dirfd, parent_path, O_PATH | O_DIRECTORY);
  if (!parent) return std::unexpected(std::move(parent).error());
  if (component == "..") {
    // The entry named is the parent's parent: it must itself be beneath the mount.
    auto up = resolve_beneath(parent->get(), component, O_PATH);
    if (!up) return std::unexpected(std::move(up).error());
  }
  ParentAndName out;
  out.parent = std::move(*parent);
  out.name = trailing ? component + "/" : component;
  out.trailing_slash = trailing;
  return out;
}

}  // namespace sprawling::wasi
