// The compiled tier's second pass: LLVM IR from the internal code (decoded through
// internal_code.hpp, generated from internal_ops.def). Each instruction does what its interpreter
// handler does, so fuel segments, trap sites and results are the interpreter's by construction.
#include "wasm/jit/emitter.hpp"
#include "wasm/jit/minimum_bounds.hpp"

#include "wasm/jit/runtime_calls.hpp"

#include <llvm-c/Core.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace sprawling::wasm::jit {

namespace {

// ---------------------------------------------------------------- IR emission

// The integer comparison of a wasm comparison operator (i32 and i64), if it is one.
std::optional<llvm::CmpInst::Predicate> icmp_of(Opcode o) {
  using P = llvm::CmpInst::Predicate;
  switch (o) {
#define SPRAWLING_I32_COMPARISON(Cmp, op, type, predicate) \
  case Opcode::I32##Cmp:                                    \
  case Opcode::I64##Cmp: return P::ICMP_##predicate;
#include "wasm/icode/i32_comparisons.def"
#undef SPRAWLING_I32_COMPARISON
    default: return std::nullopt;
  }
}

// call_indirect's inline path reads a table's `elements` (std::vector<u64>) as machine code:
// its first two words as [begin, end). Checked once against this library's vector layout; when
// it does not hold, every call_indirect takes the helper.
bool table_layout_known() {
  static const bool known = [] {
    if (sizeof(std::vector<u64>) != 3 * sizeof(u64*)) return false;
    const std::vector<u64> v(3);
    std::array<u64*, 3> words{};
    // Its object representation, read as bytes (allowed for any object type).
    std::memcpy(words.data(), reinterpret_cast<const unsigned char*>(&v), sizeof words);
    return words[0] == v.data() && words[1] == v.data() + v.size();
  }();
  return known;
}
// Where `elements` is in a TableInst (not standard-layout for offsetof: TableType's members).
std::size_t table_elements_offset() {
  static const std::size_t offset = [] {
    const TableInst t;
    return static_cast<std::size_t>(reinterpret_cast<const char*>(&t.elements) - reinterpret_cast<const char*>(&t));
  }();
  return offset;
}

// Machine code reads a MemoryInst's `base` and `size` at their offsetof.
static_assert(std::is_standard_layout_v<MemoryInst>);

class FunctionEmitter {
 public:
  // `fn` is the function's entry (the Entry prototype) or its body (ModuleEmitter::body: the
  // arguments and the result in registers).
  FunctionEmitter(ModuleEmitter& me, u32 defined, const Scan& sc, llvm::Function* fn)
      : me_(me),
        t_(me.t),
        f_(me.funcs[defined]),
        code_(f_.code.data()),
        defined_(defined),
        scan_(sc),
        fn_(fn),
        in_registers_(fn != me.fns[defined]),
        b_(me.ctx),
        osr_(osr_header(me.osr_hint)) {}

  // 1 + the loop header where the function takes on-stack replacement requests (Slot::osr), or
  // 0: tier-up code, at the header the interpreter sampled last (Slot::loop_hint).
  [[nodiscard]] u32 osr() const { return osr_; }

  void emit() {
    fn_->addFnAttr(llvm::Attribute::StrictFP);
    // On a 64-byte boundary (LLVM's x86-64 default is 16): where a call-heavy function starts
    // in its cache line moved fib's time by up to 11% on the AMD EPYC the benchmarks ran on;
    // aligned, the call-heavy workloads ran 2-11% faster (fib, bytecode, strings, hashmap,
    // json) and none slower beyond the noise (docs/compiled-tier.md).
    fn_->setAlignment(llvm::Align(64));
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    fn_->addParamAttr(0, llvm::Attribute::NoAlias);
    fn_->addParamAttr(1, llvm::Attribute::NoAlias);
    b_.setIsFPConstrained(true);
    b_.setDefaultConstrainedExcept(llvm::fp::ebStrict);
    b_.setDefaultConstrainedRounding(llvm::RoundingMode::NearestTiesToEven);
    ctxp_ = fn_->getArg(0);
    auto* entry = llvm::BasicBlock::Create(me_.ctx, "entry", fn_);
    b_.SetInsertPoint(entry);
    // An entry takes fp, and reads the frame-record top from the context, where its caller left
    // it (sync_frame_records). A body takes fp (its caller computes it at the call: frame_at)
    // and its caller's record top, and adds the record itself, so that what its caller keeps
    // across the call is what it keeps anyway, not one more register.
    fp_ = fn_->getArg(1);
    if (in_registers_) {
      fr_ = b_.CreateConstInBoundsGEP1_64(t_.i8, fn_->getArg(2), sizeof(Frame));
    } else {
      fr_ = ctx_load(t_.ptr, offsetof(Ctx, fr));
    }
    slots_.resize(f_.frame_slots);
    for (u32 i = 0; i < f_.frame_slots; ++i) slots_[i] = b_.CreateAlloca(t_.i64);
    fuel_ = b_.CreateAlloca(t_.i64);
    mem_base_ = b_.CreateAlloca(t_.ptr);
    mem_size_ = b_.CreateAlloca(t_.i64);
    trap_out_ = b_.CreateAlloca(t_.i32);
    scratch_ = b_.CreateAlloca(t_.i64);
    find_exn_locals();
    for (u32 i = 0; i < f_.num_params; ++i) {
      if (!in_registers_) {
        b_.CreateStore(b_.CreateLoad(t_.i64, fp_at(i)), slots_[i]);
        continue;
      }
      llvm::Value* arg = fn_->getArg(first_arg() + i);
      b_.CreateStore(arg, slots_[i]);
      // Where the frame must hold the arguments as the interpreter's does: a GC module's
      // collections and exnref locals read them there (gc_spill_frame, find_exn_locals).
      if (me_.cm.module.uses_gc || (i < exn_locals_.size() && exn_locals_[i])) b_.CreateStore(arg, fp_at(i));
    }
    for (u32 i = f_.num_params; i < f_.num_locals; ++i) b_.CreateStore(b_.getInt64(0), slots_[i]);
    for (u32 i = f_.num_params; i < exn_locals_.size(); ++i)
      if (exn_locals_[i]) b_.CreateStore(b_.getInt64(0), fp_at(i));
    if (fuel_in_registers()) {
      b_.CreateStore(fn_->getArg(3), fuel_);
    } else {
      load_fuel();
    }
    globals_ = invariant(ctx_load(t_.ptr, offsetof(Ctx, globals)));
    load_memory();
    // What every native call checks (native_call) stays the same through an activation: the
    // native stack (calls return to this frame's depth), the frame-record top (calls restore
    // it) and the value-stack room above fp. A function with many call sites reads them once
    // here (tested per site, they were about 60% more IR in CPython's eval loop); one with few
    // reads them at its sites, so that a call that makes none (fib's leaves) does not pay them.
    std::size_t calls = 0;
    for (const Instr& in : scan_.instrs)
      calls += in.op == Op::Call || in.op == Op::CallIndirect || in.op == Op::CallRef ? 1 : 0;
    // (Whole-module code's native calls test Ctx::fr_lim instead: native_call.)
    if (calls > kCallSitesToHoist && !me_.segment_limits) call_checks_ = read_call_checks();

    // The shared exits, so that a trap site costs one edge and one phi entry: `trap` stores the
    // counter and the location (kind << 32 | word) in the context; `status` takes a helper's
    // status with the word: located already (kLocated) -> `unwind`, else a trap here; `unwind`
    // returns a status whose trap is located and whose counter is stored (a callee's).
    cold_ = llvm::MDBuilder(me_.ctx).createBranchWeights(1, 1 << 20);
    trap_bb_ = new_block("trap");
    status_bb_ = new_block("status");
    unwind_bb_ = new_block("unwind");
    {
      llvm::IRBuilderBase::InsertPointGuard g(b_);
      b_.SetInsertPoint(trap_bb_);
      trap_loc_ = b_.CreatePHI(t_.i64, 4);
      store_fuel();
      ctx_store(load_func(me_.cm.module.imported_funcs + defined_), offsetof(Ctx, loc_fn));
      ctx_store(llvm::ConstantPointerNull::get(t_.ptr), offsetof(Ctx, loc_ip));
      ctx_store(b_.CreateTrunc(trap_loc_, t_.i32), offsetof(Ctx, loc_word));
      ret(b_.CreateTrunc(b_.CreateLShr(trap_loc_, 32), t_.i32));
      b_.SetInsertPoint(unwind_bb_);
      unwind_status_ = b_.CreatePHI(t_.i32, 4);
      ret(b_.CreateAnd(unwind_status_, u32c(0xFF)));
      b_.SetInsertPoint(status_bb_);
      status_loc_ = b_.CreatePHI(t_.i64, 4);
      llvm::Value* st = b_.CreateTrunc(b_.CreateLShr(status_loc_, 32), t_.i32);
      b_.CreateCondBr(b_.CreateICmpUGE(st, u32c(kLocated)), unwind_bb_, trap_bb_);
      unwind_status_->addIncoming(st, status_bb_);
      trap_loc_->addIncoming(status_loc_, status_bb_);
    }

    for (u32 tw : scan_.targets) block_at(tw);
    for (const CatchClause& c : f_.clauses) block_at(c.target);  // where handlers land (dispatch)
    if (osr_ != 0) emit_osr_entry();
    bool open = true;  // the current block can fall into the next instruction
    for (const Instr& in : scan_.instrs) {
      if (auto it = blocks_.find(in.at); it != blocks_.end()) {
        if (open) b_.CreateBr(it->second);
        b_.SetInsertPoint(it->second);
        forget_bounds();  // a join: what one path checked, another may not have
        open = true;
      } else if (!open) {
        b_.SetInsertPoint(llvm::BasicBlock::Create(me_.ctx, "dead", fn_));
        forget_bounds();
        open = true;
      }
      open = instr(in);
    }
    if (open) b_.CreateUnreachable();  // only dead code can end open (the scan checked the rest)
    sync_frame_records();
  }

 private:
  ModuleEmitter& me_;
  const Types& t_;
  const CompiledFunc& f_;
  const u32* code_;
  u32 defined_;
  const Scan& scan_;
  llvm::Function* fn_;
  bool in_registers_;  // fn_ is the body: arguments and the result in registers
  // A metered body also takes the counter as its third parameter and gives it back, on a normal
  // return, as the third field of its result (ModuleEmitter::body); on any other status it is in
  // Ctx::fuel, as everywhere else.
  [[nodiscard]] bool fuel_in_registers() const { return in_registers_ && me_.metered; }
  [[nodiscard]] unsigned first_arg() const { return fuel_in_registers() ? 4 : 3; }
  llvm::IRBuilder<> b_;
  llvm::Value* ctxp_ = nullptr;
  llvm::Value* fp_ = nullptr;
  // This activation's frame-record top: what Ctx::fr is while it runs, kept in a register (or
  // its spill slot) and written to the context only where something else reads it there.
  llvm::Value* fr_ = nullptr;
  // The calls that set Ctx::fr themselves (or, a body's, take fr_ as an argument):
  // sync_frame_records leaves them alone.
  llvm::SmallPtrSet<llvm::CallInst*, 8> fr_set_;
  llvm::Value* globals_ = nullptr;
  std::vector<llvm::AllocaInst*> slots_;
  llvm::AllocaInst* fuel_ = nullptr;
  llvm::AllocaInst* mem_base_ = nullptr;
  llvm::AllocaInst* mem_size_ = nullptr;
  llvm::AllocaInst* trap_out_ = nullptr;
  llvm::AllocaInst* scratch_ = nullptr;  // a helper's i64 result (slots must not escape: mem2reg)
  llvm::MDNode* cold_ = nullptr;  // branch weights: the first successor is (almost) never taken
  llvm::BasicBlock* trap_bb_ = nullptr;
  llvm::PHINode* trap_loc_ = nullptr;  // kind << 32 | word
  llvm::BasicBlock* status_bb_ = nullptr;
  llvm::PHINode* status_loc_ = nullptr;  // helper status << 32 | word
  llvm::BasicBlock* unwind_bb_ = nullptr;
  llvm::PHINode* unwind_status_ = nullptr;
  std::unordered_map<u32, llvm::BasicBlock*> blocks_;
  // Exception handling: the dispatch block of the current call instruction when a handler region
  // covers it (null otherwise); the regions open at the instruction dispatch_for was last asked
  // about (a sweep in ascending words: indexes into f_.regions, innermost last), the regions in
  // the order the sweep opens them, and each dispatch made so far, by its innermost region.
  llvm::BasicBlock* exn_dispatch_ = nullptr;
  std::vector<u32> open_regions_;
  std::vector<u32> regions_by_begin_;
  std::size_t next_region_ = 0;
  std::unordered_map<u32, llvm::BasicBlock*> dispatches_;
  u32 w_ = 0;  // the current instruction's first word
  u32 osr_ = 0;
  struct CallChecks {
    llvm::Value* room = nullptr;             // value-stack slots from fp to the end
    llvm::Value* no_native_calls = nullptr;  // native stack or frame records exhausted here
  };
  // Call sites above which their checks are read once at entry (emit()).
  static constexpr std::size_t kCallSitesToHoist = 8;
  CallChecks call_checks_;  // read at entry, or empty: read at each site
  CallChecks read_call_checks() {
    CallChecks k;
    llvm::Value* sp = b_.CreateIntrinsic(llvm::Intrinsic::stacksave, {t_.ptr}, {});
    llvm::Value* limit = ctx_load(t_.ptr, offsetof(Ctx, native_limit));
    llvm::Value* fr_end = ctx_load(t_.ptr, offsetof(Ctx, fr_end));
    llvm::Value* stack_end = ctx_load(t_.ptr, offsetof(Ctx, stack_end));
    k.room = b_.CreateLShr(b_.CreateSub(b_.CreatePtrToInt(stack_end, t_.i64), b_.CreatePtrToInt(fp_, t_.i64)),
                           b_.getInt64(3));
    k.no_native_calls = b_.CreateOr(b_.CreateICmpULT(b_.CreatePtrToInt(sp, t_.i64), b_.CreatePtrToInt(limit, t_.i64)),
                                    b_.CreateICmpEQ(fr_, fr_end));
    return k;
  }

  // One header only, not every loop's: each OSR target makes every slot a phi at its header,
  // which made CPython's eval loop 63% more IR (and code generation time) for all of them.
  u32 osr_header(u32 hint) const {
    if (me_.tier_up == nullptr || hint == 0) return 0;
    const std::vector<u32> heads = loop_headers();
    if (!std::binary_search(heads.begin(), heads.end(), hint - 1)) return 0;
    // Metered code continues past the header's FuelCheck (the interpreter did it): that must be
    // where the next instruction starts.
    if (me_.metered) {
      const u32 next = osr_target(hint);
      const bool starts = std::ranges::any_of(scan_.instrs, [next](const Instr& in) { return in.at == next; });
      if (op_of_word(code_[hint - 1], true) != Op::FuelCheck || !starts) return 0;
    }
    return hint;
  }
  // Where an on-stack replacement at 1 + header `osr` continues: the header itself, or in metered
  // code the instruction after its FuelCheck, which the interpreter's JUMP has done already
  // (L_loop_sample samples only after it).
  u32 osr_target(u32 osr) const { return osr - 1 + (me_.metered ? layout::FuelCheck::kWords : 0); }

  // The targets of backward branches: where the interpreter's loop samples are taken
  // (L_loop_sample, with ip at the target), so where an interpreted activation can continue.
  std::vector<u32> loop_headers() const {
    std::vector<u32> heads;
    for (const Instr& in : scan_.instrs)
      for_each_target(in.op, code_, in.at, [&](u32 t) {
        if (t < in.at) heads.push_back(t);
      });
    std::sort(heads.begin(), heads.end());
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    return heads;
  }
  // On-stack replacement: when Ctx::osr_at is set (to osr_), the activation's every slot comes
  // from the frame (the interpreter's values at the loop header) instead of parameters and
  // zeroed locals, and control goes to that loop header (osr_target). Metered code's counter
  // comes from the context, as at every entry: the interpreter's balance at that point.
  void emit_osr_entry() {
    auto* body = new_block("body");
    auto* osr = new_block("osr");
    llvm::Value* at = ctx_load(t_.i32, offsetof(Ctx, osr_at));
    b_.CreateCondBr(b_.CreateICmpNE(at, u32c(0)), osr, body, cold_);
    b_.SetInsertPoint(osr);
    ctx_store(u32c(0), offsetof(Ctx, osr_at));  // calls made from here on are calls
    for (u32 i = 0; i < f_.frame_slots; ++i) b_.CreateStore(b_.CreateLoad(t_.i64, fp_at(i)), slots_[i]);
    // The interpreter asks only at osr_ (Slot::osr), so `at` is osr_ here.
    b_.CreateBr(block_at(osr_target(osr_)));
    b_.SetInsertPoint(body);
  }

  // Ctx::fr is written only where it is read: a native call between compiled bodies passes the
  // callee's record top in a register and restores nothing (each keeps its own, fr_), so after
  // any call the context may hold a callee's deeper value. Every other call that takes the
  // context (a helper, which may enter the interpreter or a host function and push frame
  // records from Ctx::fr; a tail call, whose callee takes over this record) gets fr_ stored
  // just before it. Calls that set it themselves are in fr_set_.
  void sync_frame_records() {
    std::vector<llvm::CallInst*> calls;
    for (llvm::BasicBlock& bb : *fn_)
      for (llvm::Instruction& in : bb)
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(&in); call != nullptr && !fr_set_.contains(call) &&
                                                               llvm::is_contained(call->args(), ctxp_))
          calls.push_back(call);
    for (llvm::CallInst* call : calls) {
      b_.SetInsertPoint(call);
      ctx_store(fr_, offsetof(Ctx, fr));
    }
  }

