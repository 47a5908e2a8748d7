// Parsing of `sprawl run` options (src/cli/options.cpp), in-process.
#include "cli/options.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace sprawling::cli {
namespace {

std::expected<RunRequest, UsageError> parse(std::vector<std::string_view> args, bool module_required = true) {
  return parse_run(args, module_required);
}

TEST(Options, DirFormsFollowWasmtimeSpellingPlusReadOnly) {
  const std::string tmp = std::filesystem::temp_directory_path().string();
  auto r = parse({"--dir", tmp + "::/data::ro", "--dir", tmp + "::/rw", "--dir=" + tmp + "::/eq", "m.wasm"});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->mounts.size(), 3U);
  EXPECT_EQ(r->mounts[0].guest, "/data");
  EXPECT_FALSE(r->mounts[0].writable);
  EXPECT_TRUE(r->mounts[1].writable);
  EXPECT_EQ(r->mounts[2].guest, "/eq");
  EXPECT_EQ(r->module, "m.wasm");
}

TEST(Options, DirAcceptsTheSingleColonReadOnlySpellingToo) {
  const std::string tmp = std::filesystem::temp_directory_path().string();
  auto r = parse({"--dir", tmp + "::/data:ro", "--dir", tmp + "::/w:rw", "m.wasm"});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->mounts[0].guest, "/data");
  EXPECT_FALSE(r->mounts[0].writable);
  EXPECT_EQ(r->mounts[1].guest, "/w");
  EXPECT_TRUE(r->mounts[1].writable);
}

TEST(Options, DirWithOnlyAHostMountsItUnderItsOwnNameAnchoredAtRoot) {
  auto r = parse({"--dir", ".", "m.wasm"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->mounts[0].guest, "/");
}

TEST(Options, DuplicateGuestPathsAreRefused) {
  const std::string tmp = std::filesystem::temp_directory_path().string();
  auto r = parse({"--dir", tmp + "::/x", "--dir", tmp + "::/x::ro", "m.wasm"});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("mounted twice"), std::string::npos);
}

TEST(Options, WasmOptionsTakeACommaSeparatedList) {
  auto r = parse({"-W", "fuel=5,timeout=2s,max-memory-size=1G", "m.wasm", "a", "--b"});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->fuel, 5U);
  EXPECT_EQ(r->timeout, std::chrono::seconds(2));
  EXPECT_EQ(r->max_memory_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(r->args, (std::vector<std::string>{"a", "--b"}));
}

TEST(Options, UnknownWasmOptionIsRefusedNamingTheSupportedOnes) {
  auto r = parse({"-W", "wide-arithmetic=y", "m.wasm"});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("supported: fuel, max-memory-size, max-table-elements, max-tables, max-memories, "
                                   "max-store-size, compile-memory, timeout, simd"),
            std::string::npos);
}

