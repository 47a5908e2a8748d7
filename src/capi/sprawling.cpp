// The C API (include/sprawling/sprawling.h) over the C++ seam: opaque handles that own seam
// values, and a run that turns std::expected<SandboxOutcome, AxError> into an outcome or an error.
// No exception crosses the C boundary: allocation failures become SPRAWLING_ENOMEM.
#include <sprawling/sprawling.h>

#include <sprawling/runtime/sandbox.hpp>

// SandboxConfig lives here; WasmSandbox itself is only constructed in builds with the engine.
#include <sprawling/runtime/wasm_sandbox.hpp>

#if SPRAWLING_WITH_ENGINE
#include "wasm/runtime/cancel.hpp"
#endif

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rt = sprawling::runtime;

#ifndef SPRAWLING_VERSION_STRING
#error "SPRAWLING_VERSION_STRING must be defined by the build"
#endif


struct sprawling_config {
  // SandboxConfig's defaults, tier_up included: off, so SPRAWLING_TIER_AUTO is "cached machine
  // code, else the interpreter" unless sprawling_config_set_tier_up turns it on (the embedder
  // then owes sprawling_stop_tier_up before exit).
  rt::SandboxConfig config;
};

struct sprawling_sandbox {
  std::unique_ptr<rt::Sandbox> sandbox;
  std::mutex mutex;  // the seam runs one job at a time per instance
};

struct sprawling_cancel {
  std::atomic<bool> requested{false};
};

struct sprawling_job {
  rt::SandboxJob job{.wasm = {}, .argv = {}, .env = {}, .stdin_bytes = {}, .mounts = {},
                     .fuel = rt::Fuel{std::numeric_limits<std::uint64_t>::max()}};
  sprawling_cancel* cancel = nullptr;  // borrowed
  bool has_module = false;
  bool module_is_bytes = false;
  std::vector<std::uint8_t> module_bytes;
};

struct sprawling_outcome {
  rt::SandboxOutcome outcome;
  std::string trap_message;  // NUL-terminated copy for the accessor
  bool cancelled = false;
};

struct sprawling_error {
  rt::AxError error;
  std::vector<std::pair<std::string, std::string>> detail;  // the map, indexable
};

