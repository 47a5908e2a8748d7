// The compiled-code cache (src/wasm/jit/code_cache.cpp, src/sandbox/engine_code_cache.cpp): a
// module compiled ahead of time starts on cached machine code, and every bad entry (corrupt,
// truncated, another engine build, another CPU-feature set) ends in recompilation or the
// interpreter, never in running it; concurrent writers of one entry leave a whole one.
#include "jit/tier_fixture.hpp"
#include "sandbox/engine_code_cache.hpp"
#include "wasm/jit/code_cache.hpp"
#include "wasm/jit/object_linker.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <elf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

namespace sprawling::wasm {
namespace {

using jit_testing::compile_wat;
using jit_testing::Outcome;
using jit_testing::run;
namespace fs = std::filesystem;

// Calls, a loop with memory, a host call, a trap: enough for results and fuel to tell code apart.
constexpr std::string_view kModule = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (memory 1)
  (func $sq (param i32) (result i32) (i32.mul (local.get 0) (local.get 0)))
  (func (export "work") (param $n i32) (result i32)
    (local $i i32) (local $acc i32)
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store (i32.const 16) (call $sq (local.get $i)))
        (local.set $acc (call $add1 (i32.add (local.get $acc) (i32.load (i32.const 16)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $acc))
  (func (export "div") (param i32 i32) (result i32) (i32.div_u (local.get 0) (local.get 1))))
)";

class CodeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / ("sprawl-code-cache-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter++));
    cache_ = std::make_shared<runtime::engine::FileCodeCache>(dir_, std::uint64_t{64} << 20);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // A fresh CompiledModule: nothing compiled or looked up yet.
  static std::shared_ptr<const CompiledModule> fresh() { return compile_wat(kModule); }

  PrecompileReport fill(bool metered) {
    auto module = fresh();
    auto report = precompile(*module, metered, *cache_);
    EXPECT_TRUE(report.has_value()) << (report ? "" : report.error());
    return report ? *report : PrecompileReport{};
  }
  fs::path entry_path(const PrecompileReport& r) const { return dir_ / r.entry; }

  static std::vector<std::uint8_t> slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void spit(const fs::path& p, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }

  // Every tier and fuel mode gives the interpreter's outcome (results, trap, fuel) with the cache.
  void same_as_interpreter(Tier tier) {
    for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30},
                                              std::optional<std::uint64_t>{500}}) {
      const auto module = fresh();
      for (const auto& [name, args] : {std::pair{"work", std::vector<Value>{Value::i32(300)}},
                                       std::pair{"div", std::vector<Value>{Value::i32(7), Value::i32(0)}}}) {
        const Outcome want = run(module, Tier::Interpret, name, args, fuel);
        const Outcome got = run(module, tier, name, args, fuel, {}, cache_);
        EXPECT_EQ(want, got) << name << " tier " << static_cast<int>(tier);
      }
    }
  }

  fs::path dir_;
  std::shared_ptr<runtime::engine::FileCodeCache> cache_;
};

TEST_F(CodeCacheTest, PrecompiledModuleStartsOnCachedCode) {
  const PrecompileReport r = fill(false);
  EXPECT_EQ(r.functions, 3u);
  EXPECT_EQ(r.compiled, 3u);
  EXPECT_TRUE(fs::is_regular_file(entry_path(r)));
  EXPECT_EQ(fs::file_size(entry_path(r)), r.entry_bytes);
  EXPECT_EQ(fs::status(dir_).permissions() & fs::perms::all, fs::perms::owner_all);

  const auto module = fresh();
  const jit::ModuleCode* code = module->impl().jit_for(kUnmetered, Tier::Auto, cache_);
  ASSERT_NE(code, nullptr);
  EXPECT_TRUE(code->from_cache);
  EXPECT_EQ(code->error, "");
  EXPECT_EQ(code->compiled, 3u);
  for (const auto& e : code->entries) EXPECT_NE(e.entry.load(), nullptr);
  // The metered variant was not compiled: auto leaves it to the interpreter.
  EXPECT_EQ(module->impl().jit_for(kMetered, Tier::Auto, cache_), nullptr);
}

