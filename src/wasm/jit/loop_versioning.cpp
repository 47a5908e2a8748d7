// Loop versioning on range checks: see loop_versioning.hpp.
//
// Why a pass of our own: LLVM's LoopVersioning utility versions on its own memory and SCEV
// predicates only, IRCE wants `0 <= iv < len` on a loop of one exit and does not fire on the
// emitter's zero-extended i32 addresses, and LoopPredication widens guards whose failure must
// deoptimize. Here the fallback is simply the loop as it was.
//
// The proof. A check is a branch out of the loop, marked rarely taken, taken when X > S or
// X >= S (unsigned, in any spelling of icmp and on either edge) with S invariant. X's SCEV is
// interval-evaluated over the iterations j = 0..M, M the loop's symbolic maximal backedge-taken
// count (every iteration that runs has j <= M): an invariant is its own interval; an affine
// recurrence {b,+,s} spans b..b+s*M; zero-extension, sums and products by a constant combine
// intervals. The arithmetic is done in i128 (every input is below 2^64, steps and factors below
// 2^32, so it cannot overflow), and every node also proves its w-bit value cannot wrap over the
// interval (0 <= lo, hi < 2^w), so the interval bounds what the loop computes. The copy without
// checks runs when every check's `hi <= S` (`hi < S` for X >= S).
//
// The entry, in two steps: M below kMinIterations goes straight to the checked loop (for a
// short run the proof would cost more than the checks it saves); else the proof picks the copy.
// Loops that may leave early on data (searches, string compares) are not versioned: they
// usually stop long before M.
//
// Fuel checks. Metered code checks its counter at each loop header (`fuel - visible <= 0`,
// marked rarely true) and refuels on a cold path that stays in the loop: the refuel is a call
// and its result a reload, so ScalarEvolution sees no recurrence in the counter. The counter as
// it would be without refuels is read off the IR instead: from a check's operand back to the
// header phi, every step an addition of a constant or a join (a refuel path's edge left out, the
// others' offsets joined into a range: the arms of a branch charge different amounts), and the
// same from the latch's incoming value round to the phi. That puts the operand in iteration j
// between {start + k_lo, +, d_lo} and {start + k_hi, +, d_hi}. The check-free copy then runs only
// when the lower one stays above the check's threshold and the upper one below 2^63 over every
// iteration 0..M, when no refuel happens: by induction over the iterations (and the checks
// within one, in order) none does, so dropping the refuel paths changes nothing the interpreter
// would see, the counter's values at exits and traps included. A loop with any refuel the
// reading cannot follow (a call's return reloads the counter) keeps all its fuel checks in both
// copies.
#include "wasm/jit/loop_versioning.hpp"

#include "wasm/jit/fuel_merging.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ProfDataUtils.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LoopUtils.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <vector>

namespace sprawling::wasm::jit {
namespace {

// A loop is versioned only up to this many IR instructions (the copy doubles it), and at most
// this many loops per function: both bound the compile time and code the pass can add.
constexpr unsigned kMaxLoopInstructions = 600;
constexpr unsigned kMaxLoopsPerFunction = 8;
// Loops that can run fewer iterations than this are not versioned when ScalarEvolution's constant
// bound says so, and take the checked copy at once when their count at entry says so: the entry
// test costs about what a dozen iterations' checks do.
constexpr std::uint64_t kMinIterations = 16;
// At most this many distinct checks (after strongest()) are proven at the entry: a loop
// touching more unrelated addresses makes a long entry test, and its checks are a small share
// of its work.
constexpr std::size_t kMaxProvenChecks = 16;
// Recurrence steps and constant factors below this keep the i128 interval arithmetic exact.
constexpr std::int64_t kMaxFactor = std::int64_t{1} << 32;
// A check's exit edge is at most 1/kColdRatio as likely as staying (the emitter marks its trap
// and slow-path edges 1 : 2^20).
constexpr std::uint64_t kColdRatio = 1024;
// How deep an address expression is taken apart.
constexpr unsigned kMaxDepth = 8;
// With a deadline the store's counter holds one chunk of the budget at a time; a loop that needs
// more asks the store for it at its entry (sprawling_jit_fuel_ahead; the store bounds what it
// gives, Store::Impl::fuel_ahead) and then runs the copy without checks. A shortfall is asked for
// only below this (it is passed as an i64).
constexpr std::int64_t kMaxShortfall = std::int64_t{1} << 62;
constexpr llvm::StringLiteral kFuelAheadHelper = "sprawling_jit_fuel_ahead";
// How many values the reading of a loop's fuel counter looks at (each addend is below 2^32 in
// magnitude, so no sum along a path can overflow).
constexpr unsigned kMaxFuelSteps = 1024;

// A trap check of the loop: the branch leaves the loop when X > S (unsigned), or X >= S when
// `or_equal`.
struct Check {
  llvm::BranchInst* branch;
  const llvm::SCEV* x;
  const llvm::SCEV* s;
  bool or_equal;
};

// A fuel check of the loop: the branch takes its rarely taken edge into a refuel path (a block
// of the loop calling the refuel helper) when X <= threshold (signed); X, the operand as it
// would be without refuels, lies between two recurrences.
struct FuelCheck {
  llvm::BranchInst* branch;
  const llvm::SCEV* low;   // at or below X in every iteration
  const llvm::SCEV* high;  // at or above X in every iteration
  std::int64_t threshold;
  bool refuels_if_true;  // the refuel path is the branch's first successor
  // X as read off the IR: between {start + k_lo, +, d_lo} and {start + k_hi, +, d_hi}, start the
  // counter phi's value from the preheader.
  llvm::PHINode* phi;
  std::int64_t k_lo, k_hi, d_lo, d_hi;
  llvm::CallInst* refuel;  // the refuel path's call of the helper
};

// [lo, hi] as i128 values.
struct Interval {
  llvm::Value* lo;
  llvm::Value* hi;
};

class Prover {
 public:
  Prover(llvm::Loop& loop, llvm::ScalarEvolution& se, llvm::SCEVExpander& expander, llvm::Instruction* at)
      : loop_(loop), se_(se), expander_(expander), at_(at) {}

