// The engine's linker for the code cache's objects (object_linker.hpp).
//
// Layout: one anonymous mapping, asked for just below the engine's own code so that calls to the
// runtime helpers reach them with a 32-bit displacement (else each goes through a 16-byte stub:
// `jmp *0(%rip)` and the address). Code sections first, then the stubs, then read-only sections
// and the GOT, then writable ones, each class starting on a page; every section keeps its
// alignment. Symbols: a defined symbol is its section's address plus its value; an undefined
// one is a global of another object, else a helper by name. Relocations are applied while the
// whole mapping is writable, then each class gets its protection.
#include "wasm/jit/object_linker.hpp"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_set>
#include <vector>

namespace sprawling::wasm::jit {

namespace {

constexpr std::size_t kStubBytes = 16;
constexpr std::uint64_t kMaxAlign = 4096;
// Below the engine's code by this much (and the image's size): the mapping lands within a 32-bit
// displacement of the helpers when the kernel grants the hint.
constexpr std::uintptr_t kHintGap = std::uintptr_t{256} << 20;

template <class T>
T read_at(std::span<const std::uint8_t> bytes, std::uint64_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

bool within(std::span<const std::uint8_t> bytes, std::uint64_t at, std::uint64_t size) {
  return at <= bytes.size() && size <= bytes.size() - at;
}

enum class Class : std::uint8_t { None, Code, Read, Write };

struct Object {
  std::span<const std::uint8_t> bytes;
  std::vector<Elf64_Shdr> sections;
  std::vector<Class> cls;            // per section: where it goes, None when not loaded
  std::vector<std::uint64_t> at;     // per section: its offset within its class
  std::vector<std::uintptr_t> addr;  // per section: its address, once mapped
  std::vector<Elf64_Sym> symbols;
  std::vector<std::string_view> names;  // per symbol
};

std::string where(std::size_t k) { return "object " + std::to_string(k) + ": "; }

std::string_view name_at(std::span<const std::uint8_t> bytes, const Elf64_Shdr& strtab, std::uint32_t offset) {
  if (offset >= strtab.sh_size) return {};
  const auto* begin = reinterpret_cast<const char*>(bytes.data() + strtab.sh_offset + offset);
  const std::size_t room = strtab.sh_size - offset;
  return {begin, strnlen(begin, room)};
}

// Headers, sections and symbols of one object, checked against its bytes.
std::expected<Object, std::string> parse(std::span<const std::uint8_t> bytes) {
  Object o;
  o.bytes = bytes;
  if (!within(bytes, 0, sizeof(Elf64_Ehdr))) return std::unexpected(std::string("shorter than an ELF header"));
  const auto eh = read_at<Elf64_Ehdr>(bytes, 0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_REL || eh.e_machine != EM_X86_64)
    return std::unexpected(std::string("not a relocatable x86-64 ELF object"));
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      !within(bytes, eh.e_shoff, std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr)))
    return std::unexpected(std::string("section headers out of bounds"));
  o.sections.resize(eh.e_shnum);
  for (std::size_t i = 0; i < o.sections.size(); ++i) {
    o.sections[i] = read_at<Elf64_Shdr>(bytes, eh.e_shoff + i * sizeof(Elf64_Shdr));
    const Elf64_Shdr& s = o.sections[i];
    if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL && !within(bytes, s.sh_offset, s.sh_size))
      return std::unexpected("section " + std::to_string(i) + " out of bounds");
  }
  o.cls.assign(o.sections.size(), Class::None);
  o.at.assign(o.sections.size(), 0);
  o.addr.assign(o.sections.size(), 0);
  std::optional<std::size_t> symtab;
  for (std::size_t i = 0; i < o.sections.size(); ++i) {
    const Elf64_Shdr& s = o.sections[i];
    if (s.sh_type == SHT_SYMTAB) {
      if (symtab) return std::unexpected(std::string("two symbol tables"));
      symtab = i;
    }
    if ((s.sh_flags & SHF_ALLOC) == 0 || s.sh_size == 0) continue;
    if (s.sh_type != SHT_PROGBITS && s.sh_type != SHT_NOBITS)
      return std::unexpected("allocated section " + std::to_string(i) + " of type " + std::to_string(s.sh_type));
    if ((s.sh_flags & SHF_TLS) != 0) return std::unexpected(std::string("a thread-local section"));
    if (s.sh_addralign > kMaxAlign || (s.sh_addralign != 0 && !std::has_single_bit(s.sh_addralign)))
      return std::unexpected("section " + std::to_string(i) + " aligned to " + std::to_string(s.sh_addralign));
    o.cls[i] = (s.sh_flags & SHF_EXECINSTR) != 0 ? Class::Code : (s.sh_flags & SHF_WRITE) != 0 ? Class::Write : Class::Read;
  }
  if (!symtab) return std::unexpected(std::string("no symbol table"));
  const Elf64_Shdr& st = o.sections[*symtab];
  if (st.sh_entsize != sizeof(Elf64_Sym) || st.sh_link >= o.sections.size() ||
      o.sections[st.sh_link].sh_type != SHT_STRTAB)
    return std::unexpected(std::string("a malformed symbol table"));
  const Elf64_Shdr& strtab = o.sections[st.sh_link];
  const std::size_t count = st.sh_size / sizeof(Elf64_Sym);
  o.symbols.resize(count);
  o.names.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    o.symbols[i] = read_at<Elf64_Sym>(bytes, st.sh_offset + i * sizeof(Elf64_Sym));
    o.names[i] = name_at(bytes, strtab, o.symbols[i].st_name);
    const std::uint16_t shndx = o.symbols[i].st_shndx;
    if (shndx == SHN_COMMON || (shndx >= SHN_LORESERVE && shndx != SHN_ABS) ||
        (shndx != SHN_UNDEF && shndx != SHN_ABS && shndx >= o.sections.size()))
      return std::unexpected("symbol '" + std::string(o.names[i]) + "' in section " + std::to_string(shndx));
  }
  return o;
}

