// decode_and_validate: module binary → validated Module. Sections are read in the spec's order
// with its size/count checks; every module-level rule and every function body is validated.
// https://webassembly.github.io/spec/core/binary/modules.html
#include "wasm/binary/decoder.hpp"

#include "wasm/binary/byte_reader.hpp"
#include "wasm/valid/validator.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_set>

namespace sprawling::wasm {

namespace {

// Total declared locals per function; beyond it a module is refused ("too many locals").
constexpr std::uint64_t kMaxLocals = 50'000;

enum SectionId : std::uint8_t {
  kCustom = 0,
  kType = 1,
  kImport = 2,
  kFunction = 3,
  kTable = 4,
  kMemory = 5,
  kGlobal = 6,
  kExport = 7,
  kStart = 8,
  kElement = 9,
  kCode = 10,
  kData = 11,
  kDataCount = 12,
  kTag = 13,  // exception handling: between memory and global
};

// Position of each section id in the required order (data count sits between element and code,
// the tag section between memory and global).
constexpr int section_rank(std::uint8_t id) {
  switch (id) {
    case kDataCount: return 20;
    case kCode: return 22;
    case kData: return 24;
    case kTag: return 2 * kMemory + 1;
    default: return 2 * id;
  }
}

class Decoder {
 public:
  // Takes the bytes over (the Module keeps them: function bodies are read from there later).
  Decoder(ModuleBytes bytes, bool bodies_validated_before, Features features)
      : r_(std::span<const std::uint8_t>()), bodies_validated_before_(bodies_validated_before) {
    context_.features = features;
    module_.bytes = std::move(bytes);
    r_ = ByteReader(module_.bytes);
    context_.module = &module_;
  }

  std::expected<Module, CompileError> run() {
    decode();
    if (const auto& e = r_.error()) return std::unexpected(*e);
    if (invalid_) return std::unexpected(*invalid_);
    return std::move(module_);
  }

 private:
  // First Invalid error; decoding goes on after it because a later malformation outranks it.
  void invalid(std::size_t at, std::string message) {
    if (!invalid_) invalid_ = CompileError{CompileError::Kind::Invalid, std::move(message), at};
  }
  bool validating() const { return !invalid_; }
  // Records the first use of v128 or of a SIMD instruction (Module::simd_use), which an embedder
  // that turns SIMD off (SandboxConfig::simd, -W simd=n) names when it refuses the module.
  void note_simd(const std::string& what) {
    if (module_.simd_use.empty()) module_.simd_use = what;
  }
  bool type_has_v128(std::uint32_t type_index) const {
    if (type_index >= module_.types.size()) return false;
    const FuncType& ft = module_.types[type_index];
    const auto v128 = [](ValType t) { return t == ValType::V128; };
    return std::ranges::any_of(ft.params, v128) || std::ranges::any_of(ft.results, v128);
  }
  void note_simd_type(std::string_view what, std::uint32_t funcidx, std::uint32_t type_index) {
    if (type_has_v128(type_index)) note_simd(concat(what, " ", funcidx, " has a v128 parameter or result"));
  }
  void note_simd_instruction(std::uint32_t funcidx, const Instruction& ins);
  // Records the first use of exception handling (Module::exceptions_use), which a module
  // validated with the feature off (-W exceptions=n) is refused for at the end of decoding.
  void note_exceptions(std::size_t at, const std::string& what) {
    if (!module_.exceptions_use.empty()) return;
    module_.exceptions_use = what;
    exceptions_use_at_ = at;
  }
  void note_exnref(std::size_t at, std::string_view where) {
    module_.uses_exnref = true;
    note_exceptions(at, concat(where, " uses exnref"));
  }
  void tag_section();
  // A function's or tag's type index: a function type of the type section.
  bool check_func_type(std::size_t at, std::uint32_t type_index) {
    if (type_index >= module_.types.size()) {
      invalid(at, concat("unknown type ", type_index));
      return false;
    }
    if (!module_.types[type_index].is_func()) {
      invalid(at, concat("type mismatch: type ", type_index, " is not a function type"));
      return false;
    }
    return true;
  }
  std::uint32_t tag_type(std::size_t at);
  // Records a function as referenced (C.refs). Only known functions are recorded: an unknown
  // index is reported on its own, and must never size the vector (2^32-1 + 1 wraps to 0).
  void declare_ref(std::uint32_t funcidx) {
    if (funcidx >= module_.func_types.size()) return;
    if (funcidx >= context_.declared_refs.size()) context_.declared_refs.resize(module_.func_types.size(), false);
    context_.declared_refs[funcidx] = true;
  }

  void decode();
  void header();
  void section(std::uint8_t id, std::size_t start, std::size_t end);
  void custom_section(std::size_t end);
  void name_section(std::size_t start, std::size_t end);
  void type_section();
  void sub_type(std::uint32_t rec_start, std::uint32_t rec_size);
  FieldType field_type(std::size_t type_limit);
  void finish_rec_group(std::uint32_t start, std::uint32_t n, std::size_t at);
  void import_section();
  void function_section();
  void table_section();
  void memory_section();
  void global_section();
  void export_section();
  void start_section();
  void element_section();
  void data_count_section();
  void code_section();
  void data_section();
  void code_entry(std::uint32_t index);

  // `type_limit`: type indices must be below it (the type section: at most the type's own).
  ValType valtype(std::size_t type_limit = SIZE_MAX);
  ValType reftype();
  Limits limits();
  TableType table_type();
  MemoryType memory_type();
  GlobalType global_type();
  void check_memory_type(const MemoryType& mt, std::size_t at);
  void check_table_type(const TableType& tt, std::size_t at);
  // table64: an active element segment's offset has its table's address type (i64 for a 64-bit
  // table; i32 for an unknown table, which is reported on its own).
  [[nodiscard]] ValType table_address_type(std::uint32_t table) const {
    return table < module_.tables.size() && module_.tables[table].limits.is64 ? ValType::I64 : ValType::I32;
  }
  ConstExpr const_expr(ValType type);

