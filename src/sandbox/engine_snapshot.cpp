// The sandbox's snapshot cache: runs a module's `wizer.initialize` once under a bare WASI
// context (argv[0] only, no environment, no stdin, only the job's init mounts, read-only),
// captures the instance, and keeps it in memory (bounded) and optionally on disk.
#include "sandbox/engine_snapshot.hpp"

#include "sandbox/engine.hpp"
#include "wasi/wasi.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <vector>

namespace sprawling::runtime::engine {

namespace {

// What an initialisation may spend: generous (CPython's is ~0.1 G) but bounded, so a module whose
// init never returns costs its first job a bounded wait, once.
constexpr std::uint64_t kInitFuel = 50'000'000'000;
constexpr auto kInitTimeout = std::chrono::seconds(120);
// The in-memory cache: a few modules' images (each is a memfd, shared by every job).
constexpr std::size_t kMaxEntries = 8;

// Folds a string or number into a running 64-bit key.
struct KeyHasher {
  std::uint64_t h = 0x736e617073686f74ULL;  // "snapshot"
  void add(std::string_view s) {
    h = wasm::snapshot_hash(std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size())) ^
        ((h << 7) | (h >> 57));
    h *= 0x9E3779B97F4A7C15ULL;
  }
  void add(std::uint64_t v) { add(std::to_string(v)); }
};

struct Entry {
  std::shared_ptr<const wasm::CompiledModule> module;
  std::uint64_t key = 0;
  std::shared_ptr<const wasm::InstanceSnapshot> snapshot;  // null: the initialisation failed (jobs start cold)
  std::uint64_t last_use = 0;
};

class SnapshotCache {
 public:
  std::optional<Entry> find(const wasm::CompiledModule* module, std::uint64_t key) {
    std::lock_guard lock(mutex_);
    for (auto& e : entries_) {
      if (e.module.get() == module && e.key == key) {
        e.last_use = ++clock_;
        return e;
      }
    }
    return std::nullopt;
  }
  void insert(Entry entry) {
    std::lock_guard lock(mutex_);
    entry.last_use = ++clock_;
    entries_.push_back(std::move(entry));
    while (entries_.size() > kMaxEntries) entries_.erase(std::ranges::min_element(entries_, {}, &Entry::last_use));
  }
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }
  // One initialisation at a time: a burst of first jobs builds the snapshot once.
  std::mutex build_mutex;

 private:
  std::mutex mutex_;
  std::vector<Entry> entries_;
  std::uint64_t clock_ = 0;
};

SnapshotCache& cache() {
  static SnapshotCache c;
  return c;
}

std::optional<std::string_view> init_export(const wasm::Module& module) {
  for (const std::string_view name : kInitExports) {
    for (const auto& e : module.exports) {
      if (e.name == name && e.kind == wasm::ExternKind::Func && module.func_type(e.index).params.empty() &&
          module.func_type(e.index).results.empty())
        return name;
    }
  }
  return std::nullopt;
}

bool exports_func(const wasm::Module& module, std::string_view name) {
  return std::ranges::any_of(module.exports, [&](const wasm::Export& e) {
    return e.name == name && e.kind == wasm::ExternKind::Func && module.func_type(e.index).params.empty() &&
           module.func_type(e.index).results.empty();
  });
}

// The initialisation configuration: everything the init could observe. A mount's host
// directory is named by its canonical path, device, inode and modification time (the content
// below it is assumed not to change while snapshots of it exist: a standard library).
std::expected<std::uint64_t, std::string> init_key(const SandboxJob& job, const SandboxConfig& config) {
  KeyHasher k;
  k.add("sprawling-snapshot-key-v1");
  k.add(job.argv.empty() ? std::string() : job.argv[0]);
  k.add(config.deterministic ? 1 : 0);
  k.add(config.deterministic ? config.random_seed : 0);
  k.add(config.nan_canonicalization ? 1 : 0);  // the code it holds canonicalizes NaNs (deterministic: too)
  k.add(config.max_memory_bytes);
  for (std::size_t i = 0; i < job.snapshot.init_mounts; ++i) {
    const Mount& m = job.mounts[i];
    std::error_code ec;
    const auto canonical = std::filesystem::canonical(m.host, ec);
    struct stat st {};
    if (ec || ::stat(canonical.c_str(), &st) != 0) return std::unexpected("init mount '" + m.host.string() + "' cannot be read");
    k.add(canonical.string());
    k.add(m.guest);
    k.add(st.st_dev);
    k.add(st.st_ino);
    k.add(static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(st.st_mtim.tv_nsec));
  }
  return k.h;
}

