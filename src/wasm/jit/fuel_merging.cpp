// Fuel checks merged into the call that follows them: see fuel_merging.hpp.
//
// The shape, as the emitter and the first passes leave it (names as in the IR dumps):
//
//   H:        %lowf = icmp slt i64 %F, a            ; the header's FuelCheck, rarely true
//             br %lowf, %refuel, %fuelled
//   refuel:   store %F; call @sprawling_jit_refuel; %F2 = load; br %ok, %fuelled, %trap
//   fuelled:  %P = phi [%F, H], [%F2, refuel]
//             ...  %x = add %P, -c ... %k = icmp slt %x, K ...
//             br (or ... %k ...), %call_slow, %call_fast   ; the call's test, rarely true
//
// `%k` is the call's fuel test (`fuel <= 1` after the charges since the header). When %F >= a,
// the header does not refuel and %P is %F; when also %F >= K + c, %k is false. So the header now
// tests %F against the larger of the two, and on success runs `fuelled` with %k replaced by
// false; below it, a new block makes the header's own test and goes on to `fuelled.exact`, a copy
// of `fuelled` as it was, which `refuel` now joins. Both copies end in the same branch targets,
// and the values `fuelled` defined are joined where the paths meet (SSAUpdater). Each path does
// what the code did before on it, so nothing the interpreter would see changes; on the common
// one a compare and a branch per call are gone.
//
// Why not LLVM's JumpThreading: it would thread the header's edge only if the whole branch at the
// end of `fuelled` were decided, and the call's test ORs the fuel part with the native stack,
// the call depth and the value stack's room, which the header cannot know.
#include "wasm/jit/fuel_merging.hpp"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/InstructionSimplify.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/IR/ProfDataUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace sprawling::wasm::jit {
namespace {

// A block is copied only up to this many instructions (the copy is the cold path's), and at most
// this many checks are merged per function: both bound the code and compile time added.
constexpr unsigned kMaxBlockInstructions = 96;
constexpr unsigned kMaxMergesPerFunction = 64;
// Thresholds and charges are taken only below this in magnitude, so no sum of them overflows.
constexpr std::int64_t kMaxConstant = std::int64_t{1} << 32;
// How many additions of constants lead from the counter to a call's fuel test at most.
constexpr unsigned kMaxChargeSteps = 16;
// The call test's cold edge is at most 1/kColdRatio as likely as the other (the emitter marks it
// 1 : 2^20).
constexpr std::uint64_t kColdRatio = 1024;

// `cond` as "x < bound" (signed, x of 64 bits, the bound a small constant) for the case that
// takes the cold edge: `when` is the value of `cond` that takes it.
std::optional<std::pair<llvm::Value*, std::int64_t>> below(llvm::Value* cond, bool when) {
  auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(cond);
  if (cmp == nullptr || !cmp->getOperand(0)->getType()->isIntegerTy(64)) return std::nullopt;
  llvm::Value* x = cmp->getOperand(0);
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(cmp->getOperand(1));
  llvm::CmpInst::Predicate pred = when ? cmp->getPredicate() : cmp->getInversePredicate();
  if (c == nullptr) {
    x = cmp->getOperand(1);
    c = llvm::dyn_cast<llvm::ConstantInt>(cmp->getOperand(0));
    pred = llvm::CmpInst::getSwappedPredicate(pred);
  }
  if (c == nullptr) return std::nullopt;
  const std::int64_t k = c->getSExtValue();
  if (k <= -kMaxConstant || k >= kMaxConstant) return std::nullopt;
  switch (pred) {
    case llvm::CmpInst::ICMP_SLT:
      return std::pair{x, k};
    case llvm::CmpInst::ICMP_SLE:
      return std::pair{x, k + 1};
    default:
      return std::nullopt;
  }
}

// A header's fuel check whose next block ends in a call's test (the file's top comment).
struct Merge {
  llvm::BasicBlock* header;
  llvm::BasicBlock* refuel;
  llvm::BasicBlock* fuelled;
  llvm::Value* counter;       // %F
  std::int64_t threshold;     // the header refuels when %F < threshold
  std::int64_t merged;        // neither refuels nor leaves the call's fast path when %F >= merged
  std::vector<llvm::Use*> fuel_tests;  // in fuelled's branch condition: the call's fuel tests
};

// The leaves of an OR of i1 values (`or`, or `select c, true, d`) within `bb`, with the use each
// is reached through.
void or_leaves(llvm::Use& use, const llvm::BasicBlock* bb, std::vector<llvm::Use*>& out, unsigned depth = 0) {
  auto* i = llvm::dyn_cast<llvm::Instruction>(use.get());
  if (i != nullptr && i->getParent() == bb && i->hasOneUse() && depth < 16) {
    if (i->getOpcode() == llvm::Instruction::Or) {
      or_leaves(i->getOperandUse(0), bb, out, depth + 1);
      or_leaves(i->getOperandUse(1), bb, out, depth + 1);
      return;
    }
    if (auto* sel = llvm::dyn_cast<llvm::SelectInst>(i); sel != nullptr && sel->getType()->isIntegerTy(1)) {
      if (auto* t = llvm::dyn_cast<llvm::ConstantInt>(sel->getTrueValue()); t != nullptr && t->isOne()) {
        or_leaves(sel->getOperandUse(0), bb, out, depth + 1);
        or_leaves(sel->getOperandUse(2), bb, out, depth + 1);
        return;
      }
    }
  }
  out.push_back(&use);
}

// `v` as `phi + offset` through additions of constants within `bb`.
std::optional<std::int64_t> offset_from(llvm::Value* v, const llvm::PHINode* phi, const llvm::BasicBlock* bb) {
  std::int64_t offset = 0;
  for (unsigned step = 0; step <= kMaxChargeSteps; ++step) {
    if (v == phi) return offset;
    auto* op = llvm::dyn_cast<llvm::BinaryOperator>(v);
    if (op == nullptr || op->getParent() != bb) return std::nullopt;
    auto* c = llvm::dyn_cast<llvm::ConstantInt>(op->getOperand(1));
    if (c == nullptr || c->getSExtValue() <= -kMaxConstant || c->getSExtValue() >= kMaxConstant) return std::nullopt;
    if (op->getOpcode() == llvm::Instruction::Add) {
      offset += c->getSExtValue();
    } else if (op->getOpcode() == llvm::Instruction::Sub) {
      offset -= c->getSExtValue();
    } else {
      return std::nullopt;
    }
    v = op->getOperand(0);
  }
  return std::nullopt;
}

bool cold_first(const llvm::BranchInst& br) {
  llvm::SmallVector<std::uint32_t, 2> w;
  return llvm::extractBranchWeights(br, w) && w.size() == 2 &&
         static_cast<std::uint64_t>(w[0]) * kColdRatio <= static_cast<std::uint64_t>(w[1]);
}

// The merge `refuel` (a block calling the refuel helper) allows, if any.
std::optional<Merge> merge_at(llvm::BasicBlock* refuel) {
  llvm::BasicBlock* header = refuel->getSinglePredecessor();
  auto* hbr = header != nullptr ? llvm::dyn_cast<llvm::BranchInst>(header->getTerminator()) : nullptr;
  if (hbr == nullptr || !hbr->isConditional() || hbr->getSuccessor(0) == hbr->getSuccessor(1)) return std::nullopt;
  const bool refuels_if_true = hbr->getSuccessor(0) == refuel;
  llvm::BasicBlock* fuelled = hbr->getSuccessor(refuels_if_true ? 1 : 0);
  const auto low = below(hbr->getCondition(), refuels_if_true);
  if (!low) return std::nullopt;
  // The refuel path rejoins at fuelled, which only the two reach.
  auto* rbr = llvm::dyn_cast<llvm::BranchInst>(refuel->getTerminator());
  if (rbr == nullptr || std::find(llvm::succ_begin(rbr), llvm::succ_end(rbr), fuelled) == llvm::succ_end(rbr)) {
    return std::nullopt;
  }
  if (fuelled == header || fuelled == refuel || !fuelled->hasNPredecessors(2) || fuelled->size() > kMaxBlockInstructions) {
    return std::nullopt;
  }
  const llvm::PHINode* counter_phi = nullptr;
  for (const llvm::PHINode& phi : fuelled->phis()) {
    if (phi.getIncomingValueForBlock(header) == low->first) counter_phi = &phi;
  }
  if (counter_phi == nullptr || calls_refuel(*fuelled)) return std::nullopt;
  for (const llvm::Instruction& i : *fuelled) {
    if (i.getType()->isTokenTy()) return std::nullopt;
    if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&i); call != nullptr && call->cannotDuplicate()) {
      return std::nullopt;
    }
  }
  // fuelled ends in a call's test: cold first edge, its fuel part `counter_phi + c < K`.
  auto* fbr = llvm::dyn_cast<llvm::BranchInst>(fuelled->getTerminator());
  if (fbr == nullptr || !fbr->isConditional() || !cold_first(*fbr)) return std::nullopt;
  for (llvm::BasicBlock* succ : llvm::successors(fbr)) {
    if (succ == fuelled || succ == header || succ == refuel) return std::nullopt;
  }
  std::vector<llvm::Use*> leaves;
  or_leaves(fbr->getOperandUse(0), fuelled, leaves);
  Merge m{header, refuel, fuelled, low->first, low->second, low->second, {}};
  for (llvm::Use* leaf : leaves) {
    auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(leaf->get());
    if (cmp == nullptr || cmp->getParent() != fuelled || !cmp->hasOneUse()) continue;
    const auto test = below(cmp, true);
    if (!test) continue;
    const auto offset = offset_from(test->first, counter_phi, fuelled);
    // Charges only (a refund could wrap a counter near 2^63 to a negative one, which the test
    // would catch and the merged test would not).
    if (!offset || *offset > 0) continue;
    // counter + offset < K  <=>  counter < K - offset.
    m.merged = std::max(m.merged, test->second - *offset);
    m.fuel_tests.push_back(leaf);
  }
  if (m.fuel_tests.empty()) return std::nullopt;
  return m;
}

