// Module: the immutable product of decode + validate — every section as plain data, the
// function bodies as byte ranges into the module's own copy of the bytes. The translator
// and the instantiator consume it; nothing changes it after validation.
// https://webassembly.github.io/spec/core/syntax/modules.html
#pragma once

#include "wasm/syntax/types.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace sprawling::wasm {

// A constant expression: one instruction (then `end`), as WebAssembly 2.0 allows, or (Op::Extended,
// 3.0's extended constant expressions) a sequence of integer constants, global.gets and i32/i64
// add, sub and mul, kept as `steps` and evaluated on a stack at instantiation; with garbage
// collection also ref.i31, the any/extern conversions and struct.new*/array.new* (any
// expression using one is Extended: they allocate in the store when evaluated).
// https://webassembly.github.io/spec/core/valid/instructions.html#constant-expressions
struct ConstExpr {
  enum class Op : std::uint8_t { I32Const, I64Const, F32Const, F64Const, V128Const, GlobalGet, RefNull, RefFunc, Extended };
  struct Step {
    enum class Kind : std::uint8_t {
      Const, GlobalGet, I32Add, I32Sub, I32Mul, I64Add, I64Sub, I64Mul,
      // Garbage collection (and what may feed it: a v128 constant, a function reference)
      ConstV128, RefFunc, RefI31, AnyConvertExtern, ExternConvertAny, StructNew, StructNewDefault, ArrayNew,
      ArrayNewDefault, ArrayNewFixed
    };
    Kind kind = Kind::Const;
    std::uint64_t value = 0;  // Const: the bits (i32 zero-extended); GlobalGet: the globalidx; RefFunc: the
                              // funcidx; ConstV128: the low half; struct.new*, array.new*: the typeidx
    std::uint64_t value2 = 0;  // ConstV128: the high half; array.new_fixed: the element count
    bool operator==(const Step&) const = default;
  };
  Op op = Op::I32Const;
  std::uint64_t bits = 0;     // the constant's bit pattern (i32/f32 zero-extended); low half of a v128
  std::uint64_t bits_hi = 0;  // high half of a v128 constant
  std::uint32_t index = 0;    // global.get: globalidx; ref.func: funcidx
  ValType type = ValType::I32;  // the expression's result type (ref.null: its reference type)
  std::vector<Step> steps;      // Op::Extended only
};

struct Import {
  std::string module;
  std::string name;
  ExternKind kind = ExternKind::Func;
  std::uint32_t type_index = 0;  // kind == Func; kind == Tag: the tag's function type
  TableType table;               // kind == Table
  MemoryType memory;             // kind == Memory
  GlobalType global;             // kind == Global
};

struct Export {
  std::string name;
  ExternKind kind = ExternKind::Func;
  std::uint32_t index = 0;
};

enum class SegmentMode : std::uint8_t { Active, Passive, Declarative };

// https://webassembly.github.io/spec/core/syntax/modules.html#element-segments
struct ElementSegment {
  SegmentMode mode = SegmentMode::Active;
  std::uint32_t table_index = 0;  // Active only
  ConstExpr offset;               // Active only
  ValType type = ValType::FuncRef;
  std::vector<ConstExpr> items;   // each ref.func / ref.null / global.get
};

// https://webassembly.github.io/spec/core/syntax/modules.html#data-segments
struct DataSegment {
  SegmentMode mode = SegmentMode::Active;  // never Declarative
  std::uint32_t memory_index = 0;          // Active only
  ConstExpr offset;                        // Active only
  std::size_t bytes_offset = 0;            // the init bytes: Module::bytes[bytes_offset, +bytes_size)
  std::size_t bytes_size = 0;
};

// A defined function's code entry.
struct FunctionBody {
  std::uint32_t type_index = 0;
  std::vector<ValType> locals;   // declared locals, expanded (parameters not included)
  std::size_t code_offset = 0;   // first instruction byte in Module::bytes (after the local declarations)
  std::size_t code_size = 0;     // up to and including the final `end`
  std::uint32_t max_stack_height = 0;  // operand-stack height bound found by the validator
};