  // ---- helpers
  llvm::BasicBlock* block_at(u32 word) {
    auto [it, fresh] = blocks_.try_emplace(word, nullptr);
    if (fresh) it->second = llvm::BasicBlock::Create(me_.ctx, "w" + std::to_string(word), fn_);
    return it->second;
  }
  llvm::BasicBlock* new_block(const char* name) { return llvm::BasicBlock::Create(me_.ctx, name, fn_); }
  // Returns `status` (i32) and, on a normal return, the result slot (i64; 0 when there is none).
  void ret(llvm::Value* status, llvm::Value* value = nullptr, llvm::Value* fuel = nullptr) {
    llvm::Value* r = entry_result(b_, status, value != nullptr ? value : b_.getInt64(0));
    if (fuel_in_registers()) {
      llvm::Value* body_r = llvm::PoisonValue::get(fn_->getReturnType());
      body_r = b_.CreateInsertValue(body_r, status, 0);
      body_r = b_.CreateInsertValue(body_r, b_.CreateExtractValue(r, 1), 1);
      r = b_.CreateInsertValue(body_r, fuel != nullptr ? fuel : b_.getInt64(0), 2);
    }
    b_.CreateRet(r);
  }
  // A normal return's status, 0, defined by an instruction of its own where the function returns.
  // As a constant it is merged (the returns share one block) and CSE'd with the function's other
  // zeros into one register defined at entry, which a function that calls in a loop then kept in
  // a stack slot across every call (a store at entry, a load at each return: fib's ahead-of-time
  // code was slower than its tier-up code, whose entry branch happened to avoid the merge).
  llvm::Value* ok_status() {
#if defined(__x86_64__)
    auto* ty = llvm::FunctionType::get(t_.i32, false);
    return b_.CreateCall(ty, llvm::InlineAsm::get(ty, "xorl $0, $0", "=r,~{flags}", /*hasSideEffects=*/false));
#else
    return u32c(0);
#endif
  }
  llvm::Value* fp_at(u32 slot) { return b_.CreateConstInBoundsGEP1_64(t_.i64, fp_, slot); }
  // fp_at(base) as a call's frame argument, computed where the call is: as a plain address LLVM
  // hoists it out of a loop and keeps it in a register of its own across every call there (one
  // more callee-saved register to save in fib's loop).
  llvm::Value* frame_at(u32 base) {
#if defined(__x86_64__)
    if (base != 0) {
      auto* ty = llvm::FunctionType::get(t_.ptr, {t_.ptr}, false);
      const std::string lea = "leaq " + std::to_string(u64{base} * sizeof(u64)) + "($1), $0";
      return b_.CreateCall(ty, llvm::InlineAsm::get(ty, lea, "=r,r", /*hasSideEffects=*/false), {fp_});
    }
#endif
    return fp_at(base);
  }
  llvm::Value* ctx_field(std::size_t off) { return b_.CreateConstInBoundsGEP1_64(t_.i8, ctxp_, off); }
  llvm::Value* ctx_load(llvm::Type* ty, std::size_t off) { return b_.CreateLoad(ty, ctx_field(off)); }
  void ctx_store(llvm::Value* v, std::size_t off) { b_.CreateStore(v, ctx_field(off)); }
  llvm::Value* invariant(llvm::Value* v) {
    if (auto* li = llvm::dyn_cast<llvm::LoadInst>(v))
      li->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(me_.ctx, {}));
    return v;
  }
  llvm::Value* load_func(u32 funcidx) {
    // The table is read where the function is needed (helper calls, the trap exit: cold paths),
    // not once at entry, which kept its address in a callee-saved register for the whole body.
    llvm::Value* funcs = invariant(ctx_load(t_.ptr, offsetof(Ctx, funcs)));
    return invariant(b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.ptr, funcs, funcidx)));
  }
  // Memory 0's base and size at entry. The base never moves while the instance lives (growth
  // commits pages of one reservation: memory.cpp), so after a call or memory.grow only the size
  // is read again.
  void load_memory() {
    b_.CreateStore(invariant(b_.CreateLoad(t_.ptr, invariant(ctx_load(t_.ptr, offsetof(Ctx, mem_base))))), mem_base_);
    load_other_memories();
    reload_memory();
  }
  void reload_memory() {
    b_.CreateStore(b_.CreateLoad(t_.i64, ctx_load(t_.ptr, offsetof(Ctx, mem_size))), mem_size_);
    for (const OtherMemory& m : memories_)
      b_.CreateStore(b_.CreateLoad(t_.i64, b_.CreateConstInBoundsGEP1_64(t_.i8, m.inst, offsetof(MemoryInst, size))),
                     m.size);
  }
  // The counter between this code and the context (at calls, helpers, traps and returns).
  // Unmetered code has none: Ctx::fuel passes through it untouched (no helper charges it
  // then), so a function keeps no register for it and a call stores and loads nothing.
  void store_fuel() {
    if (me_.metered) ctx_store(b_.CreateLoad(t_.i64, fuel_), offsetof(Ctx, fuel));
  }
  void load_fuel() {
    if (me_.metered) b_.CreateStore(ctx_load(t_.i64, offsetof(Ctx, fuel)), fuel_);
  }
  void charge(u32 cost) {
    if (!me_.metered || cost == 0) return;
    b_.CreateStore(b_.CreateSub(b_.CreateLoad(t_.i64, fuel_), b_.getInt64(cost)), fuel_);
  }

  // Slots: 64-bit, i32/f32 values zero-extended (the interpreter's invariant).
  llvm::Value* slot(u32 s) { return b_.CreateLoad(t_.i64, slots_[s]); }
  void set_slot(u32 s, llvm::Value* v64) {
    b_.CreateStore(v64, slots_[s]);
    if (s < exn_locals_.size() && exn_locals_[s]) b_.CreateStore(v64, fp_at(s));  // find_exn_locals
    std::erase_if(bounds_, [s](const Bound& k) { return k.slot == s; });
  }
  llvm::Type* ty(VT v) {
    switch (v) {
      case VT::I32: return t_.i32;
      case VT::I64: return t_.i64;
      case VT::F32: return t_.f32;
      case VT::F64: return t_.f64;
    }
    return t_.i64;
  }
  llvm::Value* from_bits(llvm::Value* bits64, VT v) {
    switch (v) {
      case VT::I32: return b_.CreateTrunc(bits64, t_.i32);
      case VT::I64: return bits64;
      case VT::F32: return b_.CreateBitCast(b_.CreateTrunc(bits64, t_.i32), t_.f32);
      case VT::F64: return b_.CreateBitCast(bits64, t_.f64);
    }
    return bits64;
  }
  llvm::Value* to_bits(llvm::Value* v, VT vt) {
    switch (vt) {
      case VT::I32: return b_.CreateZExt(v, t_.i64);
      case VT::I64: return v;
      case VT::F32: return b_.CreateZExt(b_.CreateBitCast(v, t_.i32), t_.i64);
      case VT::F64: return b_.CreateBitCast(v, t_.i64);
    }
    return v;
  }
  llvm::Value* get(u32 s, VT v) { return from_bits(slot(s), v); }
  void put(u32 s, llvm::Value* v, VT vt) { set_slot(s, to_bits(v, vt)); }
  llvm::Value* u32c(u32 v) { return b_.getInt32(v); }

  // Traps: to the shared exit with (kind, this instruction's word); cold.
  llvm::Value* location(llvm::Value* kind32) {
    return b_.CreateOr(b_.CreateShl(b_.CreateZExt(kind32, t_.i64), 32), b_.getInt64(w_));
  }
  llvm::Value* location(TrapKind k) { return b_.getInt64((static_cast<u64>(k) << 32) | w_); }
  void trap_if(llvm::Value* cond, llvm::Value* loc) {
    auto* cont = new_block("ok");
    b_.CreateCondBr(cond, trap_bb_, cont, cold_);
    trap_loc_->addIncoming(loc, b_.GetInsertBlock());
    b_.SetInsertPoint(cont);
  }
  void trap_if(llvm::Value* cond, TrapKind k) { trap_if(cond, location(k)); }
  void trap(TrapKind k) {
    trap_loc_->addIncoming(location(k), b_.GetInsertBlock());
    b_.CreateBr(trap_bb_);
  }
  // REFUEL(visible) at this instruction.
  void refuel(i64 visible) {
    store_fuel();
    llvm::Value* st = b_.CreateCall(me_.refuel, {ctxp_, b_.getInt64(static_cast<u64>(visible))});
    load_fuel();
    trap_if(b_.CreateICmpNE(st, u32c(0)), location(st));
  }
  // if (fuel - visible <= 0) refuel(visible)
  void fuel_check(i64 visible) {
    auto* slow = new_block("refuel");
    auto* cont = new_block("fuelled");
    llvm::Value* f = b_.CreateLoad(t_.i64, fuel_);
    llvm::Value* low = b_.CreateICmpSLE(b_.CreateSub(f, b_.getInt64(static_cast<u64>(visible))), b_.getInt64(0));
    b_.CreateCondBr(low, slow, cont, cold_);
    b_.SetInsertPoint(slow);
    refuel(visible);
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
  }

  // A conditional branch: taken -> target; not taken -> charge the fall-through word, go on.
  void cond_branch(llvm::Value* taken, u32 off, u32 fall_word) {
    llvm::BasicBlock* target = block_at(w_ + off);
    auto* fall = new_block("fall");
    b_.CreateCondBr(taken, target, fall);
    b_.SetInsertPoint(fall);
    if (me_.metered) charge(code_[w_ + fall_word]);
  }

  // ---- memory
  // Bounds already checked on the straight-line path to here: an access needs no check when an
  // earlier one proved its end in bounds. Memory never shrinks, so a proof holds until its
  // address slot is written or paths join. `slot + imm` (u32) + offsets below `end` are in
  // bounds (imm 0 and not `add` for a plain address); `const_end_` bounds every proven end.
  struct Bound {
    u32 slot;
    u32 imm;
    bool add;
    u64 end;
  };
  static constexpr std::size_t kMaxBounds = 16;
  std::vector<Bound> bounds_;
  u64 const_end_ = 0;
  void forget_bounds() {
    bounds_.clear();
    const_end_ = 0;
  }
  // The address of an access of `size` bytes at ea64 = (slot [+ imm]) + offset, or at the
  // constant ea64 when slot is absent; checked unless proven.
  llvm::Value* address(llvm::Value* ea64, u32 size, std::optional<u32> slot, u32 imm, bool add, u32 offset) {
    if (redirect_) return redirected(ea64, size, slot, imm, add, offset);
    const u64 end = u64{offset} + size;
    bool proven = false;
    if (!slot) {
      proven = end + llvm::cast<llvm::ConstantInt>(ea64)->getZExtValue() <= const_end_;
      if (!proven) const_end_ = std::max(const_end_, end + llvm::cast<llvm::ConstantInt>(ea64)->getZExtValue());
    } else {
      auto it = std::find_if(bounds_.begin(), bounds_.end(),
                             [&](const Bound& k) { return k.slot == *slot && k.imm == imm && k.add == add; });
      proven = it != bounds_.end() && end <= it->end;
      if (!proven) {
        if (it != bounds_.end()) {
          it->end = end;
        } else {
          if (bounds_.size() == kMaxBounds) bounds_.erase(bounds_.begin());
          bounds_.push_back({*slot, imm, add, end});
        }
        const_end_ = std::max(const_end_, end);
      }
    }
    if (!proven) {
      llvm::Value* last = b_.CreateAdd(ea64, b_.getInt64(size));
      llvm::Value* out = b_.CreateICmpUGT(last, b_.CreateLoad(t_.i64, mem_size_));
      tag_minimum(out, 0);
      trap_if(out, TrapKind::OutOfBoundsMemoryAccess);
    }
    return b_.CreateInBoundsGEP(t_.i8, b_.CreateLoad(t_.ptr, mem_base_), ea64);
  }
  // Tags a bounds check `end > size` of i32 memory `mem` with the memory's minimum size in bytes,
  // the least it can ever have: minimum_bounds.hpp's pass folds the check when `end` is bounded
  // by it whatever the values it comes from (a static table indexed by a masked byte).
  void tag_minimum(llvm::Value* check, u32 mem) {
    const MemoryType& type = me_.cm.module.memories.at(mem);
    if (type.limits.is64 || type.limits.min == 0) return;
    auto* bytes = llvm::ConstantAsMetadata::get(b_.getInt64(type.limits.min * kPageSize));
    llvm::cast<llvm::Instruction>(check)->setMetadata(me_.ctx.getMDKindID(kMinimumBytesKind),
                                                      llvm::MDNode::get(me_.ctx, {bytes}));
  }
  struct Where {
    llvm::Value* ea64;
    std::optional<u32> slot;
    u32 imm = 0;
    bool add = false;
    u32 offset = 0;
  };
  llvm::Value* address(const Where& w, u32 size) { return address(w.ea64, size, w.slot, w.imm, w.add, w.offset); }
  // Loads and stores of every width (internal_code.hpp's mem_access: bytes, sign, slot width).
  void load(Op base_op, u32 dst, const Where& where) {
    const MemAccess& a = mem_access(base_op);
    llvm::Type* mem = b_.getIntNTy(8 * a.bytes);
    llvm::Value* v = b_.CreateAlignedLoad(mem, address(where, a.bytes), llvm::MaybeAlign(1));
    llvm::Type* rt = a.wide ? t_.i64 : t_.i32;
    if (mem != rt) v = a.sign ? b_.CreateSExt(v, rt) : b_.CreateZExt(v, rt);
    put(dst, v, a.wide ? VT::I64 : VT::I32);
  }
  void store(Op base_op, u32 src, const Where& where) {
    const MemAccess& a = mem_access(base_op);
    llvm::Value* ptr = address(where, a.bytes);
    b_.CreateAlignedStore(b_.CreateTrunc(slot(src), b_.getIntNTy(8 * a.bytes)), ptr, llvm::MaybeAlign(1));
  }
  llvm::Value* ea(u32 addr_slot, u32 offset) {
    return b_.CreateAdd(b_.CreateZExt(get(addr_slot, VT::I32), t_.i64), b_.getInt64(offset));
  }
  llvm::Value* ea_add(u32 base_slot, u32 imm, u32 offset) {
    llvm::Value* a32 = b_.CreateAdd(get(base_slot, VT::I32), u32c(imm));
    return b_.CreateAdd(b_.CreateZExt(a32, t_.i64), b_.getInt64(offset));
  }

  // ---- memories other than an i32 memory 0 (the MultiMemory ops: multi-memory, memory64)
  // Each memory the function accesses or sizes is read through its MemoryInst: the base once at
  // entry (it never moves), the size in an alloca reloaded where memory 0's is (after calls and
  // memory.grow). Bulk operations and grow call helpers that do what the interpreter's handlers do.
  struct OtherMemory {
    u32 index;
    bool is64;
    llvm::Value* inst;
    llvm::Value* base;
    llvm::AllocaInst* size;
  };
  std::vector<OtherMemory> memories_;
  // Between MemAt and MemRestore (scan() checked that one plain load or store lies between): the
  // bytes MemAt checked, the slot it zeroed (the access's address) and their width. The
  // interpreter points its memory registers there; the access here addresses from `ptr`.
  struct Redirect {
    llvm::Value* ptr;
    u32 slot;
    u32 width;
  };
  std::optional<Redirect> redirect_;
  void load_other_memories() {
    std::vector<u32> used;
    for (const Instr& in : scan_.instrs) {
      if (info(in.op).family != OpFamily::MultiMemory) continue;
      visit_instruction(in.op, code_ + in.at, [&]<Op O>(const auto& a) {
        if constexpr (O == Op::MemAt || O == Op::MemorySizeM) used.push_back(a.mem);
        return true;
      });
    }
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    if (used.empty()) return;
    llvm::Value* all = invariant(ctx_load(t_.ptr, offsetof(Ctx, memories)));
    for (u32 m : used) {
      OtherMemory om{m, me_.cm.module.memories.at(m).limits.is64, nullptr, nullptr, b_.CreateAlloca(t_.i64)};
      om.inst = invariant(b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.ptr, all, m)));
      om.base = invariant(b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.i8, om.inst, offsetof(MemoryInst, base))));
      memories_.push_back(om);
    }
  }
  const OtherMemory& other_memory(u32 m) const {
    return *std::ranges::find_if(memories_, [m](const OtherMemory& om) { return om.index == m; });
  }
  // MemAt: `addr + offset + width <= size` in exact arithmetic (an i32 memory's sum fits in 64
  // bits; a 64-bit memory's is checked with llvm.uadd.with.overflow), else the trap here, as
  // the interpreter's `ea = addr + offset` (overflow), `ea > size || width > size - ea`.
  void mem_at(u32 dst, u32 addr_slot, u32 mem, u64 offset, u32 width) {
    const OtherMemory& m = other_memory(mem);
    llvm::Value* addr = m.is64 ? slot(addr_slot) : b_.CreateZExt(get(addr_slot, VT::I32), t_.i64);
    llvm::Value* size = b_.CreateLoad(t_.i64, m.size);
    if (offset > ~u64{0} - width) {
      trap_if(b_.getTrue(), TrapKind::OutOfBoundsMemoryAccess);  // past 2^64 whatever the address
    } else if (!m.is64) {
      llvm::Value* out = b_.CreateICmpUGT(b_.CreateAdd(addr, b_.getInt64(offset + width)), size);
      tag_minimum(out, mem);
      trap_if(out, TrapKind::OutOfBoundsMemoryAccess);
    } else {
      llvm::Value* sum = b_.CreateBinaryIntrinsic(llvm::Intrinsic::uadd_with_overflow, addr, b_.getInt64(offset + width));
      llvm::Value* out = b_.CreateOr(b_.CreateExtractValue(sum, 1), b_.CreateICmpUGT(b_.CreateExtractValue(sum, 0), size));
      trap_if(out, TrapKind::OutOfBoundsMemoryAccess);
    }
    set_slot(dst, b_.getInt64(0));
    redirect_ = Redirect{b_.CreateInBoundsGEP(t_.i8, m.base, b_.CreateAdd(addr, b_.getInt64(offset))), dst, width};
  }
  // The access after MemAt: at `ea64` within the checked bytes (the translator's is MemAt's zeroed
  // slot at offset 0, which needs no check; anything else is checked against the width).
  llvm::Value* redirected(llvm::Value* ea64, u32 size, std::optional<u32> slot, u32 imm, bool add, u32 offset) {
    if (slot == redirect_->slot && imm == 0 && !add && offset == 0 && size <= redirect_->width) return redirect_->ptr;
    trap_if(b_.CreateICmpUGT(b_.CreateAdd(ea64, b_.getInt64(size)), b_.getInt64(redirect_->width)),
            TrapKind::OutOfBoundsMemoryAccess);
    return b_.CreateInBoundsGEP(t_.i8, redirect_->ptr, ea64);
  }
  template <Op O, class A>
  void emit_other_memory(const A& a) {
    const Types& t = t_;
    if constexpr (O == Op::MemAt) {
      mem_at(a.dst, a.addr, a.mem, a.offset, a.width);
    } else if constexpr (O == Op::MemRestore) {
      redirect_.reset();
    } else if constexpr (O == Op::MemorySizeM) {
      set_slot(a.dst, b_.CreateUDiv(b_.CreateLoad(t.i64, other_memory(a.mem).size), b_.getInt64(kPageSize)));
    } else if constexpr (O == Op::MemoryGrowM) {
      set_slot(a.dst, b_.CreateCall(me_.helper("sprawling_jit_memory_grow_m", t.i64, {t.ptr, t.i32, t.i64}),
                                    {ctxp_, u32c(a.mem), slot(a.delta)}));
      reload_memory();
    } else if constexpr (O == Op::MemoryFillM) {
      call_status("sprawling_jit_memory_fill_m", {t.ptr, t.i32, t.i64, t.i32, t.i64},
                  {ctxp_, u32c(a.mem), slot(a.d), i32s(a.val), slot(a.n)});
    } else if constexpr (O == Op::MemoryCopyM) {
      call_status("sprawling_jit_memory_copy_m", {t.ptr, t.i32, t.i32, t.i64, t.i64, t.i64},
                  {ctxp_, u32c(a.dst_mem), u32c(a.src_mem), slot(a.d), slot(a.s), slot(a.n)});
    } else if constexpr (O == Op::MemoryInitM) {
      call_status("sprawling_jit_memory_init_m", {t.ptr, t.i32, t.i32, t.i64, t.i32, t.i32},
                  {ctxp_, u32c(a.data), u32c(a.mem), slot(a.d), i32s(a.s), i32s(a.n)});
    } else {
      static_assert(!handled(O), "handled() admits a MultiMemory op emit_other_memory does not emit");
    }
  }

  // Exnref locals live in the frame too, as the interpreter keeps them: each write is stored
  // through to its slot at fp (zeroed at entry). The heap's collections read the value stack
  // (every frame up to the allocating one) and compiled frames' registers and stack
  // conservatively; a local LLVM found dead would otherwise free an exception the interpreter
  // keeps until the local is written again, and a store cap would be reached on one tier only.
  std::vector<bool> exn_locals_;  // by slot: the local (or parameter) is an exnref
  void find_exn_locals() {
    const Module& m = me_.cm.module;
    std::vector<ValType> types(m.func_type(m.imported_funcs + defined_).params);
    const std::vector<ValType>& declared = m.code[defined_].locals;
    types.insert(types.end(), declared.begin(), declared.end());
    std::vector<bool> mark;
    bool any = false;
    for (const ValType t : types) {
      const bool exn = t.is_ref() && (t.heap_byte() == ValType::kExn || t.heap_byte() == ValType::kNoExn);
      any = any || exn;
      for (u32 k = 0; k < value_slots(t); ++k) mark.push_back(exn);
    }
    if (any && mark.size() <= f_.num_locals) exn_locals_ = std::move(mark);
  }

  // ---- exception handling: a throw (sprawling_jit_throw*) leaves the exception pending in the
  // store and returns the status UncaughtException; so does a call whose callee let one out
  // (located at its throw, the counter stored). Inside a handler region, that status goes to the
  // region's dispatch block, which tests the clauses in find_handler's order (unwind.cpp) and
  // continues at the first that takes it, its values and exnref in the clause's slots; with no
  // clause taking it (or outside every region) the function returns the status, and whoever
  // called it goes on unwinding (a compiled caller's own dispatch, or the interpreter's JIT_ENTER).
  // The clauses that see an exception leaving the instruction at `word`, in the order
  // find_handler tests them (regions innermost first, delegates skipping to their target), with
  // the innermost region around it (kNone: none). Asked in ascending words: regions are nested or
  // disjoint (scan), so the ones around `word` are a stack, innermost first in f_.regions (a
  // region closes before the one around it) as find_handler meets them.
  static constexpr u32 kNone = ~u32{0};
  std::vector<u32> clauses_at(u32 word, u32& innermost) {
    if (regions_by_begin_.empty() && !f_.regions.empty()) {
      regions_by_begin_.resize(f_.regions.size());
      for (u32 i = 0; i < regions_by_begin_.size(); ++i) regions_by_begin_[i] = i;
      std::ranges::sort(regions_by_begin_, [&](u32 a, u32 b) {
        const HandlerRegion& x = f_.regions[a];
        const HandlerRegion& y = f_.regions[b];
        // The outer one first; of two over the same words, the one closed later (find_handler's
        // order puts the one closed first inside).
        if (x.begin != y.begin) return x.begin < y.begin;
        return x.end != y.end ? x.end > y.end : a > b;
      });
    }
    while (!open_regions_.empty() && f_.regions[open_regions_.back()].end <= word) open_regions_.pop_back();
    for (; next_region_ < regions_by_begin_.size() && f_.regions[regions_by_begin_[next_region_]].begin <= word;
         ++next_region_) {
      if (f_.regions[regions_by_begin_[next_region_]].end > word) open_regions_.push_back(regions_by_begin_[next_region_]);
    }
    std::vector<u32> out;
    innermost = open_regions_.empty() ? kNone : open_regions_.back();
    if (innermost != kNone && dispatches_.contains(innermost)) return out;  // known: the caller has it
    u32 skip_to = HandlerRegion::kNotDelegate;
    for (auto at = open_regions_.rbegin(); at != open_regions_.rend(); ++at) {
      const HandlerRegion& r = f_.regions[*at];
      if (skip_to != HandlerRegion::kNotDelegate) {
        if (r.id != skip_to) continue;
        skip_to = HandlerRegion::kNotDelegate;
      }
      if (r.delegate_to == HandlerRegion::kToCaller) break;
      if (r.delegate_to != HandlerRegion::kNotDelegate) {
        skip_to = r.delegate_to;
        continue;
      }
      for (u32 k = 0; k < r.clause_count; ++k) {
        out.push_back(r.first_clause + k);
        if (f_.clauses[r.first_clause + k].tag == CatchClause::kAnyTag) return out;  // takes every exception
      }
    }
    return out;
  }
  // The dispatch block for an exception leaving the instruction at `word` (null: no clause sees
  // it, the status leaves the function). Entered with the exception pending, located, and the
  // counter in the context; shared by every instruction of the same innermost region.
  llvm::BasicBlock* dispatch_for(u32 word) {
    u32 innermost = kNone;
    const std::vector<u32> clauses = clauses_at(word, innermost);
    if (innermost == kNone) return nullptr;
    if (auto it = dispatches_.find(innermost); it != dispatches_.end()) return it->second;
    if (clauses.empty()) {
      dispatches_.emplace(innermost, nullptr);
      return nullptr;
    }
    llvm::IRBuilderBase::InsertPointGuard g(b_);
    auto* bb = new_block("exn_dispatch");
    dispatches_.emplace(innermost, bb);
    b_.SetInsertPoint(bb);
    load_fuel();
    const Module& m = me_.cm.module;
    llvm::FunctionCallee catch_fn = me_.helper("sprawling_jit_catch", t_.i64, {t_.ptr, t_.i32, t_.ptr});
    for (u32 k : clauses) {
      const CatchClause& c = f_.clauses[k];
      const u32 n = c.tag == CatchClause::kAnyTag ? 0 : value_slots(m.types[m.tags[c.tag]].params);
      llvm::Value* values =
          c.values != CatchClause::kNoSlot ? fp_at(c.values) : llvm::ConstantPointerNull::get(t_.ptr);
      llvm::Value* exn = b_.CreateCall(catch_fn, {ctxp_, u32c(c.tag), values});
      auto* caught = new_block("caught");
      auto* next = new_block("not_caught");
      b_.CreateCondBr(b_.CreateICmpNE(exn, b_.getInt64(0)), caught, next);
      b_.SetInsertPoint(caught);
      if (c.values != CatchClause::kNoSlot)
        for (u32 i = 0; i < n; ++i) set_slot(c.values + i, b_.CreateLoad(t_.i64, fp_at(c.values + i)));
      if (c.exn != CatchClause::kNoSlot) set_slot(c.exn, exn);
      b_.CreateBr(block_at(c.target));
      b_.SetInsertPoint(next);
    }
    // No clause of this function takes it: the status leaves (the counter is in the context).
    unwind_status_->addIncoming(u32c(static_cast<u32>(TrapKind::UncaughtException)), b_.GetInsertBlock());
    b_.CreateBr(unwind_bb_);
    return bb;
  }
  // A throw's status: UncaughtException (the exception pending) to this instruction's handlers,
  // located here, or out of the function; any other status is a trap here.
  void throw_status(llvm::Value* st) {
    llvm::BasicBlock* dispatch = dispatch_for(w_);
    if (dispatch == nullptr) {
      trap_loc_->addIncoming(location(st), b_.GetInsertBlock());
      b_.CreateBr(trap_bb_);
      return;
    }
    auto* thrown = new_block("thrown");
    trap_loc_->addIncoming(location(st), b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpEQ(st, u32c(static_cast<u32>(TrapKind::UncaughtException))), thrown, trap_bb_);
    b_.SetInsertPoint(thrown);
    // Located as the trap exit locates (an exception nobody catches is reported at its throw).
    ctx_store(load_func(me_.cm.module.imported_funcs + defined_), offsetof(Ctx, loc_fn));
    ctx_store(llvm::ConstantPointerNull::get(t_.ptr), offsetof(Ctx, loc_ip));
    ctx_store(u32c(w_), offsetof(Ctx, loc_word));
    b_.CreateBr(dispatch);
  }

  // ---- calls
  void store_args(u32 base, u32 n) {
    // A GC module: the caller's slots too, so that a collection in the callee reads the frame as
    // it would read the interpreter's (gc_spill_frame).
    if (me_.cm.module.uses_gc) gc_spill_frame(base);
    for (u32 i = 0; i < n; ++i) b_.CreateStore(slot(base + i), fp_at(base + i));
  }
  void after_call(u32 base, u32 results, u32 post) {
    load_fuel();
    charge(post);
    for (u32 i = 0; i < results; ++i) set_slot(base + i, b_.CreateLoad(t_.i64, fp_at(base + i)));
    reload_memory();
  }
  // A helper's status: 0 on, kLocated bit -> return it as is, else trap here.
  void helper_status(llvm::Value* st) {
    auto* cont = new_block("call_ok");
    llvm::Value* loc = location(st);
    if (exn_dispatch_ != nullptr) {
      // A call inside a handler region: an exception the callee let out (located there, pending
      // in the store) goes to this call's handlers.
      auto* failed = new_block("call_failed");
      b_.CreateCondBr(b_.CreateICmpNE(st, u32c(0)), failed, cont, cold_);
      b_.SetInsertPoint(failed);
      const u32 exn = static_cast<u32>(TrapKind::UncaughtException) | kLocated;
      b_.CreateCondBr(b_.CreateICmpEQ(st, u32c(exn)), exn_dispatch_, status_bb_);
    } else {
      b_.CreateCondBr(b_.CreateICmpNE(st, u32c(0)), status_bb_, cont, cold_);
    }
    status_loc_->addIncoming(loc, b_.GetInsertBlock());
    b_.SetInsertPoint(cont);
  }
  // The native call of a wasm callee's machine code when every precondition of the interpreter's
  // entry protocol holds (native stack to spare, a frame record and value-stack room for
  // `frame_slots` at slot `base`, metered fuel > 1); otherwise `slow`, where a helper makes the same checks in
  // the same order (stack, then refuel) and traps, refuels or runs the callee as the interpreter
  // would, so one branch guards all. `callee` is an IR function or a loaded entry pointer (null
  // sends every call to `slow`); `entry_cost` the callee's entry FuelCheck cost
  // (FuncInst::entry_fuel). Continues at `join` after a call that returned normally. `body`: the
  // callee is that body (ModuleEmitter::body), called with the arguments in registers (slots
  // base...); returns the call's {status, result}, whose result is the callee's when it
  // returned normally in the block the call was made in (the value's block is the fast path).
  // `body` is the body's prototype (ModuleEmitter::body_type), null for an entry.
  llvm::Value* native_call(llvm::Value* callee, llvm::Value* frame_slots, llvm::Value* entry_cost, u32 base,
                           llvm::BasicBlock* slow, llvm::BasicBlock* join,
                           llvm::FunctionType* body = nullptr) {
    auto* fast = new_block("call_fast");
    llvm::Value* no = nullptr;
    if (me_.segment_limits) {
      // Below Ctx::fr_lim both stacks and the depth limit have room for this call (jit.hpp):
      // a body, or an entry of this instance's code (the same bounds: one ModuleCode).
      no = b_.CreateICmpUGE(fr_, ctx_load(t_.ptr, offsetof(Ctx, fr_lim)));
    } else {
      const CallChecks k = call_checks_.no_native_calls != nullptr ? call_checks_ : read_call_checks();
      no = b_.CreateOr(k.no_native_calls, b_.CreateICmpULT(k.room, b_.CreateAdd(frame_slots, b_.getInt64(base))));
    }
    if (!llvm::isa<llvm::Function>(callee)) no = b_.CreateOr(no, b_.CreateIsNull(callee));
    if (me_.metered) no = b_.CreateOr(no, b_.CreateICmpSLE(b_.CreateLoad(t_.i64, fuel_), b_.getInt64(1)));
    b_.CreateCondBr(no, slow, fast, cold_);
    b_.SetInsertPoint(fast);
    if (me_.metered) b_.CreateStore(b_.CreateSub(b_.CreateLoad(t_.i64, fuel_), entry_cost), fuel_);
    // The callee's frame record: an entry takes it from the context, a body this frame's top in
    // a register (and adds the record itself).
    if (body == nullptr) ctx_store(b_.CreateConstInBoundsGEP1_64(t_.i8, fr_, sizeof(Frame)), offsetof(Ctx, fr));
    // A metered body takes the counter in a register and gives it back in one on a normal
    // return; on any other status it is in the context, where the other paths read it.
    const bool fuel_passed = body != nullptr && me_.metered;
    if (!fuel_passed) store_fuel();
    llvm::CallInst* call = nullptr;
    if (body != nullptr) {
      std::vector<llvm::Value*> args{ctxp_, frame_at(base), fr_};
      if (fuel_passed) args.push_back(b_.CreateLoad(t_.i64, fuel_));
      for (u32 i = 0; args.size() < body->getNumParams(); ++i) args.push_back(slot(base + i));
      call = b_.CreateCall(body, callee, args);
    } else {
      call = b_.CreateCall(t_.wasm_fn, callee, {ctxp_, frame_at(base)});
    }
    call->setTailCallKind(llvm::CallInst::TCK_None);
    fr_set_.insert(call);
    llvm::Value* st = b_.CreateExtractValue(call, 0);
    if (fuel_passed) b_.CreateStore(b_.CreateExtractValue(call, 2), fuel_);  // read on status 0 only
    // Ctx::fr is not restored: this code keeps its own (fr_), and writes it back before whatever
    // reads it (sync_frame_records).
    // A trap in the callee: located and its counter stored by the callee. A tail call the callee
    // left pending (kTailPending): its callee runs at nfp as this call's (sprawling_jit_tail_resume).
    auto* nonzero = new_block("call_status");
    auto* pending = new_block("tail_pending");
    b_.CreateCondBr(b_.CreateICmpNE(st, u32c(0)), nonzero, join, cold_);
    b_.SetInsertPoint(nonzero);
    if (exn_dispatch_ != nullptr) {
      // Inside a handler region: the callee's uncaught exception (located and its counter stored
      // by the callee) goes to this call's handlers.
      auto* failed = new_block("call_failed");
      b_.CreateCondBr(b_.CreateICmpEQ(st, u32c(kTailPending)), pending, failed);
      b_.SetInsertPoint(failed);
      b_.CreateCondBr(b_.CreateICmpEQ(st, u32c(static_cast<u32>(TrapKind::UncaughtException))), exn_dispatch_,
                      unwind_bb_);
    } else {
      b_.CreateCondBr(b_.CreateICmpEQ(st, u32c(kTailPending)), pending, unwind_bb_);
    }
    unwind_status_->addIncoming(st, b_.GetInsertBlock());
    b_.SetInsertPoint(pending);
    llvm::Value* rst =
        b_.CreateCall(me_.helper("sprawling_jit_tail_resume", t_.i32, {t_.ptr, t_.ptr}), {ctxp_, frame_at(base)});
    helper_status(rst);
    if (fuel_passed) load_fuel();  // join continues with the counter in fuel_
    b_.CreateBr(join);
    return call;
  }
  // A call: machine code to machine code directly when the callee is in this IR module; under
  // tier-up, through the callee's slot when its entry is published (each function is its own IR
  // module there); else through sprawling_jit_call.
  void emit_call(u32 funcidx, u32 base, u32 post) {
    const Module& m = me_.cm.module;
    const FuncType& ft = m.func_type(funcidx);
    const u32 np = value_slots(ft.params);  // slots: a v128 takes two
    const u32 nr = value_slots(ft.results);
    llvm::Function* body = funcidx >= m.imported_funcs ? me_.body(funcidx - m.imported_funcs) : nullptr;
    if (body != nullptr) {
      emit_body_call(body, funcidx - m.imported_funcs, base, np, nr, post);
      return;
    }
    store_args(base, np);
    auto* join = new_block("returned");
    auto* slow = new_block("call_slow");
    llvm::Value* callee_code = nullptr;
    if (funcidx >= m.imported_funcs) {
      const u32 d = funcidx - m.imported_funcs;
      if (me_.callee(d) != nullptr) {
        callee_code = me_.fns[d];
      } else if (me_.tier_up != nullptr) {
        // The slot outlives this code (both belong to the module variant's ModuleCode); the
        // entry is published with release once, so an acquire load sees the whole function.
        auto* entry = b_.CreateAlignedLoad(t_.ptr, me_.tier_up_entry_address(b_, d), llvm::Align(8));
        entry->setAtomic(llvm::AtomicOrdering::Acquire);
        callee_code = entry;
      }
    }
    if (callee_code != nullptr) {
      const u32 d = funcidx - m.imported_funcs;
      // frame_slots as FuncInst has it (the unmetered code's), and the metered entry charge:
      // every function was translated before emission (all_code), so both are known here.
      const CompiledFunc& callee = me_.cm.code(d, false);
      const CompiledFunc& callee_v = me_.funcs[d];
      const u64 cost = me_.metered ? static_cast<u64>(layout::FuelCheck::read(callee_v.code.data()).cost) : 0;
      native_call(callee_code, b_.getInt64(callee.frame_slots), b_.getInt64(cost), base, slow, join);
    } else {
      b_.CreateBr(slow);
    }
    b_.SetInsertPoint(slow);
    store_fuel();
    llvm::Value* st = b_.CreateCall(me_.call, {ctxp_, load_func(funcidx), frame_at(base)});
    helper_status(st);
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    after_call(base, nr, post);
  }

  // A direct call of a body of this module (ModuleEmitter::body).
  void emit_body_call(llvm::Function* body, u32 d, u32 base, u32 np, u32 nr, u32 post) {
    const u32 funcidx = me_.cm.module.imported_funcs + d;
    if (me_.cm.module.uses_gc) gc_spill_frame(base);  // as store_args: the callee stores its own
    auto* slow = new_block("call_slow");
    const CompiledFunc& callee = me_.cm.code(d, false);
    const u64 cost = me_.metered ? static_cast<u64>(layout::FuelCheck::read(me_.funcs[d].code.data()).cost) : 0;
    register_call(body, body->getFunctionType(), b_.getInt64(callee.frame_slots), b_.getInt64(cost), base, np, nr,
                  post, slow, [&] { return b_.CreateCall(me_.call, {ctxp_, load_func(funcidx), frame_at(base)}); });
  }
  // The call of a body (ModuleEmitter::body_type `type`; `callee` an IR function or an entry
  // point loaded from a FuncInst) from the current block, whose checks so far branch to `slow`:
  // the arguments and the result in registers when the call is native; the helper path
  // (`slow_call`, made in `slow`: the interpreter's entry protocol, its checks failed) and a tail
  // call left pending pass them through the frame.
  void register_call(llvm::Value* callee, llvm::FunctionType* type, llvm::Value* frame_slots, llvm::Value* cost,
                     u32 base, u32 np, u32 nr, u32 post, llvm::BasicBlock* slow,
                     const std::function<llvm::Value*()>& slow_call) {
    auto* join = new_block("returned");
    auto* fast_done = new_block("call_returned");
    llvm::Value* r = native_call(callee, frame_slots, cost, base, slow, fast_done, type);
    // native_call's pending path branches to fast_done as well: the result is then in the frame.
    b_.SetInsertPoint(slow);
    for (u32 i = 0; i < np; ++i) b_.CreateStore(slot(base + i), fp_at(base + i));
    store_fuel();
    helper_status(slow_call());
    if (me_.metered) load_fuel();  // as native_call leaves it on its paths to fast_done
    llvm::BasicBlock* slow_end = b_.GetInsertBlock();
    llvm::Value* from_frame = nr == 1 ? b_.CreateLoad(t_.i64, fp_at(base)) : nullptr;
    b_.CreateBr(join);
    b_.SetInsertPoint(fast_done);
    // fast_done's predecessors: the call (status 0: the value in a register) and the pending path.
    llvm::Value* value = nullptr;
    if (nr == 1) {
      auto* call_block = llvm::cast<llvm::Instruction>(r)->getParent();
      llvm::PHINode* v = b_.CreatePHI(t_.i64, 2);
      for (llvm::BasicBlock* pred : llvm::predecessors(fast_done)) {
        const llvm::IRBuilderBase::InsertPointGuard g(b_);
        b_.SetInsertPoint(pred->getTerminator());
        v->addIncoming(pred == call_block ? b_.CreateExtractValue(r, 1) : b_.CreateLoad(t_.i64, fp_at(base)), pred);
      }
      value = v;
    }
    llvm::BasicBlock* fast_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    if (nr == 1) {
      llvm::PHINode* v = b_.CreatePHI(t_.i64, 2);
      v->addIncoming(value, fast_end);
      v->addIncoming(from_frame, slow_end);
      value = v;
    }
    charge(post);  // every path to here left the counter in fuel_ (native_call, the slow path)
    if (nr == 1) set_slot(base, value);
    reload_memory();
  }
  // Whether this code's call_indirect and call_ref of a type with `np` argument and `nr` result
  // slots call the callee's register-argument entry point (FuncInst::body): whole-module code,
  // whose functions that may be called so export one when their type fits (ModuleEmitter::calls).
  bool calls_bodies(u32 np, u32 nr) const {
    return me_.segment_limits && me_.calls != nullptr && me_.registers_fit(np, nr) && table_layout_known();
  }

  // call_indirect's and return_call_indirect's callee: the table element, its type (pointer-equal
  // canonical types only), its instance (this one) and its published entry are tested inline;
  // anything else (a trap, another instance, a host function, a structurally equal type of
  // another module, an interpreted callee, a callee not yet resolved in this store) branches to
  // `slow`, whose helper does what the interpreter does. In the block it continues in: as
  // known_callee's. Null when the table's layout is not known here (always the helper).
  struct KnownCallee {
    llvm::Value* entry;
    llvm::Value* frame_slots;
    llvm::Value* cost;
  };
  std::optional<KnownCallee> table_callee(u32 type, u32 table, llvm::Value* element, llvm::BasicBlock* slow,
                                          bool body = false) {
    if (!table_layout_known()) return std::nullopt;
    auto* found = new_block("icall_found");
    auto* typed = new_block("icall_typed");
    llvm::Value* tables = invariant(ctx_load(t_.ptr, offsetof(Ctx, tables)));
    llvm::Value* t = invariant(b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.ptr, tables, table)));
    llvm::Value* elems = b_.CreateConstInBoundsGEP1_64(t_.i8, t, table_elements_offset());
    llvm::Value* begin = b_.CreateLoad(t_.ptr, elems);
    llvm::Value* end = b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.ptr, elems, 1));
    llvm::Value* count =
        b_.CreateLShr(b_.CreateSub(b_.CreatePtrToInt(end, t_.i64), b_.CreatePtrToInt(begin, t_.i64)), 3);
    b_.CreateCondBr(b_.CreateICmpULT(element, count), found, slow);
    b_.SetInsertPoint(found);
    llvm::Value* fi = b_.CreateLoad(t_.ptr, b_.CreateInBoundsGEP(t_.i64, begin, element));
    auto* non_null = new_block("icall_element");
    b_.CreateCondBr(b_.CreateIsNull(fi), slow, non_null, cold_);
    b_.SetInsertPoint(non_null);
    llvm::Value* types = invariant(ctx_load(t_.ptr, offsetof(Ctx, types)));
    llvm::Value* want = invariant(b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.ptr, types, type)));
    llvm::Value* have = b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.i8, fi, offsetof(FuncInst, type)));
    b_.CreateCondBr(b_.CreateICmpNE(have, want), slow, typed, cold_);
    b_.SetInsertPoint(typed);
    return known_callee(fi, slow, "icall_known", body);
  }
  // call_indirect: the callee called natively when table_callee's checks pass, else through
  // sprawling_jit_call_indirect.
  void emit_call_indirect(u32 type, u32 table, u32 idx_slot, u32 base, u32 post) {
    const FuncType& ft = me_.cm.module.types[type];
    llvm::Value* element = slot(idx_slot);  // u64: an i32 index zero-extended, a table64 one whole
    const u32 np = value_slots(ft.params);
    const u32 nr = value_slots(ft.results);
    if (calls_bodies(np, nr)) {
      if (me_.cm.module.uses_gc) gc_spill_frame(base);  // as store_args: the callee stores its own
      auto* slow = new_block("call_slow");
      const KnownCallee k = *table_callee(type, table, element, slow, true);
      register_call(k.entry, me_.body_type(np), k.frame_slots, k.cost, base, np, nr, post, slow, [&] {
        return b_.CreateCall(me_.call_indirect, {ctxp_, u32c(type), u32c(table), element, frame_at(base)});
      });
      return;
    }
    store_args(base, np);
    auto* join = new_block("returned");
    auto* slow = new_block("call_slow");
    if (const std::optional<KnownCallee> k = table_callee(type, table, element, slow)) {
      native_call(k->entry, k->frame_slots, k->cost, base, slow, join);
    } else {
      b_.CreateBr(slow);
    }
    b_.SetInsertPoint(slow);
    store_fuel();
    llvm::Value* st = b_.CreateCall(me_.call_indirect, {ctxp_, u32c(type), u32c(table), element, frame_at(base)});
    helper_status(st);
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    after_call(base, value_slots(ft.results), post);
  }
  // A function reference's callee as call_ref and return_call_ref may call natively: this
  // instance's, with machine code published and resolved in this store (FuncInst::native, set by
  // the call helpers the first time they see both); else a branch to `slow`, whose helper sets it
  // when it can. In the block it continues in: the entry (`body`: the register-argument entry
  // point, FuncInst::body), frame size and entry charge.
  KnownCallee known_callee(llvm::Value* fi, llvm::BasicBlock* slow, const char* name, bool body = false) {
    auto* known = new_block(name);
    const int variant = me_.metered ? kMetered : kUnmetered;
    llvm::Value* inst = b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.i8, fi, offsetof(FuncInst, instance)));
    llvm::Value* self = invariant(ctx_load(t_.ptr, offsetof(Ctx, inst)));
    const std::size_t at = (body ? offsetof(FuncInst, body) : offsetof(FuncInst, native)) + variant * sizeof(void*);
    llvm::Value* entry = b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.i8, fi, at));
    b_.CreateCondBr(b_.CreateOr(b_.CreateICmpNE(inst, self), b_.CreateIsNull(entry)), slow, known, cold_);
    b_.SetInsertPoint(known);
    llvm::Value* frame_slots = b_.CreateZExt(
        b_.CreateLoad(t_.i32, b_.CreateConstInBoundsGEP1_64(t_.i8, fi, offsetof(FuncInst, frame_slots))), t_.i64);
    llvm::Value* cost = b_.getInt64(0);
    if (me_.metered) cost = b_.CreateLoad(t_.i64, b_.CreateConstInBoundsGEP1_64(t_.i8, fi, offsetof(FuncInst, entry_fuel)));
    return {entry, frame_slots, cost};
  }


  // call_ref: a null reference traps here; then the FuncInst the reference is is called as
  // call_indirect's element: natively when it is this instance's, resolved in this store and
  // tiered with a published entry, else through sprawling_jit_call (the interpreter's do_call).
  void emit_call_ref(u32 type, u32 ref_slot, u32 base, u32 post) {
    const FuncType& ft = me_.cm.module.types[type];
    llvm::Value* fi = b_.CreateIntToPtr(slot(ref_slot), t_.ptr);
    trap_if(b_.CreateIsNull(fi), TrapKind::NullFunctionReference);
    // A subtype's function type has as many argument and result slots (v128 subtypes only itself).
    const u32 np = value_slots(ft.params);
    const u32 nr = value_slots(ft.results);
    if (calls_bodies(np, nr)) {
      if (me_.cm.module.uses_gc) gc_spill_frame(base);  // as store_args: the callee stores its own
      auto* slow = new_block("call_slow");
      const KnownCallee k = known_callee(fi, slow, "cref_known", true);
      register_call(k.entry, me_.body_type(np), k.frame_slots, k.cost, base, np, nr, post, slow,
                    [&] { return b_.CreateCall(me_.call, {ctxp_, fi, frame_at(base)}); });
      return;
    }
    store_args(base, np);  // slots: a v128 takes two
    auto* join = new_block("returned");
    auto* slow = new_block("call_slow");
    const KnownCallee k = known_callee(fi, slow, "cref_known");
    llvm::Value* entry = k.entry;
    llvm::Value* frame_slots = k.frame_slots;
    llvm::Value* cost = k.cost;
    native_call(entry, frame_slots, cost, base, slow, join);
    b_.SetInsertPoint(slow);
    store_fuel();
    llvm::Value* st = b_.CreateCall(me_.call, {ctxp_, fi, frame_at(base)});
    helper_status(st);
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    after_call(base, value_slots(ft.results), post);
  }

  // ---- tail calls: the interpreter's do_tail_call. The callee takes over this frame: its
  // arguments move to slot 0, no frame record is taken, only the value stack is checked, then
  // refuel at fuel <= 1 and the entry charge (the instruction's 1 is in the segment it ends).
  // A callee with machine code of this module whose checks pass inline is jumped to (musttail:
  // the uniform `u32 (Ctx*, u64*)` prototype allows it, so chains of them run in constant native
  // stack); anything else goes through sprawling_jit_return_call*, which makes the same steps
  // and either runs a host callee here or leaves the callee pending (kTailPending): this
  // function returns that status and its caller runs the callee in this frame, so no tail call
  // nests native frames whichever tier runs each function.

  // The inline path: `callee` (an IR function, or a loaded entry: null goes to `slow`) with
  // `frame_slots` and metered `entry_cost`; its np arguments are slots base...
  void tail_jump(llvm::Value* callee, llvm::Value* frame_slots, llvm::Value* entry_cost, u32 base, u32 np,
                 llvm::BasicBlock* slow) {
    auto* fast = new_block("tail_fast");
    llvm::Value* stack_end = ctx_load(t_.ptr, offsetof(Ctx, stack_end));
    llvm::Value* room = b_.CreateLShr(
        b_.CreateSub(b_.CreatePtrToInt(stack_end, t_.i64), b_.CreatePtrToInt(fp_, t_.i64)), b_.getInt64(3));
    llvm::Value* no = b_.CreateICmpULT(room, frame_slots);
    if (!llvm::isa<llvm::Function>(callee)) no = b_.CreateOr(no, b_.CreateIsNull(callee));
    if (me_.metered) no = b_.CreateOr(no, b_.CreateICmpSLE(b_.CreateLoad(t_.i64, fuel_), b_.getInt64(1)));
    b_.CreateCondBr(no, slow, fast, cold_);
    b_.SetInsertPoint(fast);
    if (me_.metered) b_.CreateStore(b_.CreateSub(b_.CreateLoad(t_.i64, fuel_), entry_cost), fuel_);
    std::vector<llvm::Value*> args;
    for (u32 i = 0; i < np; ++i) args.push_back(slot(base + i));
    for (u32 i = 0; i < np; ++i) b_.CreateStore(args[i], fp_at(i));
    store_fuel();  // locals: the callee zeroes its own
    llvm::CallInst* st = b_.CreateCall(t_.wasm_fn, callee, {ctxp_, fp_});
    st->setTailCallKind(llvm::CallInst::TCK_MustTail);
    b_.CreateRet(st);  // the callee's {status, result} as it is
  }
  // The helper path: its status is 0 (a host callee returned its results at fp: this function
  // returns), kTailPending (returned as this function's status) or a trap of the tail call.
  void tail_helper(llvm::Value* st) {
    load_fuel();
    auto* leave = new_block("tail_leave");
    llvm::Value* loc = location(st);
    b_.CreateCondBr(b_.CreateOr(b_.CreateICmpEQ(st, u32c(0)), b_.CreateICmpEQ(st, u32c(kTailPending))), leave,
                    status_bb_);
    status_loc_->addIncoming(loc, b_.GetInsertBlock());
    b_.SetInsertPoint(leave);
    ret(st);
  }
  llvm::Value* tail_helper_fn() {
    return me_.helper("sprawling_jit_return_call", t_.i32, {t_.ptr, t_.ptr, t_.ptr, t_.ptr}).getCallee();
  }
  void emit_return_call(u32 funcidx, u32 base) {
    const Module& m = me_.cm.module;
    const u32 np = value_slots(m.func_type(funcidx).params);  // slots: a v128 takes two
    auto* slow = new_block("tail_slow");
    llvm::Value* callee_code = nullptr;
    if (funcidx >= m.imported_funcs) {
      const u32 d = funcidx - m.imported_funcs;
      if (me_.callee(d) != nullptr) {
        callee_code = me_.fns[d];
      } else if (me_.tier_up != nullptr) {
        auto* entry = b_.CreateAlignedLoad(t_.ptr, me_.tier_up_entry_address(b_, d), llvm::Align(8));
        entry->setAtomic(llvm::AtomicOrdering::Acquire);
        callee_code = entry;
      }
    }
    if (callee_code != nullptr) {
      const u32 d = funcidx - m.imported_funcs;
      const CompiledFunc& callee = me_.cm.code(d, false);
      const CompiledFunc& callee_v = me_.funcs[d];
      const u64 cost = me_.metered ? static_cast<u64>(layout::FuelCheck::read(callee_v.code.data()).cost) : 0;
      tail_jump(callee_code, b_.getInt64(callee.frame_slots), b_.getInt64(cost), base, np, slow);
    } else {
      b_.CreateBr(slow);
    }
    b_.SetInsertPoint(slow);
    store_args(base, np);
    store_fuel();
    llvm::Value* nfp = b_.CreateConstInBoundsGEP1_64(t_.i64, fp_, base);
    tail_helper(b_.CreateCall(llvm::FunctionType::get(t_.i32, {t_.ptr, t_.ptr, t_.ptr, t_.ptr}, false),
                              tail_helper_fn(), {ctxp_, load_func(funcidx), nfp, fp_}));
  }
  void emit_return_call_indirect(u32 type, u32 table, u32 idx_slot, u32 base) {
    const u32 np = value_slots(me_.cm.module.types[type].params);
    llvm::Value* element = slot(idx_slot);  // u64: an i32 index zero-extended, a table64 one whole
    auto* slow = new_block("tail_slow");
    if (const std::optional<KnownCallee> k = table_callee(type, table, element, slow)) {
      tail_jump(k->entry, k->frame_slots, k->cost, base, np, slow);
    } else {
      b_.CreateBr(slow);
    }
    b_.SetInsertPoint(slow);
    store_args(base, np);
    store_fuel();
    llvm::Value* nfp = b_.CreateConstInBoundsGEP1_64(t_.i64, fp_, base);
    tail_helper(b_.CreateCall(me_.helper("sprawling_jit_return_call_indirect", t_.i32,
                                         {t_.ptr, t_.i32, t_.i32, t_.i64, t_.ptr, t_.ptr}),
                              {ctxp_, u32c(type), u32c(table), element, nfp, fp_}));
  }
  // return_call_ref: the null trap here, then as return_call with the FuncInst the reference is
  // (inline when it is this instance's, resolved in this store, with a published entry).
  void emit_return_call_ref(u32 type, u32 ref_slot, u32 base) {
    const u32 np = value_slots(me_.cm.module.types[type].params);
    llvm::Value* fi = b_.CreateIntToPtr(slot(ref_slot), t_.ptr);
    trap_if(b_.CreateIsNull(fi), TrapKind::NullFunctionReference);
    auto* slow = new_block("tail_slow");
    const KnownCallee k = known_callee(fi, slow, "tref_known");
    llvm::Value* entry = k.entry;
    llvm::Value* frame_slots = k.frame_slots;
    llvm::Value* cost = k.cost;
    tail_jump(entry, frame_slots, cost, base, np, slow);
    b_.SetInsertPoint(slow);
    store_args(base, np);
    store_fuel();
    llvm::Value* nfp = b_.CreateConstInBoundsGEP1_64(t_.i64, fp_, base);
    tail_helper(b_.CreateCall(llvm::FunctionType::get(t_.i32, {t_.ptr, t_.ptr, t_.ptr, t_.ptr}, false),
                              tail_helper_fn(), {ctxp_, fi, nfp, fp_}));
  }

  // ---- numeric
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::Type* ty, std::initializer_list<llvm::Value*> args) {
    return b_.CreateIntrinsic(id, {ty}, args);
  }
  llvm::Value* bool32(llvm::Value* i1) { return b_.CreateZExt(i1, t_.i32); }
  llvm::Value* sign_mask(VT v) {
    return v == VT::F32 ? static_cast<llvm::Value*>(b_.getInt32(0x80000000u)) : b_.getInt64(u64{1} << 63);
  }
  llvm::Value* ibits(llvm::Value* f, VT v) { return b_.CreateBitCast(f, v == VT::F32 ? t_.i32 : t_.i64); }
  llvm::Value* fbits(llvm::Value* i, VT v) { return b_.CreateBitCast(i, ty(v)); }

  // The inline form of a simple operator, or null for the helper.
  llvm::Value* inline_num(const NumShape& s, llvm::Value* a, llvm::Value* b) {
    using O = Opcode;
    llvm::Type* at = ty(s.a);
    const unsigned bits = at->getPrimitiveSizeInBits();
    if (const auto pred = icmp_of(s.opc)) return bool32(b_.CreateICmp(*pred, a, b));
    switch (s.opc) {
      case O::I32Add:
      case O::I64Add: return b_.CreateAdd(a, b);
      case O::I32Sub:
      case O::I64Sub: return b_.CreateSub(a, b);
      case O::I32Mul:
      case O::I64Mul: return b_.CreateMul(a, b);
      case O::I32And:
      case O::I64And: return b_.CreateAnd(a, b);
      case O::I32Or:
      case O::I64Or: return b_.CreateOr(a, b);
      case O::I32Xor:
      case O::I64Xor: return b_.CreateXor(a, b);
      case O::I32Shl:
      case O::I64Shl: return b_.CreateShl(a, b_.CreateAnd(b, llvm::ConstantInt::get(at, bits - 1)));
      case O::I32ShrS:
      case O::I64ShrS: return b_.CreateAShr(a, b_.CreateAnd(b, llvm::ConstantInt::get(at, bits - 1)));
      case O::I32ShrU:
      case O::I64ShrU: return b_.CreateLShr(a, b_.CreateAnd(b, llvm::ConstantInt::get(at, bits - 1)));
      case O::I32Rotl:
      case O::I64Rotl: return intrinsic(llvm::Intrinsic::fshl, at, {a, a, b});
      case O::I32Rotr:
      case O::I64Rotr: return intrinsic(llvm::Intrinsic::fshr, at, {a, a, b});
      case O::I32Eqz:
      case O::I64Eqz: return bool32(b_.CreateICmpEQ(a, llvm::ConstantInt::get(at, 0)));
      case O::I32Clz:
      case O::I64Clz: return intrinsic(llvm::Intrinsic::ctlz, at, {a, b_.getFalse()});
      case O::I32Ctz:
      case O::I64Ctz: return intrinsic(llvm::Intrinsic::cttz, at, {a, b_.getFalse()});
      case O::I32Popcnt:
      case O::I64Popcnt: return intrinsic(llvm::Intrinsic::ctpop, at, {a});
      case O::I32Extend8S: return b_.CreateSExt(b_.CreateTrunc(a, t_.i8), t_.i32);
      case O::I32Extend16S: return b_.CreateSExt(b_.CreateTrunc(a, t_.i16), t_.i32);
      case O::I64Extend8S: return b_.CreateSExt(b_.CreateTrunc(a, t_.i8), t_.i64);
      case O::I64Extend16S: return b_.CreateSExt(b_.CreateTrunc(a, t_.i16), t_.i64);
      case O::I64Extend32S: return b_.CreateSExt(b_.CreateTrunc(a, t_.i32), t_.i64);
      case O::I64ExtendI32S: return b_.CreateSExt(a, t_.i64);
      case O::I64ExtendI32U: return b_.CreateZExt(a, t_.i64);
      case O::I32WrapI64: return b_.CreateTrunc(a, t_.i32);
      case O::I32DivS:
      case O::I64DivS:
      case O::I32RemS:
      case O::I64RemS: {
        llvm::Value* zero = llvm::ConstantInt::get(at, 0);
        trap_if(b_.CreateICmpEQ(b, zero), TrapKind::IntegerDivideByZero);
        llvm::Value* minus1 = b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(at, -1));
        if (s.opc == O::I32DivS || s.opc == O::I64DivS) {
          llvm::Value* min = llvm::ConstantInt::get(at, llvm::APInt::getSignedMinValue(bits));
          trap_if(b_.CreateAnd(minus1, b_.CreateICmpEQ(a, min)), TrapKind::IntegerOverflow);
          return b_.CreateSDiv(a, b);
        }
        // rem_s by -1 is 0 (and srem would overflow on MIN): divide by 1 instead.
        llvm::Value* safe_b = b_.CreateSelect(minus1, llvm::ConstantInt::get(at, 1), b);
        return b_.CreateSRem(a, safe_b);
      }
      case O::I32DivU:
      case O::I64DivU:
      case O::I32RemU:
      case O::I64RemU: {
        trap_if(b_.CreateICmpEQ(b, llvm::ConstantInt::get(at, 0)), TrapKind::IntegerDivideByZero);
        return (s.opc == O::I32DivU || s.opc == O::I64DivU) ? b_.CreateUDiv(a, b) : b_.CreateURem(a, b);
      }
      case O::F32Add:
      case O::F64Add: return b_.CreateFAdd(a, b);
      case O::F32Sub:
      case O::F64Sub: return b_.CreateFSub(a, b);
      case O::F32Mul:
      case O::F64Mul: return b_.CreateFMul(a, b);
      case O::F32Div:
      case O::F64Div: return b_.CreateFDiv(a, b);
      case O::F32Sqrt:
      case O::F64Sqrt:
        return b_.CreateConstrainedFPCall(
            llvm::Intrinsic::getDeclaration(&me_.mod, llvm::Intrinsic::experimental_constrained_sqrt, {at}), {a});
      case O::F32Eq:
      case O::F64Eq: return bool32(b_.CreateFCmpOEQ(a, b));
      case O::F32Ne:
      case O::F64Ne: return bool32(b_.CreateFCmpUNE(a, b));
      case O::F32Lt:
      case O::F64Lt: return bool32(b_.CreateFCmpOLT(a, b));
      case O::F32Gt:
      case O::F64Gt: return bool32(b_.CreateFCmpOGT(a, b));
      case O::F32Le:
      case O::F64Le: return bool32(b_.CreateFCmpOLE(a, b));
      case O::F32Ge:
      case O::F64Ge: return bool32(b_.CreateFCmpOGE(a, b));
      case O::F32Abs:
      case O::F64Abs: return fbits(b_.CreateAnd(ibits(a, s.a), b_.CreateNot(sign_mask(s.a))), s.a);
      case O::F32Neg:
      case O::F64Neg: return fbits(b_.CreateXor(ibits(a, s.a), sign_mask(s.a)), s.a);
      case O::F32Copysign:
      case O::F64Copysign:
        return fbits(b_.CreateOr(b_.CreateAnd(ibits(a, s.a), b_.CreateNot(sign_mask(s.a))),
                                 b_.CreateAnd(ibits(b, s.a), sign_mask(s.a))),
                     s.a);
      case O::F32ConvertI32S:
      case O::F32ConvertI64S:
      case O::F64ConvertI32S:
      case O::F64ConvertI64S: return b_.CreateSIToFP(a, ty(s.r));
      case O::F32ConvertI32U:
      case O::F32ConvertI64U:
      case O::F64ConvertI32U:
      case O::F64ConvertI64U: return b_.CreateUIToFP(a, ty(s.r));
      case O::F32DemoteF64: return b_.CreateFPTrunc(a, t_.f32);
      case O::F64PromoteF32: return b_.CreateFPExt(a, t_.f64);
      case O::I32ReinterpretF32:
      case O::I64ReinterpretF64:
      case O::F32ReinterpretI32:
      case O::F64ReinterpretI64: return b_.CreateBitCast(a, ty(s.r));
      default: return nullptr;  // min/max, rounding, float-to-int: the helper (num:: itself)
    }
  }

  // A numeric op: inline, or the interpreter's num:: code through the helper of its slot form.
  void numeric(const NumShape& s, bool traps, u32 dst, llvm::Value* a_bits, llvm::Value* b_bits) {
    if (llvm::Value* r = inline_num(s, from_bits(a_bits, s.a), from_bits(b_bits, s.a))) {
      put(dst, r, s.r);
      return;
    }
    llvm::Value* r = b_.CreateCall(me_.num_helper_fn(numeric_op(s.opc, SecondOperand::Slot)), {a_bits, b_bits, trap_out_});
    if (traps) {
      llvm::Value* k = b_.CreateLoad(t_.i32, trap_out_);
      trap_if(b_.CreateICmpNE(k, u32c(0)), location(k));
    }
    set_slot(dst, r);
  }

  // The address of a load/store, as its mode finds it (internal_ops.def's VMEM).
  template <MemMode M, class A>
  Where effective_address(const A& a) {
    if constexpr (M == MemMode::Plain)
      return {ea(a.addr, a.offset), a.addr, 0, false, a.offset};
    else if constexpr (M == MemMode::Add)
      return {ea_add(a.base, a.imm, a.offset), a.base, a.imm, true, a.offset};
    else
      return {b_.getInt64(static_cast<u64>(a.addr) + a.offset), std::nullopt, 0, false, 0};
  }

  // One instruction; false when control does not fall through to the next.
  bool instr(const Instr& in) {
    w_ = in.at;
    exn_dispatch_ = in.op == Op::Call || in.op == Op::CallIndirect || in.op == Op::CallRef ? dispatch_for(w_) : nullptr;
    return visit_instruction(in.op, code_ + w_, [&]<Op O>(const auto& args) { return emit<O>(args); });
  }

  template <Op O, class A>
  bool emit(const A& a) {
    if constexpr (O == Op::Count_) {
      trap(TrapKind::Unreachable);  // scan() admits no undecodable word
      return false;
    } else {
      constexpr const OpInfo& oi = info(O);
      constexpr unsigned fall = operand_word(O, OperandKind::Fall);
      const Types& t = t_;
      if constexpr (oi.family == OpFamily::Load && oi.mem_base != Op::Count_) {
        load(oi.mem_base, a.dst, effective_address<oi.mem_mode>(a));
        return true;
      } else if constexpr (oi.family == OpFamily::Store && oi.mem_base != Op::Count_) {
        store(oi.mem_base, a.val, effective_address<oi.mem_mode>(a));
        return true;
      } else if constexpr (oi.family == OpFamily::FusedBranch && oi.has_wasm) {
        llvm::Value* rhs = nullptr;
        if constexpr (oi.second == SecondOperand::Imm)
          rhs = u32c(a.imm);
        else
          rhs = get(a.b, VT::I32);
        llvm::Value* c = b_.CreateICmp(*icmp_of(oi.wasm), get(a.a, VT::I32), rhs);
        cond_branch(oi.when == BranchWhen::True ? c : b_.CreateNot(c), a.off, fall);
        return true;
      } else if constexpr (oi.family == OpFamily::Numeric && num_shape(O).has_value()) {
        constexpr NumShape s = *num_shape(O);
        llvm::Value* b_bits = b_.getInt64(0);
        if constexpr (requires { a.b; })
          b_bits = slot(a.b);
        else if constexpr (requires { a.imm; })  // i32 zero-extended (the slot invariant), i64 sign-extended
          b_bits = b_.getInt64(s.a == VT::I64 ? static_cast<u64>(static_cast<i64>(static_cast<std::int32_t>(a.imm)))
                                              : static_cast<u64>(a.imm));
        else if constexpr (requires { a.value; })  // f32 bits (one word) or f64 bits (two)
          b_bits = b_.getInt64(static_cast<u64>(a.value));
        numeric(s, oi.can_trap, a.dst, slot(a.a), b_bits);
        return true;
      } else if constexpr (O == Op::Unreachable) {
        trap(TrapKind::Unreachable);
        return false;
      } else if constexpr (O == Op::Br) {
        b_.CreateBr(block_at(w_ + a.off));
        return false;
      } else if constexpr (O == Op::BrIf || O == Op::BrUnless) {
        llvm::Value* c = get(a.cond, VT::I32);
        cond_branch(O == Op::BrIf ? b_.CreateICmpNE(c, u32c(0)) : b_.CreateICmpEQ(c, u32c(0)), a.off, fall);
        return true;
      } else if constexpr (O == Op::BrTable) {
        // COUNT + 1 targets; an index past the last takes the last (the default).
        const u32* targets = code_ + w_ + layout::JumpTable::targets;
        llvm::SwitchInst* sw = b_.CreateSwitch(get(a.idx, VT::I32), block_at(w_ + targets[a.n]), a.n);
        for (u32 i = 0; i < a.n; ++i) sw->addCase(b_.getInt32(i), block_at(w_ + targets[i]));
        return false;
      } else if constexpr (O == Op::Copy) {
        set_slot(a.dst, slot(a.src));
        return true;
      } else if constexpr (O == Op::CanonF32 || O == Op::CanonF64) {
        set_slot(a.dst, canon_nan(slot(a.a), O == Op::CanonF32 ? 32 : 64, 1));
        return true;
      } else if constexpr (O == Op::Copy2) {
        llvm::Value* v0 = slot(a.src0);
        set_slot(a.dst0, v0);
        set_slot(a.dst1, slot(a.src1));
        return true;
      } else if constexpr (O == Op::Const32) {
        set_slot(a.dst, b_.getInt64(a.imm));
        return true;
      } else if constexpr (O == Op::Const64) {
        set_slot(a.dst, b_.getInt64(a.value));
        return true;
      } else if constexpr (O == Op::Call) {
        emit_call(a.func, a.base, a.post);
        return true;
      } else if constexpr (O == Op::CallIndirect) {
        emit_call_indirect(a.type, a.table, a.idx, a.base, a.post);
        return true;
      } else if constexpr (O == Op::Return) {
        // The results at fp for callers through the entry; a body's one result in a register
        // only (its entry stores it at fp: emit_function).
        if (!in_registers_)
          for (u32 i = 0; i < f_.num_results; ++i) b_.CreateStore(slot(i), fp_at(i));
        if (fuel_in_registers()) {
          ret(ok_status(), f_.num_results == 1 ? slot(0) : nullptr, b_.CreateLoad(t_.i64, fuel_));
        } else {
          store_fuel();
          ret(ok_status(), f_.num_results == 1 ? slot(0) : nullptr);
        }
        return false;
      } else if constexpr (O == Op::Fuel) {
        charge(a.cost);
        return true;
      } else if constexpr (O == Op::FuelCheck) {
        if (me_.metered) {
          fuel_check(static_cast<i64>(a.visible));
          charge(a.cost);
        }
        return true;
      } else if constexpr (O == Op::Select) {
        set_slot(a.dst, b_.CreateSelect(b_.CreateICmpNE(get(a.cond, VT::I32), u32c(0)), slot(a.a), slot(a.b)));
        return true;
      } else if constexpr (O == Op::GlobalGet || O == Op::GlobalSet) {
        llvm::Value* gp = invariant(b_.CreateLoad(t.ptr, b_.CreateConstInBoundsGEP1_64(t.ptr, globals_, a.global)));
        llvm::Value* bits = b_.CreateConstInBoundsGEP1_64(t.i8, gp, offsetof(GlobalInst, bits));
        if constexpr (O == Op::GlobalGet)
          set_slot(a.dst, b_.CreateLoad(t.i64, bits));
        else
          b_.CreateStore(slot(a.src), bits);
        return true;
      } else if constexpr (O == Op::MemorySize) {
        llvm::Value* pages = b_.CreateUDiv(b_.CreateLoad(t.i64, mem_size_), b_.getInt64(kPageSize));
        set_slot(a.dst, b_.CreateZExt(b_.CreateTrunc(pages, t.i32), t.i64));
        return true;
      } else if constexpr (O == Op::MemoryGrow) {
        put(a.dst, b_.CreateCall(me_.memory_grow, {ctxp_, get(a.delta, VT::I32)}), VT::I32);
        reload_memory();
        return true;
      } else if constexpr (O == Op::RefIsNull) {
        put(a.dst, bool32(b_.CreateICmpEQ(slot(a.a), b_.getInt64(0))), VT::I32);
        return true;
      } else if constexpr (O == Op::RefFunc) {
        set_slot(a.dst, b_.CreatePtrToInt(load_func(a.func), t.i64));
        return true;
      } else if constexpr (O == Op::RefAsNonNull) {
        llvm::Value* r = slot(a.a);
        trap_if(b_.CreateICmpEQ(r, b_.getInt64(0)), TrapKind::NullReference);
        set_slot(a.dst, r);
        return true;
      } else if constexpr (O == Op::BrOnNull || O == Op::BrOnNonNull) {
        // The whole 64-bit slot, as the interpreter tests it.
        llvm::Value* r = slot(a.cond);
        cond_branch(O == Op::BrOnNull ? b_.CreateICmpEQ(r, b_.getInt64(0)) : b_.CreateICmpNE(r, b_.getInt64(0)), a.off,
                    fall);
        return true;
      } else if constexpr (O == Op::CallRef) {
        emit_call_ref(a.type, a.ref, a.base, a.post);
        return true;
      } else if constexpr (O == Op::ReturnCall) {
        emit_return_call(a.func, a.base);
        return false;
      } else if constexpr (O == Op::ReturnCallIndirect) {
        emit_return_call_indirect(a.type, a.table, a.idx, a.base);
        return false;
      } else if constexpr (O == Op::ReturnCallRef) {
        emit_return_call_ref(a.type, a.ref, a.base);
        return false;
      } else if constexpr (O == Op::Throw) {
        const Module& m = me_.cm.module;
        const u32 n = value_slots(m.types[m.tags[a.tag]].params);  // slots: a v128 takes two
        store_args(a.base, n);
        store_fuel();
        throw_status(b_.CreateCall(
            me_.helper("sprawling_jit_throw", t.i32, {t.ptr, t.i32, t.ptr, t.ptr}),
            {ctxp_, u32c(a.tag), fp_at(a.base), b_.CreateConstInBoundsGEP1_64(t.i64, fp_, f_.frame_slots)}));
        return false;
      } else if constexpr (O == Op::ThrowRef) {
        store_fuel();
        throw_status(b_.CreateCall(me_.helper("sprawling_jit_throw_ref", t.i32, {t.ptr, t.i64}), {ctxp_, slot(a.exn)}));
        return false;
      } else if constexpr (O == Op::MemoryFill) {
        call_status("sprawling_jit_memory_fill", {t.ptr, t.i32, t.i32, t.i32},
                    {ctxp_, i32s(a.d), i32s(a.val), i32s(a.n)});
        return true;
      } else if constexpr (O == Op::MemoryCopy) {
        call_status("sprawling_jit_memory_copy", {t.ptr, t.i32, t.i32, t.i32}, {ctxp_, i32s(a.d), i32s(a.s), i32s(a.n)});
        return true;
      } else if constexpr (O == Op::MemoryInit) {
        call_status("sprawling_jit_memory_init", {t.ptr, t.i32, t.i32, t.i32, t.i32},
                    {ctxp_, u32c(a.data), i32s(a.d), i32s(a.s), i32s(a.n)});
        return true;
      } else if constexpr (O == Op::DataDrop || O == Op::ElemDrop) {
        const char* name = O == Op::DataDrop ? "sprawling_jit_data_drop" : "sprawling_jit_elem_drop";
        u32 segment = 0;
        if constexpr (O == Op::DataDrop)
          segment = a.data;
        else
          segment = a.elem;
        b_.CreateCall(me_.helper(name, llvm::Type::getVoidTy(me_.ctx), {t.ptr, t.i32}), {ctxp_, u32c(segment)});
        return true;
      } else if constexpr (O == Op::TableGet) {
        call_status("sprawling_jit_table_get", {t.ptr, t.i32, t.i64, t.ptr}, {ctxp_, u32c(a.table), slot(a.idx), scratch_});
        set_slot(a.dst, b_.CreateLoad(t.i64, scratch_));
        return true;
      } else if constexpr (O == Op::TableSet) {
        call_status("sprawling_jit_table_set", {t.ptr, t.i32, t.i64, t.i64},
                    {ctxp_, u32c(a.table), slot(a.idx), slot(a.val)});
        return true;
      } else if constexpr (O == Op::TableSize) {
        put(a.dst, b_.CreateCall(me_.helper("sprawling_jit_table_size", t.i32, {t.ptr, t.i32}), {ctxp_, u32c(a.table)}),
            VT::I32);
        return true;
      } else if constexpr (O == Op::TableGrow) {
        call_status("sprawling_jit_table_grow", {t.ptr, t.i32, t.i64, t.i64, t.ptr},
                    {ctxp_, u32c(a.table), slot(a.init), slot(a.n), scratch_});
        set_slot(a.dst, b_.CreateLoad(t.i64, scratch_));
        return true;
      } else if constexpr (O == Op::TableFill) {
        call_status("sprawling_jit_table_fill", {t.ptr, t.i32, t.i64, t.i64, t.i64},
                    {ctxp_, u32c(a.table), slot(a.i), slot(a.val), slot(a.n)});
        return true;
      } else if constexpr (O == Op::TableCopy) {
        call_status("sprawling_jit_table_copy", {t.ptr, t.i32, t.i32, t.i64, t.i64, t.i64},
                    {ctxp_, u32c(a.dst_table), u32c(a.src_table), slot(a.d), slot(a.s), slot(a.n)});
        return true;
      } else if constexpr (O == Op::TableInit) {
        call_status("sprawling_jit_table_init", {t.ptr, t.i32, t.i32, t.i64, t.i32, t.i32},
                    {ctxp_, u32c(a.elem), u32c(a.table), slot(a.d), i32s(a.s), i32s(a.n)});
        return true;
      } else if constexpr (oi.family == OpFamily::MultiMemory) {
        emit_other_memory<O>(a);
        return true;
      } else if constexpr (oi.family == OpFamily::Simd) {
        simd<O>(a);
        return true;
      } else if constexpr (oi.family == OpFamily::Gc) {
        gc<O>(a, fall);
        return true;
      } else {
        static_assert(!handled(O), "handled() admits an op FunctionEmitter::emit does not emit");
        trap(TrapKind::Unreachable);  // scan() admits only handled ops
        return false;
      }
    }
  }

  // num::nan_canonical_f32/f64 of each of the `lanes` `bits`-wide lanes of a slot's i64: a lane
  // whose magnitude is above infinity's (a NaN) becomes the canonical quiet NaN. An f32 in a
  // scalar slot is its low lane (one lane; the slot's high half stays zero).
  llvm::Value* canon_nan(llvm::Value* word, unsigned bits, unsigned lanes) {
    llvm::Type* lane = b_.getIntNTy(bits);
    llvm::Type* vec = lanes == 1 ? lane : static_cast<llvm::Type*>(llvm::FixedVectorType::get(lane, lanes));
    llvm::Value* v = lanes == 1 ? (bits == 64 ? word : b_.CreateTrunc(word, lane)) : b_.CreateBitCast(word, vec);
    const u64 sign = u64{1} << (bits - 1);
    const u64 inf = bits == 32 ? 0x7F800000ULL : 0x7FF0000000000000ULL;
    const u64 quiet = bits == 32 ? 0x7FC00000ULL : 0x7FF8000000000000ULL;
    auto splat = [&](u64 c) -> llvm::Value* {
      llvm::Constant* k = llvm::ConstantInt::get(lane, c);
      return lanes == 1 ? static_cast<llvm::Value*>(k) : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(lanes), k);
    };
    llvm::Value* nan = b_.CreateICmpUGT(b_.CreateAnd(v, splat(sign - 1)), splat(inf));
    llvm::Value* r = b_.CreateSelect(nan, splat(quiet), v);
    if (lanes != 1) return b_.CreateBitCast(r, t_.i64);
    return bits == 64 ? r : b_.CreateZExt(r, t_.i64);
  }

  // ---- SIMD: a v128 is two slots (bytes 0..7 in the first), made a vector where an op needs one.
  // Every op is vector IR with the interpreter's lane semantics (wasm/simd.hpp, relaxed_simd.hpp)
  // except those simd_un/simd_bin/simd_tern return null for (the swizzles, which are pshufb on
  // x86-64 with SSSE3, swizzle()): they call their helper (sprawling_jit_simd_<op>: the
  // interpreter's own lane function) through the operand block io_.
  struct Lanes {
    llvm::FixedVectorType* vt;  // the lanes as LLVM sees them (float lanes as float)
    llvm::FixedVectorType* ivt;  // the same lanes as integers
    unsigned bits;
    bool fp;
  };
  Lanes lanes_of(std::string_view shape) {
    auto v = [](llvm::Type* lane, unsigned n) { return llvm::FixedVectorType::get(lane, n); };
    if (shape == "i8x16") return {v(t_.i8, 16), v(t_.i8, 16), 8, false};
    if (shape == "i16x8") return {v(t_.i16, 8), v(t_.i16, 8), 16, false};
    if (shape == "i32x4") return {v(t_.i32, 4), v(t_.i32, 4), 32, false};
    if (shape == "f32x4") return {v(t_.f32, 4), v(t_.i32, 4), 32, true};
    if (shape == "f64x2") return {v(t_.f64, 2), v(t_.i64, 2), 64, true};
    return {v(t_.i64, 2), v(t_.i64, 2), 64, false};  // i64x2, v128
  }
  llvm::FixedVectorType* v2i64() { return llvm::FixedVectorType::get(t_.i64, 2); }
  llvm::Value* vget(u32 s) {
    llvm::Value* v = b_.CreateInsertElement(llvm::PoisonValue::get(v2i64()), slot(s), u64{0});
    return b_.CreateInsertElement(v, slot(s + 1), u64{1});
  }
  void vput(u32 s, llvm::Value* v) {
    v = b_.CreateBitCast(v, v2i64());
    llvm::Value* lo = b_.CreateExtractElement(v, u64{0});
    llvm::Value* hi = b_.CreateExtractElement(v, u64{1});
    set_slot(s, lo);
    set_slot(s + 1, hi);
  }
  llvm::AllocaInst* io_ = nullptr;  // a SIMD helper's operand block (six slots), made on first use
  llvm::Value* io_at(unsigned i) {
    if (io_ == nullptr) {
      llvm::IRBuilderBase::InsertPointGuard g(b_);
      llvm::BasicBlock& entry = fn_->getEntryBlock();
      b_.SetInsertPoint(&entry, entry.getFirstInsertionPt());
      io_ = b_.CreateAlloca(llvm::ArrayType::get(t_.i64, 6));
    }
    return b_.CreateConstInBoundsGEP1_64(t_.i64, io_, i);
  }
  void io_put(unsigned at, u32 s) {
    llvm::Value* lo = slot(s);
    llvm::Value* hi = slot(s + 1);
    b_.CreateStore(lo, io_at(at));
    b_.CreateStore(hi, io_at(at + 1));
  }
  void simd_call(Op o, llvm::Value* mem, llvm::Value* x, u32 lane) {
    const std::string name = "sprawling_jit_simd_" + std::to_string(idx(o));
    llvm::FunctionCallee fn =
        me_.helper(name.c_str(), llvm::Type::getVoidTy(me_.ctx), {t_.ptr, t_.ptr, t_.i64, t_.i32});
    b_.CreateCall(fn, {io_at(0), mem != nullptr ? mem : llvm::ConstantPointerNull::get(t_.ptr),
                       x != nullptr ? x : b_.getInt64(0), u32c(lane)});
  }
  void io_result(u32 dst) {
    llvm::Value* lo = b_.CreateLoad(t_.i64, io_at(0));
    llvm::Value* hi = b_.CreateLoad(t_.i64, io_at(1));
    set_slot(dst, lo);
    set_slot(dst + 1, hi);
  }
  static constexpr u32 mem_width(ImmKind k) {
    switch (k) {
      case ImmKind::MemArg8:
      case ImmKind::MemArgLane8: return 1;
      case ImmKind::MemArg16:
      case ImmKind::MemArgLane16: return 2;
      case ImmKind::MemArg32:
      case ImmKind::MemArgLane32: return 4;
      case ImmKind::MemArg64:
      case ImmKind::MemArgLane64: return 8;
      default: return 16;
    }
  }
  // i8x16.swizzle (and relaxed_swizzle, the same on both tiers): lane i is a[s[i]], or 0 when
  // s[i] >= 16. pshufb gives a[s[i] & 15], or 0 when bit 7 of s[i] is set; adding 0x70 with
  // unsigned saturation keeps 0..15's low four bits with bit 7 clear and sets bit 7 of 16..255.
  llvm::Value* swizzle(llvm::Value* a, llvm::Value* s) {
    auto* v16 = llvm::FixedVectorType::get(t_.i8, 16);
    llvm::Value* index = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::uadd_sat, b_.CreateBitCast(s, v16),
        llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(16), llvm::ConstantInt::get(t_.i8, 0x70)));
    llvm::Value* r = b_.CreateCall(llvm::Intrinsic::getDeclaration(&me_.mod, llvm::Intrinsic::x86_ssse3_pshuf_b_128),
                                   {b_.CreateBitCast(a, v16), index});
    return b_.CreateBitCast(r, v2i64());
  }
  llvm::Value* splat(const Lanes& l, u64 v) {
    return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(l.ivt->getNumElements()),
                                          llvm::ConstantInt::get(l.ivt->getElementType(), v));
  }
  // add/sub/mul/div/sqrt: the CPU's own NaN in each lane (a NaN operand's payload quieted, or its
  // default NaN), as the interpreter's lane functions and the scalar operators (wasm/simd.hpp).
  llvm::Value* hardware(const Lanes& l, llvm::Value* r) { return b_.CreateBitCast(r, l.ivt); }
  // A NaN lane of a float result is the positive canonical NaN (wasm/simd.hpp), whatever the
  // operands: as the interpreter (rounding and the relaxed fused multiply-adds).
  llvm::Value* canon(const Lanes& l, llvm::Value* r) {
    const u64 nan = l.bits == 32 ? 0x7FC00000u : 0x7FF8000000000000u;
    return b_.CreateSelect(b_.CreateFCmpUNO(r, r), splat(l, nan), b_.CreateBitCast(r, l.ivt));
  }
  // Lanes `first`.. of the half-width shape of l (twice as many lanes), widened to l.
  llvm::Value* widen(const Lanes& l, llvm::Value* v2, bool high, bool sign) {
    const unsigned n = l.ivt->getNumElements();
    auto* half = llvm::FixedVectorType::get(llvm::IntegerType::get(me_.ctx, l.bits / 2), n * 2);
    llvm::SmallVector<int, 16> mask;
    for (unsigned i = 0; i < n; ++i) mask.push_back(static_cast<int>(i + (high ? n : 0)));
    llvm::Value* part = b_.CreateShuffleVector(b_.CreateBitCast(v2, half), mask);
    return sign ? b_.CreateSExt(part, l.ivt) : b_.CreateZExt(part, l.ivt);
  }
  // The even and odd lanes of v2 seen as twice as many lanes of half l's width, each widened to l.
  std::pair<llvm::Value*, llvm::Value*> pairs(const Lanes& l, llvm::Value* v2, bool sign) {
    const unsigned n = l.ivt->getNumElements();
    auto* half = llvm::FixedVectorType::get(llvm::IntegerType::get(me_.ctx, l.bits / 2), n * 2);
    llvm::SmallVector<int, 16> even;
    llvm::SmallVector<int, 16> odd;
    for (unsigned i = 0; i < n; ++i) {
      even.push_back(static_cast<int>(2 * i));
      odd.push_back(static_cast<int>(2 * i + 1));
    }
    llvm::Value* h = b_.CreateBitCast(v2, half);
    auto ext = [&](llvm::Value* x) { return sign ? b_.CreateSExt(x, l.ivt) : b_.CreateZExt(x, l.ivt); };
    return {ext(b_.CreateShuffleVector(h, even)), ext(b_.CreateShuffleVector(h, odd))};
  }
  llvm::Value* fsplat(llvm::FixedVectorType* vt, double x) {
    return llvm::ConstantVector::getSplat(vt->getElementCount(), llvm::ConstantFP::get(vt->getElementType(), x));
  }
  llvm::Value* isplat(llvm::FixedVectorType* vt, u64 x) {
    return llvm::ConstantVector::getSplat(vt->getElementCount(), llvm::ConstantInt::get(vt->getElementType(), x));
  }
  llvm::Value* constrained(llvm::Intrinsic::ID id, llvm::Type* ty, llvm::ArrayRef<llvm::Value*> args) {
    return b_.CreateConstrainedFPCall(llvm::Intrinsic::getDeclaration(&me_.mod, id, {ty}), args);
  }
  // trunc_sat of float lanes x to i32 lanes: NaN -> 0, out of range -> the nearest bound
  // (simd.hpp's trunc_sat); the conversion's own result is used only in range.
  llvm::Value* trunc_sat(llvm::Value* x, bool sign) {
    auto* vt = llvm::cast<llvm::FixedVectorType>(x->getType());
    auto* it = llvm::FixedVectorType::get(t_.i32, vt->getNumElements());
    llvm::Value* r = sign ? b_.CreateFPToSI(x, it) : b_.CreateFPToUI(x, it);
    llvm::Value* hi = b_.CreateFCmpOGE(x, fsplat(vt, sign ? 2147483648.0 : 4294967296.0));
    r = b_.CreateSelect(hi, isplat(it, sign ? 0x7FFFFFFFu : 0xFFFFFFFFu), r);
    llvm::Value* lo = sign ? b_.CreateFCmpOLT(x, fsplat(vt, -2147483648.0)) : b_.CreateFCmpOLE(x, fsplat(vt, -1.0));
    r = b_.CreateSelect(lo, isplat(it, sign ? 0x80000000u : 0u), r);
    return b_.CreateSelect(b_.CreateFCmpUNO(x, x), isplat(it, 0), r);
  }
  // Two halves of 2 lanes as one of 4, the second zero (the `_zero` conversions).
  llvm::Value* with_zero_high(llvm::Value* two) {
    auto* vt = llvm::cast<llvm::FixedVectorType>(two->getType());
    return b_.CreateShuffleVector(two, llvm::Constant::getNullValue(vt), llvm::ArrayRef<int>{0, 1, 2, 3});
  }
  static std::string_view shape_of(std::string_view text) { return text.substr(0, text.find('.')); }
  static std::string_view name_of(std::string_view text) { return text.substr(text.find('.') + 1); }

  // The inline form of a v128 -> v128 op, or null for the helper.
  llvm::Value* simd_un(std::string_view text, llvm::Value* a2) {
    const std::string_view n = name_of(text);
    const Lanes l = lanes_of(shape_of(text));
    if (n == "not") return b_.CreateNot(a2);
    if (n.starts_with("extend_")) return widen(l, a2, n.starts_with("extend_high"), n.ends_with("_s"));
    if (l.fp) {
      llvm::Value* bits = b_.CreateBitCast(a2, l.ivt);
      const u64 sign = u64{1} << (l.bits - 1);
      if (n == "abs") return b_.CreateAnd(bits, splat(l, ~sign));
      if (n == "neg") return b_.CreateXor(bits, splat(l, sign));
      llvm::Value* a = b_.CreateBitCast(a2, l.vt);
      using I = llvm::Intrinsic::ID;
      std::optional<I> id;
      if (n == "sqrt") return hardware(l, constrained(llvm::Intrinsic::experimental_constrained_sqrt, l.vt, {a}));
      if (n == "ceil") id = llvm::Intrinsic::experimental_constrained_ceil;
      if (n == "floor") id = llvm::Intrinsic::experimental_constrained_floor;
      if (n == "trunc") id = llvm::Intrinsic::experimental_constrained_trunc;
      if (n == "nearest") id = llvm::Intrinsic::experimental_constrained_nearbyint;  // ties to even
      if (id) return canon(l, constrained(*id, l.vt, {a}));
      auto* i32x4 = llvm::FixedVectorType::get(t_.i32, 4);
      auto* i32x2 = llvm::FixedVectorType::get(t_.i32, 2);
      if (n == "convert_i32x4_s") return b_.CreateSIToFP(b_.CreateBitCast(a2, i32x4), l.vt);
      if (n == "convert_i32x4_u") return b_.CreateUIToFP(b_.CreateBitCast(a2, i32x4), l.vt);
      if (n.starts_with("convert_low_i32x4_")) {
        llvm::Value* low = b_.CreateShuffleVector(b_.CreateBitCast(a2, i32x4), llvm::ArrayRef<int>{0, 1});
        return n.ends_with("_s") ? b_.CreateSIToFP(low, l.vt) : b_.CreateUIToFP(low, l.vt);
      }
      if (n == "demote_f64x2_zero") {
        auto* f32x2 = llvm::FixedVectorType::get(t_.f32, 2);
        llvm::Value* r = b_.CreateFPTrunc(b_.CreateBitCast(a2, lanes_of("f64x2").vt), f32x2);
        // A NaN lane is converted as f32.demote_f64 converts it (quieted, payload's high bits kept).
        return with_zero_high(b_.CreateBitCast(r, i32x2));
      }
      if (n == "promote_low_f32x4") {
        llvm::Value* low = b_.CreateShuffleVector(b_.CreateBitCast(a2, lanes_of("f32x4").vt), llvm::ArrayRef<int>{0, 1});
        return b_.CreateBitCast(b_.CreateFPExt(low, l.vt), l.ivt);  // as f64.promote_f32: payload kept
      }
      return nullptr;
    }
    llvm::Value* a = b_.CreateBitCast(a2, l.ivt);
    if (n == "neg") return b_.CreateNeg(a);
    if (n == "abs") return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, b_.getFalse());
    if (n == "popcnt") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, a);
    if (n.starts_with("extadd_pairwise_")) {
      auto [even, odd] = pairs(l, a2, n.ends_with("_s"));
      return b_.CreateAdd(even, odd);
    }
    // trunc_sat and the relaxed truncations (their deterministic choice is trunc_sat).
    const bool sign = n.ends_with("_s") || n.ends_with("_s_zero");
    if (n.ends_with("_f32x4_s") || n.ends_with("_f32x4_u"))
      return trunc_sat(b_.CreateBitCast(a2, lanes_of("f32x4").vt), sign);
    if (n.ends_with("_f64x2_s_zero") || n.ends_with("_f64x2_u_zero"))
      return with_zero_high(trunc_sat(b_.CreateBitCast(a2, lanes_of("f64x2").vt), sign));
    return nullptr;
  }
  llvm::Value* simd_bin(std::string_view text, llvm::Value* a2, llvm::Value* b2) {
    const std::string_view n = name_of(text);
    const Lanes l = lanes_of(shape_of(text));
    if (n == "and") return b_.CreateAnd(a2, b2);
    if (n == "or") return b_.CreateOr(a2, b2);
    if (n == "xor") return b_.CreateXor(a2, b2);
    if (n == "andnot") return b_.CreateAnd(a2, b_.CreateNot(b2));
    if (l.fp) {
      llvm::Value* a = b_.CreateBitCast(a2, l.vt);
      llvm::Value* b = b_.CreateBitCast(b2, l.vt);
      if (n == "add") return hardware(l, b_.CreateFAdd(a, b));
      if (n == "sub") return hardware(l, b_.CreateFSub(a, b));
      if (n == "mul") return hardware(l, b_.CreateFMul(a, b));
      if (n == "div") return hardware(l, b_.CreateFDiv(a, b));
      using P = llvm::CmpInst::Predicate;
      std::optional<P> p;
      if (n == "eq") p = P::FCMP_OEQ;
      if (n == "ne") p = P::FCMP_UNE;
      if (n == "lt") p = P::FCMP_OLT;
      if (n == "gt") p = P::FCMP_OGT;
      if (n == "le") p = P::FCMP_OLE;
      if (n == "ge") p = P::FCMP_OGE;
      if (p) return b_.CreateSExt(b_.CreateFCmp(*p, a, b), l.ivt);
      llvm::Value* ua = b_.CreateBitCast(a2, l.ivt);
      llvm::Value* ub = b_.CreateBitCast(b2, l.ivt);
      // min/max (and relaxed_min/max): NaN if either is, -0 < +0; pmin/pmax select bits as they are.
      const bool min = n == "min" || n == "relaxed_min";
      if (min || n == "max" || n == "relaxed_max") {
        llvm::Value* r = b_.CreateSelect(min ? b_.CreateFCmpOLT(a, b) : b_.CreateFCmpOGT(a, b), ua, ub);
        r = b_.CreateSelect(b_.CreateFCmpOEQ(a, b), min ? b_.CreateOr(ua, ub) : b_.CreateAnd(ua, ub), r);
        const u64 nan = l.bits == 32 ? 0x7FC00000u : 0x7FF8000000000000u;
        return b_.CreateSelect(b_.CreateFCmpUNO(a, b), splat(l, nan), r);
      }
      if (n == "pmin") return b_.CreateSelect(b_.CreateFCmpOLT(b, a), ub, ua);
      if (n == "pmax") return b_.CreateSelect(b_.CreateFCmpOLT(a, b), ub, ua);
      return nullptr;
    }
    llvm::Value* a = b_.CreateBitCast(a2, l.ivt);
    llvm::Value* b = b_.CreateBitCast(b2, l.ivt);
    if (n == "add") return b_.CreateAdd(a, b);
    if (n == "sub") return b_.CreateSub(a, b);
    if (n == "mul") return b_.CreateMul(a, b);
    using P = llvm::CmpInst::Predicate;
    std::optional<P> p;
    if (n == "eq") p = P::ICMP_EQ;
    if (n == "ne") p = P::ICMP_NE;
    if (n == "lt_s") p = P::ICMP_SLT;
    if (n == "lt_u") p = P::ICMP_ULT;
    if (n == "gt_s") p = P::ICMP_SGT;
    if (n == "gt_u") p = P::ICMP_UGT;
    if (n == "le_s") p = P::ICMP_SLE;
    if (n == "le_u") p = P::ICMP_ULE;
    if (n == "ge_s") p = P::ICMP_SGE;
    if (n == "ge_u") p = P::ICMP_UGE;
    if (p) return b_.CreateSExt(b_.CreateICmp(*p, a, b), l.ivt);
    using I = llvm::Intrinsic::ID;
    std::optional<I> id;
    if (n == "min_s") id = llvm::Intrinsic::smin;
    if (n == "min_u") id = llvm::Intrinsic::umin;
    if (n == "max_s") id = llvm::Intrinsic::smax;
    if (n == "max_u") id = llvm::Intrinsic::umax;
    if (n == "add_sat_s") id = llvm::Intrinsic::sadd_sat;
    if (n == "add_sat_u") id = llvm::Intrinsic::uadd_sat;
    if (n == "sub_sat_s") id = llvm::Intrinsic::ssub_sat;
    if (n == "sub_sat_u") id = llvm::Intrinsic::usub_sat;
    if (id) return b_.CreateBinaryIntrinsic(*id, a, b);
    if (n == "avgr_u") {  // (a + b + 1) / 2 without overflow: in lanes twice as wide
      auto* wide = llvm::FixedVectorType::get(llvm::IntegerType::get(me_.ctx, l.bits * 2), l.ivt->getNumElements());
      llvm::Value* sum = b_.CreateAdd(b_.CreateZExt(a, wide), b_.CreateZExt(b, wide));
      sum = b_.CreateAdd(sum, llvm::ConstantInt::get(wide, 1));
      return b_.CreateTrunc(b_.CreateLShr(sum, llvm::ConstantInt::get(wide, 1)), l.ivt);
    }
    if (n.starts_with("narrow_")) {  // signed lanes saturated to the half width, a's then b's
      const unsigned wide = l.bits * 2;
      auto* wt = llvm::FixedVectorType::get(llvm::IntegerType::get(me_.ctx, wide), l.ivt->getNumElements() / 2);
      llvm::SmallVector<int, 16> all;
      for (unsigned i = 0; i < l.ivt->getNumElements(); ++i) all.push_back(static_cast<int>(i));
      llvm::Value* both = b_.CreateShuffleVector(b_.CreateBitCast(a2, wt), b_.CreateBitCast(b2, wt), all);
      auto* bt = llvm::FixedVectorType::get(wt->getElementType(), l.ivt->getNumElements());
      const bool sign = n.ends_with("_s");
      const u64 lo = sign ? (~u64{0} << (l.bits - 1)) : 0;
      const u64 hi = sign ? (u64{1} << (l.bits - 1)) - 1 : (u64{1} << l.bits) - 1;
      llvm::Value* c = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, both, isplat(bt, lo));
      c = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, c, isplat(bt, hi));
      return b_.CreateTrunc(c, l.ivt);
    }
    if (n == "dot_i16x8_s") {
      auto [ae, ao] = pairs(l, a2, true);
      auto [be, bo] = pairs(l, b2, true);
      return b_.CreateAdd(b_.CreateMul(ae, be), b_.CreateMul(ao, bo));
    }
    if (n == "q15mulr_sat_s" || n == "relaxed_q15mulr_s") {  // (a * b + 0x4000) >> 15, saturated
      auto* wt = llvm::FixedVectorType::get(t_.i32, 8);
      llvm::Value* p32 = b_.CreateMul(b_.CreateSExt(a, wt), b_.CreateSExt(b, wt));
      p32 = b_.CreateAShr(b_.CreateAdd(p32, isplat(wt, 0x4000)), isplat(wt, 15));
      return b_.CreateTrunc(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, p32, isplat(wt, 0x7FFF)), l.ivt);
    }
    if (n == "relaxed_dot_i8x16_i7x16_s") return dot_i8_pairs(a2, b2);
    if (n.starts_with("extmul_")) {
      const bool high = n.starts_with("extmul_high");
      const bool sign = n.ends_with("_s");
      return b_.CreateMul(widen(l, a2, high, sign), widen(l, b2, high, sign));
    }
    return nullptr;
  }

  // Signed i8 products summed in pairs into wrapping i16 lanes (relaxed_dot's deterministic choice).
  llvm::Value* dot_i8_pairs(llvm::Value* a2, llvm::Value* b2) {
    const Lanes l = lanes_of("i16x8");
    auto [ae, ao] = pairs(l, a2, true);
    auto [be, bo] = pairs(l, b2, true);
    return b_.CreateAdd(b_.CreateMul(ae, be), b_.CreateMul(ao, bo));
  }
  // The inline form of a three-operand op, or null for the helper.
  llvm::Value* simd_tern(std::string_view text, llvm::Value* a2, llvm::Value* b2, llvm::Value* c2) {
    const std::string_view n = name_of(text);
    const Lanes l = lanes_of(shape_of(text));
    if (n == "bitselect" || n == "relaxed_laneselect")  // every bit of the mask selects
      return b_.CreateOr(b_.CreateAnd(a2, c2), b_.CreateAnd(b2, b_.CreateNot(c2)));
    if (n == "relaxed_madd" || n == "relaxed_nmadd") {  // fma(±a, b, c), one rounding, NaN lanes canonical
      llvm::Value* a = a2;
      if (n == "relaxed_nmadd") a = b_.CreateXor(b_.CreateBitCast(a2, l.ivt), splat(l, u64{1} << (l.bits - 1)));
      llvm::Value* r = constrained(llvm::Intrinsic::experimental_constrained_fma, l.vt,
                                   {b_.CreateBitCast(a, l.vt), b_.CreateBitCast(b2, l.vt), b_.CreateBitCast(c2, l.vt)});
      return canon(l, r);
    }
    if (n == "relaxed_dot_i8x16_i7x16_add_s") {
      auto [even, odd] = pairs(l, dot_i8_pairs(a2, b2), true);
      return b_.CreateAdd(b_.CreateAdd(even, odd), b_.CreateBitCast(c2, l.ivt));
    }
    return nullptr;
  }

  template <Op O, class A>
  void simd(const A& a) {
    constexpr const OpInfo& oi = info(O);
    [[maybe_unused]] const Types& t = t_;
    if constexpr (O == Op::VCanonF32x4 || O == Op::VCanonF64x2) {
      const unsigned bits = O == Op::VCanonF32x4 ? 32 : 64;
      set_slot(a.dst, canon_nan(slot(a.a), bits, 64 / bits));
      set_slot(a.dst + 1, canon_nan(slot(a.a + 1), bits, 64 / bits));
    } else if constexpr (O == Op::VCopy) {
      llvm::Value* lo = slot(a.src);
      llvm::Value* hi = slot(a.src + 1);
      set_slot(a.dst, lo);
      set_slot(a.dst + 1, hi);
    } else if constexpr (O == Op::VSelect) {
      llvm::Value* c = b_.CreateICmpNE(get(a.cond, VT::I32), u32c(0));
      llvm::Value* lo = b_.CreateSelect(c, slot(a.a), slot(a.b));
      llvm::Value* hi = b_.CreateSelect(c, slot(a.a + 1), slot(a.b + 1));
      set_slot(a.dst, lo);
      set_slot(a.dst + 1, hi);
    } else if constexpr (O == Op::VGlobalGet || O == Op::VGlobalSet) {
      llvm::Value* gp = invariant(b_.CreateLoad(t.ptr, b_.CreateConstInBoundsGEP1_64(t.ptr, globals_, a.global)));
      llvm::Value* lo = b_.CreateConstInBoundsGEP1_64(t.i8, gp, offsetof(GlobalInst, bits));
      llvm::Value* hi = b_.CreateConstInBoundsGEP1_64(t.i8, gp, offsetof(GlobalInst, bits_hi));
      if constexpr (O == Op::VGlobalGet) {
        set_slot(a.dst, b_.CreateLoad(t.i64, lo));
        set_slot(a.dst + 1, b_.CreateLoad(t.i64, hi));
      } else {
        b_.CreateStore(slot(a.src), lo);
        b_.CreateStore(slot(a.src + 1), hi);
      }
    } else {
      constexpr Opcode wop = oi.wasm;
      constexpr Layout L = oi.layout;
      const std::string_view text = info(wop).text;
      if constexpr (L == Layout::VConst) {
        set_slot(a.dst, b_.getInt64(a.value.lo));
        set_slot(a.dst + 1, b_.getInt64(a.value.hi));
      } else if constexpr (L == Layout::VLoad || L == Layout::VLoadLane) {
        llvm::Value* p = address(Where{ea(a.addr, a.offset), a.addr, 0, false, a.offset}, mem_width(info(wop).imm));
        [[maybe_unused]] const std::string_view n = name_of(text);
        [[maybe_unused]] const u32 w = mem_width(info(wop).imm);
        [[maybe_unused]] llvm::Type* wt = llvm::IntegerType::get(me_.ctx, w * 8);
        if constexpr (wop == Opcode::V128Load) {
          vput(a.dst, b_.CreateAlignedLoad(v2i64(), p, llvm::MaybeAlign(1)));
        } else if constexpr (L == Layout::VLoadLane) {
          llvm::Value* x = b_.CreateAlignedLoad(wt, p, llvm::MaybeAlign(1));
          auto* vt = llvm::FixedVectorType::get(wt, 16 / w);
          vput(a.dst, b_.CreateInsertElement(b_.CreateBitCast(vget(a.v), vt), x, u64{a.lane}));
        } else if (n.ends_with("_splat") || n.ends_with("_zero")) {
          llvm::Value* x = b_.CreateAlignedLoad(wt, p, llvm::MaybeAlign(1));
          auto* vt = llvm::FixedVectorType::get(wt, 16 / w);
          vput(a.dst, n.ends_with("_splat") ? b_.CreateVectorSplat(16 / w, x)
                                            : b_.CreateInsertElement(llvm::Constant::getNullValue(vt), x, u64{0}));
        } else {  // load8x8_s and the like: 8 bytes of half-width lanes, extended
          const Lanes l = lanes_of(n.starts_with("load8x8") ? "i16x8" : n.starts_with("load16x4") ? "i32x4" : "i64x2");
          auto* half = llvm::FixedVectorType::get(llvm::IntegerType::get(me_.ctx, l.bits / 2), 128 / l.bits);
          llvm::Value* x = b_.CreateAlignedLoad(half, p, llvm::MaybeAlign(1));
          vput(a.dst, n.ends_with("_s") ? b_.CreateSExt(x, l.ivt) : b_.CreateZExt(x, l.ivt));
        }
      } else if constexpr (L == Layout::VStore || L == Layout::VStoreLane) {
        llvm::Value* p = address(Where{ea(a.addr, a.offset), a.addr, 0, false, a.offset}, mem_width(info(wop).imm));
        if constexpr (wop == Opcode::V128Store) {
          b_.CreateAlignedStore(vget(a.val), p, llvm::MaybeAlign(1));
        } else {
          const u32 w = mem_width(info(wop).imm);
          llvm::Type* wt = llvm::IntegerType::get(me_.ctx, w * 8);
          auto* vt = llvm::FixedVectorType::get(wt, 16 / w);
          b_.CreateAlignedStore(b_.CreateExtractElement(b_.CreateBitCast(vget(a.val), vt), u64{a.lane}), p,
                                llvm::MaybeAlign(1));
        }
      } else if constexpr (L == Layout::VUnary || L == Layout::VBinary || L == Layout::VTernary) {
        llvm::Value* r = nullptr;
        if constexpr (L == Layout::VUnary) {
          r = simd_un(text, vget(a.a));
        } else if constexpr (L == Layout::VBinary) {
          if (wop != Opcode::I8x16Swizzle && wop != Opcode::I8x16RelaxedSwizzle) {
            r = simd_bin(text, vget(a.a), vget(a.b));
          } else if (me_.pshufb) {
            r = swizzle(vget(a.a), vget(a.b));
          }
        } else {
          r = simd_tern(text, vget(a.a), vget(a.b), vget(a.c));
        }
        if (r != nullptr) {
          vput(a.dst, r);
        } else {
          io_put(0, a.a);
          if constexpr (requires { a.b; }) io_put(2, a.b);
          if constexpr (requires { a.c; }) io_put(4, a.c);
          simd_call(O, nullptr, nullptr, 0);
          io_result(a.dst);
        }
      } else if constexpr (L == Layout::VShift) {
        const Lanes l = lanes_of(shape_of(text));
        const std::string_view n = name_of(text);
        llvm::Value* v = b_.CreateBitCast(vget(a.a), l.ivt);
        llvm::Value* count = b_.CreateAnd(get(a.b, VT::I32), u32c(l.bits - 1));  // modulo the lane width
        count = b_.CreateVectorSplat(l.ivt->getNumElements(), b_.CreateZExtOrTrunc(count, l.ivt->getElementType()));
        vput(a.dst, n == "shl" ? b_.CreateShl(v, count) : n == "shr_s" ? b_.CreateAShr(v, count) : b_.CreateLShr(v, count));
      } else if constexpr (L == Layout::VSplat) {
        const Lanes l = lanes_of(shape_of(text));
        llvm::Value* x = b_.CreateTrunc(slot(a.a), l.ivt->getElementType());
        vput(a.dst, b_.CreateVectorSplat(l.ivt->getNumElements(), x));
      } else if constexpr (L == Layout::VExtract) {
        const Lanes l = lanes_of(shape_of(text));
        llvm::Value* x = b_.CreateExtractElement(b_.CreateBitCast(vget(a.a), l.ivt), u64{a.lane});
        if (l.bits < 32 && name_of(text).ends_with("_s")) x = b_.CreateSExt(x, t.i32);
        set_slot(a.dst, b_.CreateZExt(x, t.i64));
      } else if constexpr (L == Layout::VReplace) {
        const Lanes l = lanes_of(shape_of(text));
        llvm::Value* x = b_.CreateTrunc(slot(a.b), l.ivt->getElementType());
        vput(a.dst, b_.CreateInsertElement(b_.CreateBitCast(vget(a.a), l.ivt), x, u64{a.lane}));
      } else if constexpr (L == Layout::VShuffle) {
        auto* v16 = llvm::FixedVectorType::get(t.i8, 16);
        llvm::SmallVector<int, 16> mask;
        for (unsigned i = 0; i < 16; ++i) mask.push_back(static_cast<int>(((i < 8 ? a.lanes.lo : a.lanes.hi) >> (8 * (i % 8))) & 31));
        vput(a.dst, b_.CreateShuffleVector(b_.CreateBitCast(vget(a.a), v16), b_.CreateBitCast(vget(a.b), v16), mask));
      } else if constexpr (L == Layout::VTest) {
        const Lanes l = lanes_of(shape_of(text));
        const std::string_view n = name_of(text);
        llvm::Value* v = b_.CreateBitCast(vget(a.a), l.ivt);
        const unsigned lanes = l.ivt->getNumElements();
        llvm::Type* mask_ty = llvm::IntegerType::get(me_.ctx, lanes);
        llvm::Value* r = nullptr;
        if (n == "any_true") {
          r = b_.CreateICmpNE(b_.CreateBitCast(v, llvm::IntegerType::get(me_.ctx, 128)),
                              llvm::ConstantInt::get(llvm::IntegerType::get(me_.ctx, 128), 0));
        } else if (n == "all_true") {
          llvm::Value* nonzero = b_.CreateICmpNE(v, llvm::Constant::getNullValue(l.ivt));
          r = b_.CreateICmpEQ(b_.CreateBitCast(nonzero, mask_ty), llvm::Constant::getAllOnesValue(mask_ty));
        } else {  // bitmask: each lane's top bit
          llvm::Value* neg = b_.CreateICmpSLT(v, llvm::Constant::getNullValue(l.ivt));
          r = b_.CreateBitCast(neg, mask_ty);
        }
        set_slot(a.dst, b_.CreateZExt(r, t.i64));
      } else {
        static_assert(L == Layout::VConst, "a SIMD layout FunctionEmitter::simd does not emit");
      }
    }
  }

  // ---- garbage collection (gc_heap.hpp's reference encoding). i31 ops, ref.eq and the two
  // conversions are bit operations inline; ref.test, ref.cast and br_on_cast test null inline and
  // call gc_ref_test otherwise; struct.get/set, array.get/set and array.len resolve the handle
  // inline through the heap's handle table (gc_object, as GcHeap::get) and read or write the
  // field in place, with gc_ops.hpp's traps in its order; every other op calls its helper
  // (runtime_calls.cpp), the
  // interpreter's handler on this frame's slots: the operand slots are stored to fp first, the
  // result slots reloaded after, the counter passed through the context (array ops charge per
  // element). Roots: a helper that allocates may collect; the collection scans the value stack
  // up to fp + frame_slots, where gc_spill_frame stored every slot first (and store_args before
  // a call in a GC module), and the native stack from the helper up to the outermost jit::enter,
  // conservatively, with the callee-saved registers spilled first (roots.cpp), where LLVM keeps
  // each SSA value live across the call. References are only compared, stored and passed on here
  // (never decoded into pointers), so no derived value stands in for a live handle.
  // Slots [0, upto) to fp before a call that may collect (an allocation, a call in a GC module).
  // The slots hold what the interpreter's frame holds at this point, so the collection reads the
  // same value stack on both tiers and keeps the same objects: a reference left in a slot no
  // longer read (a local about to be overwritten by the object being made) keeps its object
  // alive in both, and a guest allocating up to the store's limit is refused at the same
  // allocation (CompilerGc.AllocatingUpToTheStoreLimitEndsTheSameWay). Without it such a
  // reference would be dead in SSA and its object freed by the compiled tier only.
  void gc_spill_frame(u32 upto) {
    for (u32 i = 0; i < upto; ++i) b_.CreateStore(slot(i), fp_at(i));
  }
  void gc_store(u32 s, u32 n) {
    for (u32 i = 0; i < n; ++i) b_.CreateStore(slot(s + i), fp_at(s + i));
  }
  void gc_reload(u32 s, u32 n) {
    for (u32 i = 0; i < n; ++i) set_slot(s + i, b_.CreateLoad(t_.i64, fp_at(s + i)));
  }
  // The GcObject* a handle names, as GcHeap::get: an object handle (not null, an i31 or a host
  // reference) whose slot is in the table, holds an object and carries its generation; anything
  // else traps with `null_trap` (a struct's or an array's null reference), as gc_ops.hpp does.
  llvm::Value* gc_object(llvm::Value* h, TrapKind null_trap) {
    llvm::Value* not_object =
        b_.CreateOr(b_.CreateICmpEQ(h, b_.getInt64(0)), b_.CreateICmpNE(b_.CreateAnd(h, b_.getInt64(gcref::kExternBit | 1)),
                                                                        b_.getInt64(0)));
    llvm::Value* index = b_.CreateSub(b_.CreateLShr(b_.CreateAnd(h, b_.getInt64(0xFFFFFFFFu)), 1), b_.getInt64(1));
    llvm::Value* table = invariant(ctx_load(t_.ptr, offsetof(Ctx, gc_handles)));
    llvm::Value* base = b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.i8, table, offsetof(GcHeap::HandleTable, base)));
    llvm::Value* size = b_.CreateLoad(t_.i64, b_.CreateConstInBoundsGEP1_64(t_.i8, table, offsetof(GcHeap::HandleTable, size)));
    trap_if(b_.CreateOr(not_object, b_.CreateICmpUGE(index, size)), null_trap);
    llvm::Value* entry = b_.CreateGEP(t_.i8, base, b_.CreateMul(index, b_.getInt64(sizeof(GcHeap::Slot))));
    llvm::Value* object = b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.i8, entry, offsetof(GcHeap::Slot, object)));
    llvm::Value* generation =
        b_.CreateLoad(t_.i32, b_.CreateConstInBoundsGEP1_64(t_.i8, entry, offsetof(GcHeap::Slot, generation)));
    trap_if(b_.CreateOr(b_.CreateICmpNE(generation, b_.CreateTrunc(b_.CreateLShr(h, 32), t_.i32)), b_.CreateIsNull(object)),
            null_trap);
    return object;
  }
  // Byte `offset` of an object's data (after its GcObject header).
  llvm::Value* gc_data(llvm::Value* object, llvm::Value* offset) {
    return b_.CreateGEP(t_.i8, b_.CreateConstInBoundsGEP1_64(t_.i8, object, sizeof(GcObject)), offset);
  }
  // gc_read: a field or element of `size` bytes at p into slots dst (two for 16).
  void gc_load(u32 dst, llvm::Value* p, u32 size, bool sign) {
    if (size == 16) {
      set_slot(dst, b_.CreateAlignedLoad(t_.i64, p, llvm::Align(1)));
      set_slot(dst + 1, b_.CreateAlignedLoad(t_.i64, b_.CreateConstInBoundsGEP1_64(t_.i8, p, 8), llvm::Align(1)));
      return;
    }
    if (size == 8) {
      set_slot(dst, b_.CreateAlignedLoad(t_.i64, p, llvm::Align(1)));
      return;
    }
    llvm::Value* v = b_.CreateAlignedLoad(b_.getIntNTy(size * 8), p, llvm::Align(1));
    if (size < 4) v = sign ? b_.CreateSExt(v, t_.i32) : b_.CreateZExt(v, t_.i32);
    set_slot(dst, b_.CreateZExt(v, t_.i64));
  }
  // The low `size` bytes of slots val (two for 16) to p.
  void gc_write(llvm::Value* p, u32 val, u32 size) {
    store_element(p, slot(val), size == 16 ? slot(val + 1) : nullptr, size);
  }
  // The low `size` bytes of `lo` to p (a v128: lo, then hi).
  void store_element(llvm::Value* p, llvm::Value* lo, llvm::Value* hi, u32 size) {
    if (size == 16) {
      b_.CreateAlignedStore(lo, p, llvm::Align(1));
      b_.CreateAlignedStore(hi, b_.CreateConstInBoundsGEP1_64(t_.i8, p, 8), llvm::Align(1));
      return;
    }
    b_.CreateAlignedStore(b_.CreateTrunc(lo, b_.getIntNTy(size * 8)), p, llvm::Align(1));
  }
  // An array's length (GcObject::length), zero-extended to i64.
  llvm::Value* gc_length(llvm::Value* object) {
    return b_.CreateZExt(b_.CreateLoad(t_.i32, b_.CreateConstInBoundsGEP1_64(t_.i8, object, offsetof(GcObject, length))),
                         t_.i64);
  }
  // An array's element `idx_slot` (an i32, zero-extended in its slot): its address, after the
  // bounds check against the array's length.
  llvm::Value* gc_element(llvm::Value* object, u32 idx_slot, u32 size) {
    llvm::Value* i = b_.CreateAnd(slot(idx_slot), b_.getInt64(0xFFFFFFFFu));
    trap_if(b_.CreateICmpUGE(i, gc_length(object)), TrapKind::OutOfBoundsArrayAccess);
    return gc_data(object, b_.CreateMul(i, b_.getInt64(size)));
  }
  // Calls helper `name` (u32 (Ctx*, u64* fp, u32 imms...)), its status checked, then reloads the
  // `dst_n` result slots at dst; one that `allocates` (may collect) gets the whole frame first.
  void gc_call(const char* name, std::initializer_list<u32> imms, u32 dst, u32 dst_n, bool allocates = false) {
    if (allocates) gc_spill_frame(f_.frame_slots);
    std::vector<llvm::Type*> params{t_.ptr, t_.ptr};
    std::vector<llvm::Value*> args{ctxp_, fp_};
    for (u32 v : imms) {
      params.push_back(t_.i32);
      args.push_back(u32c(v));
    }
    call_status(name, params, args);
    gc_reload(dst, dst_n);
  }
  // A small object made inline as GcHeap::make's fast path makes it, on the state the heap keeps
  // for machine code (GcHeap::Inline): a block of `block` bytes (size class `cls`) from the
  // class's free list, else the next unused block of the chunk the class bumps, and a slot from
  // the free ones; its header written (`length_bytes`: the length and the data's bytes, rounded
  // to 8, as one word), its data by `fill(data)` (every byte of it: make zeroes them), the slot
  // pointed at it and the heap's counts moved on, so the heap is left as the interpreter leaves
  // it. `fits` false (too big for a size class), no block, no slot, or (metered, `charge` given:
  // a bulk operation's per-element fuel) a balance that `charge` would spend: `slow()` instead
  // (the helper, which charges, may take a pooled chunk, grow the heap or collect, so the frame is
  // spilled on that cold path only). The new handle goes to slot `dst` on both paths.
  void gc_new_inline(u32 dst, u32 type, llvm::Value* fits, llvm::Value* cls, llvm::Value* block,
                     llvm::Value* length_bytes, llvm::Value* charge, llvm::function_ref<void(llvm::Value*)> fill,
                     llvm::function_ref<void()> slow_path) {
    static_assert(offsetof(GcObject, type) == 0 && offsetof(GcObject, tag) == 8 && offsetof(GcObject, length) == 16 &&
                  offsetof(GcObject, bytes) == 20 && offsetof(GcObject, slot) == 24 &&
                  offsetof(GcObject, marked) == 28 && offsetof(GcObject, live) == 29);
    auto at = [&](llvm::Value* p, std::uint64_t off) { return b_.CreateConstInBoundsGEP1_64(t_.i8, p, off); };
    llvm::Value* in = in_state();
    auto class_entry = [&](std::size_t array_at) { return b_.CreateGEP(t_.ptr, at(in, array_at), cls); };
    llvm::Value* count_at = at(in, offsetof(GcHeap::Inline, free_count));
    llvm::Value* count = b_.CreateLoad(t_.i64, count_at);
    llvm::Value* refused = b_.CreateICmpEQ(count, b_.getInt64(0));
    if (fits != nullptr) refused = b_.CreateOr(refused, b_.CreateNot(fits));
    if (me_.metered && charge != nullptr)
      refused = b_.CreateOr(refused, b_.CreateICmpSLE(b_.CreateLoad(t_.i64, fuel_), charge));
    auto* pick = new_block("gc_new_block");
    auto* from_free = new_block("gc_new_free");
    auto* try_bump = new_block("gc_new_try_bump");
    auto* from_bump = new_block("gc_new_bump");
    auto* made_inline = new_block("gc_new_inline");
    auto* slow = new_block("gc_new_helper");
    auto* made = new_block("gc_made");
    b_.CreateCondBr(refused, slow, pick, cold_);

    b_.SetInsertPoint(pick);
    llvm::Value* head_at = class_entry(offsetof(GcHeap::Inline, free));
    llvm::Value* head = b_.CreateLoad(t_.ptr, head_at);
    b_.CreateCondBr(b_.CreateIsNull(head), try_bump, from_free);

    b_.SetInsertPoint(from_free);
    b_.CreateStore(b_.CreateLoad(t_.ptr, head), head_at);  // the next free block (its first word)
    b_.CreateBr(made_inline);

    b_.SetInsertPoint(try_bump);
    llvm::Value* bump_at = class_entry(offsetof(GcHeap::Inline, bump));
    llvm::Value* next = b_.CreateLoad(t_.ptr, bump_at);
    llvm::Value* end = b_.CreateLoad(t_.ptr, class_entry(offsetof(GcHeap::Inline, bump_end)));
    b_.CreateCondBr(b_.CreateICmpEQ(next, end), slow, from_bump, cold_);

    b_.SetInsertPoint(from_bump);
    b_.CreateStore(b_.CreateGEP(t_.i8, next, block), bump_at);
    b_.CreateBr(made_inline);

    b_.SetInsertPoint(slow);
    slow_path();
    b_.CreateBr(made);

    b_.SetInsertPoint(made_inline);
    llvm::PHINode* object = b_.CreatePHI(t_.ptr, 2);
    object->addIncoming(head, from_free);
    object->addIncoming(next, from_bump);
    if (me_.metered && charge != nullptr) b_.CreateStore(b_.CreateSub(b_.CreateLoad(t_.i64, fuel_), charge), fuel_);
    llvm::Value* left = b_.CreateSub(count, b_.getInt64(1));
    b_.CreateStore(left, count_at);
    llvm::Value* slots = b_.CreateLoad(t_.ptr, at(in, offsetof(GcHeap::Inline, free_slots)));
    llvm::Value* slot_index = b_.CreateLoad(t_.i32, b_.CreateGEP(t_.i32, slots, left));
    llvm::Value* types = invariant(ctx_load(t_.ptr, offsetof(Ctx, types)));
    b_.CreateStore(invariant(b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.ptr, types, type))), object);
    b_.CreateStore(llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(t_.ptr)), at(object, 8));
    b_.CreateStore(length_bytes, at(object, 16));
    // slot, marked (false), live (true); the two bytes after them are padding
    b_.CreateStore(b_.CreateOr(b_.CreateZExt(slot_index, t_.i64), b_.getInt64(std::uint64_t{1} << 40)), at(object, 24));
    fill(at(object, sizeof(GcObject)));
    llvm::Value* table = invariant(ctx_load(t_.ptr, offsetof(Ctx, gc_handles)));
    llvm::Value* entries = b_.CreateLoad(t_.ptr, at(table, offsetof(GcHeap::HandleTable, base)));
    llvm::Value* entry =
        b_.CreateGEP(t_.i8, entries, b_.CreateMul(b_.CreateZExt(slot_index, t_.i64), b_.getInt64(sizeof(GcHeap::Slot))));
    b_.CreateStore(object, at(entry, offsetof(GcHeap::Slot, object)));
    llvm::Value* generation = b_.CreateLoad(t_.i32, at(entry, offsetof(GcHeap::Slot, generation)));
    auto bump = [&](std::size_t off, llvm::Value* by) {
      llvm::Value* p = at(in, off);
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(t_.i64, p), by), p);
    };
    bump(offsetof(GcHeap::Inline, live_bytes), block);
    bump(offsetof(GcHeap::Inline, since_collect), block);
    bump(offsetof(GcHeap::Inline, live_count), b_.getInt64(1));
    llvm::Value* handle =
        b_.CreateOr(b_.CreateShl(b_.CreateZExt(generation, t_.i64), 32),
                    b_.CreateShl(b_.CreateAdd(b_.CreateZExt(slot_index, t_.i64), b_.getInt64(1)), 1));
    set_slot(dst, handle);
    b_.CreateBr(made);
    b_.SetInsertPoint(made);
  }
  llvm::Value* in_state() { return invariant(ctx_load(t_.ptr, offsetof(Ctx, gc_inline))); }
  // Zeroes `bytes` (a multiple of 8, an i64 value) at p: a loop of i64 stores.
  void zero_words(llvm::Value* p, llvm::Value* bytes) {
    each_element(bytes, 8, [&](llvm::Value* at) { b_.CreateAlignedStore(b_.getInt64(0), b_.CreateGEP(t_.i8, p, at), llvm::Align(8)); });
  }
  // body(offset) for offset = 0, step, 2 step, ... below `end` (i64 values): a loop in the IR.
  void each_element(llvm::Value* end, std::uint64_t step, llvm::function_ref<void(llvm::Value*)> body) {
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* loop = new_block("gc_fill");
    auto* done = new_block("gc_filled");
    b_.CreateCondBr(b_.CreateICmpEQ(end, b_.getInt64(0)), done, loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* off = b_.CreatePHI(t_.i64, 2);
    off->addIncoming(b_.getInt64(0), before);
    body(off);
    llvm::Value* after = b_.CreateAdd(off, b_.getInt64(step));
    off->addIncoming(after, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpULT(after, end), loop, done);
    b_.SetInsertPoint(done);
  }
  // struct.new (fields from slots `base` on) and struct.new_default (base kGcNoSlot): inline for
  // a struct of a size class (gc_new_inline), else the helper.
  void struct_new(u32 dst, u32 type, u32 base, u32 top) {
    const FuncType& st = me_.cm.module.types[type];
    const std::uint64_t bytes = struct_field_offset(st, st.fields.size());  // a multiple of 8
    const std::uint64_t block = GcHeap::block_bytes(bytes);
    auto helper = [&] { gc_call("sprawling_jit_struct_new", {dst, type, base, top}, dst, 1, true); };
    if (block > GcHeap::kSmallBytes) {
      helper();
      return;
    }
    auto fill = [&](llvm::Value* data) {
      auto at = [&](std::uint64_t off) { return b_.CreateConstInBoundsGEP1_64(t_.i8, data, off); };
      if (base == kGcNoSlot) {
        for (std::uint64_t off = 0; off < bytes; off += 8) b_.CreateStore(b_.getInt64(0), at(off));
        return;
      }
      // A field's slot holds its value zero-extended (a packed one: the i32 operand, cut to its
      // size here, as gc_struct_new's copy of the low bytes into a zeroed field does).
      std::uint64_t off = 0;
      u32 s = base;
      for (const FieldType& f : st.fields) {
        const u32 size = element_bytes(f);
        if (size == 16) {
          b_.CreateStore(slot(s), at(off));
          b_.CreateStore(slot(s + 1), at(off + 8));
          off += 16;
          s += 2;
          continue;
        }
        llvm::Value* v = slot(s);
        if (size < 8) v = b_.CreateAnd(v, b_.getInt64((std::uint64_t{1} << (size * 8)) - 1));
        b_.CreateStore(v, at(off));
        off += 8;
        s += 1;
      }
    };
    gc_new_inline(dst, type, nullptr, b_.getInt64(GcHeap::size_class(block)), b_.getInt64(block),
                  b_.getInt64(bytes << 32), nullptr, fill, helper);
  }
  // The data bytes (rounded to 8) and block of an array of `n` (an i64 value) elements of `size`
  // bytes, and whether it fits a size class (n * size <= kSmallBytes - the header: no overflow,
  // n < 2^32): GcHeap::make's arithmetic.
  struct ArrayShape {
    llvm::Value* fits;
    llvm::Value* data_bytes;
    llvm::Value* block;
    llvm::Value* cls;
  };
  ArrayShape array_shape(llvm::Value* n, u32 size) {
    llvm::Value* raw = b_.CreateMul(n, b_.getInt64(size));
    llvm::Value* data_bytes = b_.CreateAnd(b_.CreateAdd(raw, b_.getInt64(7)), b_.getInt64(~std::uint64_t{7}));
    llvm::Value* block = b_.CreateAnd(b_.CreateAdd(data_bytes, b_.getInt64(GcHeap::kObjectBytes + 15)),
                                      b_.getInt64(~std::uint64_t{15}));
    return {b_.CreateICmpULE(raw, b_.getInt64(GcHeap::kSmallBytes - GcHeap::kObjectBytes)), data_bytes, block,
            b_.CreateSub(b_.CreateLShr(block, 4), b_.getInt64(1))};
  }
  // array.new (each element the value in slots `init`) and array.new_default (init kGcNoSlot,
  // zeroes): inline when the array fits a size class and (metered) the balance covers its
  // per-element charge, else the helper.
  void array_new(u32 dst, u32 type, u32 init, u32 n_slot, u32 top) {
    const FieldType& f = me_.cm.module.types[type].fields[0];
    const u32 size = element_bytes(f);
    llvm::Value* n = b_.CreateAnd(slot(n_slot), b_.getInt64(0xFFFFFFFFu));
    const ArrayShape shape = array_shape(n, size);
    auto helper = [&] {
      if (init != kGcNoSlot) gc_store(init, field_slots(f));
      gc_store(n_slot, 1);
      gc_call("sprawling_jit_array_new", {dst, type, init, n_slot, top}, dst, 1, true);
    };
    llvm::Value* lo = init == kGcNoSlot ? nullptr : slot(init);
    llvm::Value* hi = init == kGcNoSlot || size != 16 ? nullptr : slot(init + 1);
    auto fill = [&](llvm::Value* data) {
      if (init == kGcNoSlot || size < 8) zero_words(data, shape.data_bytes);  // packed: the padding after the last
      if (init != kGcNoSlot)
        each_element(b_.CreateMul(n, b_.getInt64(size)), size,
                     [&](llvm::Value* off) { store_element(b_.CreateGEP(t_.i8, data, off), lo, hi, size); });
    };
    gc_new_inline(dst, type, shape.fits, shape.cls, shape.block,
                  b_.CreateOr(n, b_.CreateShl(shape.data_bytes, 32)), n, fill, helper);
  }
  // array.new_fixed: `n` elements from slots `base` on (two slots each for a v128).
  void array_new_fixed(u32 dst, u32 type, u32 base, u32 n, u32 top) {
    const FieldType& f = me_.cm.module.types[type].fields[0];
    const u32 size = element_bytes(f);
    const std::uint64_t data_bytes = (std::uint64_t{n} * size + 7) & ~std::uint64_t{7};
    const std::uint64_t block = GcHeap::block_bytes(data_bytes);
    auto helper = [&] {
      gc_store(base, n * field_slots(f));
      gc_call("sprawling_jit_array_new_fixed", {dst, type, base, n, top}, dst, 1, true);
    };
    if (std::uint64_t{n} * size > GcHeap::kSmallBytes - GcHeap::kObjectBytes) {
      helper();
      return;
    }
    auto fill = [&](llvm::Value* data) {
      for (std::uint64_t off = std::uint64_t{n} * size / 8 * 8; off < data_bytes; off += 8)
        b_.CreateStore(b_.getInt64(0), b_.CreateConstInBoundsGEP1_64(t_.i8, data, off));  // the padding after the last
      u32 s = base;
      for (u32 k = 0; k < n; ++k) {
        store_element(b_.CreateConstInBoundsGEP1_64(t_.i8, data, std::uint64_t{k} * size), slot(s),
                      size == 16 ? slot(s + 1) : nullptr, size);
        s += field_slots(f);
      }
    };
    gc_new_inline(dst, type, nullptr, b_.getInt64(GcHeap::size_class(block)), b_.getInt64(block),
                  b_.getInt64(n | (data_bytes << 32)), nullptr, fill, helper);
  }
  // gc_ref_test(v, heap, flags) as an i1: null inline (flags bit 0), the rest in the helper.
  llvm::Value* gc_test(llvm::Value* v, u32 heap, u32 flags) {
    auto* nonnull = new_block("ref_nonnull");
    auto* join = new_block("ref_tested");
    llvm::BasicBlock* from = b_.GetInsertBlock();
    b_.CreateCondBr(b_.CreateICmpEQ(v, b_.getInt64(0)), join, nonnull);
    b_.SetInsertPoint(nonnull);
    llvm::Value* r = b_.CreateCall(me_.helper("sprawling_jit_ref_test", t_.i32, {t_.ptr, t_.i64, t_.i32, t_.i32}),
                                   {ctxp_, v, u32c(heap), u32c(flags)});
    llvm::Value* hit = b_.CreateICmpNE(r, u32c(0));
    llvm::BasicBlock* tested = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode* phi = b_.CreatePHI(t_.i1, 2);
    phi->addIncoming(b_.getInt1((flags & 1) != 0), from);
    phi->addIncoming(hit, tested);
    return phi;
  }
  // Slots of a struct's fields or of n array elements in frame-slot layout (a v128 takes two).
  static u32 field_slots(const FieldType& f) {
    return f.packed == FieldType::Packed::None && f.type == ValType::V128 ? 2 : 1;
  }
  u32 struct_slots(u32 type) const {
    u32 n = 0;
    for (const FieldType& f : me_.cm.module.types[type].fields) n += field_slots(f);
    return n;
  }

  template <Op O, class A>
  void gc(const A& a, [[maybe_unused]] unsigned fall) {
    const Types& t = t_;
    const u32 top = f_.frame_slots;
    if constexpr (O == Op::RefEq) {
      put(a.dst, bool32(b_.CreateICmpEQ(slot(a.a), slot(a.b))), VT::I32);
    } else if constexpr (O == Op::RefI31) {
      // (v & 0x7FFFFFFF) << 1 | 1, of the i32 operand.
      llvm::Value* v = b_.CreateAnd(b_.CreateZExt(i32s(a.a), t.i64), b_.getInt64(0x7FFFFFFF));
      set_slot(a.dst, b_.CreateOr(b_.CreateShl(v, 1), b_.getInt64(1)));
    } else if constexpr (O == Op::I31GetS || O == Op::I31GetU) {
      llvm::Value* r = slot(a.a);
      trap_if(b_.CreateICmpEQ(r, b_.getInt64(0)), TrapKind::NullI31Reference);
      llvm::Value* u = b_.CreateAnd(b_.CreateTrunc(b_.CreateLShr(r, 1), t.i32), u32c(0x7FFFFFFF));
      if constexpr (O == Op::I31GetS) u = b_.CreateAShr(b_.CreateShl(u, 1), 1);  // bit 30 into bit 31
      put(a.dst, u, VT::I32);
    } else if constexpr (O == Op::AnyConvertExtern || O == Op::ExternConvertAny) {
      // Null stays null; anything else flips bit 63 (to_any and to_extern are the same XOR).
      llvm::Value* r = slot(a.a);
      llvm::Value* flipped = b_.CreateXor(r, b_.getInt64(gcref::kExternBit));
      set_slot(a.dst, b_.CreateSelect(b_.CreateICmpEQ(r, b_.getInt64(0)), r, flipped));
    } else if constexpr (O == Op::RefTest) {
      put(a.dst, bool32(gc_test(slot(a.ref), a.heap, a.flags)), VT::I32);
    } else if constexpr (O == Op::RefCast) {
      llvm::Value* v = slot(a.ref);
      trap_if(b_.CreateNot(gc_test(v, a.heap, a.flags)), TrapKind::CastFailure);
      set_slot(a.dst, v);
    } else if constexpr (O == Op::BrOnCast || O == Op::BrOnCastFail) {
      llvm::Value* hit = gc_test(slot(a.ref), a.heap, a.flags);
      cond_branch(O == Op::BrOnCast ? hit : b_.CreateNot(hit), a.off, fall);
    } else if constexpr (O == Op::StructNew) {
      struct_new(a.dst, a.type, a.base, top);
    } else if constexpr (O == Op::StructNewDefault) {
      struct_new(a.dst, a.type, kGcNoSlot, top);
    } else if constexpr (O == Op::StructGet || O == Op::StructGetS) {
      llvm::Value* o = gc_object(slot(a.ref), TrapKind::NullStructReference);
      gc_load(a.dst, gc_data(o, b_.getInt64(a.offset)), a.size, O == Op::StructGetS);
    } else if constexpr (O == Op::StructSet) {
      llvm::Value* o = gc_object(slot(a.ref), TrapKind::NullStructReference);
      gc_write(gc_data(o, b_.getInt64(a.offset)), a.val, a.size);
    } else if constexpr (O == Op::ArrayNew) {
      array_new(a.dst, a.type, a.init, a.n, top);
    } else if constexpr (O == Op::ArrayNewDefault) {
      array_new(a.dst, a.type, kGcNoSlot, a.n, top);
    } else if constexpr (O == Op::ArrayNewFixed) {
      array_new_fixed(a.dst, a.type, a.base, a.n, top);
    } else if constexpr (O == Op::ArrayNewData) {
      gc_store(a.s, 1);
      gc_store(a.n, 1);
      gc_call("sprawling_jit_array_new_data", {a.dst, a.type, a.data, a.s, a.n, top}, a.dst, 1, true);
    } else if constexpr (O == Op::ArrayNewElem) {
      gc_store(a.s, 1);
      gc_store(a.n, 1);
      gc_call("sprawling_jit_array_new_elem", {a.dst, a.type, a.elem, a.s, a.n, top}, a.dst, 1, true);
    } else if constexpr (O == Op::ArrayGet || O == Op::ArrayGetS) {
      llvm::Value* o = gc_object(slot(a.ref), TrapKind::NullArrayReference);
      gc_load(a.dst, gc_element(o, a.idx, a.size), a.size, O == Op::ArrayGetS);
    } else if constexpr (O == Op::ArraySet) {
      llvm::Value* o = gc_object(slot(a.ref), TrapKind::NullArrayReference);
      gc_write(gc_element(o, a.idx, a.size), a.val, a.size);
    } else if constexpr (O == Op::ArrayLen) {
      set_slot(a.dst, gc_length(gc_object(slot(a.a), TrapKind::NullArrayReference)));
    } else if constexpr (O == Op::ArrayFill) {
      gc_store(a.ref, 1);
      gc_store(a.d, 1);
      gc_store(a.val, a.size == 16 ? 2 : 1);
      gc_store(a.n, 1);
      gc_call("sprawling_jit_array_fill", {a.ref, a.d, a.val, a.n, a.size}, 0, 0);
    } else if constexpr (O == Op::ArrayCopy) {
      gc_store(a.dref, 1);
      gc_store(a.d, 1);
      gc_store(a.sref, 1);
      gc_store(a.s, 1);
      gc_store(a.n, 1);
      gc_call("sprawling_jit_array_copy", {a.dref, a.d, a.sref, a.s, a.n, a.size}, 0, 0);
    } else if constexpr (O == Op::ArrayInitData) {
      gc_store(a.ref, 1);
      gc_store(a.d, 1);
      gc_store(a.s, 1);
      gc_store(a.n, 1);
      gc_call("sprawling_jit_array_init_data", {a.data, a.ref, a.d, a.s, a.n, a.size}, 0, 0);
    } else if constexpr (O == Op::ArrayInitElem) {
      gc_store(a.ref, 1);
      gc_store(a.d, 1);
      gc_store(a.s, 1);
      gc_store(a.n, 1);
      gc_call("sprawling_jit_array_init_elem", {a.elem, a.ref, a.d, a.s, a.n}, 0, 0);
    } else {
      static_assert(O == Op::Count_, "a Gc op FunctionEmitter::gc does not emit");
    }
  }

  // A bulk memory or table helper (it may charge per unit and refuel): its status.
  void call_status(const char* name, llvm::ArrayRef<llvm::Type*> params, llvm::ArrayRef<llvm::Value*> args) {
    store_fuel();
    llvm::Value* st = b_.CreateCall(me_.helper(name, t_.i32, params), args);
    load_fuel();
    helper_status(st);
  }
  llvm::Value* i32s(u32 s) { return get(s, VT::I32); }
};


