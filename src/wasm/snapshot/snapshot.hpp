// Instance snapshots (Wizer-style, inside the engine): the state of an instance after its
// initialisation export ran — linear memories, globals, tables, dropped segments — captured once
// and restored into later instances copy-on-write, without rerunning segments or the start function.
#pragma once

#include "wasm/runtime/runtime.hpp"
#include "wasm/support/sha256.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sprawling::wasm {

// Immutable and shareable between threads and Stores. A memory image is a sealed memfd (or a
// page-aligned range of a verified snapshot file) mapped MAP_PRIVATE into each restored memory,
// so a restored instance pays for the pages it touches, not for the image's size.
class InstanceSnapshot {
 public:
  struct Impl;
  explicit InstanceSnapshot(std::unique_ptr<Impl> impl);
  ~InstanceSnapshot();
  InstanceSnapshot(const InstanceSnapshot&) = delete;
  InstanceSnapshot& operator=(const InstanceSnapshot&) = delete;

  // The module it was taken from; Store::instantiate refuses any other.
  [[nodiscard]] const std::shared_ptr<const CompiledModule>& module() const noexcept;
  // Memory 0's size when captured, and the bytes of its image (trailing zero pages trimmed).
  [[nodiscard]] std::uint64_t memory_bytes() const noexcept;
  [[nodiscard]] std::uint64_t image_bytes() const noexcept;
  // Pages of 4 KiB holding a non-zero byte, over all memories.
  [[nodiscard]] std::uint64_t nonzero_pages() const noexcept;
  [[nodiscard]] const Impl& impl() const noexcept { return *impl_; }
  // [start-up] Adds to code_functions the defined functions that ran in `instance`, which a store
  // that tracked first calls (Store::track_first_calls) restored from this snapshot: a training
  // job's, so that the file saved from this snapshot also carries the code jobs call first after
  // resuming. Call it before the snapshot is shared (it is not synchronised).
  void add_code_functions(const Instance& instance);

 private:
  std::unique_ptr<Impl> impl_;
};

// Captures `instance` as it is now (call it between invocations, never from inside one).
// Refused, with the reason, when the state is not the instance's own: an imported memory,
// table or mutable global, a table holding a function of another instance, a non-null
// externref in a table or global.
[[nodiscard]] std::expected<std::shared_ptr<InstanceSnapshot>, std::string> capture_snapshot(const Instance& instance);

// The on-disk form: a 160-byte header (magic, format version, the module's SHA-256 and size,
// the caller's key, a checksum of the metadata and images, the engine build-id), the
// globals/tables/segment state and the index of the translated code, then each memory image
// page-aligned so that it can be mapped from the file itself, then the translated code of the
// snapshot's code_functions in both variants (each function with its own checksum, checked when
// it is first used). Written to a temporary file (mode 0600) and renamed into place, so an
// existing file never changes. Only a module compile() accepted can be snapshotted, so the
// file also records that this build validated the module (snapshot_vouches_for).
[[nodiscard]] std::expected<void, std::string> save_snapshot(const InstanceSnapshot& snapshot, std::uint64_t key,
                                                             const std::filesystem::path& path);
// [start-up] A file's identity as the kernel keeps it. Any write, truncation, rename over it or
// metadata change gives the file a new ctime (set by the kernel to the current time; no call
// sets it to a chosen value), and a replaced file has another inode: so a file whose identity
// equals one recorded earlier still holds the bytes it held then, provided the recorded ctime
// was "settled" (identity_settled) when the bytes were read — see docs/snapshots.md, "Knowing
// a file without reading it", for the rule and what it does not cover.
struct FileIdentity {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::uint64_t size = 0;
  std::uint64_t mtime_ns = 0;
  std::uint64_t ctime_ns = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};
// The identity of the open file `fd`; nullopt when fstat fails or it is not a regular file.
[[nodiscard]] std::optional<FileIdentity> file_identity(int fd) noexcept;
[[nodiscard]] FileIdentity file_identity(const struct stat& st) noexcept;
// Whether the file's last change (ctime) lies kSettleSeconds or more before now: then a write
// from now on cannot leave ctime equal to the recorded one, however coarse the file system's
// timestamps (a write in the same clock tick as the recorded change is what this excludes).
inline constexpr std::uint64_t kSettleSeconds = 2;
[[nodiscard]] bool identity_settled(const FileIdentity& identity) noexcept;

// [start-up] How load_snapshot checks the file's checksum, and what it reports back.
struct SnapshotFileCheck {
  // In: a file of this identity was loaded and its checksum verified before (a stamp the caller
  // keeps, as the sandbox does beside the file): a file with exactly this identity is loaded
  // without reading its images for the checksum. Any difference, and the checksum is computed.
  std::optional<FileIdentity> verified;
  // Out: the identity of the file loaded, and whether this load computed and matched its checksum.
  FileIdentity identity;
  bool checksummed = false;
};

// Loads and verifies a file written by save_snapshot for `module` and `key`: wrong magic or
// version, another module, another key, a bad checksum or a truncated file are errors (the
// caller rebuilds), never an image that runs. A file written by this engine build (its build-id
// and interpreter handler table) also attaches its translated code to `module`. `module_digest` is sha256(module's bytes), which a
// caller loading many snapshots of one module computes once. `check`: see SnapshotFileCheck.
[[nodiscard]] std::expected<std::shared_ptr<const InstanceSnapshot>, std::string> load_snapshot(
    const std::shared_ptr<const CompiledModule>& module, const Sha256Digest& module_digest, std::uint64_t key,
    const std::filesystem::path& path, SnapshotFileCheck* check = nullptr);

// Whether the file at `path` is a snapshot that this engine build wrote for the module whose
// bytes have SHA-256 `module_digest` (and `module_size` bytes) and `key` — that is, whether this
// build validated those bytes before, so compile_validated_before() may load them. Reads only
// the header. Trusted only as the snapshot folder is: the file must be a regular file (not a
// symlink) owned by this user with no permission for group or others, in a folder owned by this
// user that group and others cannot write; its header must name this build's non-empty
// build-id (engine_build_id). False on anything else, and then the caller validates.
[[nodiscard]] bool snapshot_vouches_for(const Sha256Digest& module_digest, std::uint64_t module_size,
                                        std::uint64_t key, const std::filesystem::path& path);

// [start-up] The copy of the module that a snapshot file carries (format 4), mapped read-only,
// when the file at `path` has exactly identity `verified` — a file that load_snapshot checksummed
// and whose copy it compared with the module's bytes, as the caller's stamp says — and its header
// names `module_digest`, `module_size` and `key`; the file must be a regular file of this user,
// private to it (as snapshot_vouches_for requires). nullopt otherwise: the caller reads the module.
[[nodiscard]] std::optional<ModuleBytes> snapshot_module_bytes(const std::filesystem::path& path,
                                                               const Sha256Digest& module_digest,
                                                               std::uint64_t module_size, std::uint64_t key,
                                                               const FileIdentity& verified);

// A 64-bit content hash of a byte range (word-wise multiply-xorshift, four lanes): the snapshot
// file's checksum against accidental damage (not forgery: that is the folder's permissions).
[[nodiscard]] std::uint64_t snapshot_hash(std::span<const std::uint8_t> bytes) noexcept;

}  // namespace sprawling::wasm