  // Whether interval() can take `e` apart (no code is emitted).
  bool supported(const llvm::SCEV* e, unsigned depth = 0) const {
    if (depth > kMaxDepth || se_.getTypeSizeInBits(e->getType()) > 64) return false;
    if (se_.isLoopInvariant(e, &loop_)) return expander_.isSafeToExpandAt(e, at_);
    if (const auto* ar = llvm::dyn_cast<llvm::SCEVAddRecExpr>(e)) {
      return ar->getLoop() == &loop_ && ar->isAffine() && step_of(ar).has_value() &&
             supported(ar->getStart(), depth + 1);
    }
    if (const auto* z = llvm::dyn_cast<llvm::SCEVZeroExtendExpr>(e)) return supported(z->getOperand(), depth + 1);
    if (const auto* a = llvm::dyn_cast<llvm::SCEVAddExpr>(e)) {
      for (const llvm::SCEV* op : a->operands()) {
        if (!supported(op, depth + 1)) return false;
      }
      return true;
    }
    if (const auto* m = llvm::dyn_cast<llvm::SCEVMulExpr>(e)) {
      return m->getNumOperands() == 2 && factor_of(m->getOperand(0)).has_value() && supported(m->getOperand(1), depth + 1);
    }
    return false;
  }

  // Emits, before `at`, e's interval over the iterations 0..max_btc, adding to `bad` each
  // condition under which the interval would not bound e's w-bit value.
  Interval interval(const llvm::SCEV* e, llvm::Value* max_btc, llvm::IRBuilder<>& b, std::vector<llvm::Value*>& bad) {
    llvm::Type* i128 = b.getIntNTy(128);
    const unsigned w = se_.getTypeSizeInBits(e->getType());
    if (se_.isLoopInvariant(e, &loop_)) {
      llvm::Value* v = b.CreateZExt(expander_.expandCodeFor(e, e->getType(), at_), i128);
      return {v, v};
    }
    Interval r{};
    if (const auto* ar = llvm::dyn_cast<llvm::SCEVAddRecExpr>(e)) {
      const Interval start = interval(ar->getStart(), max_btc, b, bad);
      const std::int64_t s = *step_of(ar);
      llvm::Value* span = b.CreateMul(llvm::ConstantInt::get(i128, static_cast<std::uint64_t>(s < 0 ? -s : s)), max_btc);
      r = s >= 0 ? Interval{start.lo, b.CreateAdd(start.hi, span)} : Interval{b.CreateSub(start.lo, span), start.hi};
    } else if (const auto* z = llvm::dyn_cast<llvm::SCEVZeroExtendExpr>(e)) {
      return interval(z->getOperand(), max_btc, b, bad);  // in range of the narrower type: unchanged
    } else if (const auto* a = llvm::dyn_cast<llvm::SCEVAddExpr>(e)) {
      r = {llvm::ConstantInt::get(i128, 0), llvm::ConstantInt::get(i128, 0)};
      for (const llvm::SCEV* op : a->operands()) {
        // A negative constant term is a subtraction (its w-bit pattern would be a huge addend).
        if (const auto* c = llvm::dyn_cast<llvm::SCEVConstant>(op); c != nullptr && c->getAPInt().isNegative()) {
          llvm::Value* k = llvm::ConstantInt::get(i128, c->getAPInt().abs().getZExtValue());
          r = {b.CreateSub(r.lo, k), b.CreateSub(r.hi, k)};
          continue;
        }
        const Interval t = interval(op, max_btc, b, bad);
        r = {b.CreateAdd(r.lo, t.lo), b.CreateAdd(r.hi, t.hi)};
      }
    } else {
      const auto* m = llvm::cast<llvm::SCEVMulExpr>(e);
      llvm::Value* c = llvm::ConstantInt::get(i128, *factor_of(m->getOperand(0)));
      const Interval t = interval(m->getOperand(1), max_btc, b, bad);
      r = {b.CreateMul(t.lo, c), b.CreateMul(t.hi, c)};
    }
    // The w-bit value equals the exact one only while no value of the interval wraps.
    bad.push_back(b.CreateICmpSLT(r.lo, llvm::ConstantInt::get(i128, 0)));
    bad.push_back(b.CreateICmpUGT(r.hi, llvm::ConstantInt::get(i128, llvm::APInt::getMaxValue(w).zext(128))));
    return r;
  }

 private:
  std::optional<std::int64_t> step_of(const llvm::SCEVAddRecExpr* ar) const {
    const auto* c = llvm::dyn_cast<llvm::SCEVConstant>(ar->getStepRecurrence(se_));
    if (c == nullptr || c->getAPInt().getSignificantBits() > 64) return std::nullopt;
    const std::int64_t s = c->getAPInt().getSExtValue();
    if (s <= -kMaxFactor || s >= kMaxFactor) return std::nullopt;
    return s;
  }
  static std::optional<std::uint64_t> factor_of(const llvm::SCEV* e) {
    const auto* c = llvm::dyn_cast<llvm::SCEVConstant>(e);
    if (c == nullptr || c->getAPInt().isNegative() || c->getAPInt().uge(static_cast<std::uint64_t>(kMaxFactor))) {
      return std::nullopt;
    }
    return c->getAPInt().getZExtValue();
  }