// Calls fn(defined index) for each defined function a `call` in `f`'s code (its scan `sc`) names.
template <typename Fn>
void for_each_direct_callee(const Module& m, const Scan& sc, const CompiledFunc& f, Fn fn) {
  for (const Instr& in : sc.instrs) {
    if (in.op != Op::Call) continue;
    const u32 callee = layout::Call::read(f.code.data() + in.at).func;
    if (callee >= m.imported_funcs) fn(callee - m.imported_funcs);
  }
}

}  // namespace

void ModuleEmitter::note_calls(const Scan& sc, const CompiledFunc& f) {
  for_each_direct_callee(cm.module, sc, f, [&](u32 d) {
    if (called_here.size() < fns.size()) called_here.resize(fns.size(), 0);
    called_here[d] = 1;
  });
}

bool ModuleEmitter::in_registers(u32 d) {
  if (registers.size() < fns.size()) registers.resize(fns.size(), -1);
  if (registers[d] < 0) {
    const CompiledFunc& f = funcs[d];
    bool ok = f.num_params + (metered ? 1 : 0) <= kRegisterArgs && f.num_results <= 1;  // metered: the counter too
    for (std::size_t w = 0; ok && w < f.code.size();) {
      const Op op = op_of_word(f.code[w], metered);
      if (op == Op::Count_) break;  // scan() refuses such code, so it has no IR
      ok = op != Op::ReturnCall && op != Op::ReturnCallIndirect && op != Op::ReturnCallRef;
      w += instr_words(op, f.code.data() + w, metered);
    }
    registers[d] = ok ? 1 : 0;
  }
  return registers[d] == 1;
}

