// The translator's inside (translator.hpp has its entry point): the Translator class, whose
// instruction families are translated in translator_*.cpp along the sections below, and the
// helpers they share. Private to the translator.
#pragma once

#include "wasm/binary/instruction_reader.hpp"
#include "wasm/icode/code.hpp"
#include "wasm/interp/interpreter.hpp"
#include "wasm/icode/translator.hpp"
#include "wasm/icode/internal_verify.hpp"
#include "wasm/syntax/opcodes.hpp"
#include "wasm/runtime/heap/gc_heap.hpp"
#include "wasm/runtime/store_impl.hpp"
#include "wasm/valid/validator.hpp"
#include <algorithm>
#include <array>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

namespace sprawling::wasm::translation {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

// How an immediate-free numeric opcode translates: its op, and the op with the second operand
// inline (Op::Count_ if none), both from the declaration (internal_ops.def).
enum class Form : std::uint8_t { None, Un, Bin, BinImm, BinFImm };

struct SimpleInfo {
  Op op = Op::Count_;
  Op imm = Op::Count_;
  Form form = Form::None;
};

constexpr std::array<SimpleInfo, kOpcodeSpace> make_simple_table() {
  std::array<SimpleInfo, kOpcodeSpace> t{};
  for (std::size_t i = 0; i < kOpcodeSpace; ++i) {
    const auto opc = static_cast<Opcode>(i);
    SimpleInfo& e = t[i];
    e.op = numeric_op(opc, SecondOperand::Slot);
    e.imm = numeric_op(opc, SecondOperand::Imm);
    if (e.op == Op::Count_) continue;
    if (info(e.op).layout == Layout::Unary) e.form = Form::Un;
    else if (e.imm == Op::Count_) e.form = Form::Bin;
    else if (info(e.imm).layout == Layout::BinaryImm) e.form = Form::BinImm;
    else e.form = Form::BinFImm;
  }
  return t;
}
constexpr auto kSimple = make_simple_table();
static_assert(kSimple[static_cast<std::size_t>(Opcode::F64Mul)].form == Form::BinFImm &&
              kSimple[static_cast<std::size_t>(Opcode::I64Shl)].form == Form::BinImm &&
              kSimple[static_cast<std::size_t>(Opcode::F32Lt)].form == Form::Bin &&
              kSimple[static_cast<std::size_t>(Opcode::I32Load)].form == Form::None);

// An operand-stack entry. Temp: in its own slot. Local: lazily the local's slot. Const: a
// constant not yet placed. AddImm: u32(slot `local` + `value`) not yet computed, where the slot is
// a local or this entry's own temp slot (an i32.add of a constant, folded into a later
// load/store address or add). `at` is its own temp slot's offset from the first temporary: a
// v128 (`wide`) takes two slots, every other value one, so in a function without v128 values
// the entry at height k is at k. Const and AddImm entries are never wide.
struct Operand {
  enum Kind : std::uint8_t { Temp, Local, Const, AddImm };
  Kind kind = Temp;
  u32 local = 0;
  u64 value = 0;
  u32 at = 0;
  bool wide = false;
};

// Every value type once, for block types of a single result to point into.
constexpr std::array<ValType, 8> kValTypes = {ValType::I32,  ValType::I64,     ValType::F32,       ValType::F64,
                                              ValType::V128, ValType::FuncRef, ValType::ExternRef, ValType::ExnRef};
inline std::span<const ValType> single_type(std::uint8_t byte) {
  for (const ValType& t : kValTypes)
    if (t == ValType::from_byte(byte)) return {&t, 1};
  return {};
}

struct Fixup {
  u32 instr;  // first word of the branch instruction
  u32 word;   // the offset word to patch
};

struct Ctrl {
  enum Kind : std::uint8_t { Func, Block, Loop, If, Else, Try };  // Try: a legacy try (try_table is a Block)
  Kind kind = Block;
  u32 base = 0;  // operand height below the block's parameters
  u32 base_at = 0;  // the slot offset (Operand::at) of the entry at `base`
  u32 params = 0;
  u32 results = 0;
  std::span<const ValType> param_types;
  std::span<const ValType> result_types;
  u32 loop_start = 0;
  std::vector<Fixup> fixups;
  Fixup else_fixup{0, 0};
  bool unreachable = false;
  // Exception handling: the handler region this block opened and has not closed (try_table, a
  // legacy try's body), or ~0; a legacy try in a catch arm, and the slot of its caught exnref
  // (below the arm's values, for rethrow).
  u32 region = ~u32{0};
  bool in_catch = false;
  u32 exn_slot = 0;
  u32 try_region = ~u32{0};  // a legacy try's region (its catch clauses join it)
};

struct Cond {
  enum Kind : std::uint8_t { Slot, Cmp, CmpImm };
  Kind kind = Slot;
  u32 a = 0;
  u32 b = 0;
  Opcode cmp = Opcode::I32Eq;  // Cmp / CmpImm: the i32 comparison (fused_branch)
};

constexpr u32 kNone = ~u32{0};

// The peepholes' view of the last instruction emitted, for a later one to rewrite it: one that
// wrote a fresh temporary (a local.set can retarget its dst word), one that was an i32
// comparison or eqz (a br_if / if can fuse with it). Any other emission clears it.
struct Peephole {
  u32 producer_end = kNone;  // code size just after the producer, if it is the last instruction
  u32 producer_dst_word = 0;
  u32 cmp_end = kNone;       // code size just after the comparison, if it is the last instruction
  u32 cmp_start = 0;
  Cond cmp;
  bool cmp_is_eqz = false;
  void clear() {
    producer_end = kNone;
    cmp_end = kNone;
  }
};

// The families Translator::step dispatches to, one member function each.
class Translator {
 public:
  Translator(const Module& m, std::span<const u32> canon, u32 defined_index, bool metered, bool nan_canonical)
      : m_(m), canon_(canon), body_(m.code[defined_index]), type_(m.types[body_.type_index]), metered_(metered),
        nan_canonical_(nan_canonical), handlers_(handler_offsets(metered)) {
    out_.num_params = value_slots(type_.params);
    out_.num_results = value_slots(type_.results);
    locals_ = out_.num_params + value_slots(body_.locals);
    out_.num_locals = locals_;
    // Local x's slot: x itself unless a v128 comes before it (then a table, built only then).
    const auto n_params = static_cast<u32>(type_.params.size());
    if (locals_ != n_params + body_.locals.size()) {
      local_at_.reserve(n_params + body_.locals.size() + 1);
      u32 at = 0;
      for (const ValType t : type_.params) {
        local_at_.push_back(at);
        at += value_slots(t);
      }
      for (const ValType t : body_.locals) {
        local_at_.push_back(at);
        at += value_slots(t);
      }
      local_at_.push_back(at);
    }
  }