  llvm::Loop& loop_;
  llvm::ScalarEvolution& se_;
  llvm::SCEVExpander& expander_;
  llvm::Instruction* at_;
};

unsigned instruction_count(const llvm::Loop& loop) {
  unsigned n = 0;
  for (const llvm::BasicBlock* bb : loop.blocks()) n += static_cast<unsigned>(bb->size());
  return n;
}

// Whether `br` leaves the loop on one edge, and that edge is marked (almost) never taken.
bool rare_exit(const llvm::BranchInst& br, const llvm::Loop& loop) {
  if (!br.isConditional()) return false;
  const bool exits_if_true = !loop.contains(br.getSuccessor(0));
  if (exits_if_true == !loop.contains(br.getSuccessor(1))) return false;  // not an exit, or both edges are
  std::uint64_t taken = 0;
  std::uint64_t not_taken = 0;
  if (!llvm::extractBranchWeights(br, taken, not_taken)) return false;
  const std::uint64_t exit_weight = exits_if_true ? taken : not_taken;
  const std::uint64_t stay_weight = exits_if_true ? not_taken : taken;
  return exit_weight * kColdRatio <= stay_weight;
}

// Whether the loop runs to a count: each of its exits is a rare one or has a computable exit
// count. A loop that may leave early on data (a search, a string compare) usually stops long
// before its maximal count, and would pay the entry test for a copy it barely uses.
bool counted(llvm::Loop& loop, llvm::ScalarEvolution& se) {
  llvm::SmallVector<llvm::BasicBlock*, 8> exiting;
  loop.getExitingBlocks(exiting);
  for (llvm::BasicBlock* bb : exiting) {
    const auto* br = llvm::dyn_cast<llvm::BranchInst>(bb->getTerminator());
    if (br != nullptr && rare_exit(*br, loop)) continue;
    if (llvm::isa<llvm::SCEVCouldNotCompute>(se.getExitCount(&loop, bb))) return false;
  }
  return true;
}

// The loop's trap checks that the prover can take apart.
std::vector<Check> checks_of(llvm::Loop& loop, llvm::ScalarEvolution& se, const Prover& prover) {
  std::vector<Check> out;
  for (llvm::BasicBlock* bb : loop.blocks()) {
    auto* br = llvm::dyn_cast<llvm::BranchInst>(bb->getTerminator());
    // Only the emitter's trap checks, whose exit edge is marked (almost) never taken: the loop's
    // own exit conditions hold at its last iteration, so no entry test could prove them false.
    if (br == nullptr || !rare_exit(*br, loop)) continue;
    const bool exits_if_true = !loop.contains(br->getSuccessor(0));
    auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(br->getCondition());
    if (cmp == nullptr || !cmp->getOperand(0)->getType()->isIntegerTy()) continue;
    // The predicate under which the branch leaves the loop.
    const llvm::CmpInst::Predicate leaves =
        exits_if_true ? cmp->getPredicate() : llvm::CmpInst::getInversePredicate(cmp->getPredicate());
    llvm::Value* x = nullptr;
    llvm::Value* s = nullptr;
    bool or_equal = false;
    switch (leaves) {
      case llvm::ICmpInst::ICMP_UGT:  // x > s
      case llvm::ICmpInst::ICMP_UGE:  // x >= s
        x = cmp->getOperand(0);
        s = cmp->getOperand(1);
        or_equal = leaves == llvm::ICmpInst::ICMP_UGE;
        break;
      case llvm::ICmpInst::ICMP_ULT:  // s < x
      case llvm::ICmpInst::ICMP_ULE:  // s <= x
        x = cmp->getOperand(1);
        s = cmp->getOperand(0);
        or_equal = leaves == llvm::ICmpInst::ICMP_ULE;
        break;
      default:
        continue;
    }
    const llvm::SCEV* xs = se.getSCEV(x);
    const llvm::SCEV* ss = se.getSCEV(s);
    if (!se.isLoopInvariant(ss, &loop) || !prover.supported(ss) || !prover.supported(xs)) continue;
    out.push_back({br, xs, ss, or_equal});
  }
  return out;
}

// The loop's fuel checks (see the top of this file), or none when any refuel of the loop is one
// the reading cannot follow: then every fuel check stays in both copies.
std::vector<FuelCheck> fuel_checks_of(llvm::Loop& loop, llvm::ScalarEvolution& se, const llvm::DominatorTree& dt,
                                      const Prover& prover) {
  // The rarely taken edges into blocks of the loop that call the refuel helper (the emitter's
  // fuel checks, whose refuel path has the check as its only way in).
  struct Site {
    llvm::BranchInst* branch;
    llvm::BasicBlock* refuel;
  };
  std::vector<Site> sites;
  std::size_t refuel_blocks = 0;
  for (llvm::BasicBlock* bb : loop.blocks()) {
    if (calls_refuel(*bb)) ++refuel_blocks;
    auto* br = llvm::dyn_cast<llvm::BranchInst>(bb->getTerminator());
    std::uint64_t weight[2] = {0, 0};
    if (br == nullptr || !br->isConditional() || !llvm::extractBranchWeights(*br, weight[0], weight[1])) continue;
    for (unsigned e = 0; e < 2; ++e) {
      llvm::BasicBlock* to = br->getSuccessor(e);
      if (loop.contains(to) && weight[e] * kColdRatio <= weight[1 - e] && to->getSinglePredecessor() == bb &&
          calls_refuel(*to)) {
        sites.push_back({br, to});
      }
    }
  }
  if (sites.empty() || sites.size() != refuel_blocks) return {};
  const auto on_refuel_path = [&](const llvm::BasicBlock* bb) {
    return std::any_of(sites.begin(), sites.end(), [&](const Site& s) { return dt.dominates(s.refuel, bb); });
  };
  // `v` as `phi + k` for some k in [lo, hi], phi the counter's header phi, when no refuel happens
  // on the way: along additions of constants, and through joins (a refuel path's edge left out,
  // the others' ranges joined). Each value is read once; a cycle that misses the header (an
  // irreducible region) reads as unknown.
  struct Reading {
    llvm::PHINode* phi;
    std::int64_t lo;
    std::int64_t hi;
  };
  std::map<const llvm::Value*, std::optional<Reading>> memo;
  unsigned steps = 0;
  std::function<std::optional<Reading>(llvm::Value*)> read = [&](llvm::Value* v) -> std::optional<Reading> {
    if (auto it = memo.find(v); it != memo.end()) return it->second;
    memo[v] = std::nullopt;
    if (++steps > kMaxFuelSteps) return std::nullopt;
    std::optional<Reading> r;
    if (auto* phi = llvm::dyn_cast<llvm::PHINode>(v)) {
      if (phi->getParent() == loop.getHeader()) {
        r = Reading{phi, 0, 0};
      } else if (loop.contains(phi)) {
        bool known = true;
        for (unsigned i = 0; known && i < phi->getNumIncomingValues(); ++i) {
          if (on_refuel_path(phi->getIncomingBlock(i))) continue;
          const std::optional<Reading> in = read(phi->getIncomingValue(i));
          known = in.has_value() && (!r || in->phi == r->phi);
          if (known) r = r ? Reading{r->phi, std::min(r->lo, in->lo), std::max(r->hi, in->hi)} : in;
        }
        if (!known) r.reset();
      }
    } else if (auto* bo = llvm::dyn_cast<llvm::BinaryOperator>(v); bo != nullptr && loop.contains(bo)) {
      const auto* c = llvm::dyn_cast<llvm::ConstantInt>(bo->getOperand(1));
      const bool add = bo->getOpcode() == llvm::Instruction::Add;
      if (c != nullptr && c->getValue().getSignificantBits() <= 33 && (add || bo->getOpcode() == llvm::Instruction::Sub)) {
        const std::int64_t k = add ? c->getSExtValue() : -c->getSExtValue();
        if (const std::optional<Reading> in = read(bo->getOperand(0))) r = Reading{in->phi, in->lo + k, in->hi + k};
      }
    }
    memo[v] = r;
    return r;
  };
  llvm::BasicBlock* latch = loop.getLoopLatch();
  llvm::BasicBlock* pre = loop.getLoopPreheader();
  std::vector<FuelCheck> out;
  for (const Site& site : sites) {
    auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(site.branch->getCondition());
    if (cmp == nullptr || latch == nullptr || pre == nullptr) return {};
    const bool refuels_if_true = site.branch->getSuccessor(0) == site.refuel;
    // The predicate under which the branch refuels, as `a <pred> c`.
    llvm::CmpInst::Predicate refuels = refuels_if_true ? cmp->getPredicate() : cmp->getInversePredicate();
    llvm::Value* a = cmp->getOperand(0);
    const auto* c = llvm::dyn_cast<llvm::ConstantInt>(cmp->getOperand(1));
    if (c == nullptr) {
      c = llvm::dyn_cast<llvm::ConstantInt>(a);
      a = cmp->getOperand(1);
      refuels = llvm::CmpInst::getSwappedPredicate(refuels);
    }
    if (c == nullptr || !a->getType()->isIntegerTy(64)) return {};
    std::int64_t threshold = c->getSExtValue();  // refuels when a <= threshold
    if (refuels == llvm::ICmpInst::ICMP_SLT && threshold != std::numeric_limits<std::int64_t>::min()) {
      --threshold;
    } else if (refuels != llvm::ICmpInst::ICMP_SLE) {
      return {};
    }
    const std::optional<Reading> at = read(a);
    if (!at) return {};
    const std::optional<Reading> round = read(at->phi->getIncomingValueForBlock(latch));
    if (!round || round->phi != at->phi) return {};
    // Iteration j's operand lies between {start + at.lo, +, round.lo} and {start + at.hi, +, round.hi}.
    llvm::Value* start = at->phi->getIncomingValueForBlock(pre);
    llvm::Type* i64 = start->getType();
    const auto rec = [&](std::int64_t k, std::int64_t step) {
      return se.getAddRecExpr(se.getAddExpr(se.getSCEV(start), se.getConstant(i64, static_cast<std::uint64_t>(k), true)),
                              se.getConstant(i64, static_cast<std::uint64_t>(step), true), &loop, llvm::SCEV::FlagAnyWrap);
    };
    const llvm::SCEV* low = rec(at->lo, round->lo);
    const llvm::SCEV* high = rec(at->hi, round->hi);
    if (!prover.supported(low) || !prover.supported(high)) return {};
    llvm::CallInst* call = nullptr;
    for (llvm::Instruction& i : *site.refuel) {
      if (is_refuel_call(i)) call = llvm::cast<llvm::CallInst>(&i);
    }
    out.push_back({site.branch, low, high, threshold, refuels_if_true, at->phi, at->lo, at->hi, round->lo, round->hi, call});
  }
  return out;
}

// The checks the entry test must prove: of checks `k + Y > S` with the same Y, S and comparison
// (a run of fields or elements from one address), the one with the largest constant k implies
// the others.
std::vector<Check> strongest(const std::vector<Check>& checks, llvm::ScalarEvolution& se) {
  struct Group {
    const llvm::SCEV* rest;
    const llvm::SCEV* s;
    bool or_equal;
    std::uint64_t k;
    Check check;
  };
  std::vector<Group> groups;
  for (const Check& c : checks) {
    const llvm::SCEV* rest = c.x;
    std::uint64_t k = 0;
    if (const auto* a = llvm::dyn_cast<llvm::SCEVAddExpr>(c.x)) {
      const auto* first = llvm::dyn_cast<llvm::SCEVConstant>(a->getOperand(0));
      if (first != nullptr && !first->getAPInt().isNegative() && first->getAPInt().getActiveBits() <= 32) {
        k = first->getAPInt().getZExtValue();
        llvm::SmallVector<const llvm::SCEV*, 4> ops(a->operands().begin() + 1, a->operands().end());
        rest = se.getAddExpr(ops);
      }
    }
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.rest == rest && g.s == c.s && g.or_equal == c.or_equal;
    });
    if (it == groups.end()) {
      groups.push_back({rest, c.s, c.or_equal, k, c});
    } else if (k > it->k) {
      it->k = k;
      it->check = c;
    }
  }
  std::vector<Check> out;
  out.reserve(groups.size());
  for (const Group& g : groups) out.push_back(g.check);
  return out;
}