// [start-up] A module's binary: its own copy (a vector taken over), or a read-only mapping kept
// alive by `keeper` (a snapshot file's copy of the module: docs/snapshots.md, "The module from the
// snapshot file"). Read through data()/size() or as a span either way.
class ModuleBytes {
 public:
  ModuleBytes() = default;
  // Implicit: a vector is taken over wherever one was before.
  ModuleBytes(std::vector<std::uint8_t>&& owned) noexcept : owned_(std::move(owned)) {}  // NOLINT(google-explicit-constructor)
  ModuleBytes(std::span<const std::uint8_t> mapped, std::shared_ptr<const void> keeper) noexcept
      : mapped_(mapped), keeper_(std::move(keeper)) {}
  [[nodiscard]] const std::uint8_t* data() const noexcept { return keeper_ ? mapped_.data() : owned_.data(); }
  [[nodiscard]] std::size_t size() const noexcept { return keeper_ ? mapped_.size() : owned_.size(); }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] const std::uint8_t* begin() const noexcept { return data(); }
  [[nodiscard]] const std::uint8_t* end() const noexcept { return data() + size(); }
  [[nodiscard]] std::uint8_t operator[](std::size_t i) const noexcept { return data()[i]; }
  using value_type = std::uint8_t;
  using const_iterator = const std::uint8_t*;
  friend bool operator==(const ModuleBytes& a, const ModuleBytes& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const ModuleBytes& a, const std::vector<std::uint8_t>& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::vector<std::uint8_t> owned_;
  std::span<const std::uint8_t> mapped_;
  std::shared_ptr<const void> keeper_;
};

struct Module {
  ModuleBytes bytes;  // the module's binary (its own copy, or a snapshot file's mapping of it)

  std::vector<FuncType> types;
  std::vector<Import> imports;

  // Index spaces, imports first (spec order). For functions, the type index of each.
  std::vector<std::uint32_t> func_types;
  std::vector<TableType> tables;
  std::vector<MemoryType> memories;
  std::vector<GlobalType> globals;
  std::uint32_t imported_funcs = 0;
  std::uint32_t imported_tables = 0;
  std::uint32_t imported_memories = 0;
  std::uint32_t imported_globals = 0;
  // Exception handling: each tag's type index (a function type with no results), imports first.
  std::vector<std::uint32_t> tags;
  std::uint32_t imported_tags = 0;

  std::vector<ConstExpr> global_inits;  // defined globals only (index - imported_globals)
  // Typed function references: a defined table's initial element (the table section's 0x40 0x00
  // form), by defined-table index; a table without one starts null. Sized only when one has it.
  std::vector<std::optional<ConstExpr>> table_inits;
  std::vector<Export> exports;
  std::optional<std::uint32_t> start;
  std::vector<ElementSegment> elements;
  std::vector<DataSegment> datas;
  std::optional<std::uint32_t> data_count;
  std::vector<FunctionBody> code;  // defined functions only (index - imported_funcs)

  // From the "name" custom section when present and well-formed; otherwise empty.
  std::string module_name;
  std::unordered_map<std::uint32_t, std::string> function_names;

  // The first use of v128 or of a SIMD instruction, described ("function 3 uses SIMD instruction
  // i32x4.add"); empty when there is none. The engine runs such modules; an embedder with SIMD
  // turned off (SandboxConfig::simd, -W simd=n) refuses them naming this use.
  std::string simd_use;
  // The first use of exception handling (a tag, exnref, or an exception instruction), described
  // like simd_use; empty when there is none. The compiled tier keeps the functions of such a
  // module that throw, catch or hold exnref values interpreted (docs/compiled-tier.md).
  std::string exceptions_use;
  bool uses_gc = false;  // a struct/array type, a rec group of several types, a sub type, a GC heap
                         // type or instruction (the compiled tier leaves such modules interpreted)
  bool uses_exnref = false;  // exnref appears in a type, local, global, table or block type

  [[nodiscard]] const FuncType& func_type(std::uint32_t funcidx) const { return types[func_types[funcidx]]; }
  [[nodiscard]] std::span<const std::uint8_t> data_bytes(const DataSegment& d) const {
    return std::span<const std::uint8_t>(bytes).subspan(d.bytes_offset, d.bytes_size);
  }
};

}  // namespace sprawling::wasm