// A phi the join above made of `x + c` from each copy, with the same constant c (the slow
// path's counter after the block's charges, which the exact copy's fuel test also reads), becomes
// `phi(x) + c` in the joining block, and the fast copy's addition dies: the fast path then keeps
// only the counter live into the call, not also the counter less the charges, which took a
// callee-saved register across a recursive function's calls (fib's loop spilled its frame pointer).
void sink_common_offsets(llvm::BasicBlock& bb) {
  for (llvm::PHINode& phi : llvm::make_early_inc_range(bb.phis())) {
    auto* first = llvm::dyn_cast<llvm::BinaryOperator>(phi.getIncomingValue(0));
    if (first == nullptr || first->getOpcode() != llvm::Instruction::Add ||
        !llvm::isa<llvm::ConstantInt>(first->getOperand(1))) {
      continue;
    }
    bool same = phi.getNumIncomingValues() > 1;
    bool frees = false;  // some addition has no other use
    for (llvm::Value* v : phi.incoming_values()) {
      auto* add = llvm::dyn_cast<llvm::BinaryOperator>(v);
      same = same && add != nullptr && add->getOpcode() == llvm::Instruction::Add &&
             add->getOperand(1) == first->getOperand(1);
      frees = frees || (add != nullptr && add->hasOneUse());
    }
    if (!same || !frees) continue;
    llvm::PHINode* base = llvm::PHINode::Create(phi.getType(), phi.getNumIncomingValues(), phi.getName() + ".base", &phi);
    for (unsigned k = 0; k < phi.getNumIncomingValues(); ++k) {
      base->addIncoming(llvm::cast<llvm::BinaryOperator>(phi.getIncomingValue(k))->getOperand(0), phi.getIncomingBlock(k));
    }
    llvm::Instruction* sum =
        llvm::BinaryOperator::CreateAdd(base, first->getOperand(1), phi.getName(), bb.getFirstInsertionPt());
    std::vector<llvm::Instruction*> adds;
    for (llvm::Value* v : phi.incoming_values()) {
      auto* add = llvm::cast<llvm::Instruction>(v);
      if (std::find(adds.begin(), adds.end(), add) == adds.end()) adds.push_back(add);
    }
    phi.replaceAllUsesWith(sum);
    phi.eraseFromParent();
    for (llvm::Instruction* add : adds) {
      if (add->use_empty()) add->eraseFromParent();
    }
  }
}

