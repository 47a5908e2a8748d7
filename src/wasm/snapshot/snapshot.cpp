// Instance snapshots: capture an instance's memories/globals/tables into sealed memfds, restore
// them copy-on-write (MAP_PRIVATE over the memory's reservation), and save/load them as
// checksummed, page-aligned files that also carry the module's translated code.
#include "wasm/snapshot/snapshot_impl.hpp"
#include "wasm/interp/interpreter.hpp"
#include "wasm/support/build_id.hpp"

#include "wasm/icode/internal_verify.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <unordered_map>

namespace sprawling::wasm {

namespace {

constexpr std::uint64_t kHostPage = 4096;
// 2: the module is named by its SHA-256 and the header records the engine build-id.
// 3: the translated code of the snapshot's functions follows the images (checked_bytes says
//    where the whole-file checksum ends).
// 4: a copy of the module's bytes follows the code, page-aligned (module_at, header offset 136).
constexpr std::uint32_t kFormatVersion = 4;
constexpr char kMagic[8] = {'S', 'P', 'R', 'W', 'S', 'N', 'A', 'P'};
constexpr std::size_t kHeaderBytes = 160;
constexpr std::size_t kMaxBuildId = 36;
constexpr std::size_t kBuildIdEnd = 128;  // the build-id is at [92, 128); format 3's fields follow
// A code index entry: defined index, variant, params, results, locals, frame slots, words,
// trap sites (u32 each), payload offset, checksum (u64 each).
constexpr std::size_t kCodeEntryBytes = 8 * 4 + 2 * 8;

std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

bool page_is_zero(const std::uint8_t* p) {
  std::uint64_t acc = 0;
  for (std::size_t i = 0; i < kHostPage; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc |= w;
  }
  return acc == 0;
}

// Writes all of `bytes` at `offset`, retrying short writes.
bool write_all(int fd, const std::uint8_t* bytes, std::uint64_t size, std::uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, bytes, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::uint64_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return true;
}

// A sealed memfd holding `bytes`: nobody (us included) can change it after this.
std::expected<int, std::string> sealed_memfd(const std::uint8_t* bytes, std::uint64_t size) {
  const int fd = ::memfd_create("sprawling-snapshot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return std::unexpected(errno_text("memfd_create"));
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 || !write_all(fd, bytes, size, 0) ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    std::string e = errno_text("filling the snapshot memfd");
    ::close(fd);
    return std::unexpected(std::move(e));
  }
  return fd;
}

// Little-endian field writer/reader of the file's metadata section.
struct MetaWriter {
  std::vector<std::uint8_t> out;
  void u8(std::uint8_t v) { out.push_back(v); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
};

struct MetaReader {
  std::span<const std::uint8_t> in;
  std::size_t pos = 0;
  bool ok = true;
  // A fixed-size read (inlined into a load: thousands of code index entries are read this way).
  template <std::size_t kBytes>
  std::uint64_t take() {
    if (!ok || in.size() - pos < kBytes) {
      ok = false;
      return 0;
    }
    std::uint64_t v = 0;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&v, in.data() + pos, kBytes);  // the file is little-endian too
    } else {
      for (std::size_t i = 0; i < kBytes; ++i) v |= static_cast<std::uint64_t>(in[pos + i]) << (8 * i);
    }
    pos += kBytes;
    return v;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(take<1>()); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(take<4>()); }
  std::uint64_t u64() { return take<8>(); }
  // A count of items of at least `item_bytes` each that the rest of the input can hold.
  std::uint32_t count(std::size_t item_bytes) {
    const std::uint32_t n = u32();
    if (ok && static_cast<std::uint64_t>(n) * item_bytes > in.size() - pos) ok = false;
    return ok ? n : 0;
  }
};

// Read-only mapping of a whole file, unmapped on scope exit.
struct Mapping {
  void* p = MAP_FAILED;
  std::size_t size = 0;
  ~Mapping() {
    if (p != MAP_FAILED) ::munmap(p, size);
  }
  [[nodiscard]] std::span<const std::uint8_t> bytes() const { return {static_cast<const std::uint8_t*>(p), size}; }
};

// The fixed header of a snapshot file (save_snapshot lays it out).
struct Header {
  std::uint32_t version = 0;
  std::uint32_t header_bytes = 0;
  Sha256Digest module_digest{};
  std::uint64_t module_size = 0;
  std::uint64_t key = 0;
  std::uint64_t checksum = 0;
  std::uint64_t meta_bytes = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t checked_bytes = 0;  // the checksum covers [kHeaderBytes, checked_bytes)
  std::uint64_t module_at = 0;      // [start-up] the module's bytes: [module_at, module_at + module_size)
  std::vector<std::uint8_t> build_id;
};

// `bytes`: the kHeaderBytes after which nothing is read; the magic is checked by the caller.
Header read_header(std::span<const std::uint8_t> bytes) {
  Header h;
  MetaReader r{bytes.subspan(8)};
  h.version = r.u32();
  h.header_bytes = r.u32();
  for (auto& b : h.module_digest) b = r.u8();
  h.module_size = r.u64();
  h.key = r.u64();
  h.checksum = r.u64();
  h.meta_bytes = r.u64();
  h.file_bytes = r.u64();
  const std::uint32_t id_bytes = r.u32();
  if (id_bytes <= kMaxBuildId) {
    for (std::uint32_t i = 0; i < id_bytes; ++i) h.build_id.push_back(r.u8());
  }
  MetaReader tail{bytes.subspan(kBuildIdEnd)};
  h.checked_bytes = tail.u64();
  h.module_at = tail.u64();
  return h;
}

// [snapshot code] The interpreter's handler offsets of both variants (what translated code's
// handler words are made of), hashed: a file's code is used only under the same table.
std::uint64_t handler_fingerprint() {
  std::vector<std::uint8_t> bytes;
  for (const bool metered : {false, true}) {
    const std::int32_t* offsets = handler_offsets(metered);
    const auto* first = reinterpret_cast<const std::uint8_t*>(offsets);
    bytes.insert(bytes.end(), first, first + kOpCount * sizeof(std::int32_t));
  }
  return snapshot_hash(bytes);
}

// One function's code in the file's payload: its words, then its trap sites as u32 pairs.
std::vector<std::uint8_t> code_payload(const CompiledFunc& f) {
  std::vector<std::uint8_t> out(f.code.size() * 4 + f.trap_sites.size() * 8);
  if (!f.code.empty()) std::memcpy(out.data(), f.code.data(), f.code.size() * 4);
  std::uint8_t* p = out.data() + f.code.size() * 4;
  for (const auto& [word, offset] : f.trap_sites) {
    std::memcpy(p, &word, 4);
    std::memcpy(p + 4, &offset, 4);
    p += 8;
  }
  return out;
}

}  // namespace

