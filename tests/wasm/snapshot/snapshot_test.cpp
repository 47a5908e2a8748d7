// Instance snapshots (src/wasm/snapshot/snapshot.cpp): what a capture holds, that a restore reruns neither
// segments nor the start function, copy-on-write independence of restored instances, recycled
// reservations coming back zeroed, the checksummed file (corrupt/foreign/truncated refused) and
// the translated code it carries.
#include "wasm/engine_fixtures.hpp"
#include "wasm/icode/translator.hpp"
#include "wasm/support/build_id.hpp"

#include "wasm/snapshot/snapshot_impl.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <unistd.h>

namespace sprawling::wasm {
namespace {

using testing::compile_fixture;
using testing::export_func;

std::uint32_t call_i32(Store& store, const Instance& inst, std::string_view name, std::vector<Value> args = {}) {
  auto r = store.invoke(export_func(inst, name), args);
  EXPECT_TRUE(r.has_value()) << name << ": " << (r ? "" : r.error().message);
  return r && !r->empty() ? static_cast<std::uint32_t>((*r)[0].bits) : 0xDEADu;
}

// Instantiates the guest, runs its init export and captures it.
std::shared_ptr<const InstanceSnapshot> initialised_snapshot(const std::shared_ptr<const CompiledModule>& module) {
  Store store;
  auto inst = store.instantiate(module, {});
  EXPECT_TRUE(inst.has_value());
  if (!inst) return nullptr;
  EXPECT_TRUE(store.invoke(export_func(**inst, "wizer.initialize"), {}).has_value());
  auto snap = capture_snapshot(**inst);
  EXPECT_TRUE(snap.has_value()) << (snap ? "" : snap.error());
  return snap ? *snap : nullptr;
}

// Every piece of state the init left behind, seen from a restored instance.
void expect_initialised_state(Store& store, const Instance& inst) {
  EXPECT_EQ(call_i32(store, inst, "counter"), 1u) << "the start function ran again (or its effect was lost)";
  EXPECT_EQ(call_i32(store, inst, "inited"), 42u);
  EXPECT_EQ(call_i32(store, inst, "size"), 3u);
  EXPECT_EQ(call_i32(store, inst, "load", {Value::i32(100)}), 0xabcdefu);
  EXPECT_EQ(call_i32(store, inst, "load", {Value::i32(0x2fff0)}), 7u);
  std::uint32_t hell = 0;
  std::memcpy(&hell, "hell", 4);
  EXPECT_EQ(call_i32(store, inst, "load", {Value::i32(16)}), hell);
  std::uint32_t pass = 0;
  std::memcpy(&pass, "pass", 4);
  EXPECT_EQ(call_i32(store, inst, "load", {Value::i32(200)}), pass);
  EXPECT_EQ(call_i32(store, inst, "call", {Value::i32(0)}), 11u);
  EXPECT_EQ(call_i32(store, inst, "call", {Value::i32(1)}), 22u);
  EXPECT_EQ(call_i32(store, inst, "call_fref"), 22u);
  // The segments dropped during init stay dropped.
  auto mi = store.invoke(export_func(inst, "memory_init_again"), {});
  ASSERT_FALSE(mi.has_value());
  EXPECT_EQ(mi.error().kind, TrapKind::OutOfBoundsMemoryAccess);
  auto ti = store.invoke(export_func(inst, "table_init_again"), {});
  ASSERT_FALSE(ti.has_value());
  EXPECT_EQ(ti.error().kind, TrapKind::OutOfBoundsTableAccess);
}

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("sprawling-snapshot-test-" + std::to_string(::getpid()) + "-" + name);
}

TEST(Snapshot, CaptureHoldsSizeAndTrimmedImage) {
  auto module = compile_fixture("snapshot_guest");
  auto snap = initialised_snapshot(module);
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(snap->memory_bytes(), 3 * kPageSize);
  // The last non-zero byte is at 0x2fff0 (page 3 of wasm = the last 4 KiB page of the memory).
  EXPECT_EQ(snap->image_bytes(), 0x30000u);
  EXPECT_EQ(snap->nonzero_pages(), 2u);  // page 0 (16, 100, 200) and the page holding 0x2fff0
  EXPECT_EQ(snap->module(), module);
}

TEST(Snapshot, RestoreRerunsNeitherSegmentsNorStart) {
  auto module = compile_fixture("snapshot_guest");
  auto snap = initialised_snapshot(module);
  ASSERT_NE(snap, nullptr);
  Store store;
  auto inst = store.instantiate(module, {}, snap.get());
  ASSERT_TRUE(inst.has_value()) << inst.error().message;
  expect_initialised_state(store, **inst);
  // Memory past the image is zero and grows as usual.
  EXPECT_EQ(call_i32(store, **inst, "grow", {Value::i32(1)}), 3u);
  EXPECT_EQ(call_i32(store, **inst, "load", {Value::i32(0x3fff0)}), 0u);
}

TEST(Snapshot, RestoredInstancesAreCopyOnWriteAndIndependent) {
  auto module = compile_fixture("snapshot_guest");
  auto snap = initialised_snapshot(module);
  ASSERT_NE(snap, nullptr);
  auto pool = std::make_shared<ResourcePool>();
  for (int round = 0; round < 5; ++round) {
    Store a({}, pool);
    Store b({}, pool);
    auto ia = a.instantiate(module, {}, snap.get());
    auto ib = b.instantiate(module, {}, snap.get());
    ASSERT_TRUE(ia && ib);
    call_i32(a, **ia, "store", {Value::i32(100), Value::i32(1)});
    call_i32(a, **ia, "store", {Value::i32(0x2fff0), Value::i32(2)});
    EXPECT_EQ(call_i32(a, **ia, "load", {Value::i32(100)}), 1u);
    EXPECT_EQ(call_i32(b, **ib, "load", {Value::i32(100)}), 0xabcdefu) << "round " << round;
    EXPECT_EQ(call_i32(b, **ib, "load", {Value::i32(0x2fff0)}), 7u);
    expect_initialised_state(b, **ib);
  }
  // A reservation that held an image goes back to the pool zeroed: a plain instance sees only
  // its own data segment, nothing of the image.
  for (int i = 0; i < 3; ++i) {
    Store plain({}, pool);
    auto inst = plain.instantiate(module, {});
    ASSERT_TRUE(inst.has_value());
    EXPECT_EQ(call_i32(plain, **inst, "size"), 1u);
    EXPECT_EQ(call_i32(plain, **inst, "load", {Value::i32(100)}), 0u);
    EXPECT_EQ(call_i32(plain, **inst, "load", {Value::i32(200)}), 0u);
    EXPECT_EQ(call_i32(plain, **inst, "counter"), 1u);
    EXPECT_EQ(call_i32(plain, **inst, "grow", {Value::i32(2)}), 1u);
    EXPECT_EQ(call_i32(plain, **inst, "load", {Value::i32(0x2fff0)}), 0u);
  }
}

TEST(Snapshot, InstantiateRefusesAnotherModulesSnapshot) {
  auto module = compile_fixture("snapshot_guest");
  auto other = compile_fixture("snapshot_guest");  // same bytes, another CompiledModule
  auto snap = initialised_snapshot(module);
  ASSERT_NE(snap, nullptr);
  Store store;
  auto inst = store.instantiate(other, {}, snap.get());
  ASSERT_FALSE(inst.has_value());
  EXPECT_EQ(inst.error().message, "the snapshot was taken from another module");
}

TEST(Snapshot, RestoreOverTheMemoryCapIsALinkError) {
  auto module = compile_fixture("snapshot_guest");
  auto snap = initialised_snapshot(module);
  ASSERT_NE(snap, nullptr);
  Store store(StoreLimits{.max_memory_bytes = 2 * kPageSize});
  auto inst = store.instantiate(module, {}, snap.get());
  ASSERT_FALSE(inst.has_value());
  EXPECT_EQ(inst.error().kind, InstantiationError::Kind::Link);
}

TEST(Snapshot, ImportedMemoryIsRefused) {
  auto module = compile_fixture("snapshot_imported_memory");
  Store store;
  MemoryInst* mem = store.add_memory(MemoryType{Limits{1, std::nullopt}});
  std::vector<Extern> imports{mem};
  auto inst = store.instantiate(module, imports);
  ASSERT_TRUE(inst.has_value());
  auto snap = capture_snapshot(**inst);
  ASSERT_FALSE(snap.has_value());
  EXPECT_NE(snap.error().find("imports a memory"), std::string::npos) << snap.error();
}

TEST(SnapshotFile, RoundTripRestoresTheSameState) {
  auto module = compile_fixture("snapshot_guest");
  auto snap = initialised_snapshot(module);
  ASSERT_NE(snap, nullptr);
  const auto path = temp_path("roundtrip");
  ASSERT_TRUE(save_snapshot(*snap, 1234, path).has_value());
  auto loaded = load_snapshot(module, sha256(module->module().bytes), 1234, path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error();
  EXPECT_EQ((*loaded)->image_bytes(), snap->image_bytes());
  EXPECT_EQ((*loaded)->nonzero_pages(), snap->nonzero_pages());
  // The file may go away: the mapping keeps the image alive.
  std::filesystem::remove(path);
  for (int i = 0; i < 3; ++i) {
    Store store;
    auto inst = store.instantiate(module, {}, loaded->get());
    ASSERT_TRUE(inst.has_value()) << inst.error().message;
    expect_initialised_state(store, **inst);
    call_i32(store, **inst, "store", {Value::i32(100), Value::i32(5)});
  }
}

TEST(SnapshotFile, CorruptForeignOrTruncatedFilesAreRefused) {
  auto module = compile_fixture("snapshot_guest");
  auto snap = initialised_snapshot(module);
  ASSERT_NE(snap, nullptr);
  const auto path = temp_path("corrupt");
  ASSERT_TRUE(save_snapshot(*snap, 7, path).has_value());
  const auto size = std::filesystem::file_size(path);

  auto refused_with = [&](std::uint64_t key, const char* words) {
    auto loaded = load_snapshot(module, sha256(module->module().bytes), key, path);
    ASSERT_FALSE(loaded.has_value()) << "a bad snapshot file was accepted (" << words << ")";
    EXPECT_NE(loaded.error().find(words), std::string::npos) << loaded.error();
  };
  refused_with(8, "another initialisation configuration");

  // One flipped bit in the image (its last page, the one holding 0x2fff0, ends where the
  // checksummed part of the file ends: the u64 at header offset 128).
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(128);
    std::uint64_t checked_end = 0;
    f.read(reinterpret_cast<char*>(&checked_end), 8);
    ASSERT_LE(checked_end, size);
    f.seekp(static_cast<std::streamoff>(checked_end - 16));
    f.put(static_cast<char>(0x01));
  }
  refused_with(7, "checksum mismatch");

  ASSERT_TRUE(save_snapshot(*snap, 7, path).has_value());
  std::filesystem::resize_file(path, size - 4096);
  refused_with(7, "size does not match");

  ASSERT_TRUE(save_snapshot(*snap, 7, path).has_value());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.put('X');
  }
  refused_with(7, "bad magic");

