// The sandbox's snapshot cache (engine_snapshot.cpp): for a module exporting `wizer.initialize`,
// runs the initialisation once under a bare WASI context and hands out the captured instance
// to every later job of the same module and initialisation configuration.
#pragma once

#include <sprawling/runtime/wasm_sandbox.hpp>

#include "wasm/runtime/host.hpp"
#include "wasm/runtime/runtime.hpp"
#include "wasm/support/sha256.hpp"
#include "wasm/snapshot/snapshot.hpp"

#include <memory>
#include <span>
#include <string>

namespace sprawling::runtime::engine {

// How a job starts: from `snapshot` through `entry` (the module's `wizer.resume` when it
// exports one, else `_start`), or cold (`snapshot` null, `entry` "_start").
struct JobStart {
  std::shared_ptr<const wasm::InstanceSnapshot> snapshot;
  std::string entry = "_start";
};

// The initialisation exports accepted, in order: Wizer's historical name and Wasmtime's.
inline constexpr std::string_view kInitExports[] = {"wizer.initialize", "wizer-initialize"};
inline constexpr std::string_view kResumeExport = "wizer.resume";

// Decides how `job` starts and builds (or finds in memory, or loads from config.snapshot_dir)
// the snapshot it needs. Thread-safe. `wasi_imports` are the module's imports in order, already
// resolved by the caller. A failed initialisation is remembered (no retry per job) and the job
// runs cold; a file that does not verify is rebuilt, never run.
// [start-up] `module_file`: the identity of the module's binary file when it is settled and its
// bytes are the module's (load_module): then a stamp beside the snapshot file records the
// module's SHA-256 for that identity and which snapshot file was checksummed, so that later
// processes need neither (docs/snapshots.md, "Knowing a file without reading it").
[[nodiscard]] JobStart prepare_job_start(const std::shared_ptr<const wasm::CompiledModule>& module,
                                         const std::optional<wasm::FileIdentity>& module_file,
                                         const SandboxJob& job, const SandboxConfig& config,
                                         std::span<const wasm::HostFunctionDef* const> wasi_imports,
                                         const std::shared_ptr<wasm::ResourcePool>& pool);

// Loading without validating twice (docs/python.md): whether a snapshot file of
// config.snapshot_dir, written by this engine build for `job`'s initialisation configuration,
// names the module bytes with SHA-256 `digest` — then this build validated those bytes before and
// they may be compiled with wasm::compile_validated_before. False when the job or config use no
// snapshot folder, or the file is missing, foreign, from another build or not private to this user.
[[nodiscard]] bool snapshot_vouches_for(const wasm::Sha256Digest& digest, std::uint64_t module_size,
                                        const SandboxJob& job, const SandboxConfig& config);

// [start-up] What a stamp of config.snapshot_dir (for `job`'s initialisation configuration)
// records for the module file of identity `module_file`, which must be settled
// (wasm::identity_settled): the module's SHA-256 (true of bytes read after that identity was
// taken and found unchanged after) and, when `want_bytes` and the stamp names a verified snapshot
// file of this build that vouches for the module, that file's copy of the module, mapped (the
// module file need not be read; compile_validated_before may load the copy). nullopt when there
// is no such stamp, it names another identity, or the folder or stamp is not private to this user.
struct StampedModule {
  wasm::Sha256Digest digest{};
  std::optional<wasm::ModuleBytes> bytes;
};
[[nodiscard]] std::optional<StampedModule> stamped_module(const wasm::FileIdentity& module_file, const SandboxJob& job,
                                                          const SandboxConfig& config, bool want_bytes);

// Records the SHA-256 of a compiled module's bytes (its identity in snapshot file names), so
// that it is computed once per module per process.
void remember_module_digest(const std::shared_ptr<const wasm::CompiledModule>& module, const wasm::Sha256Digest& digest);

// Drops every in-memory snapshot (tests; a long-running host rotating the hash secret of its
// Python snapshots, docs/python.md).
void clear_snapshot_cache();

}  // namespace sprawling::runtime::engine