  ByteReader r_;
  Module module_;
  ValidationContext context_;
  std::optional<CompileError> invalid_;
  std::vector<std::uint32_t> scratch_;
  std::vector<Instruction> const_instrs_;
  // Reused for every function body so their buffers are allocated once per module.
  FunctionValidator validator_{context_};
  std::vector<Opcode> nesting_;
  std::optional<std::uint32_t> function_count_;  // from the function section
  bool code_section_seen_ = false;
  std::size_t section_end_ = 0;
  // Where a code section whose count differs from the function section's began: reported after
  // every section is read, so a misplaced section is named first (as the reference does).
  std::optional<std::size_t> code_count_mismatch_;
  bool data_section_seen_ = false;
  // First memory.init / data.drop seen without a data count section: malformed only if the
  // module turns out to have data segments (else the index is merely unknown: invalid).
  std::optional<std::size_t> data_index_use_;
  // decode_validated_before: function bodies are skipped after their locals.
  bool bodies_validated_before_ = false;
  std::size_t exceptions_use_at_ = 0;
};

void Decoder::decode() {
  header();
  if (!r_.ok()) return;
  int last_rank = 0;
  while (r_.ok() && !r_.at_end()) {
    const std::size_t id_at = r_.offset();
    const std::uint8_t id = r_.u8();
    // Without exception handling the tag section does not exist (2.0's binary format).
    if (id > kTag || (id == kTag && !context_.features.exceptions)) {
      r_.malformed(id_at, concat("malformed section id ", id,
                                 id == kTag ? " (the tag section: exception handling is disabled)" : ""));
      return;
    }
    const std::uint32_t size = r_.length();
    if (!r_.ok()) return;
    const std::size_t start = r_.offset();
    const std::size_t end = start + size;
    if (id != kCustom) {
      const int rank = section_rank(id);
      if (rank <= last_rank) {
        r_.malformed(id_at, "unexpected content after last section");
        return;
      }
      last_rank = rank;
    }
    r_.set_eof_message("unexpected end of section or function");
    section_end_ = end;
    section(id, start, end);
    if (!r_.ok()) return;
    if (r_.offset() != end) {
      r_.malformed(start, concat("section size mismatch: section ", id, " declares ", size, " bytes, content has ",
                                 r_.offset() - start));
      return;
    }
    r_.set_eof_message("unexpected end");
  }
  if (!r_.ok()) return;
  const std::uint32_t functions = function_count_.value_or(0);
  if (code_count_mismatch_) {
    r_.malformed(*code_count_mismatch_, "function and code section have inconsistent lengths");
    return;
  }
  if (!code_section_seen_ && functions != 0) {
    r_.malformed(r_.offset(), "function and code section have inconsistent lengths");
    return;
  }
  if (module_.data_count && !data_section_seen_ && *module_.data_count != 0) {
    r_.malformed(r_.offset(), "data count and data section have inconsistent lengths");
    return;
  }
  if (data_index_use_ && !module_.datas.empty()) {
    r_.malformed(*data_index_use_, "data count section required");
    return;
  }
  if (!context_.features.exceptions && !module_.exceptions_use.empty()) {
    invalid(exceptions_use_at_,
            concat(module_.exceptions_use, ": exception handling is disabled (the exceptions feature is off)"));
  }
}

void Decoder::header() {
  static constexpr std::uint8_t kMagic[4] = {0x00, 0x61, 0x73, 0x6D};
  const auto magic = r_.take(4);
  if (!r_.ok()) return;
  if (!std::equal(magic.begin(), magic.end(), kMagic)) {
    r_.malformed(0, "magic header not detected");
    return;
  }
  const auto version = r_.take(4);
  if (!r_.ok()) return;
  if (version[0] != 1 || version[1] != 0 || version[2] != 0 || version[3] != 0) {
    r_.malformed(4, "unknown binary version");
  }
}

void Decoder::section(std::uint8_t id, std::size_t start, std::size_t end) {
  (void)start;
  switch (id) {
    case kCustom: custom_section(end); break;
    case kType: type_section(); break;
    case kImport: import_section(); break;
    case kFunction: function_section(); break;
    case kTable: table_section(); break;
    case kMemory: memory_section(); break;
    case kGlobal: global_section(); break;
    case kExport: export_section(); break;
    case kStart: start_section(); break;
    case kElement: element_section(); break;
    case kDataCount: data_count_section(); break;
    case kCode: code_section(); break;
    case kData: data_section(); break;
    case kTag: tag_section(); break;
    default: break;
  }
}

void Decoder::custom_section(std::size_t end) {
  const std::string_view section_name = r_.name();
  if (!r_.ok()) return;
  if (r_.offset() > end) {
    r_.malformed(end, "unexpected end of section or function: custom section name overruns the section");
    return;
  }
  if (section_name == "name") name_section(r_.offset(), end);
  r_.seek(end);
}

// The "name" section is advisory: anything malformed in it drops the names, never the module.
// https://webassembly.github.io/spec/core/appendix/custom.html#name-section
void Decoder::name_section(std::size_t start, std::size_t end) {
  ByteReader n(std::span<const std::uint8_t>(module_.bytes).first(end));
  n.seek(start);
  std::string module_name;
  std::unordered_map<std::uint32_t, std::string> function_names;
  int last_id = -1;
  while (n.ok() && !n.at_end()) {
    const std::uint8_t id = n.u8();
    const std::uint32_t size = n.length();
    if (!n.ok() || static_cast<int>(id) <= last_id) return;
    last_id = id;
    const std::size_t sub_end = n.offset() + size;
    if (id == 0) {
      module_name = std::string(n.name());
    } else if (id == 1) {
      const std::uint32_t count = n.u32();
      for (std::uint32_t i = 0; i < count && n.ok(); ++i) {
        const std::uint32_t idx = n.u32();
        function_names[idx] = std::string(n.name());
      }
    } else {
      n.seek(sub_end);
    }
    if (!n.ok() || n.offset() != sub_end) return;
  }
  if (!n.ok()) return;
  module_.module_name = std::move(module_name);
  module_.function_names = std::move(function_names);
}

ValType Decoder::valtype(std::size_t type_limit) {
  const std::size_t at = r_.offset();
  ValType t = ValType::I32;
  if (!read_valtype(r_, t, context_.features)) return ValType::I32;
  if (t.is_ref() && heap_top(t.heap()) == ValType::kExn) note_exnref(at, concat("the value type at offset ", at));
  if (t.is_ref() && is_gc_heap_byte(t.heap_byte())) module_.uses_gc = true;
  const std::size_t limit = type_limit == SIZE_MAX ? module_.types.size() : type_limit;
  if (t.concrete() && t.type_index() >= limit)
    invalid(at, concat("unknown type ", t.type_index()));
  return t;
}

ValType Decoder::reftype() {
  const std::size_t at = r_.offset();
  const std::optional<std::uint8_t> b = r_.peek();
  if (b && !context_.features.function_references && *b != 0x70 && *b != 0x6F && *b != 0x69) {
    r_.u8();
    r_.malformed(at, concat("malformed reference type 0x", hex_byte(*b)));
    return ValType::FuncRef;
  }
  const ValType t = valtype();
  if (!r_.ok()) return ValType::FuncRef;
  if (!t.is_ref()) {
    r_.malformed(at, concat("malformed reference type 0x", hex_byte(t.byte())));
    return ValType::FuncRef;
  }
  return t;
}

Limits Decoder::limits() {
  Limits l;
  const std::uint32_t flags = r_.u1();
  if (!r_.ok()) return l;
  l.min = r_.u32();
  if (flags == 1) l.max = r_.u32();
  return l;
}

TableType Decoder::table_type() {
  TableType t;
  t.element = reftype();
  const std::size_t at = r_.offset();
  const std::optional<std::uint8_t> first = r_.peek();
  const bool flags64 = first == 0x04 || first == 0x05;
  if (!context_.features.memory64 && !flags64) {
    t.limits = limits();
    return t;
  }
  // 3.0 reads the flags as a byte, bit 2 making the table 64-bit (table64, i64 indexes), and u64
  // sizes for both address types (check_table_type bounds them). With memory64 off (Wasmtime puts
  // table64 under it) a 64-bit table is read whole, then refused naming the feature.
  if (!context_.features.memory64) invalid(at, "a 64-bit table (table64), and the memory64 feature is off");
  const std::uint8_t flags = r_.u8();
  if (!r_.ok()) return t;
  if ((flags & ~std::uint8_t{0x05}) != 0) {
    r_.malformed(at, "malformed limits flags");
    return t;
  }
  t.limits.is64 = (flags & 0x04) != 0;
  t.limits.min = r_.u64();
  if ((flags & 0x01) != 0) t.limits.max = r_.u64();
  return t;
}

// 2.0 limits (flags a u1 LEB), or with memory64 the 3.0 form: a flags byte whose bit 2 makes the
// memory 64-bit, with u64 page counts.
MemoryType Decoder::memory_type() {
  const std::size_t at = r_.offset();
  const std::optional<std::uint8_t> first = r_.peek();
  const bool flags64 = first == 0x04 || first == 0x05;
  if (!context_.features.memory64 && !flags64) return MemoryType{limits()};
  // With memory64 off a 64-bit memory is read whole, then refused naming the feature.
  if (!context_.features.memory64) invalid(at, "a 64-bit memory (memory64), and the memory64 feature is off");
  MemoryType mt;
  const std::uint8_t flags = r_.u8();
  if (!r_.ok()) return mt;
  if ((flags & ~std::uint8_t{0x05}) != 0) {
    r_.malformed(at, (flags & 0x02) != 0 ? "malformed limits flags: shared memories (threads) are not supported"
                                         : "malformed limits flags");
    return mt;
  }
  mt.limits.is64 = (flags & 0x04) != 0;
  mt.limits.min = r_.u64();  // 3.0: u64 for both address types; check_memory_type bounds them
  if ((flags & 0x01) != 0) mt.limits.max = r_.u64();
  return mt;
}

GlobalType Decoder::global_type() {
  GlobalType g;
  g.type = valtype();
  const std::size_t at = r_.offset();
  const std::uint8_t mut = r_.u8();
  if (!r_.ok()) return g;
  if (mut > 1) {
    r_.malformed(at, "malformed mutability");
    return g;
  }
  g.is_mutable = mut == 1;
  return g;
}

void Decoder::check_table_type(const TableType& tt, std::size_t at) {
  // An i32 table's sizes fit 32 bits (3.0 reads them as u64); a 64-bit table's any u64.
  const Limits& l = tt.limits;
  if (!l.is64 && (l.min > 0xFFFF'FFFFu || (l.max && *l.max > 0xFFFF'FFFFu))) {
    invalid(at, "table size must be at most 2^32-1");
  } else if (l.max && l.min > *l.max) {
    invalid(at, "size minimum must not be greater than maximum");
  }
}

void Decoder::check_memory_type(const MemoryType& mt, std::size_t at) {
  const Limits& l = mt.limits;
  const std::uint64_t most = l.is64 ? kMaxPages64 : kMaxPages;
  if (l.min > most || (l.max && *l.max > most)) {
    invalid(at, l.is64 ? "memory size must be at most 2^48 pages (2^64 bytes)" : "memory size must be at most 65536 pages (4GiB)");
  } else if (l.max && l.min > *l.max) {
    invalid(at, "size minimum must not be greater than maximum");
  }
  // Decoding stops here: the rest would be read as 2.0 (memarg bit 6 an alignment), misreading a
  // multi-memory module's memory indices into a malformation that would outrank this.
  if (module_.memories.size() > 1 && !context_.features.multi_memory)
    r_.fail(CompileError::Kind::Invalid, at, "multiple memories (the multi-memory feature is off)");
}

// Reads instructions up to the `end` that closes the expression, then checks them as a
// constant expression of `type` (spec order: constness first, then the type).
ConstExpr Decoder::const_expr(ValType type) {
  ConstExpr out;
  out.type = type;
  const_instrs_.clear();
  std::uint32_t depth = 0;
  Instruction ins;
  std::size_t end_offset = r_.offset();
  while (r_.ok()) {
    // An expression missing its `end` stops at its section's end, not in the next section.
    if (r_.offset() >= section_end_) {
      r_.malformed(r_.offset(), "unexpected end of section or function");
      return out;
    }
    if (!read_instruction(r_, ins, scratch_, context_.features)) return out;
    if (ins.op == Opcode::End) {
      if (depth == 0) {
        end_offset = ins.offset;
        break;
      }
      --depth;
    } else if (opens_block(ins.op)) {
      ++depth;
    }
    const_instrs_.push_back(ins);
  }
  if (!r_.ok()) return out;
  if (validating()) {
    if (auto e = validate_const_expr(module_, const_instrs_, type, end_offset, context_.features)) {
      invalid(e->offset, e->message);
      return out;
    }
  }
  if (const_instrs_.size() > 1 || (const_instrs_.size() == 1 && family(const_instrs_[0].op) == Family::Gc)) {
    // Validated: constants, global.gets, integer add/sub/mul and GC's allocations.
    out.op = ConstExpr::Op::Extended;
    for (const Instruction& c : const_instrs_) {
      using K = ConstExpr::Step::Kind;
      ConstExpr::Step step{K::Const, c.bits, 0};
      switch (c.op) {
        case Opcode::GlobalGet: step = {K::GlobalGet, c.index, 0}; break;
        case Opcode::I32Add: step.kind = K::I32Add; break;
        case Opcode::I32Sub: step.kind = K::I32Sub; break;
        case Opcode::I32Mul: step.kind = K::I32Mul; break;
        case Opcode::I64Add: step.kind = K::I64Add; break;
        case Opcode::I64Sub: step.kind = K::I64Sub; break;
        case Opcode::I64Mul: step.kind = K::I64Mul; break;
        case Opcode::RefNull: step.value = 0; break;
        case Opcode::RefFunc:
          step = {K::RefFunc, c.index, 0};
          declare_ref(c.index);
          break;
        case Opcode::V128Const:
          step.kind = K::ConstV128;
          std::memcpy(&step.value, c.v128.data(), 8);
          std::memcpy(&step.value2, c.v128.data() + 8, 8);
          break;
        case Opcode::RefI31: step.kind = K::RefI31; break;
        case Opcode::AnyConvertExtern: step.kind = K::AnyConvertExtern; break;
        case Opcode::ExternConvertAny: step.kind = K::ExternConvertAny; break;
        case Opcode::StructNew: step = {K::StructNew, c.index, 0}; break;
        case Opcode::StructNewDefault: step = {K::StructNewDefault, c.index, 0}; break;
        case Opcode::ArrayNew: step = {K::ArrayNew, c.index, 0}; break;
        case Opcode::ArrayNewDefault: step = {K::ArrayNewDefault, c.index, 0}; break;
        case Opcode::ArrayNewFixed: step = {K::ArrayNewFixed, c.index, c.index2}; break;
        default: break;
      }
      if (family(c.op) == Family::Gc) module_.uses_gc = true;
      out.steps.push_back(step);
    }
    return out;
  }
  if (const_instrs_.size() != 1) return out;
  const Instruction& c = const_instrs_[0];
  out.bits = c.bits;
  if (c.op == Opcode::V128Const) {
    out.op = ConstExpr::Op::V128Const;
    std::memcpy(&out.bits, c.v128.data(), 8);
    std::memcpy(&out.bits_hi, c.v128.data() + 8, 8);
  }
  out.index = c.index;
  switch (c.op) {
    case Opcode::I32Const: out.op = ConstExpr::Op::I32Const; break;
    case Opcode::I64Const: out.op = ConstExpr::Op::I64Const; break;
    case Opcode::F32Const: out.op = ConstExpr::Op::F32Const; break;
    case Opcode::F64Const: out.op = ConstExpr::Op::F64Const; break;
    case Opcode::GlobalGet: out.op = ConstExpr::Op::GlobalGet; break;
    case Opcode::RefNull: out.op = ConstExpr::Op::RefNull; break;
    case Opcode::RefFunc:
      out.op = ConstExpr::Op::RefFunc;
      declare_ref(c.index);
      break;
    default: break;
  }
  return out;
}

// The type section: recursion groups (`rec` 0x4E, GC), each of subtypes (`sub` 0x50, `sub final`
// 0x4F, or a bare composite type: final, no supertype), each a function (0x60), struct (0x5F) or
// array (0x5E) type. Types of a group may name every type of it (and the ones before).
void Decoder::type_section() {
  const std::uint32_t count = r_.u32();
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    const std::size_t at = r_.offset();
    const std::optional<std::uint8_t> b = r_.peek();
    if (!b) {
      r_.u8();
      return;
    }
    const auto start = static_cast<std::uint32_t>(module_.types.size());
    std::uint32_t n = 1;
    if (*b == 0x4E && context_.features.function_references) {
      r_.u8();
      if (!context_.features.gc) {
        r_.malformed(at, "malformed type: a recursive type group (rec) needs garbage collection (the gc feature is off)");
        return;
      }
      n = r_.u32();
    }
    for (std::uint32_t k = 0; k < n && r_.ok(); ++k) sub_type(start, n);
    if (!r_.ok()) return;
    finish_rec_group(start, n, at);
  }
}

