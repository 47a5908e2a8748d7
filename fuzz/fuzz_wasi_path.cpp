// Fuzz target (d): WASI path resolution. Each input lays out a scratch mount (directories, files,
// symlinks pointing anywhere: up, out, absolute, magic /proc links) beside an `outside` folder,
// then drives the path_* functions as a guest would. Nothing may resolve, appear, vanish or
// change outside the mount, and every host fd must be closed when the context goes.
#include "wasi/abi.hpp"
#include "wasi/state.hpp"
#include "wasi/wasi.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace sprawling;

class Source {
 public:
  Source(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  [[nodiscard]] bool empty() const { return pos_ >= size_; }
  std::uint8_t byte() { return empty() ? 0 : data_[pos_++]; }
  std::uint32_t below(std::uint32_t n) { return byte() % n; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

struct Scratch {
  fs::path base;
  fs::path root;
  fs::path outside;
  std::string root_real;
  std::string secret = "outside the mount";
  Scratch() {
    base = fs::temp_directory_path() / ("sprawl-fuzz-wasi-" + std::to_string(::getpid()));
    root = base / "root";
    outside = base / "outside";
    fs::remove_all(base);
    fs::create_directories(outside);
    fs::create_directories(root);
    std::ofstream(outside / "secret") << secret;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
};

Scratch& scratch() {
  static Scratch s;
  return s;
}

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "WASI PATH FINDING: %s\n", what.c_str());
  std::abort();
}

std::size_t open_host_fds() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d) != nullptr) ++n;
    ::closedir(d);
  }
  return n;
}

const std::array<const char*, 5> kDirs{"", "a", "a/b", "b", "c/d"};
const std::array<const char*, 4> kNames{"l0", "l1", "f", "l2"};

std::vector<std::string> link_targets() {
  const std::string base = scratch().base.string();
  return {"..", "../..", "../outside", "../outside/secret", base + "/outside", base + "/outside/secret", "/",
          "/proc/self/root", "/proc/self/fd/3", "/proc/self/cwd", ".", "a", "l0", "l1", "l2", "a/../..", "a/l0",
          "b/../../outside", "f", "c/d/../../.."};
}

const std::array<const char*, 20> kTokens{"a", "b", "c", "d", "..", ".", "", "l0", "l1", "l2",
                                          "secret", "outside", "f", "new", "a/..", "/", "\xff", "\0x", "l0/..", "c/d"};

std::string guest_path(Source& in) {
  std::string path;
  const std::uint32_t n = 1 + in.below(5);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i != 0) path += '/';
    const std::uint32_t pick = in.below(kTokens.size() + 1);
    if (pick == kTokens.size()) {
      path += std::string(300, 'x');  // past NAME_MAX
    } else if (pick == 17) {
      path += std::string("\0x", 2);  // interior NUL
    } else {
      path += kTokens[pick];
    }
  }
  return path;
}

// The outside world as it must stay: `outside` with one untouched file, `base` with two entries.
void check_outside() {
  const Scratch& s = scratch();
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(s.base)) {
    ++entries;
    if (e.path() != s.root && e.path() != s.outside) finding("new entry beside the mount: " + e.path().string());
  }
  if (entries != 2) finding("the mount or `outside` vanished");
  entries = 0;
  for (const auto& e : fs::directory_iterator(s.outside)) {
    ++entries;
    if (e.path().filename() != "secret") finding("new entry outside the mount: " + e.path().string());
  }
  if (entries != 1) finding("outside/secret vanished");
  std::ifstream in(s.outside / "secret");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (content != s.secret) finding("outside/secret was changed");
}

// The cheap check after every guest call: the kernel updates a directory's mtime and ctime on
// any entry added, removed or renamed, and a file's on any write or truncation, so unchanged
// inode, link count, size, mtime and ctime of `base`, `outside` and `secret` mean nothing
// happened there. (The full check_outside, which reads and lists them, runs before and after
// each input, and catches even a change within the timestamps' resolution.)
struct Snapshot {
  struct stat base {}, outside {}, secret {};
};

