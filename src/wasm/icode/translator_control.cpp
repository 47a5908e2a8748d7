// The translator (translator_impl.hpp): control (blocks, branches, return), exception handling,
// typed function references and calls.
#include "wasm/icode/translator_impl.hpp"

namespace sprawling::wasm::translation {

void Translator::step_control(Opcode opc, const Instruction& ins) {
  switch (opc) {
    case Opcode::Unreachable:
      emit<Op::Unreachable>({});
      trapping();
      set_unreachable();
      break;
    case Opcode::Nop: break;
    case Opcode::Block: {
      const BlockSig sig = block_sig(ins.block);
      materialize_all();
      enter_block(Ctrl::Block, sig);
      break;
    }
    case Opcode::Loop: {
      const BlockSig sig = block_sig(ins.block);
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
      const BlockSig sig = block_sig(ins.block);
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
      const u32 depth = ins.index;
      emit_br(depth);
      set_unreachable();
      break;
    }
    case Opcode::BrIf: {
      const u32 depth = ins.index;
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
      const auto n = static_cast<u32>(ins.targets.size());
      std::vector<u32> depths(ins.targets.begin(), ins.targets.end());
      depths.push_back(ins.index);  // the default label
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
    default: break;  // not of this family (opcodes.def's family column)
  }
}

u32 Translator::open_region(std::vector<CatchClause> clauses) {
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

void Translator::close_region(Ctrl& c) {
  Region& reg = regions_[c.region];
  reg.r.end = pos();
  reg.close_seq = close_seq_++;
  assert(!open_regions_.empty() && open_regions_.back() == c.region);
  open_regions_.pop_back();
  c.region = kNone;
}

void Translator::finish_regions() {
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

void Translator::end_handlers(Ctrl& c) {
  if (c.region != kNone) close_region(c);
  if (c.kind == Ctrl::Try && c.in_catch && !c.unreachable) {
    emit_label_copies(c);
    c.unreachable = true;
  }
}

void Translator::step_exceptions(Opcode opc, const Instruction& ins) {
  switch (opc) {
    case Opcode::Throw: {
      const u32 tag = ins.index;
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
    case Opcode::TryTable: try_table(ins); break;
    case Opcode::Try: {
      const BlockSig sig = block_sig(ins.block);
      materialize_all();
      enter_block(Ctrl::Try, sig);
      ctrl_.back().region = open_region({});
      ctrl_.back().try_region = ctrl_.back().region;
      break;
    }
    case Opcode::Catch:
    case Opcode::CatchAll: {
      const u32 tag = opc == Opcode::Catch ? ins.index : CatchClause::kAnyTag;
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
      const u32 depth = ins.index;
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
      step_control(Opcode::End, ins);  // closes the region and the block
      break;
    }
    case Opcode::Rethrow: {
      const u32 depth = ins.index;
      emit<Op::ThrowRef>({.exn = label(depth).exn_slot});
      trapping();
      end_segment();
      set_unreachable();
      break;
    }
    default: break;  // not of this family (opcodes.def's family column)
  }
}

void Translator::try_table(const Instruction& ins) {
  const BlockSig sig = block_sig(ins.block);
  struct Clause {
    u32 kind;
    u32 tag;
    u32 depth;
  };
  // The reader's clauses are (kind, tagidx, labelidx) triples.
  std::vector<Clause> cs(ins.targets.size() / 3);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    cs[i].kind = ins.targets[3 * i];
    cs[i].tag = cs[i].kind <= kCatchRef ? ins.targets[3 * i + 1] : CatchClause::kAnyTag;
    cs[i].depth = ins.targets[3 * i + 2];
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

void Translator::step_typed_refs(Opcode opc, const Instruction& ins) {
  switch (opc) {
    case Opcode::CallRef: {
      const u32 type = ins.index;
      const FuncType& ft = m_.types[type];
      const u32 ref = top_slot();
      pop();
      do_call(static_cast<u32>(ft.params.size()));
      const u32 base = temp_slot(height());
      const u32 at = emit<Op::CallRef>({.type = type, .ref = ref, .base = base, .post = 0});
      trapping();
      push_call_results(base, ft);
      begin_post_call_segment(at + layout::CallRef::post);
      break;
    }
    case Opcode::ReturnCallRef: {
      const u32 type = ins.index;
      const FuncType& ft = m_.types[type];
      const u32 ref = top_slot();
      pop();
      emit<Op::ReturnCallRef>({.type = type, .ref = ref, .base = tail_call_args(ft)});
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
      const u32 depth = ins.index;
      const u32 ref = slot(height() - 1);
      const Operand kept = vs_.back();
      pop();
      ref_branch(depth, ref, Op::BrOnNull, Op::BrOnNonNull);
      push(kept);
      break;
    }
    case Opcode::BrOnNonNull: {
      // Taken: the label gets the values and the reference; not taken: the reference is dropped.
      const u32 depth = ins.index;
      const u32 ref = slot(height() - 1);
      ref_branch(depth, ref, Op::BrOnNonNull, Op::BrOnNull);
      pop();
      break;
    }
    default: break;  // not of this family (opcodes.def's family column)
  }
}

u32 Translator::tail_call_args(const FuncType& ft) {
  do_call(static_cast<u32>(ft.params.size()));
  max_slots_ = std::max(max_slots_, next_at() + value_slots(ft.params));  // the arguments' slots
  return temp_slot(height());
}

void Translator::end_tail_call() {
  trapping();
  end_segment();
  set_unreachable();
}

void Translator::ref_branch(u32 depth, u32 ref, Op taken, Op skip) {
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

void Translator::step_call(Opcode opc, const Instruction& ins) {
  switch (opc) {
    case Opcode::Call: {
      const u32 f = ins.index;
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
      const u32 type = ins.index;
      const u32 table = ins.index2;
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
      const u32 f = ins.index;
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
      const u32 type = ins.index;
      const u32 table = ins.index2;
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
    default: break;  // not of this family (opcodes.def's family column)
  }
}

}  // namespace sprawling::wasm::translation
