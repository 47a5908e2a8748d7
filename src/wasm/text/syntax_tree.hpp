// Internal to the text front end: the syntax tree of one module's fields, which the field
// parser (field_parser.cpp, pass 1) builds and the encoder (encoder.cpp, pass 2) turns into the
// binary format, and the keyword vocabulary both passes and the error messages share.
#pragma once

#include "wasm/syntax/module.hpp"
#include "wasm/syntax/opcodes.hpp"
#include "wasm/syntax/types.hpp"
#include "wasm/text/module_parser.hpp"

#include <array>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sprawling::wasm::text::tree {

// ------------------------------------------------------------------ vocabulary

// Instruction keyword → opcode, from the shared opcode table.
[[nodiscard]] const std::unordered_map<std::string_view, Opcode>& opcode_names();
// Keywords of the module and script grammar that are not instructions: meeting one where an
// instruction belongs is an "unexpected token", any other keyword an "unknown operator".
[[nodiscard]] bool is_grammar_keyword(std::string_view kw);
// A grammar keyword, an instruction, or an `offset=`/`align=`/`nan:0x` keyword with a valid value.
[[nodiscard]] bool is_known_keyword(std::string_view kw);
// A token that reads as an integer or a float (in range or not).
[[nodiscard]] bool is_well_formed_number(std::string_view text);

struct Pos {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};
inline Pos pos_of(const Token& t) { return {t.line, t.column}; }
inline TextError error_pos(Pos p, std::string msg) { return TextError{p.line, p.column, std::move(msg)}; }

// ------------------------------------------------------------------ syntax tree

// An index as written: `$id` (id non-empty) or a number.
struct Ref {
  std::string_view id;
  std::uint32_t index = 0;
  Pos pos;
};

inline Ref numeric_ref(std::uint32_t index) { return Ref{{}, index, {}}; }

// https://webassembly.github.io/spec/core/text/modules.html#type-uses
struct TypeUse {
  std::optional<Ref> type;
  bool has_inline = false;  // some (param …) or (result …) was written
  FuncType sig;             // the inline part
  std::vector<std::string_view> param_ids;  // one per inline param; empty id when unnamed
  Pos pos;
};

// One instruction; immediates by kind (see encode_expr). Kept small: a big module has millions.
struct Instr {
  Opcode op = Opcode::Nop;
  std::uint32_t align = 0;  // memarg alignment exponent; load/store*_lane: the lane index in bits 8..15
  std::uint64_t value = 0;  // constant bits | memarg offset | label depth | ref.null type | side-table index
                            // | lane index (extract/replace_lane)
  Ref a;                    // the index immediate (table.init/table.copy: the first one; memory.init:
                            // the data segment, its memory in second_refs); a memarg's memory; GC:
                            // the type (the field, count, data, elem or source type in second_refs)
};

struct Expr {
  std::vector<Instr> instrs;
  std::vector<TypeUse> type_uses;                        // block/loop/if/call_indirect
  std::vector<std::vector<std::uint32_t>> label_lists;   // br_table
  std::vector<std::vector<ValType>> select_types;        // typed select
  std::vector<Ref> second_refs;                          // table.init's elem, table.copy's source
  std::vector<std::array<std::uint8_t, 16>> v128s;       // v128.const bytes, i8x16.shuffle lanes
  // try_table's catch clauses (Instr::a.index names the list): kind (binary encoding), tag, label depth.
  struct CatchText {
    std::uint32_t kind = 0;
    Ref tag;
    std::uint32_t label = 0;
  };
  std::vector<std::vector<CatchText>> catch_lists;
};

struct ImportName {
  std::string module;
  std::string field;
};

struct FuncDef {
  std::string_view id;
  std::optional<ImportName> import;
  TypeUse type;
  std::vector<ValType> locals;
  std::vector<std::string_view> local_ids;
  Expr body;
};
struct TableDef {
  std::optional<ImportName> import;
  TableType type;
  std::optional<Expr> init;  // typed function references: the initial element's expression
};
struct MemoryDef {
  std::optional<ImportName> import;
  MemoryType type;
};
struct GlobalDef {
  std::optional<ImportName> import;
  GlobalType type;
  Expr init;
};
struct TagDef {
  std::optional<ImportName> import;
  TypeUse type;
};
struct ExportDef {
  std::string name;
  ExternKind kind = ExternKind::Func;
  Ref ref;
};
// An element list of function indices (`func $f …`, elemkind func): (ref func) in 3.0.
constexpr ValType kFuncIndices = ValType::abstract_ref(false, ValType::kFunc);

struct ElemDef {
  SegmentMode mode = SegmentMode::Passive;
  Ref table;
  Expr offset;
  ValType type = kFuncIndices;
  std::vector<Expr> items;
};
struct DataDef {
  SegmentMode mode = SegmentMode::Passive;
  Ref memory;
  Expr offset;
  std::string bytes;
};
struct ImportEntry {
  ExternKind kind = ExternKind::Func;
  std::uint32_t index = 0;
};

enum class Space : std::uint8_t { Type, Func, Table, Memory, Global, Elem, Data, Tag };
constexpr std::size_t kSpaces = 8;
constexpr std::string_view space_name(Space s) {
  switch (s) {
    case Space::Type: return "type";
    case Space::Func: return "func";
    case Space::Table: return "table";
    case Space::Memory: return "memory";
    case Space::Global: return "global";
    case Space::Elem: return "elem";
    case Space::Data: return "data";
    case Space::Tag: return "tag";
  }
  return "?";
}
constexpr std::string_view definition_name(ExternKind k) {
  switch (k) {
    case ExternKind::Func: return "function";
    case ExternKind::Table: return "table";
    case ExternKind::Memory: return "memory";
    case ExternKind::Global: return "global";
    case ExternKind::Tag: return "tag";
  }
  return "?";
}

struct ModuleAst {
  std::vector<FuncType> types;  // explicit (type …) definitions
  std::vector<FuncDef> funcs;
  std::vector<TableDef> tables;
  std::vector<MemoryDef> memories;
  std::vector<GlobalDef> globals;
  std::vector<TagDef> tags;
  std::vector<ExportDef> exports;
  std::vector<ElemDef> elems;
  std::vector<DataDef> datas;
  std::vector<ImportEntry> imports;  // in textual order
  std::optional<Ref> start;
  std::array<std::unordered_map<std::string_view, std::uint32_t>, kSpaces> names;
  // Typed function references: `(ref $t)` may name a type defined further on, so a named heap
  // type is a placeholder (kPendingHeap + its position here) until the encoder resolves it.
  std::vector<Ref> pending_types;
  // GC: per type, its struct fields' ids ("" when unnamed); empty for other types.
  std::vector<std::vector<std::string_view>> field_ids;
};
constexpr std::uint32_t kPendingHeap = 0xF00000;  // up to ValType::kAbstractHeap

template <typename T>
using Result = std::expected<T, TextError>;


// Pass 1: the module fields at the cursor, up to (not including) the ')' closing the module, or
// to Eof when `bare` is set.
[[nodiscard]] Result<ModuleAst> parse_fields(Cursor& cursor, const WatOptions& options, bool bare);

// Pass 2: the binary module. Resolves the $names that point forward and adds the implicit
// function types (it completes `ast` as it goes). `module_id` ($name or empty) goes into the name
// section when asked for.
[[nodiscard]] Result<std::vector<std::uint8_t>> encode_module(ModuleAst& ast, const WatOptions& options,
                                                            std::string_view module_id);

}  // namespace sprawling::wasm::text::tree