// SPRAWLING_JIT_PERFMAP=1: code loaded from the cache is named in perf's map for JIT code, each
// function's entry (`wasm::<name>`) and its body (`wasm::<name>.body`) at the addresses the
// module's code holds, so samples in either are named.
TEST_F(CodeCacheTest, CachedCodeNamesEntriesAndBodiesInThePerfMap) {
  (void)fill(false);
  const fs::path map = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
  fs::remove(map);
  ::setenv("SPRAWLING_JIT_PERFMAP", "1", 1);
  const auto module = fresh();
  const jit::ModuleCode* code = module->impl().jit_for(kUnmetered, Tier::Auto, cache_);
  ::unsetenv("SPRAWLING_JIT_PERFMAP");
  ASSERT_NE(code, nullptr);
  std::map<std::uintptr_t, std::string> named;  // address -> name, as written
  std::ifstream in(map);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string start;
    std::string size;
    std::string name;
    fields >> start >> size >> name;
    named[static_cast<std::uintptr_t>(std::stoull(start, nullptr, 16))] = name;
  }
  fs::remove(map);
  std::size_t bodies = 0;
  for (std::size_t i = 0; i < code->entries.size(); ++i) {
    const auto entry = named.find(reinterpret_cast<std::uintptr_t>(code->entries[i].entry.load()));
    ASSERT_NE(entry, named.end()) << "function " << i;
    EXPECT_TRUE(entry->second.starts_with("wasm::") && !entry->second.ends_with(".body")) << entry->second;
    if (code->bodies[i] == nullptr) continue;
    const auto body = named.find(reinterpret_cast<std::uintptr_t>(code->bodies[i]));
    ASSERT_NE(body, named.end()) << "function " << i;
    EXPECT_EQ(body->second, entry->second + ".body");
    ++bodies;
  }
  EXPECT_GT(bodies, 0u);
  EXPECT_EQ(named.size(), code->entries.size() + bodies);
}

TEST_F(CodeCacheTest, CachedCodeGivesTheInterpretersResultsTrapsAndFuelInEveryTier) {
  (void)fill(false);
  (void)fill(true);
  same_as_interpreter(Tier::Auto);
  same_as_interpreter(Tier::Compile);
}

TEST_F(CodeCacheTest, AutoWithoutCachedCodeInterpretsAndCompilesNothing) {
  const auto module = fresh();
  EXPECT_EQ(module->impl().jit_for(kUnmetered, Tier::Auto, cache_), nullptr);
  EXPECT_EQ(module->impl().jit_for(kUnmetered, Tier::Auto, nullptr), nullptr);
  same_as_interpreter(Tier::Auto);
}

// Machine code from the cache translates nothing up front: only the function the run enters is
// translated, and a trap in a callee called natively (never translated in this store) is located
// as the interpreter locates it (jit::enter resolves it then).
TEST_F(CodeCacheTest, CachedCodeTranslatesOnlyWhatItMustAndLocatesTrapsInUntranslatedCallees) {
  constexpr std::string_view kCalls = R"((module
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (func $div (param i32 i32) (result i32) (i32.div_u (local.get 0) (local.get 1)))
  (func $unused (param i32) (result i32) (i32.mul (local.get 0) (i32.const 3)))
  (func (export "via") (param i32 i32) (result i32) (i32.add (i32.const 1) (call $div (local.get 0) (local.get 1)))))
)";
  for (const bool metered : {false, true}) {
    auto report = precompile(*compile_wat(kCalls), metered, *cache_);
    ASSERT_TRUE(report.has_value()) << report.error();
    const std::optional<std::uint64_t> fuel = metered ? std::optional<std::uint64_t>{1u << 20} : std::nullopt;
    for (const std::uint32_t divisor : {0u, 5u}) {
      const std::vector<Value> args{Value::i32(40), Value::i32(divisor)};
      const Outcome want = run(compile_wat(kCalls), Tier::Interpret, "via", args, fuel);
      const auto module = compile_wat(kCalls);
      const Outcome got = run(module, Tier::Auto, "via", args, fuel, {}, cache_);
      EXPECT_EQ(want, got) << "divisor " << divisor << " metered " << metered;
      // `via` (the run's entry), and `div` only when it trapped (to locate the trap).
      EXPECT_EQ(module->impl().translated_count(metered), divisor == 0 ? 2u : 1u);
      EXPECT_TRUE(module->impl().jit_for(metered ? kMetered : kUnmetered, Tier::Auto, cache_)->from_cache);
    }
  }
}