TEST(Options, SimdSwitchInWasmtimesSpellings) {
  auto plain = parse({"m.wasm"});
  ASSERT_TRUE(plain.has_value());
  EXPECT_TRUE(plain->simd);
  for (const char* off : {"simd=n", "simd=no", "simd=false"}) {
    auto r = parse({"-W", off, "m.wasm"});
    ASSERT_TRUE(r.has_value()) << off;
    EXPECT_FALSE(r->simd) << off;
  }
  for (const char* on : {"simd", "simd=y", "simd=yes", "simd=true"}) {
    auto r = parse({"-W", "simd=n", "-W", on, "m.wasm"});
    ASSERT_TRUE(r.has_value()) << on;
    EXPECT_TRUE(r->simd) << on;
  }
  auto bad = parse({"-W", "simd=maybe", "m.wasm"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "-W simd='maybe': expected y or n");
}

TEST(Options, WasmFeatureSwitchesInWasmtimeSpelling) {
  auto d = parse({"m.wasm"});
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->tail_call);
  EXPECT_TRUE(d->extended_const);
  auto off = parse({"-W", "tail-call=n,extended-const=no", "m.wasm"});
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_FALSE(off->tail_call);
  EXPECT_FALSE(off->extended_const);
  auto on = parse({"-W", "tail-call=n", "-W", "tail-call", "-W", "extended-const=y", "m.wasm"});
  ASSERT_TRUE(on.has_value()) << on.error().message;
  EXPECT_TRUE(on->tail_call);
  EXPECT_TRUE(on->extended_const);
  auto bad = parse({"-W", "tail-call=maybe", "m.wasm"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "-W tail-call='maybe': expected y or n");
  EXPECT_TRUE(d->exceptions);  // Wasmtime 47+: on by default
  auto no_exceptions = parse({"-W", "exceptions=n", "m.wasm"});
  ASSERT_TRUE(no_exceptions.has_value()) << no_exceptions.error().message;
  EXPECT_FALSE(no_exceptions->exceptions);
  EXPECT_TRUE(no_exceptions->tail_call);
  EXPECT_TRUE(d->function_references);  // Wasmtime's 3.0 releases: on by default
  auto no_refs = parse({"-W", "function-references=n", "m.wasm"});
  ASSERT_TRUE(no_refs.has_value()) << no_refs.error().message;
  EXPECT_FALSE(no_refs->function_references);
  EXPECT_TRUE(no_refs->exceptions);
  EXPECT_TRUE(d->gc);  // Wasmtime 47+: on by default
  auto no_gc = parse({"-W", "gc=n", "m.wasm"});
  ASSERT_TRUE(no_gc.has_value()) << no_gc.error().message;
  EXPECT_FALSE(no_gc->gc);
  EXPECT_TRUE(no_gc->function_references);
}

TEST(Options, RelaxedSimdSwitch) {
  auto d = parse({"m.wasm"});
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->relaxed_simd);  // Wasmtime's default
  auto off = parse({"-W", "relaxed-simd=n", "m.wasm"});
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_FALSE(off->relaxed_simd);
  EXPECT_TRUE(off->simd);
  auto bad = parse({"-W", "relaxed-simd=2", "m.wasm"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "-W relaxed-simd='2': expected y or n");
}

TEST(Options, NanCanonicalizationSwitchIsOffByDefaultAsInWasmtime) {
  auto d = parse({"m.wasm"});
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->nan_canonicalization);
  auto on = parse({"-W", "nan-canonicalization", "m.wasm"});  // bare: yes
  ASSERT_TRUE(on.has_value()) << on.error().message;
  EXPECT_TRUE(on->nan_canonicalization);
  auto off = parse({"-W", "nan-canonicalization=y", "-W", "nan-canonicalization=n", "m.wasm"});
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_FALSE(off->nan_canonicalization);
  auto bad = parse({"-W", "nan-canonicalization=maybe", "m.wasm"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "-W nan-canonicalization='maybe': expected y or n");
}

TEST(Options, MultiMemoryAndMemory64SwitchesInWasmtimeSpelling) {
  auto d = parse({"m.wasm"});
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->multi_memory);
  EXPECT_TRUE(d->memory64);
  auto off = parse({"-W", "multi-memory=n,memory64=no", "m.wasm"});
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_FALSE(off->multi_memory);
  EXPECT_FALSE(off->memory64);
  EXPECT_TRUE(off->tail_call);
  auto bad = parse({"-W", "memory64=2", "m.wasm"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "-W memory64='2': expected y or n");
}

TEST(Options, ResourceLimitsInBothSpellings) {
  auto w = parse({"-W", "max-table-elements=1000,max-tables=2,max-memories=1,max-store-size=64M", "m.wasm"});
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->max_table_elements, 1000U);
  EXPECT_EQ(w->max_tables, 2U);
  EXPECT_EQ(w->max_memories, 1U);
  EXPECT_EQ(w->max_store_bytes, std::uint64_t{64} << 20);
  EXPECT_FALSE(w->compile_memory.has_value());  // the sandbox's default
  auto c = parse({"-W", "compile-memory=512M", "m.wasm"});
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->compile_memory, std::uint64_t{512} << 20);
  auto none = parse({"-W", "compile-memory=0", "m.wasm"});
  ASSERT_TRUE(none.has_value()) << none.error().message;
  EXPECT_EQ(none->compile_memory, 0U);
  auto bad = parse({"-W", "compile-memory=lots", "m.wasm"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("-W compile-memory='lots': expected bytes"), std::string::npos) << bad.error().message;
  auto l =
      parse({"--max-table-elements", "7", "--max-tables=3", "--max-memories", "4", "--max-store-size", "1G", "m.wasm"});
  ASSERT_TRUE(l.has_value()) << l.error().message;
  EXPECT_EQ(l->max_table_elements, 7U);
  EXPECT_EQ(l->max_tables, 3U);
  EXPECT_EQ(l->max_memories, 4U);
  EXPECT_EQ(l->max_store_bytes, std::uint64_t{1} << 30);
  EXPECT_FALSE(parse({"-W", "max-tables=4294967296", "m.wasm"}).has_value());
  EXPECT_EQ(parse({"-S", "max-disk-write=2M", "m.wasm"}).value().max_disk_write_bytes, std::uint64_t{2} << 20);
  EXPECT_EQ(parse({"--max-disk-write", "3K", "m.wasm"}).value().max_disk_write_bytes, std::uint64_t{3} << 10);
  EXPECT_FALSE(parse({"-W", "max-store-size=lots", "m.wasm"}).has_value());
}

