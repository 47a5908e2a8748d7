// The sandbox's snapshot cache (src/sandbox/engine_snapshot.cpp) through WasmSandbox: the init
// sees only argv[0] and the init mounts, each job gets its own argv/env/fds and a fresh copy of
// the initialised memory, failed or fd-leaking inits fall back to cold starts, and a corrupt or
// foreign snapshot file is rebuilt, never run.
#include "tests/engine/guest.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include "sandbox/engine_snapshot.hpp"
#include "wasm/text/wat.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

namespace sprawling::runtime {
namespace {

using test::TempDir;
using test::text;

// Prints "R" then digits: init runs, this job's resume count, argc and environ count seen by
// the init, fd_prestat_get(4)'s errno during init, argc, environ count and fd 4's errno now.
// `_start` (the cold path) prints "cold". INIT_BODY is spliced into `wizer.initialize`.
std::string guest(std::string_view init_extra) {
  return std::string(R"((module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 400) ".")
  (func $digit (param $at i32) (param $v i32) (i32.store8 (local.get $at) (i32.add (i32.const 48) (local.get $v))))
  (func $print (param $ptr i32) (param $len i32)
    (i32.store (i32.const 100) (local.get $ptr))
    (i32.store (i32.const 104) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 100) (i32.const 1) (i32.const 108))))
  (func (export "wizer.initialize")
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
    (drop (call $args_sizes_get (i32.const 4) (i32.const 120)))
    (drop (call $environ_sizes_get (i32.const 8) (i32.const 120)))
    (i32.store (i32.const 16) (call $fd_prestat_get (i32.const 4) (i32.const 120)))
    )") + std::string(init_extra) + R"()
  (func (export "wizer.resume")
    (i32.store (i32.const 12) (i32.add (i32.load (i32.const 12)) (i32.const 1)))
    (i32.store8 (i32.const 200) (i32.const 82))
    (call $digit (i32.const 201) (i32.load (i32.const 0)))
    (call $digit (i32.const 202) (i32.load (i32.const 12)))
    (call $digit (i32.const 203) (i32.load (i32.const 4)))
    (call $digit (i32.const 204) (i32.load (i32.const 8)))
    (call $digit (i32.const 205) (i32.load (i32.const 16)))
    (drop (call $args_sizes_get (i32.const 124) (i32.const 120)))
    (call $digit (i32.const 206) (i32.load (i32.const 124)))
    (drop (call $environ_sizes_get (i32.const 124) (i32.const 120)))
    (call $digit (i32.const 207) (i32.load (i32.const 124)))
    (call $digit (i32.const 208) (call $fd_prestat_get (i32.const 4) (i32.const 120)))
    (i32.store8 (i32.const 209) (i32.const 10))
    (call $print (i32.const 200) (i32.const 10)))
  (func (export "_start")
    (i32.store (i32.const 300) (i32.const 0x646c6f63))
    (i32.store8 (i32.const 304) (i32.const 10))
    (call $print (i32.const 300) (i32.const 5))))
)";
}

// An init that opens a directory and keeps it: the snapshot would carry an fd the job lacks.
constexpr std::string_view kLeakyInit =
    "(drop (call $path_open (i32.const 3) (i32.const 0) (i32.const 400) (i32.const 1) (i32.const 2) "
    "(i64.const 0) (i64.const 0) (i32.const 0) (i32.const 500)))";

// Init counter 1, job counter 1, init argc 1 and envc 0, fd 4 absent at init (EBADF = 8); the
// job's own argc 2, envc 1, fd 4 present (0).
constexpr std::string_view kSnapshotOutput = "R11108210\n";

class EngineSnapshot : public ::testing::Test {
 protected:
  void SetUp() override { engine::clear_snapshot_cache(); }
  void TearDown() override { engine::clear_snapshot_cache(); }

  [[nodiscard]] SandboxJob job(const std::filesystem::path& wasm) const {
    SandboxJob j = test::job_for(wasm, 10'000'000);
    j.argv = {"guest", "arg"};
    j.env = {{"KEY", "value"}};
    j.mounts = {Mount{.host = init_dir.path(), .guest = "/lib", .writable = false},
                Mount{.host = user_dir.path(), .guest = "/work", .writable = true}};
    j.snapshot.init_mounts = 1;
    return j;
  }

  static SandboxOutcome run(WasmSandbox& sandbox, const SandboxJob& j) {
    auto outcome = sandbox.run(j);
    EXPECT_TRUE(outcome.has_value()) << (outcome ? "" : outcome.error().to_string());
    return outcome ? std::move(*outcome) : SandboxOutcome{};
  }

  TempDir dir;
  TempDir init_dir;
  TempDir user_dir;
};