bool ModuleEmitter::host_has_pshufb(const llvm::Module& m) {
  static const bool ssse3 = [] {
    const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    const auto it = features.find("ssse3");
    return it != features.end() && it->second;
  }();
  return ssse3 && llvm::Triple(m.getTargetTriple()).getArch() == llvm::Triple::x86_64;
}

u32 emit_function(ModuleEmitter& me, u32 defined, const Scan& sc) {
  llvm::Function* body = me.body(defined);
  FunctionEmitter emitter(me, defined, sc, body != nullptr ? body : me.fns[defined]);
  emitter.emit();
  if (body != nullptr) {
    // The entry: the arguments from the frame, then a call of the body (every argument in a
    // register), whose {status, result} it returns, with the result stored at fp on a normal
    // return. Metered, the counter goes in from the context and, on a normal return, back to it.
    llvm::Function* entry = me.fns[defined];
    entry->addFnAttr(llvm::Attribute::NoUnwind);
    entry->addParamAttr(0, llvm::Attribute::NoAlias);
    entry->addParamAttr(1, llvm::Attribute::NoAlias);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(me.ctx, "entry", entry));
    llvm::Value* ctx = entry->getArg(0);
    llvm::Value* fuel_at = b.CreateConstInBoundsGEP1_64(me.t.i8, ctx, offsetof(Ctx, fuel));
    llvm::Value* fr = b.CreateLoad(me.t.ptr, b.CreateConstInBoundsGEP1_64(me.t.i8, ctx, offsetof(Ctx, fr)));
    std::vector<llvm::Value*> args{ctx, entry->getArg(1), b.CreateConstInBoundsGEP1_64(me.t.i8, fr, -sizeof(Frame))};
    if (me.metered) args.push_back(b.CreateLoad(me.t.i64, fuel_at));
    for (u32 i = 0; args.size() < body->arg_size(); ++i)
      args.push_back(b.CreateLoad(me.t.i64, b.CreateConstInBoundsGEP1_64(me.t.i64, entry->getArg(1), i)));
    llvm::CallInst* r = b.CreateCall(body, args);
    llvm::Value* status = b.CreateExtractValue(r, 0);
    if (me.funcs[defined].num_results == 1) {
      // The result at fp on a normal return (the body gives it in a register only).
      auto* returned = llvm::BasicBlock::Create(me.ctx, "returned", entry);
      auto* done = llvm::BasicBlock::Create(me.ctx, "done", entry);
      b.CreateCondBr(b.CreateICmpEQ(status, b.getInt32(0)), returned, done);
      b.SetInsertPoint(returned);
      b.CreateStore(b.CreateExtractValue(r, 1), entry->getArg(1));
      b.CreateBr(done);
      b.SetInsertPoint(done);
    }
    if (!me.metered) {
      b.CreateRet(r);
    } else {
      llvm::Value* kept = b.CreateLoad(me.t.i64, fuel_at);
      b.CreateStore(b.CreateSelect(b.CreateICmpEQ(status, b.getInt32(0)), b.CreateExtractValue(r, 2), kept), fuel_at);
      b.CreateRet(entry_result(b, status, b.CreateExtractValue(r, 1)));
    }
  }
  return emitter.osr();
}

