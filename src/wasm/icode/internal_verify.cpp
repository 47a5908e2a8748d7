// The verifier of translated code (internal_verify.hpp): one generic walk over the instructions,
// driven by the operand kinds of the declaration.
#include "wasm/icode/internal_verify.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace sprawling::wasm {
namespace {

using u32 = std::uint32_t;

std::string at_word(const Instr& in) {
  return std::string(info(in.op).name) + " at word " + std::to_string(in.at);
}

bool default_verification() {
#ifndef NDEBUG
  return true;
#else
  const char* v = std::getenv("SPRAWLING_VERIFY_CODE");
  return v != nullptr && std::strcmp(v, "1") == 0;
#endif
}

std::atomic<bool>& verification_flag() {
  static std::atomic<bool> on{default_verification()};
  return on;
}

}  // namespace

bool code_verification_enabled() noexcept { return verification_flag().load(std::memory_order_relaxed); }
void set_code_verification(bool on) noexcept { verification_flag().store(on, std::memory_order_relaxed); }

std::string verify_code(const CompiledFunc& f, bool metered) {
  const std::span<const u32> code(f.code);
  auto decoded = decode_instructions(code, metered);
  if (!decoded) return decoded.error();
  const std::vector<Instr>& instrs = *decoded;
  if (instrs.empty()) return "no code";
  if (f.num_params > f.num_locals || f.num_locals > f.frame_slots || f.num_results > f.frame_slots)
    return "frame smaller than its parameters, locals or results";

  // start[w]: 1 + the index of the instruction starting at word w, 0 if none.
  std::vector<u32> start(code.size(), 0);
  for (std::size_t i = 0; i < instrs.size(); ++i) start[instrs[i].at] = static_cast<u32>(i + 1);
  auto is_op_at = [&](std::int64_t word, Op op) {
    return word >= 0 && static_cast<std::size_t>(word) < code.size() && start[static_cast<std::size_t>(word)] != 0 &&
           instrs[start[static_cast<std::size_t>(word)] - 1].op == op;
  };

  if (metered && instrs.front().op != Op::FuelCheck) return "metered code does not start with the entry FuelCheck";

  for (const Instr& in : instrs) {
    const OpInfo& oi = info(in.op);
    if (!metered && oi.family == OpFamily::Fuel) return at_word(in) + ": fuel op in unmetered code";
    const LayoutInfo& l = info(oi.layout);
    const u32* ip = code.data() + in.at;
    auto check_branch = [&](u32 word) -> std::string {
      const auto off = static_cast<std::int32_t>(ip[word]);
      const std::int64_t target = std::int64_t{in.at} + off;
      if (target < 0 || static_cast<std::size_t>(target) >= code.size() || start[static_cast<std::size_t>(target)] == 0)
        return at_word(in) + ": branch offset " + std::to_string(off) + " (word " + std::to_string(in.at + word) +
               ") lands on no instruction start";
      if (metered && off < 0 && !is_op_at(target, Op::FuelCheck))
        return at_word(in) + ": backward branch to word " + std::to_string(target) + ", which is no FuelCheck";
      return {};
    };
    for (std::size_t k = 0; k < l.count; ++k) {
      const OperandInfo& o = l.operands[k];
      const u32 v = ip[o.word];
      switch (o.kind) {
        case OperandKind::Dst:
        case OperandKind::Src:
          if (v >= f.frame_slots)
            return at_word(in) + ": slot " + std::to_string(v) + " (" + std::string(o.name) + ") outside the frame of " +
                   std::to_string(f.frame_slots);
          break;
        case OperandKind::VDst:
        case OperandKind::VSrc:
          // A v128 takes this slot and the next.
          if (v >= f.frame_slots || v + 1 >= f.frame_slots)
            return at_word(in) + ": v128 slots " + std::to_string(v) + ".." + std::to_string(v + 1) + " (" +
                   std::string(o.name) + ") outside the frame of " + std::to_string(f.frame_slots);
          break;
        case OperandKind::Base:
          if (v > f.frame_slots)
            return at_word(in) + ": callee frame base " + std::to_string(v) + " beyond the frame of " +
                   std::to_string(f.frame_slots);
          break;
        case OperandKind::Branch:
          if (auto e = check_branch(o.word); !e.empty()) return e;
          break;
        case OperandKind::Targets:
          for (u32 w = o.word; w < in.words; ++w)
            if (auto e = check_branch(w); !e.empty()) return e;
          break;
        default: break;
      }
    }
  }

  // Trap sites: exactly the instructions that can trap, ascending.
  std::size_t site = 0;
  for (const Instr& in : instrs) {
    const bool recorded = site < f.trap_sites.size() && f.trap_sites[site].first == in.at;
    if (info(in.op).can_trap && !recorded) return at_word(in) + ": can trap but has no trap site";
    if (!info(in.op).can_trap && recorded) return at_word(in) + ": has a trap site but cannot trap";
    if (recorded) ++site;
  }
  if (site != f.trap_sites.size())
    return "trap site at word " + std::to_string(f.trap_sites[site].first) + " is no instruction start (or out of order)";

  // Exception handlers: regions inside the code, landing on instruction starts, values in the frame.
  for (const HandlerRegion& r : f.regions) {
    if (r.begin > r.end || r.end > code.size()) return "handler region " + std::to_string(r.id) + " outside the code";
    if (r.first_clause + std::uint64_t{r.clause_count} > f.clauses.size())
      return "handler region " + std::to_string(r.id) + " names clauses that do not exist";
  }
  for (const CatchClause& c : f.clauses) {
    if (c.target >= code.size() || start[c.target] == 0)
      return "catch clause lands on word " + std::to_string(c.target) + ", no instruction start";
    if ((c.values != CatchClause::kNoSlot && c.values >= f.frame_slots) ||
        (c.exn != CatchClause::kNoSlot && c.exn >= f.frame_slots))
      return "catch clause writes outside the frame of " + std::to_string(f.frame_slots);
  }

  const Op last = instrs.back().op;
  if (last != Op::Return && last != Op::Br && last != Op::BrTable && last != Op::Unreachable && last != Op::ReturnCall &&
      last != Op::ReturnCallIndirect && last != Op::Throw && last != Op::ThrowRef && last != Op::ReturnCallRef)
    return at_word(instrs.back()) + ": the code ends with an instruction that falls through";
  return {};
}

}  // namespace sprawling::wasm