TEST_F(EngineSnapshot, JobsStartFromTheInitialisedInstanceWithTheirOwnArgvEnvAndMounts) {
  const auto wasm = dir.write("guest.wat", guest(""));
  WasmSandbox sandbox;
  for (int i = 0; i < 5; ++i) {
    const auto outcome = run(sandbox, job(wasm));
    EXPECT_EQ(outcome.exit, SandboxExit{Success{}});
    // The job counter is 1 every time: nothing one job wrote reaches the next.
    EXPECT_EQ(text(outcome.stdout_bytes), kSnapshotOutput) << "job " << i;
    ASSERT_TRUE(outcome.stats.has_value());
    EXPECT_TRUE(outcome.stats->from_snapshot);
  }
}

TEST_F(EngineSnapshot, DisabledOrWithoutAnInitExportTheJobStartsCold) {
  const auto wasm = dir.write("guest.wat", guest(""));
  WasmSandbox sandbox;
  auto j = job(wasm);
  j.snapshot.enabled = false;
  auto outcome = run(sandbox, j);
  EXPECT_EQ(text(outcome.stdout_bytes), "cold\n");
  EXPECT_FALSE(outcome.stats->from_snapshot);

  const auto plain = dir.write("ok.wat", test::kOkGuest);
  outcome = run(sandbox, job(plain));
  EXPECT_EQ(text(outcome.stdout_bytes), "ok\n");
  EXPECT_FALSE(outcome.stats->from_snapshot);
}

TEST_F(EngineSnapshot, AFailingOrFdLeakingInitMeansColdStarts) {
  WasmSandbox sandbox;
  for (const auto& [name, extra] : {std::pair{"trap.wat", std::string_view("(unreachable)")},
                                    std::pair{"leaky.wat", kLeakyInit}}) {
    const auto wasm = dir.write(name, guest(extra));
    for (int i = 0; i < 2; ++i) {
      const auto outcome = run(sandbox, job(wasm));
      EXPECT_EQ(outcome.exit, SandboxExit{Success{}}) << name;
      EXPECT_EQ(text(outcome.stdout_bytes), "cold\n") << name;
      EXPECT_FALSE(outcome.stats->from_snapshot) << name;
    }
  }
}

TEST_F(EngineSnapshot, TooFewMountsForTheInitMeansAColdStart) {
  const auto wasm = dir.write("guest.wat", guest(""));
  WasmSandbox sandbox;
  auto j = job(wasm);
  j.snapshot.init_mounts = 3;
  const auto outcome = run(sandbox, j);
  EXPECT_EQ(text(outcome.stdout_bytes), "cold\n");
}

std::vector<char> file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(EngineSnapshot, ASnapshotFileIsReusedAndACorruptOrForeignOneIsRebuilt) {
  const auto wasm = dir.write("guest.wat", guest(""));
  const auto snaps = dir.path() / "snapshots";
  WasmSandbox sandbox(SandboxConfig{.snapshot_dir = snaps});
  EXPECT_EQ(text(run(sandbox, job(wasm)).stdout_bytes), kSnapshotOutput);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(snaps)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  const auto good = file_bytes(files[0]);
  ASSERT_GT(good.size(), 4096u);

  // The in-memory copy gone, the file serves the next job.
  engine::clear_snapshot_cache();
  auto outcome = run(sandbox, job(wasm));
  EXPECT_EQ(text(outcome.stdout_bytes), kSnapshotOutput);
  EXPECT_TRUE(outcome.stats->from_snapshot);

  // The image's first byte is the init counter: a corrupted file that ran would print "R2...".
  // The one-page image ends where the checksummed part of the file does (the u64 at header
  // offset 128); the translated code follows it.
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(128);
    std::uint64_t image_end = 0;
    f.read(reinterpret_cast<char*>(&image_end), 8);
    ASSERT_GE(image_end, 4096u);
    f.seekp(static_cast<std::streamoff>(image_end - 4096));
    f.put(static_cast<char>(2));
  }
  engine::clear_snapshot_cache();
  outcome = run(sandbox, job(wasm));
  EXPECT_EQ(text(outcome.stdout_bytes), kSnapshotOutput);
  EXPECT_TRUE(outcome.stats->from_snapshot);
  EXPECT_EQ(file_bytes(files[0]), good) << "the corrupt file was not replaced by a rebuilt one";

  // Someone else's bytes under the same name.
  std::ofstream(files[0], std::ios::binary | std::ios::trunc) << "not a snapshot at all";
  engine::clear_snapshot_cache();
  outcome = run(sandbox, job(wasm));
  EXPECT_EQ(text(outcome.stdout_bytes), kSnapshotOutput);
  EXPECT_EQ(file_bytes(files[0]), good);
}