void emit_body_adapter(ModuleEmitter& me, u32 defined) {
  const u32 np = me.funcs[defined].num_params;
  llvm::Function* adapter =
      llvm::Function::Create(me.body_type(np), llvm::Function::ExternalLinkage, ModuleEmitter::body_name(defined), me.mod);
  adapter->setDSOLocal(true);
  adapter->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(me.ctx, "entry", adapter));
  llvm::Value* ctx = adapter->getArg(0);
  llvm::Value* fp = adapter->getArg(1);
  // As a native call of an entry: the callee's frame record from the context, the counter in it.
  b.CreateStore(b.CreateConstInBoundsGEP1_64(me.t.i8, adapter->getArg(2), sizeof(Frame)),
                b.CreateConstInBoundsGEP1_64(me.t.i8, ctx, offsetof(Ctx, fr)));
  llvm::Value* fuel_at = b.CreateConstInBoundsGEP1_64(me.t.i8, ctx, offsetof(Ctx, fuel));
  const unsigned first_slot = me.metered ? 4 : 3;
  if (me.metered) b.CreateStore(adapter->getArg(3), fuel_at);
  for (u32 i = 0; i < np; ++i)
    b.CreateStore(adapter->getArg(first_slot + i), b.CreateConstInBoundsGEP1_64(me.t.i64, fp, i));
  llvm::CallInst* r = b.CreateCall(me.t.wasm_fn, me.fns[defined], {ctx, fp});
  llvm::Value* status = b.CreateExtractValue(r, 0);
  // The result at fp on a normal return; the counter in the context on every return.
  llvm::Value* value = b.getInt64(0);
  if (me.funcs[defined].num_results == 1) {
    value = b.CreateSelect(b.CreateICmpEQ(status, b.getInt32(0)), b.CreateLoad(me.t.i64, fp), b.getInt64(0));
  }
  llvm::Value* out = llvm::PoisonValue::get(adapter->getReturnType());
  out = b.CreateInsertValue(out, status, 0);
  out = b.CreateInsertValue(out, value, 1);
  if (me.metered) out = b.CreateInsertValue(out, b.CreateLoad(me.t.i64, fuel_at), 2);
  b.CreateRet(out);
}