// Emits, before b's insertion point, the conditions under which fuel check `c`, its operand
// between `low` and `high` over the iterations 0..max_btc, could refuel (or the reading would not
// be exact), adding them to `bad`; returns (i128) how much more the counter would need at the
// loop's entry for the threshold part to hold.
llvm::Value* fuel_shortfall(Prover& prover, const FuelCheck& c, const llvm::SCEV* low, const llvm::SCEV* high,
                            llvm::Value* max_btc, llvm::IRBuilder<>& b, std::vector<llvm::Value*>& bad) {
  llvm::Type* i128 = b.getIntNTy(128);
  const Interval lo = prover.interval(low, max_btc, b, bad);
  const Interval hi = high == low ? lo : prover.interval(high, max_btc, b, bad);
  llvm::Value* threshold = llvm::ConstantInt::get(i128, static_cast<std::uint64_t>(c.threshold), true);
  bad.push_back(b.CreateICmpSLE(lo.lo, threshold));
  bad.push_back(b.CreateICmpUGE(hi.hi, llvm::ConstantInt::get(i128, std::uint64_t{1} << 63)));
  return b.CreateSub(b.CreateAdd(threshold, llvm::ConstantInt::get(i128, 1)), lo.lo);
}

// Where a loop's entry can ask the store for more fuel (sprawling_jit_fuel_ahead): its fuel
// checks all read one counter phi, the counter's value from the preheader feeds only that phi
// inside the loop, and the refuel path shows where the counter lives in memory (the slot it
// stores before the helper's call and reloads after) at an address available at the entry.
struct FuelAhead {
  bool ok = false;
  llvm::PHINode* phi = nullptr;
  llvm::Value* start = nullptr;
  llvm::Value* ctx = nullptr;
  llvm::Value* slot = nullptr;
};
FuelAhead fuel_ahead_site(const llvm::Loop& loop, const std::vector<FuelCheck>& fuel, const llvm::DominatorTree& dt,
                          const llvm::BasicBlock* entry) {
  FuelAhead a;
  if (fuel.empty() || fuel.front().refuel == nullptr) return a;
  a.phi = fuel.front().phi;
  a.start = a.phi->getIncomingValueForBlock(loop.getLoopPreheader());
  a.ctx = fuel.front().refuel->getArgOperand(0);
  for (const FuelCheck& c : fuel) {
    if (c.phi != a.phi || c.refuel == nullptr || c.refuel->getArgOperand(0) != a.ctx) return a;
  }
  for (const llvm::User* u : a.start->users()) {
    const auto* i = llvm::dyn_cast<llvm::Instruction>(u);
    if (i != nullptr && i != a.phi && loop.contains(i)) return a;
  }
  // The reload after the call: `load i64, ptr slot`.
  for (llvm::Instruction* i = fuel.front().refuel->getNextNode(); i != nullptr; i = i->getNextNode()) {
    if (auto* load = llvm::dyn_cast<llvm::LoadInst>(i); load != nullptr && load->getType()->isIntegerTy(64)) {
      a.slot = load->getPointerOperand();
      break;
    }
  }
  const auto available = [&](const llvm::Value* v) {
    const auto* i = llvm::dyn_cast<llvm::Instruction>(v);
    return v != nullptr && (i == nullptr || dt.dominates(i->getParent(), entry));
  };
  a.ok = a.start->getType()->isIntegerTy(64) && available(a.slot) && available(a.ctx) && available(a.start);
  return a;
}