// [snapshot code] A snapshot file's translated code, mapped read-only from the file.
struct PretranslatedCode {
  struct Entry {
    std::uint32_t num_params = 0, num_results = 0, num_locals = 0, frame_slots = 0;
    std::uint32_t words = 0, trap_sites = 0;
    std::uint64_t offset = 0;  // in the payload
    std::uint64_t checksum = 0;
  };
  std::vector<Entry> entries;
  std::vector<std::int32_t> index[2];  // per variant (kUnmetered, kMetered): defined -> entry, or -1
  void* map = MAP_FAILED;
  std::size_t map_bytes = 0;
  const std::uint8_t* payload = nullptr;
  // [start-up] Every entry matched its checksum when the file was verified (by this load, or by
  // the load that the caller's stamp records): entries are not hashed again on first use.
  bool checked = false;
  PretranslatedCode() = default;
  PretranslatedCode(const PretranslatedCode&) = delete;
  PretranslatedCode& operator=(const PretranslatedCode&) = delete;
  ~PretranslatedCode() {
    if (map != MAP_FAILED) ::munmap(map, map_bytes);
  }
};

std::optional<CompiledFunc> pretranslated_code(const PretranslatedCode& code, std::uint32_t defined, bool metered) {
  const auto& index = code.index[metered ? kMetered : kUnmetered];
  if (defined >= index.size() || index[defined] < 0) return std::nullopt;
  const PretranslatedCode::Entry& e = code.entries[static_cast<std::size_t>(index[defined])];
  const std::span<const std::uint8_t> bytes(code.payload + e.offset, std::uint64_t{e.words} * 4 + std::uint64_t{e.trap_sites} * 8);
  if (!code.checked && snapshot_hash(bytes) != e.checksum) return std::nullopt;  // damaged: translated afresh
  CompiledFunc f;
  f.num_params = e.num_params;
  f.num_results = e.num_results;
  f.num_locals = e.num_locals;
  f.frame_slots = e.frame_slots;
  // The payload is page-aligned and every entry's offset a multiple of 4: the words are u32s.
  const auto* words = reinterpret_cast<const std::uint32_t*>(bytes.data());
  f.code.assign(words, words + e.words);
  f.trap_sites.resize(e.trap_sites);
  const std::uint8_t* p = bytes.data() + std::size_t{e.words} * 4;
  for (auto& [word, offset] : f.trap_sites) {
    std::memcpy(&word, p, 4);
    std::memcpy(&offset, p + 4, 4);
    p += 8;
  }
  if (code_verification_enabled() && !verify_code(f, metered).empty()) return std::nullopt;
  return f;
}

FileIdentity file_identity(const struct stat& st) noexcept {
  auto ns = [](const timespec& t) {
    return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(t.tv_nsec);
  };
  return FileIdentity{.dev = st.st_dev,
                      .ino = st.st_ino,
                      .size = static_cast<std::uint64_t>(st.st_size),
                      .mtime_ns = ns(st.st_mtim),
                      .ctime_ns = ns(st.st_ctim)};
}

std::optional<FileIdentity> file_identity(int fd) noexcept {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return file_identity(st);
}