void apply(llvm::Function& f, const Merge& m) {
  llvm::LLVMContext& ctx = f.getContext();
  auto* hbr = llvm::cast<llvm::BranchInst>(m.header->getTerminator());
  const bool refuels_if_true = hbr->getSuccessor(0) == m.refuel;
  // The exact copy of fuelled, with its own copies of the values it defines.
  llvm::ValueToValueMapTy vmap;
  llvm::BasicBlock* exact = llvm::CloneBasicBlock(m.fuelled, vmap, ".exact", &f);
  for (llvm::Instruction& i : *exact) {
    llvm::RemapInstruction(&i, vmap, llvm::RF_NoModuleLevelChanges | llvm::RF_IgnoreMissingLocals);
  }
  // The header's own test, on the merged test's cold path.
  llvm::BasicBlock* check = llvm::BasicBlock::Create(ctx, m.header->getName() + ".fuel", &f, exact);
  llvm::IRBuilder<> b(check);
  llvm::Value* own = b.CreateICmpSLT(m.counter, b.getInt64(static_cast<std::uint64_t>(m.threshold)));
  llvm::BranchInst* own_br = b.CreateCondBr(own, m.refuel, exact);
  own_br->copyMetadata(*hbr, {llvm::LLVMContext::MD_prof});
  if (!refuels_if_true) own_br->swapProfMetadata();
  b.SetInsertPoint(hbr);
  llvm::Value* low = b.CreateICmpSLT(m.counter, b.getInt64(static_cast<std::uint64_t>(m.merged)), "fuel.merged");
  b.CreateCondBr(low, check, m.fuelled, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
  llvm::Value* old_cond = hbr->getCondition();
  hbr->eraseFromParent();
  if (auto* dead = llvm::dyn_cast<llvm::Instruction>(old_cond); dead != nullptr && dead->use_empty()) {
    dead->eraseFromParent();
  }
  m.refuel->getTerminator()->replaceSuccessorWith(m.fuelled, exact);
  // Incoming edges: fuelled now from the header only, the copy from the new check and refuel.
  for (llvm::PHINode& phi : exact->phis()) phi.replaceIncomingBlockWith(m.header, check);
  for (llvm::PHINode& phi : m.fuelled->phis()) phi.removeIncomingValue(m.refuel, /*DeletePHIIfEmpty=*/false);
  // Outgoing edges: the copy's as the original's, with its own values.
  for (llvm::BasicBlock* succ : llvm::successors(exact)) {
    for (llvm::PHINode& phi : succ->phis()) {
      llvm::Value* v = phi.getIncomingValueForBlock(m.fuelled);
      const auto it = vmap.find(v);
      phi.addIncoming(it != vmap.end() ? static_cast<llvm::Value*>(it->second) : v, exact);
    }
  }
  // A value either copy defines, where it is used beyond them: joined where their paths meet.
  for (llvm::Instruction& i : *m.fuelled) {
    llvm::SSAUpdater ssa;
    bool escapes = false;
    for (llvm::Use& u : llvm::make_early_inc_range(i.uses())) {
      auto* user = llvm::cast<llvm::Instruction>(u.getUser());
      const llvm::BasicBlock* at = user->getParent();
      if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user)) {
        at = phi->getIncomingBlock(u);
        if (at == m.fuelled) continue;  // the fast copy's own edge (the copy's was added above)
      } else if (at == m.fuelled) {
        continue;
      }
      if (!escapes) {
        ssa.Initialize(i.getType(), i.getName());
        ssa.AddAvailableValue(m.fuelled, &i);
        ssa.AddAvailableValue(exact, vmap[&i]);
        escapes = true;
      }
      ssa.RewriteUse(u);
    }
  }
  // fuelled runs only when the header's merged test passed: its counter is %F, its fuel tests
  // false.
  for (llvm::PHINode& phi : llvm::make_early_inc_range(m.fuelled->phis())) {
    phi.replaceAllUsesWith(phi.getIncomingValue(0));
    phi.eraseFromParent();
  }
  for (llvm::Use* test : m.fuel_tests) {
    auto* cmp = llvm::cast<llvm::Instruction>(test->get());
    test->set(llvm::ConstantInt::getFalse(ctx));
    cmp->eraseFromParent();  // its one use was the test
  }
  // The ORs then simplified (`x | false` is x), in order, so each sees its operands' result;
  // code generation would otherwise materialize the false and test it. An OR left all false
  // makes the branch's condition constant.
  const llvm::SimplifyQuery query(f.getDataLayout());
  for (llvm::Instruction& i : llvm::make_early_inc_range(*m.fuelled)) {
    if (i.getOpcode() != llvm::Instruction::Or && !llvm::isa<llvm::SelectInst>(i)) continue;
    if (llvm::Value* simple = llvm::simplifyInstruction(&i, query)) {
      i.replaceAllUsesWith(simple);
      i.eraseFromParent();
    }
  }
  (void)llvm::ConstantFoldTerminator(m.fuelled);
  for (llvm::BasicBlock* succ : llvm::successors(exact)) sink_common_offsets(*succ);
}

