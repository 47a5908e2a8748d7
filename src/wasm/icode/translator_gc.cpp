// The translator (translator_impl.hpp): garbage collection (struct, array, i31, casts).
#include "wasm/icode/translator_impl.hpp"

namespace sprawling::wasm::translation {

void Translator::unary_gc(Op o, bool traps) {
  const u32 a = top_slot();
  pop();
  const u32 at = emit_as<layout::Unary>(o, {.dst = temp_slot(height()), .a = a});
  if (traps) trapping();
  push_temp();
  mark_producer(at + layout::Unary::dst);
}

u32 Translator::values_base(u32 n) {
  do_call(n);
  return temp_slot(height());
}

void Translator::cast_branch(u32 depth, Op taken, Op skip, ValType target) {
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

void Translator::step_gc(Opcode opc, const Instruction& ins) {
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
      const ValType t = ins.type;
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
      const u32 depth = ins.index;
      const ValType target = ins.type2;
      if (opc == Opcode::BrOnCast) {
        cast_branch(depth, Op::BrOnCast, Op::BrOnCastFail, target);
      } else {
        cast_branch(depth, Op::BrOnCastFail, Op::BrOnCast, target);
      }
      break;
    }
    case Opcode::StructNew:
    case Opcode::StructNewDefault: {
      const u32 type = ins.index;
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
      const u32 type = ins.index;
      const u32 field = ins.index2;
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
      const u32 type = ins.index;
      const u32 field = ins.index2;
      const FuncType& t = m_.types[type];
      const auto s = operands<2>();
      emit<Op::StructSet>({.ref = s[0], .val = s[1], .offset = static_cast<u32>(struct_field_offset(t, field)),
                           .size = storage_size(t.fields[field])});
      trapping();
      break;
    }
    case Opcode::ArrayNew: {
      const u32 type = ins.index;
      const auto s = operands<2>();
      emit<Op::ArrayNew>({.dst = temp_slot(height()), .type = canon_[type], .init = s[0], .n = s[1]});
      trapping();
      push_temp();
      begin_segment();
      break;
    }
    case Opcode::ArrayNewDefault: {
      const u32 type = ins.index;
      const u32 n = top_slot();
      pop();
      emit<Op::ArrayNewDefault>({.dst = temp_slot(height()), .type = canon_[type], .n = n});
      trapping();
      push_temp();
      begin_segment();
      break;
    }
    case Opcode::ArrayNewFixed: {
      const u32 type = ins.index;
      const u32 n = ins.index2;
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
      const u32 type = ins.index;
      const u32 seg = ins.index2;
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
      const FieldType& f = m_.types[ins.index].fields[0];
      const auto s = operands<2>();
      const u32 at = emit_as<layout::ArrayGet>(opc == Opcode::ArrayGetS ? Op::ArrayGetS : Op::ArrayGet,
                                               {.dst = temp_slot(height()), .ref = s[0], .idx = s[1], .size = storage_size(f)});
      trapping();
      push_temp(wide(f));
      mark_producer(at + layout::ArrayGet::dst);
      break;
    }
    case Opcode::ArraySet: {
      const FieldType& f = m_.types[ins.index].fields[0];
      const auto s = operands<3>();
      emit<Op::ArraySet>({.ref = s[0], .idx = s[1], .val = s[2], .size = storage_size(f)});
      trapping();
      break;
    }
    case Opcode::ArrayFill: {
      const FieldType& f = m_.types[ins.index].fields[0];
      const auto s = operands<4>();
      emit<Op::ArrayFill>({.ref = s[0], .d = s[1], .val = s[2], .n = s[3], .size = storage_size(f)});
      trapping();
      begin_segment();
      break;
    }
    case Opcode::ArrayCopy: {
      const FieldType& f = m_.types[ins.index].fields[0];
      const auto s = operands<5>();
      emit<Op::ArrayCopy>({.dref = s[0], .d = s[1], .sref = s[2], .s = s[3], .n = s[4], .size = storage_size(f)});
      trapping();
      begin_segment();
      break;
    }
    case Opcode::ArrayInitData:
    case Opcode::ArrayInitElem: {
      const FieldType& f = m_.types[ins.index].fields[0];
      const u32 seg = ins.index2;
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
    default: break;  // not of this family (opcodes.def's family column)
  }
}

}  // namespace sprawling::wasm::translation