  // Another module's snapshot (different bytes) is refused too.
  ASSERT_TRUE(save_snapshot(*snap, 7, path).has_value());
  auto other = compile_fixture("snapshot_imported_memory");
  auto loaded = load_snapshot(other, sha256(other->module().bytes), 7, path);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_NE(loaded.error().find("another module"), std::string::npos) << loaded.error();
  std::filesystem::remove(path);
}

// [snapshot code] The file carries the translated code of the functions the initialisation ran
// (the start function and the init export: defined functions 2 and 3), in both variants; a
// load by this build attaches it to the module, which copies it instead of translating. Code
// whose bytes fail their checksum is translated afresh, and another build's code is not used.
TEST(SnapshotFile, CarriesTheCodeOfTheFunctionsTheInitialisationRan) {
  auto module = compile_fixture("snapshot_guest");
  Store store;
  store.track_first_calls();
  auto inst = store.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  ASSERT_TRUE(store.invoke(export_func(**inst, "wizer.initialize"), {}).has_value());
  auto snap = capture_snapshot(**inst);
  ASSERT_TRUE(snap.has_value()) << snap.error();
  EXPECT_EQ((*snap)->impl().code_functions, (std::vector<std::uint32_t>{2, 3}));
  const auto path = temp_path("code");
  ASSERT_TRUE(save_snapshot(**snap, 7, path).has_value());

  // A fresh compile of the same bytes, nothing translated yet.
  auto fresh = compile_fixture("snapshot_guest");
  const Sha256Digest digest = sha256(fresh->module().bytes);
  auto loaded = load_snapshot(fresh, digest, 7, path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error();
  EXPECT_EQ((*loaded)->impl().code_functions, (std::vector<std::uint32_t>{2, 3}));
  const auto code = fresh->impl().pretranslated_source();
  ASSERT_NE(code, nullptr);
  const CompiledModule::Impl& cm = fresh->impl();
  std::uint64_t payload_bytes = 0;  // the code's: words and trap sites (u32 pairs) of each function
  for (const bool metered : {false, true}) {
    for (const std::uint32_t f : {2u, 3u}) {
      auto adopted = pretranslated_code(*code, f, metered);
      ASSERT_TRUE(adopted.has_value()) << "function " << f << (metered ? " metered" : "");
      const CompiledFunc made = translate_function(cm.module, cm.canonical_type, f, metered);
      payload_bytes += made.code.size() * 4 + made.trap_sites.size() * 8;
      EXPECT_EQ(adopted->code, made.code);
      EXPECT_EQ(adopted->trap_sites, made.trap_sites);
      EXPECT_EQ(adopted->frame_slots, made.frame_slots);
      EXPECT_EQ(adopted->num_locals, made.num_locals);
    }
    EXPECT_FALSE(pretranslated_code(*code, 4, metered).has_value()) << "`counter` never ran during init";
  }
  {
    Store job;
    auto restored = job.instantiate(fresh, {}, loaded->get());
    ASSERT_TRUE(restored.has_value()) << restored.error().message;
    expect_initialised_state(job, **restored);
  }

  // Damage in the code (the last function's last bytes: the code starts on the page after the
  // checksummed part, which ends at the u64 at header offset 128, and the module's copy follows
  // it) makes that function's code refused, not the file.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(128);
    std::uint64_t checked_end = 0;
    f.read(reinterpret_cast<char*>(&checked_end), 8);
    const std::uint64_t code_end = (checked_end + 4095) / 4096 * 4096 + payload_bytes;
    f.seekg(static_cast<std::streamoff>(code_end - 4));
    const int last = f.get();
    f.seekp(static_cast<std::streamoff>(code_end - 4));
    f.put(static_cast<char>(last ^ 0x10));
  }
  auto damaged_module = compile_fixture("snapshot_guest");
  auto damaged = load_snapshot(damaged_module, digest, 7, path);
  ASSERT_TRUE(damaged.has_value()) << damaged.error();
  const auto damaged_code = damaged_module->impl().pretranslated_source();
  ASSERT_NE(damaged_code, nullptr);
  EXPECT_FALSE(pretranslated_code(*damaged_code, 3, true).has_value()) << "the last function's code was damaged";
  EXPECT_TRUE(pretranslated_code(*damaged_code, 2, false).has_value());
  // [start-up] A load that checksums the file checks all its code too: damaged code leaves the
  // file unverified (a caller would not record it as checked), and the damaged entry is refused.
  {
    SnapshotFileCheck check;
    auto checked_module = compile_fixture("snapshot_guest");
    ASSERT_TRUE(load_snapshot(checked_module, digest, 7, path, &check).has_value());
    EXPECT_FALSE(check.checksummed) << "a file with damaged code was reported as verified";
    const auto checked_code = checked_module->impl().pretranslated_source();
    ASSERT_NE(checked_code, nullptr);
    EXPECT_FALSE(pretranslated_code(*checked_code, 3, true).has_value());
    EXPECT_TRUE(pretranslated_code(*checked_code, 2, false).has_value());
  }
  {
    Store job;
    auto restored = job.instantiate(damaged_module, {}, damaged->get());
    ASSERT_TRUE(restored.has_value()) << restored.error().message;
    expect_initialised_state(job, **restored);
  }

  // Another build's file (build-id at header offset 92) serves its image but not its code.
  ASSERT_TRUE(save_snapshot(**snap, 7, path).has_value());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(92);
    const int first = f.get();
    f.seekp(92);
    f.put(static_cast<char>(first ^ 1));
  }
  auto foreign_module = compile_fixture("snapshot_guest");
  auto foreign = load_snapshot(foreign_module, digest, 7, path);
  ASSERT_TRUE(foreign.has_value()) << foreign.error();
  EXPECT_EQ(foreign_module->impl().pretranslated_source(), nullptr);
  std::filesystem::remove(path);
}