TEST(Options, WasiOptionHostcallFuelInBothSpellings) {
  EXPECT_FALSE(parse({"m.wasm"}).value().hostcall_copy_limit.has_value());
  EXPECT_EQ(parse({"-S", "hostcall-fuel=64K", "m.wasm"}).value().hostcall_copy_limit, 65536U);
  EXPECT_EQ(parse({"-Shostcall-fuel=1M", "m.wasm"}).value().hostcall_copy_limit, std::uint64_t{1} << 20);
  EXPECT_EQ(parse({"--hostcall-fuel", "100", "m.wasm"}).value().hostcall_copy_limit, 100U);
  auto bad = parse({"-S", "hostcall-fuel=lots", "m.wasm"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("expected bytes"), std::string::npos);
  // Wasmtime's other -S options grant the guest host resources: refused, naming what is supported.
  auto inherit = parse({"-S", "inherit-env", "m.wasm"});
  ASSERT_FALSE(inherit.has_value());
  EXPECT_NE(inherit.error().message.find("supported: hostcall-fuel"), std::string::npos);
  EXPECT_FALSE(parse({"-S"}).has_value());
}

TEST(Options, TierIsAutoByDefaultAndTakesInterpretAndCompile) {
  EXPECT_EQ(parse({"m.wasm"}).value().tier, runtime::ExecutionTier::Auto);
  EXPECT_EQ(parse({"--tier", "compile", "m.wasm"}).value().tier, runtime::ExecutionTier::Compile);
  EXPECT_EQ(parse({"--tier=interpret", "m.wasm"}).value().tier, runtime::ExecutionTier::Interpret);
  EXPECT_EQ(parse({"--tier", "auto", "m.wasm"}).value().tier, runtime::ExecutionTier::Auto);
  auto bad = parse({"--tier", "jit", "m.wasm"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("expected auto, interpret or compile"), std::string::npos);
}

TEST(Options, CodeCacheIsOnByDefaultAndSwitchedWithDashCOrCache) {
  EXPECT_TRUE(parse({"m.wasm"}).value().code_cache);
  EXPECT_FALSE(parse({"-C", "cache=n", "m.wasm"}).value().code_cache);
  EXPECT_TRUE(parse({"-Ccache=y", "m.wasm"}).value().code_cache);
  EXPECT_FALSE(parse({"--cache", "n", "m.wasm"}).value().code_cache);
  auto bad = parse({"-C", "cache=maybe", "m.wasm"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("expected y or n"), std::string::npos);
  auto unknown = parse({"-C", "compiler=cranelift", "m.wasm"});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("supported: cache=y|n"), std::string::npos);
}

TEST(Options, AFlagsValueIsNeverTheNextOption) {
  auto r = parse({"--json", "-c", "m.wasm"});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("--json needs a value"), std::string::npos);
  auto dash = parse({"--json", "-", "m.wasm"});
  ASSERT_TRUE(dash.has_value());
  EXPECT_EQ(dash->json_path, "-");
  EXPECT_FALSE(parse({"m.wasm", "--fuel"}).value().fuel.has_value());  // after MODULE it is the guest's
}

TEST(Options, DurationsAndSizes) {
  EXPECT_EQ(parse_duration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(parse_duration("1m"), std::chrono::minutes(1));
  EXPECT_EQ(parse_duration("1.5s"), std::chrono::milliseconds(1500));
  EXPECT_EQ(parse_duration("3"), std::chrono::seconds(3));
  EXPECT_FALSE(parse_duration("ms").has_value());
  EXPECT_FALSE(parse_duration("5 parsecs").has_value());
  EXPECT_EQ(parse_size("64K"), 65536U);
  EXPECT_EQ(parse_size("256M"), 256U << 20);
  EXPECT_EQ(parse_size("123"), 123U);
  EXPECT_FALSE(parse_size("12X").has_value());
  EXPECT_FALSE(parse_size("").has_value());
  EXPECT_FALSE(parse_size("99999999999999999999G").has_value());
}

TEST(Options, PythonModeStartsTheInterpretersArgumentsAtTheFirstOptionNotOurs) {
  auto r = parse({"--fuel", "9", "-c", "print(1)", "--fuel", "x"}, /*module_required=*/false);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->fuel, 9U);
  EXPECT_EQ(r->args, (std::vector<std::string>{"-c", "print(1)", "--fuel", "x"}));
  auto warnings = parse({"-W", "error", "script.py"}, false);
  ASSERT_TRUE(warnings.has_value());
  EXPECT_EQ(warnings->args, (std::vector<std::string>{"-W", "error", "script.py"}));
  auto dashdash = parse({"--", "--fuel"}, false);
  ASSERT_TRUE(dashdash.has_value());
  EXPECT_EQ(dashdash->args, (std::vector<std::string>{"--fuel"}));
}

}  // namespace
}  // namespace sprawling::cli
