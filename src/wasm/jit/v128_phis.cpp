#include "wasm/jit/v128_phis.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

#include <cstdint>
#include <optional>

namespace sprawling::wasm::jit {
namespace {

// `v` as `extractelement <2 x i64> W, lane`: W, else null.
llvm::Value* lane_of(llvm::Value* v, std::uint64_t lane) {
  auto* e = llvm::dyn_cast<llvm::ExtractElementInst>(v);
  if (e == nullptr) return nullptr;
  auto* index = llvm::dyn_cast<llvm::ConstantInt>(e->getIndexOperand());
  auto* type = llvm::dyn_cast<llvm::FixedVectorType>(e->getVectorOperandType());
  if (index == nullptr || index->getZExtValue() != lane || type == nullptr || type->getNumElements() != 2 ||
      !type->getElementType()->isIntegerTy(64))
    return nullptr;
  return e->getVectorOperand();
}

// What the vector phi takes on one edge where the pair takes (lo, hi): the vector both come from,
// a constant vector, or null for the pair itself (a value the loop does not change); nullopt if
// the halves have nothing to do with each other.
std::optional<llvm::Value*> joined_incoming(llvm::PHINode* lo, llvm::PHINode* hi, llvm::Value* a, llvm::Value* b) {
  if (a == lo && b == hi) return nullptr;
  if (llvm::Value* w = lane_of(a, 0); w != nullptr && lane_of(b, 1) == w) return w;
  auto* ca = llvm::dyn_cast<llvm::Constant>(a);
  auto* cb = llvm::dyn_cast<llvm::Constant>(b);
  if (ca != nullptr && cb != nullptr && !llvm::isa<llvm::ConstantExpr>(ca) && !llvm::isa<llvm::ConstantExpr>(cb))
    return llvm::ConstantVector::get({ca, cb});
  return std::nullopt;
}

// Joins one pair whose low half is `lo`, if there is one; returns whether it did.
bool join_pair(llvm::PHINode* lo, llvm::SmallVectorImpl<llvm::PHINode*>& phis, llvm::SmallPtrSetImpl<llvm::PHINode*>& gone) {
  // The vector an edge's low half comes from names the candidate high half: the phi whose value
  // on that edge is the same vector's other lane.
  for (unsigned i = 0; i < lo->getNumIncomingValues(); ++i) {
    llvm::Value* w = lane_of(lo->getIncomingValue(i), 0);
    if (w == nullptr) continue;
    llvm::BasicBlock* from = lo->getIncomingBlock(i);
    for (llvm::PHINode* hi : phis) {
      if (hi == lo || gone.contains(hi) || lane_of(hi->getIncomingValueForBlock(from), 1) != w) continue;
      llvm::SmallVector<llvm::Value*, 4> incoming;
      bool pairs = true;
      for (unsigned k = 0; k < lo->getNumIncomingValues() && pairs; ++k) {
        const std::optional<llvm::Value*> v =
            joined_incoming(lo, hi, lo->getIncomingValue(k), hi->getIncomingValueForBlock(lo->getIncomingBlock(k)));
        pairs = v.has_value();
        if (pairs) incoming.push_back(*v);
      }
      if (!pairs) continue;
      auto* type = llvm::cast<llvm::VectorType>(w->getType());
      llvm::PHINode* joined = llvm::PHINode::Create(type, lo->getNumIncomingValues(), lo->getName() + ".v128", lo);
      for (unsigned k = 0; k < lo->getNumIncomingValues(); ++k)
        joined->addIncoming(incoming[k] != nullptr ? incoming[k] : joined, lo->getIncomingBlock(k));
      llvm::IRBuilder<> b(lo->getParent(), lo->getParent()->getFirstInsertionPt());
      lo->replaceAllUsesWith(b.CreateExtractElement(joined, std::uint64_t{0}));
      hi->replaceAllUsesWith(b.CreateExtractElement(joined, std::uint64_t{1}));
      gone.insert(lo);
      gone.insert(hi);
      return true;
    }
  }
  return false;
}

}  // namespace

unsigned join_v128_phis(llvm::Function& f) {
  unsigned joined = 0;
  // A pair of an outer loop takes its values from an inner loop's pair: joined on a later round,
  // once the inner pair's halves are lanes of a vector phi.
  for (bool changed = true; changed;) {
    changed = false;
    for (llvm::BasicBlock& bb : f) {
      llvm::SmallVector<llvm::PHINode*, 16> phis;
      for (llvm::PHINode& p : bb.phis()) {
        if (p.getType()->isIntegerTy(64)) phis.push_back(&p);
      }
      if (phis.size() < 2) continue;
      llvm::SmallPtrSet<llvm::PHINode*, 16> gone;
      for (llvm::PHINode* lo : phis) {
        if (gone.contains(lo) || !join_pair(lo, phis, gone)) continue;
        ++joined;
        changed = true;
      }
      for (llvm::PHINode* p : gone) p->eraseFromParent();
    }
  }
  return joined;
}

}  // namespace sprawling::wasm::jit