namespace {
// A one-byte type form as the signed LEB it is (0x60: -32), for messages.
int s7_of(std::uint8_t form) { return (form & 0x40) != 0 ? int{form} - 0x80 : int{form}; }
}  // namespace

void Decoder::sub_type(std::uint32_t rec_start, std::uint32_t rec_size) {
  const std::size_t at = r_.offset();
  FuncType ft;
  ft.rec_start = rec_start;
  ft.rec_size = rec_size;
  const auto self = static_cast<std::uint32_t>(module_.types.size());
  const std::size_t limit = std::size_t{rec_start} + rec_size;
  // Forms are one-byte negative s7s (0x60 = -0x20); an overlong encoding is malformed as an integer.
  const auto read_form = [&] { return static_cast<std::uint8_t>(r_.s7() & 0x7F); };
  std::uint8_t form = read_form();
  if (!r_.ok()) return;
  const bool gc_form = form == 0x50 || form == 0x4F || form == 0x5F || form == 0x5E;
  if (gc_form && !(context_.features.gc && context_.features.function_references)) {
    if (context_.features.function_references) {
      r_.malformed(at, "malformed type: sub, struct and array types need garbage collection (the gc feature is off)");
    } else {
      r_.malformed(at, concat("malformed function type ", s7_of(form)));
    }
    return;
  }
  if (form == 0x50 || form == 0x4F) {
    ft.is_final = form == 0x4F;
    const std::uint32_t supers = r_.u32();
    for (std::uint32_t k = 0; k < supers && r_.ok(); ++k) {
      const std::size_t sat = r_.offset();
      const std::uint32_t super = r_.u32();
      if (!r_.ok()) return;
      if (k > 0) {
        invalid(sat, "sub type: more than one supertype");
      } else if (super >= self) {
        invalid(sat, concat("unknown type ", super, " (a supertype must be defined before its subtype)"));
      } else {
        ft.super = super;
      }
    }
    form = read_form();
    if (!r_.ok()) return;
  }
  switch (form) {
    case 0x60: {
      const std::uint32_t params = r_.u32();
      for (std::uint32_t k = 0; k < params && r_.ok(); ++k) ft.params.push_back(valtype(limit));
      const std::uint32_t results = r_.u32();
      for (std::uint32_t k = 0; k < results && r_.ok(); ++k) ft.results.push_back(valtype(limit));
      break;
    }
    case 0x5F: {
      ft.kind = TypeKind::Struct;
      const std::uint32_t fields = r_.u32();
      for (std::uint32_t k = 0; k < fields && r_.ok(); ++k) ft.fields.push_back(field_type(limit));
      break;
    }
    case 0x5E:
      ft.kind = TypeKind::Array;
      ft.fields.push_back(field_type(limit));
      break;
    default:
      r_.malformed(at, concat("malformed function type ", s7_of(form)));
      return;
  }
  if (!ft.is_func()) module_.uses_gc = true;
  module_.types.push_back(std::move(ft));
}

