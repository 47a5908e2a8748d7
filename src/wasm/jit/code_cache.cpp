// The code cache's keys and entries (code_cache.hpp), the choice of a module variant's machine
// code for a store's tier (cache, else lazy compilation) and `precompile`, which fills the cache.
#include "wasm/jit/code_cache.hpp"

#include "wasm/support/sha256.hpp"
#include "wasm/support/build_id.hpp"
#include "wasm/jit/object_linker.hpp"
#include "wasm/jit/runtime_calls.hpp"

#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sprawling::wasm {

namespace jit {

namespace {

constexpr std::string_view kMagic = "SPRWCODE";
// 2: SHA-256 for the name and checksum (was LLVM's BLAKE3), names without the plugin's parts.
// 4: an entry returns {status, first result} (EntryResult), and direct calls inside an object pass
// arguments in registers (ModuleEmitter::body).
constexpr std::uint32_t kFormat = 4;
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8 + 32;  // magic, format, key length, payload length, SHA-256

void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
std::uint64_t get_le(std::span<const std::uint8_t> in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(in[at + static_cast<std::size_t>(i)]) << (8 * i);
  return v;
}

// The entry's checksum: SHA-256 over the digests of key and payload (no copy of the payload).
Sha256Digest checksum(std::span<const std::uint8_t> material, std::span<const std::uint8_t> payload) {
  std::array<std::uint8_t, 64> both{};
  const Sha256Digest a = sha256(material);
  const Sha256Digest b = sha256(payload);
  std::ranges::copy(a, both.begin());
  std::ranges::copy(b, both.begin() + 32);
  return sha256(both);
}

// What LLVM's host detection reads (CPUID leaves 0, 1, 7, 0x80000001 and XCR0), so that a CPU
// with other features gets other names without asking LLVM. Leaf 1's EBX (the core's APIC id) is
// left out: it differs between cores of one CPU.
std::string cpu_id() {
#if defined(__x86_64__)
  std::vector<std::uint32_t> words;
  unsigned a = 0;
  unsigned b = 0;
  unsigned c = 0;
  unsigned d = 0;
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  __cpuid(0, a, b, c, d);
  words.insert(words.end(), {a, b, c, d});
  if (max_leaf >= 1) {
    __cpuid(1, a, b, c, d);
    words.insert(words.end(), {a, c, d});
    if ((c & bit_OSXSAVE) != 0) {
      std::uint32_t lo = 0;
      std::uint32_t hi = 0;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      words.insert(words.end(), {lo, hi});
    }
  }
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    words.insert(words.end(), {a, b, c, d});
    __cpuid_count(7, 1, a, b, c, d);
    words.insert(words.end(), {a, b, c, d});
  }
  if (__get_cpuid_max(0x80000000, nullptr) >= 0x80000001) {
    __cpuid(0x80000001, a, b, c, d);
    words.insert(words.end(), {c, d});
  }
  return to_hex(std::span(reinterpret_cast<const std::uint8_t*>(words.data()), words.size() * 4));
#else
  return "";  // the key's material (the target LLVM detects) still tells CPUs apart
#endif
}

// How the code is made: the key's "pipeline" line.
std::string pipeline_text() {
  return "format " + std::to_string(kFormat) +
         "; IR SROA+EarlyCSE+SimplifyCFG+InstCombine, codegen Default (FastISel above a size, 25 times it ahead of "
         "time), small code model, PIC; whole module, an object per partition";
}

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

std::string digest_hex(std::span<const std::uint8_t> bytes) { return to_hex(sha256(bytes)); }

const std::expected<CacheKeyParts, std::string>& host_name_parts() {
  static const std::expected<CacheKeyParts, std::string> parts = []() -> std::expected<CacheKeyParts, std::string> {
    CacheKeyParts p;
    // The GNU build-id of the object holding the engine: it changes with any change to the
    // engine or its translator (the compiler is the plugin's, keyed below).
    p.engine = to_hex(engine_build_id());
    if (p.engine.empty()) {
      return std::unexpected(std::string(
          "the binary holding the engine has no GNU build-id (linked without --build-id): the code cache could not "
          "tell this engine from another build"));
    }
    p.cpu_id = cpu_id();
    p.pipeline = pipeline_text();
    return p;
  }();
  return parts;
}

const std::expected<CacheKeyParts, std::string>& host_key_parts() {
  static const std::expected<CacheKeyParts, std::string> parts = []() -> std::expected<CacheKeyParts, std::string> {
    auto p = host_name_parts();
    if (!p) return p;
    const PluginStatus& status = plugin();
    if (!status.loaded) return std::unexpected(status.error);
    // A plugin linked without --build-id cannot be told from another compiler: no cache then.
    if (status.build_id.empty()) return std::unexpected("'" + status.path + "' has no GNU build-id");
    p->plugin = status.build_id;
    p->llvm = llvm_version();
    auto target = host_target();
    if (!target) return std::unexpected("the host target: " + target.error());
    p->target = std::move(*target);
    p->pipeline = pipeline_text();
    return p;
  }();
  return parts;
}

std::string entry_name(const CacheKeyParts& parts, std::string_view module_digest, bool metered) {
  const std::string named = "sprawling code cache entry name\nformat " + std::to_string(kFormat) + "\nengine " +
                            parts.engine + "\ncpuid " + parts.cpu_id + "\nfuel " +
                            (metered ? "metered" : "unmetered") + "\nmodule " + std::string(module_digest) + "\n";
  return digest_hex(bytes_of(named)) + ".code";
}

CacheKey make_key(const CacheKeyParts& parts, std::string_view module_digest, bool metered) {
  CacheKey k;
  k.material = "sprawling code cache\nengine " + parts.engine + "\ncpuid " + parts.cpu_id + "\nplugin " +
               parts.plugin + "\nllvm " + parts.llvm + "\ntriple " + parts.target.triple + "\ncpu " +
               parts.target.cpu + "\nfeatures " + parts.target.features + "\npipeline " + parts.pipeline + "\nfuel " +
               (metered ? "metered" : "unmetered") + "\nmodule " + std::string(module_digest) + "\n";
  k.name = entry_name(parts, module_digest, metered);
  return k;
}

std::vector<std::uint8_t> encode_entry(const CacheKey& key, std::span<const std::uint8_t> payload) {
  std::vector<std::uint8_t> head;
  head.assign(kMagic.begin(), kMagic.end());
  put32(head, kFormat);
  put32(head, static_cast<std::uint32_t>(key.material.size()));
  put64(head, payload.size());
  const auto sum = checksum(bytes_of(key.material), payload);
  std::vector<std::uint8_t> out(kHeaderBytes + key.material.size() + payload.size());
  std::memcpy(out.data(), head.data(), head.size());
  std::memcpy(out.data() + head.size(), sum.data(), sum.size());
  std::memcpy(out.data() + kHeaderBytes, key.material.data(), key.material.size());
  if (!payload.empty()) std::memcpy(out.data() + kHeaderBytes + key.material.size(), payload.data(), payload.size());
  return out;
}

namespace {

struct EntryParts {
  std::span<const std::uint8_t> material;
  std::span<const std::uint8_t> payload;
};
// An entry's key material and payload, if its header is whole and its checksum holds (not
// computed when `verify` is false: an entry verified before, code_cache.cpp's stamps).
std::expected<EntryParts, std::string> split_entry(std::span<const std::uint8_t> entry, bool verify = true) {
  if (entry.size() < kHeaderBytes || std::memcmp(entry.data(), kMagic.data(), kMagic.size()) != 0)
    return std::unexpected(std::string("not a code cache entry (no header)"));
  if (get_le(entry, 8, 4) != kFormat) return std::unexpected(std::string("another entry format"));
  const std::uint64_t key_len = get_le(entry, 12, 4);
  const std::uint64_t payload_len = get_le(entry, 16, 8);
  if (key_len > entry.size() - kHeaderBytes || payload_len != entry.size() - kHeaderBytes - key_len)
    return std::unexpected("truncated or padded: " + std::to_string(entry.size()) + " bytes, the header says " +
                           std::to_string(kHeaderBytes + key_len + payload_len));
  EntryParts parts{entry.subspan(kHeaderBytes, key_len), entry.subspan(kHeaderBytes + key_len)};
  if (!verify) return parts;
  const auto sum = checksum(parts.material, parts.payload);
  if (!std::ranges::equal(sum, entry.subspan(24, 32))) return std::unexpected(std::string("checksum mismatch"));
  return parts;
}

}  // namespace

std::expected<std::span<const std::uint8_t>, std::string> decode_entry(std::span<const std::uint8_t> entry,
                                                                       const CacheKey& key, bool verify) {
  auto parts = split_entry(entry, verify);
  if (!parts) return std::unexpected(parts.error());
  if (!std::ranges::equal(parts->material, bytes_of(key.material)))
    return std::unexpected(std::string("made for another key (engine build, LLVM, CPU, fuel mode or module)"));
  return parts->payload;
}

std::vector<std::uint8_t> encode_image(const ObjectImage& image) {
  std::vector<std::uint8_t> out;
  put32(out, static_cast<std::uint32_t>(image.reasons.size()));
  for (const std::string& r : image.reasons) {
    put32(out, static_cast<std::uint32_t>(r.size()));
    out.insert(out.end(), r.begin(), r.end());
  }
  put32(out, static_cast<std::uint32_t>(image.objects.size()));
  for (const std::vector<std::uint8_t>& object : image.objects) {
    put64(out, object.size());
    out.insert(out.end(), object.begin(), object.end());
  }
  return out;
}

std::expected<ObjectView, std::string> decode_image(std::span<const std::uint8_t> payload, std::size_t functions) {
  const auto bad = [] { return std::unexpected(std::string("malformed payload")); };
  std::size_t at = 0;
  if (payload.size() < 4) return bad();
  if (get_le(payload, 0, 4) != functions) return std::unexpected(std::string("made for another function count"));
  at = 4;
  ObjectView image;
  image.reasons.resize(functions);
  for (std::string& r : image.reasons) {
    if (payload.size() - at < 4) return bad();
    const std::uint64_t n = get_le(payload, at, 4);
    at += 4;
    if (payload.size() - at < n) return bad();
    r.assign(reinterpret_cast<const char*>(payload.data() + at), n);
    at += n;
  }
  if (payload.size() - at < 4) return bad();
  const std::uint64_t objects = get_le(payload, at, 4);
  at += 4;
  for (std::uint64_t k = 0; k < objects; ++k) {
    if (payload.size() - at < 8) return bad();
    const std::uint64_t n = get_le(payload, at, 8);
    at += 8;
    if (payload.size() - at < n) return bad();
    image.objects.push_back(payload.subspan(at, n));
    at += n;
  }
  if (at != payload.size()) return bad();
  return image;
}

namespace {

// The module's digest as the key spells it.
// The module's SHA-256, and whether its code canonicalizes NaNs (other code: another entry).
std::string module_digest(const CompiledModule::Impl& cm) {
  return to_hex(cm.content_digest()) + (cm.nan_canonical ? " nan-canonicalization" : "");
}

// SPRAWLING_JIT_PERFMAP=1: a line per function of code loaded from the cache in
// /tmp/perf-<pid>.map (perf's convention for JIT code: `start size name` in hex), as tier-up
// writes for what it compiles: its entry (`wasm::<name>`) and, where whole-module code has one,
// its body (`wasm::<name>.body`, ModuleCode::bodies), where a function called from machine code
// spends its time. The object carries no symbol sizes: each one's size is the distance to the
// next address named (the last one's 4 KiB).
void perf_map_cached(const CompiledModule::Impl& cm, const ModuleCode& code) {
  const char* want = std::getenv("SPRAWLING_JIT_PERFMAP");
  if (want == nullptr || std::string_view(want) != "1") return;
  struct Named {
    std::uintptr_t at;
    std::uint32_t defined;
    bool body;
  };
  std::vector<Named> at;
  for (std::uint32_t i = 0; i < code.entries.size(); ++i) {
    if (const Entry e = code.entries[i].entry.load(std::memory_order_acquire); e != nullptr)
      at.push_back({reinterpret_cast<std::uintptr_t>(e), i, false});
    if (i < code.bodies.size() && code.bodies[i] != nullptr)
      at.push_back({reinterpret_cast<std::uintptr_t>(code.bodies[i]), i, true});
  }
  std::ranges::sort(at, {}, &Named::at);
  std::FILE* file = std::fopen(("/tmp/perf-" + std::to_string(getpid()) + ".map").c_str(), "a");
  if (file == nullptr) return;
  for (std::size_t k = 0; k < at.size(); ++k) {
    const std::uint32_t index = cm.module.imported_funcs + at[k].defined;
    const auto named = cm.module.function_names.find(index);
    const std::string name = named != cm.module.function_names.end() ? named->second : "f" + std::to_string(index);
    const std::uintptr_t size = k + 1 < at.size() ? at[k + 1].at - at[k].at : 4096;
    std::fprintf(file, "%llx %llx wasm::%s%s\n", static_cast<unsigned long long>(at[k].at),
                 static_cast<unsigned long long>(size), name.c_str(), at[k].body ? ".body" : "");
  }
  std::fclose(file);
}

// The key parts only the plugin knows (its build-id, LLVM's version, the target LLVM detects on
// this CPU), as the last process that loaded the plugin found them, kept in the cache itself:
// an entry named by the engine build and CPU words alone. With it a later process checks a code
// entry's whole key without loading the plugin. It can only be stale in one way: LLVM updated
// under the same engine and plugin builds, until a process loads the plugin again and rewrites
// it; code made by the older LLVM for this CPU and engine then still runs, which is sound.
CacheKey host_parts_key(const CacheKeyParts& names) {
  CacheKey k;
  k.material = "sprawling code cache: the plugin's key parts\nengine " + names.engine + "\ncpuid " + names.cpu_id + "\n";
  k.name = digest_hex(bytes_of(k.material)) + ".code";
  return k;
}
std::string host_parts_text(const CacheKeyParts& parts) {
  return "plugin " + parts.plugin + "\nllvm " + parts.llvm + "\ntriple " + parts.target.triple + "\ncpu " +
         parts.target.cpu + "\nfeatures " + parts.target.features + "\n";
}
void remember_host_parts(CodeCacheStorage& cache, const CacheKeyParts& parts) {
  const CacheKey key = host_parts_key(parts);
  const std::string text = host_parts_text(parts);
  if (const auto old = cache.read(key.name)) {
    if (const auto payload = decode_entry(*old, key); payload && std::ranges::equal(*payload, bytes_of(text))) return;
  }
  // Not kept (a full disk, a read-only cache): later processes load the plugin to check entries.
  [[maybe_unused]] const auto written = cache.write(key.name, encode_entry(key, bytes_of(text)));
}
std::expected<CacheKeyParts, std::string> remembered_host_parts(CodeCacheStorage& cache, const CacheKeyParts& names) {
  const CacheKey key = host_parts_key(names);
  const auto entry = cache.read(key.name);
  if (!entry) return std::unexpected(std::string("the plugin's key parts are not in the cache yet"));
  const auto payload = decode_entry(*entry, key);
  if (!payload) return std::unexpected("the plugin's key parts in the cache: " + payload.error());
  CacheKeyParts parts = names;
  std::string_view text(reinterpret_cast<const char*>(payload->data()), payload->size());
  const std::pair<std::string_view, std::string*> fields[] = {{"plugin ", &parts.plugin},
                                                              {"llvm ", &parts.llvm},
                                                              {"triple ", &parts.target.triple},
                                                              {"cpu ", &parts.target.cpu},
                                                              {"features ", &parts.target.features}};
  for (const auto& [label, field] : fields) {
    const std::size_t end = text.find('\n');
    if (!text.starts_with(label) || end == std::string_view::npos)
      return std::unexpected(std::string("the plugin's key parts in the cache: malformed"));
    field->assign(text.substr(label.size(), end - label.size()));
    text.remove_prefix(end + 1);
  }
  if (!text.empty()) return std::unexpected(std::string("the plugin's key parts in the cache: malformed"));
  return parts;
}

// Stamps: a large entry verified in full (its SHA-256: CPython's 24 MB entry takes about 25 ms)
// is noted with its identity (CodeCacheStorage::identity: for a file, device, inode, size and
// times, which every write changes: a new file is renamed over the entry); a later read that finds
// the same identity before and after reading it skips the checksum, as the python arm's snapshot
// stamps do. Every other check (header, lengths, the whole key, the function count, the objects'
// own bounds) still runs. The checksum is there for accidents (a torn or truncated file, which
// changes size and times), not attackers: only the user may write the folder.
constexpr std::size_t kStampFrom = std::size_t{1} << 20;
std::atomic<std::size_t>& stamp_from() {
  static std::atomic<std::size_t> bytes{kStampFrom};
  return bytes;
}
CacheKey stamp_key(std::string_view name) {
  CacheKey k;
  k.material = "sprawling code cache: verified\nentry " + std::string(name) + "\n";
  k.name = digest_hex(bytes_of(k.material)) + ".code";
  return k;
}
bool verified_before(CodeCacheStorage& cache, std::string_view name, std::string_view identity) {
  const CacheKey key = stamp_key(name);
  const auto stamp = cache.read(key.name);
  if (!stamp) return false;
  const auto payload = decode_entry(*stamp, key);
  return payload && std::ranges::equal(*payload, bytes_of(identity));
}
void note_verified(CodeCacheStorage& cache, std::string_view name, std::string_view identity) {
  const CacheKey key = stamp_key(name);
  // Not kept (a full disk, a read-only cache): the next read checks the entry in full again.
  [[maybe_unused]] const auto written = cache.write(key.name, encode_entry(key, bytes_of(identity)));
}

// SPRAWLING_JIT_LINKER=llvm: cached code is linked by the plugin (JITLink) only, never by the
// engine's linker (comparisons of the two, and a way around the engine's should it misbehave).
bool engine_linker_allowed() {
  const char* v = std::getenv("SPRAWLING_JIT_LINKER");
  return v == nullptr || std::string_view(v) != "llvm";
}

// Cached code linked by the engine (object_linker.hpp), without the plugin: the entry checked
// against its whole key (the plugin's parts as remembered_host_parts gives them), its objects
// linked against the runtime helpers, the entries and bodies published. The error says why not.
std::expected<std::shared_ptr<ModuleCode>, std::string> link_in_engine(const CompiledModule::Impl& cm, bool metered,
                                                                        const CacheKeyParts& names,
                                                                        std::string_view digest,
                                                                        std::span<const std::uint8_t> entry,
                                                                        CodeCacheStorage& cache, bool verified) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto parts = remembered_host_parts(cache, names);
  if (!parts) return std::unexpected(parts.error());
  const auto payload = decode_entry(entry, make_key(*parts, digest, metered), !verified);
  if (!payload) return std::unexpected(payload.error());
  auto image = decode_image(*payload, cm.module.code.size());
  if (!image) return std::unexpected(image.error());
  auto linked = link_objects(image->objects, runtime_symbols());
  if (!linked) return std::unexpected(linked.error());
  auto out = std::make_shared<ModuleCode>(image->reasons.size());
  out->reasons = std::move(image->reasons);
  out->from_cache = true;
  out->bodies.assign(out->entries.size(), nullptr);
  for (std::size_t i = 0; i < out->entries.size(); ++i) {
    if (!out->reasons[i].empty()) continue;
    const auto it = linked->symbols.find(entry_symbol(i));
    if (it == linked->symbols.end()) return std::unexpected("no symbol " + entry_symbol(i));
    out->entries[i].entry.store(reinterpret_cast<Entry>(it->second), std::memory_order_release);
    ++out->compiled;
    if (const auto body = linked->symbols.find(body_symbol(i)); body != linked->symbols.end())
      out->bodies[i] = body->second;
  }
  out->set_frame_bounds(linked->frames.known, linked->frames.slots, linked->frames.native);
  out->linked.push_back(std::move(linked->memory));
  out->seconds_codegen = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

// The entry is looked up by its name first (no plugin needed) and linked by the engine; only
// when the engine's linker refuses it does the plugin load, which gives the rest of the key to
// check it against and links it with LLVM's.
std::expected<std::shared_ptr<ModuleCode>, std::string> load_cached(const CompiledModule::Impl& cm, bool metered,
                                                                     CodeCacheStorage& cache) {
  const auto loaded = [&cm](std::shared_ptr<ModuleCode> code) {
    code->code_bytes = 0;
    for (const FunctionBody& body : cm.module.code) code->code_bytes += body.code_size;
    perf_map_cached(cm, *code);
    return code;
  };
  const auto& names = host_name_parts();
  if (!names) return std::unexpected(names.error());
  const std::string digest = module_digest(cm);
  const std::string name = entry_name(*names, digest, metered);
  // The entry's identity around the read: the same before and after, it names these bytes.
  const std::optional<std::string> before = cache.identity(name);
  const auto entry = cache.read(name);
  if (!entry) return std::unexpected("no entry " + name);
  const std::optional<std::string> identity = before && cache.identity(name) == before ? before : std::nullopt;
  if (engine_linker_allowed()) {
    const bool large = entry->size() >= stamp_from().load(std::memory_order_relaxed);
    const bool stamped = identity && large && verified_before(cache, name, *identity);
    auto code = link_in_engine(cm, metered, *names, digest, *entry, cache, stamped);
    if (code) {
      if (identity && large && !stamped) note_verified(cache, name, *identity);
      (*code)->checksum_skipped = stamped;
      return loaded(std::move(*code));
    }
    if (std::getenv("SPRAWLING_JIT_STATS") != nullptr)
      std::fprintf(stderr, "sprawl jit: entry %s not linked by the engine (%s); LLVM's linker tries it\n",
                   name.c_str(), code.error().c_str());
  }
  const auto& parts = host_key_parts();
  if (!parts) return std::unexpected("entry " + name + " not checked: " + parts.error());
  remember_host_parts(cache, *parts);
  const CacheKey key = make_key(*parts, digest, metered);
  const auto payload = decode_entry(*entry, key);
  if (!payload) return std::unexpected("entry " + key.name + " rejected: " + payload.error());
  auto image = decode_image(*payload, cm.module.code.size());
  if (!image) return std::unexpected("entry " + key.name + " rejected: " + image.error());
  auto code = load_object(*image);
  if (!code->error.empty()) return std::unexpected("entry " + key.name + " could not be linked: " + code->error);
  const FrameBounds frames = frame_bounds(image->objects);
  code->set_frame_bounds(frames.known, frames.slots, frames.native);
  return loaded(std::move(code));
}

// The keys of the hot set's entries: the module's, told apart by what they hold.
CacheKey hot_index_key(const CacheKeyParts& parts, const CompiledModule::Impl& cm, bool metered) {
  return make_key(parts, module_digest(cm) + " tier-up index", metered);
}
CacheKey hot_function_key(const CacheKeyParts& parts, const CompiledModule::Impl& cm, bool metered,
                          std::uint32_t defined) {
  return make_key(parts, module_digest(cm) + " tier-up function " + std::to_string(defined), metered);
}
CacheKey hot_upgrades_key(const CacheKeyParts& parts, const CompiledModule::Impl& cm, bool metered,
                          std::uint32_t defined) {
  return make_key(parts, module_digest(cm) + " tier-up upgrades " + std::to_string(defined), metered);
}
CacheKey hot_wanted_key(const CacheKeyParts& parts, const CompiledModule::Impl& cm, bool metered) {
  return make_key(parts, module_digest(cm) + " tier-up wanted", metered);
}
// A hot set function entry: the on-stack replacement header, these flags, the object.
constexpr std::uint32_t kHotQuick = 1;     // quick code (TierUpObject::quick): an upgrade candidate
constexpr std::uint32_t kHotUpgraded = 2;  // an upgrade's object (its function's upgrade name)
// The upgrades of a function processes began (hot_set_begin_upgrade); 0 when none or not intact.
std::uint32_t hot_upgrades(CodeCacheStorage& cache, const CacheKey& key) {
  const auto entry = cache.read(key.name);
  if (!entry) return 0;
  const auto payload = decode_entry(*entry, key);
  if (!payload || payload->size() != 4) return 0;
  return static_cast<std::uint32_t>(get_le(*payload, 0, 4));
}

// The index's functions (defined indices, each once, in the order they were added); none when
// it is absent or not intact.
std::vector<std::uint32_t> hot_index(CodeCacheStorage& cache, const CacheKey& key, std::size_t functions) {
  std::vector<std::uint32_t> out;
  const auto entry = cache.read(key.name);
  if (!entry) return out;
  const auto payload = decode_entry(*entry, key);
  if (!payload || payload->size() % 4 != 0) return out;
  std::vector<char> seen(functions, 0);
  for (std::size_t at = 0; at < payload->size(); at += 4) {
    const auto d = static_cast<std::uint32_t>(get_le(*payload, at, 4));
    if (d < functions && seen[d] == 0) {
      seen[d] = 1;
      out.push_back(d);
    }
  }
  return out;
}

// The key parts for the hot set's entries: as the cache remembers them (no plugin), else the
// plugin's (then remembered).
std::expected<CacheKeyParts, std::string> hot_set_parts(CodeCacheStorage& cache) {
  const auto& names = host_name_parts();
  if (!names) return std::unexpected(names.error());
  if (engine_linker_allowed()) {
    if (auto remembered = remembered_host_parts(cache, *names)) return remembered;
  }
  const auto& full = host_key_parts();
  if (!full) return std::unexpected(full.error());
  remember_host_parts(cache, *full);
  return *full;
}

}  // namespace

void code_cache_set_stamp_from(std::optional<std::size_t> bytes) {
  stamp_from().store(bytes.value_or(kStampFrom), std::memory_order_relaxed);
}

std::vector<std::uint32_t> hot_set_listed(const CompiledModule::Impl& cm, bool metered, CodeCacheStorage& cache) {
  const auto& names = host_name_parts();
  if (!names || !engine_linker_allowed()) return {};
  const auto parts = remembered_host_parts(cache, *names);
  if (!parts) return {};
  return hot_index(cache, hot_index_key(*parts, cm, metered), cm.module.code.size());
}

std::expected<void, std::string> hot_set_want(const CompiledModule::Impl& cm, const ModuleCode& code,
                                              CodeCacheStorage& cache, std::uint32_t defined) {
  const auto parts = hot_set_parts(cache);
  if (!parts) return std::unexpected(parts.error());
  const CacheKey key = hot_wanted_key(*parts, cm, code.metered);
  std::vector<std::uint32_t> wanted = hot_index(cache, key, code.entries.size());
  if (std::ranges::find(wanted, defined) != wanted.end()) return {};
  wanted.push_back(defined);
  std::vector<std::uint8_t> list;
  for (const std::uint32_t d : wanted) put32(list, d);
  return cache.write(key.name, encode_entry(key, list));
}

std::expected<void, std::string> hot_set_add(const CompiledModule::Impl& cm, const ModuleCode& code,
                                             CodeCacheStorage& cache, std::uint32_t defined,
                                             const TierUpObject& object) {
  const auto& parts = host_key_parts();
  if (!parts) return std::unexpected(parts.error());
  // The function first, then the index that names it: a reader never finds a name without its
  // entry unless the cache evicted it (which it skips).
  std::vector<std::uint8_t> payload;
  payload.reserve(8 + object.object.size());
  put32(payload, object.osr);
  put32(payload, (object.quick ? kHotQuick : 0) | (object.upgraded ? kHotUpgraded : 0));
  payload.insert(payload.end(), object.object.begin(), object.object.end());
  const CacheKey fkey = hot_function_key(*parts, cm, code.metered, defined);
  if (auto w = cache.write(fkey.name, encode_entry(fkey, payload)); !w) return w;
  // Read again rather than kept: another process of the same module may have added to it. Two
  // writing at once can each drop the other's newest function, which is compiled again later.
  const CacheKey ikey = hot_index_key(*parts, cm, code.metered);
  std::vector<std::uint32_t> index = hot_index(cache, ikey, code.entries.size());
  if (std::ranges::find(index, defined) != index.end()) return {};
  index.push_back(defined);
  std::vector<std::uint8_t> list;
  list.reserve(4 * index.size());
  for (const std::uint32_t d : index) put32(list, d);
  return cache.write(ikey.name, encode_entry(ikey, list));
}

std::uint32_t hot_set_begin_upgrade(const CompiledModule::Impl& cm, const ModuleCode& code, CodeCacheStorage& cache,
                                    std::uint32_t defined) {
  const auto& parts = host_key_parts();
  if (!parts) return 0;
  const CacheKey key = hot_upgrades_key(*parts, cm, code.metered, defined);
  const std::uint32_t before = hot_upgrades(cache, key);
  std::vector<std::uint8_t> count;
  put32(count, before + 1);
  // Not kept (a full disk, a read-only cache): the next process only waits less.
  [[maybe_unused]] const auto written = cache.write(key.name, encode_entry(key, count));
  return before;
}

std::size_t hot_set_load(const CompiledModule::Impl& cm, ModuleCode& code, CodeCacheStorage& cache,
                         std::vector<std::string>& refused, std::vector<QuickFunction>& quick,
                         std::vector<std::uint32_t>& wanted) {
  const auto parts = hot_set_parts(cache);
  if (!parts) {
    refused.push_back(parts.error());
    return 0;
  }
  struct Found {
    std::uint32_t defined = 0;
    std::uint32_t osr = 0;
    std::uint32_t flags = 0;
    std::string name;                 // its entry's, for what is refused
    std::vector<std::uint8_t> entry;  // the object is in here, after the header and key
    std::span<const std::uint8_t> object;
  };
  std::vector<Found> found;
  for (const std::uint32_t d : hot_index(cache, hot_index_key(*parts, cm, code.metered), code.entries.size())) {
    if (code.entries[d].entry.load(std::memory_order_acquire) != nullptr) continue;
    const CacheKey key = hot_function_key(*parts, cm, code.metered, d);
    const auto refuse = [&](const std::string& why) {
      refused.push_back("function " + std::to_string(d) + ", entry " + key.name + ": " + why);
    };
    auto entry = cache.read(key.name);
    if (!entry) {
      refuse("absent");
      continue;
    }
    const auto payload = decode_entry(*entry, key);
    if (!payload || payload->size() < 8) {
      refuse("rejected: " + (payload ? std::string("too short") : payload.error()));
      continue;
    }
    Found f;
    f.defined = d;
    f.osr = static_cast<std::uint32_t>(get_le(*payload, 0, 4));
    f.flags = static_cast<std::uint32_t>(get_le(*payload, 4, 4));
    f.name = key.name;
    const std::size_t at = static_cast<std::size_t>(payload->data() - entry->data()) + 8;
    f.entry = std::move(*entry);
    f.object = std::span<const std::uint8_t>(f.entry).subspan(at);
    found.push_back(std::move(f));
  }
  std::size_t linked = 0;
  const auto linked_one = [&](const Found& f) {
    if ((f.flags & kHotQuick) != 0) {
      if (code.quick.size() < code.entries.size()) code.quick.resize(code.entries.size(), 0);
      code.quick[f.defined] = 1;
      quick.push_back({f.defined, hot_upgrades(cache, hot_upgrades_key(*parts, cm, code.metered, f.defined))});
    }
    ++linked;
  };
  // The engine links them all into one mapping when it can, each object defining its function's
  // symbol and nothing else (a copy another process made); else each goes through the plugin.
  if (engine_linker_allowed() && !found.empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<const Found*> sole;
    std::vector<std::span<const std::uint8_t>> objects;
    for (const Found& f : found) {
      const std::string symbol = tier_up_symbol(f.defined, (f.flags & kHotUpgraded) != 0);
      auto defined = global_definitions(f.object);
      if (defined && defined->size() == 1 && defined->front() == symbol) {
        sole.push_back(&f);
        objects.push_back(f.object);
      }
    }
    std::vector<HelperSymbol> symbols(runtime_symbols().begin(), runtime_symbols().end());
    symbols.push_back({kTierUpSlotsSymbol, static_cast<void*>(code.entries.data())});
    auto image = link_objects(objects, symbols);
    if (image) {
      for (const Found* f : sole) {
        const auto it = image->symbols.find(tier_up_symbol(f->defined, (f->flags & kHotUpgraded) != 0));
        Slot& slot = code.entries[f->defined];
        code.reasons[f->defined].clear();
        ++code.compiled;
        ++code.from_hot_set;
        slot.osr.store(f->osr, std::memory_order_relaxed);  // published with the entry
        slot.entry.store(reinterpret_cast<Entry>(it->second), std::memory_order_release);
        linked_one(*f);
      }
      code.linked.push_back(std::move(image->memory));
      code.linked_bytes += image->memory_bytes;
      code.seconds_codegen += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      perf_map_cached(cm, code);
      std::erase_if(found, [&](const Found& f) { return code.entries[f.defined].entry.load() != nullptr; });
    } else if (std::getenv("SPRAWLING_JIT_STATS") != nullptr) {
      std::fprintf(stderr, "sprawl jit: tier-up: the hot set not linked by the engine (%s); LLVM's linker tries it\n",
                   image.error().c_str());
    }
  }
  for (const Found& f : found) {
    if (const PluginStatus& p = plugin(); !p.loaded) {
      refused.push_back("function " + std::to_string(f.defined) + ", entry " + f.name + ": not linked: " + p.error);
      continue;
    }
    if (std::string why = link_tier_up_object(cm, code, f.defined, f.osr, f.object, (f.flags & kHotUpgraded) != 0);
        !why.empty()) {
      refused.push_back("function " + std::to_string(f.defined) + ", entry " + f.name + ": not linked: " + why);
      continue;
    }
    linked_one(f);
  }
  // The functions processes wanted and did not finish: this process takes them (the list is
  // emptied; one cancelled again is added again), so one that cannot be compiled is tried once.
  const CacheKey wanted_key = hot_wanted_key(*parts, cm, code.metered);
  const std::vector<std::uint32_t> listed = hot_index(cache, wanted_key, code.entries.size());
  for (const std::uint32_t d : listed)
    if (code.entries[d].entry.load(std::memory_order_acquire) == nullptr) wanted.push_back(d);
  if (!listed.empty()) [[maybe_unused]] const auto emptied = cache.write(wanted_key.name, encode_entry(wanted_key, {}));
  return linked;
}

}  // namespace jit