// The bare WASI configuration of the initialisation and of the training job: `args`, no
// environment, empty stdin, only the job's init mounts, read-only; output kept up to `output_cap`.
wasi::WasiConfig init_wasi_config(const SandboxJob& job, const SandboxConfig& config, std::vector<std::string> args,
                                  std::size_t output_cap, std::chrono::steady_clock::time_point deadline) {
  wasi::WasiConfig wasi_config{.args = std::move(args),
                               .env = {},
                               .stdin_bytes = {},
                               .stdin_fd = {},
                               .preopens = {},
                               .stdout_cap = output_cap,
                               .stderr_cap = output_cap,
                               .stdout_sink = {},
                               .stderr_sink = {},
                               .hostcall_copy_limit = config.hostcall_copy_limit,
                               .deterministic = config.deterministic,
                               .random_seed = config.random_seed,
                               .deadline = deadline};
  for (std::size_t i = 0; i < job.snapshot.init_mounts; ++i) {
    wasi_config.preopens.push_back(wasi::Preopen{.host = job.mounts[i].host, .guest = job.mounts[i].guest, .writable = false});
  }
  return wasi_config;
}

// [start-up] What the training job may spend: a `print(1)` job of python.wasm takes about 0.7 M.
constexpr std::uint64_t kTrainingFuel = 200'000'000;

// [start-up] The training job (SnapshotPolicy::training_args): a job like any other, started from
// the fresh snapshot in a store of its own that tracks first calls, under a bare context (argv[0]
// and the training arguments, no environment, empty stdin, the init mounts read-only) and a fuel
// budget; whatever it does or however it ends, only the list of the functions it called is kept.
void train(wasm::InstanceSnapshot& snapshot, const std::shared_ptr<const wasm::CompiledModule>& module,
           const SandboxJob& job, const SandboxConfig& config, std::span<const wasm::HostFunctionDef* const> wasi_imports,
           const std::shared_ptr<wasm::ResourcePool>& pool, std::chrono::steady_clock::time_point deadline) {
  if (job.snapshot.training_args.empty() || !exports_func(module->module(), kResumeExport)) return;
  std::vector<std::string> args{job.argv.empty() ? std::string() : job.argv[0]};
  args.insert(args.end(), job.snapshot.training_args.begin(), job.snapshot.training_args.end());
  auto wasi_config = init_wasi_config(job, config, std::move(args), 1u << 16, deadline);
  auto context = wasi::WasiContext::create(std::move(wasi_config));
  if (!context) return;
  wasm::Store store(wasm::StoreLimits{.max_memory_bytes = config.max_memory_bytes}, pool);
  store.track_first_calls();
  std::vector<wasm::Extern> imports;
  for (const auto* def : wasi_imports) {
    imports.emplace_back(store.add_host_function(def->type, def->fn, context->get(), std::string(def->name)));
  }
  (*context)->set_fuel_charger([&store](std::uint64_t units) { return store.charge_fuel(units); });
  store.set_budget(wasm::ExecutionBudget{.fuel = kTrainingFuel, .deadline = deadline});
  auto instance = store.instantiate(module, imports, &snapshot);
  if (!instance) return;
  const auto entry = (*instance)->find_export(kResumeExport);
  auto* const* func = entry ? std::get_if<wasm::FuncInst*>(&*entry) : nullptr;
  if (func == nullptr) return;
  [[maybe_unused]] const auto ended = store.invoke(*func, {});  // any ending: only the calls matter
  snapshot.add_code_functions(**instance);
}