FieldType Decoder::field_type(std::size_t type_limit) {
  FieldType f;
  const std::optional<std::uint8_t> b = r_.peek();
  if (b == 0x78 || b == 0x77) {
    r_.u8();
    f.packed = *b == 0x78 ? FieldType::Packed::I8 : FieldType::Packed::I16;
  } else {
    f.type = valtype(type_limit);
  }
  const std::size_t at = r_.offset();
  const std::uint8_t m = r_.u8();
  if (r_.ok() && m > 1) r_.malformed(at, "malformed mutability");
  f.is_mutable = m == 1;
  return f;
}

void Decoder::finish_rec_group(std::uint32_t start, std::uint32_t n, std::size_t at) {
  if (!validating() || n == 0) return;
  if (n > 1 || module_.types[start].super != kNoSuper || !module_.types[start].is_final) module_.uses_gc = true;
  compute_structure(module_.types, start, n);
  const std::span<const FuncType> types(module_.types);
  for (std::uint32_t i = start; i < start + n; ++i) {
    const FuncType& t = types[i];
    if (t.super == kNoSuper) continue;
    const FuncType& s = types[t.super];
    if (s.is_final) {
      invalid(at, concat("sub type ", i, " has a final supertype ", t.super));
      continue;
    }
    if (!composite_matches(t, s, types)) {
      invalid(at, concat("sub type ", i, " does not match its supertype ", t.super));
    }
  }
}