  CompiledFunc run() {
    // The body's instructions through the engine's one instruction reader (instruction_reader.hpp),
    // the validator's: validated, so every feature's encoding may be on and nothing fails.
    ByteReader r(m_.bytes);
    r.seek(body_.code_offset);
    const std::size_t end = body_.code_offset + body_.code_size;
    Instruction ins;
    std::vector<u32> scratch;
    Ctrl f;
    f.kind = Ctrl::Func;
    f.results = static_cast<u32>(type_.results.size());
    f.result_types = type_.results;
    ctrl_.push_back(std::move(f));
    if (metered_) {
      seg_cost_ = 1;  // the function-entry charge
      cur_offset_ = static_cast<u32>(body_.code_offset);
      fuel_pos_ = emit<Op::FuelCheck>({.cost = 0, .visible = 1}) + layout::FuelCheck::cost;
      trapping();
    }
    while (r.offset() < end && !ctrl_.empty()) {
      read_instruction(r, ins, scratch, Features{});
      step(ins);
    }
    finish_regions();
    out_.frame_slots = std::max(locals_ + max_slots_, out_.num_results);
    out_.frame_slots = std::max(out_.frame_slots, out_.num_params);
    return std::move(out_);
  }

 private:
  const Module& m_;
  std::span<const u32> canon_;
  const FunctionBody& body_;
  const FuncType& type_;
  bool metered_;
  bool nan_canonical_;  // translate_function's nan_canonical
  const std::int32_t* handlers_;
  CompiledFunc out_;
  u32 locals_ = 0;
  std::vector<Operand> vs_;
  std::vector<Ctrl> ctrl_;
  std::vector<u32> local_at_;  // slot of each local, and the total; empty when slot == index
  u32 max_slots_ = 0;          // the temporaries' extent in slots
  u32 dead_depth_ = 0;
  u32 cur_offset_ = 0;
  // Fuel segment: cost so far, and the word holding it once the segment's fuel op is emitted.
  u64 seg_cost_ = 0;
  u32 fuel_pos_ = kNone;
  Peephole peep_;