// Runs the initialisation and captures the instance (then the training job, if any).
std::expected<std::shared_ptr<const wasm::InstanceSnapshot>, std::string> build_snapshot(
    const std::shared_ptr<const wasm::CompiledModule>& module, std::string_view init_name, const SandboxJob& job,
    const SandboxConfig& config, std::span<const wasm::HostFunctionDef* const> wasi_imports,
    const std::shared_ptr<wasm::ResourcePool>& pool) {
  const auto deadline = std::chrono::steady_clock::now() + kInitTimeout;
  auto wasi_config =
      init_wasi_config(job, config, {job.argv.empty() ? std::string() : job.argv[0]}, 1u << 20, deadline);
  auto context = wasi::WasiContext::create(std::move(wasi_config));
  if (!context) return std::unexpected("the initialisation's WASI context: " + context.error().message);
  wasm::Store store(wasm::StoreLimits{.max_memory_bytes = config.max_memory_bytes}, pool);
  // The snapshot file carries the code of the functions the initialisation ran (the jobs' first
  // calls), and only those: not what earlier jobs of this process happened to translate.
  store.track_first_calls();
  std::vector<wasm::Extern> imports;
  for (const auto* def : wasi_imports) {
    imports.emplace_back(store.add_host_function(def->type, def->fn, context->get(), std::string(def->name)));
  }
  store.set_budget(wasm::ExecutionBudget{.fuel = config.meter_fuel ? std::optional<std::uint64_t>(kInitFuel) : std::nullopt,
                                         .deadline = deadline});
  auto instance = store.instantiate(module, imports);
  if (!instance) return std::unexpected("instantiation failed: " + instance.error().message);
  auto init = (*instance)->find_export(init_name);
  auto result = store.invoke(std::get<wasm::FuncInst*>(*init), {});
  if (!result) {
    const auto err = (*context)->take_stderr();
    std::string tail(err.begin() + static_cast<std::ptrdiff_t>(err.size() > 400 ? err.size() - 400 : 0), err.end());
    return std::unexpected("`" + std::string(init_name) + "` did not return: " + describe_trap(result.error()) +
                           (tail.empty() ? "" : "; its stderr ends: " + tail));
  }
  // The snapshot must not carry an fd the job would not have: stdio and the init mounts only.
  const std::size_t expected_fds = 3 + job.snapshot.init_mounts;
  if ((*context)->open_fd_count() != expected_fds) {
    return std::unexpected("`" + std::string(init_name) + "` left " + std::to_string((*context)->open_fd_count()) +
                           " fds open (expected stdio and the init mounts: " + std::to_string(expected_fds) + ")");
  }
  auto captured = wasm::capture_snapshot(**instance);
  if (!captured) return std::unexpected(std::move(captured.error()));
  train(**captured, module, job, config, wasi_imports, pool, deadline);
  return std::shared_ptr<const wasm::InstanceSnapshot>(std::move(*captured));
}

// The module's SHA-256 (its identity in file names and headers): the one digest of its bytes,
// shared with the code cache's key (CompiledModule::content_digest), computed once per module.
const wasm::Sha256Digest& module_digest(const std::shared_ptr<const wasm::CompiledModule>& module) {
  return module->content_digest();
}

std::filesystem::path snapshot_file(const std::filesystem::path& dir, const wasm::Sha256Digest& module_digest,
                                    std::uint64_t key) {
  char name[32];
  std::snprintf(name, sizeof name, "-%016llx.snap", static_cast<unsigned long long>(key));
  return dir / (wasm::to_hex(module_digest) + name);
}

// [start-up] A stamp, kept beside the snapshot files (docs/snapshots.md, "Knowing a file without
// reading it"): for a module file of a given identity and an initialisation key, the module's
// SHA-256 (computed from bytes read while the file had that identity, settled), and the identity
// of the snapshot file whose checksum was verified. Only as trusted as the snapshot folder
// itself: private to the user, as the snapshot files are.
struct Stamp {
  wasm::FileIdentity module;
  wasm::Sha256Digest digest{};
  std::optional<wasm::FileIdentity> snapshot;
  friend bool operator==(const Stamp&, const Stamp&) = default;
};

constexpr char kStampMagic[8] = {'S', 'P', 'R', 'W', 'S', 'T', 'M', 'P'};
constexpr std::uint32_t kStampVersion = 1;
// magic, version, has-snapshot flag, module identity, digest, snapshot identity, checksum
constexpr std::size_t kStampBytes = 8 + 4 + 4 + 5 * 8 + 32 + 5 * 8 + 8;

void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_identity(std::vector<std::uint8_t>& out, const wasm::FileIdentity& id) {
  for (const std::uint64_t v : {id.dev, id.ino, id.size, id.mtime_ns, id.ctime_ns}) put_u64(out, v);
}
std::uint64_t get_u64(const std::uint8_t*& p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  p += 8;
  return v;
}
wasm::FileIdentity get_identity(const std::uint8_t*& p) {
  wasm::FileIdentity id;
  for (std::uint64_t* v : {&id.dev, &id.ino, &id.size, &id.mtime_ns, &id.ctime_ns}) *v = get_u64(p);
  return id;
}