bool identity_settled(const FileIdentity& identity) noexcept {
  timespec now{};
  if (::clock_gettime(CLOCK_REALTIME, &now) != 0 || now.tv_sec < 0) return false;
  const std::uint64_t now_ns = static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(now.tv_nsec);
  return identity.ctime_ns + kSettleSeconds * 1'000'000'000ULL <= now_ns;
}

std::uint64_t snapshot_hash(std::span<const std::uint8_t> bytes) noexcept {
  std::uint64_t lane[4] = {0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL, 0x165667B19E3779F9ULL, 0x27D4EB2F165667C5ULL ^ bytes.size()};
  std::size_t i = 0;
  for (; i + 32 <= bytes.size(); i += 32) {
    for (int l = 0; l < 4; ++l) {
      std::uint64_t w;
      std::memcpy(&w, bytes.data() + i + static_cast<std::size_t>(8 * l), 8);
      lane[l] = (lane[l] ^ w) * 0xBF58476D1CE4E5B9ULL;
      lane[l] ^= lane[l] >> 31;
    }
  }
  std::uint64_t h = lane[0] ^ std::rotl(lane[1], 17) ^ std::rotl(lane[2], 31) ^ std::rotl(lane[3], 47);
  for (; i < bytes.size(); ++i) h = (h ^ bytes[i]) * 0x94D049BB133111EBULL;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 32);
}

InstanceSnapshot::Impl::~Impl() {
  for (const Memory& m : memories) {
    if (m.fd >= 0) ::close(m.fd);
  }
}