void Decoder::import_section() {
  const std::uint32_t count = r_.u32();
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    Import imp;
    imp.module = std::string(r_.name());
    imp.name = std::string(r_.name());
    const std::size_t at = r_.offset();
    const std::uint8_t kind = r_.u8();
    if (!r_.ok()) return;
    switch (kind) {
      case 0:
        imp.kind = ExternKind::Func;
        imp.type_index = r_.u32();
        if (r_.ok()) check_func_type(at, imp.type_index);
        note_simd_type("imported function", static_cast<std::uint32_t>(module_.func_types.size()), imp.type_index);
        module_.func_types.push_back(imp.type_index);
        ++module_.imported_funcs;
        break;
      case 1:
        imp.kind = ExternKind::Table;
        imp.table = table_type();
        check_table_type(imp.table, at);
        module_.tables.push_back(imp.table);
        ++module_.imported_tables;
        break;
      case 2:
        imp.kind = ExternKind::Memory;
        imp.memory = memory_type();
        module_.memories.push_back(imp.memory);
        check_memory_type(imp.memory, at);
        ++module_.imported_memories;
        break;
      case 3:
        imp.kind = ExternKind::Global;
        imp.global = global_type();
        if (imp.global.type == ValType::V128)
          note_simd(concat("imported global ", module_.globals.size(), " has type v128"));
        module_.globals.push_back(imp.global);
        ++module_.imported_globals;
        break;
      case 4:
        if (!context_.features.exceptions) {
          r_.malformed(at, concat("malformed import kind ", kind, " (a tag: exception handling is disabled)"));
          return;
        }
        imp.kind = ExternKind::Tag;
        imp.type_index = tag_type(at);
        note_exceptions(at, concat("imported tag ", module_.tags.size()));
        module_.tags.push_back(imp.type_index);
        ++module_.imported_tags;
        break;
      default: r_.malformed(at, concat("malformed import kind ", kind)); return;
    }
    module_.imports.push_back(std::move(imp));
  }
}