// A bad entry: Tier::Auto runs the interpreter, Tier::Compile recompiles (and says why).
void expect_rejected(const std::shared_ptr<runtime::engine::FileCodeCache>& cache, std::string_view why) {
  auto module = compile_wat(kModule);
  EXPECT_EQ(module->impl().jit_for(kUnmetered, Tier::Auto, cache), nullptr);
  module = compile_wat(kModule);
  const jit::ModuleCode* code = module->impl().jit_for(kUnmetered, Tier::Compile, cache);
  ASSERT_NE(code, nullptr);
  EXPECT_FALSE(code->from_cache);
  EXPECT_NE(code->cache_miss.find(why), std::string::npos) << code->cache_miss;
  EXPECT_EQ(code->compiled, 3u);
}

TEST_F(CodeCacheTest, CorruptEntryIsRecompiled) {
  const PrecompileReport r = fill(false);
  auto bytes = slurp(entry_path(r));
  bytes[bytes.size() - 100] ^= 0x40;  // inside the object's code or symbols
  spit(entry_path(r), bytes);
  expect_rejected(cache_, "checksum mismatch");
  same_as_interpreter(Tier::Compile);
}

TEST_F(CodeCacheTest, TruncatedEntryIsRecompiled) {
  const PrecompileReport r = fill(false);
  auto bytes = slurp(entry_path(r));
  bytes.resize(bytes.size() / 2);
  spit(entry_path(r), bytes);
  expect_rejected(cache_, "truncated");
  spit(entry_path(r), {});
  expect_rejected(cache_, "no header");
}

// An entry made for other key parts, placed where this engine looks: the full key in its header
// differs, so it is never run.
void plant_foreign_entry(const fs::path& dir, const PrecompileReport& r, const jit::CacheKeyParts& parts) {
  auto module = compile_wat(kModule);
  auto image = jit::compile_object(module->impl(), false, CompileOptions{});
  ASSERT_TRUE(image.has_value());
  const jit::CacheKey key = jit::make_key(parts, jit::digest_hex(module->module().bytes), false);
  const auto entry = jit::encode_entry(key, jit::encode_image(*image));
  std::ofstream(dir / r.entry, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(entry.data()), static_cast<std::streamsize>(entry.size()));
}

TEST_F(CodeCacheTest, EntryOfAnotherEngineBuildIsRecompiled) {
  const PrecompileReport r = fill(false);
  ASSERT_TRUE(jit::host_key_parts().has_value());
  jit::CacheKeyParts parts = *jit::host_key_parts();
  parts.engine = "0123456789abcdef0123456789abcdef01234567";
  plant_foreign_entry(dir_, r, parts);
  expect_rejected(cache_, "made for another key");
  parts = *jit::host_key_parts();
  parts.llvm = "18.1.8";
  plant_foreign_entry(dir_, r, parts);
  expect_rejected(cache_, "made for another key");
}