namespace {

// Runs `body`, mapping an allocation failure to SPRAWLING_ENOMEM.
template <typename Body>
sprawling_status guarded(Body&& body) noexcept {
  try {
    return std::forward<Body>(body)();
  } catch (const std::bad_alloc&) {
    return SPRAWLING_ENOMEM;
  } catch (...) {
    return SPRAWLING_EINVAL;  // a length_error from an absurd size: the value is outside its range
  }
}

std::function<void(std::span<const std::uint8_t>)> sink_of(sprawling_output_sink sink, void* user) {
  if (sink == nullptr) return {};
  return [sink, user](std::span<const std::uint8_t> bytes) { sink(user, bytes.data(), bytes.size()); };
}

// A module given as bytes lives in an anonymous memory file the seam opens by its /proc path
// (the seam takes a path); nothing touches the disk and nothing is left behind on a crash.
class MemoryFile {
 public:
  MemoryFile() = default;
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Empty string on success, else what failed.
  std::string open(const std::vector<std::uint8_t>& bytes) {
    fd_ = ::memfd_create("sprawling-module", MFD_CLOEXEC);
    if (fd_ < 0) return std::string("memfd_create: ") + std::strerror(errno);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return std::string("writing the module bytes to a memory file: ") + std::strerror(errno);
      }
      done += static_cast<std::size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
    return {};
  }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

void replace_all(std::string& text, const std::string& from, std::string_view to) {
  if (from.empty()) return;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// The tiers, one row each, in sprawling_tier order: a new tier is one row here and one enum
// value in sprawling.h (the Python module lists the tiers through sprawling_tier_name).
struct TierRow {
  sprawling_tier c;
  rt::ExecutionTier tier;
  const char* name;
};
constexpr std::array kTiers{
    TierRow{SPRAWLING_TIER_INTERPRET, rt::ExecutionTier::Interpret, "interpret"},
    TierRow{SPRAWLING_TIER_COMPILE, rt::ExecutionTier::Compile, "compile"},
    TierRow{SPRAWLING_TIER_AUTO, rt::ExecutionTier::Auto, "auto"},
};

const TierRow* tier_row(sprawling_tier tier) {
  for (const auto& row : kTiers) {
    if (row.c == tier) return &row;
  }
  return nullptr;
}

// Every seam tier has a row: a tier added to rt::ExecutionTier is a -Wswitch error here until it
// gets its case, its row above and its place in the static_assert.
[[maybe_unused]] constexpr bool every_tier_has_a_row(rt::ExecutionTier tier) {
  switch (tier) {
    case rt::ExecutionTier::Interpret:
    case rt::ExecutionTier::Compile:
    case rt::ExecutionTier::Auto:
      return std::ranges::any_of(kTiers, [tier](const TierRow& row) { return row.tier == tier; });
  }
  return false;
}
static_assert(every_tier_has_a_row(rt::ExecutionTier::Interpret) && every_tier_has_a_row(rt::ExecutionTier::Compile) &&
              every_tier_has_a_row(rt::ExecutionTier::Auto));

rt::AxError job_error(std::string message, std::map<std::string, std::string> detail = {}) {
  return rt::AxError{.code = rt::ErrorCode::InvalidJob, .message = std::move(message), .alternative = {},
                     .detail = std::move(detail)};
}

sprawling_error* make_error(rt::AxError error) {
  auto* out = new sprawling_error{.error = std::move(error), .detail = {}};
  out->detail.assign(out->error.detail.begin(), out->error.detail.end());
  return out;
}

sprawling_status run_job(sprawling_sandbox& sandbox, const sprawling_job& job, sprawling_outcome** outcome,
                         sprawling_error** error) {
  auto fail = [&](rt::AxError e) {
    if (error != nullptr) *error = make_error(std::move(e));
    return SPRAWLING_ERROR;
  };
  if (!job.has_module) {
    return fail(job_error("the job has no module (sprawling_job_set_module_path or sprawling_job_set_module_bytes)"));
  }
  // The seam would start such a job cold without a word; a count the job cannot meet is the
  // caller's mistake, said as one.
  if (job.job.snapshot.enabled && job.job.snapshot.init_mounts > job.job.mounts.size()) {
    return fail(job_error("the job's snapshot init_mounts (" + std::to_string(job.job.snapshot.init_mounts) +
                              ") is more than its mounts (" + std::to_string(job.job.mounts.size()) +
                              "); sprawling_job_set_snapshot counts the first mounts the initialisation sees",
                          {{"init_mounts", std::to_string(job.job.snapshot.init_mounts)}}));
  }
  if (const auto fd = job.job.stdin_fd; fd && ::fcntl(*fd, F_GETFD) < 0) {
    return fail(job_error("the job's stdin fd " + std::to_string(*fd) +
                              " is not open (sprawling_job_set_stdin_fd borrows it: keep it open until sprawling_run returns)",
                          {{"stdin_fd", std::to_string(*fd)}}));
  }
  const rt::SandboxJob* to_run = &job.job;
  rt::SandboxJob with_path;
  MemoryFile memory_file;
  if (job.module_is_bytes) {
    if (auto problem = memory_file.open(job.module_bytes); !problem.empty()) {
      return fail(rt::AxError{.code = rt::ErrorCode::SandboxHost, .message = problem, .alternative = {}, .detail = {}});
    }
    with_path = job.job;
    with_path.wasm = memory_file.path();
    to_run = &with_path;
  }
  std::expected<rt::SandboxOutcome, rt::AxError> result;
  {
    std::lock_guard lock(sandbox.mutex);
#if SPRAWLING_WITH_ENGINE
    // The engine reads the flag on this thread, at its deadline checks (wasm/runtime/cancel.hpp).
    struct Installed {
      const std::atomic<bool>* outer;
      ~Installed() { sprawling::wasm::set_thread_cancel_flag(outer); }
    } installed{sprawling::wasm::set_thread_cancel_flag(job.cancel != nullptr ? &job.cancel->requested : nullptr)};
#endif
    result = sandbox.sandbox->run(*to_run);
  }
  if (!result) {
    rt::AxError e = std::move(result.error());
    if (job.module_is_bytes) {
      // Name the module as the caller knows it, not by the memory file's /proc path.
      replace_all(e.message, "'" + memory_file.path() + "'", "the module bytes");
      replace_all(e.message, memory_file.path(), "the module bytes");
      for (auto& [key, value] : e.detail) replace_all(value, memory_file.path(), "<module bytes>");
    }
    return fail(std::move(e));
  }
  auto* out = new sprawling_outcome{.outcome = std::move(*result), .trap_message = {}, .cancelled = false};
  if (auto* trap = std::get_if<rt::Trap>(&out->outcome.exit)) {
    // The engine ends a cancelled run as it ends one past its deadline: with the flag set, a
    // deadline trap is the cancel's (a deadline passed at the same moment is not told apart).
    if (job.cancel != nullptr && job.cancel->requested.load() && trap->message == "deadline exceeded") {
      trap->message = "cancelled";
      out->cancelled = true;
    }
    out->trap_message = trap->message;
  }
  *outcome = out;
  return SPRAWLING_OK;
}

// One config field set from C: a new SandboxConfig limit is one line per setter below. A value
// past the field's type (a uint32_t count given as uint64_t) is refused, never cut.
template <auto Field, typename Value>
sprawling_status set_field(sprawling_config* config, Value value) {
  if (config == nullptr) return SPRAWLING_EINVAL;
  using Target = std::remove_cvref_t<decltype(config->config.*Field)>;
  if constexpr (std::is_integral_v<Target> && !std::is_same_v<Target, bool>) {
    if (!std::in_range<Target>(value)) return SPRAWLING_EINVAL;
    config->config.*Field = static_cast<Target>(value);
  } else {
    config->config.*Field = value;
  }
  return SPRAWLING_OK;
}

const rt::RunStats* stats_of(const sprawling_outcome* outcome) {
  return outcome != nullptr && outcome->outcome.stats ? &*outcome->outcome.stats : nullptr;
}

const uint8_t* bytes_of(const std::vector<std::uint8_t>& bytes, size_t* len) {
  if (len != nullptr) *len = bytes.size();
  return bytes.empty() ? nullptr : bytes.data();
}

}  // namespace

extern "C" {

const char* sprawling_version(void) { return SPRAWLING_VERSION_STRING; }

int sprawling_engine_available(void) { return rt::engine_available() ? 1 : 0; }

const char* sprawling_status_name(sprawling_status status) {
  switch (status) {
    case SPRAWLING_OK: return "SPRAWLING_OK";
    case SPRAWLING_ERROR: return "SPRAWLING_ERROR";
    case SPRAWLING_EINVAL: return "SPRAWLING_EINVAL";
    case SPRAWLING_ENOMEM: return "SPRAWLING_ENOMEM";
  }
  return "SPRAWLING_UNKNOWN";
}

const char* sprawling_tier_name(sprawling_tier tier) {
  const TierRow* row = tier_row(tier);
  return row != nullptr ? row->name : nullptr;
}

int sprawling_compiled_tier_available(void) {
#if SPRAWLING_WITH_ENGINE
  return rt::wasm_sandbox_has_compiled_tier() ? 1 : 0;
#else
  return 0;
#endif
}

// The seam's functions live in the engine; a build without it has no tier-up to stop.
void sprawling_stop_tier_up(void) {
#if SPRAWLING_WITH_ENGINE
  rt::wasm_sandbox_stop_tier_up();
#endif
}

int sprawling_tier_up_busy(void) {
#if SPRAWLING_WITH_ENGINE
  return rt::wasm_sandbox_tier_up_busy() ? 1 : 0;
#else
  return 0;
#endif
}

// The features a config can turn off, one row each, by their `sprawl run -W` names.
struct FeatureRow {
  const char* name;
  bool rt::SandboxConfig::*field;
};
constexpr std::array kFeatures{
    FeatureRow{"simd", &rt::SandboxConfig::simd},
    FeatureRow{"tail-call", &rt::SandboxConfig::tail_call},
    FeatureRow{"exceptions", &rt::SandboxConfig::exceptions},
    FeatureRow{"function-references", &rt::SandboxConfig::function_references},
    FeatureRow{"gc", &rt::SandboxConfig::gc},
    FeatureRow{"extended-const", &rt::SandboxConfig::extended_const},
    FeatureRow{"relaxed-simd", &rt::SandboxConfig::relaxed_simd},
    FeatureRow{"multi-memory", &rt::SandboxConfig::multi_memory},
    FeatureRow{"memory64", &rt::SandboxConfig::memory64},
};

const char* sprawling_feature_name(size_t index) {
  return index < kFeatures.size() ? kFeatures[index].name : nullptr;
}

const char* sprawling_exit_kind_name(sprawling_exit_kind kind) {
  switch (kind) {
    case SPRAWLING_EXIT_SUCCESS: return "success";
    case SPRAWLING_EXIT_FAILURE: return "failure";
    case SPRAWLING_EXIT_FUEL_EXHAUSTED: return "fuel_exhausted";
    case SPRAWLING_EXIT_TRAP: return "trap";
  }
  return "unknown";
}

// ---- config ----

sprawling_status sprawling_config_new(sprawling_config** out) {
  if (out == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    *out = new sprawling_config{};
    return SPRAWLING_OK;
  });
}

void sprawling_config_free(sprawling_config* config) { delete config; }

sprawling_status sprawling_config_set_max_memory_bytes(sprawling_config* config, uint64_t bytes) {
  return set_field<&rt::SandboxConfig::max_memory_bytes>(config, bytes);
}

sprawling_status sprawling_config_set_timeout_ns(sprawling_config* config, uint64_t nanoseconds) {
  using Rep = std::chrono::nanoseconds::rep;
  if (config == nullptr || nanoseconds == 0 || nanoseconds > static_cast<std::uint64_t>(std::numeric_limits<Rep>::max())) {
    return SPRAWLING_EINVAL;
  }
  config->config.timeout = std::chrono::nanoseconds(static_cast<Rep>(nanoseconds));
  return SPRAWLING_OK;
}

sprawling_status sprawling_config_clear_timeout(sprawling_config* config) {
  if (config == nullptr) return SPRAWLING_EINVAL;
  config->config.timeout.reset();
  return SPRAWLING_OK;
}

sprawling_status sprawling_config_set_max_stdout_bytes(sprawling_config* config, uint64_t bytes) {
  return set_field<&rt::SandboxConfig::max_stdout_bytes>(config, bytes);
}

sprawling_status sprawling_config_set_max_stderr_bytes(sprawling_config* config, uint64_t bytes) {
  return set_field<&rt::SandboxConfig::max_stderr_bytes>(config, bytes);
}

sprawling_status sprawling_config_set_meter_fuel(sprawling_config* config, int enabled) {
  return set_field<&rt::SandboxConfig::meter_fuel>(config, enabled != 0);
}

sprawling_status sprawling_config_set_deterministic(sprawling_config* config, int enabled) {
  return set_field<&rt::SandboxConfig::deterministic>(config, enabled != 0);
}

sprawling_status sprawling_config_set_nan_canonicalization(sprawling_config* config, int enabled) {
  return set_field<&rt::SandboxConfig::nan_canonicalization>(config, enabled != 0);
}

sprawling_status sprawling_config_set_random_seed(sprawling_config* config, uint64_t seed) {
  return set_field<&rt::SandboxConfig::random_seed>(config, seed);
}

sprawling_status sprawling_config_set_hostcall_copy_limit(sprawling_config* config, uint64_t bytes) {
  return set_field<&rt::SandboxConfig::hostcall_copy_limit>(config, bytes);
}

sprawling_status sprawling_config_set_max_table_elements(sprawling_config* config, uint64_t elements) {
  return set_field<&rt::SandboxConfig::max_table_elements>(config, elements);
}

sprawling_status sprawling_config_set_max_tables(sprawling_config* config, uint64_t tables) {
  return set_field<&rt::SandboxConfig::max_tables>(config, tables);
}

sprawling_status sprawling_config_set_max_memories(sprawling_config* config, uint64_t memories) {
  return set_field<&rt::SandboxConfig::max_memories>(config, memories);
}

sprawling_status sprawling_config_set_max_store_bytes(sprawling_config* config, uint64_t bytes) {
  return set_field<&rt::SandboxConfig::max_store_bytes>(config, std::optional<std::uint64_t>(bytes));
}

sprawling_status sprawling_config_clear_max_store_bytes(sprawling_config* config) {
  return set_field<&rt::SandboxConfig::max_store_bytes>(config, std::optional<std::uint64_t>());
}

sprawling_status sprawling_config_set_max_disk_write_bytes(sprawling_config* config, uint64_t bytes) {
  return set_field<&rt::SandboxConfig::max_disk_write_bytes>(config, bytes);
}

sprawling_status sprawling_config_set_tier(sprawling_config* config, sprawling_tier tier) {
  const TierRow* row = tier_row(tier);
  if (row == nullptr) return SPRAWLING_EINVAL;
  return set_field<&rt::SandboxConfig::tier>(config, row->tier);
}

sprawling_status sprawling_config_set_tier_up(sprawling_config* config, int enabled) {
  return set_field<&rt::SandboxConfig::tier_up>(config, enabled != 0);
}

sprawling_status sprawling_config_set_snapshot_dir(sprawling_config* config, const char* dir) {
  if (config == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    config->config.snapshot_dir = dir != nullptr ? std::filesystem::path(dir) : std::filesystem::path();
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_config_set_code_cache_dir(sprawling_config* config, const char* dir) {
  if (config == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    config->config.code_cache_dir = dir != nullptr ? std::filesystem::path(dir) : std::filesystem::path();
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_config_set_code_cache_max_bytes(sprawling_config* config, uint64_t bytes) {
  if (bytes == 0) return SPRAWLING_EINVAL;
  return set_field<&rt::SandboxConfig::code_cache_max_bytes>(config, bytes);
}

sprawling_status sprawling_config_set_compile_memory_bytes(sprawling_config* config, uint64_t bytes) {
  return set_field<&rt::SandboxConfig::compile_memory_bytes>(config, bytes);
}

sprawling_status sprawling_config_set_feature(sprawling_config* config, const char* name, int enabled) {
  if (config == nullptr || name == nullptr) return SPRAWLING_EINVAL;
  for (const auto& row : kFeatures) {
    if (std::strcmp(row.name, name) == 0) {
      config->config.*row.field = enabled != 0;
      return SPRAWLING_OK;
    }
  }
  return SPRAWLING_EINVAL;
}

sprawling_status sprawling_config_set_stdout_sink(sprawling_config* config, sprawling_output_sink sink, void* user) {
  if (config == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    config->config.stdout_sink = sink_of(sink, user);
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_config_set_stderr_sink(sprawling_config* config, sprawling_output_sink sink, void* user) {
  if (config == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    config->config.stderr_sink = sink_of(sink, user);
    return SPRAWLING_OK;
  });
}

// ---- sandbox ----

sprawling_status sprawling_sandbox_new(const sprawling_config* config, sprawling_sandbox** out) {
  if (out == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    auto sandbox = std::make_unique<sprawling_sandbox>();
#if SPRAWLING_WITH_ENGINE
    sandbox->sandbox = std::make_unique<rt::WasmSandbox>(config != nullptr ? config->config : rt::SandboxConfig{});
#else
    (void)config;
    sandbox->sandbox = rt::make_sandbox();
#endif
    *out = sandbox.release();
    return SPRAWLING_OK;
  });
}

void sprawling_sandbox_free(sprawling_sandbox* sandbox) { delete sandbox; }

// ---- job ----

sprawling_status sprawling_job_new(sprawling_job** out) {
  if (out == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    *out = new sprawling_job{};
    return SPRAWLING_OK;
  });
}

void sprawling_job_free(sprawling_job* job) { delete job; }

sprawling_status sprawling_job_set_module_path(sprawling_job* job, const char* path) {
  if (job == nullptr || path == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    job->job.wasm = path;
    job->module_bytes.clear();
    job->module_bytes.shrink_to_fit();
    job->module_is_bytes = false;
    job->has_module = true;
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_job_set_module_bytes(sprawling_job* job, const uint8_t* bytes, size_t len) {
  if (job == nullptr || (bytes == nullptr && len != 0)) return SPRAWLING_EINVAL;
  return guarded([&] {
    std::vector<std::uint8_t> copy(bytes, bytes + len);
    job->module_bytes = std::move(copy);
    job->job.wasm.clear();
    job->module_is_bytes = true;
    job->has_module = true;
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_job_add_arg(sprawling_job* job, const char* arg, size_t len) {
  if (job == nullptr || arg == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    job->job.argv.emplace_back(arg, len == SPRAWLING_NUL_TERMINATED ? std::strlen(arg) : len);
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_job_add_env(sprawling_job* job, const char* key, size_t key_len, const char* value,
                                       size_t value_len) {
  if (job == nullptr || key == nullptr || value == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    std::string k(key, key_len == SPRAWLING_NUL_TERMINATED ? std::strlen(key) : key_len);
    std::string v(value, value_len == SPRAWLING_NUL_TERMINATED ? std::strlen(value) : value_len);
    job->job.env.emplace_back(std::move(k), std::move(v));
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_job_set_stdin(sprawling_job* job, const uint8_t* bytes, size_t len) {
  if (job == nullptr || (bytes == nullptr && len != 0)) return SPRAWLING_EINVAL;
  return guarded([&] {
    job->job.stdin_bytes.assign(bytes, bytes + len);
    job->job.stdin_fd.reset();
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_job_set_stdin_fd(sprawling_job* job, int fd) {
  if (job == nullptr || fd < 0 || ::fcntl(fd, F_GETFD) < 0) return SPRAWLING_EINVAL;
  job->job.stdin_bytes.clear();
  job->job.stdin_bytes.shrink_to_fit();
  job->job.stdin_fd = fd;
  return SPRAWLING_OK;
}

sprawling_status sprawling_job_add_mount(sprawling_job* job, const char* host, const char* guest, int writable) {
  if (job == nullptr || host == nullptr || guest == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    job->job.mounts.push_back(rt::Mount{.host = host, .guest = guest, .writable = writable != 0});
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_job_set_fuel(sprawling_job* job, uint64_t fuel) {
  if (job == nullptr) return SPRAWLING_EINVAL;
  job->job.fuel = rt::Fuel{fuel};
  return SPRAWLING_OK;
}

sprawling_status sprawling_job_set_snapshot(sprawling_job* job, int enabled, size_t init_mounts) {
  if (job == nullptr) return SPRAWLING_EINVAL;
  job->job.snapshot.enabled = enabled != 0;
  job->job.snapshot.init_mounts = init_mounts;
  return SPRAWLING_OK;
}

sprawling_status sprawling_job_add_training_arg(sprawling_job* job, const char* arg, size_t len) {
  if (job == nullptr || arg == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    job->job.snapshot.training_args.emplace_back(arg, len == SPRAWLING_NUL_TERMINATED ? std::strlen(arg) : len);
    return SPRAWLING_OK;
  });
}

sprawling_status sprawling_job_set_cancel(sprawling_job* job, sprawling_cancel* cancel) {
  if (job == nullptr) return SPRAWLING_EINVAL;
  job->cancel = cancel;
  return SPRAWLING_OK;
}

// ---- cancel ----

sprawling_status sprawling_cancel_new(sprawling_cancel** out) {
  if (out == nullptr) return SPRAWLING_EINVAL;
  return guarded([&] {
    *out = new sprawling_cancel{};
    return SPRAWLING_OK;
  });
}

void sprawling_cancel_free(sprawling_cancel* cancel) { delete cancel; }

void sprawling_cancel_request(sprawling_cancel* cancel) {
  if (cancel != nullptr) cancel->requested.store(true);
}

int sprawling_cancel_requested(const sprawling_cancel* cancel) {
  return cancel != nullptr && cancel->requested.load() ? 1 : 0;
}

// ---- precompile ----

sprawling_status sprawling_precompile(const sprawling_config* config, const char* path, int metered, int unmetered,
                                      size_t* functions, size_t* compiled, sprawling_error** error) {
  if (config == nullptr || path == nullptr || *path == '\0' || (metered == 0 && unmetered == 0)) return SPRAWLING_EINVAL;
  if (error != nullptr) *error = nullptr;
  return guarded([&] {
#if SPRAWLING_WITH_ENGINE
    auto entries = rt::precompile_module(path, config->config, metered != 0, unmetered != 0);
    if (!entries) {
      if (error != nullptr) *error = make_error(std::move(entries.error()));
      return SPRAWLING_ERROR;
    }
    std::size_t total = 0;
    std::size_t with_code = 0;
    for (const auto& entry : *entries) {
      total += entry.functions;
      with_code += entry.compiled;
    }
    if (functions != nullptr) *functions = total;
    if (compiled != nullptr) *compiled = with_code;
    return SPRAWLING_OK;
#else
    (void)functions;
    (void)compiled;
    if (error != nullptr) {
      *error = make_error(rt::AxError{.code = rt::ErrorCode::ToolUnavailable,
                                      .message = "this library was built without the engine", .alternative = {},
                                      .detail = {}});
    }
    return SPRAWLING_ERROR;
#endif
  });
}

// ---- run ----

sprawling_status sprawling_run(sprawling_sandbox* sandbox, const sprawling_job* job, sprawling_outcome** outcome,
                               sprawling_error** error) {
  if (sandbox == nullptr || job == nullptr || outcome == nullptr) return SPRAWLING_EINVAL;
  *outcome = nullptr;
  if (error != nullptr) *error = nullptr;
  try {
    return run_job(*sandbox, *job, outcome, error);
  } catch (const std::bad_alloc&) {
    return SPRAWLING_ENOMEM;
  } catch (const std::exception& e) {
    // The seam reports failures as values; an exception out of it is a host fault, said as one.
    if (error != nullptr) {
      try {
        *error = make_error(rt::AxError{.code = rt::ErrorCode::SandboxHost,
                                        .message = std::string("the host failed while running the job: ") + e.what(),
                                        .alternative = {},
                                        .detail = {}});
      } catch (const std::bad_alloc&) {
        return SPRAWLING_ENOMEM;
      }
    }
    return SPRAWLING_ERROR;
  }
}

// ---- outcome ----

void sprawling_outcome_free(sprawling_outcome* outcome) { delete outcome; }

sprawling_exit_kind sprawling_outcome_exit_kind(const sprawling_outcome* outcome) {
  if (outcome == nullptr) return SPRAWLING_EXIT_SUCCESS;
  return std::visit(
      [](const auto& exit) {
        using T = std::decay_t<decltype(exit)>;
        if constexpr (std::is_same_v<T, rt::Failure>) return SPRAWLING_EXIT_FAILURE;
        else if constexpr (std::is_same_v<T, rt::FuelExhausted>) return SPRAWLING_EXIT_FUEL_EXHAUSTED;
        else if constexpr (std::is_same_v<T, rt::Trap>) return SPRAWLING_EXIT_TRAP;
        else return SPRAWLING_EXIT_SUCCESS;
      },
      outcome->outcome.exit);
}

uint64_t sprawling_outcome_exit_code(const sprawling_outcome* outcome) {
  if (outcome == nullptr) return 0;
  const auto* failure = std::get_if<rt::Failure>(&outcome->outcome.exit);
  return failure != nullptr ? failure->code : 0;
}

const char* sprawling_outcome_trap_message(const sprawling_outcome* outcome) {
  if (outcome == nullptr || !std::holds_alternative<rt::Trap>(outcome->outcome.exit)) return nullptr;
  return outcome->trap_message.c_str();
}

const uint8_t* sprawling_outcome_stdout(const sprawling_outcome* outcome, size_t* len) {
  if (outcome == nullptr) {
    if (len != nullptr) *len = 0;
    return nullptr;
  }
  return bytes_of(outcome->outcome.stdout_bytes, len);
}

const uint8_t* sprawling_outcome_stderr(const sprawling_outcome* outcome, size_t* len) {
  if (outcome == nullptr) {
    if (len != nullptr) *len = 0;
    return nullptr;
  }
  return bytes_of(outcome->outcome.stderr_bytes, len);
}

uint64_t sprawling_outcome_fuel_consumed(const sprawling_outcome* outcome) {
  const auto* stats = stats_of(outcome);
  return stats != nullptr ? stats->fuel_consumed : 0;
}

uint64_t sprawling_outcome_wall_time_ns(const sprawling_outcome* outcome) {
  const auto* stats = stats_of(outcome);
  return stats != nullptr && stats->wall_time.count() > 0 ? static_cast<uint64_t>(stats->wall_time.count()) : 0;
}

uint64_t sprawling_outcome_peak_memory_bytes(const sprawling_outcome* outcome) {
  const auto* stats = stats_of(outcome);
  return stats != nullptr ? stats->peak_memory_bytes : 0;
}

int sprawling_outcome_stdout_truncated(const sprawling_outcome* outcome) {
  const auto* stats = stats_of(outcome);
  return stats != nullptr && stats->stdout_truncated ? 1 : 0;
}

int sprawling_outcome_stderr_truncated(const sprawling_outcome* outcome) {
  const auto* stats = stats_of(outcome);
  return stats != nullptr && stats->stderr_truncated ? 1 : 0;
}

uint64_t sprawling_outcome_disk_write_bytes(const sprawling_outcome* outcome) {
  const auto* stats = stats_of(outcome);
  return stats != nullptr ? stats->disk_write_bytes : 0;
}

int sprawling_outcome_from_snapshot(const sprawling_outcome* outcome) {
  const auto* stats = stats_of(outcome);
  return stats != nullptr && stats->from_snapshot ? 1 : 0;
}

int sprawling_outcome_cancelled(const sprawling_outcome* outcome) {
  return outcome != nullptr && outcome->cancelled ? 1 : 0;
}

// ---- error ----

void sprawling_error_free(sprawling_error* error) { delete error; }

const char* sprawling_error_code(const sprawling_error* error) {
  if (error == nullptr) return nullptr;
  // name() returns views of string literals: NUL-terminated, static storage.
  return rt::name(error->error.code).data();
}

const char* sprawling_error_message(const sprawling_error* error) {
  return error != nullptr ? error->error.message.c_str() : nullptr;
}

const char* sprawling_error_alternative(const sprawling_error* error) {
  return error != nullptr && error->error.alternative ? error->error.alternative->c_str() : nullptr;
}

size_t sprawling_error_detail_count(const sprawling_error* error) {
  return error != nullptr ? error->detail.size() : 0;
}

const char* sprawling_error_detail_key(const sprawling_error* error, size_t index) {
  return error != nullptr && index < error->detail.size() ? error->detail[index].first.c_str() : nullptr;
}

const char* sprawling_error_detail_value(const sprawling_error* error, size_t index) {
  return error != nullptr && index < error->detail.size() ? error->detail[index].second.c_str() : nullptr;
}

}  // extern "C"
