#include "wasm/jit/recursion_inlining.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <vector>

namespace sprawling::wasm::jit {
namespace {

// The direct calls of `callee` in `f` (from `callee`'s uses: no walk over `f`'s instructions,
// which for most functions of a big module would find none).
std::vector<llvm::CallInst*> calls_to(const llvm::Function& f, llvm::Function& callee) {
  std::vector<llvm::CallInst*> calls;
  for (llvm::User* user : callee.users())
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(user);
        call != nullptr && call->getCalledFunction() == &callee && call->getFunction() == &f)
      calls.push_back(call);
  return calls;
}

bool is_ok_status(const llvm::Instruction& i) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(&i);
  return call != nullptr && call->isInlineAsm() && call->arg_empty() &&
         llvm::cast<llvm::InlineAsm>(call->getCalledOperand())->getAsmString() == "xorl $0, $0";
}

// The emitter returns a normal return's status as an opaque zero (an inline `xor`, so that LLVM
// does not keep one zero register live across a function's calls). In the inlined copy the zero
// is the call's status, which the call site tests: a constant there lets LLVM fold that test.
void expose_ok_status(llvm::Function& copy) {
  std::vector<llvm::Instruction*> zeros;
  for (llvm::Instruction& i : llvm::instructions(copy))
    if (is_ok_status(i)) zeros.push_back(&i);
  for (llvm::Instruction* z : zeros) {
    z->replaceAllUsesWith(llvm::ConstantInt::get(z->getType(), 0));
    z->eraseFromParent();
  }
}

bool pure(const llvm::Instruction& i) {
  return is_ok_status(i) || (!i.mayHaveSideEffects() && !i.mayReadFromMemory());
}

// The successor of the entry's branch from which every path returns with no side effect and no
// memory read (a recursion's base case), or -1.
int early_return_successor(llvm::Function& f) {
  llvm::BasicBlock& entry = f.getEntryBlock();
  auto* br = llvm::dyn_cast<llvm::BranchInst>(entry.getTerminator());
  if (br == nullptr || !br->isConditional() || br->getSuccessor(0) == br->getSuccessor(1)) return -1;
  for (const llvm::Instruction& i : entry)
    if (&i != br && !pure(i)) return -1;
  for (unsigned s = 0; s < 2; ++s) {
    llvm::SmallPtrSet<llvm::BasicBlock*, 8> seen;
    std::vector<llvm::BasicBlock*> work{br->getSuccessor(s)};
    bool ok = true;
    while (ok && !work.empty()) {
      llvm::BasicBlock* b = work.back();
      work.pop_back();
      if (b == &entry || !seen.insert(b).second) {
        ok = ok && b != &entry;
        continue;
      }
      if (seen.size() > 8) ok = false;
      for (const llvm::Instruction& i : *b) ok = ok && (pure(i) || llvm::isa<llvm::ReturnInst>(i));
      for (llvm::BasicBlock* next : llvm::successors(b)) work.push_back(next);
    }
    if (ok) return static_cast<int>(s);
  }
  return -1;
}

}  // namespace

bool peel_base_case(llvm::Function& f, unsigned max_instructions) {
  if (calls_to(f, f).empty() || f.getInstructionCount() > max_instructions) return false;
  const int early = early_return_successor(f);
  if (early < 0) return false;
  // rest: f without its base case (the entry branches straight to the recursive part).
  llvm::ValueToValueMapTy map;
  llvm::Function* rest = llvm::CloneFunction(&f, map);
  rest->setLinkage(llvm::GlobalValue::InternalLinkage);
  rest->setName(f.getName() + ".rest");
  {
    auto* br = llvm::cast<llvm::BranchInst>(rest->getEntryBlock().getTerminator());
    llvm::BasicBlock* base = br->getSuccessor(early);
    llvm::BasicBlock* go_on = br->getSuccessor(1 - early);
    base->removePredecessor(&rest->getEntryBlock());
    llvm::BranchInst::Create(go_on, br->getIterator());
    br->eraseFromParent();
    llvm::removeUnreachableBlocks(*rest);
  }
  // f: the base case, else a tail call of rest with the same arguments.
  {
    auto* br = llvm::cast<llvm::BranchInst>(f.getEntryBlock().getTerminator());
    auto* to_rest = llvm::BasicBlock::Create(f.getContext(), "rest", &f);
    std::vector<llvm::Value*> args;
    for (llvm::Argument& a : f.args()) args.push_back(&a);
    auto* call = llvm::CallInst::Create(rest, args, "", to_rest);
    call->setTailCallKind(llvm::CallInst::TCK_MustTail);
    call->setCallingConv(f.getCallingConv());
    call->setAttributes(f.getAttributes());
    llvm::ReturnInst::Create(f.getContext(), call, to_rest);
    llvm::BasicBlock* go_on = br->getSuccessor(1 - early);
    go_on->removePredecessor(&f.getEntryBlock());
    br->setSuccessor(1 - early, to_rest);
    llvm::removeUnreachableBlocks(f);
  }
  // rest's recursive calls test the base case inline: f, now thin, inlined at each.
  const std::vector<llvm::CallInst*> calls = calls_to(*rest, f);
  llvm::ValueToValueMapTy thin_map;
  llvm::Function* thin = llvm::CloneFunction(&f, thin_map);
  expose_ok_status(*thin);
  for (llvm::CallInst* call : calls) {
    call->setCalledFunction(thin);
    llvm::InlineFunctionInfo info;
    if (!llvm::InlineFunction(*call, info).isSuccess()) call->setCalledFunction(&f);
  }
  thin->eraseFromParent();
  return true;
}

unsigned inline_self_recursion(llvm::Function& f, unsigned max_instructions, unsigned max_rounds) {
  unsigned rounds = 0;
  for (; rounds < max_rounds; ++rounds) {
    const std::vector<llvm::CallInst*> calls = calls_to(f, f);
    if (calls.empty()) break;
    if (static_cast<unsigned long>(f.getInstructionCount()) * (calls.size() + 1) > max_instructions) break;
    llvm::ValueToValueMapTy map;
    llvm::Function* copy = llvm::CloneFunction(&f, map);
    copy->setLinkage(llvm::GlobalValue::InternalLinkage);
    expose_ok_status(*copy);
    bool all = true;
    for (llvm::CallInst* call : calls) {
      call->setCalledFunction(copy);
      llvm::InlineFunctionInfo info;
      if (!llvm::InlineFunction(*call, info).isSuccess()) {
        call->setCalledFunction(&f);
        all = false;
      }
    }
    copy->eraseFromParent();
    if (!all) return rounds + 1;
  }
  return rounds;
}

}  // namespace sprawling::wasm::jit
