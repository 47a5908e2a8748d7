// Translation of one validated function body into internal code (code.hpp): operand-stack
// positions become frame slots, local.get/constants stay lazy until consumed, results land in
// their destination slot, branches are resolved to relative offsets, fuel is charged per block.
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

namespace sprawling::wasm {
namespace {

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

// Reads immediates of a validated body: no error checks (validation proved them well-formed).
struct Reader {
  const std::uint8_t* p;
  const std::uint8_t* base;
  u32 offset() const { return static_cast<u32>(p - base); }
  std::uint8_t u8() { return *p++; }
  u32 u32leb() { return static_cast<u32>(u64leb()); }
  // Unsigned arithmetic throughout: a 9- or 10-byte LEB shifts into (and past) the sign bit.
  std::int64_t sleb() {
    u64 r = 0;
    int shift = 0;
    std::uint8_t b;
    do {
      b = *p++;
      if (shift < 64) r |= static_cast<u64>(b & 0x7F) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) r |= ~u64{0} << shift;
    return static_cast<std::int64_t>(r);
  }
  u64 u64leb() {
    u64 r = 0;
    int shift = 0;
    std::uint8_t b;
    do {
      b = *p++;
      if (shift < 64) r |= static_cast<u64>(b & 0x7F) << shift;
      shift += 7;
    } while (b & 0x80);
    return r;
  }
  u64 fixed(int n) {
    u64 v = 0;
    std::memcpy(&v, p, static_cast<std::size_t>(n));
    p += n;
    return v;
  }
};

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
std::span<const ValType> single_type(std::uint8_t byte) {
  for (const ValType& t : kValTypes)
    if (t == ValType::from_byte(byte)) return {&t, 1};
  return {};
}
// A value type's bytes: one, or (typed function references) 0x63/0x64 and a heap type's s33.
bool is_long_reftype_byte(std::uint8_t b) { return b == ValType::kRefNullByte || b == ValType::kRefByte; }

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
enum class Family : std::uint8_t { Control, Call, Variable, Memory, Table, Numeric, Simd, Exception, TypedRef, Gc };
constexpr Family family_of(Opcode op) {
  if (is_simd(op)) return Family::Simd;
  if (is_gc_op(op)) return Family::Gc;
  if (is_exception_op(op)) return Family::Exception;
  if (is_typed_ref_op(op)) return Family::TypedRef;
  switch (op) {
    case Opcode::Unreachable: case Opcode::Nop: case Opcode::Block: case Opcode::Loop: case Opcode::If:
    case Opcode::Else: case Opcode::End: case Opcode::Br: case Opcode::BrIf: case Opcode::BrTable: case Opcode::Return:
      return Family::Control;
    case Opcode::Call: case Opcode::CallIndirect: case Opcode::ReturnCall: case Opcode::ReturnCallIndirect:
      return Family::Call;
    case Opcode::Drop: case Opcode::Select: case Opcode::SelectT: case Opcode::LocalGet: case Opcode::LocalSet:
    case Opcode::LocalTee: case Opcode::GlobalGet: case Opcode::GlobalSet:
      return Family::Variable;
    case Opcode::MemorySize: case Opcode::MemoryGrow: case Opcode::MemoryInit: case Opcode::DataDrop:
    case Opcode::MemoryCopy: case Opcode::MemoryFill:
      return Family::Memory;
    case Opcode::TableGet: case Opcode::TableSet: case Opcode::TableInit: case Opcode::ElemDrop: case Opcode::TableCopy:
    case Opcode::TableGrow: case Opcode::TableSize: case Opcode::TableFill: case Opcode::RefNull: case Opcode::RefIsNull:
    case Opcode::RefFunc:
      return Family::Table;
    default: return access_op(op) != Op::Count_ ? Family::Memory : Family::Numeric;
  }
}
constexpr auto kFamilies = [] {
  std::array<Family, kOpcodeSpace> t{};
  for (std::size_t i = 0; i < kOpcodeSpace; ++i) t[i] = family_of(static_cast<Opcode>(i));
  return t;
}();

class Translator {
 public:
  Translator(const Module& m, std::span<const u32> canon, u32 defined_index, bool metered)
      : m_(m), canon_(canon), body_(m.code[defined_index]), type_(m.types[body_.type_index]), metered_(metered),
        handlers_(handler_offsets(metered)) {
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
    Reader r{m_.bytes.data() + body_.code_offset, m_.bytes.data()};
    const std::uint8_t* end = r.p + body_.code_size;
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
    while (r.p < end && !ctrl_.empty()) step(r);
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
  void emit_return() {
    const auto n = static_cast<u32>(type_.results.size());
    // A single result computed by the instruction just emitted is written straight to slot 0.
    if (n == 1 && vs_.back().kind == Operand::Temp && peep_.producer_end == pos() &&
        out_.code[peep_.producer_dst_word] == temp_slot(height() - 1)) {
      out_.code[peep_.producer_dst_word] = 0;
      emit<Op::Return>({});
      return;
    }
    bool clobber = false;
    u32 dst = 0;
    for (u32 i = 0; i < n; ++i) {
      const Operand& o = vs_[height() - n + i];
      if ((o.kind == Operand::Local || o.kind == Operand::AddImm) && o.local < dst) clobber = true;
      dst += value_slots(type_.results[i]);
    }
    if (clobber) {
      // Through the (otherwise unused) temp slots, leaving the operand model untouched: this
      // may be a branch trampoline that only one path runs.
      for (u32 i = 0; i < n; ++i) move_to(temp_slot(height() - n + i), height() - n + i);
      dst = 0;
      for (u32 i = 0; i < n; ++i) {
        const Operand& o = vs_[height() - n + i];
        const u32 src = temp_slot(height() - n + i);
        if (src != dst) emit_copy(dst, src, o.wide);
        dst += value_slots(type_.results[i]);
      }
    } else {
      dst = 0;
      for (u32 i = 0; i < n; ++i) {
        move_to(dst, height() - n + i);
        dst += value_slots(type_.results[i]);
      }
    }
    emit<Op::Return>({});
  }
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
  Cond pop_cond() {
    const u32 k = height() - 1;
    if (vs_[k].kind == Operand::Temp && peep_.cmp_end == pos()) {
      Cond c = peep_.cmp;
      out_.code.resize(peep_.cmp_start);
      if (!out_.trap_sites.empty() && out_.trap_sites.back().first >= peep_.cmp_start) out_.trap_sites.pop_back();
      peep_.clear();
      pop();
      if (peep_.cmp_is_eqz) c.kind = Cond::Slot;  // handled by the caller through the negation flag
      return c;
    }
    Cond c;
    c.kind = Cond::Slot;
    c.a = slot(k);
    pop();
    peep_.cmp_is_eqz = false;
    return c;
  }
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
  BlockSig block_type(Reader& r) {
    const std::uint8_t b = *r.p;
    if (b == 0x40) {
      ++r.p;
      return {};
    }
    if (is_valtype_byte(b)) {
      ++r.p;
      return {{}, single_type(b)};
    }
    if ((b & 0xC0) == 0x40) {
      // Any other reference type (validated): one slot, as funcref's.
      skip_valtype(r);
      return {{}, single_type(ValType::kFunc)};
    }
    const auto idx = static_cast<u32>(r.sleb());
    return {m_.types[idx].params, m_.types[idx].results};
  }
  static void skip_valtype(Reader& r) {
    if (is_long_reftype_byte(r.u8())) r.sleb();
  }
  void skip_imm(Reader& r, ImmKind k) {
    switch (k) {
      case ImmKind::None: break;
      case ImmKind::BlockType: block_type(r); break;
      case ImmKind::TryTable: {
        block_type(r);
        const u32 n = r.u32leb();
        for (u32 i = 0; i < n; ++i) {
          if (r.u8() <= kCatchRef) r.u32leb();  // the tag
          r.u32leb();                           // the label
        }
        break;
      }
      case ImmKind::BrTable: {
        const u32 n = r.u32leb();
        for (u32 i = 0; i <= n; ++i) r.u32leb();
        break;
      }
      case ImmKind::CallIndirect: case ImmKind::MemoryInit: case ImmKind::TableInit: case ImmKind::TableCopy:
      case ImmKind::StructField: case ImmKind::ArrayFixed: case ImmKind::ArrayData: case ImmKind::ArrayElem:
      case ImmKind::ArrayCopy:
        r.u32leb();
        r.u32leb();
        break;
      case ImmKind::HeapType: r.sleb(); break;
      case ImmKind::BrOnCast:
        r.u8();
        r.u32leb();
        r.sleb();
        r.sleb();
        break;
      case ImmKind::MemoryCopy: r.u32leb(); r.u32leb(); break;  // memidx LEBs (2.0: zero bytes)
      case ImmKind::MemIdx: r.u32leb(); break;
      case ImmKind::RefType: r.sleb(); break;  // a heap type
      case ImmKind::I32: case ImmKind::I64: r.sleb(); break;
      case ImmKind::F32: r.p += 4; break;
      case ImmKind::F64: r.p += 8; break;
      case ImmKind::SelectT: {
        const u32 n = r.u32leb();
        for (u32 i = 0; i < n; ++i) skip_valtype(r);
        break;
      }
      case ImmKind::MemArg8: case ImmKind::MemArg16: case ImmKind::MemArg32: case ImmKind::MemArg64:
      case ImmKind::MemArg128: memarg(r); break;
      case ImmKind::MemArgLane8: case ImmKind::MemArgLane16: case ImmKind::MemArgLane32: case ImmKind::MemArgLane64:
        memarg(r);
        r.u8();
        break;
      case ImmKind::V128: case ImmKind::Shuffle: r.p += 16; break;
      case ImmKind::Lane16: case ImmKind::Lane8: case ImmKind::Lane4: case ImmKind::Lane2: r.u8(); break;
      default:  // single LEB index
        r.u32leb();
        break;
    }
  }

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

  void simple(Opcode opc) {
    const SimpleInfo& info = kSimple[static_cast<std::size_t>(opc)];
    assert(info.form != Form::None);
    if (opc == Opcode::I32ReinterpretF32 || opc == Opcode::I64ReinterpretF64 || opc == Opcode::F32ReinterpretI32 ||
        opc == Opcode::F64ReinterpretI64 || opc == Opcode::I64ExtendI32U) {
      return;  // same bits in a slot (i32 slots are zero-extended)
    }
    if (info.form == Form::Un) {
      const u32 k = height() - 1;
      const u32 a = slot(k);
      pop();
      const u32 at = emit_as<layout::Unary>(info.op, {.dst = temp_slot(k), .a = a});
      push_temp();
      if (can_trap(opc)) trapping();
      mark_producer(at + layout::Unary::dst);
      if (opc == Opcode::I32Eqz) {
        peep_.cmp_end = pos();
        peep_.cmp_start = at;
        peep_.cmp_is_eqz = true;
        peep_.cmp = Cond{Cond::Slot, a, 0, Opcode::I32Eq};
      }
      return;
    }
    const u32 kb = height() - 1;
    const u32 ka = kb - 1;
    if ((opc == Opcode::I32Add || opc == Opcode::I32Sub) && lazy_add(opc, ka, kb)) return;
    bool use_imm = false;
    u32 a_slot = 0;
    u32 imm = 0;
    if (info.form == Form::BinImm) {
      const bool i64 = sig_types(wasm::info(opc).sig).params[0] == ValType::I64;
      auto fits = [&](const Operand& o) {
        return o.kind == Operand::Const &&
               (!i64 || static_cast<std::int64_t>(o.value) == static_cast<std::int32_t>(o.value));
      };
      if (fits(vs_[kb])) {
        use_imm = true;
        imm = static_cast<u32>(vs_[kb].value);
        a_slot = slot(ka);
      } else if (commutative(opc) && fits(vs_[ka]) && vs_[kb].kind != Operand::Const) {
        use_imm = true;
        imm = static_cast<u32>(vs_[ka].value);
        a_slot = slot(kb);
      }
    }
    if (info.form == Form::BinFImm) {
      // A constant operand rides in the instruction (f64: two words).
      const bool swap = vs_[ka].kind == Operand::Const && vs_[kb].kind != Operand::Const && commutative(opc);
      if (vs_[kb].kind == Operand::Const || swap) {
        const u64 bits = swap ? vs_[ka].value : vs_[kb].value;
        const u32 a = slot(swap ? kb : ka);
        pop(2);
        const u32 at = wasm::info(info.imm).layout == Layout::BinaryF64Imm
                           ? emit_as<layout::BinaryF64Imm>(info.imm, {.dst = temp_slot(ka), .a = a, .value = bits})
                           : emit_as<layout::BinaryF32Imm>(info.imm, {.dst = temp_slot(ka), .a = a,
                                                                      .value = static_cast<u32>(bits)});
        static_assert(u32{layout::BinaryF64Imm::dst} == u32{layout::BinaryF32Imm::dst});
        push_temp();
        mark_producer(at + layout::BinaryF32Imm::dst);
        return;
      }
    }
    u32 at;
    u32 b_slot = 0;
    if (use_imm) {
      at = emit_as<layout::BinaryImm>(info.imm, {.dst = temp_slot(ka), .a = a_slot, .imm = imm});
    } else {
      a_slot = slot(ka);
      b_slot = slot(kb);
      at = emit_as<layout::Binary>(info.op, {.dst = temp_slot(ka), .a = a_slot, .b = b_slot});
    }
    static_assert(u32{layout::BinaryImm::dst} == u32{layout::Binary::dst});
    pop(2);
    push_temp();
    if (can_trap(opc)) trapping();
    mark_producer(at + layout::Binary::dst);
    if (fused_branch(opc, SecondOperand::Slot, BranchWhen::True) != Op::Count_) {
      peep_.cmp_end = pos();
      peep_.cmp_start = at;
      peep_.cmp_is_eqz = false;
      peep_.cmp = Cond{use_imm ? Cond::CmpImm : Cond::Cmp, a_slot, use_imm ? imm : b_slot, opc};
    }
  }

  // i32.add / i32.sub with a constant stays lazy as AddImm (folded into a later memory access);
  // an add of an AddImm and a value reassociates, (x + c) + y = (x + y) + c mod 2^32.
  bool lazy_add(Opcode opc, u32 ka, u32 kb) {
    const Operand a = vs_[ka];
    const Operand b = vs_[kb];
    Operand r;
    r.kind = Operand::AddImm;
    if (b.kind == Operand::Const && a.kind != Operand::Const) {
      const u32 c = opc == Opcode::I32Sub ? 0u - static_cast<u32>(b.value) : static_cast<u32>(b.value);
      if (a.kind == Operand::AddImm) {
        r.local = a.local;
        r.value = static_cast<u32>(a.value + c);
      } else {
        r.local = a.kind == Operand::Local ? a.local : temp_slot(ka);
        r.value = c;
      }
    } else if (opc == Opcode::I32Add && a.kind == Operand::Const && b.kind == Operand::Local) {
      r.local = b.local;
      r.value = static_cast<u32>(a.value);
    } else if (opc == Opcode::I32Add && a.kind == Operand::AddImm && b.kind != Operand::Const) {
      const u32 y = slot(kb);
      emit<Op::NumI32Add>({.dst = temp_slot(ka), .a = a.local, .b = y});
      r.local = temp_slot(ka);
      r.value = a.value;
    } else if (opc == Opcode::I32Add && b.kind == Operand::AddImm && a.kind != Operand::Const) {
      const u32 x = slot(ka);
      emit<Op::NumI32Add>({.dst = temp_slot(ka), .a = x, .b = b.local});
      r.local = temp_slot(ka);
      r.value = b.value;
    } else {
      return false;
    }
    pop(2);
    push(r);
    return true;
  }

  // ---------------------------------------------------------------- multi-memory, memory64
  // A memarg: alignment flags (bit 6: a memidx follows), then the offset (u64 LEB; below 2^32 for
  // an i32 memory, as validated).
  struct MemArg {
    u32 mem = 0;
    u64 offset = 0;
  };
  static MemArg memarg(Reader& r) {
    MemArg a;
    if ((r.u32leb() & 0x40) != 0) a.mem = r.u32leb();
    a.offset = r.u64leb();
    return a;
  }
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
  void load(Op o, Reader& r, Opcode opc) {
    const MemArg ma = memarg(r);
    if (!fast_memory(ma.mem)) return rebased_load(o, ma, access_width(opc));
    const auto offset = static_cast<u32>(ma.offset);
    const u32 k = height() - 1;
    const Operand a = vs_[k];
    u32 at;
    if (a.kind == Operand::AddImm) {
      pop();
      at = emit_as<layout::LoadAdd>(mem_variant(o, MemMode::Add),
                                    {.dst = temp_slot(k), .base = a.local, .imm = static_cast<u32>(a.value), .offset = offset});
    } else if (a.kind == Operand::Const) {
      pop();
      at = emit_as<layout::LoadAbs>(mem_variant(o, MemMode::Abs),
                                    {.dst = temp_slot(k), .addr = static_cast<u32>(a.value), .offset = offset});
    } else {
      const u32 addr = slot(k);
      pop();
      at = emit_as<layout::Load>(o, {.dst = temp_slot(k), .addr = addr, .offset = offset});
    }
    static_assert(u32{layout::Load::dst} == u32{layout::LoadAdd::dst} && u32{layout::Load::dst} == u32{layout::LoadAbs::dst});
    trapping();
    push_temp();
    mark_producer(at + layout::Load::dst);
  }
  void rebased_load(Op o, const MemArg& ma, u32 width) {
    const u32 t = mem_at(height() - 1, ma, width);
    pop();
    const u32 at = emit_as<layout::Load>(o, {.dst = t, .addr = t, .offset = 0});
    trapping();
    end_access({t, 0, true});
    push_temp();
    mark_producer(at + layout::Load::dst);
  }
  void store(Op o, Reader& r, Opcode opc) {
    const MemArg ma = memarg(r);
    if (!fast_memory(ma.mem)) {
      const u32 val = slot(height() - 1);
      const u32 t = mem_at(height() - 2, ma, access_width(opc));
      pop(2);
      emit_as<layout::Store>(o, {.addr = t, .val = val, .offset = 0});
      trapping();
      end_access({t, 0, true});
      return;
    }
    const auto offset = static_cast<u32>(ma.offset);
    const u32 kv = height() - 1;
    const u32 val = slot(kv);
    const Operand a = vs_[kv - 1];
    if (a.kind == Operand::AddImm) {
      pop(2);
      emit_as<layout::StoreAdd>(mem_variant(o, MemMode::Add),
                                {.base = a.local, .imm = static_cast<u32>(a.value), .val = val, .offset = offset});
    } else if (a.kind == Operand::Const) {
      pop(2);
      emit_as<layout::StoreAbs>(mem_variant(o, MemMode::Abs), {.addr = static_cast<u32>(a.value), .val = val, .offset = offset});
    } else {
      const u32 addr = slot(kv - 1);
      pop(2);
      emit_as<layout::Store>(o, {.addr = addr, .val = val, .offset = offset});
    }
    trapping();
  }
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
  void step(Reader& r) {
    cur_offset_ = r.offset();
    const std::uint8_t b0 = r.u8();
    Opcode opc;
    if (b0 == kPrefixFC) {
      opc = static_cast<Opcode>(0x100 + r.u32leb());
    } else if (b0 == kPrefixGc) {
      opc = static_cast<Opcode>(kGcBase + r.u32leb());
    } else if (b0 == kPrefixSimd) {
      opc = static_cast<Opcode>(kSimdBase + r.u32leb());
    } else {
      opc = static_cast<Opcode>(b0);
    }
    Ctrl& cur = ctrl_.back();
    if (cur.unreachable) {
      if (opc == Opcode::Block || opc == Opcode::Loop || opc == Opcode::If || opc == Opcode::Try ||
          opc == Opcode::TryTable) {
        ++dead_depth_;
        skip_imm(r, info(opc).imm);
        return;
      }
      if ((opc == Opcode::End || opc == Opcode::Delegate) && dead_depth_ > 0) {
        --dead_depth_;
        skip_imm(r, info(opc).imm);
        return;
      }
      if ((opc == Opcode::Else || opc == Opcode::Catch || opc == Opcode::CatchAll) && dead_depth_ > 0) {
        skip_imm(r, info(opc).imm);
        return;
      }
      if (opc != Opcode::End && opc != Opcode::Else && opc != Opcode::Catch && opc != Opcode::CatchAll &&
          opc != Opcode::Delegate) {
        skip_imm(r, info(opc).imm);
        return;
      }
    }
    if (metered_) seg_cost_ += fuel_cost(opc);
    switch (kFamilies[static_cast<std::size_t>(opc)]) {
      case Family::Control: step_control(opc, r); break;
      case Family::Call: step_call(opc, r); break;
      case Family::Variable: step_variable(opc, r); break;
      case Family::Memory: step_memory(opc, r); break;
      case Family::Table: step_table(opc, r); break;
      case Family::Numeric: step_numeric(opc, r); break;
      case Family::Simd: step_simd(opc, r); break;
      case Family::Exception: step_exceptions(opc, r); break;
      case Family::TypedRef: step_typed_refs(opc, r); break;
      case Family::Gc: step_gc(opc, r); break;
    }
  }

  // ---------------------------------------------------------------- control: blocks, branches, return
  void step_control(Opcode opc, Reader& r) {
    switch (opc) {
      case Opcode::Unreachable:
        emit<Op::Unreachable>({});
        trapping();
        set_unreachable();
        break;
      case Opcode::Nop: break;
      case Opcode::Block: {
        const BlockSig sig = block_type(r);
        materialize_all();
        enter_block(Ctrl::Block, sig);
        break;
      }
      case Opcode::Loop: {
        const BlockSig sig = block_type(r);
        materialize_all();
        enter_block(Ctrl::Loop, sig);
        begin_segment();
        invalidate_peepholes();
        ctrl_.back().loop_start = pos();
        if (metered_) {
          fuel_pos_ = emit<Op::FuelCheck>({.cost = 0, .visible = 0}) + layout::FuelCheck::cost;
          trapping();
        }
        break;
      }
      case Opcode::If: {
        const BlockSig sig = block_type(r);
        const bool eqz = eqz_pending();
        Cond c = pop_cond();
        materialize_all();
        enter_block(Ctrl::If, sig);
        // Into the else arm when the condition is false.
        const u32 at = emit_cond_branch(c, eqz);
        ctrl_.back().else_fixup = Fixup{at, cond_offset_word(c, at)};
        begin_fallthrough_segment(c, at);
        break;
      }
      case Opcode::Else: {
        Ctrl& c = ctrl_.back();
        if (!c.unreachable) {
          for (u32 i = 0; i < c.results; ++i)
            if (vs_[c.base + i].kind != Operand::Temp) materialize(c.base + i);
          const u32 at = emit<Op::Br>({.off = 0});
          c.fixups.push_back(Fixup{at, at + layout::Jump::off});
        }
        begin_segment();
        invalidate_peepholes();
        bind(c.else_fixup, pos());
        c.kind = Ctrl::Else;
        c.unreachable = false;
        reset_stack(c.base, c.param_types);
        break;
      }
      case Opcode::End: {
        Ctrl& c = ctrl_.back();
        end_handlers(c);
        if (c.kind == Ctrl::Func) {
          if (!c.unreachable) emit_return();
          end_segment();
          ctrl_.pop_back();
          break;
        }
        if (!c.unreachable)
          for (u32 i = 0; i < c.results; ++i)
            if (vs_[c.base + i].kind != Operand::Temp) materialize(c.base + i);
        const bool joined = !c.fixups.empty() || c.kind == Ctrl::If || c.unreachable;
        if (joined) {
          begin_segment();
          invalidate_peepholes();
          const u32 here = pos();
          for (const Fixup& f : c.fixups) bind(f, here);
          if (c.kind == Ctrl::If) bind(c.else_fixup, here);
        }
        const u32 base = c.base;
        const std::span<const ValType> results = c.result_types;
        ctrl_.pop_back();
        reset_stack(base, results);
        break;
      }
      case Opcode::Br: {
        const u32 depth = r.u32leb();
        emit_br(depth);
        set_unreachable();
        break;
      }
      case Opcode::BrIf: {
        const u32 depth = r.u32leb();
        const bool eqz = eqz_pending();
        Cond c = pop_cond();
        Ctrl& target = label(depth);
        if (!needs_copies(target)) {
          const u32 at = emit_cond_branch(c, !eqz);
          add_jump(target, at, cond_offset_word(c, at));
          begin_fallthrough_segment(c, at);
        } else {
          // The not-taken path is the trampoline (part of this segment): its fall-through word stays 0.
          const u32 at = emit_cond_branch(c, eqz);
          const Fixup skip{at, cond_offset_word(c, at)};
          emit_br(depth);
          bind(skip, pos());
          begin_segment();
        }
        invalidate_peepholes();
        break;
      }
      case Opcode::BrTable: {
        const u32 n = r.u32leb();
        std::vector<u32> depths(n + 1);
        for (u32 i = 0; i <= n; ++i) depths[i] = r.u32leb();
        const u32 idx = top_slot();
        pop();
        const u32 at = emit<Op::BrTable>({.idx = idx, .n = n});
        out_.code.resize(out_.code.size() + n + 1);  // the TARGETS entries
        // One trampoline per distinct target depth, found in O(1): a br_table of n targets into
        // d nested labels must translate in O(n + d), not O(n * d) (the resources axis: docs/hostile.md).
        std::unordered_map<u32, u32> trampolines;  // depth -> code position
        for (u32 i = 0; i <= n; ++i) {
          Ctrl& t = label(depths[i]);
          const u32 word = at + layout::JumpTable::targets + i;
          if (!needs_copies(t)) {
            add_jump(t, at, word);
            continue;
          }
          auto [it, fresh] = trampolines.try_emplace(depths[i], pos());
          if (fresh) emit_br(depths[i]);
          out_.code[word] = it->second - at;
        }
        set_unreachable();
        break;
      }
      case Opcode::Return:
        emit_return();
        set_unreachable();
        break;
      default: break;  // not of this family (kFamilies)
    }
  }

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

  u32 open_region(std::vector<CatchClause> clauses) {
    const auto id = static_cast<u32>(regions_.size());
    Region reg;
    reg.r.begin = pos();
    reg.r.id = id;
    reg.clauses = std::move(clauses);
    reg.ctrl = static_cast<u32>(ctrl_.size() - 1);
    regions_.push_back(std::move(reg));
    open_regions_.push_back(id);
    return id;
  }
  void close_region(Ctrl& c) {
    Region& reg = regions_[c.region];
    reg.r.end = pos();
    reg.close_seq = close_seq_++;
    assert(!open_regions_.empty() && open_regions_.back() == c.region);
    open_regions_.pop_back();
    c.region = kNone;
  }
  // The regions in closing order (an inner one before the one around it), clauses flattened.
  void finish_regions() {
    std::vector<const Region*> order;
    for (const Region& reg : regions_)
      if (reg.close_seq != kNone) order.push_back(&reg);
    std::ranges::sort(order, {}, [](const Region* reg) { return reg->close_seq; });
    for (const Region* reg : order) {
      HandlerRegion h = reg->r;
      h.first_clause = static_cast<u32>(out_.clauses.size());
      h.clause_count = static_cast<u32>(reg->clauses.size());
      out_.clauses.insert(out_.clauses.end(), reg->clauses.begin(), reg->clauses.end());
      out_.regions.push_back(h);
    }
  }
  // At a block's end: its region closes; a legacy catch arm's values go to the block's result
  // slots (below them sits the hidden exnref), and the arm falls into the join.
  void end_handlers(Ctrl& c) {
    if (c.region != kNone) close_region(c);
    if (c.kind == Ctrl::Try && c.in_catch && !c.unreachable) {
      emit_label_copies(c);
      c.unreachable = true;
    }
  }
  // Where the tag's values take slots: their types.
  std::span<const ValType> tag_params(u32 tagidx) const { return m_.types[m_.tags[tagidx]].params; }

  void step_exceptions(Opcode opc, Reader& r) {
    switch (opc) {
      case Opcode::Throw: {
        const u32 tag = r.u32leb();
        do_call(static_cast<u32>(tag_params(tag).size()));
        const u32 base = temp_slot(height());
        max_slots_ = std::max(max_slots_, next_at() + value_slots(tag_params(tag)));
        emit<Op::Throw>({.tag = tag, .base = base});
        trapping();
        end_segment();
        set_unreachable();
        break;
      }
      case Opcode::ThrowRef: {
        const u32 exn = top_slot();
        pop();
        emit<Op::ThrowRef>({.exn = exn});
        trapping();
        end_segment();
        set_unreachable();
        break;
      }
      case Opcode::TryTable: try_table(r); break;
      case Opcode::Try: {
        const BlockSig sig = block_type(r);
        materialize_all();
        enter_block(Ctrl::Try, sig);
        ctrl_.back().region = open_region({});
        ctrl_.back().try_region = ctrl_.back().region;
        break;
      }
      case Opcode::Catch:
      case Opcode::CatchAll: {
        const u32 tag = opc == Opcode::Catch ? r.u32leb() : CatchClause::kAnyTag;
        Ctrl& c = ctrl_.back();
        const u32 id = c.try_region;
        if (c.region != kNone) close_region(c);
        if (!c.unreachable) {
          emit_label_copies(c);
          const u32 at = emit<Op::Br>({.off = 0});
          c.fixups.push_back(Fixup{at, at + layout::Jump::off});
        }
        begin_segment();
        invalidate_peepholes();
        c.unreachable = false;
        c.in_catch = true;
        vs_.resize(c.base);
        push_temp();  // the hidden exnref
        c.exn_slot = temp_slot(c.base);
        CatchClause cl;
        cl.tag = tag;
        cl.target = pos();
        cl.exn = c.exn_slot;
        if (tag != CatchClause::kAnyTag && !tag_params(tag).empty()) {
          cl.values = temp_slot(height());
          push_temps(tag_params(tag));
        }
        regions_[id].clauses.push_back(cl);
        break;
      }
      case Opcode::Delegate: {
        const u32 depth = r.u32leb();
        Ctrl& c = ctrl_.back();
        // The exception goes to the handlers around the label's block: the innermost region
        // still open that a block at or outside that label opened (depth 0: the block around this
        // try), else to the caller.
        const auto target_ctrl = static_cast<std::int64_t>(ctrl_.size()) - 2 - depth;
        u32 to = HandlerRegion::kToCaller;
        for (std::size_t i = open_regions_.size(); i-- > 0;) {
          const u32 id = open_regions_[i];
          if (id == c.region) continue;
          if (static_cast<std::int64_t>(regions_[id].ctrl) <= target_ctrl) {
            to = id;
            break;
          }
        }
        regions_[c.region].r.delegate_to = to;
        step_control(Opcode::End, r);  // closes the region and the block
        break;
      }
      case Opcode::Rethrow: {
        const u32 depth = r.u32leb();
        emit<Op::ThrowRef>({.exn = label(depth).exn_slot});
        trapping();
        end_segment();
        set_unreachable();
        break;
      }
      default: break;  // not of this family (kFamilies)
    }
  }

  void try_table(Reader& r) {
    const BlockSig sig = block_type(r);
    struct Clause {
      u32 kind;
      u32 tag;
      u32 depth;
    };
    std::vector<Clause> cs(r.u32leb());
    for (Clause& c : cs) {
      c.kind = r.u8();
      c.tag = c.kind <= kCatchRef ? r.u32leb() : CatchClause::kAnyTag;
      c.depth = r.u32leb();
    }
    materialize_all();
    const u32 base = height() - static_cast<u32>(sig.params.size());
    std::vector<CatchClause> clauses;
    if (!cs.empty()) {
      // The pads, behind a jump: each places nothing (the unwinder wrote the values at the base
      // height) and branches to its label as `br` does.
      const u32 over = emit<Op::Br>({.off = 0});
      end_segment();
      const std::vector<Operand> saved = vs_;
      for (const Clause& c : cs) {
        vs_.assign(saved.begin(), saved.begin() + base);
        invalidate_peepholes();
        CatchClause cl;
        cl.tag = c.tag;
        cl.target = pos();
        if (c.tag != CatchClause::kAnyTag && !tag_params(c.tag).empty()) {
          cl.values = temp_slot(height());
          push_temps(tag_params(c.tag));
        }
        if (c.kind == kCatchRef || c.kind == kCatchAllRef) {
          cl.exn = temp_slot(height());
          push_temp();
        }
        emit_br(c.depth);
        end_segment();
        clauses.push_back(cl);
      }
      vs_ = saved;
      invalidate_peepholes();
      bind(Fixup{over, over + layout::Jump::off}, pos());
    }
    enter_block(Ctrl::Block, sig);
    ctrl_.back().region = open_region(std::move(clauses));
  }

  // ---------------------------------------------------------------- typed function references
  // call_ref / return_call_ref as call_indirect's (the reference in a slot instead of an index),
  // ref.as_non_null a trapping copy, br_on_null / br_on_non_null as br_if on the reference's
  // null-ness (64-bit tests: a reference is null when its slot is 0).
  void step_typed_refs(Opcode opc, Reader& r) {
    switch (opc) {
      case Opcode::CallRef: {
        const FuncType& ft = m_.types[r.u32leb()];
        const u32 ref = top_slot();
        pop();
        do_call(static_cast<u32>(ft.params.size()));
        const u32 base = temp_slot(height());
        const u32 at = emit<Op::CallRef>({.ref = ref, .base = base, .post = 0});
        trapping();
        push_call_results(base, ft);
        begin_post_call_segment(at + layout::CallRef::post);
        break;
      }
      case Opcode::ReturnCallRef: {
        const FuncType& ft = m_.types[r.u32leb()];
        const u32 ref = top_slot();
        pop();
        emit<Op::ReturnCallRef>({.ref = ref, .base = tail_call_args(ft)});
        end_tail_call();
        break;
      }
      case Opcode::RefAsNonNull: {
        const u32 k = height() - 1;
        const u32 a = slot(k);
        pop();
        const u32 at = emit<Op::RefAsNonNull>({.dst = temp_slot(k), .a = a});
        trapping();
        push_temp();
        mark_producer(at + layout::Unary::dst);
        break;
      }
      case Opcode::BrOnNull: {
        // Taken: the label gets the values below the reference; not taken: the reference stays.
        const u32 depth = r.u32leb();
        const u32 ref = slot(height() - 1);
        const Operand kept = vs_.back();
        pop();
        ref_branch(depth, ref, Op::BrOnNull, Op::BrOnNonNull);
        push(kept);
        break;
      }
      case Opcode::BrOnNonNull: {
        // Taken: the label gets the values and the reference; not taken: the reference is dropped.
        const u32 depth = r.u32leb();
        const u32 ref = slot(height() - 1);
        ref_branch(depth, ref, Op::BrOnNonNull, Op::BrOnNull);
        pop();
        break;
      }
      default: break;  // not of this family (kFamilies)
    }
  }
  // A tail call's arguments, placed as a call's; returns the callee frame's base.
  u32 tail_call_args(const FuncType& ft) {
    do_call(static_cast<u32>(ft.params.size()));
    max_slots_ = std::max(max_slots_, next_at() + value_slots(ft.params));  // the arguments' slots
    return temp_slot(height());
  }
  // After a tail call: nothing follows it in its segment or block.
  void end_tail_call() {
    trapping();
    end_segment();
    set_unreachable();
  }
  // A branch to label `depth` when `taken` holds of slot `ref` (`skip` is its negation), as br_if:
  // straight there when the label's values are in place, else over a trampoline that copies them.
  void ref_branch(u32 depth, u32 ref, Op taken, Op skip) {
    Ctrl& target = label(depth);
    const Cond c{Cond::Slot, ref, 0, Opcode::I32Eq};
    if (!needs_copies(target)) {
      const u32 at = emit_as<layout::CondJump>(taken, {.cond = ref, .off = 0});
      add_jump(target, at, at + layout::CondJump::off);
      begin_fallthrough_segment(c, at);
    } else {
      // The not-taken path is the trampoline (part of this segment): its fall-through word stays 0.
      const u32 at = emit_as<layout::CondJump>(skip, {.cond = ref, .off = 0});
      const Fixup over{at, at + layout::CondJump::off};
      emit_br(depth);
      bind(over, pos());
      begin_segment();
    }
    invalidate_peepholes();
  }

  // ---------------------------------------------------------------- calls
  void step_call(Opcode opc, Reader& r) {
    switch (opc) {
      case Opcode::Call: {
        const u32 f = r.u32leb();
        const FuncType& ft = m_.func_type(f);
        const auto np = static_cast<u32>(ft.params.size());
        do_call(np);
        const u32 base = temp_slot(height());
        const u32 at = emit<Op::Call>({.func = f, .base = base, .post = 0});
        trapping();
        push_call_results(base, ft);
        begin_post_call_segment(at + layout::Call::post);
        break;
      }
      case Opcode::CallIndirect: {
        const u32 type = r.u32leb();
        const u32 table = r.u32leb();
        const FuncType& ft = m_.types[type];
        const auto np = static_cast<u32>(ft.params.size());
        const u32 idx = top_slot();
        pop();
        do_call(np);
        const u32 base = temp_slot(height());
        const u32 at =
            emit<Op::CallIndirect>({.type = canon_[type], .table = table, .base = base, .idx = idx, .post = 0});
        trapping();
        push_call_results(base, ft);
        begin_post_call_segment(at + layout::CallIndirect::post);
        break;
      }
      // Tail calls: the arguments go to the callee's frame base like a call's; the interpreter
      // moves them down to this frame's slot 0 and the callee replaces this function (no frame
      // record, no return here). The segment ends with the instruction: nothing follows it.
      case Opcode::ReturnCall: {
        const u32 f = r.u32leb();
        const FuncType& ft = m_.func_type(f);
        do_call(static_cast<u32>(ft.params.size()));
        max_slots_ = std::max(max_slots_, next_at() + value_slots(ft.params));  // the arguments' slots
        emit<Op::ReturnCall>({.func = f, .base = temp_slot(height())});
        trapping();
        end_segment();
        set_unreachable();
        break;
      }
      case Opcode::ReturnCallIndirect: {
        const u32 type = r.u32leb();
        const u32 table = r.u32leb();
        const FuncType& ft = m_.types[type];
        const u32 idx = top_slot();
        pop();
        do_call(static_cast<u32>(ft.params.size()));
        max_slots_ = std::max(max_slots_, next_at() + value_slots(ft.params));  // the arguments' slots
        emit<Op::ReturnCallIndirect>({.type = canon_[type], .table = table, .base = temp_slot(height()), .idx = idx});
        trapping();
        end_segment();
        set_unreachable();
        break;
      }
      default: break;  // not of this family (kFamilies)
    }
  }

  // ---------------------------------------------------------------- parametric and variable instructions: drop, select, locals, globals
  void step_variable(Opcode opc, Reader& r) {
    switch (opc) {
      case Opcode::Drop: pop(); break;
      case Opcode::Select:
      case Opcode::SelectT: {
        if (opc == Opcode::SelectT) skip_imm(r, ImmKind::SelectT);
        const bool wide = vs_[height() - 3].wide;
        const auto s = operands<3>();
        const u32 at = wide ? emit<Op::VSelect>({.dst = temp_slot(height()), .a = s[0], .b = s[1], .cond = s[2]})
                            : emit<Op::Select>({.dst = temp_slot(height()), .a = s[0], .b = s[1], .cond = s[2]});
        static_assert(u32{layout::Select::dst} == u32{layout::VSelect::dst});
        push_temp(wide);
        mark_producer(at + layout::Select::dst);
        break;
      }
      case Opcode::LocalGet: {
        const u32 index = r.u32leb();
        Operand o;
        o.kind = Operand::Local;
        o.local = local_slot(index);
        o.wide = local_wide(index);
        push(o);
        break;
      }
      case Opcode::LocalSet:
      case Opcode::LocalTee: {
        const u32 x = local_slot(r.u32leb());
        const bool tee = opc == Opcode::LocalTee;
        const u32 k = height() - 1;
        Operand& top = vs_[k];
        if (top.kind == Operand::Local && top.local == x) {
          if (!tee) pop();
          break;
        }
        if (top.kind == Operand::Temp && peep_.producer_end == pos() && out_.code[peep_.producer_dst_word] == temp_slot(k) &&
            !local_pending(x, k)) {
          out_.code[peep_.producer_dst_word] = x;
          peep_.clear();
          if (tee) {
            top.kind = Operand::Local;
            top.local = x;
          } else {
            pop();
          }
          break;
        }
        protect_local(x, k);
        move_to(x, k);
        if (tee) {
          // x now holds the value; an AddImm reading x itself would be stale, so name x instead.
          if (vs_[k].kind == Operand::Temp || vs_[k].kind == Operand::AddImm) {
            vs_[k].kind = Operand::Local;
            vs_[k].local = x;
          }
        } else {
          pop();
        }
        break;
      }
      case Opcode::GlobalGet: {
        const u32 g = r.u32leb();
        const bool wide = m_.globals[g].type == ValType::V128;
        const u32 at = wide ? emit<Op::VGlobalGet>({.dst = temp_slot(height()), .global = g})
                            : emit<Op::GlobalGet>({.dst = temp_slot(height()), .global = g});
        static_assert(u32{layout::GlobalGet::dst} == u32{layout::VGlobalGet::dst});
        push_temp(wide);
        mark_producer(at + layout::GlobalGet::dst);
        break;
      }
      case Opcode::GlobalSet: {
        const u32 g = r.u32leb();
        const u32 s = top_slot();
        pop();
        if (m_.globals[g].type == ValType::V128) {
          emit<Op::VGlobalSet>({.global = g, .src = s});
        } else {
          emit<Op::GlobalSet>({.global = g, .src = s});
        }
        break;
      }
      default: break;  // not of this family (kFamilies)
    }
  }

  // ---------------------------------------------------------------- memory: loads, stores, memory.*
  void step_memory(Opcode opc, Reader& r) {
    if (const Op o = access_op(opc); o != Op::Count_) {
      if (info(o).family == OpFamily::Load) {
        load(o, r, opc);
      } else {
        store(o, r, opc);
      }
      return;
    }
    if (step_memory_indexed(opc, r)) return;
    switch (opc) {
      case Opcode::MemorySize: {
        r.u32leb();
        const u32 at = emit<Op::MemorySize>({.dst = temp_slot(height())});
        push_temp();
        mark_producer(at + layout::MemorySize::dst);
        break;
      }
      case Opcode::MemoryGrow: {
        r.u32leb();
        const u32 k = height() - 1;
        const u32 d = slot(k);
        pop();
        const u32 at = emit<Op::MemoryGrow>({.dst = temp_slot(k), .delta = d});
        push_temp();
        mark_producer(at + layout::MemoryGrow::dst);
        break;
      }
      case Opcode::MemoryInit: {
        const u32 seg = r.u32leb();
        r.u32leb();
        const auto s = operands<3>();
        emit<Op::MemoryInit>({.data = seg, .d = s[0], .s = s[1], .n = s[2]});
        trapping();
        begin_segment();
        break;
      }
      case Opcode::DataDrop: emit<Op::DataDrop>({.data = r.u32leb()}); break;
      case Opcode::MemoryCopy: {
        r.u32leb();
        r.u32leb();
        const auto s = operands<3>();
        emit<Op::MemoryCopy>({.d = s[0], .s = s[1], .n = s[2]});
        trapping();
        begin_segment();
        break;
      }
      case Opcode::MemoryFill: {
        r.u32leb();
        const auto s = operands<3>();
        emit<Op::MemoryFill>({.d = s[0], .val = s[1], .n = s[2]});
        trapping();
        begin_segment();
        break;
      }
      default: break;  // not of this family (kFamilies)
    }
  }

  // memory.size/grow/fill/copy/init naming a memory other than an i32 memory 0 (the MultiMemory
  // ops); false (nothing read) for the others.
  bool step_memory_indexed(Opcode opc, Reader& r) {
    Reader peek = r;
    u32 mem = 0;
    u32 mem2 = 0;
    u32 seg = 0;
    switch (opc) {
      case Opcode::MemorySize: case Opcode::MemoryGrow: case Opcode::MemoryFill: mem = peek.u32leb(); break;
      case Opcode::MemoryInit:
        seg = peek.u32leb();
        mem = peek.u32leb();
        break;
      case Opcode::MemoryCopy:
        mem = peek.u32leb();
        mem2 = peek.u32leb();
        break;
      default: return false;
    }
    if (fast_memory(mem) && fast_memory(mem2)) return false;
    r = peek;
    switch (opc) {
      case Opcode::MemorySize: {
        const u32 at = emit<Op::MemorySizeM>({.dst = temp_slot(height()), .mem = mem});
        push_temp();
        mark_producer(at + layout::MemorySizeM::dst);
        return true;
      }
      case Opcode::MemoryGrow: {
        const u32 k = height() - 1;
        const u32 d = slot(k);
        pop();
        const u32 at = emit<Op::MemoryGrowM>({.dst = temp_slot(k), .delta = d, .mem = mem});
        push_temp();
        mark_producer(at + layout::MemoryGrowM::dst);
        return true;
      }
      case Opcode::MemoryFill: {
        const auto s = operands<3>();
        emit<Op::MemoryFillM>({.mem = mem, .d = s[0], .val = s[1], .n = s[2]});
        break;
      }
      case Opcode::MemoryCopy: {
        const auto s = operands<3>();
        emit<Op::MemoryCopyM>({.dst_mem = mem, .src_mem = mem2, .d = s[0], .s = s[1], .n = s[2]});
        break;
      }
      default: {  // MemoryInit
        const auto s = operands<3>();
        emit<Op::MemoryInitM>({.data = seg, .mem = mem, .d = s[0], .s = s[1], .n = s[2]});
        break;
      }
    }
    trapping();
    begin_segment();
    return true;
  }

  // ---------------------------------------------------------------- tables and references
  void step_table(Opcode opc, Reader& r) {
    switch (opc) {
      case Opcode::TableGet: {
        const u32 t = r.u32leb();
        const u32 idx = top_slot();
        pop();
        const u32 at = emit<Op::TableGet>({.dst = temp_slot(height()), .table = t, .idx = idx});
        trapping();
        push_temp();
        mark_producer(at + layout::TableGet::dst);
        break;
      }
      case Opcode::TableSet: {
        const u32 t = r.u32leb();
        const auto s = operands<2>();
        emit<Op::TableSet>({.table = t, .idx = s[0], .val = s[1]});
        trapping();
        break;
      }
      case Opcode::RefNull: r.sleb(); push(Operand{Operand::Const, 0, 0}); break;  // its heap type
      case Opcode::RefIsNull: {
        const u32 k = height() - 1;
        const u32 s = slot(k);
        pop();
        const u32 at = emit<Op::RefIsNull>({.dst = temp_slot(k), .a = s});
        push_temp();
        mark_producer(at + layout::Unary::dst);
        break;
      }
      case Opcode::RefFunc: {
        const u32 f = r.u32leb();
        const u32 at = emit<Op::RefFunc>({.dst = temp_slot(height()), .func = f});
        push_temp();
        mark_producer(at + layout::RefFunc::dst);
        break;
      }
      case Opcode::TableInit: {
        const u32 seg = r.u32leb();
        const u32 t = r.u32leb();
        const auto s = operands<3>();
        emit<Op::TableInit>({.elem = seg, .table = t, .d = s[0], .s = s[1], .n = s[2]});
        trapping();
        begin_segment();
        break;
      }
      case Opcode::ElemDrop: emit<Op::ElemDrop>({.elem = r.u32leb()}); break;
      case Opcode::TableCopy: {
        const u32 dt = r.u32leb();
        const u32 st = r.u32leb();
        const auto s = operands<3>();
        emit<Op::TableCopy>({.dst_table = dt, .src_table = st, .d = s[0], .s = s[1], .n = s[2]});
        trapping();
        begin_segment();
        break;
      }
      case Opcode::TableGrow: {
        const u32 t = r.u32leb();
        const u32 k = height() - 2;
        const auto s = operands<2>();
        emit<Op::TableGrow>({.dst = temp_slot(k), .table = t, .init = s[0], .n = s[1]});
        trapping();
        push_temp();
        begin_segment();
        break;
      }
      case Opcode::TableSize: {
        const u32 t = r.u32leb();
        const u32 at = emit<Op::TableSize>({.dst = temp_slot(height()), .table = t});
        push_temp();
        mark_producer(at + layout::TableSize::dst);
        break;
      }
      case Opcode::TableFill: {
        const u32 t = r.u32leb();
        const auto s = operands<3>();
        emit<Op::TableFill>({.table = t, .i = s[0], .val = s[1], .n = s[2]});
        trapping();
        begin_segment();
        break;
      }
      default: break;  // not of this family (kFamilies)
    }
  }

  // ---------------------------------------------------------------- garbage collection
  // Objects are made and read by the Gc family's handlers (gc_heap.hpp); the translator works
  // out field offsets and storage sizes, and passes heap types as (heap, flags) words.
  static u32 storage_size(const FieldType& f) { return element_bytes(f); }
  // A field or element read as a value: v128 takes two slots.
  static bool wide(const FieldType& f) { return f.packed == FieldType::Packed::None && f.type == ValType::V128; }
  u32 heap_flags(ValType t) const { return (t.nullable() ? 1u : 0u) | (u32{heap_top(t.heap(), m_.types)} << 8); }
  void unary_gc(Op o, bool traps) {
    const u32 a = top_slot();
    pop();
    const u32 at = emit_as<layout::Unary>(o, {.dst = temp_slot(height()), .a = a});
    if (traps) trapping();
    push_temp();
    mark_producer(at + layout::Unary::dst);
  }
  // Values taken from the stack as a call's arguments would be (the top n entries, from `base`).
  u32 values_base(u32 n) {
    do_call(n);
    return temp_slot(height());
  }
  void cast_branch(u32 depth, Op taken, Op skip, ValType target) {
    const u32 ref = top_slot();
    Ctrl& label_ = label(depth);
    const layout::BrOnCast::Args args{.ref = ref, .heap = target.heap(), .flags = heap_flags(target), .off = 0};
    if (!needs_copies(label_)) {
      const u32 at = emit_as<layout::BrOnCast>(taken, args);
      add_jump(label_, at, at + layout::BrOnCast::off);
      end_segment();
      if (metered_) fuel_pos_ = at + layout::BrOnCast::fall;
    } else {
      // The not-taken path is the trampoline (part of this segment): its fall-through word stays 0.
      const u32 at = emit_as<layout::BrOnCast>(skip, args);
      const Fixup over{at, at + layout::BrOnCast::off};
      emit_br(depth);
      bind(over, pos());
      begin_segment();
    }
    invalidate_peepholes();
  }
  static ValType read_heap(Reader& r, bool nullable) {
    const std::int64_t h = r.sleb();
    const u32 heap = h < 0 ? ValType::kAbstractHeap | static_cast<u32>(h & 0x7F) : static_cast<u32>(h);
    return ValType::ref(nullable, heap);
  }

  void step_gc(Opcode opc, Reader& r) {
    switch (opc) {
      case Opcode::RefEq: {
        const auto s = operands<2>();
        const u32 at = emit<Op::RefEq>({.dst = temp_slot(height()), .a = s[0], .b = s[1]});
        push_temp();
        mark_producer(at + layout::Binary::dst);
        break;
      }
      case Opcode::RefI31: unary_gc(Op::RefI31, false); break;
      case Opcode::I31GetS: unary_gc(Op::I31GetS, true); break;
      case Opcode::I31GetU: unary_gc(Op::I31GetU, true); break;
      case Opcode::AnyConvertExtern: unary_gc(Op::AnyConvertExtern, false); break;
      case Opcode::ExternConvertAny: unary_gc(Op::ExternConvertAny, false); break;
      case Opcode::ArrayLen: unary_gc(Op::ArrayLen, true); break;
      case Opcode::RefTest:
      case Opcode::RefTestNull:
      case Opcode::RefCast:
      case Opcode::RefCastNull: {
        const ValType t = read_heap(r, opc == Opcode::RefTestNull || opc == Opcode::RefCastNull);
        const bool cast = opc == Opcode::RefCast || opc == Opcode::RefCastNull;
        const u32 ref = top_slot();
        pop();
        const u32 at = emit_as<layout::RefTest>(cast ? Op::RefCast : Op::RefTest,
                                                {.dst = temp_slot(height()), .ref = ref, .heap = t.heap(), .flags = heap_flags(t)});
        if (cast) trapping();
        push_temp();
        mark_producer(at + layout::RefTest::dst);
        break;
      }
      case Opcode::BrOnCast:
      case Opcode::BrOnCastFail: {
        const std::uint8_t flags = r.u8();
        const u32 depth = r.u32leb();
        read_heap(r, (flags & 1) != 0);
        const ValType target = read_heap(r, (flags & 2) != 0);
        if (opc == Opcode::BrOnCast) {
          cast_branch(depth, Op::BrOnCast, Op::BrOnCastFail, target);
        } else {
          cast_branch(depth, Op::BrOnCastFail, Op::BrOnCast, target);
        }
        break;
      }
      case Opcode::StructNew:
      case Opcode::StructNewDefault: {
        const u32 type = r.u32leb();
        const FuncType& t = m_.types[type];
        u32 at = 0;
        if (opc == Opcode::StructNew) {
          const u32 base = values_base(static_cast<u32>(t.fields.size()));
          at = emit<Op::StructNew>({.dst = base, .type = canon_[type], .base = base});
          max_slots_ = std::max(max_slots_, base - locals_ + 1);
        } else {
          at = emit<Op::StructNewDefault>({.dst = temp_slot(height()), .type = canon_[type]});
        }
        trapping();
        push_temp();
        mark_producer(at + layout::StructNew::dst);
        break;
      }
      case Opcode::StructGet:
      case Opcode::StructGetS:
      case Opcode::StructGetU: {
        const u32 type = r.u32leb();
        const u32 field = r.u32leb();
        const FuncType& t = m_.types[type];
        const FieldType& f = t.fields[field];
        const u32 ref = top_slot();
        pop();
        const u32 at = emit_as<layout::StructGet>(
            opc == Opcode::StructGetS ? Op::StructGetS : Op::StructGet,
            {.dst = temp_slot(height()), .ref = ref, .offset = static_cast<u32>(struct_field_offset(t, field)),
             .size = storage_size(f)});
        trapping();
        push_temp(wide(f));
        mark_producer(at + layout::StructGet::dst);
        break;
      }
      case Opcode::StructSet: {
        const u32 type = r.u32leb();
        const u32 field = r.u32leb();
        const FuncType& t = m_.types[type];
        const auto s = operands<2>();
        emit<Op::StructSet>({.ref = s[0], .val = s[1], .offset = static_cast<u32>(struct_field_offset(t, field)),
                             .size = storage_size(t.fields[field])});
        trapping();
        break;
      }
      case Opcode::ArrayNew: {
        const u32 type = r.u32leb();
        const auto s = operands<2>();
        emit<Op::ArrayNew>({.dst = temp_slot(height()), .type = canon_[type], .init = s[0], .n = s[1]});
        trapping();
        push_temp();
        begin_segment();
        break;
      }
      case Opcode::ArrayNewDefault: {
        const u32 type = r.u32leb();
        const u32 n = top_slot();
        pop();
        emit<Op::ArrayNewDefault>({.dst = temp_slot(height()), .type = canon_[type], .n = n});
        trapping();
        push_temp();
        begin_segment();
        break;
      }
      case Opcode::ArrayNewFixed: {
        const u32 type = r.u32leb();
        const u32 n = r.u32leb();
        const u32 base = values_base(n);
        const u32 at = emit<Op::ArrayNewFixed>({.dst = base, .type = canon_[type], .base = base, .n = n});
        max_slots_ = std::max(max_slots_, base - locals_ + 1);
        trapping();
        push_temp();
        mark_producer(at + layout::ArrayNewFixed::dst);
        break;
      }
      case Opcode::ArrayNewData:
      case Opcode::ArrayNewElem: {
        const u32 type = r.u32leb();
        const u32 seg = r.u32leb();
        const auto s = operands<2>();
        if (opc == Opcode::ArrayNewData) {
          emit<Op::ArrayNewData>({.dst = temp_slot(height()), .type = canon_[type], .data = seg, .s = s[0], .n = s[1]});
        } else {
          emit<Op::ArrayNewElem>({.dst = temp_slot(height()), .type = canon_[type], .elem = seg, .s = s[0], .n = s[1]});
        }
        trapping();
        push_temp();
        begin_segment();
        break;
      }
      case Opcode::ArrayGet:
      case Opcode::ArrayGetS:
      case Opcode::ArrayGetU: {
        const FieldType& f = m_.types[r.u32leb()].fields[0];
        const auto s = operands<2>();
        const u32 at = emit_as<layout::ArrayGet>(opc == Opcode::ArrayGetS ? Op::ArrayGetS : Op::ArrayGet,
                                                 {.dst = temp_slot(height()), .ref = s[0], .idx = s[1], .size = storage_size(f)});
        trapping();
        push_temp(wide(f));
        mark_producer(at + layout::ArrayGet::dst);
        break;
      }
      case Opcode::ArraySet: {
        const FieldType& f = m_.types[r.u32leb()].fields[0];
        const auto s = operands<3>();
        emit<Op::ArraySet>({.ref = s[0], .idx = s[1], .val = s[2], .size = storage_size(f)});
        trapping();
        break;
      }
      case Opcode::ArrayFill: {
        const FieldType& f = m_.types[r.u32leb()].fields[0];
        const auto s = operands<4>();
        emit<Op::ArrayFill>({.ref = s[0], .d = s[1], .val = s[2], .n = s[3], .size = storage_size(f)});
        trapping();
        begin_segment();
        break;
      }
      case Opcode::ArrayCopy: {
        const FieldType& f = m_.types[r.u32leb()].fields[0];
        r.u32leb();
        const auto s = operands<5>();
        emit<Op::ArrayCopy>({.dref = s[0], .d = s[1], .sref = s[2], .s = s[3], .n = s[4], .size = storage_size(f)});
        trapping();
        begin_segment();
        break;
      }
      case Opcode::ArrayInitData:
      case Opcode::ArrayInitElem: {
        const FieldType& f = m_.types[r.u32leb()].fields[0];
        const u32 seg = r.u32leb();
        const auto s = operands<4>();
        if (opc == Opcode::ArrayInitData) {
          emit<Op::ArrayInitData>({.data = seg, .ref = s[0], .d = s[1], .s = s[2], .n = s[3], .size = storage_size(f)});
        } else {
          emit<Op::ArrayInitElem>({.elem = seg, .ref = s[0], .d = s[1], .s = s[2], .n = s[3]});
        }
        trapping();
        begin_segment();
        break;
      }
      default: break;  // not of this family (kFamilies)
    }
  }

  // ---------------------------------------------------------------- fixed-width SIMD
  // One internal op per instruction (simd_op), laid out by its shape (simd_shape.hpp); v128
  // operands and results take two slots. Addresses are plain slots (no folded add or constant
  // address modes for these).
  void step_simd(Opcode opc, Reader& r) {
    const Op o = simd_op(opc);
    const SigTypes& st = sig_types(info(opc).sig);
    const bool v128_result = st.result_count == 1 && st.result == ValType::V128;
    u32 at = 0;
    switch (info(o).layout) {
      case Layout::VConst: {
        const u64 lo = r.fixed(8);
        const u64 hi = r.fixed(8);
        at = emit_as<layout::VConst>(o, {.dst = temp_slot(height()), .value = {lo, hi}});
        break;
      }
      case Layout::VShuffle: {
        const u64 lo = r.fixed(8);
        const u64 hi = r.fixed(8);
        const auto s = operands<2>();
        at = emit_as<layout::VShuffle>(o, {.dst = temp_slot(height()), .a = s[0], .b = s[1], .lanes = {lo, hi}});
        break;
      }
      case Layout::VUnary: {
        const auto s = operands<1>();
        at = emit_as<layout::VUnary>(o, {.dst = temp_slot(height()), .a = s[0]});
        break;
      }
      case Layout::VBinary: {
        const auto s = operands<2>();
        at = emit_as<layout::VBinary>(o, {.dst = temp_slot(height()), .a = s[0], .b = s[1]});
        break;
      }
      case Layout::VTernary: {
        const auto s = operands<3>();
        at = emit_as<layout::VTernary>(o, {.dst = temp_slot(height()), .a = s[0], .b = s[1], .c = s[2]});
        break;
      }
      case Layout::VShift: {
        const auto s = operands<2>();
        at = emit_as<layout::VShift>(o, {.dst = temp_slot(height()), .a = s[0], .b = s[1]});
        break;
      }
      case Layout::VSplat: {
        const auto s = operands<1>();
        at = emit_as<layout::VSplat>(o, {.dst = temp_slot(height()), .a = s[0]});
        break;
      }
      case Layout::VTest: {
        const auto s = operands<1>();
        at = emit_as<layout::VTest>(o, {.dst = temp_slot(height()), .a = s[0]});
        break;
      }
      case Layout::VExtract: {
        const u32 lane = r.u8();
        const auto s = operands<1>();
        at = emit_as<layout::VExtract>(o, {.dst = temp_slot(height()), .a = s[0], .lane = lane});
        break;
      }
      case Layout::VReplace: {
        const u32 lane = r.u8();
        const auto s = operands<2>();
        at = emit_as<layout::VReplace>(o, {.dst = temp_slot(height()), .a = s[0], .b = s[1], .lane = lane});
        break;
      }
      // Memory: the address through access() (another memory or memory64: rebased, offset 0).
      case Layout::VLoad: {
        const Access x = access(height() - 1, memarg(r), access_width(opc));
        pop();
        at = emit_as<layout::VLoad>(o, {.dst = temp_slot(height()), .addr = x.addr, .offset = x.offset});
        trapping();
        end_access(x);
        break;
      }
      case Layout::VStore: {
        const Access x = access(height() - 2, memarg(r), access_width(opc));
        const u32 val = slot(height() - 1);
        pop(2);
        emit_as<layout::VStore>(o, {.addr = x.addr, .val = val, .offset = x.offset});
        trapping();
        end_access(x);
        return;
      }
      case Layout::VLoadLane: {
        const Access x = access(height() - 2, memarg(r), access_width(opc));
        const u32 lane = r.u8();
        const u32 v = slot(height() - 1);
        pop(2);
        at = emit_as<layout::VLoadLane>(
            o, {.dst = temp_slot(height()), .addr = x.addr, .v = v, .offset = x.offset, .lane = lane});
        trapping();
        end_access(x);
        break;
      }
      case Layout::VStoreLane: {
        const Access x = access(height() - 2, memarg(r), access_width(opc));
        const u32 lane = r.u8();
        const u32 val = slot(height() - 1);
        pop(2);
        emit_as<layout::VStoreLane>(o, {.addr = x.addr, .val = val, .offset = x.offset, .lane = lane});
        trapping();
        end_access(x);
        return;
      }
      default: assert(false && "a SIMD op of no SIMD layout"); return;
    }
    // Every producing layout has its destination in word 1, so a local.set can retarget it.
    static_assert(u32{layout::VUnary::dst} == 1 && u32{layout::VTest::dst} == 1 && u32{layout::VConst::dst} == 1 &&
                  u32{layout::VLoad::dst} == 1 && u32{layout::VLoadLane::dst} == 1 && u32{layout::VExtract::dst} == 1);
    push_temp(v128_result);
    mark_producer(at + 1);
  }

  // ---------------------------------------------------------------- numeric: constants and operators
  void step_numeric(Opcode opc, Reader& r) {
    switch (opc) {
      case Opcode::I32Const: push(Operand{Operand::Const, 0, static_cast<u32>(static_cast<std::int32_t>(r.sleb()))}); break;
      case Opcode::I64Const: push(Operand{Operand::Const, 0, static_cast<u64>(r.sleb())}); break;
      case Opcode::F32Const: push(Operand{Operand::Const, 0, r.fixed(4)}); break;
      case Opcode::F64Const: push(Operand{Operand::Const, 0, r.fixed(8)}); break;
      default:
        simple(opc);
        break;
    }
  }
};

}  // namespace

CompiledFunc translate_function(const Module& module, std::span<const std::uint32_t> canonical_type,
                                std::uint32_t defined_index, bool metered) {
  CompiledFunc f = Translator(module, canonical_type, defined_index, metered).run();
  if (code_verification_enabled()) {
    // A violation is an engine bug that would corrupt the interpreter's state: stop here, loudly.
    if (const std::string e = verify_code(f, metered); !e.empty()) {
      std::fprintf(stderr, "sprawling: internal error: the %s code of defined function %u fails verification: %s\n",
                   metered ? "metered" : "unmetered", defined_index, e.c_str());
      std::abort();
    }
  }
  return f;
}

}  // namespace sprawling::wasm
