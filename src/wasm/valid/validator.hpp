// Function-body validation: the operand/control stack algorithm of the spec's validation
// appendix, driven one decoded instruction (instruction_reader.hpp) at a time so a translator
// can follow along.
// https://webassembly.github.io/spec/core/appendix/algorithm.html
#pragma once

#include "wasm/binary/byte_reader.hpp"
#include "wasm/binary/instruction_reader.hpp"
#include "wasm/binary/decoder.hpp"
#include "wasm/syntax/module.hpp"
#include "wasm/syntax/opcodes.hpp"
#include "wasm/syntax/types.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sprawling::wasm {

// What the code section is validated against, beyond the Module's index spaces.
struct ValidationContext {
  const Module* module = nullptr;
  // C.refs: the funcidx that occur outside function bodies (exports, element segments, global
  // initialisers); ref.func may name only these.
  std::vector<bool> declared_refs;
  Features features;  // the 3.0 features beyond 2.0 that are on
};

// Validates one function body. Call begin(), then step() for every instruction up to and
// including the final `end`; done() turns true after it. The queries describe the state
// between two steps (what a one-pass translator needs).
class FunctionValidator {
 public:
  explicit FunctionValidator(const ValidationContext& context) : context_(context) {}

  // `locals` are the declared locals (parameters come from the function type).
  void begin(std::uint32_t type_index, std::span<const ValType> locals);
  // Applies one instruction; on error returns the Invalid CompileError ("type mismatch", …).
  [[nodiscard]] std::optional<CompileError> step(const Instruction& ins);
  [[nodiscard]] bool done() const noexcept { return done_; }

  [[nodiscard]] std::uint32_t max_stack_height() const noexcept { return max_height_; }
  [[nodiscard]] std::size_t stack_height() const noexcept { return values_.size(); }
  [[nodiscard]] std::size_t control_depth() const noexcept { return controls_.size(); }
  // True when the code that follows cannot be reached (after br, return, unreachable, …).
  [[nodiscard]] bool unreachable() const noexcept { return !controls_.empty() && controls_.back().unreachable; }
  [[nodiscard]] std::span<const ValType> local_types() const noexcept { return locals_; }

  // A value on the operand stack whose type is not known (only after unreachable code): the
  // bottom type, which matches every type.
  static constexpr ValType kUnknown = ValType{};

 private:
  struct Control {
    Opcode op;
    std::span<const ValType> params;
    std::span<const ValType> results;
    std::size_t height;
    bool unreachable;
    std::size_t init_height;  // inits_.size() when the block began (local initialisation)
  };

  void push(ValType t);
  ValType pop();
  ValType pop(ValType expected);
  void pop_all(std::span<const ValType> types);
  void push_all(std::span<const ValType> types);
  void push_control(Opcode op, std::span<const ValType> params, std::span<const ValType> results);
  Control pop_control();
  void mark_unreachable();
  [[nodiscard]] std::span<const ValType> label_types(const Control& c) const {
    return c.op == Opcode::Loop ? c.params : c.results;
  }
  bool block_signature(const BlockType& bt, std::span<const ValType>& params, std::span<const ValType>& results);
  bool check_memory(std::uint32_t memidx);
  // The address type of memory memidx (i64 for a memory64 memory); memidx checked before.
  [[nodiscard]] ValType address_type(std::uint32_t memidx) const;
  bool step_memory(const Instruction& ins);
  void check_memarg(const Instruction& ins);
  bool check_table(std::uint32_t tableidx);
  [[nodiscard]] ValType table_address_type(std::uint32_t tableidx) const;
  bool step_table64(const Instruction& ins);
  bool check_simple_immediates(const Instruction& ins);
  void check_lanes(const Instruction& ins);
  bool check_tail_call_results(const FuncType& callee);
  bool tail_calls_enabled(const Instruction& ins);
  bool relaxed_simd_enabled(const Instruction& ins);
  void step_exceptions(const Instruction& ins);
  // Typed function references (validator.cpp's own block): call_ref, return_call_ref,
  // ref.as_non_null, br_on_null, br_on_non_null, and the subtyping and local-initialisation rules.
  void step_typed_refs(const Instruction& ins);
  bool function_references_enabled(const Instruction& ins);
  // Garbage collection (validator.cpp's own block): struct, array, i31, ref.eq, casts, br_on_cast
  // and the any/extern conversions.
  void step_gc(const Instruction& ins);
  const FuncType* gc_type(const Instruction& ins, std::uint32_t index, TypeKind kind);
  [[nodiscard]] ValType top_of(ValType t) const;
  bool check_value_type(ValType t);
  ValType pop_ref();
  [[nodiscard]] bool is_subtype(ValType a, ValType b) const { return matches(a, b, context_.module->types); }
  [[nodiscard]] std::span<const ValType> single(ValType t);
  const FuncType* tag(std::uint32_t tagidx);
  void fail(std::string message);
  void type_mismatch(ValType expected, ValType found);
  const Control* label(std::uint32_t depth);

  const ValidationContext& context_;
  std::vector<ValType> locals_;  // parameters then declared locals
  std::vector<ValType> values_;
  std::vector<Control> controls_;
  std::vector<ValType> scratch_;
  // Local initialisation (non-defaultable locals): whether each local holds a value, and the
  // locals set since each open block began (reset at its end).
  std::vector<bool> local_set_;
  std::vector<std::uint32_t> inits_;
  std::deque<ValType> block_types_;  // storage for single-result block types beyond the one-byte ones
  std::span<const ValType> function_results_;
  std::optional<CompileError> error_;
  std::size_t offset_ = 0;
  std::uint32_t max_height_ = 0;
  bool done_ = false;
};

// Checks a decoded constant expression (its instructions, final `end` excluded) against `type`:
// only constant instructions ("constant expression required"; with extended-const also i32/i64
// add, sub, mul), global.get of immutable globals (imported ones; with extended-const every one
// in module.globals, i.e. defined before the global being initialised), ref.func of existing
// functions, and exactly one result of `type` ("type mismatch").
[[nodiscard]] std::optional<CompileError> validate_const_expr(const Module& module, std::span<const Instruction> instrs,
                                                              ValType type, std::size_t end_offset,
                                                              Features features = {});

}  // namespace sprawling::wasm
