// The function-body validator (spec appendix algorithm), plus the constant-expression check.
#include "wasm/valid/validator.hpp"

#include <algorithm>
#include <array>

namespace sprawling::wasm {

namespace {

// Storage for one-type spans (a block whose type is a single value type).
constexpr std::array<ValType, 8> kSingleTypes = {ValType::I32,     ValType::I64,       ValType::F32,
                                                 ValType::F64,     ValType::V128,      ValType::FuncRef,
                                                 ValType::ExternRef, ValType::ExnRef};

std::string type_name(ValType t) { return name(t); }

}  // namespace

// ---------------------------------------------------------------- FunctionValidator

void FunctionValidator::begin(std::uint32_t type_index, std::span<const ValType> locals) {
  const FuncType& type = context_.module->types[type_index];
  locals_.assign(type.params.begin(), type.params.end());
  locals_.insert(locals_.end(), locals.begin(), locals.end());
  // Parameters and defaultable locals (numbers, vectors, nullable references) start set.
  local_set_.assign(locals_.size(), true);
  for (std::size_t i = type.params.size(); i < locals_.size(); ++i)
    if (locals_[i].is_ref() && !locals_[i].nullable()) local_set_[i] = false;
  inits_.clear();
  block_types_.clear();
  values_.clear();
  controls_.clear();
  error_.reset();
  max_height_ = 0;
  done_ = false;
  function_results_ = type.results;
  push_control(Opcode::Block, {}, function_results_);
}

void FunctionValidator::fail(std::string message) {
  if (!error_) error_ = CompileError{CompileError::Kind::Invalid, std::move(message), offset_};
}

// The 3.0 reference interpreter's wording (the exception-handling files expect it), which keeps
// 2.0's "type mismatch" prefix.
void FunctionValidator::type_mismatch(ValType expected, ValType found) {
  fail(concat("type mismatch: instruction requires [", type_name(expected), "] but stack has [", type_name(found), "]"));
}

void FunctionValidator::push(ValType t) {
  values_.push_back(t);
  if (values_.size() > max_height_) max_height_ = static_cast<std::uint32_t>(values_.size());
}

ValType FunctionValidator::pop() {
  const Control& c = controls_.back();
  if (values_.size() == c.height) {
    if (!c.unreachable) fail("type mismatch: operand stack is empty");
    return kUnknown;
  }
  const ValType t = values_.back();
  values_.pop_back();
  return t;
}

ValType FunctionValidator::pop(ValType expected) {
  const Control& c = controls_.back();
  if (values_.size() == c.height) {
    if (!c.unreachable) fail(concat("type mismatch: instruction requires [", type_name(expected), "] but stack has []"));
    return kUnknown;
  }
  const ValType actual = pop();
  if (actual != expected && expected != kUnknown && !is_subtype(actual, expected)) type_mismatch(expected, actual);
  return actual;
}

void FunctionValidator::pop_all(std::span<const ValType> types) {
  for (std::size_t i = types.size(); i-- > 0;) pop(types[i]);
}

void FunctionValidator::push_all(std::span<const ValType> types) {
  for (ValType t : types) push(t);
}

void FunctionValidator::push_control(Opcode op, std::span<const ValType> params, std::span<const ValType> results) {
  controls_.push_back(Control{op, params, results, values_.size(), false, inits_.size()});
  push_all(params);
}

FunctionValidator::Control FunctionValidator::pop_control() {
  const Control c = controls_.back();
  pop_all(c.results);
  if (values_.size() != c.height) {
    // What the block left: the extra values below the results that matched.
    std::string required, found;
    for (const ValType t : c.results) required += concat(required.empty() ? "" : " ", type_name(t));
    for (std::size_t i = c.height; i < values_.size(); ++i) found += concat(found.empty() ? "" : " ", type_name(values_[i]));
    for (const ValType t : c.results) found += concat(found.empty() ? "" : " ", type_name(t));
    fail(concat("type mismatch: block requires [", required, "] but stack has [", found, "]"));
  }
  values_.resize(c.height);
  // Locals set inside the block are unset again after it (local initialisation).
  for (std::size_t i = c.init_height; i < inits_.size(); ++i) local_set_[inits_[i]] = false;
  inits_.resize(c.init_height);
  controls_.pop_back();
  return c;
}

void FunctionValidator::mark_unreachable() {
  values_.resize(controls_.back().height);
  controls_.back().unreachable = true;
}

const FunctionValidator::Control* FunctionValidator::label(std::uint32_t depth) {
  if (depth >= controls_.size()) {
    fail(concat("unknown label ", depth));
    return nullptr;
  }
  return &controls_[controls_.size() - 1 - depth];
}

bool FunctionValidator::block_signature(const BlockType& bt, std::span<const ValType>& params,
                                        std::span<const ValType>& results) {
  switch (bt.kind) {
    case BlockType::Kind::Empty:
      params = {};
      results = {};
      return true;
    case BlockType::Kind::Value:
      params = {};
      if (!check_value_type(bt.type)) return false;
      results = single(bt.type);
      return true;
    case BlockType::Kind::Index:
      if (bt.index >= context_.module->types.size()) {
        fail(concat("unknown type ", bt.index));
        return false;
      }
      if (!context_.module->types[bt.index].is_func()) {
        fail(concat("type mismatch: block type ", bt.index, " is not a function type"));
        return false;
      }
      params = context_.module->types[bt.index].params;
      results = context_.module->types[bt.index].results;
      return true;
  }
  return false;
}

bool FunctionValidator::check_memory(std::uint32_t memidx) {
  if (memidx < context_.module->memories.size()) return true;
  fail(concat("unknown memory ", memidx));
  return false;
}

ValType FunctionValidator::address_type(std::uint32_t memidx) const {
  return context_.module->memories[memidx].limits.is64 ? ValType::I64 : ValType::I32;
}

void FunctionValidator::check_memarg(const Instruction& ins) {
  if (!check_memory(ins.memory)) return;
  const auto natural = natural_alignment_log2(info(ins.op).imm);
  if (natural && ins.align > *natural) return fail("alignment must not be larger than natural");
  if (!context_.module->memories[ins.memory].limits.is64 && ins.mem_offset > 0xFFFF'FFFFu)
    fail(concat("offset out of range: ", ins.mem_offset, " does not fit the i32 memory ", ins.memory));
}

// Every instruction with a memory immediate (multi-memory: any memory; memory64: its operands
// of the memory's address type). Returns false for the others.
bool FunctionValidator::step_memory(const Instruction& ins) {
  const OpcodeInfo& oi = info(ins.op);
  const bool memarg = natural_alignment_log2(oi.imm).has_value();
  const bool bulk = oi.imm == ImmKind::MemIdx || ins.op == Opcode::MemoryInit || ins.op == Opcode::MemoryCopy;
  if (!memarg && !bulk) return false;
  if (memarg) {
    check_memarg(ins);
    check_lanes(ins);
  } else if (ins.op == Opcode::MemoryInit) {
    const Module& m = *context_.module;
    check_memory(ins.memory);
    if (!m.data_count || ins.index >= *m.data_count) fail(concat("unknown data segment ", ins.index));
  } else {
    check_memory(ins.memory);
    if (ins.op == Opcode::MemoryCopy) check_memory(ins.memory2);
  }
  if (error_) return true;
  const ValType at = address_type(ins.memory);
  switch (ins.op) {
    case Opcode::MemorySize: push(at); return true;
    case Opcode::MemoryGrow:
      pop(at);
      push(at);
      return true;
    case Opcode::MemoryFill:  // [at i32 at]
      pop(at);
      pop(ValType::I32);
      pop(at);
      return true;
    case Opcode::MemoryCopy: {  // [at1 at2 min(at1, at2)]
      const ValType src = address_type(ins.memory2);
      pop(at == ValType::I64 && src == ValType::I64 ? ValType::I64 : ValType::I32);
      pop(src);
      pop(at);
      return true;
    }
    case Opcode::MemoryInit:  // [at i32 i32]
      pop(ValType::I32);
      pop(ValType::I32);
      pop(at);
      return true;
    default: break;
  }
  // Loads and stores: the address is the first operand.
  const SigTypes& sig = sig_types(oi.sig);
  for (std::size_t i = sig.param_count; i-- > 0;) pop(i == 0 ? at : sig.params[i]);
  if (sig.result_count) push(sig.result);
  return true;
}

bool FunctionValidator::check_table(std::uint32_t tableidx) {
  if (tableidx >= context_.module->tables.size()) {
    fail(concat("unknown table ", tableidx));
    return false;
  }
  return true;
}

// table64: a table's indexes, sizes and lengths have its address type (i64 for a 64-bit table).
ValType FunctionValidator::table_address_type(std::uint32_t tableidx) const {
  return context_.module->tables[tableidx].limits.is64 ? ValType::I64 : ValType::I32;
}

// The signature-typed table instructions on a 64-bit table (indices already checked): table.size
// returns the address type; table.init's destination has it; table.copy's length has the smaller
// of the two tables' address types. Returns false for the others, which their signature types.
bool FunctionValidator::step_table64(const Instruction& ins) {
  switch (ins.op) {
    case Opcode::TableSize:
      if (table_address_type(ins.index) != ValType::I64) return false;
      push(ValType::I64);
      return true;
    case Opcode::TableInit:  // [at i32 i32]; ins.index2 is the table
      if (table_address_type(ins.index2) != ValType::I64) return false;
      pop(ValType::I32);
      pop(ValType::I32);
      pop(ValType::I64);
      return true;
    case Opcode::TableCopy: {  // [at_dst at_src min(at_dst, at_src)]
      const ValType dst = table_address_type(ins.index);
      const ValType src = table_address_type(ins.index2);
      if (dst != ValType::I64 && src != ValType::I64) return false;
      pop(dst == ValType::I64 && src == ValType::I64 ? ValType::I64 : ValType::I32);
      pop(src);
      pop(dst);
      return true;
    }
    default: return false;
  }
}

// The index/alignment checks of the simple (signature-typed) instructions that carry immediates.
bool FunctionValidator::check_simple_immediates(const Instruction& ins) {
  const Module& m = *context_.module;
  if (ins.op == Opcode::DataDrop) {
    if (!m.data_count || ins.index >= *m.data_count) fail(concat("unknown data segment ", ins.index));
  }
  if (ins.op == Opcode::TableSize && !check_table(ins.index)) return false;
  if (ins.op == Opcode::TableInit || ins.op == Opcode::TableCopy) {
    const std::uint32_t table = ins.op == Opcode::TableInit ? ins.index2 : ins.index;
    if (!check_table(table)) return false;
    if (ins.op == Opcode::TableInit) {
      if (ins.index >= m.elements.size()) {
        fail(concat("unknown elem segment ", ins.index));
        return false;
      }
      if (!is_subtype(m.elements[ins.index].type, m.tables[table].element))
        fail("type mismatch: element segment and table differ");
    } else {
      if (!check_table(ins.index2)) return false;
      if (!is_subtype(m.tables[ins.index2].element, m.tables[table].element))
        fail("type mismatch: tables differ in element type");
    }
  }
  if (ins.op == Opcode::ElemDrop && ins.index >= m.elements.size()) fail(concat("unknown elem segment ", ins.index));
  check_lanes(ins);
  return !error_;
}

bool FunctionValidator::tail_calls_enabled(const Instruction& ins) {
  if (context_.features.tail_call) return true;
  fail(concat(name(ins.op), ": tail calls are disabled (the tail-call feature is off)"));
  return false;
}

bool FunctionValidator::relaxed_simd_enabled(const Instruction& ins) {
  if (context_.features.relaxed_simd) return true;
  fail(concat(name(ins.op), ": relaxed SIMD is disabled (the relaxed-simd feature is off)"));
  return false;
}

// A tail call's callee returns straight to this function's caller: its results must be this
// function's results.
bool FunctionValidator::check_tail_call_results(const FuncType& callee) {
  if (callee.results.size() == function_results_.size() &&
      std::ranges::equal(callee.results, function_results_, [&](ValType a, ValType b) { return is_subtype(a, b); }))
    return true;
  fail("type mismatch: the tail call's callee results differ from the function's results");
  return false;
}

// Lane indices must address a lane of the shape (i8x16.shuffle: of its two operands).
void FunctionValidator::check_lanes(const Instruction& ins) {
  const ImmKind imm = info(ins.op).imm;
  const std::uint32_t lanes = lane_count(imm);
  if (lanes == 0) return;
  if (imm == ImmKind::Shuffle) {
    for (std::uint8_t l : ins.v128) {
      if (l >= lanes) return fail(concat("invalid lane index ", l, ": i8x16.shuffle lanes must be below ", lanes));
    }
  } else if (ins.lane >= lanes) {
    fail(concat("invalid lane index ", ins.lane, ": ", name(ins.op), " has ", lanes, " lanes"));
  }
}

std::optional<CompileError> FunctionValidator::step(const Instruction& ins) {
  offset_ = ins.offset;
  const Module& m = *context_.module;
  const OpcodeInfo& oi = info(ins.op);
  if (oi.sig != OpSig::Special) {
    if (is_relaxed_simd(ins.op) && !relaxed_simd_enabled(ins)) return error_;
    if (step_memory(ins)) return error_;
    if (oi.imm != ImmKind::None && !check_simple_immediates(ins)) return error_;
    if (step_table64(ins)) return error_;
    const SigTypes& sig = sig_types(oi.sig);
    for (std::size_t i = sig.param_count; i-- > 0;) pop(sig.params[i]);
    if (sig.result_count) push(sig.result);
    return error_;
  }

  switch (oi.family) {
    case Family::Exception: step_exceptions(ins); return error_;
    case Family::TypedRef: step_typed_refs(ins); return error_;
    case Family::Gc: step_gc(ins); return error_;
    default: break;
  }
  switch (ins.op) {
    case Opcode::Unreachable: mark_unreachable(); break;
    case Opcode::Block:
    case Opcode::Loop:
    case Opcode::If: {
      std::span<const ValType> params, results;
      if (!block_signature(ins.block, params, results)) break;
      if (ins.op == Opcode::If) pop(ValType::I32);
      pop_all(params);
      push_control(ins.op, params, results);
      break;
    }
    case Opcode::Else: {
      if (controls_.back().op != Opcode::If) {
        fail("else without if");
        break;
      }
      const Control c = pop_control();
      push_control(Opcode::Else, c.params, c.results);
      break;
    }
    case Opcode::End: {
      const Control c = pop_control();
      if (c.op == Opcode::If && !std::equal(c.params.begin(), c.params.end(), c.results.begin(), c.results.end(),
                                            [&](ValType a, ValType b) { return is_subtype(a, b); })) {
        fail("type mismatch: if without else must leave its parameters unchanged");
      }
      push_all(c.results);
      if (controls_.empty()) done_ = true;
      break;
    }
    case Opcode::Br: {
      const Control* c = label(ins.index);
      if (!c) break;
      pop_all(label_types(*c));
      mark_unreachable();
      break;
    }
    case Opcode::BrIf: {
      const Control* c = label(ins.index);
      if (!c) break;
      const auto types = label_types(*c);
      pop(ValType::I32);
      pop_all(types);
      push_all(types);
      break;
    }
    case Opcode::BrTable: {
      pop(ValType::I32);
      const Control* def = label(ins.index);
      if (!def) break;
      const std::size_t arity = label_types(*def).size();
      for (std::uint32_t target : ins.targets) {
        const Control* c = label(target);
        if (!c) break;
        const auto types = label_types(*c);
        if (types.size() != arity) {
          fail("type mismatch: br_table targets differ in arity");
          break;
        }
        // Pop against this label's types, then restore what was popped (possibly unknown).
        scratch_.assign(types.size(), kUnknown);
        for (std::size_t i = types.size(); i-- > 0;) scratch_[i] = pop(types[i]);
        for (ValType t : scratch_) push(t);
      }
      if (error_) break;
      pop_all(label_types(*label(ins.index)));
      mark_unreachable();
      break;
    }
    case Opcode::Return:
      pop_all(function_results_);
      mark_unreachable();
      break;
    case Opcode::Call: {
      if (ins.index >= m.func_types.size()) {
        fail(concat("unknown function ", ins.index));
        break;
      }
      const FuncType& ft = m.func_type(ins.index);
      pop_all(ft.params);
      push_all(ft.results);
      break;
    }
    case Opcode::ReturnCall: {
      if (!tail_calls_enabled(ins)) break;
      if (ins.index >= m.func_types.size()) {
        fail(concat("unknown function ", ins.index));
        break;
      }
      const FuncType& ft = m.func_type(ins.index);
      if (!check_tail_call_results(ft)) break;
      pop_all(ft.params);
      mark_unreachable();
      break;
    }
    case Opcode::ReturnCallIndirect: {
      if (!tail_calls_enabled(ins)) break;
      if (!check_table(ins.index2)) break;
      if (!is_subtype(m.tables[ins.index2].element, ValType::FuncRef)) {
        fail("type mismatch: return_call_indirect needs a funcref table");
        break;
      }
      if (ins.index >= m.types.size()) {
        fail(concat("unknown type ", ins.index));
        break;
      }
      if (!m.types[ins.index].is_func()) {
        fail(concat("type mismatch: type ", ins.index, " is not a function type"));
        break;
      }
      const FuncType& ft = m.types[ins.index];
      if (!check_tail_call_results(ft)) break;
      pop(table_address_type(ins.index2));
      pop_all(ft.params);
      mark_unreachable();
      break;
    }
    case Opcode::CallIndirect: {
      if (!check_table(ins.index2)) break;
      if (!is_subtype(m.tables[ins.index2].element, ValType::FuncRef)) {
        fail("type mismatch: call_indirect needs a funcref table");
        break;
      }
      if (ins.index >= m.types.size()) {
        fail(concat("unknown type ", ins.index));
        break;
      }
      if (!m.types[ins.index].is_func()) {
        fail(concat("type mismatch: type ", ins.index, " is not a function type"));
        break;
      }
      const FuncType& ft = m.types[ins.index];
      pop(table_address_type(ins.index2));
      pop_all(ft.params);
      push_all(ft.results);
      break;
    }
    case Opcode::Drop: pop(); break;
    case Opcode::Select: {
      pop(ValType::I32);
      const ValType t1 = pop();
      const ValType t2 = pop();
      // Untyped select takes numeric and vector operands, not references.
      const auto numeric = [](ValType t) { return t == kUnknown || !is_reference(t); };
      if (!numeric(t1) || !numeric(t2)) {
        fail("type mismatch: select without a type needs numeric or vector operands");
        break;
      }
      if (t1 != t2 && !t1.is_bottom() && !t2.is_bottom()) {
        type_mismatch(t1, t2);
        break;
      }
      push(t1 == kUnknown ? t2 : t1);
      break;
    }
    case Opcode::SelectT:
      if (ins.select_arity != 1) {
        fail("invalid result arity");
        break;
      }
      if (!check_value_type(ins.type)) break;
      pop(ValType::I32);
      pop(ins.type);
      pop(ins.type);
      push(ins.type);
      break;
    case Opcode::LocalGet:
    case Opcode::LocalSet:
    case Opcode::LocalTee: {
      if (ins.index >= locals_.size()) {
        fail(concat("unknown local ", ins.index));
        break;
      }
      const ValType t = locals_[ins.index];
      if (ins.op == Opcode::LocalGet) {
        if (!local_set_[ins.index]) {
          fail(concat("uninitialized local ", ins.index));
          break;
        }
        push(t);
      } else {
        pop(t);
        if (!local_set_[ins.index]) {
          local_set_[ins.index] = true;
          inits_.push_back(ins.index);
        }
        if (ins.op == Opcode::LocalTee) push(t);
      }
      break;
    }
    case Opcode::GlobalGet:
    case Opcode::GlobalSet: {
      if (ins.index >= m.globals.size()) {
        fail(concat("unknown global ", ins.index));
        break;
      }
      const GlobalType g = m.globals[ins.index];
      if (ins.op == Opcode::GlobalGet) {
        push(g.type);
      } else {
        if (!g.is_mutable) {
          // 2.0's wording, and the 3.0 reference interpreter's when validating as 3.0.
          fail(concat(context_.features.function_references ? "immutable global: global " : "global is immutable: global ",
                      ins.index));
          break;
        }
        pop(g.type);
      }
      break;
    }
    case Opcode::TableGet:
      if (!check_table(ins.index)) break;
      pop(table_address_type(ins.index));
      push(m.tables[ins.index].element);
      break;
    case Opcode::TableSet:
      if (!check_table(ins.index)) break;
      pop(m.tables[ins.index].element);
      pop(table_address_type(ins.index));
      break;
    case Opcode::TableGrow:
      if (!check_table(ins.index)) break;
      pop(table_address_type(ins.index));
      pop(m.tables[ins.index].element);
      push(table_address_type(ins.index));
      break;
    case Opcode::TableFill:
      if (!check_table(ins.index)) break;
      pop(table_address_type(ins.index));
      pop(m.tables[ins.index].element);
      pop(table_address_type(ins.index));
      break;
    case Opcode::RefNull:
      if (!check_value_type(ins.type)) break;
      push(ins.type);
      break;
    case Opcode::RefIsNull:
      pop_ref();
      push(ValType::I32);
      break;
    case Opcode::RefFunc:
      if (ins.index >= m.func_types.size()) {
        fail(concat("unknown function ", ins.index));
        break;
      }
      if (ins.index >= context_.declared_refs.size() || !context_.declared_refs[ins.index]) {
        fail(concat("undeclared function reference ", ins.index));
        break;
      }
      // Typed function references: (ref $t) of the function's type; 2.0: funcref.
      push(context_.features.function_references ? ValType::ref(false, m.func_types[ins.index]) : ValType::FuncRef);
      break;
    default: fail(concat("unhandled opcode ", name(ins.op))); break;
  }
  return error_;
}

// ---------------------------------------------------------------- exception handling
// https://webassembly.github.io/exception-handling/core/valid/instructions.html, and the legacy
// try/catch/catch_all/rethrow/delegate of the testsuite's legacy/ files.

const FuncType* FunctionValidator::tag(std::uint32_t tagidx) {
  const Module& m = *context_.module;
  if (tagidx >= m.tags.size() || m.tags[tagidx] >= m.types.size()) {
    fail(concat("unknown tag ", tagidx));
    return nullptr;
  }
  return &m.types[m.tags[tagidx]];
}

void FunctionValidator::step_exceptions(const Instruction& ins) {
  switch (ins.op) {
    case Opcode::Throw: {
      const FuncType* t = tag(ins.index);
      if (t == nullptr) break;
      pop_all(t->params);
      mark_unreachable();
      break;
    }
    case Opcode::ThrowRef:
      pop(ValType::ExnRef);
      mark_unreachable();
      break;
    case Opcode::TryTable: {
      std::span<const ValType> params, results;
      if (!block_signature(ins.block, params, results)) break;
      pop_all(params);
      // Each clause branches to a label of the enclosing context with the tag's values (catch),
      // those and the exnref (catch_ref), nothing (catch_all) or the exnref (catch_all_ref).
      for (std::size_t i = 0; i + 2 < ins.targets.size() && !error_; i += 3) {
        const std::uint32_t kind = ins.targets[i];
        std::vector<ValType> sent;
        if (kind <= kCatchRef) {
          const FuncType* t = tag(ins.targets[i + 1]);
          if (t == nullptr) break;
          sent = t->params;
        }
        // The caught exception is never null: (ref exn) with typed function references.
        if (kind == kCatchRef || kind == kCatchAllRef)
          sent.push_back(context_.features.function_references ? ValType::abstract_ref(false, ValType::kExn)
                                                                : ValType::ExnRef);
        const Control* c = label(ins.targets[i + 2]);
        if (c == nullptr) break;
        if (!std::ranges::equal(sent, label_types(*c), [&](ValType a, ValType b) { return is_subtype(a, b); }))
          fail("type mismatch: catch clause and label types differ");
      }
      if (error_) break;
      push_control(Opcode::TryTable, params, results);
      break;
    }
    case Opcode::Try: {
      std::span<const ValType> params, results;
      if (!block_signature(ins.block, params, results)) break;
      pop_all(params);
      push_control(Opcode::Try, params, results);
      break;
    }
    case Opcode::Catch:
    case Opcode::CatchAll: {
      const Opcode open = controls_.back().op;
      if (open != Opcode::Try && open != Opcode::Catch) {
        fail(concat(name(ins.op), " without try"));
        break;
      }
      std::span<const ValType> values;
      if (ins.op == Opcode::Catch) {
        const FuncType* t = tag(ins.index);
        if (t == nullptr) break;
        values = t->params;
      }
      const Control c = pop_control();
      push_control(ins.op, values, c.results);
      break;
    }
    case Opcode::Delegate: {
      if (controls_.back().op != Opcode::Try) {
        fail("delegate without try");
        break;
      }
      const Control c = pop_control();
      if (label(ins.index) == nullptr) break;
      push_all(c.results);
      break;
    }
    case Opcode::Rethrow: {
      const Control* c = label(ins.index);
      if (c == nullptr) break;
      if (c->op != Opcode::Catch && c->op != Opcode::CatchAll) {
        fail("invalid rethrow label");
        break;
      }
      mark_unreachable();
      break;
    }
    default: break;
  }
}

// ---------------------------------------------------------------- typed function references
// https://webassembly.github.io/spec/core/valid/instructions.html (call_ref, br_on_null, …)

std::span<const ValType> FunctionValidator::single(ValType t) {
  for (std::size_t i = 0; i < kSingleTypes.size(); ++i) {
    if (kSingleTypes[i] == t) return std::span<const ValType>(kSingleTypes).subspan(i, 1);
  }
  block_types_.push_back(t);  // a deque: earlier elements stay where they are
  return {&block_types_.back(), 1};
}

// A type written in the body (block type, select's, ref.null's) must name a type of the module.
bool FunctionValidator::check_value_type(ValType t) {
  if (t.concrete() && t.type_index() >= context_.module->types.size()) {
    fail(concat("unknown type ", t.type_index()));
    return false;
  }
  return true;
}

bool FunctionValidator::function_references_enabled(const Instruction& ins) {
  if (context_.features.function_references) return true;
  fail(concat(name(ins.op), ": typed function references are disabled (the function-references feature is off)"));
  return false;
}

// Pops a reference of any type (the bottom type in unreachable code).
ValType FunctionValidator::pop_ref() {
  const ValType t = pop();
  if (!t.is_bottom() && !t.is_ref()) {
    fail(concat("type mismatch: instruction requires a reference but stack has [", type_name(t), "]"));
    return kUnknown;
  }
  return t;
}

void FunctionValidator::step_typed_refs(const Instruction& ins) {
  if (!function_references_enabled(ins)) return;
  const Module& m = *context_.module;
  switch (ins.op) {
    case Opcode::CallRef:
    case Opcode::ReturnCallRef: {
      if (ins.op == Opcode::ReturnCallRef && !tail_calls_enabled(ins)) break;
      if (ins.index >= m.types.size()) {
        fail(concat("unknown type ", ins.index));
        break;
      }
      if (!m.types[ins.index].is_func()) {
        fail(concat("type mismatch: type ", ins.index, " is not a function type"));
        break;
      }
      const FuncType& ft = m.types[ins.index];
      if (ins.op == Opcode::ReturnCallRef && !check_tail_call_results(ft)) break;
      pop(ValType::ref(true, ins.index));
      pop_all(ft.params);
      if (ins.op == Opcode::CallRef) {
        push_all(ft.results);
      } else {
        mark_unreachable();
      }
      break;
    }
    case Opcode::RefAsNonNull: {
      const ValType t = pop_ref();
      push(t.is_bottom() ? t : t.as_nullable(false));
      break;
    }
    case Opcode::BrOnNull: {
      const ValType t = pop_ref();
      const Control* c = label(ins.index);
      if (c == nullptr) break;
      const auto types = label_types(*c);
      pop_all(types);
      push_all(types);
      push(t.is_bottom() ? t : t.as_nullable(false));
      break;
    }
    case Opcode::BrOnNonNull: {
      const Control* c = label(ins.index);
      if (c == nullptr) break;
      const auto types = label_types(*c);
      if (types.empty() || !types.back().is_ref()) {
        fail(concat("type mismatch: br_on_non_null's label ", ins.index, " must take a reference last"));
        break;
      }
      const ValType t = pop_ref();
      push(t.is_bottom() ? t : t.as_nullable(false));
      pop_all(types);
      push_all(types.first(types.size() - 1));
      break;
    }
    default: break;
  }
}

// ---------------------------------------------------------------- garbage collection

namespace {

// A field's value type on the stack: a packed field is read and written as i32.
ValType unpacked(const FieldType& f) { return f.packed == FieldType::Packed::None ? f.type : ValType::I32; }
// A field that struct.new_default / array.new_default can fill: numbers, vectors, nullable references.
bool defaultable(const FieldType& f) { return f.packed != FieldType::Packed::None || !f.type.is_ref() || f.type.nullable(); }
bool numeric_or_vector(const FieldType& f) { return f.packed != FieldType::Packed::None || !f.type.is_ref(); }

}  // namespace

// The defined type `index` when it is of `kind` (else an error naming the instruction).
const FuncType* FunctionValidator::gc_type(const Instruction& ins, std::uint32_t index, TypeKind kind) {
  const Module& m = *context_.module;
  if (index >= m.types.size()) {
    fail(concat("unknown type ", index));
    return nullptr;
  }
  const FuncType& t = m.types[index];
  if (t.kind != kind) {
    fail(concat("type mismatch: ", name(ins.op), " needs ", kind == TypeKind::Struct ? "a struct" : "an array",
                " type, type ", index, " is not one"));
    return nullptr;
  }
  return &t;
}

// The top of a reference type's hierarchy as a nullable reference (what ref.test, ref.cast and
// br_on_cast accept as their operand).
ValType FunctionValidator::top_of(ValType t) const {
  return ValType::abstract_ref(true, heap_top(t.heap(), context_.module->types));
}

void FunctionValidator::step_gc(const Instruction& ins) {
  const Module& m = *context_.module;
  const auto ref_of = [](std::uint32_t index, bool nullable) { return ValType::ref(nullable, index); };
  switch (ins.op) {
    case Opcode::RefEq:
      pop(ValType::abstract_ref(true, ValType::kEq));
      pop(ValType::abstract_ref(true, ValType::kEq));
      push(ValType::I32);
      break;
    case Opcode::StructNew:
    case Opcode::StructNewDefault: {
      const FuncType* t = gc_type(ins, ins.index, TypeKind::Struct);
      if (t == nullptr) break;
      if (ins.op == Opcode::StructNew) {
        for (std::size_t i = t->fields.size(); i-- > 0;) pop(unpacked(t->fields[i]));
      } else if (!std::ranges::all_of(t->fields, defaultable)) {
        fail(concat("type mismatch: struct.new_default: type ", ins.index, " has a field without a default value"));
        break;
      }
      push(ref_of(ins.index, false));
      break;
    }
    case Opcode::StructGet:
    case Opcode::StructGetS:
    case Opcode::StructGetU:
    case Opcode::StructSet: {
      const FuncType* t = gc_type(ins, ins.index, TypeKind::Struct);
      if (t == nullptr) break;
      if (ins.index2 >= t->fields.size()) {
        fail(concat("unknown field ", ins.index2, " of type ", ins.index));
        break;
      }
      const FieldType& f = t->fields[ins.index2];
      const bool packed = f.packed != FieldType::Packed::None;
      if (ins.op == Opcode::StructSet) {
        if (!f.is_mutable) {
          fail(concat("immutable field ", ins.index2, " of type ", ins.index));
          break;
        }
        pop(unpacked(f));
        pop(ref_of(ins.index, true));
        break;
      }
      if (packed != (ins.op != Opcode::StructGet)) {
        fail(concat("type mismatch: ", name(ins.op), packed ? " of a packed field" : " of an unpacked field"));
        break;
      }
      pop(ref_of(ins.index, true));
      push(unpacked(f));
      break;
    }
    case Opcode::ArrayNew:
    case Opcode::ArrayNewDefault:
    case Opcode::ArrayNewFixed:
    case Opcode::ArrayNewData:
    case Opcode::ArrayNewElem: {
      const FuncType* t = gc_type(ins, ins.index, TypeKind::Array);
      if (t == nullptr) break;
      const FieldType& f = t->fields[0];
      switch (ins.op) {
        case Opcode::ArrayNew:
          pop(ValType::I32);
          pop(unpacked(f));
          break;
        case Opcode::ArrayNewDefault:
          if (!defaultable(f)) {
            fail(concat("type mismatch: array.new_default: type ", ins.index, " has no default value"));
            return;
          }
          pop(ValType::I32);
          break;
        case Opcode::ArrayNewFixed:
          for (std::uint32_t i = 0; i < ins.index2 && !error_; ++i) pop(unpacked(f));
          break;
        case Opcode::ArrayNewData:
          if (!numeric_or_vector(f)) {
            fail(concat("array type is not numeric or vector: array.new_data of type ", ins.index));
            return;
          }
          if (!m.data_count || ins.index2 >= *m.data_count) {
            fail(concat("unknown data segment ", ins.index2));
            return;
          }
          pop(ValType::I32);
          pop(ValType::I32);
          break;
        default:  // array.new_elem
          if (ins.index2 >= m.elements.size()) {
            fail(concat("unknown elem segment ", ins.index2));
            return;
          }
          if (!is_subtype(m.elements[ins.index2].type, unpacked(f))) {
            fail(concat("type mismatch: array.new_elem: elem segment ", ins.index2, " does not match type ", ins.index));
            return;
          }
          pop(ValType::I32);
          pop(ValType::I32);
          break;
      }
      push(ref_of(ins.index, false));
      break;
    }
    case Opcode::ArrayGet:
    case Opcode::ArrayGetS:
    case Opcode::ArrayGetU:
    case Opcode::ArraySet:
    case Opcode::ArrayFill:
    case Opcode::ArrayInitData:
    case Opcode::ArrayInitElem: {
      const FuncType* t = gc_type(ins, ins.index, TypeKind::Array);
      if (t == nullptr) break;
      const FieldType& f = t->fields[0];
      const bool packed = f.packed != FieldType::Packed::None;
      if (ins.op == Opcode::ArrayGet || ins.op == Opcode::ArrayGetS || ins.op == Opcode::ArrayGetU) {
        if (packed != (ins.op != Opcode::ArrayGet)) {
          fail(concat("type mismatch: ", name(ins.op), packed ? " of a packed array" : " of an unpacked array"));
          break;
        }
        pop(ValType::I32);
        pop(ref_of(ins.index, true));
        push(unpacked(f));
        break;
      }
      if (!f.is_mutable) {
        fail(concat("immutable array ", ins.index));
        break;
      }
      if (ins.op == Opcode::ArraySet) {
        pop(unpacked(f));
        pop(ValType::I32);
      } else if (ins.op == Opcode::ArrayFill) {
        pop(ValType::I32);
        pop(unpacked(f));
        pop(ValType::I32);
      } else if (ins.op == Opcode::ArrayInitData) {
        if (!numeric_or_vector(f)) {
          fail(concat("array type is not numeric or vector: array.init_data of type ", ins.index));
          break;
        }
        if (!m.data_count || ins.index2 >= *m.data_count) {
          fail(concat("unknown data segment ", ins.index2));
          break;
        }
        pop(ValType::I32);
        pop(ValType::I32);
        pop(ValType::I32);
      } else {
        if (ins.index2 >= m.elements.size()) {
          fail(concat("unknown elem segment ", ins.index2));
          break;
        }
        if (!is_subtype(m.elements[ins.index2].type, unpacked(f))) {
          fail(concat("type mismatch: array.init_elem: elem segment ", ins.index2, " does not match type ", ins.index));
          break;
        }
        pop(ValType::I32);
        pop(ValType::I32);
        pop(ValType::I32);
      }
      pop(ref_of(ins.index, true));
      break;
    }
    case Opcode::ArrayLen:
      pop(ValType::abstract_ref(true, ValType::kArray));
      push(ValType::I32);
      break;
    case Opcode::ArrayCopy: {
      const FuncType* dst = gc_type(ins, ins.index, TypeKind::Array);
      const FuncType* src = dst == nullptr ? nullptr : gc_type(ins, ins.index2, TypeKind::Array);
      if (src == nullptr) break;
      if (!dst->fields[0].is_mutable) {
        fail(concat("immutable array ", ins.index));
        break;
      }
      const FieldType& df = dst->fields[0];
      const FieldType& sf = src->fields[0];
      if (df.packed != sf.packed || !is_subtype(sf.type, df.type)) {
        fail(concat("array types do not match: array.copy from type ", ins.index2, " to type ", ins.index));
        break;
      }
      pop(ValType::I32);
      pop(ValType::I32);
      pop(ref_of(ins.index2, true));
      pop(ValType::I32);
      pop(ref_of(ins.index, true));
      break;
    }
    case Opcode::RefTest:
    case Opcode::RefTestNull:
    case Opcode::RefCast:
    case Opcode::RefCastNull: {
      if (!check_value_type(ins.type)) break;
      pop(top_of(ins.type));
      push(ins.op == Opcode::RefTest || ins.op == Opcode::RefTestNull ? ValType::I32 : ins.type);
      break;
    }
    case Opcode::BrOnCast:
    case Opcode::BrOnCastFail: {
      if (!check_value_type(ins.type) || !check_value_type(ins.type2)) break;
      if (!is_subtype(ins.type2, ins.type)) {
        fail(concat("type mismatch: ", name(ins.op), "'s target type ", type_name(ins.type2), " is not a subtype of ",
                    type_name(ins.type)));
        break;
      }
      const Control* c = label(ins.index);
      if (c == nullptr) break;
      const auto types = label_types(*c);
      // What goes to the label and what stays: the cast type, or the source type without it
      // (a nullable target takes the nulls).
      const ValType diff = ins.type2.nullable() ? ins.type.as_nullable(false) : ins.type;
      const ValType to_label = ins.op == Opcode::BrOnCast ? ins.type2 : diff;
      const ValType stays = ins.op == Opcode::BrOnCast ? diff : ins.type2;
      if (types.empty() || !is_subtype(to_label, types.back())) {
        fail(concat("type mismatch: ", name(ins.op), "'s label ", ins.index, " must take ", type_name(to_label), " last"));
        break;
      }
      pop(ins.type);
      pop_all(types.first(types.size() - 1));
      push_all(types.first(types.size() - 1));
      push(stays);
      break;
    }
    case Opcode::AnyConvertExtern:
    case Opcode::ExternConvertAny: {
      const bool to_any = ins.op == Opcode::AnyConvertExtern;
      const ValType t = pop(ValType::abstract_ref(true, to_any ? ValType::kExtern : ValType::kAny));
      push(ValType::abstract_ref(t.is_bottom() ? false : t.nullable(), to_any ? ValType::kAny : ValType::kExtern));
      break;
    }
    case Opcode::RefI31:
      pop(ValType::I32);
      push(ValType::abstract_ref(false, ValType::kI31));
      break;
    case Opcode::I31GetS:
    case Opcode::I31GetU:
      pop(ValType::abstract_ref(true, ValType::kI31));
      push(ValType::I32);
      break;
    default: break;
  }
}

// ---------------------------------------------------------------- constant expressions

namespace {

// A GC instruction of a constant expression: pops its operands off `stack`, returns its result
// type, or what is wrong.
std::expected<ValType, std::string> const_gc_step(const Module& module, const Instruction& ins, std::vector<ValType>& stack) {
  const auto pop = [&](ValType want) -> bool {
    if (stack.empty() || !matches(stack.back(), want, module.types)) return false;
    stack.pop_back();
    return true;
  };
  const auto mismatch = [&](ValType want) {
    return std::unexpected(concat("type mismatch: ", name(ins.op), " expects ", name(want),
                                  stack.empty() ? std::string(", found nothing") : concat(", found ", name(stack.back()))));
  };
  const auto defined = [&](TypeKind kind) -> const FuncType* {
    if (ins.index >= module.types.size() || module.types[ins.index].kind != kind) return nullptr;
    return &module.types[ins.index];
  };
  switch (ins.op) {
    case Opcode::RefI31:
      if (!pop(ValType::I32)) return mismatch(ValType::I32);
      return ValType::abstract_ref(false, ValType::kI31);
    case Opcode::AnyConvertExtern:
    case Opcode::ExternConvertAny: {
      const bool to_any = ins.op == Opcode::AnyConvertExtern;
      const ValType from = ValType::abstract_ref(true, to_any ? ValType::kExtern : ValType::kAny);
      if (stack.empty() || !matches(stack.back(), from, module.types)) return mismatch(from);
      const bool nullable = stack.back().nullable();
      stack.pop_back();
      return ValType::abstract_ref(nullable, to_any ? ValType::kAny : ValType::kExtern);
    }
    case Opcode::StructNew:
    case Opcode::StructNewDefault: {
      const FuncType* t = defined(TypeKind::Struct);
      if (t == nullptr) return std::unexpected(concat("unknown type ", ins.index, " (a struct type expected)"));
      for (std::size_t i = t->fields.size(); i-- > 0;) {
        const FieldType& f = t->fields[i];
        const ValType want = f.packed == FieldType::Packed::None ? f.type : ValType::I32;
        if (ins.op == Opcode::StructNewDefault) {
          if (f.packed == FieldType::Packed::None && f.type.is_ref() && !f.type.nullable())
            return std::unexpected(concat("type mismatch: struct.new_default: type ", ins.index,
                                          " has a field without a default value"));
        } else if (!pop(want)) {
          return mismatch(want);
        }
      }
      return ValType::ref(false, ins.index);
    }
    default: {  // array.new, array.new_default, array.new_fixed
      const FuncType* t = defined(TypeKind::Array);
      if (t == nullptr) return std::unexpected(concat("unknown type ", ins.index, " (an array type expected)"));
      const FieldType& f = t->fields[0];
      const ValType want = f.packed == FieldType::Packed::None ? f.type : ValType::I32;
      if (ins.op == Opcode::ArrayNewFixed) {
        for (std::uint32_t i = 0; i < ins.index2; ++i)
          if (!pop(want)) return mismatch(want);
      } else {
        if (!pop(ValType::I32)) return mismatch(ValType::I32);
        if (ins.op == Opcode::ArrayNew && !pop(want)) return mismatch(want);
        if (ins.op == Opcode::ArrayNewDefault && f.packed == FieldType::Packed::None && f.type.is_ref() &&
            !f.type.nullable())
          return std::unexpected(concat("type mismatch: array.new_default: type ", ins.index, " has no default value"));
      }
      return ValType::ref(false, ins.index);
    }
  }
}

}  // namespace

std::optional<CompileError> validate_const_expr(const Module& module, std::span<const Instruction> instrs, ValType type,
                                                std::size_t end_offset, Features features) {
  const auto invalid = [](std::size_t at, std::string msg) {
    return CompileError{CompileError::Kind::Invalid, std::move(msg), at};
  };
  const auto arithmetic = [](Opcode op) {
    return op == Opcode::I32Add || op == Opcode::I32Sub || op == Opcode::I32Mul || op == Opcode::I64Add ||
           op == Opcode::I64Sub || op == Opcode::I64Mul;
  };
  for (const Instruction& ins : instrs) {
    switch (ins.op) {
      case Opcode::I32Const:
      case Opcode::I64Const:
      case Opcode::F32Const:
      case Opcode::F64Const:
      case Opcode::V128Const:
      case Opcode::RefNull:
      case Opcode::RefFunc:
      case Opcode::GlobalGet: break;
      case Opcode::RefI31:
      case Opcode::AnyConvertExtern:
      case Opcode::ExternConvertAny:
      case Opcode::StructNew:
      case Opcode::StructNewDefault:
      case Opcode::ArrayNew:
      case Opcode::ArrayNewDefault:
      case Opcode::ArrayNewFixed: break;  // GC (read only with -W gc)
      default:
        if (arithmetic(ins.op) && features.extended_const) break;
        return invalid(ins.offset, concat("constant expression required, found ", name(ins.op),
                                          arithmetic(ins.op) ? " (extended constant expressions are disabled)" : ""));
    }
  }
  // Globals a constant expression may read: 3.0 (extended-const) every global defined so far
  // (the decoder has not yet added the one being initialised), 2.0 only the imported ones.
  const std::size_t visible = features.extended_const ? module.globals.size() : module.imported_globals;
  std::vector<ValType> stack;
  for (const Instruction& ins : instrs) {
    ValType t = ValType::I32;
    switch (ins.op) {
      case Opcode::I32Const: t = ValType::I32; break;
      case Opcode::I64Const: t = ValType::I64; break;
      case Opcode::F32Const: t = ValType::F32; break;
      case Opcode::F64Const: t = ValType::F64; break;
      case Opcode::V128Const: t = ValType::V128; break;
      case Opcode::RefNull:
        if (ins.type.concrete() && ins.type.type_index() >= module.types.size())
          return invalid(ins.offset, concat("unknown type ", ins.type.type_index()));
        t = ins.type;
        break;
      case Opcode::RefFunc:
        if (ins.index >= module.func_types.size()) return invalid(ins.offset, concat("unknown function ", ins.index));
        t = features.function_references ? ValType::ref(false, module.func_types[ins.index]) : ValType::FuncRef;
        break;
      case Opcode::GlobalGet:
        if (ins.index >= visible) {
          return invalid(ins.offset, concat("unknown global ", ins.index,
                                            ins.index < module.globals.size()
                                                ? " (a constant expression may read a defined global only with "
                                                  "extended constant expressions, which are disabled)"
                                                : ""));
        }
        if (module.globals[ins.index].is_mutable) {
          return invalid(ins.offset, concat("constant expression required: global ", ins.index, " is mutable"));
        }
        t = module.globals[ins.index].type;
        break;
      case Opcode::RefI31:
      case Opcode::AnyConvertExtern:
      case Opcode::ExternConvertAny:
      case Opcode::StructNew:
      case Opcode::StructNewDefault:
      case Opcode::ArrayNew:
      case Opcode::ArrayNewDefault:
      case Opcode::ArrayNewFixed: {
        auto r = const_gc_step(module, ins, stack);
        if (!r) return invalid(ins.offset, std::move(r.error()));
        t = *r;
        break;
      }
      default: {  // i32/i64 add, sub, mul
        t = sig_types(info(ins.op).sig).result;
        for (int k = 0; k < 2; ++k) {
          if (stack.empty()) return invalid(ins.offset, concat("type mismatch: ", name(ins.op), " needs two operands"));
          if (stack.back() != t) {
            return invalid(ins.offset, concat("type mismatch: ", name(ins.op), " expects ", name(t), ", found ",
                                              name(stack.back())));
          }
          stack.pop_back();
        }
        break;
      }
    }
    stack.push_back(t);
  }
  if (stack.size() != 1 || !matches(stack[0], type, module.types)) {
    return invalid(end_offset, concat("type mismatch: constant expression must produce one ", name(type)));
  }
  return std::nullopt;
}

}  // namespace sprawling::wasm