// Versions `loop` if it qualifies; returns the header of the checked copy, or null.
llvm::BasicBlock* version(llvm::Function& f, llvm::Loop& loop, llvm::DominatorTree& dt, llvm::LoopInfo& li,
                          llvm::ScalarEvolution& se) {
  llvm::BasicBlock* check_bb = loop.getLoopPreheader();
  if (check_bb == nullptr || !loop.isLoopSimplifyForm() || instruction_count(loop) > kMaxLoopInstructions) {
    return nullptr;
  }
  // A loop known to run only a few times (a remainder loop of at most 3 bytes, say) would spend
  // more on the entry test than its checks cost.
  if (const auto* few = llvm::dyn_cast<llvm::SCEVConstant>(se.getConstantMaxBackedgeTakenCount(&loop));
      few != nullptr && few->getAPInt().ult(kMinIterations)) {
    return nullptr;
  }
  const llvm::SCEV* max_btc = se.getSymbolicMaxBackedgeTakenCount(&loop);
  if (!counted(loop, se) || llvm::isa<llvm::SCEVCouldNotCompute>(max_btc) || se.getTypeSizeInBits(max_btc->getType()) > 64) return nullptr;
  llvm::SCEVExpander expander(se, f.getParent()->getDataLayout(), "lver");
  llvm::Instruction* at = check_bb->getTerminator();
  if (!se.isLoopInvariant(max_btc, &loop) || !expander.isSafeToExpandAt(max_btc, at)) return nullptr;
  {
    const Prover dry(loop, se, expander, at);
    const std::vector<Check> found = checks_of(loop, se, dry);
    const std::size_t fuel = fuel_checks_of(loop, se, dt, dry).size();
    if ((found.empty() && fuel == 0) || strongest(found, se).size() + fuel > kMaxProvenChecks) return nullptr;
  }
  // Values of the loop used after it go through phis of its exit blocks, which then take the
  // copy's edges too.
  llvm::formLCSSA(loop, dt, &li, &se);
  // The entry, in two steps. check_bb: the maximal count M; under kMinIterations the checked
  // loop runs at once (a short loop would pay more for the proof than its checks cost). guard:
  // the proof. Then the unchecked copy's preheader ph, or the checked copy's.
  llvm::Value* m64 = expander.expandCodeFor(max_btc, max_btc->getType(), check_bb->getTerminator());
  llvm::BasicBlock* guard = llvm::SplitBlock(check_bb, check_bb->getTerminator(), &dt, &li, nullptr, "version.guard");
  at = guard->getTerminator();
  Prover prover(loop, se, expander, at);
  const std::vector<Check> checks = checks_of(loop, se, prover);
  const std::vector<Check> proven = strongest(checks, se);
  const std::vector<FuelCheck> fuel = fuel_checks_of(loop, se, dt, prover);
  llvm::IRBuilder<> b(at);
  llvm::Type* i128 = b.getIntNTy(128);
  llvm::Value* m = b.CreateZExt(m64, i128);
  std::vector<llvm::Value*> bad;
  for (const Check& c : proven) {
    const Interval x = prover.interval(c.x, m, b, bad);
    const Interval s = prover.interval(c.s, m, b, bad);
    bad.push_back(c.or_equal ? b.CreateICmpUGE(x.hi, s.lo) : b.CreateICmpUGT(x.hi, s.lo));
  }
  // The counter stays above the threshold, and below 2^63 (so its i64 value is the exact one).
  // Where the counter falls short (with a deadline it holds one chunk of the budget), `extra` is
  // by how much: the largest shortfall of the checks.
  // Without a way to ask, the fuel conditions join the others.
  const FuelAhead ahead = fuel_ahead_site(loop, fuel, dt, check_bb);
  std::vector<llvm::Value*> fuel_bad;
  llvm::Value* extra = nullptr;
  for (const FuelCheck& c : fuel) {
    llvm::Value* shortfall = fuel_shortfall(prover, c, c.low, c.high, m, b, ahead.ok ? fuel_bad : bad);
    if (ahead.ok) extra = extra == nullptr ? shortfall : b.CreateSelect(b.CreateICmpSGT(shortfall, extra), shortfall, extra);
  }
  llvm::Value* any_bad = bad.empty() ? b.getInt1(!ahead.ok) : b.CreateOr(bad);
  llvm::Value* short_of_fuel = nullptr;
  llvm::Value* can_ask = nullptr;
  if (ahead.ok) {
    short_of_fuel = b.CreateOr(fuel_bad);
    can_ask = b.CreateAnd(b.CreateICmpSGT(extra, llvm::ConstantInt::get(i128, 0)),
                          b.CreateICmpSLE(extra, llvm::ConstantInt::get(i128, static_cast<std::uint64_t>(kMaxShortfall))));
  }
  expander.clear();

  llvm::SmallVector<llvm::BasicBlock*, 8> exits;
  loop.getUniqueExitBlocks(exits);
  llvm::BasicBlock* ph = llvm::SplitBlock(guard, at, &dt, &li, nullptr, "unchecked.ph");
  llvm::ValueToValueMapTy vmap;
  llvm::SmallVector<llvm::BasicBlock*, 16> copy_blocks;
  llvm::Loop* checked = llvm::cloneLoopWithPreheader(ph, check_bb, &loop, vmap, ".checked", &li, &dt, copy_blocks);
  llvm::remapInstructionsInBlocks(copy_blocks, vmap);
  llvm::Instruction* old = guard->getTerminator();
  llvm::BasicBlock* checked_ph = checked->getLoopPreheader();
  if (!ahead.ok) {
    llvm::IRBuilder<>(old).CreateCondBr(any_bad, checked_ph, ph);
    old->eraseFromParent();
  } else {
    // guard: a bounds check could fail: the checked copy; fuel.test: the counter covers the
    // loop: the copy without checks; fuel.ask: the shortfall is one to ask for; fuel.ahead: the
    // store moves it from the reserve, and the counter as it returns it is proven again.
    llvm::LLVMContext& cx = f.getContext();
    auto* test = llvm::BasicBlock::Create(cx, "fuel.test", &f, ph);
    auto* ask = llvm::BasicBlock::Create(cx, "fuel.ask", &f, ph);
    auto* more = llvm::BasicBlock::Create(cx, "fuel.ahead", &f, ph);
    if (llvm::Loop* parent = loop.getParentLoop()) {
      for (llvm::BasicBlock* bb : {test, ask, more}) parent->addBasicBlockToLoop(bb, li);
    }
    llvm::IRBuilder<>(old).CreateCondBr(any_bad, checked_ph, test);
    old->eraseFromParent();
    llvm::IRBuilder<>(test).CreateCondBr(short_of_fuel, ask, ph);
    llvm::IRBuilder<>(ask).CreateCondBr(can_ask, more, checked_ph);
    dt.addNewBlock(test, guard);
    dt.addNewBlock(ask, test);
    dt.addNewBlock(more, ask);
    dt.changeImmediateDominator(ph, test);
    llvm::IRBuilder<> mb(more);
    mb.CreateStore(ahead.start, ahead.slot);
    llvm::FunctionCallee helper = f.getParent()->getOrInsertFunction(
        kFuelAheadHelper, llvm::FunctionType::get(mb.getInt32Ty(), {ahead.ctx->getType(), mb.getInt64Ty()}, false));
    llvm::CallInst* given = mb.CreateCall(helper, {ahead.ctx, mb.CreateTrunc(extra, mb.getInt64Ty())});
    given->setAttributes(fuel.front().refuel->getAttributes());  // the same signature: nounwind, strictfp
    llvm::Value* now = mb.CreateLoad(mb.getInt64Ty(), ahead.slot, "fuel.now");
    // The branch first (its condition set below): the proof is emitted before it.
    llvm::BranchInst* proven = mb.CreateCondBr(mb.getTrue(), checked_ph, ph);
    mb.SetInsertPoint(proven);
    Prover again(loop, se, expander, proven);
    std::vector<llvm::Value*> still_bad{mb.CreateICmpEQ(given, mb.getInt32(0))};
    for (const FuelCheck& c : fuel) {
      const auto rec = [&](std::int64_t k, std::int64_t step) {
        return se.getAddRecExpr(se.getAddExpr(se.getSCEV(now), se.getConstant(mb.getInt64Ty(), static_cast<std::uint64_t>(k), true)),
                                se.getConstant(mb.getInt64Ty(), static_cast<std::uint64_t>(step), true), &loop,
                                llvm::SCEV::FlagAnyWrap);
      };
      fuel_shortfall(again, c, rec(c.k_lo, c.d_lo), rec(c.k_hi, c.d_hi), m, mb, still_bad);
    }
    proven->setCondition(mb.CreateOr(still_bad));
    expander.clear();
    // The counter each copy starts from: as it was, or as the store returned it.
    llvm::PHINode* to_unchecked = llvm::PHINode::Create(now->getType(), 2, "fuel.start", ph->getFirstNonPHIIt());
    to_unchecked->addIncoming(ahead.start, test);
    to_unchecked->addIncoming(now, more);
    ahead.phi->setIncomingValueForBlock(ph, to_unchecked);
    auto* checked_phi = llvm::cast<llvm::PHINode>(vmap[ahead.phi]);
    llvm::PHINode* to_checked = llvm::PHINode::Create(now->getType(), 4, "fuel.start", checked_ph->getFirstNonPHIIt());
    for (llvm::BasicBlock* from : {check_bb, guard, ask}) to_checked->addIncoming(ahead.start, from);
    to_checked->addIncoming(now, more);
    checked_phi->setIncomingValueForBlock(checked_ph, to_checked);
  }
  old = check_bb->getTerminator();
  {
    llvm::IRBuilder<> eb(old);
    llvm::Value* few = eb.CreateICmpULT(m64, llvm::ConstantInt::get(m64->getType(), kMinIterations));
    eb.CreateCondBr(few, checked->getLoopPreheader(), guard);
  }
  old->eraseFromParent();
  // Each exit block's phis take the copy's exiting edges with the copy's values.
  for (llvm::BasicBlock* exit : exits) {
    for (llvm::PHINode& phi : exit->phis()) {
      const unsigned n = phi.getNumIncomingValues();
      for (unsigned i = 0; i < n; ++i) {
        llvm::BasicBlock* from = phi.getIncomingBlock(i);
        if (!loop.contains(from)) continue;
        llvm::Value* v = phi.getIncomingValue(i);
        llvm::Value* mapped = vmap.lookup(v);
        phi.addIncoming(mapped != nullptr ? mapped : v, llvm::cast<llvm::BasicBlock>(vmap[from]));
      }
    }
  }
  // The original loop is the unchecked copy: none of its checks can fail, none of its fuel
  // checks refuels.
  for (const Check& c : checks) {
    const bool exits_if_true = !loop.contains(c.branch->getSuccessor(0));
    c.branch->setCondition(llvm::ConstantInt::getBool(f.getContext(), !exits_if_true));
  }
  for (const FuelCheck& c : fuel) c.branch->setCondition(llvm::ConstantInt::getBool(f.getContext(), !c.refuels_if_true));
  return checked->getHeader();
}

