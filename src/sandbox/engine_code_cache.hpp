// The compiled-code cache on disk (SandboxConfig::code_cache_dir): the engine's entries kept as
// files, written to a temporary file and renamed into place, bounded in size (least recently used
// entries go first). Safe for several processes sharing one folder.
#pragma once

#include "wasm/runtime/runtime.hpp"

#include <cstdint>
#include <filesystem>

namespace sprawling::runtime::engine {

class FileCodeCache final : public wasm::CodeCacheStorage {
 public:
  FileCodeCache(std::filesystem::path dir, std::uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

  [[nodiscard]] std::optional<std::vector<std::uint8_t>> read(std::string_view name) override;
  [[nodiscard]] std::expected<void, std::string> write(std::string_view name,
                                                       std::span<const std::uint8_t> bytes) override;
  // Device, inode, size, modification and change times of the entry's file (the user's own,
  // regular, not a link), which a write (a new file renamed over it) or any change alters.
  [[nodiscard]] std::optional<std::string> identity(std::string_view name) override;
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

  // Removes the least recently used entries (and temporary files of writers gone for an hour)
  // until the entries take at most 70% of the bound; `keep` stays.
  void evict(std::string_view keep);

 private:
  std::filesystem::path dir_;
  std::uint64_t max_bytes_;
};

}  // namespace sprawling::runtime::engine