Snapshot take_snapshot() {
  const Scratch& s = scratch();
  Snapshot snap;
  if (::lstat(s.base.c_str(), &snap.base) != 0 || ::lstat(s.outside.c_str(), &snap.outside) != 0 ||
      ::lstat((s.outside / "secret").c_str(), &snap.secret) != 0)
    finding("the scratch tree cannot be stat'ed");
  return snap;
}

bool same_stat(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_nlink == b.st_nlink && a.st_size == b.st_size && a.st_mode == b.st_mode &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

void check_outside_quick(const Snapshot& before, const char* after_call) {
  const Snapshot now = take_snapshot();
  if (!same_stat(before.base, now.base)) finding(std::string("the folder holding the mount changed after ") + after_call);
  if (!same_stat(before.outside, now.outside)) finding(std::string("`outside` changed after ") + after_call);
  if (!same_stat(before.secret, now.secret)) finding(std::string("`outside/secret` changed after ") + after_call);
}

// A guest fd's host fd must name something at or below the mount.
void check_inside(int host_fd) {
  char link[PATH_MAX + 1];
  const std::string proc = "/proc/self/fd/" + std::to_string(host_fd);
  const ssize_t n = ::readlink(proc.c_str(), link, PATH_MAX);
  if (n < 0) finding("readlink of an opened host fd failed");
  const std::string target(link, static_cast<std::size_t>(n));
  const std::string& root = scratch().root_real;
  if (target != root && target.rfind(root + "/", 0) != 0) finding("a path resolved outside the mount: " + target);
}

class Guest {
 public:
  explicit Guest(wasi::WasiContext& context) : context_(context), memory_(1 << 16, 0) {
    for (const auto& def : wasi::WasiContext::functions()) functions_.emplace_back(def.name, def.fn);
  }

  std::uint32_t put(const std::string& s, std::uint32_t at) {
    std::memcpy(memory_.data() + at, s.data(), s.size());
    return static_cast<std::uint32_t>(s.size());
  }
  std::uint32_t u32(std::uint32_t at) const {
    std::uint32_t v;
    std::memcpy(&v, memory_.data() + at, 4);
    return v;
  }

  std::uint16_t call(std::string_view name, std::initializer_list<std::uint64_t> args) {
    wasm::HostFn fn = nullptr;
    for (const auto& [n, f] : functions_) {
      if (n == name) fn = f;
    }
    if (fn == nullptr) finding("no WASI function " + std::string(name));
    last_ = name.data();  // the names are string literals
    std::vector<std::uint64_t> a(args);
    std::uint64_t result = 0;
    wasm::HostCall call{.args = a, .results = std::span<std::uint64_t>(&result, 1),
                        .memory = wasm::MemoryView{memory_.data(), memory_.size()}, .context = &context_,
                        .trap_message = {}, .exit_code = 0};
    const auto status = fn(call);
    if (status != wasm::HostStatus::Ok) finding(std::string(name) + " trapped: " + call.trap_message);
    return static_cast<std::uint16_t>(result);
  }

  [[nodiscard]] const char* last_call() const { return last_; }

  int host_fd(std::uint32_t guest_fd) {
    auto* entry = context_.state().fds.find(guest_fd);
    return entry == nullptr ? -1 : entry->host.get();
  }

 private:
  wasi::WasiContext& context_;
  std::vector<std::uint8_t> memory_;
  std::vector<std::pair<std::string_view, wasm::HostFn>> functions_;
  const char* last_ = "(no call)";
};

constexpr std::uint32_t kPathA = 1024, kPathB = 8192, kOut = 0, kBuf = 16384;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Scratch& s = scratch();
  static const std::size_t baseline_fds = open_host_fds();
  Source in(data, size);

  check_outside();  // also covers whatever the previous input did after its last check
  std::error_code ec;
  fs::remove_all(s.root, ec);
  fs::create_directories(s.root);
  s.root_real = fs::canonical(s.root).string();
  const auto targets = link_targets();
  // Layout, made on the host side from fixed names (the layout itself never leaves the mount).
  for (std::uint32_t i = 0, n = in.below(8); i < n; ++i) {
    const fs::path dir = s.root / kDirs[in.below(kDirs.size())];
    fs::create_directories(dir, ec);
    const fs::path entry = dir / kNames[in.below(kNames.size())];
    if (in.below(3) == 0) {
      // Never through an existing link: the layout itself must not write outside.
      const int fd = ::open(entry.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd >= 0) {
        [[maybe_unused]] ssize_t w = ::write(fd, "inside", 6);
        ::close(fd);
      }
    } else {
      [[maybe_unused]] int rc = ::symlink(targets[in.below(targets.size())].c_str(), entry.c_str());
    }
  }

  {
    wasi::WasiConfig config;
    config.preopens.push_back(wasi::Preopen{.host = s.root, .guest = "/sandbox", .writable = true});
    auto context = wasi::WasiContext::create(std::move(config));
    if (!context) finding("the scratch mount could not be preopened: " + context.error().message);
    Guest guest(**context);
    const Snapshot snapshot = take_snapshot();
    std::vector<std::uint32_t> dirs{3};  // directory fds usable as bases
    while (!in.empty()) {
      const std::uint32_t base = dirs[in.below(static_cast<std::uint32_t>(dirs.size()))];
      const std::string a = guest_path(in);
      const std::uint32_t alen = guest.put(a, kPathA);
      switch (in.below(9)) {
        case 0:
        case 1: {  // path_open
          const std::uint32_t lookup = in.below(2);  // symlink_follow
          const std::uint32_t oflags = in.below(16);
          const std::uint64_t rights = in.below(2) ? ~std::uint64_t{0} : 0x2;  // everything, or fd_read only
          const std::uint32_t fdflags = in.below(2) ? 1 : 0;
          if (guest.call("path_open", {base, lookup, kPathA, alen, oflags, rights, rights, fdflags, kOut}) == 0) {
            const std::uint32_t fd = guest.u32(kOut);
            const int host = guest.host_fd(fd);
            if (host < 0) finding("path_open succeeded without a host fd");
            check_inside(host);
            struct stat st {};
            if (::fstat(host, &st) == 0 && S_ISDIR(st.st_mode)) dirs.push_back(fd);
          }
          break;
        }
        case 2: guest.call("path_filestat_get", {base, in.below(2), kPathA, alen, kBuf}); break;
        case 3: guest.call("path_readlink", {base, kPathA, alen, kBuf, 256, kOut}); break;
        case 4: guest.call("path_create_directory", {base, kPathA, alen}); break;
        case 5: guest.call(in.below(2) ? "path_unlink_file" : "path_remove_directory", {base, kPathA, alen}); break;
        case 6: {  // path_symlink: any target text is allowed; following it later must stay inside
          const std::string& t = targets[in.below(targets.size())];
          const std::uint32_t tlen = guest.put(t, kPathB);
          guest.call("path_symlink", {kPathB, tlen, base, kPathA, alen});
          break;
        }
        case 7: {
          const std::string b = guest_path(in);
          const std::uint32_t blen = guest.put(b, kPathB);
          const std::uint32_t other = dirs[in.below(static_cast<std::uint32_t>(dirs.size()))];
          if (in.below(2)) {
            guest.call("path_rename", {base, kPathA, alen, other, kPathB, blen});
          } else {
            guest.call("path_link", {base, in.below(2), kPathA, alen, other, kPathB, blen});
          }
          break;
        }
        default: {  // open for writing with truncation: the most damaging thing a guest can try
          if (guest.call("path_open", {base, 1, kPathA, alen, 1 | 8, ~std::uint64_t{0}, ~std::uint64_t{0}, 0, kOut}) == 0) {
            const int host = guest.host_fd(guest.u32(kOut));
            check_inside(host);
            [[maybe_unused]] ssize_t w = ::write(host, "x", 1);
          }
          break;
        }
      }
      check_outside_quick(snapshot, guest.last_call());
    }
  }
  check_outside();
  if (open_host_fds() != baseline_fds) finding("host fds leaked after the context closed");
  return 0;
}
