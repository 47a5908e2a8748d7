// The translator (translator_impl.hpp): fixed-width SIMD, and numeric constants and operators.
#include "wasm/icode/translator_impl.hpp"

namespace sprawling::wasm::translation {

void Translator::step_simd(Opcode opc, const Instruction& ins) {
  const Op o = simd_op(opc);
  const SigTypes& st = sig_types(info(opc).sig);
  const bool v128_result = st.result_count == 1 && st.result == ValType::V128;
  u32 at = 0;
  switch (info(o).layout) {
    case Layout::VConst: {
      u64 lo = 0;
      u64 hi = 0;
      std::memcpy(&lo, ins.v128.data(), 8);
      std::memcpy(&hi, ins.v128.data() + 8, 8);
      at = emit_as<layout::VConst>(o, {.dst = temp_slot(height()), .value = {lo, hi}});
      break;
    }
    case Layout::VShuffle: {
      u64 lo = 0;
      u64 hi = 0;
      std::memcpy(&lo, ins.v128.data(), 8);
      std::memcpy(&hi, ins.v128.data() + 8, 8);
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
      const u32 lane = ins.lane;
      const auto s = operands<1>();
      at = emit_as<layout::VExtract>(o, {.dst = temp_slot(height()), .a = s[0], .lane = lane});
      break;
    }
    case Layout::VReplace: {
      const u32 lane = ins.lane;
      const auto s = operands<2>();
      at = emit_as<layout::VReplace>(o, {.dst = temp_slot(height()), .a = s[0], .b = s[1], .lane = lane});
      break;
    }
    // Memory: the address through access() (another memory or memory64: rebased, offset 0).
    case Layout::VLoad: {
      const Access x = access(height() - 1, memarg(ins), access_width(opc));
      pop();
      at = emit_as<layout::VLoad>(o, {.dst = temp_slot(height()), .addr = x.addr, .offset = x.offset});
      trapping();
      end_access(x);
      break;
    }
    case Layout::VStore: {
      const Access x = access(height() - 2, memarg(ins), access_width(opc));
      const u32 val = slot(height() - 1);
      pop(2);
      emit_as<layout::VStore>(o, {.addr = x.addr, .val = val, .offset = x.offset});
      trapping();
      end_access(x);
      return;
    }
    case Layout::VLoadLane: {
      const Access x = access(height() - 2, memarg(ins), access_width(opc));
      const u32 lane = ins.lane;
      const u32 v = slot(height() - 1);
      pop(2);
      at = emit_as<layout::VLoadLane>(
          o, {.dst = temp_slot(height()), .addr = x.addr, .v = v, .offset = x.offset, .lane = lane});
      trapping();
      end_access(x);
      break;
    }
    case Layout::VStoreLane: {
      const Access x = access(height() - 2, memarg(ins), access_width(opc));
      const u32 lane = ins.lane;
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

void Translator::canonicalize_nan(Opcode opc) {
  Op canon;
  switch (opc) {
    case Opcode::F32Add:
    case Opcode::F32Sub:
    case Opcode::F32Mul:
    case Opcode::F32Div:
    case Opcode::F32Sqrt:
    case Opcode::F32Min:
    case Opcode::F32Max:
    case Opcode::F32Ceil:
    case Opcode::F32Floor:
    case Opcode::F32Trunc:
    case Opcode::F32Nearest:
    case Opcode::F32DemoteF64: canon = Op::CanonF32; break;
    case Opcode::F64Add:
    case Opcode::F64Sub:
    case Opcode::F64Mul:
    case Opcode::F64Div:
    case Opcode::F64Sqrt:
    case Opcode::F64Min:
    case Opcode::F64Max:
    case Opcode::F64Ceil:
    case Opcode::F64Floor:
    case Opcode::F64Trunc:
    case Opcode::F64Nearest:
    case Opcode::F64PromoteF32: canon = Op::CanonF64; break;
    case Opcode::F32x4Add:
    case Opcode::F32x4Sub:
    case Opcode::F32x4Mul:
    case Opcode::F32x4Div:
    case Opcode::F32x4Sqrt:
    case Opcode::F32x4DemoteF64x2Zero: canon = Op::VCanonF32x4; break;
    case Opcode::F64x2Add:
    case Opcode::F64x2Sub:
    case Opcode::F64x2Mul:
    case Opcode::F64x2Div:
    case Opcode::F64x2Sqrt:
    case Opcode::F64x2PromoteLowF32x4: canon = Op::VCanonF64x2; break;
    default: return;  // no NaN, canonical NaNs already (SIMD min/max/rounding, relaxed), or a NaN's bits kept exactly (abs, neg, copysign)
  }
  const u32 k = height() - 1;
  const u32 src = slot(k);
  const bool wide = canon == Op::VCanonF32x4 || canon == Op::VCanonF64x2;
  pop();
  const u32 at = wide ? emit_as<layout::VUnary>(canon, {.dst = temp_slot(k), .a = src})
                      : emit_as<layout::Unary>(canon, {.dst = temp_slot(k), .a = src});
  static_assert(u32{layout::VUnary::dst} == u32{layout::Unary::dst});
  push_temp(wide);
  mark_producer(at + layout::Unary::dst);
}

void Translator::step_numeric(Opcode opc, const Instruction& ins) {
  switch (opc) {
    case Opcode::I32Const: push(Operand{Operand::Const, 0, ins.bits}); break;
    case Opcode::I64Const: push(Operand{Operand::Const, 0, ins.bits}); break;
    case Opcode::F32Const: push(Operand{Operand::Const, 0, ins.bits}); break;
    case Opcode::F64Const: push(Operand{Operand::Const, 0, ins.bits}); break;
    default:
      simple(opc);
      break;
  }
}

}  // namespace sprawling::wasm::translation
