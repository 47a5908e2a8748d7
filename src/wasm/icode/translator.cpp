// Translation of one validated function body into internal code (code.hpp): operand-stack
// positions become frame slots, local.get/constants stay lazy until consumed, results land in
// their destination slot, branches are resolved to relative offsets, fuel is charged per block.
// This file: the main step, which hands each instruction to its family (translator_*.cpp), and
// the entry point.
#include "wasm/icode/translator.hpp"

#include "wasm/icode/translator_impl.hpp"

#include <cstdio>
#include <cstdlib>

namespace sprawling::wasm {
namespace translation {

void Translator::emit_return() {
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

Cond Translator::pop_cond() {
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

Translator::BlockSig Translator::block_sig(const BlockType& bt) const {
  switch (bt.kind) {
    case BlockType::Kind::Empty: return {};
    case BlockType::Kind::Value: {
      // A value type of one slot or two (v128); any reference type takes one, as funcref's.
      const std::span<const ValType> t = single_type(bt.type.byte());
      return {{}, !t.empty() && t[0] == bt.type ? t : single_type(ValType::kFunc)};
    }
    case BlockType::Kind::Index: break;
  }
  return {m_.types[bt.index].params, m_.types[bt.index].results};
}

void Translator::simple(Opcode opc) {
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

bool Translator::lazy_add(Opcode opc, u32 ka, u32 kb) {
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

void Translator::load(Op o, const Instruction& ins, Opcode opc) {
  const MemArg ma = memarg(ins);
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

void Translator::store(Op o, const Instruction& ins, Opcode opc) {
  const MemArg ma = memarg(ins);
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

void Translator::step(const Instruction& ins) {
  cur_offset_ = static_cast<u32>(ins.offset);
  const Opcode opc = ins.op;
  Ctrl& cur = ctrl_.back();
  if (cur.unreachable) {
    if (opens_block(opc)) {
      ++dead_depth_;
      return;
    }
    if ((opc == Opcode::End || opc == Opcode::Delegate) && dead_depth_ > 0) {
      --dead_depth_;
      return;
    }
    if ((opc == Opcode::Else || opc == Opcode::Catch || opc == Opcode::CatchAll) && dead_depth_ > 0) {
      return;
    }
    if (opc != Opcode::End && opc != Opcode::Else && opc != Opcode::Catch && opc != Opcode::CatchAll &&
        opc != Opcode::Delegate) {
      return;
    }
  }
  if (metered_) seg_cost_ += fuel_cost(opc);
  switch (family(opc)) {  // opcodes.def's family column: one member function each
    case Family::Control: step_control(opc, ins); break;
    case Family::Call: step_call(opc, ins); break;
    case Family::Variable: step_variable(opc, ins); break;
    case Family::Memory: step_memory(opc, ins); break;
    case Family::Table: step_table(opc, ins); break;
    case Family::Numeric:
      step_numeric(opc, ins);
      if (nan_canonical_) canonicalize_nan(opc);
      break;
    case Family::Simd:
      step_simd(opc, ins);
      if (nan_canonical_) canonicalize_nan(opc);
      break;
    case Family::Exception: step_exceptions(opc, ins); break;
    case Family::TypedRef: step_typed_refs(opc, ins); break;
    case Family::Gc: step_gc(opc, ins); break;
  }
}

}  // namespace translation

CompiledFunc translate_function(const Module& module, std::span<const std::uint32_t> canonical_type,
                                std::uint32_t defined_index, bool metered, bool nan_canonical) {
  CompiledFunc f = translation::Translator(module, canonical_type, defined_index, metered, nan_canonical).run();
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