// test_fuel_after_charge at the header whose refuel path is `refuel`: the shape
//
//   H:      %low = icmp slt i64 %F, a               ; either polarity, refuel rarely taken
//           br %low, %refuel, %B
//   refuel: ... call @sprawling_jit_refuel; %F2 = load ...; br %ok, %B, %trap
//   B:      %P = phi [%F, H], [%F2, refuel]         ; every use adds a constant to it:
//           %Fc = add i64 %P, -c                    ; B's first, the charge, c >= a
//   (X:     %Fx = add i64 %P, -x                    ; an exit's charge, anywhere)
//
// becomes
//
//   H:      %Fc = add i64 %F, -c
//           br (icmp slt i64 %Fc, 0), %H.exact, %B  ; the flags of the subtraction
//   H.exact: %Fu = sub i64 %Fc, -c                ; %F again: only %Fc is live out of H
//           br (icmp slt i64 %Fu, a), %refuel, %B   ; the check as written, cold
//   refuel: ... (%Fu where it read %F) %F2 = load ...; %F2c = add i64 %F2, -c; br %ok, %B, %trap
//   B:      %Pc = phi [%Fc, H], [%Fc, H.exact], [%F2c, refuel]
//   (X:     %Fx = add i64 %Pc, c - x)
//
// %F >= c implies %F >= a, so the fast edge is taken only where the check would not refuel.
// Counters stay far from the 64-bit limits (budgets are at most 2^62, and a counter below zero
// refuels or traps at its next check), so `%F - c` never wraps.
bool test_after_charge_at(llvm::BasicBlock* refuel) {
  llvm::BasicBlock* header = refuel->getSinglePredecessor();
  auto* hbr = header != nullptr ? llvm::dyn_cast<llvm::BranchInst>(header->getTerminator()) : nullptr;
  if (hbr == nullptr || !hbr->isConditional() || hbr->getSuccessor(0) == hbr->getSuccessor(1)) return false;
  const bool refuels_if_true = hbr->getSuccessor(0) == refuel;
  llvm::BasicBlock* next = hbr->getSuccessor(refuels_if_true ? 1 : 0);
  const auto low = below(hbr->getCondition(), refuels_if_true);
  if (!low || next == header || next == refuel || !next->hasNPredecessors(2)) return false;
  auto* rbr = llvm::dyn_cast<llvm::BranchInst>(refuel->getTerminator());
  // refuel rejoins next on exactly one edge.
  if (rbr == nullptr || std::count(llvm::succ_begin(rbr), llvm::succ_end(rbr), next) != 1) return false;
  llvm::PHINode* counter = nullptr;
  for (llvm::PHINode& phi : next->phis()) {
    if (phi.getIncomingValueForBlock(header) == low->first) counter = &phi;
  }
  if (counter == nullptr) return false;
  // Every use of the counter adds a constant to it (a charge; the loop's exits charge their own
  // amounts); the charge is the first such addition in B itself.
  llvm::BinaryOperator* charge = nullptr;
  std::vector<llvm::BinaryOperator*> offsets;
  for (llvm::User* user : counter->users()) {
    auto* add = llvm::dyn_cast<llvm::BinaryOperator>(user);
    if (add == nullptr || add->getOpcode() != llvm::Instruction::Add || add->getOperand(0) != counter) return false;
    auto* k = llvm::dyn_cast<llvm::ConstantInt>(add->getOperand(1));
    if (k == nullptr || k->getSExtValue() <= -kMaxConstant || k->getSExtValue() >= kMaxConstant) return false;
    offsets.push_back(add);
    if (add->getParent() == next && (charge == nullptr || add->comesBefore(charge))) charge = add;
  }
  if (charge == nullptr) return false;
  auto* c = llvm::cast<llvm::ConstantInt>(charge->getOperand(1));
  const std::int64_t cost = -c->getSExtValue();
  if (cost <= 0 || low->second > cost) return false;
  llvm::LLVMContext& ctx = header->getContext();
  llvm::Function& f = *header->getParent();
  // The header's test on the charged counter.
  llvm::IRBuilder<> b(hbr);
  llvm::Value* charged = b.CreateAdd(low->first, c, "fuel.charged");
  // The check as written, on the new cold edge, of the counter taken back from the charged one
  // (so that only the charged one is live out of the header), which refuel stores.
  llvm::BasicBlock* exact = llvm::BasicBlock::Create(ctx, header->getName() + ".exact", &f, next);
  b.SetInsertPoint(exact);
  llvm::Value* uncharged = b.CreateSub(charged, c, "fuel.uncharged");
  llvm::BranchInst* exact_br =
      b.CreateCondBr(b.CreateICmpSLT(uncharged, b.getInt64(static_cast<std::uint64_t>(low->second))), refuel, next);
  exact_br->copyMetadata(*hbr, {llvm::LLVMContext::MD_prof});
  if (!refuels_if_true) exact_br->swapProfMetadata();
  low->first->replaceUsesWithIf(uncharged, [refuel](llvm::Use& u) {
    if (auto* phi = llvm::dyn_cast<llvm::PHINode>(u.getUser())) return phi->getIncomingBlock(u) == refuel;
    auto* user = llvm::dyn_cast<llvm::Instruction>(u.getUser());
    return user != nullptr && user->getParent() == refuel;
  });
  b.SetInsertPoint(hbr);
  llvm::Value* negative = b.CreateICmpSLT(charged, b.getInt64(0), "fuel.short");
  b.CreateCondBr(negative, exact, next, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
  llvm::Value* old_cond = hbr->getCondition();
  hbr->eraseFromParent();
  if (auto* dead = llvm::dyn_cast<llvm::Instruction>(old_cond); dead != nullptr && dead->use_empty()) {
    dead->eraseFromParent();
  }
  // refuel is reached from the exact check now, and charges its reloaded counter itself.
  for (llvm::PHINode& phi : refuel->phis()) phi.replaceIncomingBlockWith(header, exact);
  llvm::Value* reloaded = counter->getIncomingValueForBlock(refuel);
  b.SetInsertPoint(rbr);
  llvm::Value* reloaded_charged = b.CreateAdd(reloaded, c);
  // next's other phis: the exact block's edge carries what the header's did.
  for (llvm::PHINode& phi : next->phis()) {
    if (&phi != counter) phi.addIncoming(phi.getIncomingValueForBlock(header), exact);
  }
  llvm::PHINode* joined = llvm::PHINode::Create(charged->getType(), 3, "fuel.left", next->getFirstNonPHIIt());
  joined->addIncoming(charged, header);
  joined->addIncoming(charged, exact);
  joined->addIncoming(reloaded_charged, refuel);
  // The other additions now start from the charged counter.
  for (llvm::BinaryOperator* add : offsets) {
    const std::int64_t rest = llvm::cast<llvm::ConstantInt>(add->getOperand(1))->getSExtValue() + cost;
    if (rest == 0) {
      add->replaceAllUsesWith(joined);
      add->eraseFromParent();
    } else {
      add->setOperand(0, joined);
      add->setOperand(1, llvm::ConstantInt::get(add->getType(), static_cast<std::uint64_t>(rest)));
    }
  }
  counter->eraseFromParent();
  return true;
}

// The blocks of `f` that call the refuel helper, each once, in the order of its uses.
std::vector<llvm::BasicBlock*> refuel_blocks(llvm::Function& f) {
  std::vector<llvm::BasicBlock*> refuels;
  const llvm::Function* helper = f.getParent()->getFunction(kRefuelHelper);
  if (helper == nullptr) return refuels;
  for (const llvm::User* user : helper->users()) {
    const auto* call = llvm::dyn_cast<llvm::CallInst>(user);
    if (call == nullptr || call->getFunction() != &f || call->getCalledFunction() != helper) continue;
    auto* refuel = const_cast<llvm::BasicBlock*>(call->getParent());
    if (std::find(refuels.begin(), refuels.end(), refuel) == refuels.end()) refuels.push_back(refuel);
  }
  return refuels;
}

}  // namespace

unsigned test_fuel_after_charge(llvm::Function& f) {
  unsigned rewritten = 0;
  for (llvm::BasicBlock* refuel : refuel_blocks(f)) rewritten += test_after_charge_at(refuel) ? 1 : 0;
  return rewritten;
}

bool is_refuel_call(const llvm::Instruction& i) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(&i);
  return call != nullptr && call->getCalledFunction() != nullptr && call->getCalledFunction()->getName() == kRefuelHelper;
}

bool calls_refuel(const llvm::BasicBlock& bb) { return std::any_of(bb.begin(), bb.end(), is_refuel_call); }

unsigned merge_fuel_checks_into_calls(llvm::Function& f) {
  const std::vector<llvm::BasicBlock*> refuels = refuel_blocks(f);
  // One at a time, each read from the IR as the merges before it left it (they rewrite uses).
  unsigned merged = 0;
  for (llvm::BasicBlock* refuel : refuels) {
    if (merged == kMaxMergesPerFunction) break;
    if (auto m = merge_at(refuel)) {
      apply(f, *m);
      ++merged;
    }
  }
  return merged;
}

}  // namespace sprawling::wasm::jit
