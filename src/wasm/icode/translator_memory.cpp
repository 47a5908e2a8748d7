// The translator (translator_impl.hpp): parametric and variable instructions, memory accesses
// and memory.*, tables and references.
#include "wasm/icode/translator_impl.hpp"

namespace sprawling::wasm::translation {

void Translator::step_variable(Opcode opc, const Instruction& ins) {
  switch (opc) {
    case Opcode::Drop: pop(); break;
    case Opcode::Select:
    case Opcode::SelectT: {
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
      const u32 index = ins.index;
      Operand o;
      o.kind = Operand::Local;
      o.local = local_slot(index);
      o.wide = local_wide(index);
      push(o);
      break;
    }
    case Opcode::LocalSet:
    case Opcode::LocalTee: {
      const u32 x = local_slot(ins.index);
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
      const u32 g = ins.index;
      const bool wide = m_.globals[g].type == ValType::V128;
      const u32 at = wide ? emit<Op::VGlobalGet>({.dst = temp_slot(height()), .global = g})
                          : emit<Op::GlobalGet>({.dst = temp_slot(height()), .global = g});
      static_assert(u32{layout::GlobalGet::dst} == u32{layout::VGlobalGet::dst});
      push_temp(wide);
      mark_producer(at + layout::GlobalGet::dst);
      break;
    }
    case Opcode::GlobalSet: {
      const u32 g = ins.index;
      const u32 s = top_slot();
      pop();
      if (m_.globals[g].type == ValType::V128) {
        emit<Op::VGlobalSet>({.global = g, .src = s});
      } else {
        emit<Op::GlobalSet>({.global = g, .src = s});
      }
      break;
    }
    default: break;  // not of this family (opcodes.def's family column)
  }
}

void Translator::step_memory(Opcode opc, const Instruction& ins) {
  if (const Op o = access_op(opc); o != Op::Count_) {
    if (info(o).family == OpFamily::Load) {
      load(o, ins, opc);
    } else {
      store(o, ins, opc);
    }
    return;
  }
  if (step_memory_indexed(opc, ins)) return;
  switch (opc) {
    case Opcode::MemorySize: {
      const u32 at = emit<Op::MemorySize>({.dst = temp_slot(height())});
      push_temp();
      mark_producer(at + layout::MemorySize::dst);
      break;
    }
    case Opcode::MemoryGrow: {
      const u32 k = height() - 1;
      const u32 d = slot(k);
      pop();
      const u32 at = emit<Op::MemoryGrow>({.dst = temp_slot(k), .delta = d});
      push_temp();
      mark_producer(at + layout::MemoryGrow::dst);
      break;
    }
    case Opcode::MemoryInit: {
      const u32 seg = ins.index;
      const auto s = operands<3>();
      emit<Op::MemoryInit>({.data = seg, .d = s[0], .s = s[1], .n = s[2]});
      trapping();
      begin_segment();
      break;
    }
    case Opcode::DataDrop: emit<Op::DataDrop>({.data = ins.index}); break;
    case Opcode::MemoryCopy: {
      const auto s = operands<3>();
      emit<Op::MemoryCopy>({.d = s[0], .s = s[1], .n = s[2]});
      trapping();
      begin_segment();
      break;
    }
    case Opcode::MemoryFill: {
      const auto s = operands<3>();
      emit<Op::MemoryFill>({.d = s[0], .val = s[1], .n = s[2]});
      trapping();
      begin_segment();
      break;
    }
    default: break;  // not of this family (opcodes.def's family column)
  }
}

bool Translator::step_memory_indexed(Opcode opc, const Instruction& ins) {
  switch (opc) {
    case Opcode::MemorySize: case Opcode::MemoryGrow: case Opcode::MemoryFill: case Opcode::MemoryInit:
    case Opcode::MemoryCopy: break;
    default: return false;
  }
  const u32 mem = ins.memory;
  const u32 mem2 = ins.memory2;
  const u32 seg = ins.index;
  if (fast_memory(mem) && fast_memory(mem2)) return false;
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

void Translator::step_table(Opcode opc, const Instruction& ins) {
  switch (opc) {
    case Opcode::TableGet: {
      const u32 t = ins.index;
      const u32 idx = top_slot();
      pop();
      const u32 at = emit<Op::TableGet>({.dst = temp_slot(height()), .table = t, .idx = idx});
      trapping();
      push_temp();
      mark_producer(at + layout::TableGet::dst);
      break;
    }
    case Opcode::TableSet: {
      const u32 t = ins.index;
      const auto s = operands<2>();
      emit<Op::TableSet>({.table = t, .idx = s[0], .val = s[1]});
      trapping();
      break;
    }
    case Opcode::RefNull: push(Operand{Operand::Const, 0, 0}); break;  // its heap type
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
      const u32 f = ins.index;
      const u32 at = emit<Op::RefFunc>({.dst = temp_slot(height()), .func = f});
      push_temp();
      mark_producer(at + layout::RefFunc::dst);
      break;
    }
    case Opcode::TableInit: {
      const u32 seg = ins.index;
      const u32 t = ins.index2;
      const auto s = operands<3>();
      emit<Op::TableInit>({.elem = seg, .table = t, .d = s[0], .s = s[1], .n = s[2]});
      trapping();
      begin_segment();
      break;
    }
    case Opcode::ElemDrop: emit<Op::ElemDrop>({.elem = ins.index}); break;
    case Opcode::TableCopy: {
      const u32 dt = ins.index;
      const u32 st = ins.index2;
      const auto s = operands<3>();
      emit<Op::TableCopy>({.dst_table = dt, .src_table = st, .d = s[0], .s = s[1], .n = s[2]});
      trapping();
      begin_segment();
      break;
    }
    case Opcode::TableGrow: {
      const u32 t = ins.index;
      const u32 k = height() - 2;
      const auto s = operands<2>();
      emit<Op::TableGrow>({.dst = temp_slot(k), .table = t, .init = s[0], .n = s[1]});
      trapping();
      push_temp();
      begin_segment();
      break;
    }
    case Opcode::TableSize: {
      const u32 t = ins.index;
      const u32 at = emit<Op::TableSize>({.dst = temp_slot(height()), .table = t});
      push_temp();
      mark_producer(at + layout::TableSize::dst);
      break;
    }
    case Opcode::TableFill: {
      const u32 t = ins.index;
      const auto s = operands<3>();
      emit<Op::TableFill>({.table = t, .i = s[0], .val = s[1], .n = s[2]});
      trapping();
      begin_segment();
      break;
    }
    default: break;  // not of this family (opcodes.def's family column)
  }
}

}  // namespace sprawling::wasm::translation
