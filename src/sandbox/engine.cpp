// The engine adapter (Rust original: WasmtimeSandbox): loads and caches the module, links the
// WASI host, preopens the mounts, sets the fuel budget and limits, runs _start and classifies
// the ending. The seam file (sandbox.cpp) stays free of engine code.
#include "sandbox/engine.hpp"
#include "sandbox/engine_snapshot.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include "wasi/wasi.hpp"
#include "wasm/runtime.hpp"
#include "wasm/text/wat.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <unordered_map>

namespace sprawling::runtime {

namespace engine {

AxError host_error(std::string message, std::map<std::string, std::string> detail) {
  return AxError{.code = ErrorCode::SandboxHost, .message = std::move(message), .alternative = {},
                 .detail = std::move(detail)};
}

std::string describe_trap(const wasm::Trap& trap) {
  std::string text = trap.message.empty() ? std::string(wasm::trap_message(trap.kind)) : trap.message;
  if (trap.func_index) {
    text += " in function " + std::to_string(*trap.func_index);
    if (!trap.func_name.empty()) text += " `" + trap.func_name + "`";
    char offset[32];
    std::snprintf(offset, sizeof offset, " at offset 0x%zx", trap.offset);
    text += offset;
  }
  return text;
}

std::expected<SandboxOutcome, AxError> classify(RunRecord record) {
  if (!record.stdout_bytes || !record.stderr_bytes) {
    return std::unexpected(host_error("the guest's captured output could not be recovered"));
  }
  if (record.fuel_metered && !record.fuel_consumed) {
    return std::unexpected(host_error("the fuel consumed by the run could not be read back"));
  }
  SandboxOutcome outcome{.stdout_bytes = std::move(*record.stdout_bytes),
                         .stderr_bytes = std::move(*record.stderr_bytes),
                         .exit = Success{},
                         .stats = RunStats{.fuel_consumed = record.fuel_consumed.value_or(0),
                                           .wall_time = record.wall_time,
                                           .peak_memory_bytes = record.peak_memory_bytes,
                                           .stdout_truncated = record.stdout_truncated,
                                           .stderr_truncated = record.stderr_truncated,
                                           .disk_write_bytes = record.disk_write_bytes,
                                           .from_snapshot = record.from_snapshot}};
  if (!record.trap) return outcome;  // _start returned
  const wasm::Trap& trap = *record.trap;
  switch (trap.kind) {
    case wasm::TrapKind::Exit:
      if (trap.exit_code == 0) return outcome;
      if (trap.exit_code < 126) {
        outcome.exit = Failure{trap.exit_code};
        return outcome;
      }
      return std::unexpected(host_error("the guest called proc_exit(" + std::to_string(trap.exit_code) +
                                            "): an exit status outside the WASI range [0, 126)",
                                        {{"exit_code", std::to_string(trap.exit_code)}}));
    case wasm::TrapKind::OutOfFuel:
      outcome.exit = FuelExhausted{};
      return outcome;
    case wasm::TrapKind::None:
      return std::unexpected(host_error("the engine stopped the guest without a reason (engine fault)"));
    case wasm::TrapKind::DeadlineExceeded:
      // In wasm code, in a host call (a poll_oneoff sleep, a blocking read) or before the guest
      // started (compilation): one ending, one wording.
      outcome.exit = Trap{std::string(wasm::trap_message(wasm::TrapKind::DeadlineExceeded))};
      return outcome;
    default:
      outcome.exit = Trap{describe_trap(trap)};
      return outcome;
  }
}

}  // namespace engine

namespace {

constexpr std::string_view kWasiModule = "wasi_snapshot_preview1";

AxError job_error(std::string message, std::map<std::string, std::string> detail = {}) {
  return AxError{.code = ErrorCode::InvalidJob, .message = std::move(message), .alternative = {},
                 .detail = std::move(detail)};
}

AxError module_error(std::string message, std::map<std::string, std::string> detail = {}) {
  return AxError{.code = ErrorCode::InvalidModule, .message = std::move(message), .alternative = {},
                 .detail = std::move(detail)};
}

std::expected<std::vector<std::uint8_t>, AxError> read_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::unexpected(job_error("cannot open the module '" + path.string() + "': " + std::strerror(errno),
                                     {{"path", path.string()}}));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::unexpected(job_error("the module '" + path.string() + "' is not a regular file", {{"path", path.string()}}));
  }
  std::vector<std::uint8_t> bytes;
  bytes.reserve(static_cast<std::size_t>(st.st_size));
  std::uint8_t buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return std::unexpected(job_error("cannot read the module '" + path.string() + "': " + std::strerror(err),
                                       {{"path", path.string()}}));
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  ::close(fd);
  return bytes;
}