std::vector<unsigned char> module_calls(const Module& m, FunctionCode funcs, const std::vector<Scan>& scans) {
  std::vector<unsigned char> out(m.code.size(), 0);
  for (std::size_t i = 0; i < scans.size() && i < funcs.size(); ++i) {
    for_each_direct_callee(m, scans[i], funcs[i], [&](u32 d) {
      if (d < out.size()) out[d] |= kCalledDirectly;
    });
  }
  const auto mark = [&](std::uint64_t funcidx, unsigned char how) {
    if (funcidx >= m.imported_funcs && funcidx - m.imported_funcs < out.size()) out[funcidx - m.imported_funcs] |= how;
  };
  const auto mark_expr = [&](const ConstExpr& e) {
    if (e.op == ConstExpr::Op::RefFunc) mark(e.index, kCalledThroughReference);
    for (const ConstExpr::Step& step : e.steps)
      if (step.kind == ConstExpr::Step::Kind::RefFunc) mark(step.value, kCalledThroughReference);
  };
  for (const Export& e : m.exports)
    if (e.kind == ExternKind::Func) mark(e.index, kCalledThroughReference);
  for (const ElementSegment& seg : m.elements)
    for (const ConstExpr& item : seg.items) mark_expr(item);
  for (const ConstExpr& e : m.global_inits) mark_expr(e);
  for (const std::optional<ConstExpr>& e : m.table_inits)
    if (e) mark_expr(*e);
  return out;
}

}  // namespace sprawling::wasm::jit
