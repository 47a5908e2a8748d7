// The code cache's entries: the key of a module variant's machine code (module BLAKE3, engine
// build-id, LLVM version, target CPU and features, fuel mode) and the self-checking entry format.
// Pure bytes: the storage (files) is the sandbox's (docs/compiled-tier.md, "Code cache").
#pragma once

#include "wasm/jit/jit.hpp"

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm::jit {

// Everything besides the module that the machine code depends on.
struct CacheKeyParts {
  std::string engine;    // the GNU build-id of the binary holding the engine (hex)
  std::string llvm;      // the LLVM library's version, as loaded at run time
  TargetId target;       // triple, CPU, features the code was generated for
  std::string pipeline;  // optimization and code generation settings, entry format version
};
// This process's parts (computed once); the error says why there are none (no build-id).
const std::expected<CacheKeyParts, std::string>& host_key_parts();

struct CacheKey {
  std::string material;  // every part, in full: stored in the entry and compared on read
  std::string name;      // the entry's name: BLAKE3 of the material (hex) + ".code"
};
CacheKey make_key(const CacheKeyParts& parts, std::string_view module_digest, bool metered);

// BLAKE3 (256-bit) of the bytes, hex.
std::string digest_hex(std::span<const std::uint8_t> bytes);

// An entry: "SPRWCODE", format, the key material, the payload, a BLAKE3 of both.
std::vector<std::uint8_t> encode_entry(const CacheKey& key, std::span<const std::uint8_t> payload);
// The payload of `entry` if it is whole, intact and made for exactly `key`; else why not.
std::expected<std::span<const std::uint8_t>, std::string> decode_entry(std::span<const std::uint8_t> entry,
                                                                       const CacheKey& key);

// The payload: the reasons per defined function and the object (ObjectImage).
std::vector<std::uint8_t> encode_image(const ObjectImage& image);
std::expected<ObjectImage, std::string> decode_image(std::span<const std::uint8_t> payload, std::size_t functions);

}  // namespace sprawling::wasm::jit