// [start-up] A caller that verified a file before (same identity: inode, size, mtime, ctime)
// loads it without the checksum and may map the file's copy of the module instead of reading the
// module; a file written since (a new ctime) is checksummed again, and a damaged copy of the
// module is refused like damaged images.
// [start-up] The sandbox's training job: what ran in a store restored from the snapshot (and
// tracking first calls) joins the snapshot's code functions; nothing it wrote reaches the snapshot.
TEST(Snapshot, AddCodeFunctionsTakesWhatRanInAnInstanceRestoredFromIt) {
  auto module = compile_fixture("snapshot_guest");
  Store store;
  store.track_first_calls();
  auto inst = store.instantiate(module, {});
  ASSERT_TRUE(inst.has_value());
  ASSERT_TRUE(store.invoke(export_func(**inst, "wizer.initialize"), {}).has_value());
  auto snap = capture_snapshot(**inst);
  ASSERT_TRUE(snap.has_value()) << snap.error();
  ASSERT_EQ((*snap)->impl().code_functions, (std::vector<std::uint32_t>{2, 3}));
  {
    Store training;
    training.track_first_calls();
    auto restored = training.instantiate(module, {}, snap->get());
    ASSERT_TRUE(restored.has_value()) << restored.error().message;
    const std::vector<Value> args{Value::i32(100), Value::i32(5)};
    ASSERT_TRUE(training.invoke(export_func(**restored, "store"), args).has_value());
    EXPECT_EQ(call_i32(training, **restored, "counter"), 1u);
    (*snap)->add_code_functions(**restored);
  }
  EXPECT_EQ((*snap)->impl().code_functions, (std::vector<std::uint32_t>{2, 3, 4, 7}));
  {
    // An instance not restored from this snapshot (another compile of the same bytes) adds nothing.
    auto other = compile_fixture("snapshot_guest");
    Store unrelated;
    auto plain = unrelated.instantiate(other, {});
    ASSERT_TRUE(plain.has_value());
    EXPECT_EQ(call_i32(unrelated, **plain, "inited"), 0u);
    (*snap)->add_code_functions(**plain);
    EXPECT_EQ((*snap)->impl().code_functions, (std::vector<std::uint32_t>{2, 3, 4, 7}));
  }
  // The training's store wrote 5 at 100: a job restored afterwards sees the initialised state.
  Store job;
  auto restored = job.instantiate(module, {}, snap->get());
  ASSERT_TRUE(restored.has_value()) << restored.error().message;
  expect_initialised_state(job, **restored);
  // And a file saved from it carries all four functions' code.
  const auto path = temp_path("trained");
  ASSERT_TRUE(save_snapshot(**snap, 7, path).has_value());
  auto fresh = compile_fixture("snapshot_guest");
  auto loaded = load_snapshot(fresh, sha256(fresh->module().bytes), 7, path);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error();
  EXPECT_EQ((*loaded)->impl().code_functions, (std::vector<std::uint32_t>{2, 3, 4, 7}));
  const auto code = fresh->impl().pretranslated_source();
  ASSERT_NE(code, nullptr);
  EXPECT_TRUE(pretranslated_code(*code, 7, false).has_value());
  EXPECT_TRUE(pretranslated_code(*code, 7, true).has_value());
}