  // ---------------------------------------------------------------- emission
  u32 pos() const { return static_cast<u32>(out_.code.size()); }
  // Appends instruction o (layout L) as the declaration lays it out, nothing else; returns its
  // first word. The FALL word of metered code is left 0, TARGETS entries are the caller's.
  template <class L>
  u32 put(Op o, const typename L::Args& a) {
    assert(info(o).layout == L::kLayout);
    const u32 at = pos();
    out_.code.resize(at + L::fixed_words(metered_));
    out_.code[at] = static_cast<u32>(handlers_[static_cast<std::size_t>(o)]);
    L::write(out_.code.data() + at, a);
    return at;
  }
  void fuel_touch() {
    if (metered_ && fuel_pos_ == kNone) fuel_pos_ = put<layout::Fuel>(Op::Fuel, {.cost = 0}) + layout::Fuel::cost;
  }
  // Emits an instruction of the wasm code (charged to the current segment, ending the peepholes).
  template <class L>
  u32 emit_as(Op o, const typename L::Args& a) {
    if (o != Op::FuelCheck) fuel_touch();
    invalidate_peepholes();
    last_instr_ = put<L>(o, a);
    return last_instr_;
  }
  template <Op O>
  u32 emit(const typename LayoutOf<O>::type::Args& a) {
    return emit_as<typename LayoutOf<O>::type>(O, a);
  }
  u32 last_instr_ = 0;
  void trapping() { out_.trap_sites.emplace_back(last_instr_, cur_offset_); }
  void mark_producer(u32 dst_word) {
    peep_.producer_end = pos();
    peep_.producer_dst_word = dst_word;
  }

  void end_segment() {
    if (!metered_) return;
    if (fuel_pos_ != kNone) {
      out_.code[fuel_pos_] = static_cast<u32>(seg_cost_);
    } else if (seg_cost_ > 0) {
      put<layout::Fuel>(Op::Fuel, {.cost = static_cast<u32>(seg_cost_)});
    }
    seg_cost_ = 0;
    fuel_pos_ = kNone;
  }
  void begin_segment() { end_segment(); }
  // The segment after a call is charged as the call returns (its `post` word), saving a dispatch;
  // a callee that exits or traps never returns, so that segment is never charged.
  void begin_post_call_segment(u32 post_word) {
    end_segment();
    if (metered_) fuel_pos_ = post_word;
  }
  void invalidate_peepholes() { peep_.clear(); }

