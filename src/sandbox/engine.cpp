// The engine adapter (Rust original: WasmtimeSandbox): loads and caches the module, links the
// WASI host, preopens the mounts, sets the fuel budget and limits, runs _start and classifies
// the ending. The seam file (sandbox.cpp) stays free of engine code.
#include "sandbox/engine_code_cache.hpp"
#include "sandbox/engine.hpp"
#include "sandbox/engine_snapshot.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include "wasi/wasi.hpp"
#include "wasm/runtime/runtime.hpp"
#include "wasm/support/sha256.hpp"
#include "wasm/text/wat.hpp"

#include <fcntl.h>
#include <sys/mman.h>
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

// The module file, open, and its identity when it was opened.
struct ModuleFile {
  int fd = -1;
  wasm::FileIdentity identity;
  ModuleFile() = default;
  ModuleFile(const ModuleFile&) = delete;
  ModuleFile& operator=(const ModuleFile&) = delete;
  ~ModuleFile() {
    if (fd >= 0) ::close(fd);
  }
};

std::expected<void, AxError> open_module(const std::filesystem::path& path, ModuleFile& file) {
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) {
    return std::unexpected(job_error("cannot open the module '" + path.string() + "': " + std::strerror(errno),
                                     {{"path", path.string()}}));
  }
  auto identity = wasm::file_identity(file.fd);
  if (!identity) {
    return std::unexpected(job_error("the module '" + path.string() + "' is not a regular file", {{"path", path.string()}}));
  }
  file.identity = *identity;
  return {};
}

// Reads the whole file into one buffer of its size (no staging copy). The buffer's pages are
// made present in one call before they are written, not by a page fault per 4 KiB (python.wasm:
// 1,700 of them).
std::expected<std::vector<std::uint8_t>, AxError> read_module(const std::filesystem::path& path, const ModuleFile& file) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(static_cast<std::size_t>(file.identity.size));
  if (bytes.capacity() >= std::size_t{1} << 20) {
    const auto first = (reinterpret_cast<std::uintptr_t>(bytes.data()) + 4095) & ~std::uintptr_t{4095};
    const auto last = (reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.capacity()) & ~std::uintptr_t{4095};
#ifdef MADV_POPULATE_WRITE
    if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);  // a hint