std::vector<std::uint8_t> encode_stamp(const Stamp& stamp) {
  std::vector<std::uint8_t> out(kStampMagic, kStampMagic + 8);
  for (const std::uint32_t v : {kStampVersion, stamp.snapshot ? 1U : 0U}) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  put_identity(out, stamp.module);
  out.insert(out.end(), stamp.digest.begin(), stamp.digest.end());
  put_identity(out, stamp.snapshot.value_or(wasm::FileIdentity{}));
  put_u64(out, wasm::snapshot_hash(out));
  return out;
}

// Whether `dir` is a folder owned by this user that group and others cannot write: only then are
// its stamps and snapshot files this user's (as wasm::snapshot_vouches_for requires of its folder).
bool private_folder(const std::filesystem::path& dir) {
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::filesystem::path stamp_file(const std::filesystem::path& dir, const wasm::FileIdentity& module, std::uint64_t key) {
  char name[80];
  std::snprintf(name, sizeof name, "module-%llx-%llx-%016llx.stamp", static_cast<unsigned long long>(module.dev),
                static_cast<unsigned long long>(module.ino), static_cast<unsigned long long>(key));
  return dir / name;
}

// A stamp file that is a regular file (not a symlink) of this user, private to it, of the right
// size, magic, version and checksum; nullopt otherwise (it is then rewritten).
std::optional<Stamp> read_stamp(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::uint8_t bytes[kStampBytes];
  const bool read = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
                    (st.st_mode & (S_IRWXG | S_IRWXO)) == 0 && static_cast<std::uint64_t>(st.st_size) == kStampBytes &&
                    ::pread(fd, bytes, kStampBytes, 0) == static_cast<ssize_t>(kStampBytes);
  ::close(fd);
  if (!read || !std::equal(kStampMagic, kStampMagic + 8, bytes)) return std::nullopt;
  const std::uint8_t* p = bytes + 8;
  const auto version = static_cast<std::uint32_t>(p[0] | (p[1] << 8) | (p[2] << 16) | (p[3] << 24));
  const bool has_snapshot = p[4] != 0;
  p += 8;
  Stamp stamp;
  stamp.module = get_identity(p);
  std::copy(p, p + 32, stamp.digest.begin());
  p += 32;
  const wasm::FileIdentity snapshot = get_identity(p);
  if (has_snapshot) stamp.snapshot = snapshot;
  const std::uint64_t checksum = get_u64(p);
  if (version != kStampVersion || checksum != wasm::snapshot_hash(std::span(bytes, kStampBytes - 8))) return std::nullopt;
  return stamp;
}

// Best effort: a stamp that cannot be written costs later processes a hash, nothing else.
void write_stamp(const std::filesystem::path& path, const Stamp& stamp) {
  const std::vector<std::uint8_t> bytes = encode_stamp(stamp);
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  const bool written = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) ::unlink(tmp.c_str());
}

}  // namespace

void clear_snapshot_cache() { cache().clear(); }

void remember_module_digest(const std::shared_ptr<const wasm::CompiledModule>& module, const wasm::Sha256Digest& digest) {
  module->remember_content_digest(digest);
}

bool snapshot_vouches_for(const wasm::Sha256Digest& digest, std::uint64_t module_size, const SandboxJob& job,
                          const SandboxConfig& config) {
  if (!job.snapshot.enabled || config.snapshot_dir.empty() || job.snapshot.init_mounts > job.mounts.size()) return false;
  auto key = init_key(job, config);
  if (!key) return false;
  return wasm::snapshot_vouches_for(digest, module_size, *key, snapshot_file(config.snapshot_dir, digest, *key));
}

std::optional<StampedModule> stamped_module(const wasm::FileIdentity& module_file, const SandboxJob& job,
                                            const SandboxConfig& config, bool want_bytes) {
  if (!job.snapshot.enabled || config.snapshot_dir.empty() || job.snapshot.init_mounts > job.mounts.size()) return std::nullopt;
  auto key = init_key(job, config);
  if (!key || !private_folder(config.snapshot_dir)) return std::nullopt;
  auto stamp = read_stamp(stamp_file(config.snapshot_dir, module_file, *key));
  if (!stamp || stamp->module != module_file) return std::nullopt;
  StampedModule out{.digest = stamp->digest, .bytes = std::nullopt};
  if (want_bytes && stamp->snapshot) {
    const auto file = snapshot_file(config.snapshot_dir, stamp->digest, *key);
    if (wasm::snapshot_vouches_for(stamp->digest, module_file.size, *key, file))
      out.bytes = wasm::snapshot_module_bytes(file, stamp->digest, module_file.size, *key, *stamp->snapshot);
  }
  return out;
}

