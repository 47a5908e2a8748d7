// Host side of the file capabilities: owned host fds, the single function that turns a guest
// path into a host fd (openat2 with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, so the kernel keeps
// every lookup inside the mount), and the mapping of host errno values to WASI errno values.
#pragma once

#include "wasi/abi.hpp"
#include "wasi/result.hpp"

#include <string>
#include <span>
#include <string_view>
#include <utility>

namespace sprawling::wasi {

// A host fd closed on destruction; never copied, so a guest fd maps to exactly one host fd.
class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

// Host errno → WASI errno, as Wasmtime maps io errors (unknown ones become EIO).
[[nodiscard]] abi::Errno errno_from_host(int host_errno) noexcept;
[[nodiscard]] inline std::unexpected<Failure> fail_host(int host_errno) { return fail(errno_from_host(host_errno)); }

// A guest path checked for what the kernel must never see: an interior NUL (EINVAL), invalid
// UTF-8 (EILSEQ, as Wasmtime's string decoding), more than PATH_MAX bytes (ENAMETOOLONG).
[[nodiscard]] Result<std::string> checked_guest_path(std::span<const std::uint8_t> bytes);

// THE path resolution of the WASI host: opens `path` relative to the directory `dirfd` with
// `flags` (O_CLOEXEC is always added), under RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS. Escapes —
// absolute paths, `..` above `dirfd`, symlinks (direct or chained) that lead out — come back from
// the kernel as EXDEV and are reported as EPERM (cap-std's "a path led outside"); magic links
// (/proc/self/fd/N, /proc/self/root) as ELOOP. Every other host fd the host derives from a guest
// path is obtained here.
[[nodiscard]] Result<UniqueFd> resolve_beneath(int dirfd, const std::string& path, int flags, unsigned mode = 0);

// A path split for calls that act on a directory entry (mkdir, unlink, rmdir, rename, link,
// symlink): the parent resolved by resolve_beneath, and the last component — a single name with
// no '/' except a kept trailing one, which the kernel looks up in `parent` without following it.
struct ParentAndName {
  UniqueFd parent;
  std::string name;
  bool trailing_slash = false;
  [[nodiscard]] std::string bare_name() const { return trailing_slash ? name.substr(0, name.size() - 1) : name; }
};
[[nodiscard]] Result<ParentAndName> resolve_parent(int dirfd, const std::string& path);

}  // namespace sprawling::wasi
