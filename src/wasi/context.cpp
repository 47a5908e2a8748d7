// WasiContext: builds the run's state from a WasiConfig (stdio fds, preopened directories) and
// lists the wasi_snapshot_preview1 functions, each signature derived from its body's parameter types.
#include "wasi/host_call.hpp"
#include "wasi/state.hpp"
#include "wasi/wasi.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <vector>

namespace sprawling::wasi {

WasiContext::WasiContext(std::unique_ptr<WasiState> state) : state_(std::move(state)) {}
WasiContext::~WasiContext() = default;

std::expected<std::unique_ptr<WasiContext>, WasiSetupError> WasiContext::create(WasiConfig config) {
  if (std::uint64_t{3} + config.preopens.size() > config.max_fds) {
    WasiSetupError error;
    error.kind = WasiSetupError::Kind::TooManyPreopens;
    error.message = std::to_string(config.preopens.size()) + " preopens do not fit a table of " +
                    std::to_string(config.max_fds) + " fds";
    return std::unexpected(std::move(error));
  }
  auto state = std::make_unique<WasiState>(config);
  state->args = std::move(config.args);
  state->env = std::move(config.env);
  state->stdin_bytes = std::move(config.stdin_bytes);
  state->stdin_host_fd = config.stdin_fd.value_or(-1);
  state->out.cap = config.stdout_cap;
  state->out.sink = std::move(config.stdout_sink);
  state->out.keep = !state->out.sink || config.capture_streamed_output;
  state->err.cap = config.stderr_cap;
  state->err.sink = std::move(config.stderr_sink);
  state->err.keep = !state->err.sink || config.capture_streamed_output;
  state->deterministic = config.deterministic;
  state->clock_step_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(config.clock_step.count(), 0));
  state->realtime_start_ns = config.deterministic_realtime_start_ns;
  state->deadline = config.deadline;
  state->hostcall_copy_limit = config.hostcall_copy_limit;
  state->disk_quota = config.max_disk_write_bytes;
  seed_deterministic(state->rng, config.random_seed);

  auto table_full = [&] {
    WasiSetupError error;
    error.kind = WasiSetupError::Kind::TooManyPreopens;
    error.message = "the fd table is full before the guest starts";
    return std::unexpected(std::move(error));
  };
  for (FdKind kind : {FdKind::Stdin, FdKind::Stdout, FdKind::Stderr}) {
    FdEntry entry;
    entry.kind = kind;
    if (!state->fds.insert(std::move(entry))) return table_full();
  }

  for (std::size_t i = 0; i < config.preopens.size(); ++i) {
    const Preopen& preopen = config.preopens[i];
    auto setup_error = [&](WasiSetupError::Kind kind, int os_errno, std::string why) {
      WasiSetupError error;
      error.kind = kind;
      error.preopen_index = i;
      error.host = preopen.host;
      error.guest = preopen.guest;
      error.os_errno = os_errno;
      error.message = "mount " + std::to_string(i) + " (" + preopen.host.string() + " -> " + preopen.guest +
                      "): " + std::move(why);
      return std::unexpected(std::move(error));
    };
    if (preopen.guest.empty() || preopen.guest.find('\0') != std::string::npos) {
      return setup_error(WasiSetupError::Kind::PreopenGuestName, 0, "the guest name is empty or holds a NUL byte");
    }
    // The host path is the embedder's, trusted: a plain open. Everything below it is reached
    // only through resolve_beneath relative to this fd.
    const int fd = ::open(preopen.host.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      if (error == ENOTDIR) {
        return setup_error(WasiSetupError::Kind::PreopenNotDirectory, error, "not a directory");
      }
      return setup_error(WasiSetupError::Kind::PreopenOpen, error, std::strerror(error));
    }
    FdEntry entry;
    entry.kind = FdKind::Directory;
    entry.host = UniqueFd(fd);
    entry.mount_writable = preopen.writable;
    entry.readable = true;
    entry.preopen_name = preopen.guest;
    if (!state->fds.insert(std::move(entry))) return table_full();
  }
  return std::unique_ptr<WasiContext>(new WasiContext(std::move(state)));
}