// The value-stack frame bound (kFrameSlotsSection) and the native one (.stack_sizes) one object
// gives; each empty when it does not.
struct ObjectFrames {
  std::optional<std::uint64_t> slots;
  std::optional<std::uint64_t> native;
};
ObjectFrames object_frames(const Object& o) {
  ObjectFrames b;
  std::size_t sized = 0;
  std::uint64_t native = 0;
  bool well_formed = true;
  std::optional<std::size_t> strtab_index;
  const auto eh = read_at<Elf64_Ehdr>(o.bytes, 0);
  if (eh.e_shstrndx < o.sections.size() && o.sections[eh.e_shstrndx].sh_type == SHT_STRTAB) strtab_index = eh.e_shstrndx;
  if (!strtab_index) return b;
  for (const Elf64_Shdr& s : o.sections) {
    if (s.sh_type != SHT_PROGBITS) continue;
    const std::string_view name = name_at(o.bytes, o.sections[*strtab_index], s.sh_name);
    const std::uint8_t* at = o.bytes.data() + s.sh_offset;
    const std::uint8_t* end = at + s.sh_size;
    if (name == kFrameSlotsSection) {
      for (; end - at >= 8; at += 8) {
        std::uint64_t v = 0;
        std::memcpy(&v, at, sizeof v);
        b.slots = std::max(b.slots.value_or(0), v);
      }
    } else if (name == ".stack_sizes") {
      while (at < end) {
        if (end - at < 8) {
          well_formed = false;
          break;
        }
        at += 8;
        std::uint64_t size = 0;
        unsigned shift = 0;
        bool done = false;
        while (at < end && shift < 64) {
          const std::uint8_t byte = *at++;
          size |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
          shift += 7;
          if ((byte & 0x80) == 0) {
            done = true;
            break;
          }
        }
        if (!done) {
          well_formed = false;
          break;
        }
        native = std::max(native, size);
        ++sized;
      }
    }
  }
  std::size_t functions = 0;
  for (const Elf64_Sym& sym : o.symbols)
    if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF) ++functions;
  if (well_formed && functions > 0 && sized >= functions) b.native = native;
  return b;
}