// The emitter keeps an i32 local in an i64 slot, so an i32 counter can reach the loop as an i64
// phi whose next value is `and (add phi, x), 0xFFFFFFFF` or `zext (add i32 (trunc phi), x)`:
// shapes ScalarEvolution does not see as a recurrence, so the loop gets no trip count. Such a
// phi becomes an i32 phi stepping by x. Its uses then read the i32 phi's zero extension when
// its start is below 2^32 (the same value in every iteration); otherwise only uses that read its
// low 32 bits (`and 0xFFFFFFFF`, `trunc to i32`) may exist, and they read the i32 phi.
bool is_mask32(const llvm::Value* v, const llvm::Value* of) {
  const auto* bo = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (bo == nullptr || bo->getOpcode() != llvm::Instruction::And || bo->getOperand(0) != of) return false;
  const auto* c = llvm::dyn_cast<llvm::ConstantInt>(bo->getOperand(1));
  return c != nullptr && c->getZExtValue() == 0xFFFFFFFFu;
}
bool is_trunc32(const llvm::Value* v) {
  const auto* t = llvm::dyn_cast<llvm::TruncInst>(v);
  return t != nullptr && t->getType()->isIntegerTy(32);
}
// Every use of `v` other than `except` reads its low 32 bits only.
bool low_uses_only(const llvm::Value* v, const llvm::Value* except) {
  for (const llvm::User* u : v->users()) {
    if (u != except && !is_mask32(u, v) && !is_trunc32(u)) return false;
  }
  return true;
}
// Points the low-32-bit uses of `v` (other than `except`) at `v32`.
void use_low(llvm::Value* v, llvm::Value* v32, llvm::Value* wide, const llvm::Value* except) {
  llvm::SmallVector<llvm::Instruction*, 8> users;
  for (llvm::User* u : v->users()) {
    if (u != except && (is_mask32(u, v) || is_trunc32(u))) users.push_back(llvm::cast<llvm::Instruction>(u));
  }
  for (llvm::Instruction* u : users) {
    u->replaceAllUsesWith(is_trunc32(u) ? v32 : wide);
    u->eraseFromParent();
  }
}
bool narrow_masked_counters(llvm::Loop& loop) {
  llvm::BasicBlock* header = loop.getHeader();
  llvm::BasicBlock* pre = loop.getLoopPreheader();
  llvm::BasicBlock* latch = loop.getLoopLatch();
  if (pre == nullptr || latch == nullptr) return false;
  const llvm::DataLayout& dl = header->getModule()->getDataLayout();
  bool changed = false;
  llvm::SmallVector<llvm::PHINode*, 4> phis;
  for (llvm::PHINode& phi : header->phis()) phis.push_back(&phi);
  for (llvm::PHINode* phi : phis) {
    if (!phi->getType()->isIntegerTy(64) || phi->getNumIncomingValues() != 2) continue;
    auto* next = llvm::dyn_cast<llvm::Instruction>(phi->getIncomingValueForBlock(latch));
    llvm::Value* start = phi->getIncomingValueForBlock(pre);
    if (next == nullptr) continue;
    llvm::Instruction* add = nullptr;  // the step: `phi + x` (i64) or `trunc phi + x` (i32)
    llvm::Value* step = nullptr;
    if (next->getOpcode() == llvm::Instruction::And) {
      auto* a = llvm::dyn_cast<llvm::BinaryOperator>(next->getOperand(0));
      if (!is_mask32(next, a) || a->getOpcode() != llvm::Instruction::Add || a->getOperand(0) != phi) continue;
      add = a;
    } else if (llvm::isa<llvm::ZExtInst>(next)) {
      auto* a = llvm::dyn_cast<llvm::BinaryOperator>(next->getOperand(0));
      if (a == nullptr || a->getOpcode() != llvm::Instruction::Add || !a->getType()->isIntegerTy(32)) continue;
      auto* t = llvm::dyn_cast<llvm::TruncInst>(a->getOperand(0));
      if (t == nullptr || t->getOperand(0) != phi) continue;
      add = a;
    } else {
      continue;
    }
    step = add->getOperand(1);
    if (!loop.isLoopInvariant(step)) continue;
    const bool narrow_start = llvm::computeKnownBits(start, dl).countMinLeadingZeros() >= 32;
    // Without a narrow start only the low bits of the phi and of the step's sum may be read.
    if (!narrow_start && (!low_uses_only(phi, add) || !low_uses_only(add, next))) continue;
    llvm::IRBuilder<> b(pre->getTerminator());
    llvm::Value* start32 = b.CreateTrunc(start, b.getInt32Ty());
    if (step->getType()->isIntegerTy(64)) step = b.CreateTrunc(step, b.getInt32Ty());
    llvm::PHINode* phi32 = llvm::PHINode::Create(b.getInt32Ty(), 2, phi->getName() + ".i32", phi->getIterator());
    b.SetInsertPoint(next);
    llvm::Value* next32 = b.CreateAdd(phi32, step);
    phi32->addIncoming(start32, pre);
    phi32->addIncoming(next32, latch);
    llvm::Value* wide_next = b.CreateZExt(next32, b.getInt64Ty());
    b.SetInsertPoint(header, header->getFirstInsertionPt());
    llvm::Value* wide = b.CreateZExt(phi32, b.getInt64Ty());
    next->replaceAllUsesWith(wide_next);
    if (add->getType()->isIntegerTy(64)) use_low(add, next32, wide_next, next);
    if (narrow_start) {
      phi->replaceAllUsesWith(wide);
    } else {
      use_low(phi, phi32, wide, add);
    }
    if (phi->use_empty()) phi->eraseFromParent();
    changed = true;
  }
  return changed;
}

}  // namespace

