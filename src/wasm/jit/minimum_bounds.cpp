#include "wasm/jit/minimum_bounds.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/ConstantRange.h>
#include <llvm/Transforms/Utils/Local.h>

#include <vector>

namespace sprawling::wasm::jit {
namespace {

// How deep unsigned_range follows operands itself before it asks LLVM's analysis (which follows
// six more). Right after SROA an access's end is a chain of the slots' truncations and extensions
// (`end = zext(trunc(slot)) + offset + size`, every operator's result zero-extended into its
// slot): longer than LLVM's six operands for an address as short as `table[x & 255]`.
constexpr unsigned kDepth = 24;

// The values an integer `v` can take, unsigned: through the operators address arithmetic is made
// of, then computeConstantRange. Ranges, not known bits: `(x & 1020) + 130052` is at most
// 131072, but its carries leave known bits up to 2^18. Each value's range is computed once per
// function (`seen`): operands are shared, and without it a chain like `x = x + x` would be
// followed down both operands at every level.
using Ranges = llvm::DenseMap<llvm::Value*, llvm::ConstantRange>;
llvm::ConstantRange unsigned_range(llvm::Value* v, unsigned depth, Ranges& seen) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) return llvm::ConstantRange(c->getValue());
  if (auto it = seen.find(v); it != seen.end()) return it->second;
  auto* in = llvm::dyn_cast<llvm::Instruction>(v);
  auto op = [&](unsigned i) { return unsigned_range(in->getOperand(i), depth + 1, seen); };
  const unsigned width = v->getType()->getScalarSizeInBits();
  llvm::ConstantRange r = llvm::ConstantRange::getFull(width);
  switch (in == nullptr || depth == kDepth ? 0 : in->getOpcode()) {
    case llvm::Instruction::ZExt: r = op(0).zeroExtend(width); break;
    case llvm::Instruction::Trunc: r = op(0).truncate(width); break;
    case llvm::Instruction::And: r = op(0).binaryAnd(op(1)); break;
    case llvm::Instruction::Or: r = op(0).binaryOr(op(1)); break;
    case llvm::Instruction::Xor: r = op(0).binaryXor(op(1)); break;
    case llvm::Instruction::Add: r = op(0).add(op(1)); break;
    case llvm::Instruction::Shl: r = op(0).shl(op(1)); break;
    case llvm::Instruction::LShr: r = op(0).lshr(op(1)); break;
    default: r = llvm::computeConstantRange(v, /*ForSigned=*/false); break;
  }
  seen.insert({v, r});
  return r;
}

}  // namespace

unsigned fold_checks_below_minimum(llvm::Function& f) {
  const unsigned kind = f.getContext().getMDKindID(kMinimumBytesKind);
  std::vector<llvm::ICmpInst*> folded;
  Ranges seen;
  for (llvm::Instruction& i : llvm::instructions(f)) {
    llvm::MDNode* md = i.getMetadata(kind);
    auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(&i);
    // Only as the emitter made it, `end > size`: the pass runs before anything rewrites it.
    if (md == nullptr || cmp == nullptr || cmp->getPredicate() != llvm::ICmpInst::ICMP_UGT) continue;
    const auto* minimum = llvm::mdconst::extract<llvm::ConstantInt>(md->getOperand(0));
    if (unsigned_range(cmp->getOperand(0), 0, seen).getUnsignedMax().ule(minimum->getValue())) folded.push_back(cmp);
  }
  std::vector<llvm::BasicBlock*> branches;
  for (llvm::ICmpInst* cmp : folded) {
    for (llvm::User* u : cmp->users())
      if (auto* br = llvm::dyn_cast<llvm::BranchInst>(u)) branches.push_back(br->getParent());
    cmp->replaceAllUsesWith(llvm::ConstantInt::getFalse(f.getContext()));
    cmp->eraseFromParent();
  }
  // The trap edges go (the trap exit's phi loses their entries), so the loop passes see loops
  // without those exits.
  for (llvm::BasicBlock* bb : branches) (void)llvm::ConstantFoldTerminator(bb);
  return static_cast<unsigned>(folded.size());
}

}  // namespace sprawling::wasm::jit