TEST(SnapshotFile, AVerifiedIdentitySkipsTheChecksumAndMapsTheModuleCopyOnlyForThatFile) {
  auto module = compile_fixture("snapshot_guest");
  auto snap = initialised_snapshot(module);
  ASSERT_NE(snap, nullptr);
  const auto path = temp_path("identity");
  ASSERT_TRUE(save_snapshot(*snap, 7, path).has_value());
  const auto& bytes = module->module().bytes;
  const Sha256Digest digest = sha256(bytes);

  SnapshotFileCheck first;
  ASSERT_TRUE(load_snapshot(compile_fixture("snapshot_guest"), digest, 7, path, &first).has_value());
  EXPECT_TRUE(first.checksummed);
  SnapshotFileCheck again{.verified = first.identity, .identity = {}, .checksummed = false};
  auto fresh = compile_fixture("snapshot_guest");
  auto loaded = load_snapshot(fresh, digest, 7, path, &again);
  ASSERT_TRUE(loaded.has_value()) << loaded.error();
  EXPECT_FALSE(again.checksummed) << "a file of the verified identity was checksummed again";
  EXPECT_EQ(again.identity, first.identity);
  {
    Store job;
    auto restored = job.instantiate(fresh, {}, loaded->get());
    ASSERT_TRUE(restored.has_value()) << restored.error().message;
    expect_initialised_state(job, **restored);
  }

  auto copy = snapshot_module_bytes(path, digest, bytes.size(), 7, first.identity);
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(*copy, bytes);
  auto from_copy = compile_validated_before(std::move(*copy));
  ASSERT_TRUE(from_copy.has_value());
  EXPECT_EQ(from_copy->get()->module().code.size(), module->module().code.size());
  FileIdentity other = first.identity;
  other.ctime_ns += 1;
  EXPECT_FALSE(snapshot_module_bytes(path, digest, bytes.size(), 7, other).has_value());
  EXPECT_FALSE(snapshot_module_bytes(path, digest, bytes.size(), 8, first.identity).has_value());
  Sha256Digest wrong = digest;
  wrong[0] ^= 1;
  EXPECT_FALSE(snapshot_module_bytes(path, wrong, bytes.size(), 7, first.identity).has_value());

  // One flipped bit in the module's copy (the file's last byte): the file's identity changes, so
  // the stamp's identity no longer matches, the checksum runs and the copy is compared. (On a
  // file system with coarse timestamps the write may land in the tick of the save: the byte is
  // written again until ctime moves, which is what the sandbox's 2 s settling rule waits out.)
  const auto size = std::filesystem::file_size(path);
  auto identity_now = [&] {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    auto id = file_identity(fd);
    ::close(fd);
    return id.value_or(FileIdentity{});
  };
  int flipped = -1;
  for (int attempt = 0; attempt < 200 && identity_now() == first.identity; ++attempt) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size - 1));
    const int last = f.get();
    if (flipped < 0) flipped = last ^ 0x01;
    f.seekp(static_cast<std::streamoff>(size - 1));
    f.put(static_cast<char>(flipped));
    f.close();
    if (identity_now() == first.identity) ::usleep(5000);
  }
  SnapshotFileCheck stale{.verified = first.identity, .identity = {}, .checksummed = false};
  auto damaged = load_snapshot(compile_fixture("snapshot_guest"), digest, 7, path, &stale);
  ASSERT_FALSE(damaged.has_value()) << "a damaged copy of the module was accepted";
  EXPECT_NE(damaged.error().find("copy of the module differs"), std::string::npos) << damaged.error();
  EXPECT_NE(stale.identity, first.identity);
  EXPECT_FALSE(snapshot_module_bytes(path, digest, bytes.size(), 7, first.identity).has_value());
  std::filesystem::remove(path);
}

