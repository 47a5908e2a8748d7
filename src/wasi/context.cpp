// WasiContext: builds the run's state from a WasiConfig (stdio fds, preopened directories) and
// lists the wasi_snapshot_preview1 functions with their wasm signatures.
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

std::span<const wasm::HostFunctionDef> WasiContext::functions() {
  using wasm::ValType;
  constexpr ValType I = ValType::I32;
  constexpr ValType J = ValType::I64;
  static const std::vector<wasm::HostFunctionDef> table = [] {
    auto def = [](std::string_view name, std::vector<ValType> params, wasm::HostFn fn) {
      return wasm::HostFunctionDef{"wasi_snapshot_preview1", name, wasm::FuncType{std::move(params), {I}}, fn};
    };
    std::vector<wasm::HostFunctionDef> t;
    t.push_back(def("args_get", {I, I}, thunk<fn::args_get>));
    t.push_back(def("args_sizes_get", {I, I}, thunk<fn::args_sizes_get>));
    t.push_back(def("environ_get", {I, I}, thunk<fn::environ_get>));
    t.push_back(def("environ_sizes_get", {I, I}, thunk<fn::environ_sizes_get>));
    t.push_back(def("clock_res_get", {I, I}, thunk<fn::clock_res_get>));
    t.push_back(def("clock_time_get", {I, J, I}, thunk<fn::clock_time_get>));
    t.push_back(def("fd_advise", {I, J, J, I}, thunk<fn::fd_advise>));
    t.push_back(def("fd_allocate", {I, J, J}, thunk<fn::fd_allocate>));
    t.push_back(def("fd_close", {I}, thunk<fn::fd_close>));
    t.push_back(def("fd_datasync", {I}, thunk<fn::fd_datasync>));
    t.push_back(def("fd_fdstat_get", {I, I}, thunk<fn::fd_fdstat_get>));
    t.push_back(def("fd_fdstat_set_flags", {I, I}, thunk<fn::fd_fdstat_set_flags>));
    t.push_back(def("fd_fdstat_set_rights", {I, J, J}, thunk<fn::fd_fdstat_set_rights>));
    t.push_back(def("fd_filestat_get", {I, I}, thunk<fn::fd_filestat_get>));
    t.push_back(def("fd_filestat_set_size", {I, J}, thunk<fn::fd_filestat_set_size>));
    t.push_back(def("fd_filestat_set_times", {I, J, J, I}, thunk<fn::fd_filestat_set_times>));
    t.push_back(def("fd_pread", {I, I, I, J, I}, thunk<fn::fd_pread>));
    t.push_back(def("fd_prestat_get", {I, I}, thunk<fn::fd_prestat_get>));
    t.push_back(def("fd_prestat_dir_name", {I, I, I}, thunk<fn::fd_prestat_dir_name>));
    t.push_back(def("fd_pwrite", {I, I, I, J, I}, thunk<fn::fd_pwrite>));
    t.push_back(def("fd_read", {I, I, I, I}, thunk<fn::fd_read>));
    t.push_back(def("fd_readdir", {I, I, I, J, I}, thunk<fn::fd_readdir>));
    t.push_back(def("fd_renumber", {I, I}, thunk<fn::fd_renumber>));
    t.push_back(def("fd_seek", {I, J, I, I}, thunk<fn::fd_seek>));
    t.push_back(def("fd_sync", {I}, thunk<fn::fd_sync>));
    t.push_back(def("fd_tell", {I, I}, thunk<fn::fd_tell>));
    t.push_back(def("fd_write", {I, I, I, I}, thunk<fn::fd_write>));
    t.push_back(def("path_create_directory", {I, I, I}, thunk<fn::path_create_directory>));
    t.push_back(def("path_filestat_get", {I, I, I, I, I}, thunk<fn::path_filestat_get>));
    t.push_back(def("path_filestat_set_times", {I, I, I, I, J, J, I}, thunk<fn::path_filestat_set_times>));
    t.push_back(def("path_link", {I, I, I, I, I, I, I}, thunk<fn::path_link>));
    t.push_back(def("path_open", {I, I, I, I, I, J, J, I, I}, thunk<fn::path_open>));
    t.push_back(def("path_readlink", {I, I, I, I, I, I}, thunk<fn::path_readlink>));
    t.push_back(def("path_remove_directory", {I, I, I}, thunk<fn::path_remove_directory>));
    t.push_back(def("path_rename", {I, I, I, I, I, I}, thunk<fn::path_rename>));
    t.push_back(def("path_symlink", {I, I, I, I, I}, thunk<fn::path_symlink>));
    t.push_back(def("path_unlink_file", {I, I, I}, thunk<fn::path_unlink_file>));
    t.push_back(def("poll_oneoff", {I, I, I, I}, thunk<fn::poll_oneoff>));
    wasm::HostFunctionDef exit = def("proc_exit", {I}, thunk<fn::proc_exit>);
    exit.type.results.clear();  // proc_exit returns nothing: it never returns
    t.push_back(std::move(exit));
    t.push_back(def("proc_raise", {I}, thunk<fn::proc_raise>));
    t.push_back(def("random_get", {I, I}, thunk<fn::random_get>));
    t.push_back(def("sched_yield", {}, thunk<fn::sched_yield>));
    t.push_back(def("sock_accept", {I, I, I}, thunk<fn::sock_accept>));
    t.push_back(def("sock_recv", {I, I, I, I, I, I}, thunk<fn::sock_recv>));
    t.push_back(def("sock_send", {I, I, I, I, I}, thunk<fn::sock_send>));
    t.push_back(def("sock_shutdown", {I, I}, thunk<fn::sock_shutdown>));
    return t;
  }();
  return table;
}

}  // namespace sprawling::wasi