void Decoder::function_section() {
  const std::uint32_t count = r_.u32();
  function_count_ = count;
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    const std::size_t at = r_.offset();
    const std::uint32_t type_index = r_.u32();
    if (!r_.ok()) return;
    check_func_type(at, type_index);
    module_.func_types.push_back(type_index);
  }
}

void Decoder::table_section() {
  const std::uint32_t count = r_.u32();
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    const std::size_t at = r_.offset();
    // Typed function references: 0x40 0x00 tabletype expr, a table with an initial element.
    const bool with_init = context_.features.function_references && r_.peek() == 0x40;
    if (!context_.features.function_references && r_.peek() == 0x40) {
      r_.malformed(at, "malformed reference type 0x40 (a table initialiser: the function-references feature is off)");
      return;
    }
    if (with_init) {
      r_.u8();
      const std::size_t zero_at = r_.offset();
      if (r_.u8() != 0 && r_.ok()) {
        r_.malformed(zero_at, "malformed table: 0x40 must be followed by 0x00");
        return;
      }
    }
    const TableType tt = table_type();
    check_table_type(tt, at);
    if (with_init && r_.ok()) {
      ConstExpr init = const_expr(tt.element);
      module_.table_inits.resize(module_.tables.size() - module_.imported_tables + 1);
      module_.table_inits.back() = std::move(init);
    } else if (tt.element.is_ref() && !tt.element.nullable()) {
      invalid(at, concat("type mismatch: a table of ", name(tt.element), " needs an initial value"));
    }
    module_.tables.push_back(tt);
  }
}

void Decoder::memory_section() {
  const std::uint32_t count = r_.u32();
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    const std::size_t at = r_.offset();
    const MemoryType mt = memory_type();
    module_.memories.push_back(mt);
    check_memory_type(mt, at);
  }
}

void Decoder::global_section() {
  const std::uint32_t count = r_.u32();
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    const GlobalType gt = global_type();
    if (!r_.ok()) return;
    ConstExpr init = const_expr(gt.type);
    if (gt.type == ValType::V128) note_simd(concat("global ", module_.globals.size(), " has type v128"));
    module_.globals.push_back(gt);
    module_.global_inits.push_back(init);
  }
}

void Decoder::export_section() {
  const std::uint32_t count = r_.u32();
  std::unordered_set<std::string_view> names;
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    const std::size_t at = r_.offset();
    Export e;
    const std::string_view export_name = r_.name();
    e.name = std::string(export_name);
    const std::size_t kind_at = r_.offset();
    const std::uint8_t kind = r_.u8();
    e.index = r_.u32();
    if (!r_.ok()) return;
    if (kind > 4 || (kind == 4 && !context_.features.exceptions)) {
      r_.malformed(kind_at, concat("malformed export kind ", kind));
      return;
    }
    e.kind = static_cast<ExternKind>(kind);
    if (!names.insert(export_name).second) invalid(at, concat("duplicate export name \"", e.name, "\""));
    std::size_t limit = 0;
    std::string_view what;
    switch (e.kind) {
      case ExternKind::Func:
        limit = module_.func_types.size();
        what = "function";
        break;
      case ExternKind::Table:
        limit = module_.tables.size();
        what = "table";
        break;
      case ExternKind::Memory:
        limit = module_.memories.size();
        what = "memory";
        break;
      case ExternKind::Global:
        limit = module_.globals.size();
        what = "global";
        break;
      case ExternKind::Tag:
        limit = module_.tags.size();
        what = "tag";
        break;
    }
    if (e.index >= limit) invalid(at, concat("unknown ", what, " ", e.index));
    if (e.kind == ExternKind::Func) declare_ref(e.index);
    module_.exports.push_back(std::move(e));
  }
}

void Decoder::start_section() {
  const std::size_t at = r_.offset();
  const std::uint32_t index = r_.u32();
  if (!r_.ok()) return;
  module_.start = index;
  // After an invalid construct, type indices may dangle: check nothing more, just decode.
  if (!validating()) return;
  if (index >= module_.func_types.size()) {
    invalid(at, concat("unknown function ", index));
  } else if (const FuncType& ft = module_.func_type(index); !ft.params.empty() || !ft.results.empty()) {
    invalid(at, "start function must have type [] -> []");
  }
}

