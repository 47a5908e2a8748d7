// The code cache's entries: the key of a module variant's machine code (module SHA-256, engine and
// plugin build-ids, LLVM version, target CPU and features, fuel mode) and the self-checking entry
// format. Pure bytes: the storage (files) is the sandbox's (docs/compiled-tier.md, "Code cache").
#pragma once

#include "wasm/jit/jit.hpp"

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm::jit {

// Everything besides the module that the machine code depends on. The first two are known without
// the plugin and name the entry, so a process whose cache has no entry for its module never loads
// the plugin (nor libLLVM); the rest come from the plugin and are checked once an entry is found.
struct CacheKeyParts {
  std::string engine;    // the GNU build-id of the binary holding the engine (hex)
  std::string cpu_id;    // the CPU's identification and feature words (CPUID, XCR0), hex
  std::string plugin;    // the GNU build-id of the plugin (the compiler), hex
  std::string llvm;      // the LLVM library's version, as loaded at run time
  TargetId target;       // triple, CPU, features the code was generated for
  std::string pipeline;  // optimization and code generation settings, entry format version
};
// This process's parts known without the plugin (engine, cpu_id, pipeline), computed once; the error says
// why there are none (no build-id).
const std::expected<CacheKeyParts, std::string>& host_name_parts();
// All of this process's parts (loads the plugin; computed once); the error says why there are none.
const std::expected<CacheKeyParts, std::string>& host_key_parts();

// The entry's name: SHA-256 (hex) of the engine, CPU, fuel mode, module digest and entry format,
// + ".code". Needs only host_name_parts().
std::string entry_name(const CacheKeyParts& parts, std::string_view module_digest, bool metered);

struct CacheKey {
  std::string material;  // every part, in full: stored in the entry and compared on read
  std::string name;      // entry_name() of the same parts
};
CacheKey make_key(const CacheKeyParts& parts, std::string_view module_digest, bool metered);

// SHA-256 of the bytes, hex (a module's digest as the key spells it).
std::string digest_hex(std::span<const std::uint8_t> bytes);

// An entry: "SPRWCODE", format, the key material, the payload, a SHA-256 of both.
std::vector<std::uint8_t> encode_entry(const CacheKey& key, std::span<const std::uint8_t> payload);
// The payload of `entry` if it is whole, intact and made for exactly `key`; else why not.
// `verify` false: every check but the SHA-256 (an entry verified before: stamps, code_cache.cpp).
std::expected<std::span<const std::uint8_t>, std::string> decode_entry(std::span<const std::uint8_t> entry,
                                                                       const CacheKey& key, bool verify = true);

// The payload: the reasons per defined function and the object (ObjectImage).
std::vector<std::uint8_t> encode_image(const ObjectImage& image);
// The image in `payload` (its object a view into payload).
std::expected<ObjectView, std::string> decode_image(std::span<const std::uint8_t> payload, std::size_t functions);

// The hot set: tier-up's objects (TierUpObject) kept in the code cache per module variant, an
// entry per function and an index entry listing them, each keyed as a module's code is (so a
// different engine, plugin, LLVM, CPU or module finds none). Called on the tier-up thread.
// Keeps `object` of defined function `defined` and adds it to the index; the error says why not.
std::expected<void, std::string> hot_set_add(const CompiledModule::Impl& cm, const ModuleCode& code,
                                             CodeCacheStorage& cache, std::uint32_t defined,
                                             const TierUpObject& object);
// For tests: the entry size from which a verified entry is stamped and later reads with the same
// identity skip its checksum (code_cache.cpp, stamps); nullopt: the default, 1 MiB.
void code_cache_set_stamp_from(std::optional<std::size_t> bytes);
// The functions the hot set of this module variant holds (its index), read with the key parts the
// cache remembers: none when it has none, or when the cache does not remember them (the plugin
// is never loaded for this).
std::vector<std::uint32_t> hot_set_listed(const CompiledModule::Impl& cm, bool metered, CodeCacheStorage& cache);
// Records that `defined` turned hot but its compile did not finish (the process ended first: a
// function that turns hot while a job ends, as in CPython's finalization, would otherwise be
// requested, and the plugin loaded for it, by every job and kept by none).
std::expected<void, std::string> hot_set_want(const CompiledModule::Impl& cm, const ModuleCode& code,
                                              CodeCacheStorage& cache, std::uint32_t defined);
// Links every function of the hot set that `code` has no entry for yet (the engine's linker,
// else link_tier_up_object); returns how many, in `refused` why each entry it could not use was
// refused, in `quick` the linked functions that are quick code (ModuleCode::quick), with the
// upgrades begun of each, and in `wanted` the functions earlier processes wanted compiled
// (hot_set_want), which this process then compiles without waiting for their counts.
std::size_t hot_set_load(const CompiledModule::Impl& cm, ModuleCode& code, CodeCacheStorage& cache,
                         std::vector<std::string>& refused, std::vector<QuickFunction>& quick,
                         std::vector<std::uint32_t>& wanted);
// Records that an upgrade of `defined` begins (a count the hot set keeps per function, since a
// process may end before the upgrade does); returns the upgrades begun before this one.
std::uint32_t hot_set_begin_upgrade(const CompiledModule::Impl& cm, const ModuleCode& code, CodeCacheStorage& cache,
                                    std::uint32_t defined);

}  // namespace sprawling::wasm::jit
