// SHA-256 (FIPS 180-4) for identities that must resist forgery: a module's content key, which a
// snapshot file binds to "validated by this engine build" (docs/python.md; the build's own
// identity is build_id.hpp's).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sprawling::wasm {

using Sha256Digest = std::array<std::uint8_t, 32>;

// The digest of `bytes`. Uses the x86 SHA extensions when the CPU has them (about 2 GB/s,
// against about 0.3 GB/s for the portable code); both give the same digest.
[[nodiscard]] Sha256Digest sha256(std::span<const std::uint8_t> bytes) noexcept;
// The same with the portable code only (tests compare the two).
[[nodiscard]] Sha256Digest sha256_portable(std::span<const std::uint8_t> bytes) noexcept;
// Whether sha256() uses the CPU's SHA extensions here.
[[nodiscard]] bool sha256_accelerated() noexcept;

// Lowercase hex of `bytes`.
[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace sprawling::wasm