TEST_F(CodeCacheTest, EntryOfAnotherCpuFeatureSetIsRecompiled) {
  const PrecompileReport r = fill(false);
  jit::CacheKeyParts parts = *jit::host_key_parts();
  EXPECT_NE(parts.target.features, "");
  parts.target.features += ",+avx512vp2intersect-not-this-cpu";
  plant_foreign_entry(dir_, r, parts);
  expect_rejected(cache_, "made for another key");
  parts = *jit::host_key_parts();
  parts.target.cpu = "pentium4";
  plant_foreign_entry(dir_, r, parts);
  expect_rejected(cache_, "made for another key");
}

TEST_F(CodeCacheTest, EntriesAreKeyedOnFuelModeModuleAndTarget) {
  const auto& parts = *jit::host_key_parts();
  const auto a = jit::make_key(parts, "aa", false);
  EXPECT_NE(a.name, jit::make_key(parts, "aa", true).name);
  EXPECT_NE(a.name, jit::make_key(parts, "ab", false).name);
  // The name is made without the plugin (engine build, CPUID words, fuel, module); what the
  // plugin adds (target, LLVM, compiler build) is in the material checked on every read.
  jit::CacheKeyParts other = parts;
  other.cpu_id += "00";
  EXPECT_NE(a.name, jit::make_key(other, "aa", false).name);
  other = parts;
  other.target.features += ",-sse4.2";
  EXPECT_NE(a.material, jit::make_key(other, "aa", false).material);
  other = parts;
  other.plugin = "0123";
  EXPECT_NE(a.material, jit::make_key(other, "aa", false).material);
  EXPECT_EQ(a.name, jit::make_key(parts, "aa", false).name);
  EXPECT_EQ(a.name, jit::entry_name(*jit::host_name_parts(), "aa", false));
  EXPECT_EQ(parts.engine.size(), 40u) << "a GNU build-id (SHA-1 by default)";
}

TEST_F(CodeCacheTest, ConcurrentWritersOfOneEntryLeaveAWholeEntry) {
  // Separate modules, stores and storage objects on one folder, as separate processes would be.
  std::vector<std::thread> writers;
  std::atomic<int> ok{0};
  for (int t = 0; t < 3; ++t) {
    writers.emplace_back([&] {
      auto module = compile_wat(kModule);
      runtime::engine::FileCodeCache cache(dir_, std::uint64_t{64} << 20);
      for (int round = 0; round < 2; ++round) {
        if (precompile(*module, false, cache).has_value()) ++ok;
      }
    });
  }
  // Meanwhile, readers: whatever they see is whole or absent, never run half.
  for (int i = 0; i < 10; ++i) {
    const auto module = fresh();
    const jit::ModuleCode* code = module->impl().jit_for(kUnmetered, Tier::Auto, cache_);
    if (code != nullptr) {
      EXPECT_EQ(code->compiled, 3u);
    }
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(ok.load(), 6);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    ++files;
    EXPECT_TRUE(e.path().extension() == ".code") << e.path() << ": a temporary file left behind";
  }
  EXPECT_EQ(files, 2u);  // the entry, and the plugin's key parts the engine's linker checks it with
  same_as_interpreter(Tier::Auto);
}