// A 64-bit content hash (multiply-xorshift over 8-byte words); equal keys are confirmed by
// comparing the bytes, so collisions cost a comparison, never a wrong module.
std::uint64_t content_hash(std::span<const std::uint8_t> bytes) {
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ bytes.size();
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  }
  for (; i < bytes.size(); ++i) h = (h ^ bytes[i]) * 0x94D049BB133111EBULL;
  return h ^ (h >> 29);
}

// Compiled modules keyed by content (the source bytes, binary or text), shared by every
// WasmSandbox in the process. Bounded by total source bytes; least recently used goes first.
class ModuleCache {
 public:
  std::shared_ptr<const wasm::CompiledModule> find(std::uint64_t hash, std::span<const std::uint8_t> source,
                                                   wasm::Features features) {
    std::lock_guard lock(mutex_);
    for (auto& entry : entries_) {
      if (entry.hash == hash && entry.features == features && std::ranges::equal(entry.source, source)) {
        entry.last_use = ++clock_;
        return entry.module;
      }
    }
    return nullptr;
  }

  void insert(std::uint64_t hash, std::vector<std::uint8_t> source, wasm::Features features,
              std::shared_ptr<const wasm::CompiledModule> module) {
    std::lock_guard lock(mutex_);
    for (const auto& entry : entries_) {
      if (entry.hash == hash && entry.features == features && entry.source == source) return;  // another thread compiled it first
    }
    total_bytes_ += source.size();
    entries_.push_back(Entry{hash, std::move(source), features, std::move(module), ++clock_});
    while (entries_.size() > 1 && (total_bytes_ > kMaxBytes || entries_.size() > kMaxEntries)) {
      auto oldest = std::ranges::min_element(entries_, {}, &Entry::last_use);
      total_bytes_ -= oldest->source.size();
      entries_.erase(oldest);
    }
  }