// [start-up] SnapshotPolicy::training_args: when the snapshot is built, a training job resumes
// from it once; the file then also carries the code of what that job called (resume, digit and
// print: three more functions in the code index), and nothing the training job did (its own
// resume count, its argv) reaches the jobs.
TEST_F(EngineSnapshot, ATrainingJobAddsTheCodeItCalledToTheFileAndNothingElse) {
  const auto wasm = dir.write("guest.wat", guest(""));
  const auto plain = dir.path() / "plain";
  const auto trained = dir.path() / "trained";
  // The metadata's size (header offset 72), which holds the code index: 48 bytes per function
  // and variant.
  auto metadata_bytes = [](const std::filesystem::path& folder) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(folder)) {
      if (e.path().extension() == ".snap") files.push_back(e.path());
    }
    EXPECT_EQ(files.size(), 1u);
    std::uint64_t bytes = 0;
    if (files.empty()) return bytes;
    std::ifstream f(files[0], std::ios::binary);
    f.seekg(72);
    f.read(reinterpret_cast<char*>(&bytes), 8);
    return bytes;
  };
  {
    WasmSandbox sandbox(SandboxConfig{.snapshot_dir = plain});
    EXPECT_EQ(text(run(sandbox, job(wasm)).stdout_bytes), kSnapshotOutput);
  }
  engine::clear_snapshot_cache();
  SandboxJob j = job(wasm);
  j.snapshot.training_args = {"one", "two", "three"};
  WasmSandbox sandbox(SandboxConfig{.snapshot_dir = trained});
  for (int i = 0; i < 2; ++i) {
    const auto outcome = run(sandbox, j);
    EXPECT_EQ(outcome.exit, SandboxExit{Success{}});
    EXPECT_EQ(text(outcome.stdout_bytes), kSnapshotOutput) << "job " << i;
    ASSERT_TRUE(outcome.stats.has_value());
    EXPECT_TRUE(outcome.stats->from_snapshot);
  }
  EXPECT_EQ(metadata_bytes(trained), metadata_bytes(plain) + 3 * 2 * 48);
  // The file serves a later process (the cache dropped) the same way.
  engine::clear_snapshot_cache();
  EXPECT_EQ(text(run(sandbox, j).stdout_bytes), kSnapshotOutput);
}

// Once a job built the snapshot file, the file vouches for the module's bytes (the next process
// loads them without validating the bodies again) — for this job's init configuration only, and
// not when the job turns snapshots off.
TEST_F(EngineSnapshot, TheSnapshotFileVouchesForTheModuleItWasBuiltFrom) {
  const auto wasm = dir.write("guest.wat", guest(""));
  const SandboxConfig config{.snapshot_dir = dir.path() / "snapshots"};
  WasmSandbox sandbox(config);
  const SandboxJob j = job(wasm);
  EXPECT_EQ(text(run(sandbox, j).stdout_bytes), kSnapshotOutput);
  // The sandbox compiled the text to this binary: the module's own bytes.
  const std::string source = guest("");
  const auto bytes = wasm::text::load_module_bytes(
      std::span(reinterpret_cast<const std::uint8_t*>(source.data()), source.size()));
  ASSERT_TRUE(bytes.has_value());
  const auto digest = wasm::sha256(*bytes);
  EXPECT_TRUE(engine::snapshot_vouches_for(digest, bytes->size(), j, config));
  SandboxJob cold = j;
  cold.snapshot.enabled = false;
  EXPECT_FALSE(engine::snapshot_vouches_for(digest, bytes->size(), cold, config));
  SandboxJob other_init = j;
  other_init.argv[0] = "another-name";
  EXPECT_FALSE(engine::snapshot_vouches_for(digest, bytes->size(), other_init, config));
  EXPECT_FALSE(engine::snapshot_vouches_for(digest, bytes->size(), j, SandboxConfig{}));

  // A file of another engine build (its build-id, at header offset 92, differs) still serves its
  // image, and is rewritten to vouch for this build.
  std::filesystem::path file;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "snapshots")) file = e.path();
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(92);
    const int first = f.get();
    f.seekp(92);
    f.put(static_cast<char>(first ^ 1));
  }
  EXPECT_FALSE(engine::snapshot_vouches_for(digest, bytes->size(), j, config));
  engine::clear_snapshot_cache();
  const auto again = run(sandbox, j);
  EXPECT_EQ(text(again.stdout_bytes), kSnapshotOutput);
  EXPECT_TRUE(again.stats->from_snapshot);
  EXPECT_TRUE(engine::snapshot_vouches_for(digest, bytes->size(), j, config));
}