// Cached code is linked by the engine (object_linker.cpp) without the plugin once the cache
// holds the plugin's key parts (precompile writes them); SPRAWLING_JIT_LINKER=llvm links it with
// LLVM's JITLink instead. Both publish the same functions and run as the interpreter does; with
// the key parts gone, the plugin links the entry and writes them again.
TEST_F(CodeCacheTest, TheEnginesLinkerRunsCachedCodeAsLlvmsDoes) {
  const PrecompileReport unmetered = fill(false);
  (void)fill(true);
  const auto load = [&](bool engine) {
    if (engine)
      ::unsetenv("SPRAWLING_JIT_LINKER");
    else
      ::setenv("SPRAWLING_JIT_LINKER", "llvm", 1);
    auto module = fresh();
    const jit::ModuleCode* code = module->impl().jit_for(kUnmetered, Tier::Auto, cache_);
    EXPECT_NE(code, nullptr);
    if (code == nullptr) return std::pair{std::vector<bool>{}, false};
    EXPECT_TRUE(code->from_cache);
    EXPECT_EQ(code->compiled, 3u);
    std::vector<bool> published;
    for (const auto& e : code->entries) published.push_back(e.entry.load() != nullptr);
    for (void* body : code->bodies) published.push_back(body != nullptr);
    // The frame bounds, read from the objects whichever linker links them.
    EXPECT_GT(code->segment_slots, 0u);
    EXPECT_GT(code->segment_bytes, 0u);
    const bool by_engine = !code->linked.empty() && code->impl == nullptr;
    same_as_interpreter(Tier::Auto);
    same_as_interpreter(Tier::Compile);
    return std::pair{published, by_engine};
  };
  const auto [llvm, llvm_by_engine] = load(false);
  const auto [engine, engine_by_engine] = load(true);
  EXPECT_FALSE(llvm_by_engine);
  EXPECT_TRUE(engine_by_engine);
  EXPECT_EQ(llvm, engine);
  EXPECT_EQ(std::ranges::count(engine, true), 3 + 3);  // entries, and bodies: $sq is called, the others exported

  // Without the key parts, the plugin checks and links the entry, and keeps them again.
  std::size_t removed = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    const auto entry = slurp(e.path());
    const std::string_view text(reinterpret_cast<const char*>(entry.data()), entry.size());
    if (text.find("the plugin's key parts") != std::string_view::npos) removed += fs::remove(e.path()) ? 1 : 0;
  }
  EXPECT_EQ(removed, 1u);
  EXPECT_FALSE(load(true).second);
  EXPECT_TRUE(load(true).second);
  EXPECT_TRUE(fs::exists(entry_path(unmetered)));
}

// The engine's linker reads only within an object's bytes and refuses what it does not link: a
// truncated object, bytes changed anywhere in its headers, a relocation kind it does not know.
// (Run under AddressSanitizer by the sanitizer build: a read past the object would stop it.)
TEST_F(CodeCacheTest, TheEnginesLinkerRefusesMalformedObjects) {
  auto module = fresh();
  auto image = jit::compile_object(module->impl(), true, CompileOptions{});
  ASSERT_TRUE(image.has_value());
  ASSERT_EQ(image->objects.size(), 1u);
  const std::vector<std::uint8_t>& object = image->objects[0];
  const auto link = [](const std::vector<std::uint8_t>& bytes) {
    const std::span<const std::uint8_t> one(bytes);
    return jit::link_objects(std::span(&one, 1), jit::runtime_symbols());
  };
  {
    auto whole = link(object);
    ASSERT_TRUE(whole.has_value()) << whole.error();
    EXPECT_TRUE(whole->symbols.contains(jit::entry_symbol(0)));
    EXPECT_TRUE(whole->frames.known);
  }
  for (std::size_t size = 0; size < object.size(); size += 1 + size / 8) {
    const std::vector<std::uint8_t> cut(object.begin(), object.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_FALSE(link(cut).has_value()) << size;
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, object.data(), sizeof eh);
  const std::size_t headers_end = eh.e_shoff + std::size_t{eh.e_shnum} * sizeof(Elf64_Shdr);
  std::uint64_t seed = 0x5eed;
  const auto next = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  std::size_t refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::uint8_t> bad = object;
    const std::size_t at = round % 2 == 0 ? next() % sizeof eh : eh.e_shoff + next() % (headers_end - eh.e_shoff);
    bad[at] ^= static_cast<std::uint8_t>(1 + next() % 255);
    refused += link(bad).has_value() ? 0 : 1;
  }
  EXPECT_GT(refused, 600u);  // many header fields (addresses, flags, versions) are not read
  // The first relocation of code, made a kind the linker does not know (R_X86_64_32).
  std::vector<std::uint8_t> bad = object;
  bool changed = false;
  for (std::size_t i = 0; i < eh.e_shnum && !changed; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, object.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_RELA || sh.sh_size == 0) continue;
    Elf64_Rela rela;
    std::memcpy(&rela, object.data() + sh.sh_offset, sizeof rela);
    rela.r_info = ELF64_R_INFO(ELF64_R_SYM(rela.r_info), R_X86_64_32);
    std::memcpy(bad.data() + sh.sh_offset, &rela, sizeof rela);
    changed = true;
  }
  ASSERT_TRUE(changed);
  auto refused_kind = link(bad);
  ASSERT_FALSE(refused_kind.has_value());
  EXPECT_NE(refused_kind.error().find("relocation type 10 is not linked here"), std::string::npos) << refused_kind.error();
}