  // ---------------------------------------------------------------- operand stack
  u32 height() const { return static_cast<u32>(vs_.size()); }
  // The slot offset the next pushed entry takes.
  u32 next_at() const { return vs_.empty() ? 0 : vs_.back().at + (vs_.back().wide ? 2 : 1); }
  u32 at_of(u32 k) const { return k < height() ? vs_[k].at : next_at(); }
  // Entry k's own slot; k == height() names where the next push goes.
  u32 temp_slot(u32 k) const {
    assert(k <= height());
    return locals_ + at_of(k);
  }
  u32 local_slot(u32 x) const { return local_at_.empty() ? x : local_at_[x]; }
  bool local_wide(u32 x) const { return !local_at_.empty() && local_at_[x + 1] - local_at_[x] == 2; }
  void push_temp(bool wide = false) {
    Operand o;
    o.wide = wide;
    push(o);
  }
  void push(Operand o) {
    o.at = next_at();
    vs_.push_back(o);
    max_slots_ = std::max(max_slots_, next_at());
  }
  void push_temps(std::span<const ValType> types) {
    for (const ValType t : types) push_temp(t == ValType::V128);
  }
  void emit_const(u32 dst, u64 v) {
    if (v <= 0xFFFFFFFFu) {
      emit<Op::Const32>({.dst = dst, .imm = static_cast<u32>(v)});
    } else {
      emit<Op::Const64>({.dst = dst, .value = v});
    }
  }
  void emit_add_imm(u32 dst, u32 base, u32 imm) {
    const u32 at = emit<Op::NumI32AddImm>({.dst = dst, .a = base, .imm = imm});
    mark_producer(at + layout::BinaryImm::dst);
  }
  // Makes entry k live in its own temp slot.
  void materialize(u32 k) {
    Operand& o = vs_[k];
    if (o.kind == Operand::Const) {
      emit_const(temp_slot(k), o.value);
    } else if (o.kind == Operand::AddImm) {
      emit_add_imm(temp_slot(k), o.local, static_cast<u32>(o.value));
    } else if (o.kind == Operand::Local) {
      emit_copy(temp_slot(k), o.local, o.wide);
    }
    o.kind = Operand::Temp;
    o.local = 0;
    o.value = 0;
  }
  void emit_copy(u32 dst, u32 src, bool wide) {
    if (wide) {
      emit<Op::VCopy>({.dst = dst, .src = src});
    } else {
      emit<Op::Copy>({.dst = dst, .src = src});
    }
  }
  void materialize_all() {
    for (u32 k = 0; k < height(); ++k)
      if (vs_[k].kind != Operand::Temp) materialize(k);
  }
  // The slot holding entry k's value (constants get materialized).
  u32 slot(u32 k) {
    Operand& o = vs_[k];
    if (o.kind == Operand::Local) return o.local;
    if (o.kind == Operand::Const || o.kind == Operand::AddImm) materialize(k);
    return temp_slot(k);
  }
  u32 top_slot() { return slot(height() - 1); }
  void pop(u32 n = 1) { vs_.resize(vs_.size() - n); }
  // Before local x is written: entries that still read it lazily must take a copy now.
  static bool reads_local(const Operand& o, u32 x) {
    return (o.kind == Operand::Local || o.kind == Operand::AddImm) && o.local == x;
  }
  void protect_local(u32 x, u32 below) {
    for (u32 k = 0; k < below; ++k)
      if (reads_local(vs_[k], x)) materialize(k);
  }
  bool local_pending(u32 x, u32 below) const {
    for (u32 k = 0; k < below; ++k)
      if (reads_local(vs_[k], x)) return true;
    return false;
  }
  // Writes entry k's value into slot dst (dst not read lazily by anything).
  void move_to(u32 dst, u32 k) {
    const Operand& o = vs_[k];
    if (o.kind == Operand::Const) {
      emit_const(dst, o.value);
    } else if (o.kind == Operand::AddImm) {
      emit_add_imm(dst, o.local, static_cast<u32>(o.value));
    } else {
      const u32 src = o.kind == Operand::Local ? o.local : temp_slot(k);
      if (src != dst) emit_copy(dst, src, o.wide);
    }
  }