bool fits_i32(std::int64_t v) {
  return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

// Adds one object's bounds to `all` (the first object: `first`).
void add_frames(FrameBounds& all, const ObjectFrames& b, bool first) {
  all.known = (first || all.known) && b.slots && b.native;
  all.slots = std::max(all.slots, b.slots.value_or(0));
  all.native = std::max(all.native, b.native.value_or(0));
}

std::uint64_t align_up(std::uint64_t v, std::uint64_t align) { return align <= 1 ? v : (v + align - 1) & ~(align - 1); }

struct Unmap {
  std::size_t bytes = 0;
  void operator()(void* p) const { ::munmap(p, bytes); }
};

}  // namespace

std::expected<LinkedObjects, std::string> link_objects(std::span<const std::span<const std::uint8_t>> objects,
                                                       std::span<const HelperSymbol> helpers) {
  std::vector<Object> in;
  in.reserve(objects.size());
  for (std::size_t k = 0; k < objects.size(); ++k) {
    auto o = parse(objects[k]);
    if (!o) return std::unexpected(where(k) + o.error());
    in.push_back(std::move(*o));
  }
  std::unordered_map<std::string_view, std::uintptr_t> helper_at;
  for (const HelperSymbol& h : helpers) helper_at.emplace(h.name, reinterpret_cast<std::uintptr_t>(h.address));

  // Sizes of the three classes, each section placed at its alignment; then the stubs (one per
  // helper a call names) after the code and the GOT (one slot per symbol a GOT relocation names)
  // after the constants.
  std::uint64_t size[4] = {0, 0, 0, 0};
  for (Object& o : in) {
    for (std::size_t i = 0; i < o.sections.size(); ++i) {
      if (o.cls[i] == Class::None) continue;
      std::uint64_t& end = size[static_cast<int>(o.cls[i])];
      end = align_up(end, o.sections[i].sh_addralign);
      o.at[i] = end;
      end += o.sections[i].sh_size;
    }
  }
  std::unordered_map<std::string_view, std::size_t> stub_of;
  std::unordered_map<std::string_view, std::size_t> got_of;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const Object& o = in[k];
    for (const Elf64_Shdr& rs : o.sections) {
      if (rs.sh_type == SHT_REL) return std::unexpected(where(k) + "REL relocations (only RELA are linked)");
      if (rs.sh_type != SHT_RELA || rs.sh_info >= o.sections.size() || o.cls[rs.sh_info] == Class::None) continue;
      if (rs.sh_entsize != sizeof(Elf64_Rela)) return std::unexpected(where(k) + "a malformed relocation section");
      for (std::uint64_t r = 0; r < rs.sh_size / sizeof(Elf64_Rela); ++r) {
        const auto rela = read_at<Elf64_Rela>(o.bytes, rs.sh_offset + r * sizeof(Elf64_Rela));
        const std::uint64_t sym = ELF64_R_SYM(rela.r_info);
        const std::uint32_t type = ELF64_R_TYPE(rela.r_info);
        if (sym >= o.symbols.size()) return std::unexpected(where(k) + "a relocation names no symbol");
        const std::string_view name = o.names[sym];
        if (type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX) {
          if (name.empty()) return std::unexpected(where(k) + "a GOT relocation of an unnamed symbol");
          got_of.emplace(name, got_of.size());
        } else if (type == R_X86_64_PLT32 && o.symbols[sym].st_shndx == SHN_UNDEF && helper_at.contains(name)) {
          stub_of.emplace(name, stub_of.size());
        }
      }
    }
  }
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t stubs_at = align_up(size[1], kStubBytes);
  const std::uint64_t code_bytes = align_up(stubs_at + stub_of.size() * kStubBytes, page);
  const std::uint64_t got_at = align_up(size[2], 8);
  const std::uint64_t read_bytes = align_up(got_at + got_of.size() * 8, page);
  const std::uint64_t write_bytes = align_up(size[3], page);
  const std::uint64_t total = code_bytes + read_bytes + write_bytes;
  if (total == 0) return std::unexpected(std::string("nothing to load"));

  // Just below the engine's code (the helpers' addresses) when that room is free.
  void* hint = nullptr;
  if (!helpers.empty()) {
    const auto engine = reinterpret_cast<std::uintptr_t>(helpers.front().address);
    if (engine > kHintGap + total) hint = reinterpret_cast<void*>((engine - kHintGap - total) & ~(page - 1));
  }
  void* map = ::mmap(hint, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return std::unexpected("mapping " + std::to_string(total) + " bytes failed");
  LinkedObjects out;
  out.memory = std::shared_ptr<void>(map, Unmap{total});
  out.memory_bytes = total;
  const auto base = reinterpret_cast<std::uintptr_t>(map);
  const std::uintptr_t class_base[4] = {0, base, base + code_bytes, base + code_bytes + read_bytes};
  for (Object& o : in) {
    for (std::size_t i = 0; i < o.sections.size(); ++i) {
      if (o.cls[i] == Class::None) continue;
      o.addr[i] = class_base[static_cast<int>(o.cls[i])] + o.at[i];
      if (o.sections[i].sh_type == SHT_PROGBITS)
        std::memcpy(reinterpret_cast<void*>(o.addr[i]), o.bytes.data() + o.sections[i].sh_offset, o.sections[i].sh_size);
    }
  }

  // Global definitions, then every symbol's address.
  std::unordered_set<std::string> weak;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const Object& o = in[k];
    for (std::size_t s = 1; s < o.symbols.size(); ++s) {
      const Elf64_Sym& sym = o.symbols[s];
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) || o.names[s].empty()) continue;
      std::uintptr_t a = sym.st_value;
      if (sym.st_shndx != SHN_ABS) {
        if (o.cls[sym.st_shndx] == Class::None)
          return std::unexpected(where(k) + "symbol '" + std::string(o.names[s]) + "' in a section not loaded");
        a += o.addr[sym.st_shndx];
      }
      // A global definition takes the place of a weak one; two global ones are an error.
      const auto [it, added] = out.symbols.emplace(std::string(o.names[s]), reinterpret_cast<void*>(a));
      if (added) {
        if (bind == STB_WEAK) weak.emplace(it->first);
      } else if (bind == STB_GLOBAL) {
        if (weak.erase(it->first) == 0)
          return std::unexpected(where(k) + "symbol '" + std::string(o.names[s]) + "' defined twice");
        it->second = reinterpret_cast<void*>(a);
      }
    }
  }
  // A name: a global of the objects, else a helper.
  const auto resolve = [&](std::string_view name) -> std::expected<std::uintptr_t, std::string> {
    if (const auto it = out.symbols.find(name); it != out.symbols.end())
      return reinterpret_cast<std::uintptr_t>(it->second);
    if (const auto it = helper_at.find(name); it != helper_at.end()) return it->second;
    return std::unexpected("undefined symbol '" + std::string(name) + "'");
  };
  const auto address = [&](const Object& o, std::uint64_t s) -> std::expected<std::uintptr_t, std::string> {
    const Elf64_Sym& sym = o.symbols[s];
    if (sym.st_shndx == SHN_UNDEF) return resolve(o.names[s]);
    if (sym.st_shndx == SHN_ABS) return sym.st_value;
    if (o.cls[sym.st_shndx] == Class::None)
      return std::unexpected("symbol '" + std::string(o.names[s]) + "' in a section not loaded");
    return o.addr[sym.st_shndx] + sym.st_value;
  };
  for (const auto& [name, slot] : stub_of) {
    auto* p = reinterpret_cast<std::uint8_t*>(class_base[1] + stubs_at + slot * kStubBytes);
    static constexpr std::uint8_t kJmp[6] = {0xFF, 0x25, 0, 0, 0, 0};  // jmp *0(%rip): the address below
    std::memcpy(p, kJmp, sizeof kJmp);
    const std::uintptr_t target = helper_at.at(name);
    std::memcpy(p + sizeof kJmp, &target, sizeof target);
  }
  for (const auto& [name, slot] : got_of) {
    const auto v = resolve(name);
    if (!v) return std::unexpected(v.error());
    std::memcpy(reinterpret_cast<void*>(class_base[2] + got_at + slot * 8), &*v, sizeof *v);
  }

  // Relocations of loaded sections.
  for (std::size_t k = 0; k < in.size(); ++k) {
    const Object& o = in[k];
    for (const Elf64_Shdr& rs : o.sections) {
      if (rs.sh_type != SHT_RELA || rs.sh_info >= o.sections.size() || o.cls[rs.sh_info] == Class::None) continue;
      const Elf64_Shdr& target = o.sections[rs.sh_info];
      if (target.sh_type == SHT_NOBITS) return std::unexpected(where(k) + "relocations of a section with no bytes");
      for (std::uint64_t r = 0; r < rs.sh_size / sizeof(Elf64_Rela); ++r) {
        const auto rela = read_at<Elf64_Rela>(o.bytes, rs.sh_offset + r * sizeof(Elf64_Rela));
        const std::uint64_t s = ELF64_R_SYM(rela.r_info);
        const std::uint32_t type = ELF64_R_TYPE(rela.r_info);
        if (type == R_X86_64_NONE) continue;
        const std::uint64_t width = type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;
        if (rela.r_offset > target.sh_size || width > target.sh_size - rela.r_offset)
          return std::unexpected(where(k) + "a relocation outside its section");
        const std::uintptr_t p = o.addr[rs.sh_info] + rela.r_offset;
        if (type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX) {
          const std::uintptr_t slot = class_base[2] + got_at + got_of.at(o.names[s]) * 8;
          const auto v = static_cast<std::int64_t>(slot + static_cast<std::uint64_t>(rela.r_addend) - p);
          if (!fits_i32(v)) return std::unexpected(where(k) + "a GOT slot out of a 32-bit displacement's reach");
          const auto v32 = static_cast<std::int32_t>(v);
          std::memcpy(reinterpret_cast<void*>(p), &v32, 4);
          continue;
        }
        auto a = address(o, s);
        if (!a) return std::unexpected(where(k) + a.error());
        const std::uint64_t sa = *a + static_cast<std::uint64_t>(rela.r_addend);
        switch (type) {
          case R_X86_64_64:
            std::memcpy(reinterpret_cast<void*>(p), &sa, 8);
            break;
          case R_X86_64_PC64: {
            const std::uint64_t v = sa - p;
            std::memcpy(reinterpret_cast<void*>(p), &v, 8);
            break;
          }
          case R_X86_64_PC32:
          case R_X86_64_PLT32: {
            auto v = static_cast<std::int64_t>(sa - p);
            if (!fits_i32(v) && type == R_X86_64_PLT32 && o.symbols[s].st_shndx == SHN_UNDEF) {
              if (const auto it = stub_of.find(o.names[s]); it != stub_of.end()) {
                const std::uintptr_t stub = class_base[1] + stubs_at + it->second * kStubBytes;
                v = static_cast<std::int64_t>(stub + static_cast<std::uint64_t>(rela.r_addend) - p);
              }
            }
            if (!fits_i32(v))
              return std::unexpected(where(k) + "'" + std::string(o.names[s]) + "' out of a 32-bit displacement's reach");
            const auto v32 = static_cast<std::int32_t>(v);
            std::memcpy(reinterpret_cast<void*>(p), &v32, 4);
            break;
          }
          default:
            return std::unexpected(where(k) + "relocation type " + std::to_string(type) + " is not linked here");
        }
      }
    }
    add_frames(out.frames, object_frames(o), k == 0);
  }
  if (::mprotect(map, code_bytes, PROT_READ | PROT_EXEC) != 0 ||
      (read_bytes != 0 && ::mprotect(static_cast<std::uint8_t*>(map) + code_bytes, read_bytes, PROT_READ) != 0))
    return std::unexpected(std::string("setting the code's protection failed"));
  return out;
}

FrameBounds frame_bounds(std::span<const std::span<const std::uint8_t>> objects) {
  FrameBounds all;
  for (std::size_t k = 0; k < objects.size(); ++k) {
    const auto o = parse(objects[k]);
    if (!o) return {};
    add_frames(all, object_frames(*o), k == 0);
  }
  return all;
}

std::expected<std::vector<std::string>, std::string> global_definitions(std::span<const std::uint8_t> object) {
  auto o = parse(object);
  if (!o) return std::unexpected(o.error());
  std::vector<std::string> out;
  for (std::size_t s = 1; s < o->symbols.size(); ++s) {
    const unsigned bind = ELF64_ST_BIND(o->symbols[s].st_info);
    if (o->symbols[s].st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK))
      out.emplace_back(o->names[s]);
  }
  return out;
}

}  // namespace sprawling::wasm::jit