// A large entry verified in full is stamped with its file's identity (device, inode, size,
// times); a later read that finds the same identity skips its checksum. Any change to the file
// (a byte flipped here, a new entry renamed over it) changes the identity, so the checksum runs
// again and a damaged entry is refused as before.
TEST_F(CodeCacheTest, AnEntryVerifiedBeforeIsNotHashedAgainUntilItsFileChanges) {
  jit::code_cache_set_stamp_from(0);  // every entry counts as large here
  const PrecompileReport r = fill(false);
  const auto load = [&] {
    auto module = fresh();
    const jit::ModuleCode* code = module->impl().jit_for(kUnmetered, Tier::Auto, cache_);
    EXPECT_NE(code, nullptr);
    EXPECT_TRUE(code == nullptr || code->from_cache);
    return code != nullptr && code->checksum_skipped;
  };
  const auto files = [&] { return std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}); };
  EXPECT_EQ(files(), 2);  // the entry, the plugin's key parts
  EXPECT_FALSE(load());   // verified in full, then stamped
  EXPECT_EQ(files(), 3);
  EXPECT_TRUE(load());
  EXPECT_TRUE(load());
  same_as_interpreter(Tier::Auto);
  // Written again (a new file renamed over it): checked in full, stamped again.
  (void)fill(false);
  EXPECT_FALSE(load());
  EXPECT_TRUE(load());
  // Damaged in place: its change time moves, so the checksum runs and refuses it.
  auto bytes = slurp(entry_path(r));
  bytes[bytes.size() - 100] ^= 0x40;
  spit(entry_path(r), bytes);
  expect_rejected(cache_, "checksum mismatch");
  jit::code_cache_set_stamp_from(std::nullopt);
}

TEST_F(CodeCacheTest, SizeBoundEvictsTheLeastRecentlyUsed) {
  const PrecompileReport unmetered = fill(false);
  const PrecompileReport metered = fill(true);
  // Make the unmetered entry the older one, then bound the cache below both.
  const auto old_time = fs::last_write_time(entry_path(metered)) - std::chrono::hours(2);
  fs::last_write_time(entry_path(unmetered), old_time);
  runtime::engine::FileCodeCache small(dir_, unmetered.entry_bytes + metered.entry_bytes - 1);
  small.evict(metered.entry);
  EXPECT_FALSE(fs::exists(entry_path(unmetered)));
  EXPECT_TRUE(fs::exists(entry_path(metered)));
  // An entry larger than the bound is not written at all.
  runtime::engine::FileCodeCache tiny(dir_, 100);
  auto module = fresh();
  auto r = precompile(*module, false, tiny);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("larger than the cache's bound"), std::string::npos) << r.error();
}

TEST_F(CodeCacheTest, FolderWritableByOthersIsNotUsed) {
  const PrecompileReport r = fill(false);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_write);
  auto module = fresh();
  EXPECT_EQ(module->impl().jit_for(kUnmetered, Tier::Auto, cache_), nullptr);
  auto written = precompile(*module, false, *cache_);
  ASSERT_FALSE(written.has_value());
  EXPECT_NE(written.error().find("writable by others"), std::string::npos) << written.error();
  fs::permissions(dir_, fs::perms::owner_all);
  EXPECT_TRUE(fs::exists(entry_path(r)));
}

}  // namespace
}  // namespace sprawling::wasm