  // ---------------------------------------------------------------- branches
  Ctrl& label(u32 depth) { return ctrl_[ctrl_.size() - 1 - depth]; }
  u32 arity(const Ctrl& c) const { return c.kind == Ctrl::Loop ? c.params : c.results; }
  std::span<const ValType> label_types(const Ctrl& c) const {
    return c.kind == Ctrl::Loop ? c.param_types : c.result_types;
  }
  // A label's values are in slots from its base on (each as wide as its type).
  bool needs_copies(const Ctrl& c) {
    if (c.kind == Ctrl::Func) return true;
    const u32 n = arity(c);
    const std::span<const ValType> types = label_types(c);
    u32 at = c.base_at;
    for (u32 i = 0; i < n; ++i) {
      const u32 k = height() - n + i;
      if (vs_[k].kind != Operand::Temp || vs_[k].at != at) return true;
      at += value_slots(types[i]);
    }
    return false;
  }
  void emit_label_copies(const Ctrl& c) {
    const u32 n = arity(c);
    const std::span<const ValType> types = label_types(c);
    u32 at = c.base_at;
    for (u32 i = 0; i < n; ++i) {
      move_to(locals_ + at, height() - n + i);
      at += value_slots(types[i]);
    }
  }
  // Results into slots [0, results): in ascending order, which is safe for temporaries (their
  // source slot is never below the destination); locals that would be overwritten first are
  // copied out beforehand.
  // (Result i goes to the slot after those of the results before it: i without v128 results.)
  void emit_return();
  void add_jump(Ctrl& c, u32 instr, u32 word) {
    if (c.kind == Ctrl::Loop) {
      out_.code[word] = c.loop_start - instr;
    } else {
      c.fixups.push_back(Fixup{instr, word});
    }
  }
  // Unconditional branch to label `depth` with its values.
  void emit_br(u32 depth) {
    Ctrl& c = label(depth);
    if (c.kind == Ctrl::Func) {
      emit_return();
      return;
    }
    emit_label_copies(c);
    const u32 at = emit<Op::Br>({.off = 0});
    add_jump(c, at, at + layout::Jump::off);
  }
  void bind(Fixup f, u32 target) { out_.code[f.word] = target - f.instr; }

  // Whether the condition on top is an i32.eqz just emitted (pop_cond then fuses its operand).
  bool eqz_pending() const { return peep_.cmp_end == pos() && peep_.cmp_is_eqz && vs_.back().kind == Operand::Temp; }
  // Pops the condition of br_if / if, fusing a just-emitted i32 comparison into it.
  Cond pop_cond();
  // Emits a conditional branch taken when cond (xor negate) holds; returns the branch's first word.
  // Metered code has one more word, the fuel of the segment that falls through (charged by the
  // branch when not taken, which saves a Fuel dispatch on that path).
  u32 emit_cond_branch(const Cond& c, bool when_true) {
    if (c.kind == Cond::Slot)
      return emit_as<layout::CondJump>(when_true ? Op::BrIf : Op::BrUnless, {.cond = c.a, .off = 0});
    const BranchWhen when = when_true ? BranchWhen::True : BranchWhen::False;
    if (c.kind == Cond::CmpImm)
      return emit_as<layout::CmpImmBranch>(fused_branch(c.cmp, SecondOperand::Imm, when),
                                           {.a = c.a, .imm = c.b, .off = 0});
    return emit_as<layout::CmpBranch>(fused_branch(c.cmp, SecondOperand::Slot, when), {.a = c.a, .b = c.b, .off = 0});
  }
  static_assert(u32{layout::CmpBranch::off} == u32{layout::CmpImmBranch::off} &&
                u32{layout::CmpBranch::fall} == u32{layout::CmpImmBranch::fall});
  u32 cond_offset_word(const Cond& c, u32 at) const {
    return at + (c.kind == Cond::Slot ? u32{layout::CondJump::off} : u32{layout::CmpBranch::off});
  }
  // Starts the fall-through segment of a conditional branch, charged by the branch itself.
  void begin_fallthrough_segment(const Cond& c, u32 at) {
    end_segment();
    if (metered_) fuel_pos_ = at + (c.kind == Cond::Slot ? u32{layout::CondJump::fall} : u32{layout::CmpBranch::fall});
  }

  // ---------------------------------------------------------------- helpers per instruction
  struct BlockSig {
    std::span<const ValType> params;
    std::span<const ValType> results;
  };
  BlockSig block_sig(const BlockType& bt) const;

  void enter_block(Ctrl::Kind kind, const BlockSig& sig) {
    Ctrl c;
    c.kind = kind;
    c.params = static_cast<u32>(sig.params.size());
    c.results = static_cast<u32>(sig.results.size());
    c.param_types = sig.params;
    c.result_types = sig.results;
    c.base = height() - c.params;
    c.base_at = at_of(c.base);
    ctrl_.push_back(std::move(c));
  }
  void reset_stack(u32 base, std::span<const ValType> types) {
    vs_.resize(base);
    push_temps(types);
  }
  void set_unreachable() {
    ctrl_.back().unreachable = true;
    vs_.resize(ctrl_.back().base);
  }

  void simple(Opcode opc);