// https://webassembly.github.io/spec/core/binary/modules.html#element-section (flags 0..7)
void Decoder::element_section() {
  const std::uint32_t count = r_.u32();
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    const std::size_t at = r_.offset();
    const std::uint32_t flags = r_.u32();
    if (!r_.ok()) return;
    if (flags > 7) {
      r_.malformed(at, concat("malformed elements segment kind ", flags));
      return;
    }
    ElementSegment seg;
    const bool passive_or_declarative = (flags & 1) != 0;
    const bool explicit_table = (flags & 2) != 0;
    const bool uses_exprs = (flags & 4) != 0;
    if (passive_or_declarative) {
      seg.mode = explicit_table ? SegmentMode::Declarative : SegmentMode::Passive;
    } else {
      seg.mode = SegmentMode::Active;
      if (explicit_table) seg.table_index = r_.u32();
      seg.offset = const_expr(table_address_type(seg.table_index));
    }
    // Flags 0 and 4 imply funcref; the others spell an elemkind (0x00) or a reftype. With typed
    // function references, a vector of function indices has type (ref func) (3.0).
    if (!uses_exprs && context_.features.function_references) seg.type = ValType::abstract_ref(false, ValType::kFunc);
    if (flags != 0 && flags != 4) {
      if (uses_exprs) {
        seg.type = reftype();
      } else {
        const std::size_t kind_at = r_.offset();
        const std::uint8_t elemkind = r_.u8();
        if (r_.ok() && elemkind != 0x00) {
          r_.malformed(kind_at, concat("malformed element kind ", elemkind));
          return;
        }
      }
    }
    const std::uint32_t n = r_.u32();
    for (std::uint32_t k = 0; k < n && r_.ok(); ++k) {
      if (uses_exprs) {
        seg.items.push_back(const_expr(seg.type));
      } else {
        const std::size_t item_at = r_.offset();
        ConstExpr item;
        item.op = ConstExpr::Op::RefFunc;
        item.type = seg.type;
        item.index = r_.u32();
        if (!r_.ok()) return;
        if (item.index >= module_.func_types.size()) invalid(item_at, concat("unknown function ", item.index));
        declare_ref(item.index);
        seg.items.push_back(item);
      }
    }
    if (!r_.ok()) return;
    if (seg.mode == SegmentMode::Active) {
      if (seg.table_index >= module_.tables.size()) {
        invalid(at, concat("unknown table ", seg.table_index));
      } else if (!matches(seg.type, module_.tables[seg.table_index].element, module_.types)) {
        invalid(at, concat("type mismatch: element segment of ", name(seg.type), " for a table of ",
                           name(module_.tables[seg.table_index].element)));
      }
    }
    module_.elements.push_back(std::move(seg));
  }
}

void Decoder::data_count_section() {
  module_.data_count = r_.u32();
}

void Decoder::code_section() {
  code_section_seen_ = true;
  const std::size_t at = r_.offset();
  const std::uint32_t count = r_.u32();
  if (!r_.ok()) return;
  if (count != function_count_.value_or(0)) {
    code_count_mismatch_ = at;
    r_.seek(section_end_);
    return;
  }
  module_.code.reserve(count);
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) code_entry(i);
}

void Decoder::code_entry(std::uint32_t index) {
  const std::uint32_t size = r_.length();
  if (!r_.ok()) return;
  const std::size_t start = r_.offset();
  FunctionBody body;
  body.type_index = module_.func_types[module_.imported_funcs + index];
  const std::uint32_t groups = r_.u32();
  std::uint64_t total = 0;
  const std::size_t locals_at = r_.offset();
  for (std::uint32_t g = 0; g < groups && r_.ok(); ++g) {
    const std::uint32_t n = r_.u32();
    const ValType t = valtype();
    if (!r_.ok()) return;
    total += n;
    if (total > kMaxLocals) {
      r_.malformed(locals_at, concat("too many locals: more than ", kMaxLocals));
      return;
    }
    body.locals.insert(body.locals.end(), n, t);
  }
  if (!r_.ok()) return;
  body.code_offset = r_.offset();
  const std::uint32_t funcidx = module_.imported_funcs + index;
  note_simd_type("function", funcidx, body.type_index);
  if (std::ranges::find(body.locals, ValType::V128) != body.locals.end())
    note_simd(concat("function ", funcidx, " has a v128 local"));

  if (bodies_validated_before_) {
    // This build validated these bytes before: the body's extent is all that is needed now
    // (the translator reads it when the function is first called).
    if (start + size < body.code_offset) {
      r_.malformed(start, concat("section size mismatch: function body declares ", size, " bytes, its locals take ",
                                 body.code_offset - start));
      return;
    }
    body.code_size = start + size - body.code_offset;
    r_.take(body.code_size);
    if (!r_.ok()) return;
    module_.code.push_back(std::move(body));
    return;
  }

  const bool validate = validating() && body.type_index < module_.types.size();
  FunctionValidator& validator = validator_;
  if (validate) validator.begin(body.type_index, body.locals);
  bool checking = validate;

  // Block nesting as the binary grammar sees it: `else` belongs directly in an `if`.
  std::vector<Opcode>& nesting = nesting_;
  nesting.assign(1, Opcode::Block);
  Instruction ins;
  while (r_.ok() && !nesting.empty()) {
    if (!read_instruction(r_, ins, scratch_, context_.features)) return;
    switch (ins.op) {
      case Opcode::Block:
      case Opcode::Loop:
      case Opcode::If: nesting.push_back(ins.op); break;
      case Opcode::Try:
      case Opcode::TryTable:
        nesting.push_back(ins.op);
        note_exceptions(ins.offset, concat("function ", funcidx, " uses ", name(ins.op)));
        break;
      case Opcode::Catch:
      case Opcode::CatchAll:
        // Legacy exception handling: an arm of a `try`; nothing follows a catch_all arm.
        if (nesting.back() != Opcode::Try && nesting.back() != Opcode::Catch) {
          r_.malformed(ins.offset, concat(name(ins.op), " outside a try block"));
          return;
        }
        nesting.back() = ins.op;
        break;
      case Opcode::Delegate:
        if (nesting.back() != Opcode::Try) {
          r_.malformed(ins.offset, "delegate outside a try block");
          return;
        }
        nesting.pop_back();
        break;
      case Opcode::Throw:
      case Opcode::ThrowRef:
      case Opcode::Rethrow: note_exceptions(ins.offset, concat("function ", funcidx, " uses ", name(ins.op))); break;
      case Opcode::Else:
        if (nesting.back() != Opcode::If) {
          r_.malformed(ins.offset, "END opcode expected");
          return;
        }
        nesting.back() = Opcode::Else;
        break;
      case Opcode::End: nesting.pop_back(); break;
      case Opcode::MemoryInit:
      case Opcode::DataDrop:
      case Opcode::ArrayNewData:
      case Opcode::ArrayInitData:
        if (!module_.data_count && !data_index_use_) data_index_use_ = ins.offset;
        break;
      default: break;
    }
    if (family(ins.op) == Family::Gc) module_.uses_gc = true;
    if (module_.simd_use.empty()) note_simd_instruction(funcidx, ins);
    const auto exn = [](ValType t) { return t.is_ref() && heap_top(t.heap()) == ValType::kExn; };
    if ((ins.op == Opcode::RefNull || ins.op == Opcode::SelectT) && exn(ins.type))
      note_exnref(ins.offset, concat("function ", funcidx, "'s ", name(ins.op)));
    if (opens_block(ins.op) && ins.block.kind == BlockType::Kind::Value && exn(ins.block.type))
      note_exnref(ins.offset, concat("a block of function ", funcidx));
    if (checking) {
      if (auto e = validator.step(ins)) {
        invalid(e->offset, e->message);
        checking = false;
      }
    }
  }
  if (!r_.ok()) return;
  if (r_.offset() != start + size) {
    r_.malformed(start, concat("section size mismatch: function body declares ", size, " bytes, code has ",
                               r_.offset() - start));
    return;
  }
  body.code_size = r_.offset() - body.code_offset;
  if (validate) body.max_stack_height = validator.max_stack_height();
  module_.code.push_back(std::move(body));
}