const jit::ModuleCode& CompiledModule::Impl::jit(int variant) const {
  const std::lock_guard lock(jit_mutex);
  if (!jit_code[variant]) jit_code[variant] = jit::compile_module(*this, variant == kMetered);
  return *jit_code[variant];
}

jit::ModuleCode* CompiledModule::Impl::jit_for(int variant, Tier tier, const std::shared_ptr<CodeCacheStorage>& cache,
                                               bool tier_up) const {
  const std::lock_guard lock(jit_mutex);
  // Whole-module code (cached or compiled for Tier::Compile) serves every store once it exists;
  // tier-up code has its own slot, so a Compile store after a tier-up one still gets the whole
  // module compiled rather than only what turned hot.
  if (jit_code[variant]) return jit_code[variant].get();
  std::string miss;
  if (cache != nullptr && !jit_cache_tried[variant]) {
    jit_cache_tried[variant] = true;
    auto code = jit::load_cached(*this, variant == kMetered, *cache);
    if (code) {
      jit_code[variant] = std::move(*code);
      return jit_code[variant].get();
    }
    miss = std::move(code.error());
  }
  if (tier != Tier::Compile) {
    // Auto interprets the module; say why when asked (a missing plugin shows here too).
    // Interpret only looks (cached_code_ready, for a Compile store that compiles on a miss).
    if (tier == Tier::Auto && !miss.empty() && std::getenv("SPRAWLING_JIT_STATS") != nullptr)
      std::fprintf(stderr, "sprawl jit: auto: %s; the interpreter runs the module%s\n", miss.c_str(),
                   tier_up && tier == Tier::Auto ? ", hot functions compile in the background" : "");
    if (!tier_up || tier != Tier::Auto) return nullptr;
    // Nothing compiled yet: hot functions, in the background (tiering.cpp).
    if (!jit_tier_up[variant]) {
      jit_tier_up[variant] = jit::tier_up_code(*this, variant == kMetered, cache);
      jit_tier_up[variant]->cache_miss = std::move(miss);
    }
    return jit_tier_up[variant].get();
  }
  auto code = jit::compile_module(*this, variant == kMetered);
  // Stopped at a job's deadline: that job ends there (interpreted, DeadlineExceeded at its entry
  // check), and the next store compiles the module again.
  if (code->stopped_at_deadline) return nullptr;
  jit_code[variant] = std::move(code);
  jit_code[variant]->cache_miss = std::move(miss);
  return jit_code[variant].get();
}