// [start-up] A binary module file that has settled (unchanged for 2 s) is known by a stamp beside
// its snapshot: its SHA-256, and the snapshot file once checksummed, whose copy of the module is
// then mapped instead of reading the module. Any change to either file (a new ctime) means
// reading, hashing and checksumming again: a changed module never runs an old image, and a
// damaged snapshot file is rebuilt as before.
TEST_F(EngineSnapshot, ASettledModuleIsKnownByItsStampAndAnyChangeIsSeen) {
  auto binary = [](std::string_view text) {
    auto bytes = wasm::text::load_module_bytes(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
    EXPECT_TRUE(bytes.has_value());
    return bytes.value_or(std::vector<std::uint8_t>{});
  };
  const auto first = binary(guest(""));
  // The same module printing 'S' instead of 'R' (82 and 83: the same encoded size).
  std::string other_text = guest("");
  const auto at = other_text.find("(i32.const 82)");
  ASSERT_NE(at, std::string::npos);
  other_text.replace(at, 14, "(i32.const 83)");
  const auto other = binary(other_text);
  ASSERT_EQ(first.size(), other.size());

  const auto wasm = dir.write("guest.wasm", first);
  const SandboxConfig config{.snapshot_dir = dir.path() / "snapshots"};
  WasmSandbox sandbox(config);
  const SandboxJob j = job(wasm);
  EXPECT_EQ(text(run(sandbox, j).stdout_bytes), kSnapshotOutput);  // builds and saves the snapshot
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));   // both files settle
  engine::clear_snapshot_cache();
  EXPECT_EQ(text(run(sandbox, j).stdout_bytes), kSnapshotOutput);  // checksums the file, writes the stamp

  auto identity_of = [&](const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    auto id = wasm::file_identity(fd);
    ::close(fd);
    return id.value_or(wasm::FileIdentity{});
  };
  const auto stamped = engine::stamped_module(identity_of(wasm), j, config, /*want_bytes=*/true);
  ASSERT_TRUE(stamped.has_value()) << "no stamp for the settled module";
  EXPECT_EQ(stamped->digest, wasm::sha256(first));
  ASSERT_TRUE(stamped->bytes.has_value()) << "the checksummed snapshot file's copy of the module is not offered";
  EXPECT_EQ(*stamped->bytes, first);
  SandboxJob other_init = j;
  other_init.argv[0] = "another-name";
  EXPECT_FALSE(engine::stamped_module(identity_of(wasm), other_init, config, true).has_value());

  // A damaged snapshot file (the image's first byte is the init counter): its identity moved
  // past the stamp's, so it is checksummed, refused and rebuilt ("R1", never "R2").
  std::filesystem::path snap;
  for (const auto& e : std::filesystem::directory_iterator(config.snapshot_dir))
    if (e.path().extension() == ".snap") snap = e.path();
  {
    std::fstream f(snap, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(128);
    std::uint64_t image_end = 0;
    f.read(reinterpret_cast<char*>(&image_end), 8);
    ASSERT_GE(image_end, 4096u);
    f.seekp(static_cast<std::streamoff>(image_end - 4096));
    f.put(static_cast<char>(2));
  }
  engine::clear_snapshot_cache();
  EXPECT_EQ(text(run(sandbox, j).stdout_bytes), kSnapshotOutput);

  // The module rewritten in place, same size and inode: its identity changes, so its stamp no
  // longer applies and the new bytes run (their own snapshot: "S1...").
  {
    std::ofstream out(wasm, std::ios::binary | std::ios::in | std::ios::out);
    out.write(reinterpret_cast<const char*>(other.data()), static_cast<std::streamsize>(other.size()));
  }
  EXPECT_FALSE(engine::stamped_module(identity_of(wasm), j, config, true).has_value());
  const std::string changed = text(run(sandbox, j).stdout_bytes);
  EXPECT_EQ(changed, "S" + std::string(kSnapshotOutput.substr(1))) << "the changed module ran an old image";
}

// A guest that could write the snapshot folder could forge such a certificate: a writable mount
// that holds the folder is refused; a read-only one runs.
TEST_F(EngineSnapshot, AWritableMountHoldingTheSnapshotFolderIsRefused) {
  const auto wasm = dir.write("guest.wat", guest(""));
  WasmSandbox sandbox(SandboxConfig{.snapshot_dir = user_dir.path() / "cache" / "snapshots"});
  auto refused = sandbox.run(job(wasm));  // mounts user_dir writable at /work
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::InvalidJob);
  EXPECT_NE(refused.error().message.find("holds the snapshot folder"), std::string::npos) << refused.error().message;
  SandboxJob read_only = job(wasm);
  read_only.mounts[1].writable = false;
  EXPECT_EQ(text(run(sandbox, read_only).stdout_bytes), kSnapshotOutput);
  WasmSandbox elsewhere(SandboxConfig{.snapshot_dir = dir.path() / "snapshots"});
  EXPECT_EQ(text(run(elsewhere, job(wasm)).stdout_bytes), kSnapshotOutput);
}

}  // namespace
}  // namespace sprawling::runtime
