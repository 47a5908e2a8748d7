// The state of one WASI run behind WasiContext: the guest fd table, stdio buffers, clocks and
// the random source. Internal to src/wasi (the host functions and the context use it).
#pragma once

#include "wasi/host_fs.hpp"
#include "wasi/result.hpp"
#include "wasi/wasi.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sprawling::wasi {

enum class FdKind : std::uint8_t { Stdin, Stdout, Stderr, Directory, File };

// An fd_readdir listing in progress on a directory fd: its own open description, the index of
// the next entry to hand out, and the entries read from the kernel but not yet handed out whole
// (at most one getdents chunk). A call that continues at `next` reads on from here; any other
// cookie starts over (paying for the entries it skips).
struct DirListEntry {
  std::string name;
  std::uint64_t ino = 0;
  std::uint8_t type = 0;
};
struct DirCursor {
  UniqueFd listing;
  std::uint64_t next = 0;
  std::deque<DirListEntry> pending;
  bool exhausted = false;  // the kernel has no more entries
};

struct FdEntry {
  FdKind kind = FdKind::File;
  UniqueFd host;                  // Directory / File: the host fd (O_RDONLY directories, files as opened)
  bool mount_writable = false;    // the permission of the preopen this fd descends from
  bool readable = false;          // File: the OS access mode
  bool writable = false;
  bool nonblock = false;          // the NONBLOCK fdflag as the guest set it (file I/O always blocks)
  // File: a pipe, FIFO or character device, kept O_NONBLOCK on the host so that reads and
  // writes wait in wait_ready, under the deadline, instead of in the kernel.
  bool pollable = false;
  std::optional<std::string> preopen_name;  // set for preopened directories only
  std::unique_ptr<DirCursor> listing;       // Directory: fd_readdir's position
};

// Guest fd numbers → entries. New numbers reuse the highest freed one first, else max + 1
// (Wasmtime's Descriptors::push); at most `max` entries are open at once.
class FdTable {
 public:
  explicit FdTable(std::uint32_t max) : max_(max) {}

  [[nodiscard]] bool full() const noexcept { return used_.size() >= max_; }
  [[nodiscard]] std::size_t size() const noexcept { return used_.size(); }

  [[nodiscard]] Result<std::uint32_t> insert(FdEntry entry) {
    if (full()) return fail(abi::errno_::mfile);
    std::uint32_t fd = 0;
    if (!free_.empty()) {
      fd = *free_.rbegin();
      free_.erase(std::prev(free_.end()));
    } else if (!used_.empty()) {
      if (used_.rbegin()->first == UINT32_MAX) return fail(abi::errno_::mfile);
      fd = used_.rbegin()->first + 1;
    }
    used_.emplace(fd, std::move(entry));
    return fd;
  }

  [[nodiscard]] FdEntry* find(std::uint32_t fd) noexcept {
    auto it = used_.find(fd);
    return it == used_.end() ? nullptr : &it->second;
  }

  // Removes the entry (its host fd closes when the returned value dies).
  [[nodiscard]] std::optional<FdEntry> remove(std::uint32_t fd) {
    auto it = used_.find(fd);
    if (it == used_.end()) return std::nullopt;
    FdEntry entry = std::move(it->second);
    used_.erase(it);
    free_.insert(fd);
    return entry;
  }

  // `to` takes `from`'s entry; `to`'s previous entry (and host fd) is closed. Both must be open.
  [[nodiscard]] Result<void> renumber(std::uint32_t from, std::uint32_t to) {
    auto source = used_.find(from);
    auto target = used_.find(to);
    if (source == used_.end() || target == used_.end()) return fail(abi::errno_::badf);
    if (from == to) return {};
    target->second = std::move(source->second);  // closes the host fd `to` held
    used_.erase(source);
    free_.insert(from);
    return {};
  }

 private:
  std::map<std::uint32_t, FdEntry> used_;
  std::set<std::uint32_t> free_;
  std::uint32_t max_;
};

struct OutputStream {
  std::vector<std::uint8_t> bytes;
  std::uint64_t accepted = 0;  // bytes counted against the cap (kept or streamed)
  std::uint64_t cap = 0;
  bool truncated = false;
  bool keep = true;
  OutputSink sink;
};

struct WasiState {
  explicit WasiState(const WasiConfig& config) : fds(config.max_fds) {}

  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;

  std::vector<std::uint8_t> stdin_bytes;
  std::size_t stdin_pos = 0;
  int stdin_host_fd = -1;  // WasiConfig::stdin_fd, or -1: stdin_bytes
  OutputStream out;
  OutputStream err;

  FdTable fds;
  std::uint64_t hostcall_copy_limit = 0;  // WasiConfig::hostcall_copy_limit
  std::uint64_t disk_quota = UINT64_MAX;  // WasiConfig::max_disk_write_bytes
  std::uint64_t disk_written = 0;         // charged against it so far

  // Clocks. Host mode: monotonic counts from the context's creation (as Wasmtime's does).
  std::chrono::steady_clock::time_point monotonic_origin = std::chrono::steady_clock::now();
  bool deterministic = false;
  std::uint64_t clock_step_ns = 0;
  std::uint64_t virtual_elapsed_ns = 0;  // deterministic mode: time passed since start
  std::uint64_t realtime_start_ns = 0;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Takes fuel for host work (WasiContext::set_fuel_charger); false when the budget cannot pay.
  std::function<bool(std::uint64_t)> charge_fuel;

  // Deterministic random: xoshiro256** seeded through splitmix64.
  std::array<std::uint64_t, 4> rng{};
};

}  // namespace sprawling::wasi
