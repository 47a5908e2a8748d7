// The engine build's own identity: the GNU build-id of the binary that holds this code, which a
// snapshot file and the code cache bind to "validated or compiled by this engine build".
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sprawling::wasm {

// The GNU build-id note (as linked by `ld --build-id`, Debian's default) of the executable or
// shared library holding the engine, as raw bytes: a hash of the linked code, so two builds
// whose decoder or validator differ have different ids. Empty when the binary has no such note
// (then nothing may be trusted as validated by "this build": every load validates).
[[nodiscard]] std::span<const std::uint8_t> engine_build_id() noexcept;
// The same for the loaded object (program or shared library) whose segments hold `code`: the
// compiled tier's plugin has its own.
[[nodiscard]] std::vector<std::uint8_t> build_id_of(const void* code);

}  // namespace sprawling::wasm