JobStart prepare_job_start(const std::shared_ptr<const wasm::CompiledModule>& module,
                           const std::optional<wasm::FileIdentity>& module_file, const SandboxJob& job,
                           const SandboxConfig& config, std::span<const wasm::HostFunctionDef* const> wasi_imports,
                           const std::shared_ptr<wasm::ResourcePool>& pool) {
  const wasm::Module& m = module->module();
  const auto init_name = init_export(m);
  if (!job.snapshot.enabled || !init_name || job.snapshot.init_mounts > job.mounts.size()) return {};
  auto key = init_key(job, config);
  if (!key) return {};  // an init mount cannot be read: the cold run reports it
  auto use = [&](const Entry& e) {
    JobStart start;
    if (!e.snapshot) return start;
    start.snapshot = e.snapshot;
    start.entry = exports_func(m, kResumeExport) ? std::string(kResumeExport) : std::string("_start");
    return start;
  };
  if (auto hit = cache().find(module.get(), *key)) {
    // A sandbox with a folder keeps the file there even when another sandbox of this process
    // built the snapshot (a stat per job).
    if (hit->snapshot && !config.snapshot_dir.empty()) {
      std::error_code ec;
      const auto file = snapshot_file(config.snapshot_dir, module_digest(module), *key);
      if (!std::filesystem::exists(file, ec)) {
        std::filesystem::create_directories(config.snapshot_dir, ec);
        [[maybe_unused]] const auto saved = wasm::save_snapshot(*hit->snapshot, *key, file);  // best effort
      }
    }
    return use(*hit);
  }

  std::lock_guard build(cache().build_mutex);
  if (auto hit = cache().find(module.get(), *key)) return use(*hit);  // built while we waited
  Entry entry{.module = module, .key = *key, .snapshot = nullptr, .last_use = 0};
  std::filesystem::path file;
  // [start-up] The stamp for this module file and key, when the module's file is settled.
  std::filesystem::path stamp_path;
  std::optional<Stamp> stamp;
  std::optional<wasm::FileIdentity> verified_file;  // the snapshot file checksummed now or before
  if (!config.snapshot_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(config.snapshot_dir, ec);
    if (!ec) std::filesystem::permissions(config.snapshot_dir, std::filesystem::perms::owner_all, ec);
    file = snapshot_file(config.snapshot_dir, module_digest(module), *key);
    if (module_file && private_folder(config.snapshot_dir)) {
      stamp_path = stamp_file(config.snapshot_dir, *module_file, *key);
      stamp = read_stamp(stamp_path);
    }
    wasm::SnapshotFileCheck check;
    if (stamp && stamp->module == *module_file && stamp->digest == module_digest(module)) check.verified = stamp->snapshot;
    if (auto loaded = wasm::load_snapshot(module, module_digest(module), *key, file, &check)) {
      entry.snapshot = *loaded;
      if (check.checksummed ? wasm::identity_settled(check.identity) : check.verified == check.identity)
        verified_file = check.identity;
      // A file of another engine build serves its image but vouches for nothing here: rewritten
      // with this build's id (this process validated the module, or a file of this build did),
      // so that later processes load the module without validating it again.
      if (!wasm::snapshot_vouches_for(module_digest(module), m.bytes.size(), *key, file)) {
        [[maybe_unused]] const auto saved = wasm::save_snapshot(*entry.snapshot, *key, file);  // best effort
        verified_file.reset();  // a new file, checksummed by the next process
      }
    }
    // Otherwise (missing, corrupt, foreign): rebuilt below and the file replaced.
  }
  if (!entry.snapshot) {
    // A failed initialisation leaves the entry empty: this module's jobs start cold, and its
    // init is not retried per job. A snapshot that cannot be saved still serves this process.
    auto built = build_snapshot(module, *init_name, job, config, wasi_imports, pool);
    if (built) {
      entry.snapshot = *built;
      if (!file.empty()) {
        [[maybe_unused]] const auto saved = wasm::save_snapshot(**built, *key, file);  // best effort
      }
    }
  }
  if (!stamp_path.empty() && entry.snapshot) {
    const Stamp want{.module = *module_file, .digest = module_digest(module), .snapshot = verified_file};
    if (stamp != want) write_stamp(stamp_path, want);
  }
  cache().insert(entry);
  return use(entry);
}

}  // namespace sprawling::runtime::engine
