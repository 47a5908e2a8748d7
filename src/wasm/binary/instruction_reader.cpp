// The instruction reader (instruction_reader.hpp): one instruction's opcode and immediates, with
// the binary format's malformed-input rules and wording.
// https://webassembly.github.io/spec/core/binary/instructions.html
#include "wasm/binary/instruction_reader.hpp"

#include <algorithm>

namespace sprawling::wasm {

namespace {

bool read_zero_byte(ByteReader& r) {
  const std::size_t at = r.offset();
  if (r.u8() != 0 && r.ok()) return r.malformed(at, "zero byte expected");
  return r.ok();
}

// ref.null's heap type (2.0: a reftype byte, 0x70 or 0x6F, read as the heap types func, extern).
bool read_null_heaptype(ByteReader& r, ValType& out, const Features& features) {
  const std::size_t at = r.offset();
  std::uint32_t heap = 0;
  if (!read_heaptype(r, heap, features)) return false;
  if (!features.function_references && heap >= ValType::kAbstractHeap && heap_is_bottom(heap))
    return r.malformed(at, "malformed reference type");
  out = ValType::ref(true, heap);
  return true;
}

}  // namespace

bool read_heaptype(ByteReader& r, std::uint32_t& heap, const Features& features) {
  const std::size_t at = r.offset();
  const std::optional<std::uint8_t> first = r.peek();
  if (first && (*first & 0xC0) == 0x40) {
    // A one-byte negative s33: an abstract heap type.
    const std::uint8_t b = r.u8();
    const bool known_2_0 = b == ValType::kFunc || b == ValType::kExtern || b == ValType::kExn;
    if (known_2_0 || (features.function_references && is_supported_heap_byte(b))) {
      heap = ValType::kAbstractHeap | b;
      return true;
    }
    if (is_gc_heap_byte(b) && features.function_references) {
      if (features.gc) {
        heap = ValType::kAbstractHeap | b;
        return true;
      }
      return r.malformed(at, concat("malformed heap type ", heap_name(b), " (garbage collection: the gc feature is off)"));
    }
    return r.malformed(at, features.function_references ? "malformed heap type" : "malformed reference type");
  }
  const std::int64_t idx = r.s33();
  if (!r.ok()) return false;
  if (idx < 0) return r.malformed(at, "malformed heap type");
  if (!features.function_references) {
    return r.malformed(at, "malformed reference type (a type index: typed function references are disabled, the "
                           "function-references feature is off)");
  }
  if (idx > ValType::kMaxTypeIndex) return r.malformed(at, concat("type index ", idx, " out of range"));
  heap = static_cast<std::uint32_t>(idx);
  return true;
}

bool read_valtype(ByteReader& r, ValType& out, const Features& features) {
  const std::size_t at = r.offset();
  const std::uint8_t b = r.u8();
  if (!r.ok()) return false;
  if (is_valtype_byte(b)) {
    out = ValType::from_byte(b);
    return true;
  }
  if (features.function_references) {
    if (b == ValType::kRefNullByte || b == ValType::kRefByte) {
      std::uint32_t heap = 0;
      if (!read_heaptype(r, heap, features)) return false;
      out = ValType::ref(b == ValType::kRefNullByte, heap);
      return true;
    }
    if (b == ValType::kNoFunc || b == ValType::kNoExtern || b == ValType::kNoExn) {  // nullfuncref, …
      out = ValType::abstract_ref(true, b);
      return true;
    }
  }
  if (is_gc_heap_byte(b) && features.function_references) {
    if (features.gc) {
      out = ValType::abstract_ref(true, b);
      return true;
    }
    return r.malformed(at, concat("malformed value type ", name(ValType::abstract_ref(true, b)),
                                  " (garbage collection: the gc feature is off)"));
  }
  if (!features.function_references && (b == ValType::kRefNullByte || b == ValType::kRefByte)) {
    return r.malformed(at, concat("malformed value type 0x", hex_byte(b),
                                  " (a typed reference: the function-references feature is off)"));
  }
  return r.malformed(at, concat("malformed value type 0x", hex_byte(b)));
}

namespace {

// A memarg: alignment flags (bit 6: a memidx follows, with multi-memory), then the offset.
bool read_memarg(ByteReader& r, Instruction& ins, const Features& features) {
  const std::size_t at = r.offset();
  ins.align = r.u32();
  if (features.multi_memory && r.ok()) {
    if (ins.align >= 0x80) return r.malformed(at, "malformed memop flags");
    if ((ins.align & 0x40) != 0) {
      ins.align &= ~std::uint32_t{0x40};
      ins.memory = r.u32();
    }
  }
  ins.mem_offset = features.memory64 || features.multi_memory ? r.u64() : r.u32();
  return r.ok();
}

// A memory.* instruction's memidx: a LEB with multi-memory, else the 2.0 reserved zero byte.
bool read_memidx(ByteReader& r, std::uint32_t& out, const Features& features) {
  if (features.multi_memory) {
    out = r.u32();
    return r.ok();
  }
  return read_zero_byte(r);
}

}  // namespace

bool read_instruction(ByteReader& r, Instruction& ins, std::vector<std::uint32_t>& scratch, const Features& features) {
  ins = Instruction{};
  ins.offset = r.offset();
  const std::uint8_t byte = r.u8();
  if (!r.ok()) return false;
  std::optional<Opcode> op;
  if (byte == kPrefixFC) {
    const std::uint32_t sub = r.u32();
    if (!r.ok()) return false;
    op = opcode_from_fc(sub);
    if (!op) return r.malformed(ins.offset, concat("illegal opcode fc ", hex_byte(sub)));
  } else if (byte == kPrefixGc && features.gc && features.function_references) {
    const std::uint32_t sub = r.u32();
    if (!r.ok()) return false;
    op = opcode_from_gc(sub);
    if (!op) return r.malformed(ins.offset, concat("illegal opcode fb ", hex_byte(sub)));
  } else if (byte == kPrefixSimd) {
    const std::uint32_t sub = r.u32();
    if (!r.ok()) return false;
    op = opcode_from_simd(sub);
    if (!op) return r.malformed(ins.offset, concat("illegal opcode fd ", hex_byte(sub)));
  } else {
    op = opcode_from_byte(byte);
    if (op == Opcode::RefEq && !(features.gc && features.function_references)) op.reset();
    if (!op) {
      if (byte == kPrefixGc || byte == 0xD3)
        return r.malformed(ins.offset, concat("illegal opcode ", hex_byte(byte),
                                              " (garbage collection: the gc feature is off)"));
      return r.malformed(ins.offset, concat("illegal opcode ", hex_byte(byte)));
    }
  }
  ins.op = *op;
  switch (info(ins.op).imm) {
    case ImmKind::None: break;
    case ImmKind::BlockType:
    case ImmKind::TryTable: {
      const std::optional<std::uint8_t> b = r.peek();
      if (b == 0x40) {
        r.u8();
        ins.block.kind = BlockType::Kind::Empty;
      } else if (b && is_valtype_byte(*b)) {
        r.u8();
        ins.block.kind = BlockType::Kind::Value;
        ins.block.type = ValType::from_byte(*b);
      } else if (b && features.function_references && (*b & 0xC0) == 0x40) {
        // Typed function references: (ref null? ht) and the short forms of the bottom types.
        ins.block.kind = BlockType::Kind::Value;
        if (!read_valtype(r, ins.block.type, features)) return false;
      } else {
        const std::size_t at = r.offset();
        const std::int64_t idx = r.s33();
        if (!r.ok()) return false;
        if (idx < 0) return r.malformed(at, "malformed value type");
        ins.block.kind = BlockType::Kind::Index;
        ins.block.index = static_cast<std::uint32_t>(idx);
      }
      if (info(ins.op).imm == ImmKind::TryTable) {
        // try_table's catch clauses, as (kind, tagidx, labelidx) triples in `targets`.
        const std::uint32_t n = r.u32();
        scratch.clear();
        for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
          const std::size_t at = r.offset();
          const std::uint8_t kind = r.u8();
          if (!r.ok()) return false;
          if (kind > kCatchAllRef) return r.malformed(at, concat("malformed catch clause ", kind));
          const std::uint32_t tag = kind <= kCatchRef ? r.u32() : 0;
          const std::uint32_t lbl = r.u32();
          scratch.insert(scratch.end(), {kind, tag, lbl});
        }
        ins.targets = scratch;
      }
      break;
    }
    case ImmKind::LabelIdx:
    case ImmKind::TagIdx:
    case ImmKind::FuncIdx:
    case ImmKind::LocalIdx:
    case ImmKind::GlobalIdx:
    case ImmKind::TableIdx:
    case ImmKind::DataIdx:
    case ImmKind::ElemIdx: ins.index = r.u32(); break;
    case ImmKind::BrTable: {
      const std::uint32_t n = r.u32();
      scratch.clear();
      for (std::uint32_t i = 0; i < n && r.ok(); ++i) scratch.push_back(r.u32());
      ins.index = r.u32();
      ins.targets = scratch;
      break;
    }
    case ImmKind::CallIndirect:
      ins.index = r.u32();
      ins.index2 = r.u32();
      break;
    case ImmKind::MemIdx: read_memidx(r, ins.memory, features); break;
    case ImmKind::I32: ins.bits = static_cast<std::uint32_t>(r.s32()); break;
    case ImmKind::I64: ins.bits = static_cast<std::uint64_t>(r.s64()); break;
    case ImmKind::F32: ins.bits = r.f32_bits(); break;
    case ImmKind::F64: ins.bits = r.f64_bits(); break;
    case ImmKind::SelectT: {
      ins.select_arity = r.u32();
      for (std::uint32_t i = 0; i < ins.select_arity && r.ok(); ++i) {
        const std::size_t at = r.offset();
        const std::optional<std::uint8_t> b = r.peek();
        if (b && !is_valtype_byte(*b) && !features.function_references) {
          r.u8();
          return r.malformed(at, "malformed value type");
        }
        if (!read_valtype(r, ins.type, features)) return false;
      }
      break;
    }
    case ImmKind::RefType: read_null_heaptype(r, ins.type, features); break;
    case ImmKind::TypeIdx: ins.index = r.u32(); break;
    case ImmKind::MemoryInit:
      ins.index = r.u32();
      read_memidx(r, ins.memory, features);
      break;
    case ImmKind::MemoryCopy:
      read_memidx(r, ins.memory, features);
      read_memidx(r, ins.memory2, features);
      break;
    case ImmKind::TableInit:
      ins.index = r.u32();
      ins.index2 = r.u32();
      break;
    case ImmKind::TableCopy:
    case ImmKind::StructField:
    case ImmKind::ArrayFixed:
    case ImmKind::ArrayData:
    case ImmKind::ArrayElem:
    case ImmKind::ArrayCopy:
      ins.index = r.u32();
      ins.index2 = r.u32();
      break;
    case ImmKind::HeapType: {
      std::uint32_t heap = 0;
      if (!read_heaptype(r, heap, features)) return false;
      ins.type = ValType::ref(ins.op == Opcode::RefTestNull || ins.op == Opcode::RefCastNull, heap);
      break;
    }
    case ImmKind::BrOnCast: {
      const std::size_t at = r.offset();
      const std::uint8_t flags = r.u8();
      if (r.ok() && flags > 3) return r.malformed(at, concat("malformed br_on_cast flags ", flags));
      ins.index = r.u32();
      std::uint32_t h1 = 0;
      std::uint32_t h2 = 0;
      if (!read_heaptype(r, h1, features) || !read_heaptype(r, h2, features)) return false;
      ins.type = ValType::ref((flags & 1) != 0, h1);
      ins.type2 = ValType::ref((flags & 2) != 0, h2);
      break;
    }
    case ImmKind::MemArg8:
    case ImmKind::MemArg16:
    case ImmKind::MemArg32:
    case ImmKind::MemArg64:
    case ImmKind::MemArg128: read_memarg(r, ins, features); break;
    case ImmKind::MemArgLane8:
    case ImmKind::MemArgLane16:
    case ImmKind::MemArgLane32:
    case ImmKind::MemArgLane64:
      read_memarg(r, ins, features);
      ins.lane = r.u8();
      break;
    case ImmKind::Lane16:
    case ImmKind::Lane8:
    case ImmKind::Lane4:
    case ImmKind::Lane2: ins.lane = r.u8(); break;
    case ImmKind::V128:
    case ImmKind::Shuffle: {
      const auto b = r.take(ins.v128.size());
      if (b.size() == ins.v128.size()) std::copy(b.begin(), b.end(), ins.v128.begin());
      break;
    }
  }
  return r.ok();
}

}  // namespace sprawling::wasm