#endif
  }
  bytes.resize(static_cast<std::size_t>(file.identity.size));
  std::size_t done = 0;
  auto failed = [&](int err) {
    return std::unexpected(job_error("cannot read the module '" + path.string() + "': " + std::strerror(err),
                                     {{"path", path.string()}}));
  };
  for (;;) {
    if (done == bytes.size()) bytes.resize(bytes.size() + 65536);  // the file grew since fstat
    const ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return failed(errno);
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

// Compiled modules keyed by the SHA-256 of their source bytes (binary or text: the digest that
// names the module elsewhere too), shared by every WasmSandbox in the process. Bounded by total
// source bytes; least recently used goes first. [start-up] A binary's entry also remembers the
// identity of the file it was read from when that file was settled (wasm::identity_settled), so
// that a later job naming the same unchanged file finds it without reading or hashing the file.
class ModuleCache {
 public:
  // `need_bodies_read`: only a module whose function bodies were read (not one loaded as validated
  // before, whose Module::simd_use is not known), for a job that refuses SIMD.
  std::shared_ptr<const wasm::CompiledModule> find_file(const wasm::FileIdentity& file, wasm::Features features,
                                                        bool need_bodies_read) {
    std::lock_guard lock(mutex_);
    for (auto& entry : entries_) {
      if (need_bodies_read && !entry.bodies_read) continue;
      if (entry.file == file && entry.features == features) {
        entry.last_use = ++clock_;
        return entry.module;
      }
    }
    return nullptr;
  }

  // `file`: the settled file these bytes were read from, recorded on the entry found.
  std::shared_ptr<const wasm::CompiledModule> find(const wasm::Sha256Digest& digest,
                                                   const std::optional<wasm::FileIdentity>& file,
                                                   wasm::Features features, bool need_bodies_read) {
    std::lock_guard lock(mutex_);
    for (auto& entry : entries_) {
      if (need_bodies_read && !entry.bodies_read) continue;
      if (entry.digest == digest && entry.features == features) {
        entry.last_use = ++clock_;
        if (file) entry.file = file;
        return entry.module;
      }
    }
    return nullptr;
  }

  void insert(const wasm::Sha256Digest& digest, std::size_t source_bytes, const std::optional<wasm::FileIdentity>& file,
              wasm::Features features, bool bodies_read, std::shared_ptr<const wasm::CompiledModule> module) {
    std::lock_guard lock(mutex_);
    for (const auto& entry : entries_) {
      if (entry.digest == digest && entry.features == features && entry.bodies_read == bodies_read)
        return;  // another thread compiled it first
    }
    total_bytes_ += source_bytes;
    entries_.push_back(Entry{digest, source_bytes, file, features, bodies_read, std::move(module), ++clock_});
    while (entries_.size() > 1 && (total_bytes_ > kMaxBytes || entries_.size() > kMaxEntries)) {
      auto oldest = std::ranges::min_element(entries_, {}, &Entry::last_use);
      total_bytes_ -= oldest->source_bytes;
      entries_.erase(oldest);
    }
  }

 private:
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;
  static constexpr std::size_t kMaxEntries = 64;
  struct Entry {
    wasm::Sha256Digest digest;  // of the source bytes
    std::size_t source_bytes;
    std::optional<wasm::FileIdentity> file;
    wasm::Features features;  // what the module was validated with (a module is valid per feature set)
    bool bodies_read;         // false: loaded as validated before (Module::simd_use unknown)
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

// A compiled module, and the identity of its binary file when that file is settled and did not
// change while it was read (its bytes are then known by identity: docs/snapshots.md).
struct LoadedModule {
  std::shared_ptr<const wasm::CompiledModule> module;
  std::optional<wasm::FileIdentity> file;
};

// Reads and compiles the job's module, or finds it compiled in this process. A binary that a
// snapshot file of this engine build vouches for (engine::snapshot_vouches_for: this build
// validated exactly these bytes, named by their SHA-256) is compiled without validating its
// function bodies again (docs/python.md, "Loading without validating twice"). [start-up] A
// settled file found in the module cache by identity is not read at all; a settled binary whose
// SHA-256 a stamp of the snapshot folder records for that identity is read but not hashed.
std::expected<LoadedModule, AxError> load_module(const SandboxJob& job, const SandboxConfig& config) {
  const std::filesystem::path& path = job.wasm;
  const wasm::Features features{.tail_call = config.tail_call,
                                .extended_const = config.extended_const,
                                .relaxed_simd = config.relaxed_simd,
                                .multi_memory = config.multi_memory,
                                .memory64 = config.memory64,
                                .exceptions = config.exceptions,
                                .function_references = config.function_references,
                                .gc = config.gc,
                                .nan_canonicalization = config.nan_canonicalization || config.deterministic};
  // The vouching file says these bytes validated with every feature on (or fewer): with one
  // switched off here (SIMD too: -W simd=n needs the bodies read) they are validated again.
  const bool may_skip_validation =
      features == wasm::Features{.nan_canonicalization = features.nan_canonicalization} && config.simd;
  ModuleFile file;
  if (auto opened = open_module(path, file); !opened) return std::unexpected(opened.error());
  const bool settled = wasm::identity_settled(file.identity);
  std::optional<engine::StampedModule> stamped;
  if (settled) {
    if (auto cached = module_cache().find_file(file.identity, features, !config.simd))
      return LoadedModule{std::move(cached), file.identity};
    // [start-up] A stamped module file whose verified snapshot file carries its bytes is not read.
    stamped = engine::stamped_module(file.identity, job, config, may_skip_validation);
    if (stamped && stamped->bytes) {
      const std::size_t size = stamped->bytes->size();
      if (auto compiled = wasm::compile_validated_before(std::move(*stamped->bytes), features)) {
        engine::remember_module_digest(*compiled, stamped->digest);
        module_cache().insert(stamped->digest, size, file.identity, features, /*bodies_read=*/false, *compiled);
        return LoadedModule{std::move(*compiled), file.identity};
      }
    }
  }
  auto source = read_module(path, file);
  if (!source) return std::unexpected(source.error());
  // The bytes read are the file's of that identity only if nothing changed it meanwhile.
  // Text sources are converted every time they are read: only binaries are known by identity.
  const bool is_text = wasm::text::looks_like_wat(*source);
  std::optional<wasm::FileIdentity> identity;
  if (settled && !is_text && wasm::file_identity(file.fd) == file.identity) identity = file.identity;

  std::optional<wasm::Sha256Digest> source_digest;
  if (identity && stamped) source_digest = stamped->digest;
  if (!source_digest) source_digest = wasm::sha256(*source);
  if (auto cached = module_cache().find(*source_digest, identity, features, !config.simd))
    return LoadedModule{std::move(cached), identity};

  std::vector<std::uint8_t> binary;
  const std::size_t source_bytes = source->size();
  if (is_text) {
    auto converted = wasm::text::load_module_bytes(*source);
    if (!converted) {
      return std::unexpected(module_error("'" + path.string() + "': " + converted.error(),
                                          {{"path", path.string()}, {"format", "text"}}));
    }
    binary = std::move(*converted);
  } else {
    binary = std::move(*source);  // into the compiled module without a copy
  }
  const wasm::Sha256Digest digest = is_text ? wasm::sha256(binary) : *source_digest;
  const std::size_t size = binary.size();
  const bool vouched = may_skip_validation && engine::snapshot_vouches_for(digest, size, job, config);
  auto compiled = vouched ? wasm::compile_validated_before(std::move(binary), features)
                          : wasm::compile(std::move(binary), features);
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
  engine::remember_module_digest(*compiled, digest);
  module_cache().insert(*source_digest, source_bytes, identity, features, !vouched, *compiled);
  return LoadedModule{std::move(*compiled), identity};
}

// Whether `dir` is `folder` or holds it (both made absolute, without needing to exist).
bool holds(const std::filesystem::path& dir, const std::filesystem::path& folder) {
  std::error_code ec;
  const auto outer = std::filesystem::weakly_canonical(dir, ec);
  if (ec) return false;
  const auto inner = std::filesystem::weakly_canonical(folder, ec);
  if (ec) return false;
  auto o = outer.begin();
  auto i = inner.begin();
  for (; o != outer.end() && !o->empty(); ++o, ++i) {
    if (i == inner.end() || *o != *i) return false;
  }
  return true;
}

std::expected<void, AxError> check_job(const SandboxJob& job, const SandboxConfig& config) {
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
    // The snapshot folder vouches for modules this build validated: a guest able to write it
    // could make a later load skip validating a module of its choosing (docs/python.md).
    if (mount.writable && !config.snapshot_dir.empty() && holds(mount.host, config.snapshot_dir)) {
      return std::unexpected(job_error(
          "writable mount '" + mount.host.string() + "' holds the snapshot folder '" + config.snapshot_dir.string() +
              "', whose files this engine trusts (also in later runs, with or without snapshots now); mount it "
              "read-only, mount a folder that does not hold it, or keep snapshots elsewhere (SPRAWLING_SNAPSHOT_DIR)",
          {{"host", mount.host.string()}, {"guest", mount.guest}, {"snapshot_dir", config.snapshot_dir.string()}}));
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
    case wasm::ExternKind::Tag: return "tag";
  }
  return "extern";
}

}  // namespace

bool wasm_sandbox_has_compiled_tier() noexcept { return wasm::compiled_tier_available(); }
void wasm_sandbox_stop_tier_up() noexcept { wasm::stop_tier_up(); }
bool wasm_sandbox_tier_up_busy() noexcept { return wasm::tier_up_busy(); }
void wasm_sandbox_tier_up_keep_unfinished() noexcept { wasm::tier_up_keep_unfinished(); }

WasmSandbox::WasmSandbox(SandboxConfig config) : config_(std::move(config)) {}
WasmSandbox::~WasmSandbox() = default;

std::expected<SandboxOutcome, AxError> WasmSandbox::run(const SandboxJob& job) {
  const auto started = std::chrono::steady_clock::now();
  if (auto ok = check_job(job, config_); !ok) return std::unexpected(ok.error());
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (config_.timeout) deadline = started + *config_.timeout;
  auto loaded = load_module(job, config_);
  if (!loaded) return std::unexpected(loaded.error());
  const std::shared_ptr<const wasm::CompiledModule>& compiled = loaded->module;
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
  const wasm::Module& module = compiled->module();
  if (!config_.simd && !module.simd_use.empty()) {
    return std::unexpected(module_error("'" + job.wasm.string() + "': the module uses SIMD (" + module.simd_use +
                                            ") and SIMD is turned off (-W simd=n)",
                                        {{"path", job.wasm.string()}, {"feature", "simd"}}));
  }

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
                               .stdin_fd = job.stdin_fd,
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
  auto store_owner = std::make_unique<wasm::Store>(wasm::StoreLimits{.max_memory_bytes = config_.max_memory_bytes,
                                                                     .max_table_elements = config_.max_table_elements,
                                                                     .max_tables = config_.max_tables,
                                                                     .max_memories = config_.max_memories,
                                                                     .max_instances = 1,
                                                                     .max_store_bytes = store_bytes},
                                                   resource_pool());
  wasm::Store& store = *store_owner;
  // Host work (bytes moved or produced by WASI calls) is paid from the same fuel budget.
  (*context)->set_fuel_charger([&store](std::uint64_t units) { return store.charge_fuel(units); });
  std::shared_ptr<engine::FileCodeCache> code_cache;
  if (config_.tier != ExecutionTier::Interpret && !config_.code_cache_dir.empty() && wasm::compiled_tier_built())
    code_cache = std::make_shared<engine::FileCodeCache>(config_.code_cache_dir, config_.code_cache_max_bytes);
  // Compile with the module's machine code in the cache (the variant the store runs: metered with
  // fuel or a deadline) needs no compiler: the engine links it, and the plugin (libLLVM) is not
  // loaded to check it is there.
  const bool code_ready = config_.tier == ExecutionTier::Compile &&
                          wasm::cached_code_ready(*compiled, config_.meter_fuel || deadline.has_value(), code_cache);
  if (config_.tier == ExecutionTier::Compile && !store.set_tier(wasm::Tier::Compile, code_ready)) {
    return std::unexpected(AxError{.code = ErrorCode::ToolUnavailable,
                                   .message = wasm::compiled_tier_unavailable_reason() + "; the job was not run",
                                   .alternative = "the interpreter (ExecutionTier::Interpret, sprawl run --tier interpret)",
                                   .detail = {{"tier", "compile"}}});
  }
  if (config_.tier == ExecutionTier::Auto) (void)store.set_tier(wasm::Tier::Auto);  // the interpreter without the tier
  store.set_tier_up(config_.tier_up);
  store.set_compile_memory(config_.compile_memory_bytes);
  if (code_cache != nullptr) store.set_code_cache(code_cache);
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
  const engine::JobStart job_start = engine::prepare_job_start(compiled, loaded->file, job, config_, wasi_imports, resource_pool());
  record.from_snapshot = job_start.snapshot != nullptr;
  auto instance = store.instantiate(compiled, imports, job_start.snapshot.get());
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
  if (config_.process_exits_after_run) {
    // [start-up] The OS reclaims all of it at exit, in one go (python.wasm: 8,124 functions, a
    // copy-on-write image to unmap, the WASI context's fds).
    [[maybe_unused]] const wasm::Store* left_store = store_owner.release();
    [[maybe_unused]] const wasi::WasiContext* left_context = context->release();
  }
  return engine::classify(std::move(record));
}

std::expected<std::vector<PrecompiledEntry>, AxError> precompile_module(const std::filesystem::path& wasm,
                                                                     const SandboxConfig& config, bool metered,
                                                                     bool unmetered, const PrecompileOptions& options) {
  if (!wasm::compiled_tier_available()) {
    return std::unexpected(AxError{.code = ErrorCode::ToolUnavailable,
                                   .message = wasm::compiled_tier_unavailable_reason() + ": nothing to compile",
                                   .alternative = "the interpreter (sprawl run --tier interpret)",
                                   .detail = {{"tier", "compile"}}});
  }
  if (config.code_cache_dir.empty()) return std::unexpected(job_error("no code cache folder to compile into"));
  SandboxJob job;
  job.wasm = wasm;
  auto loaded = load_module(job, config);
  if (!loaded) return std::unexpected(loaded.error());
  const std::shared_ptr<const wasm::CompiledModule>& compiled = loaded->module;
  engine::FileCodeCache cache(config.code_cache_dir, config.code_cache_max_bytes);
  std::vector<PrecompiledEntry> out;
  wasm::CompileOptions compile;
  compile.time_limit = options.time_limit;
  compile.memory_limit = options.memory_limit;
  compile.jobs = options.jobs;
  compile.progress = options.progress;
  for (const bool m : {false, true}) {
    if (!(m ? metered : unmetered)) continue;
    auto report = wasm::precompile(*compiled, m, cache, compile);
    if (!report) return std::unexpected(engine::host_error(report.error(), {{"path", wasm.string()}}));
    out.push_back(PrecompiledEntry{.metered = m,
                                   .file = config.code_cache_dir / report->entry,
                                   .functions = report->functions,
                                   .compiled = report->compiled,
                                   .wasm_code_bytes = report->wasm_code_bytes,
                                   .entry_bytes = report->entry_bytes,
                                   .cpu_seconds = report->cpu_seconds,
                                   .wall_seconds = report->wall_seconds,
                                   .threads = report->threads,
                                   .peak_heap_growth = report->peak_heap_growth});
  }
  return out;
}

}  // namespace sprawling::runtime