// A snapshot file is also this build's certificate that it validated the module: it vouches
// only for those bytes and that key, only from a private file in a private folder, and only
// for the build that wrote it.
TEST(SnapshotFile, VouchesOnlyForItsModuleFromAPrivateFileOfThisBuild) {
  ASSERT_FALSE(engine_build_id().empty());
  auto module = compile_fixture("snapshot_guest");
  auto snap = initialised_snapshot(module);
  ASSERT_NE(snap, nullptr);
  const auto dir = temp_path("vouch");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  const auto path = dir / "m.snap";
  ASSERT_TRUE(save_snapshot(*snap, 7, path).has_value());
  const auto& bytes = module->module().bytes;
  const Sha256Digest digest = sha256(bytes);
  EXPECT_TRUE(snapshot_vouches_for(digest, bytes.size(), 7, path));

  Sha256Digest other = digest;
  other[31] ^= 1;
  EXPECT_FALSE(snapshot_vouches_for(other, bytes.size(), 7, path));
  EXPECT_FALSE(snapshot_vouches_for(digest, bytes.size() + 1, 7, path));
  EXPECT_FALSE(snapshot_vouches_for(digest, bytes.size(), 8, path));
  EXPECT_FALSE(snapshot_vouches_for(digest, bytes.size(), 7, dir / "missing.snap"));

  // Not through a symlink, not when group or others may read or write the file or write the folder.
  std::filesystem::create_symlink(path, dir / "link.snap");
  EXPECT_FALSE(snapshot_vouches_for(digest, bytes.size(), 7, dir / "link.snap"));
  std::filesystem::permissions(path, std::filesystem::perms::group_read, std::filesystem::perm_options::add);
  EXPECT_FALSE(snapshot_vouches_for(digest, bytes.size(), 7, path));
  std::filesystem::permissions(path, std::filesystem::perms::group_read, std::filesystem::perm_options::remove);
  EXPECT_TRUE(snapshot_vouches_for(digest, bytes.size(), 7, path));
  std::filesystem::permissions(dir, std::filesystem::perms::others_write, std::filesystem::perm_options::add);
  EXPECT_FALSE(snapshot_vouches_for(digest, bytes.size(), 7, path));
  std::filesystem::permissions(dir, std::filesystem::perms::others_write, std::filesystem::perm_options::remove);

  // Another build's file (its build-id differs in one byte, at header offset 92) vouches for nothing.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(92);
    const int first = f.get();
    f.seekp(92);
    f.put(static_cast<char>(first ^ 1));
  }
  EXPECT_FALSE(snapshot_vouches_for(digest, bytes.size(), 7, path));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sprawling::wasm
