// The disassembler of translated code (internal_disasm.hpp): one generic walk over the
// instructions, printing each operand by its declared kind.
#include "wasm/icode/internal_disasm.hpp"

#include "wasm/icode/code.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <bit>
#include <cstdio>

namespace sprawling::wasm {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

std::string slot_name(const CompiledFunc& f, u32 s) {
  if (s < f.num_params) return "p" + std::to_string(s);
  if (s < f.num_locals) return "l" + std::to_string(s - f.num_params);
  return "t" + std::to_string(s - f.num_locals);
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string target(u32 at, u32 word) {
  const auto off = static_cast<std::int32_t>(word);
  return std::to_string(off) + "->@" + std::to_string(static_cast<std::int64_t>(at) + off);
}

std::string operand_text(const Module& m, const CompiledFunc& f, const Instr& in, const u32* ip, const OperandInfo& o) {
  const u32 v = ip[o.word];
  const u64 v64 = static_cast<u64>(v) | (o.word + 1u < in.words ? static_cast<u64>(ip[o.word + 1]) << 32 : 0);
  switch (o.kind) {
    case OperandKind::Dst:
    case OperandKind::Src:
    case OperandKind::Base: return slot_name(f, v);
    case OperandKind::VDst:
    case OperandKind::VSrc: return slot_name(f, v) + ":v128";  // and the next slot
    case OperandKind::V128: {
      // The 16 bytes in lane order (v128.const's little-endian bytes; a shuffle's lane indexes).
      std::string s = "0x";
      char b[4];
      for (u32 w = 0; w < 4; ++w)
        for (u32 i = 0; i < 4; ++i) {
          std::snprintf(b, sizeof b, "%02x", (ip[o.word + w] >> (8 * i)) & 0xFFu);
          s += b;
        }
      return s;
    }
    case OperandKind::Lane:
    case OperandKind::Imm:
    case OperandKind::Count:
    case OperandKind::Type:
    case OperandKind::Table:
    case OperandKind::Global:
    case OperandKind::Elem:
    case OperandKind::Data:
    case OperandKind::Fuel:  // a fuel segment's cost
    case OperandKind::Fall: return std::to_string(v);
    case OperandKind::Imm64: return std::to_string(v64);
    case OperandKind::F32: return number(std::bit_cast<float>(v));
    case OperandKind::F64: return number(std::bit_cast<double>(v64));
    case OperandKind::Func: {
      const auto it = m.function_names.find(v);
      return it == m.function_names.end() ? std::to_string(v) : std::to_string(v) + "(" + it->second + ")";
    }
    case OperandKind::Branch: return target(in.at, v);
    case OperandKind::Targets: {
      std::string s = "[";
      for (u32 w = o.word; w < in.words; ++w) s += (w == o.word ? "" : " ") + target(in.at, ip[w]);
      return s + "]";
    }
  }
  return "?";
}

}  // namespace

std::string disassemble(const Module& module, std::uint32_t func_index, const CompiledFunc& f, bool metered) {
  std::string out = "func " + std::to_string(func_index);
  if (const auto it = module.function_names.find(func_index); it != module.function_names.end()) {
    out += " $" + it->second;
  } else {
    for (const Export& e : module.exports)
      if (e.kind == ExternKind::Func && e.index == func_index) {
        out += " (export \"" + e.name + "\")";
        break;
      }
  }
  out += " (" + std::string(metered ? "metered" : "unmetered") + "): params " + std::to_string(f.num_params) +
         ", locals " + std::to_string(f.num_locals - f.num_params) + ", results " + std::to_string(f.num_results) +
         ", frame " + std::to_string(f.frame_slots) + " slots, " + std::to_string(f.code.size()) + " words\n";
  const auto decoded = decode_instructions(f.code, metered);
  if (!decoded) return out + "  error: " + decoded.error() + "\n";
  std::size_t site = 0;
  for (const Instr& in : *decoded) {
    const u32* ip = f.code.data() + in.at;
    char head[32];
    std::snprintf(head, sizeof head, "  %5u  ", in.at);
    std::string line = head;
    // Op names padded to a column, so that operands line up in the common case.
    const std::string_view name = info(in.op).name;
    line += name;
    const LayoutInfo& l = layout_of(in.op);
    if (l.count > 0 && name.size() < 13) line.append(13 - name.size(), ' ');
    for (std::size_t k = 0; k < l.count; ++k) {
      const OperandInfo& o = l.operands[k];
      if (o.kind == OperandKind::Fall && !metered) continue;
      line += " " + std::string(o.name) + "=" + operand_text(module, f, in, ip, o);
    }
    while (site < f.trap_sites.size() && f.trap_sites[site].first < in.at) ++site;
    if (site < f.trap_sites.size() && f.trap_sites[site].first == in.at) {
      char t[40];
      std::snprintf(t, sizeof t, "  ; traps @0x%x", f.trap_sites[site].second);
      line += t;
    }
    out += line + "\n";
  }
  return out;
}

std::string disassemble(const CompiledModule& module, std::uint32_t func_index, bool metered) {
  const Module& m = module.module();
  return disassemble(m, func_index, module.impl().code(func_index - m.imported_funcs, metered), metered);
}

}  // namespace sprawling::wasm