  // i32.add / i32.sub with a constant stays lazy as AddImm (folded into a later memory access);
  // an add of an AddImm and a value reassociates, (x + c) + y = (x + y) + c mod 2^32.
  bool lazy_add(Opcode opc, u32 ka, u32 kb);

  // ---------------------------------------------------------------- multi-memory, memory64
  // A memarg's memory and offset (below 2^32 for an i32 memory, as validated).
  struct MemArg {
    u32 mem = 0;
    u64 offset = 0;
  };
  static MemArg memarg(const Instruction& ins) { return {ins.memory, ins.mem_offset}; }
  // Memory 0 with i32 addresses: the ordinary ops, registers holding its base and size.
  bool fast_memory(u32 mem) const { return mem == 0 && !m_.memories[0].limits.is64; }
  // Any other access: MemAt checks it against its memory and re-points the registers at the
  // accessed bytes, writing address 0 to the address's temp slot, which it returns; the ordinary
  // Plain op reads it at offset 0, then MemRestore (end_access) points them back at memory 0.
  u32 mem_at(u32 k, const MemArg& a, u32 width) {
    const u32 addr = slot(k);
    const u32 t = temp_slot(k);
    emit<Op::MemAt>({.dst = t, .addr = addr, .mem = a.mem, .offset = a.offset, .width = width});
    trapping();
    return t;
  }
  struct Access {
    u32 addr;
    u32 offset;
    bool rebased;
  };
  Access access(u32 k, const MemArg& a, u32 width) {
    if (fast_memory(a.mem)) return {slot(k), static_cast<u32>(a.offset), false};
    return {mem_at(k, a, width), 0, true};
  }
  void end_access(const Access& x) {
    if (x.rebased) emit<Op::MemRestore>({});
  }
  static u32 access_width(Opcode opc) { return u32{1} << natural_alignment_log2(info(opc).imm).value_or(0); }

  // A load (o: its Plain-mode op) whose address is a folded add, a constant, or a slot.
  void load(Op o, const Instruction& ins, Opcode opc);
  void rebased_load(Op o, const MemArg& ma, u32 width) {
    const u32 t = mem_at(height() - 1, ma, width);
    pop();
    const u32 at = emit_as<layout::Load>(o, {.dst = t, .addr = t, .offset = 0});
    trapping();
    end_access({t, 0, true});
    push_temp();
    mark_producer(at + layout::Load::dst);
  }
  void store(Op o, const Instruction& ins, Opcode opc);
  // Operands of an n-ary instruction (deepest first) as slots, popped.
  template <std::size_t N>
  std::array<u32, N> operands() {
    std::array<u32, N> s{};
    for (std::size_t i = 0; i < N; ++i) s[i] = slot(height() - static_cast<u32>(N) + static_cast<u32>(i));
    pop(static_cast<u32>(N));
    return s;
  }

  // A callee's frame starts at slot `base` (its arguments, then its results there on return).
  void push_call_results(u32 base, const FuncType& ft) {
    push_temps(ft.results);
    max_slots_ = std::max(max_slots_, base - locals_ + std::max(value_slots(ft.params), value_slots(ft.results)));
  }
  void do_call(u32 n_params) {
    for (u32 k = height() - n_params; k < height(); ++k)
      if (vs_[k].kind != Operand::Temp) materialize(k);
    pop(n_params);
  }

  // ---------------------------------------------------------------- the main step
  void step(const Instruction& ins);

  // ---------------------------------------------------------------- control: blocks, branches, return
  void step_control(Opcode opc, const Instruction& ins);

  // ---------------------------------------------------------------- exception handling
  // throw / throw_ref are instructions (Throw [tag base], ThrowRef [exn]); catching is not: each
  // try_table and legacy try body is a handler region of the code (CompiledFunc::regions) whose
  // clauses name where a caught exception continues and which slots take its values. A
  // try_table's clauses land on small pads placed before its body (behind a jump): the values
  // arrive at the try_table's base height, and the pad branches to the clause's label as `br`
  // would. A legacy catch arm is the landing code itself, its values above a hidden slot that
  // keeps the exnref for `rethrow`.
  struct Region {
    HandlerRegion r;
    std::vector<CatchClause> clauses;
    u32 ctrl = 0;          // index in ctrl_ of the block that opened it
    u32 close_seq = kNone;
  };
  std::vector<Region> regions_;  // by id (opening order)
  std::vector<u32> open_regions_;  // ids, innermost last
  u32 close_seq_ = 0;