// A tag's type: attribute 0 (an exception), then the index of a function type without results.
// https://webassembly.github.io/exception-handling/core/binary/types.html#tag-types
std::uint32_t Decoder::tag_type(std::size_t at) {
  const std::size_t attr_at = r_.offset();
  const std::uint8_t attribute = r_.u8();
  const std::uint32_t type_index = r_.u32();
  if (!r_.ok()) return 0;
  if (attribute != 0) {
    r_.malformed(attr_at, concat("malformed tag attribute ", attribute));
    return 0;
  }
  if (!check_func_type(at, type_index)) {
  } else if (!module_.types[type_index].results.empty()) {
    invalid(at, "non-empty tag result type");
  }
  return type_index;
}

void Decoder::tag_section() {
  const std::uint32_t count = r_.u32();
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    const std::size_t at = r_.offset();
    const std::uint32_t type_index = tag_type(at);
    if (!r_.ok()) return;
    note_exceptions(at, concat("tag ", module_.tags.size()));
    module_.tags.push_back(type_index);
  }
}

void Decoder::note_simd_instruction(std::uint32_t funcidx, const Instruction& ins) {
  if (family(ins.op) == Family::Simd) {
    note_simd(concat("function ", funcidx, " uses SIMD instruction ", name(ins.op)));
    return;
  }
  const bool block = opens_block(ins.op);
  if (block && ins.block.kind == BlockType::Kind::Value && ins.block.type == ValType::V128) {
    note_simd(concat("function ", funcidx, " has a block of type v128"));
  } else if (block && ins.block.kind == BlockType::Kind::Index && type_has_v128(ins.block.index)) {
    note_simd(concat("function ", funcidx, " has a block of a v128 type"));
  } else if (ins.op == Opcode::SelectT && ins.type == ValType::V128) {
    note_simd(concat("function ", funcidx, " has a select of type v128"));
  } else if (ins.op == Opcode::CallIndirect && type_has_v128(ins.index)) {
    // The callee may live in another module or the host: its v128 values would reach this frame.
    note_simd(concat("function ", funcidx, " calls indirectly through a type with v128"));
  }
}

void Decoder::data_section() {
  data_section_seen_ = true;
  const std::size_t at = r_.offset();
  const std::uint32_t count = r_.u32();
  if (!r_.ok()) return;
  if (module_.data_count && *module_.data_count != count) {
    r_.malformed(at, "data count and data section have inconsistent lengths");
    return;
  }
  for (std::uint32_t i = 0; i < count && r_.ok(); ++i) {
    const std::size_t seg_at = r_.offset();
    const std::uint32_t flags = r_.u32();
    if (!r_.ok()) return;
    DataSegment seg;
    // An active segment's offset has its memory's address type (i64 for memory64).
    // An unknown memory is reported first (its offset's type is unknown).
    const auto offset_type = [&] {
      if (seg.memory_index >= module_.memories.size()) invalid(seg_at, concat("unknown memory ", seg.memory_index));
      const bool is64 = seg.memory_index < module_.memories.size() && module_.memories[seg.memory_index].limits.is64;
      return is64 ? ValType::I64 : ValType::I32;
    };
    switch (flags) {
      case 0: seg.offset = const_expr(offset_type()); break;
      case 1: seg.mode = SegmentMode::Passive; break;
      case 2:
        seg.memory_index = r_.u32();
        seg.offset = const_expr(offset_type());
        break;
      default: r_.malformed(seg_at, concat("malformed data segment kind ", flags)); return;
    }
    if (seg.mode == SegmentMode::Active && seg.memory_index >= module_.memories.size()) {
      invalid(seg_at, concat("unknown memory ", seg.memory_index));
    }
    const std::uint32_t n = r_.u32();
    seg.bytes_offset = r_.offset();
    seg.bytes_size = n;
    r_.take(n);
    module_.datas.push_back(seg);
  }
}

}  // namespace

std::expected<Module, CompileError> decode_and_validate(std::span<const std::uint8_t> bytes, Features features) {
  return decode_and_validate(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), features);
}

std::expected<Module, CompileError> decode_and_validate(std::vector<std::uint8_t>&& bytes, Features features) {
  Decoder decoder(std::move(bytes), false, features);
  return decoder.run();
}

std::expected<Module, CompileError> decode_validated_before(ModuleBytes&& bytes, Features features) {
  Decoder decoder(std::move(bytes), true, features);
  return decoder.run();
}

}  // namespace sprawling::wasm