std::expected<PrecompileReport, std::string> precompile(const CompiledModule& module, bool metered,
                                                        CodeCacheStorage& cache, const CompileOptions& options) {
  const CompiledModule::Impl& cm = module.impl();
  const auto& parts = jit::host_key_parts();
  if (!parts) return std::unexpected(parts.error());
  const std::string digest = jit::module_digest(cm);
  auto image = jit::compile_object(cm, metered, options);
  if (!image) return std::unexpected("the compiled tier could not compile the module: " + image.error());
  PrecompileReport report;
  report.cpu_seconds = image->cpu_seconds;
  report.wall_seconds = image->wall_seconds;
  report.threads = image->threads;
  report.peak_heap_growth = image->peak_heap_growth;
  report.functions = image->reasons.size();
  report.compiled = static_cast<std::size_t>(std::ranges::count(image->reasons, std::string()));
  for (const FunctionBody& body : cm.module.code) report.wasm_code_bytes += body.code_size;
  jit::remember_host_parts(cache, *parts);
  const jit::CacheKey key = jit::make_key(*parts, digest, metered);
  const std::vector<std::uint8_t> entry = jit::encode_entry(key, jit::encode_image(*image));
  if (auto w = cache.write(key.name, entry); !w) return std::unexpected("the code cache: " + w.error());
  report.entry = key.name;
  report.entry_bytes = entry.size();
  return report;
}

}  // namespace sprawling::wasm