InstanceSnapshot::InstanceSnapshot(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
InstanceSnapshot::~InstanceSnapshot() = default;
const std::shared_ptr<const CompiledModule>& InstanceSnapshot::module() const noexcept { return impl_->module; }
std::uint64_t InstanceSnapshot::memory_bytes() const noexcept {
  return impl_->memories.empty() ? 0 : impl_->memories[0].size;
}
std::uint64_t InstanceSnapshot::image_bytes() const noexcept {
  return impl_->memories.empty() ? 0 : impl_->memories[0].image_bytes;
}
std::uint64_t InstanceSnapshot::nonzero_pages() const noexcept {
  std::uint64_t n = 0;
  for (const auto& m : impl_->memories) n += m.nonzero_pages;
  return n;
}

// ---------------------------------------------------------------- capture

std::expected<std::shared_ptr<InstanceSnapshot>, std::string> capture_snapshot(const Instance& instance) {
  const auto& inst = static_cast<const InstanceImpl&>(instance);
  const Module& m = *inst.module;
  if (m.imported_memories != 0) return std::unexpected("the instance imports a memory, whose contents are not its own");
  if (m.imported_tables != 0) return std::unexpected("the instance imports a table, whose contents are not its own");
  for (std::uint32_t i = 0; i < m.imported_globals; ++i) {
    if (m.globals[i].is_mutable)
      return std::unexpected("the instance imports a mutable global, whose value is not its own");
  }
  std::unordered_map<const FuncInst*, std::uint32_t> func_index;
  func_index.reserve(inst.funcs.size());
  for (std::uint32_t i = 0; i < inst.funcs.size(); ++i) func_index.emplace(inst.funcs[i], i);
  // A reference as index + 1; nullopt when it cannot be captured.
  auto ref_of = [&](ValType type, std::uint64_t bits) -> std::optional<std::uint32_t> {
    if (bits == 0) return 0;
    if (!type.is_ref() || heap_top(type.heap(), m.types) != ValType::kFunc) return std::nullopt;  // function references only
    auto it = func_index.find(std::bit_cast<const FuncInst*>(static_cast<std::uintptr_t>(bits)));
    if (it == func_index.end()) return std::nullopt;
    return it->second + 1;
  };

  auto impl = std::make_unique<InstanceSnapshot::Impl>();
  impl->module = inst.compiled_module;
  for (std::size_t i = m.imported_globals; i < m.globals.size(); ++i) {
    const GlobalInst& g = *inst.globals[i];
    if (is_reference(g.type.type)) {
      auto ref = ref_of(g.type.type, g.bits);
      if (!ref) return std::unexpected("global " + std::to_string(i) + " holds a reference from outside the instance");
      impl->globals.push_back({*ref, 0});
    } else {
      impl->globals.push_back({g.bits, g.bits_hi});
    }
  }
  for (std::size_t t = m.imported_tables; t < m.tables.size(); ++t) {
    const TableInst& table = *inst.tables[t];
    auto& out = impl->tables.emplace_back();
    out.reserve(table.elements.size());
    for (const std::uint64_t bits : table.elements) {
      auto ref = ref_of(table.type.element, bits);
      if (!ref) return std::unexpected("table " + std::to_string(t) + " holds a reference from outside the instance");
      out.push_back(*ref);
    }
  }
  // The functions that ran in this instance (or, unless its store tracks first calls, were
  // translated before it was made): their code goes into a file saved from this snapshot.
  for (std::uint32_t i = 0; i < m.code.size(); ++i) {
    const FuncInst& f = *inst.funcs[m.imported_funcs + i];
    if (f.code[kUnmetered] != nullptr || f.code[kMetered] != nullptr) impl->code_functions.push_back(i);
  }
  for (const auto& refs : inst.elements) impl->elements_dropped.push_back(refs.empty() ? 1 : 0);
  for (const auto& data : inst.datas) impl->datas_dropped.push_back(data.empty() ? 1 : 0);
  for (std::size_t i = m.imported_memories; i < m.memories.size(); ++i) {
    const MemoryInst& mem = *inst.memories[i];
    InstanceSnapshot::Impl::Memory out;
    out.size = mem.size;
    std::uint64_t end = 0;
    for (std::uint64_t p = 0; p < mem.size; p += kHostPage) {
      if (!page_is_zero(mem.base + p)) {
        ++out.nonzero_pages;
        end = p + kHostPage;
      }
    }
    out.image_bytes = end;
    if (end != 0) {
      auto fd = sealed_memfd(mem.base, end);
      if (!fd) return std::unexpected(fd.error());
      out.fd = *fd;
    }
    impl->memories.push_back(out);
  }
  return std::make_shared<InstanceSnapshot>(std::move(impl));
}

void InstanceSnapshot::add_code_functions(const Instance& instance) {
  const auto& inst = static_cast<const InstanceImpl&>(instance);
  if (inst.compiled_module != impl_->module) return;  // not restored from this snapshot
  const Module& m = *inst.module;
  std::vector<std::uint32_t>& code = impl_->code_functions;
  const std::size_t before = code.size();
  for (std::uint32_t i = 0; i < m.code.size(); ++i) {
    const FuncInst& f = *inst.funcs[m.imported_funcs + i];
    if (f.code[kUnmetered] != nullptr || f.code[kMetered] != nullptr) code.push_back(i);
  }
  if (code.size() == before) return;
  std::ranges::sort(code);
  const auto [first, last] = std::ranges::unique(code);
  code.erase(first, last);
}

// ---------------------------------------------------------------- restore

bool restore_memory(const InstanceSnapshot& snapshot, std::size_t index, MemoryInst& memory) {
  const auto& image = snapshot.impl().memories.at(index);
  if (image.size > static_cast<std::uint64_t>(memory.max_pages) * kPageSize) return false;
  if (!memory.commit(image.size)) return false;
  memory.size = image.size;
  memory.peak = std::max(memory.peak, memory.size);
  if (image.image_bytes != 0) {
    // Copy-on-write: pages read come from the shared image, pages written become private.
    void* p = ::mmap(memory.base, image.image_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, image.fd,
                     static_cast<off_t>(image.offset));
    if (p == MAP_FAILED) return false;
    memory.image_bytes = image.image_bytes;
  }
  return true;
}

void MemoryInst::drop_image() {
  // Fresh anonymous zero pages in place of the image, so the reservation can go back to the
  // pool under its usual promise (read-write and zero up to `committed`).
  void* p = ::mmap(base, image_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) pool = nullptr;  // the destructor then unmaps the whole reservation
  image_bytes = 0;
}

void restore_instance_state(const InstanceSnapshot& snapshot, Instance& instance) {
  auto& inst = static_cast<InstanceImpl&>(instance);
  const Module& m = *inst.module;
  const auto& s = snapshot.impl();
  auto func_bits = [&](std::uint32_t ref) -> std::uint64_t {
    return ref == 0 ? 0 : static_cast<std::uint64_t>(std::bit_cast<std::uintptr_t>(inst.funcs[ref - 1]));
  };
  for (std::size_t i = 0; i < s.globals.size(); ++i) {
    GlobalInst& g = *inst.globals[m.imported_globals + i];
    g.bits = is_reference(g.type.type) ? func_bits(static_cast<std::uint32_t>(s.globals[i].bits)) : s.globals[i].bits;
    g.bits_hi = s.globals[i].bits_hi;
  }
  for (std::size_t t = 0; t < s.tables.size(); ++t) {
    TableInst& table = *inst.tables[m.imported_tables + t];
    table.elements.resize(s.tables[t].size());
    std::ranges::transform(s.tables[t], table.elements.begin(), func_bits);
  }
  for (std::size_t i = 0; i < inst.elements.size(); ++i) {
    if (s.elements_dropped[i] != 0) inst.elements[i].clear();
  }
  for (std::size_t i = 0; i < inst.datas.size(); ++i) {
    if (s.datas_dropped[i] != 0) inst.datas[i] = {};
  }
}

namespace {

// Whether `snapshot` fits `module`'s shape (counts of every index space it restores).
bool snapshot_fits(const InstanceSnapshot::Impl& s, const Module& m) {
  if (s.globals.size() != m.globals.size() - m.imported_globals) return false;
  if (s.tables.size() != m.tables.size() - m.imported_tables) return false;
  if (s.memories.size() != m.memories.size() - m.imported_memories) return false;
  if (s.elements_dropped.size() != m.elements.size() || s.datas_dropped.size() != m.datas.size()) return false;
  const std::uint64_t funcs = m.func_types.size();
  for (std::size_t t = 0; t < s.tables.size(); ++t) {
    const auto& limits = m.tables[m.imported_tables + t].limits;
    if (s.tables[t].size() < limits.min || (limits.max && s.tables[t].size() > *limits.max)) return false;
    if (std::ranges::any_of(s.tables[t], [&](std::uint32_t r) { return r > funcs; })) return false;
  }
  for (std::size_t g = 0; g < s.globals.size(); ++g) {
    const ValType type = m.globals[m.imported_globals + g].type;
    const bool func_ref = type.is_ref() && heap_top(type.heap(), m.types) == ValType::kFunc;
    if (type.is_ref() && !func_ref && s.globals[g].bits != 0) return false;
    if (func_ref && s.globals[g].bits > funcs) return false;
    if (func_ref && !type.nullable() && s.globals[g].bits == 0) return false;
  }
  for (std::size_t i = 0; i < s.memories.size(); ++i) {
    const auto& mem = s.memories[i];
    const auto& limits = m.memories[m.imported_memories + i].limits;
    if (mem.size % kPageSize != 0 || mem.size / kPageSize < limits.min ||
        (limits.max && mem.size / kPageSize > *limits.max) || mem.image_bytes > mem.size ||
        mem.image_bytes % kHostPage != 0)
      return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------- files

std::expected<void, std::string> save_snapshot(const InstanceSnapshot& snapshot, std::uint64_t key,
                                               const std::filesystem::path& path) {
  const auto& s = snapshot.impl();
  MetaWriter meta;
  meta.u32(static_cast<std::uint32_t>(s.globals.size()));
  for (const auto& g : s.globals) {
    meta.u64(g.bits);
    meta.u64(g.bits_hi);
  }
  meta.u32(static_cast<std::uint32_t>(s.tables.size()));
  for (const auto& t : s.tables) {
    meta.u32(static_cast<std::uint32_t>(t.size()));
    for (const std::uint32_t r : t) meta.u32(r);
  }
  meta.u32(static_cast<std::uint32_t>(s.elements_dropped.size()));
  for (const std::uint8_t d : s.elements_dropped) meta.u8(d);
  meta.u32(static_cast<std::uint32_t>(s.datas_dropped.size()));
  for (const std::uint8_t d : s.datas_dropped) meta.u8(d);
  meta.u32(static_cast<std::uint32_t>(s.memories.size()));
  // [snapshot code] Both variants of every code function (translated now where they are not
  // yet), indexed in the metadata; the code itself follows the images.
  const CompiledModule::Impl& cm = s.module->impl();
  MetaWriter code_index;
  std::vector<std::vector<std::uint8_t>> payloads;
  std::uint64_t payload_bytes = 0;
  code_index.u64(handler_fingerprint());
  code_index.u32(static_cast<std::uint32_t>(s.code_functions.size() * 2));
  for (const std::uint32_t defined : s.code_functions) {
    for (const bool metered : {false, true}) {
      const CompiledFunc& f = cm.code(defined, metered);
      std::vector<std::uint8_t> bytes = code_payload(f);
      for (const std::uint32_t v : {defined, metered ? 1U : 0U, f.num_params, f.num_results, f.num_locals, f.frame_slots,
                                    static_cast<std::uint32_t>(f.code.size()), static_cast<std::uint32_t>(f.trap_sites.size())})
        code_index.u32(v);
      code_index.u64(payload_bytes);
      code_index.u64(snapshot_hash(bytes));
      payload_bytes += bytes.size();
      payloads.push_back(std::move(bytes));
    }
  }
  std::uint64_t images_at =
      round_up(kHeaderBytes + meta.out.size() + 24 * s.memories.size() + code_index.out.size(), kHostPage);
  std::vector<std::uint64_t> image_offsets;
  std::uint64_t file_bytes = images_at;
  for (const auto& mem : s.memories) {
    image_offsets.push_back(file_bytes);
    meta.u64(mem.size);
    meta.u64(mem.image_bytes);
    meta.u64(mem.nonzero_pages);
    file_bytes += mem.image_bytes;
  }
  meta.out.insert(meta.out.end(), code_index.out.begin(), code_index.out.end());
  const std::uint64_t checked_bytes = file_bytes;
  const std::uint64_t code_at = round_up(checked_bytes, kHostPage);
  // [start-up] The module's own bytes last, page-aligned: a later process that knows this file
  // maps them instead of reading the module file (snapshot_module_bytes).
  const ModuleBytes& module_bytes = s.module->module().bytes;
  const std::uint64_t module_at = round_up(code_at + payload_bytes, kHostPage);
  file_bytes = module_at + module_bytes.size();

  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return std::unexpected(errno_text(("creating " + tmp.string()).c_str()));
  auto fail = [&](std::string why) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return std::unexpected(std::move(why));
  };
  if (::ftruncate(fd, static_cast<off_t>(file_bytes)) != 0) return fail(errno_text("sizing the snapshot file"));
  void* out = ::mmap(nullptr, file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (out == MAP_FAILED) return fail(errno_text("mapping the snapshot file"));
  auto* bytes = static_cast<std::uint8_t*>(out);
  std::memcpy(bytes + kHeaderBytes, meta.out.data(), meta.out.size());
  for (std::size_t i = 0; i < s.memories.size(); ++i) {
    const auto& mem = s.memories[i];
    if (mem.image_bytes == 0) continue;
    void* in = ::mmap(nullptr, mem.image_bytes, PROT_READ, MAP_SHARED, mem.fd, static_cast<off_t>(mem.offset));
    if (in == MAP_FAILED) {
      ::munmap(out, file_bytes);
      return fail(errno_text("mapping a snapshot image"));
    }
    std::memcpy(bytes + image_offsets[i], in, mem.image_bytes);
    ::munmap(in, mem.image_bytes);
  }
  std::uint64_t at = code_at;
  for (const auto& payload : payloads) {
    if (!payload.empty()) std::memcpy(bytes + at, payload.data(), payload.size());
    at += payload.size();
  }
  if (!module_bytes.empty()) std::memcpy(bytes + module_at, module_bytes.data(), module_bytes.size());
  MetaWriter header;
  header.out.assign(kMagic, kMagic + 8);
  header.u32(kFormatVersion);
  header.u32(static_cast<std::uint32_t>(kHeaderBytes));
  const Sha256Digest& digest = s.module->content_digest();
  header.out.insert(header.out.end(), digest.begin(), digest.end());
  header.u64(s.module->module().bytes.size());
  header.u64(key);
  header.u64(snapshot_hash(std::span<const std::uint8_t>(bytes + kHeaderBytes, checked_bytes - kHeaderBytes)));
  header.u64(meta.out.size());
  header.u64(file_bytes);
  // This build compiled (validated) the module: its build-id makes the file a certificate of that.
  const auto build_id = engine_build_id();
  const std::size_t id_bytes = build_id.size() <= kMaxBuildId ? build_id.size() : 0;
  header.u32(static_cast<std::uint32_t>(id_bytes));
  header.out.insert(header.out.end(), build_id.begin(), build_id.begin() + static_cast<std::ptrdiff_t>(id_bytes));
  header.out.resize(kBuildIdEnd, 0);
  header.u64(checked_bytes);
  header.u64(module_at);
  header.out.resize(kHeaderBytes, 0);
  std::memcpy(bytes, header.out.data(), header.out.size());
  // No fsync: a file torn by a crash fails its checksum and is rebuilt.
  ::munmap(out, file_bytes);
  ::close(fd);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    ::unlink(tmp.c_str());
    return std::unexpected("renaming the snapshot file into place: " + ec.message());
  }
  return {};
}

std::expected<std::shared_ptr<const InstanceSnapshot>, std::string> load_snapshot(
    const std::shared_ptr<const CompiledModule>& module, const Sha256Digest& module_digest, std::uint64_t key,
    const std::filesystem::path& path, SnapshotFileCheck* check) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::unexpected(errno_text(("opening " + path.string()).c_str()));
  auto impl = std::make_unique<InstanceSnapshot::Impl>();
  auto fail = [&](const std::string& why) {
    for (auto& mem : impl->memories) {
      if (mem.fd >= 0 && mem.fd != fd) ::close(mem.fd);
      mem.fd = -1;
    }
    ::close(fd);
    return std::unexpected("'" + path.string() + "': " + why);
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return fail("not a regular file");
  if (st.st_uid != ::geteuid()) return fail("owned by another user");
  if (static_cast<std::uint64_t>(st.st_size) < kHeaderBytes) return fail("truncated (no header)");
  std::uint8_t header_bytes[kHeaderBytes];
  if (::pread(fd, header_bytes, kHeaderBytes, 0) != static_cast<ssize_t>(kHeaderBytes)) return fail(errno_text("read"));
  if (!std::equal(kMagic, kMagic + 8, header_bytes)) return fail("not a snapshot file (bad magic)");
  const Header header = read_header(header_bytes);
  if (header.version != kFormatVersion || header.header_bytes != kHeaderBytes)
    return fail("another snapshot format version");
  const std::uint64_t file_bytes = static_cast<std::uint64_t>(st.st_size);
  if (header.file_bytes != file_bytes) return fail("truncated or extended (size does not match the header)");
  const Module& m = module->module();
  if (header.module_size != m.bytes.size() || header.module_digest != module_digest)
    return fail("taken from another module");
  if (header.key != key) return fail("taken with another initialisation configuration");
  if (header.checked_bytes < kHeaderBytes || header.checked_bytes > file_bytes ||
      header.meta_bytes > header.checked_bytes - kHeaderBytes || header.module_at % kHostPage != 0 ||
      header.module_at < round_up(header.checked_bytes, kHostPage) || header.module_at > file_bytes ||
      file_bytes - header.module_at != header.module_size)
    return fail("malformed header");
  const std::uint64_t meta_bytes = header.meta_bytes;
  const FileIdentity identity = file_identity(st);
  if (check != nullptr) check->identity = identity;
  Mapping map;
  std::vector<std::uint8_t> meta_copy;
  std::span<const std::uint8_t> meta;
  if (check != nullptr && check->verified == identity) {
    // [start-up] This very file (same inode, size, mtime and ctime) was checksummed before:
    // only the metadata is read; the images stay unread until a job touches their pages.
    meta_copy.resize(static_cast<std::size_t>(meta_bytes));
    if (meta_bytes != 0 &&
        ::pread(fd, meta_copy.data(), meta_copy.size(), static_cast<off_t>(kHeaderBytes)) != static_cast<ssize_t>(meta_bytes))
      return fail(errno_text("read"));
    meta = meta_copy;
  } else {
    // The metadata and the images, read once for the checksum: mapped with their page tables
    // filled in one go (MAP_POPULATE) rather than a fault per few pages. The translated code
    // after them is checked per function, when a job first uses it.
    map.size = static_cast<std::size_t>(header.checked_bytes);
    map.p = ::mmap(nullptr, map.size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map.p == MAP_FAILED) return fail(errno_text("mmap"));
    const auto bytes = map.bytes();
    if (snapshot_hash(bytes.subspan(kHeaderBytes)) != header.checksum) return fail("checksum mismatch (corrupt)");
    // [start-up] The file's copy of the module, against the module's bytes (whose SHA-256 the
    // caller computed, or took from a stamp): checked now, so that a stamp saying this file was
    // verified also covers the copy a later process maps instead of reading the module.
    if (m.bytes.size() != 0) {
      Mapping copy;
      copy.size = m.bytes.size();
      copy.p = ::mmap(nullptr, copy.size, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(header.module_at));
      if (copy.p == MAP_FAILED) return fail(errno_text("mmap"));
      if (!std::ranges::equal(copy.bytes(), std::span<const std::uint8_t>(m.bytes))) return fail("its copy of the module differs (corrupt)");
    }
    if (check != nullptr) check->checksummed = true;
    meta = bytes.subspan(kHeaderBytes, meta_bytes);
  }

  MetaReader r{meta};
  impl->module = module;
  impl->globals.resize(r.count(16));
  for (auto& g : impl->globals) {
    g.bits = r.u64();
    g.bits_hi = r.u64();
  }
  impl->tables.resize(r.count(4));
  for (auto& t : impl->tables) {
    t.resize(r.count(4));
    for (auto& e : t) e = r.u32();
  }
  impl->elements_dropped.resize(r.count(1));
  for (auto& d : impl->elements_dropped) d = r.u8();
  impl->datas_dropped.resize(r.count(1));
  for (auto& d : impl->datas_dropped) d = r.u8();
  const std::uint32_t memories = r.count(24);
  std::uint64_t image_at = round_up(kHeaderBytes + meta_bytes, kHostPage);
  for (std::uint32_t i = 0; i < memories && r.ok; ++i) {
    InstanceSnapshot::Impl::Memory mem;
    mem.size = r.u64();
    mem.image_bytes = r.u64();
    mem.nonzero_pages = r.u64();
    mem.offset = image_at;
    if (mem.image_bytes > file_bytes || image_at > file_bytes - mem.image_bytes) return fail("an image past the end");
    image_at += mem.image_bytes;
    if (mem.image_bytes != 0) mem.fd = fd;
    impl->memories.push_back(mem);
  }
  if (!r.ok || image_at != header.checked_bytes) return fail("malformed metadata");
  // [snapshot code] The index of the translated code that follows the images.
  const std::uint64_t code_at = round_up(header.checked_bytes, kHostPage);
  const std::uint64_t payload_bytes = header.module_at - code_at;  // module_at >= code_at: checked above
  const std::uint64_t fingerprint = r.u64();
  auto code = std::make_shared<PretranslatedCode>();
  for (auto& index : code->index) index.assign(m.code.size(), -1);
  const std::uint32_t entries = r.count(kCodeEntryBytes);
  // [start-up] Thousands of entries (python.wasm: 4,302), reserved.
  code->entries.reserve(entries);
  impl->code_functions.reserve(entries / 2);
  for (std::uint32_t i = 0; i < entries && r.ok; ++i) {
    const std::uint32_t defined = r.u32();
    const std::uint32_t variant = r.u32();
    PretranslatedCode::Entry e;
    e.num_params = r.u32();
    e.num_results = r.u32();
    e.num_locals = r.u32();
    e.frame_slots = r.u32();
    e.words = r.u32();
    e.trap_sites = r.u32();
    e.offset = r.u64();
    e.checksum = r.u64();
    const std::uint64_t size = std::uint64_t{e.words} * 4 + std::uint64_t{e.trap_sites} * 8;
    if (!r.ok || defined >= m.code.size() || variant > 1 || e.offset % 4 != 0 || e.offset > payload_bytes ||
        size > payload_bytes - e.offset ||
        code->index[variant][defined] >= 0)
      return fail("malformed code index");
    code->index[variant][defined] = static_cast<std::int32_t>(code->entries.size());
    code->entries.push_back(e);
    if (variant == 0) impl->code_functions.push_back(defined);
  }
  if (!r.ok || r.pos != meta_bytes) return fail("malformed metadata");
  if (!snapshot_fits(*impl, m)) return fail("does not fit the module's globals, tables, segments or memories");
  // The code serves this module only when this very engine build (and interpreter) made it.
  const auto build_id = engine_build_id();
  if (!code->entries.empty() && payload_bytes != 0 && !build_id.empty() && std::ranges::equal(header.build_id, build_id) &&
      fingerprint == handler_fingerprint()) {
    code->map_bytes = static_cast<std::size_t>(payload_bytes);
    code->map = ::mmap(nullptr, code->map_bytes, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(code_at));
    if (code->map != MAP_FAILED) {
      code->payload = static_cast<const std::uint8_t*>(code->map);
      // [start-up] A verified file's code was checked whole by the load that verified it; this
      // load checks it whole when it checksums the file. A damaged entry leaves the file
      // unverified (no stamp records it): its entries are then checked one by one on first use
      // and the damaged one is translated afresh.
      if (check != nullptr && !check->checksummed) {
        code->checked = true;  // the caller's stamp: loaded without the checksum (verified before)
      } else if (check != nullptr) {
        code->checked = std::ranges::all_of(code->entries, [&](const PretranslatedCode::Entry& e) {
          const std::uint64_t size = std::uint64_t{e.words} * 4 + std::uint64_t{e.trap_sites} * 8;
          return snapshot_hash(std::span(code->payload + e.offset, size)) == e.checksum;
        });
        if (!code->checked) check->checksummed = false;
      }
      const CompiledModule::Impl& cm = module->impl();
      std::lock_guard lock(cm.pretranslated_mutex);
      cm.pretranslated = std::move(code);
    } else if (check != nullptr) {
      check->checksummed = false;  // its code went unchecked: nothing may skip checking it later
    }
  }
  // Each image gets its own descriptor so the Impl can close them independently.
  bool first = true;
  for (auto& mem : impl->memories) {
    if (mem.fd < 0) continue;
    if (first) {
      first = false;
      continue;
    }
    mem.fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (mem.fd < 0) return fail(errno_text("dup"));
  }
  if (first) ::close(fd);  // no image references the file
  return std::make_shared<const InstanceSnapshot>(std::move(impl));
}

}  // namespace sprawling::wasm

namespace sprawling::wasm {

bool snapshot_vouches_for(const Sha256Digest& module_digest, std::uint64_t module_size, std::uint64_t key,
                          const std::filesystem::path& path) {
  const auto build_id = engine_build_id();
  if (build_id.empty()) return false;  // no identity for "this build": nothing was validated by it
  struct stat dir {};
  const std::filesystem::path folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (::stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode) || dir.st_uid != ::geteuid() ||
      (dir.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  std::uint8_t bytes[kHeaderBytes];
  const bool read = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
                    (st.st_mode & (S_IRWXG | S_IRWXO)) == 0 &&
                    ::pread(fd, bytes, kHeaderBytes, 0) == static_cast<ssize_t>(kHeaderBytes);
  ::close(fd);
  if (!read || !std::equal(kMagic, kMagic + 8, bytes)) return false;
  const Header h = read_header(bytes);
  return h.version == kFormatVersion && h.header_bytes == kHeaderBytes && h.module_digest == module_digest &&
         h.module_size == module_size && h.key == key && h.file_bytes == static_cast<std::uint64_t>(st.st_size) &&
         std::ranges::equal(h.build_id, build_id);
}

std::optional<ModuleBytes> snapshot_module_bytes(const std::filesystem::path& path, const Sha256Digest& module_digest,
                                                 std::uint64_t module_size, std::uint64_t key,
                                                 const FileIdentity& verified) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::uint8_t bytes[kHeaderBytes];
  const bool read = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
                    (st.st_mode & (S_IRWXG | S_IRWXO)) == 0 && file_identity(st) == verified &&
                    ::pread(fd, bytes, kHeaderBytes, 0) == static_cast<ssize_t>(kHeaderBytes);
  void* map = MAP_FAILED;
  if (read && std::equal(kMagic, kMagic + 8, bytes)) {
    const Header h = read_header(bytes);
    const auto file_bytes = static_cast<std::uint64_t>(st.st_size);
    if (h.version == kFormatVersion && h.header_bytes == kHeaderBytes && h.module_digest == module_digest &&
        h.module_size == module_size && h.key == key && h.file_bytes == file_bytes && module_size != 0 &&
        h.module_at % kHostPage == 0 && h.module_at <= file_bytes && file_bytes - h.module_at == module_size)
      map = ::mmap(nullptr, module_size, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(h.module_at));
  }
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) return std::nullopt;
  auto keeper = std::make_shared<Mapping>();
  keeper->p = map;
  keeper->size = static_cast<std::size_t>(module_size);
  const auto span = keeper->bytes();
  return ModuleBytes(span, std::move(keeper));
}

}  // namespace sprawling::wasm