unsigned version_loops_on_range_checks(llvm::Function& f) {
  {
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    for (llvm::Loop* loop : li.getLoopsInPreorder()) {
      if (loop->isInnermost()) narrow_masked_counters(*loop);
    }
  }
  unsigned versioned = 0;
  llvm::SmallPtrSet<const llvm::BasicBlock*, 16> done;  // headers already looked at
  const llvm::Triple triple(f.getParent()->getTargetTriple());
  const llvm::TargetLibraryInfoImpl tlii(triple);
  while (versioned < kMaxLoopsPerFunction) {
    // Fresh analyses for each loop: versioning one changes the function's CFG.
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    llvm::TargetLibraryInfo tli(tlii, &f);
    llvm::AssumptionCache ac(f);
    llvm::ScalarEvolution se(f, tli, ac, dt, li);
    bool changed = false;
    for (llvm::Loop* loop : li.getLoopsInPreorder()) {
      if (!loop->isInnermost() || !done.insert(loop->getHeader()).second) continue;
      if (llvm::BasicBlock* copy = version(f, *loop, dt, li, se); copy != nullptr) {
        done.insert(copy);
        ++versioned;
        changed = true;
        break;
      }
    }
    if (!changed) break;
  }
  return versioned;
}

}  // namespace sprawling::wasm::jit
