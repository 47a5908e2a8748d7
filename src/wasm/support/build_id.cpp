// The GNU build-id (build_id.hpp) read from the ELF notes of the loaded object that holds the code.
#include "wasm/support/build_id.hpp"

#include <link.h>

#include <cstring>
#include <vector>

namespace sprawling::wasm {
namespace {

using u32 = std::uint32_t;

// The build-id note of the loaded object whose segments hold this function.
struct BuildIdSearch {
  std::uintptr_t code = 0;
  std::vector<std::uint8_t> id;
};

int find_build_id(dl_phdr_info* info, std::size_t, void* data) {
  auto& search = *static_cast<BuildIdSearch*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && search.code >= start && search.code - start < ph.p_memsz) holds = true;
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const std::uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const std::uint8_t* end = p + ph.p_memsz;
    while (end - p >= 12) {
      u32 namesz = 0, descsz = 0, type = 0;
      std::memcpy(&namesz, p, 4);
      std::memcpy(&descsz, p + 4, 4);
      std::memcpy(&type, p + 8, 4);
      const std::size_t name_at = 12, desc_at = name_at + ((namesz + 3) & ~u32{3});
      const std::size_t next = desc_at + ((descsz + 3) & ~u32{3});
      if (static_cast<std::size_t>(end - p) < next) break;
      if (type == NT_GNU_BUILD_ID && namesz == 4 && std::memcmp(p + name_at, "GNU", 4) == 0 && descsz > 0) {
        search.id.assign(p + desc_at, p + desc_at + descsz);
        return 1;
      }
      p += next;
    }
  }
  return 1;  // the object holding the engine has no build-id
}

}  // namespace

std::vector<std::uint8_t> build_id_of(const void* code) {
  BuildIdSearch search;
  search.code = reinterpret_cast<std::uintptr_t>(code);
  dl_iterate_phdr(find_build_id, &search);
  return search.id;
}

std::span<const std::uint8_t> engine_build_id() noexcept {
  static const std::vector<std::uint8_t> id = build_id_of(reinterpret_cast<const void*>(&find_build_id));
  return id;
}

}  // namespace sprawling::wasm