  u32 open_region(std::vector<CatchClause> clauses);
  void close_region(Ctrl& c);
  // The regions in closing order (an inner one before the one around it), clauses flattened.
  void finish_regions();
  // At a block's end: its region closes; a legacy catch arm's values go to the block's result
  // slots (below them sits the hidden exnref), and the arm falls into the join.
  void end_handlers(Ctrl& c);
  // Where the tag's values take slots: their types.
  std::span<const ValType> tag_params(u32 tagidx) const { return m_.types[m_.tags[tagidx]].params; }

  void step_exceptions(Opcode opc, const Instruction& ins);

  void try_table(const Instruction& ins);

  // ---------------------------------------------------------------- typed function references
  // call_ref / return_call_ref as call_indirect's (the reference in a slot instead of an index),
  // ref.as_non_null a trapping copy, br_on_null / br_on_non_null as br_if on the reference's
  // null-ness (64-bit tests: a reference is null when its slot is 0).
  void step_typed_refs(Opcode opc, const Instruction& ins);
  // A tail call's arguments, placed as a call's; returns the callee frame's base.
  u32 tail_call_args(const FuncType& ft);
  // After a tail call: nothing follows it in its segment or block.
  void end_tail_call();
  // A branch to label `depth` when `taken` holds of slot `ref` (`skip` is its negation), as br_if:
  // straight there when the label's values are in place, else over a trampoline that copies them.
  void ref_branch(u32 depth, u32 ref, Op taken, Op skip);

  // ---------------------------------------------------------------- calls
  void step_call(Opcode opc, const Instruction& ins);

  // ---------------------------------------------------------------- parametric and variable instructions: drop, select, locals, globals
  void step_variable(Opcode opc, const Instruction& ins);

  // ---------------------------------------------------------------- memory: loads, stores, memory.*
  void step_memory(Opcode opc, const Instruction& ins);

  // memory.size/grow/fill/copy/init naming a memory other than an i32 memory 0 (the MultiMemory
  // ops); false (nothing read) for the others.
  bool step_memory_indexed(Opcode opc, const Instruction& ins);

  // ---------------------------------------------------------------- tables and references
  void step_table(Opcode opc, const Instruction& ins);

  // ---------------------------------------------------------------- garbage collection
  // Objects are made and read by the Gc family's handlers (gc_heap.hpp); the translator works
  // out field offsets and storage sizes, and passes heap types as (heap, flags) words.
  static u32 storage_size(const FieldType& f) { return element_bytes(f); }
  // A field or element read as a value: v128 takes two slots.
  static bool wide(const FieldType& f) { return f.packed == FieldType::Packed::None && f.type == ValType::V128; }
  u32 heap_flags(ValType t) const { return (t.nullable() ? 1u : 0u) | (u32{heap_top(t.heap(), m_.types)} << 8); }
  void unary_gc(Op o, bool traps);
  // Values taken from the stack as a call's arguments would be (the top n entries, from `base`).
  u32 values_base(u32 n);
  void cast_branch(u32 depth, Op taken, Op skip, ValType target);

  void step_gc(Opcode opc, const Instruction& ins);

  // ---------------------------------------------------------------- fixed-width SIMD
  // One internal op per instruction (simd_op), laid out by its shape (simd_shape.hpp); v128
  // operands and results take two slots. Addresses are plain slots (no folded add or constant
  // address modes for these).
  void step_simd(Opcode opc, const Instruction& ins);

  // ---------------------------------------------------------------- numeric: constants and operators
  void step_numeric(Opcode opc, const Instruction& ins);
  // After a float operation that may make a non-canonical NaN (its result on top): the result
  // canonicalized in place, the canonicalization the producer a local.set retargets.
  void canonicalize_nan(Opcode opc);
};

}  // namespace sprawling::wasm::translation
