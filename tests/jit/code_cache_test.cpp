// The compiled-code cache (src/wasm/jit/code_cache.cpp, src/sandbox/engine_code_cache.cpp): a
// module compiled ahead of time starts on cached machine code, and every bad entry (corrupt,
// truncated, another engine build, another CPU-feature set) ends in recompilation or the
// interpreter, never in running it; concurrent writers of one entry leave a whole one.
#include "jit/tier_fixture.hpp"
#include "sandbox/engine_code_cache.hpp"
#include "wasm/jit/code_cache.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
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
  EXPECT_EQ(files, 1u);
  same_as_interpreter(Tier::Auto);
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