 private:
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;
  static constexpr std::size_t kMaxEntries = 64;
  struct Entry {
    std::uint64_t hash;
    std::vector<std::uint8_t> source;
    wasm::Features features;  // what the module was validated with (a module is valid per feature set)
    std::shared_ptr<const wasm::CompiledModule> module;
    std::uint64_t last_use;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
  std::size_t total_bytes_ = 0;
  std::uint64_t clock_ = 0;
};

ModuleCache& module_cache() {
  static ModuleCache cache;
  return cache;
}

// Value stacks and memory reservations of finished jobs, reused by the next ones (no mmap,
// munmap or fresh page faults on a short job's path); shared by every WasmSandbox.
const std::shared_ptr<wasm::ResourcePool>& resource_pool() {
  static const auto pool = std::make_shared<wasm::ResourcePool>();
  return pool;
}

std::expected<std::shared_ptr<const wasm::CompiledModule>, AxError> load_module(const std::filesystem::path& path,
                                                                                 wasm::Features features) {
  auto source = read_file(path);
  if (!source) return std::unexpected(source.error());
  const std::uint64_t hash = content_hash(*source);
  if (auto cached = module_cache().find(hash, *source, features)) return cached;

  std::vector<std::uint8_t> binary;
  const bool is_text = wasm::text::looks_like_wat(*source);
  if (is_text) {
    auto converted = wasm::text::load_module_bytes(*source);
    if (!converted) {
      return std::unexpected(module_error("'" + path.string() + "': " + converted.error(),
                                          {{"path", path.string()}, {"format", "text"}}));
    }
    binary = std::move(*converted);
  }
  auto compiled =
      wasm::compile(is_text ? std::span<const std::uint8_t>(binary) : std::span<const std::uint8_t>(*source), features);
  if (!compiled) {
    const auto& e = compiled.error();
    char offset[32];
    std::snprintf(offset, sizeof offset, "0x%zx", e.offset);
    const std::string what = e.kind == wasm::CompileError::Kind::Unsupported
                                 ? std::string("unsupported module: ")
                                 : std::string(e.kind == wasm::CompileError::Kind::Malformed ? "malformed" : "invalid") +
                                       " module at byte " + offset + ": ";
    return std::unexpected(module_error(
        "'" + path.string() + "': " + what + e.message,
        {{"path", path.string()}, {"offset", std::to_string(e.offset)}, {"error", e.message}}));
  }
  module_cache().insert(hash, std::move(*source), features, *compiled);
  return std::move(*compiled);
}

std::expected<void, AxError> check_job(const SandboxJob& job) {
  std::set<std::string> guests;
  for (const auto& mount : job.mounts) {
    if (mount.guest.empty() || mount.guest.front() != '/') {
      return std::unexpected(job_error("mount guest path '" + mount.guest + "' is not absolute", {{"guest", mount.guest}}));
    }
    if (mount.guest.find('\0') != std::string::npos) {
      return std::unexpected(job_error("mount guest path holds a NUL byte", {{"guest", mount.guest}}));
    }
    if (!guests.insert(mount.guest).second) {
      return std::unexpected(job_error("guest path '" + mount.guest + "' is mounted twice", {{"guest", mount.guest}}));
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(mount.host, ec)) {
      return std::unexpected(job_error("mount host directory '" + mount.host.string() + "' does not exist or is not a directory",
                                       {{"host", mount.host.string()}, {"guest", mount.guest}}));
    }
  }
  for (const auto& [key, value] : job.env) {
    if (key.empty() || key.find('=') != std::string::npos || key.find('\0') != std::string::npos ||
        value.find('\0') != std::string::npos) {
      return std::unexpected(job_error("environment variable '" + key + "' has an empty name, '=' in its name, or a NUL byte",
                                       {{"env", key}}));
    }
  }
  for (const auto& arg : job.argv) {
    if (arg.find('\0') != std::string::npos) return std::unexpected(job_error("an argv entry holds a NUL byte"));
  }
  return {};
}

// The WASI functions by name, built once.
const std::unordered_map<std::string_view, const wasm::HostFunctionDef*>& wasi_functions() {
  static const auto table = [] {
    std::unordered_map<std::string_view, const wasm::HostFunctionDef*> map;
    for (const auto& def : wasi::WasiContext::functions()) map.emplace(def.name, &def);
    return map;
  }();
  return table;
}

std::string extern_kind_name(wasm::ExternKind kind) {
  switch (kind) {
    case wasm::ExternKind::Func: return "function";
    case wasm::ExternKind::Table: return "table";
    case wasm::ExternKind::Memory: return "memory";
    case wasm::ExternKind::Global: return "global";
  }
  return "extern";
}

}  // namespace

bool wasm_sandbox_has_compiled_tier() noexcept { return wasm::compiled_tier_available(); }

WasmSandbox::WasmSandbox(SandboxConfig config) : config_(std::move(config)) {}
WasmSandbox::~WasmSandbox() = default;