const std::vector<std::uint8_t>& WasiContext::stdout_bytes() const noexcept { return state_->out.bytes; }
const std::vector<std::uint8_t>& WasiContext::stderr_bytes() const noexcept { return state_->err.bytes; }
std::vector<std::uint8_t> WasiContext::take_stdout() noexcept { return std::exchange(state_->out.bytes, {}); }
std::vector<std::uint8_t> WasiContext::take_stderr() noexcept { return std::exchange(state_->err.bytes, {}); }
bool WasiContext::stdout_truncated() const noexcept { return state_->out.truncated; }
bool WasiContext::stderr_truncated() const noexcept { return state_->err.truncated; }
std::size_t WasiContext::open_fd_count() const noexcept { return state_->fds.size(); }
std::uint64_t WasiContext::disk_write_bytes() const noexcept {
  return state_->disk_written;
}
void WasiContext::set_fuel_charger(std::function<bool(std::uint64_t)> charge) {
  state_->charge_fuel = std::move(charge);
}

namespace {

// One entry of the table: the name, and the body whose parameter types give the signature.
template <auto F>
wasm::HostFunctionDef def(std::string_view name) {
  std::vector<wasm::ValType> results{wasm::ValType::I32};  // the errno
  if (name == "proc_exit") results.clear();                // proc_exit returns nothing: it never returns
  return wasm::HostFunctionDef{"wasi_snapshot_preview1", name,
                               wasm::FuncType{BodyTraits<decltype(F)>::params(), std::move(results)}, thunk<F>};
}

}  // namespace

std::span<const wasm::HostFunctionDef> WasiContext::functions() {
  static const std::vector<wasm::HostFunctionDef> table{
      def<&fn::args_get>("args_get"),
      def<&fn::args_sizes_get>("args_sizes_get"),
      def<&fn::environ_get>("environ_get"),
      def<&fn::environ_sizes_get>("environ_sizes_get"),
      def<&fn::clock_res_get>("clock_res_get"),
      def<&fn::clock_time_get>("clock_time_get"),
      def<&fn::fd_advise>("fd_advise"),
      def<&fn::fd_allocate>("fd_allocate"),
      def<&fn::fd_close>("fd_close"),
      def<&fn::fd_datasync>("fd_datasync"),
      def<&fn::fd_fdstat_get>("fd_fdstat_get"),
      def<&fn::fd_fdstat_set_flags>("fd_fdstat_set_flags"),
      def<&fn::fd_fdstat_set_rights>("fd_fdstat_set_rights"),
      def<&fn::fd_filestat_get>("fd_filestat_get"),
      def<&fn::fd_filestat_set_size>("fd_filestat_set_size"),
      def<&fn::fd_filestat_set_times>("fd_filestat_set_times"),
      def<&fn::fd_pread>("fd_pread"),
      def<&fn::fd_prestat_get>("fd_prestat_get"),
      def<&fn::fd_prestat_dir_name>("fd_prestat_dir_name"),
      def<&fn::fd_pwrite>("fd_pwrite"),
      def<&fn::fd_read>("fd_read"),
      def<&fn::fd_readdir>("fd_readdir"),
      def<&fn::fd_renumber>("fd_renumber"),
      def<&fn::fd_seek>("fd_seek"),
      def<&fn::fd_sync>("fd_sync"),
      def<&fn::fd_tell>("fd_tell"),
      def<&fn::fd_write>("fd_write"),
      def<&fn::path_create_directory>("path_create_directory"),
      def<&fn::path_filestat_get>("path_filestat_get"),
      def<&fn::path_filestat_set_times>("path_filestat_set_times"),
      def<&fn::path_link>("path_link"),
      def<&fn::path_open>("path_open"),
      def<&fn::path_readlink>("path_readlink"),
      def<&fn::path_remove_directory>("path_remove_directory"),
      def<&fn::path_rename>("path_rename"),
      def<&fn::path_symlink>("path_symlink"),
      def<&fn::path_unlink_file>("path_unlink_file"),
      def<&fn::poll_oneoff>("poll_oneoff"),
      def<&fn::proc_exit>("proc_exit"),
      def<&fn::proc_raise>("proc_raise"),
      def<&fn::random_get>("random_get"),
      def<&fn::sched_yield>("sched_yield"),
      def<&fn::sock_accept>("sock_accept"),
      def<&fn::sock_recv>("sock_recv"),
      def<&fn::sock_send>("sock_send"),
      def<&fn::sock_shutdown>("sock_shutdown"),
  };
  return table;
}

}  // namespace sprawling::wasi
