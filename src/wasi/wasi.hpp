// The WASI preview1 host: configuration of one run (args, env, stdio, preopened directories,
// clocks) and the WasiContext that owns its state and provides the wasi_snapshot_preview1 functions.
#pragma once

#include "wasm/runtime/host.hpp"

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sprawling::wasi {

// One preopened directory. Guest fds 3, 4, … are the preopens in this order.
struct Preopen {
  std::filesystem::path host;
  std::string guest;  // the name fd_prestat_dir_name reports, e.g. "/data"
  bool writable = false;
};

using OutputSink = std::function<void(std::span<const std::uint8_t>)>;

struct WasiConfig {
  std::vector<std::string> args;  // argv, argv[0] included (nothing is implied)
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::uint8_t> stdin_bytes;  // fd 0 reads these, then EOF forever
  // When set, fd 0 reads this host fd instead, on demand: each fd_read reads at most the
  // guest's buffer straight into guest memory (nothing is buffered on the host), after waiting
  // for data under the deadline. Borrowed: the embedder keeps it open for the run and closes it.
  std::optional<int> stdin_fd;
  std::vector<Preopen> preopens;

  // Output: bytes the guest writes to fd 1 / fd 2 are kept in memory up to the cap. A write that
  // would pass it stores what fits, sets the truncated flag and fails with EIO (as do later ones).
  std::uint64_t stdout_cap = std::uint64_t{64} << 20;
  std::uint64_t stderr_cap = std::uint64_t{64} << 20;
  // Streaming: when set, each accepted chunk is also handed over as the guest writes it.
  OutputSink stdout_sink;
  OutputSink stderr_sink;
  // With a sink set, false stops keeping the bytes in memory too (the cap still counts them).
  bool capture_streamed_output = true;

  // Guest fd table size, stdio and preopens included; opening past it gives EMFILE.
  std::uint32_t max_fds = 1024;

  // Wasmtime's "hostcall fuel": the bytes one WASI call may take from guest memory — iovec
  // arrays, the buffer fd_write/fd_pwrite write, path strings, poll_oneoff subscriptions, and
  // (beyond Wasmtime) the bytes random_get fills. A call that would take more fails with ENOMEM
  // before doing anything, so no single call makes the host scan, copy or generate gigabytes
  // for the price of one `call`.
  std::uint64_t hostcall_copy_limit = std::uint64_t{128} << 20;

  // Write quota on writable mounts for the run: bytes written to files plus the size of every
  // hole a write past the end or fd_filestat_set_size adds. Past it: EDQUOT, nothing written.
  std::uint64_t max_disk_write_bytes = UINT64_MAX;

  // Reproducible runs: clocks start at fixed values and advance by `clock_step` on every read
  // (and by the full timeout of a poll_oneoff sleep, without sleeping); random_get is a
  // generator seeded with `random_seed` (reproducible, not secret).
  bool deterministic = false;
  std::uint64_t random_seed = 0;
  std::chrono::nanoseconds clock_step{1'000'000};
  std::uint64_t deterministic_realtime_start_ns = 946'684'800'000'000'000ull;  // 2000-01-01T00:00:00Z

  // Bounds blocking host calls: a poll_oneoff sleep that would end past it sleeps until the
  // deadline and then stops the guest with HostStatus::DeadlineExceeded.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

// Why a context could not be built (which preopen, and the OS error when there is one).
struct WasiSetupError {
  enum class Kind : std::uint8_t {
    PreopenOpen,          // the host directory could not be opened (os_errno says why)
    PreopenNotDirectory,  // the host path is not a directory
    PreopenGuestName,     // the guest name is empty or holds a NUL byte
    TooManyPreopens,      // 3 + preopens > max_fds
  };
  Kind kind = Kind::PreopenOpen;
  std::size_t preopen_index = 0;
  std::filesystem::path host;
  std::string guest;
  int os_errno = 0;
  std::string message;  // one line naming the mount and the cause
};

struct WasiState;  // the run's state; defined in src/wasi/state.hpp, internal to the WASI host

class WasiContext {
 public:
  // Opens every preopen's host directory now (so a bad mount is reported before the guest runs).
  [[nodiscard]] static std::expected<std::unique_ptr<WasiContext>, WasiSetupError> create(WasiConfig config);

  // Every function of wasi_snapshot_preview1, and no others. Register each with
  // Store::add_host_function(def.type, def.fn, <this WasiContext*>, …): the host call's
  // `context` must be the WasiContext of the run.
  [[nodiscard]] static std::span<const wasm::HostFunctionDef> functions();

  ~WasiContext();
  WasiContext(const WasiContext&) = delete;
  WasiContext& operator=(const WasiContext&) = delete;

  // Captured output so far; take_* moves it out (later output starts a new buffer).
  [[nodiscard]] const std::vector<std::uint8_t>& stdout_bytes() const noexcept;
  [[nodiscard]] const std::vector<std::uint8_t>& stderr_bytes() const noexcept;
  [[nodiscard]] std::vector<std::uint8_t> take_stdout() noexcept;
  [[nodiscard]] std::vector<std::uint8_t> take_stderr() noexcept;
  // True once the guest tried to write past the cap.
  [[nodiscard]] bool stdout_truncated() const noexcept;
  [[nodiscard]] bool stderr_truncated() const noexcept;

  // Bytes charged to the disk write quota so far (WasiConfig::max_disk_write_bytes).
  [[nodiscard]] std::uint64_t disk_write_bytes() const noexcept;

  // Guest fds currently open (stdio and preopens included).
  [[nodiscard]] std::size_t open_fd_count() const noexcept;

  // Host work is paid in fuel: the engine passes a function that takes `units` from the run's
  // budget (false: not enough left, and the call stops the guest with OutOfFuel). Unset: free.
  void set_fuel_charger(std::function<bool(std::uint64_t units)> charge);

  [[nodiscard]] WasiState& state() noexcept { return *state_; }

 private:
  explicit WasiContext(std::unique_ptr<WasiState> state);
  std::unique_ptr<WasiState> state_;
};

}  // namespace sprawling::wasi