std::expected<SandboxOutcome, AxError> WasmSandbox::run(const SandboxJob& job) {
  const auto started = std::chrono::steady_clock::now();
  if (auto ok = check_job(job); !ok) return std::unexpected(ok.error());
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (config_.timeout) deadline = started + *config_.timeout;
  auto compiled = load_module(job.wasm, wasm::Features{.tail_call = config_.tail_call, .extended_const = config_.extended_const});
  if (!compiled) return std::unexpected(compiled.error());
  // Reading and compiling the module count against the deadline: one that took the whole time
  // never starts (compilation is linear in the module's size, so its overrun is bounded too).
  if (deadline && std::chrono::steady_clock::now() >= *deadline) {
    engine::RunRecord record;
    record.trap.emplace();
    record.trap->kind = wasm::TrapKind::DeadlineExceeded;
    record.trap->message = std::string(wasm::trap_message(wasm::TrapKind::DeadlineExceeded));
    record.stdout_bytes.emplace();
    record.stderr_bytes.emplace();
    record.fuel_consumed = 0;
    record.fuel_metered = config_.meter_fuel;
    record.wall_time = std::chrono::steady_clock::now() - started;
    return engine::classify(std::move(record));
  }
  const wasm::Module& module = (*compiled)->module();

  // Link: every import must be a wasi_snapshot_preview1 function we provide. Anything else —
  // sock_open/sock_connect/sock_bind, another module, a memory or table import — is a
  // capability this sandbox does not grant, and the guest never runs.
  std::vector<const wasm::HostFunctionDef*> wasi_imports;
  wasi_imports.reserve(module.imports.size());
  for (const auto& import : module.imports) {
    const std::string qualified = import.module + "::" + import.name;
    const wasm::HostFunctionDef* def = nullptr;
    if (import.module == kWasiModule && import.kind == wasm::ExternKind::Func) {
      if (auto it = wasi_functions().find(import.name); it != wasi_functions().end()) def = it->second;
    }
    if (def == nullptr) {
      return std::unexpected(AxError{
          .code = ErrorCode::SandboxDenied,
          .message = "the module imports " + extern_kind_name(import.kind) + " `" + qualified +
                     "`, which this sandbox does not provide (wasi_snapshot_preview1 functions only; no sockets can "
                     "be opened)",
          .alternative = {},
          .detail = {{"import", qualified}}});
    }
    if (module.types[import.type_index] != def->type) {
      return std::unexpected(module_error("the module imports `" + qualified + "` with a type that does not match WASI's",
                                          {{"import", qualified}}));
    }
    wasi_imports.push_back(def);
  }
  const auto start_export = std::ranges::find_if(module.exports, [](const wasm::Export& e) { return e.name == "_start"; });
  if (start_export == module.exports.end() || start_export->kind != wasm::ExternKind::Func ||
      !module.func_type(start_export->index).params.empty() || !module.func_type(start_export->index).results.empty()) {
    return std::unexpected(module_error("'" + job.wasm.string() + "' is not a wasip1 command: it has no `_start` function "
                                        "export of type [] -> []",
                                        {{"path", job.wasm.string()}}));
  }

  wasi::WasiConfig wasi_config{.args = job.argv,
                               .env = job.env,
                               .stdin_bytes = job.stdin_bytes,
                               .stdin_fd = config_.stdin_fd,
                               .preopens = {},
                               .stdout_cap = config_.max_stdout_bytes,
                               .stderr_cap = config_.max_stderr_bytes,
                               .stdout_sink = config_.stdout_sink,
                               .stderr_sink = config_.stderr_sink,
                               .hostcall_copy_limit = config_.hostcall_copy_limit,
                               .max_disk_write_bytes = config_.max_disk_write_bytes,
                               .deterministic = config_.deterministic,
                               .random_seed = config_.random_seed,
                               .deadline = deadline};
  for (const auto& mount : job.mounts) {
    wasi_config.preopens.push_back(wasi::Preopen{.host = mount.host, .guest = mount.guest, .writable = mount.writable});
  }
  auto context = wasi::WasiContext::create(std::move(wasi_config));
  if (!context) {
    const auto& e = context.error();
    return std::unexpected(job_error(e.message, {{"host", e.host.string()}, {"guest", e.guest}}));
  }

  constexpr std::uint64_t kStoreOverhead = std::uint64_t{256} << 20;  // max_store_bytes' default beyond memory
  const std::uint64_t store_bytes = config_.max_store_bytes.value_or(
      config_.max_memory_bytes > UINT64_MAX - kStoreOverhead ? UINT64_MAX : config_.max_memory_bytes + kStoreOverhead);
  wasm::Store store(wasm::StoreLimits{.max_memory_bytes = config_.max_memory_bytes,
                                      .max_table_elements = config_.max_table_elements,
                                      .max_tables = config_.max_tables,
                                      .max_memories = config_.max_memories,
                                      .max_instances = 1,
                                      .max_store_bytes = store_bytes},
                    resource_pool());
  // Host work (bytes moved or produced by WASI calls) is paid from the same fuel budget.
  (*context)->set_fuel_charger([&store](std::uint64_t units) { return store.charge_fuel(units); });
  if (config_.tier == ExecutionTier::Compile && !store.set_tier(wasm::Tier::Compile)) {
    return std::unexpected(AxError{.code = ErrorCode::ToolUnavailable,
                                   .message = "this build has no compiled tier (built with SPRAWLING_WITH_JIT=OFF); "
                                              "the job was not run",
                                   .alternative = "the interpreter (ExecutionTier::Interpret, sprawl run --tier interpret)",
                                   .detail = {{"tier", "compile"}}});
  }
  std::vector<wasm::Extern> imports;
  imports.reserve(wasi_imports.size());
  for (const auto* def : wasi_imports) {
    imports.emplace_back(store.add_host_function(def->type, def->fn, context->get(), std::string(def->name)));
  }
  store.set_budget(wasm::ExecutionBudget{
      .fuel = config_.meter_fuel ? std::optional<std::uint64_t>(job.fuel.units) : std::nullopt,
      .deadline = deadline});

  engine::RunRecord record;
  record.fuel_metered = config_.meter_fuel;
  wasm::MemoryInst* memory = nullptr;
  // [snapshots] engine_snapshot.cpp: start from the initialised instance when the module allows it.
  const engine::JobStart job_start = engine::prepare_job_start(*compiled, job, config_, wasi_imports, resource_pool());
  record.from_snapshot = job_start.snapshot != nullptr;
  auto instance = store.instantiate(*compiled, imports, job_start.snapshot.get());
  if (!instance) {
    if (instance.error().kind != wasm::InstantiationError::Kind::Trap || !instance.error().trap) {
      return std::unexpected(module_error("'" + job.wasm.string() + "' cannot be instantiated: " + instance.error().message,
                                          {{"path", job.wasm.string()}}));
    }
    record.trap = instance.error().trap;  // a segment or the start function trapped: the guest ran
  } else {
    memory = (*instance)->memory(0);
    auto start = (*instance)->find_export(job_start.entry);  // [snapshots] `_start`, or the resume export
    auto* start_func = start ? std::get_if<wasm::FuncInst*>(&*start) : nullptr;
    if (start_func == nullptr) return std::unexpected(engine::host_error("the `" + job_start.entry + "` export vanished after instantiation"));
    auto result = store.invoke(*start_func, {});
    if (!result) record.trap = std::move(result.error());
  }

  record.fuel_consumed = store.fuel_consumed();
  record.peak_memory_bytes = memory != nullptr ? wasm::memory_peak_bytes(memory) : 0;
  record.stdout_truncated = (*context)->stdout_truncated();
  record.stderr_truncated = (*context)->stderr_truncated();
  record.disk_write_bytes = (*context)->disk_write_bytes();
  record.stdout_bytes = (*context)->take_stdout();
  record.stderr_bytes = (*context)->take_stderr();
  record.wall_time = std::chrono::steady_clock::now() - started;
  return engine::classify(std::move(record));
}

}  // namespace sprawling::runtime
