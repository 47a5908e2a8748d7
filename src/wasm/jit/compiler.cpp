// The compiled tier's compiler: LLVM IR from the internal code (code.hpp, read through the same
// handler offsets the interpreter dispatches on), optimized and linked by ORC's LLJIT. Each
// instruction does what its interpreter handler does, so fuel segments, trap sites and results
// are the interpreter's by construction; a function using anything not handled here stays
// interpreted (ModuleCode::reasons says what; with every 2.0 instruction handled, that is an
// internal code the decoder does not recognise).
#include "wasm/jit/jit.hpp"
#include "wasm/jit/runtime_calls.hpp"
#include "wasm/opcodes.hpp"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace sprawling::wasm {

namespace jit {

struct ModuleCode::Impl {
  std::unique_ptr<llvm::orc::LLLazyJIT> lljit;
  std::unique_ptr<llvm::TargetMachine> tm;  // for the optimizer's cost model
  std::mutex optimize_mutex;                // partitions of one module optimize one at a time
  std::vector<std::size_t> body_bytes;      // per defined function: its wasm code size
};

ModuleCode::ModuleCode(std::size_t functions) : entries(functions), reasons(functions) {}
ModuleCode::~ModuleCode() {
  if (std::getenv("SPRAWLING_JIT_STATS") != nullptr && error.empty()) {
    std::fprintf(stderr,
                 "sprawl jit: %zu of %zu functions compilable, %zu compiled on first call (%zu of %zu wasm code "
                 "bytes); IR %.3f s, optimizing %.3f s\n",
                 compiled, entries.size(), materialized, materialized_bytes, code_bytes, seconds_ir, seconds_opt);
  }
}

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i64 = std::int64_t;

// ---------------------------------------------------------------- the internal code, decoded

enum class VT : std::uint8_t { I32, I64, F32, F64 };
template <class T>
constexpr VT vt_of() {
  if constexpr (std::is_same_v<T, std::uint32_t>)
    return VT::I32;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return VT::I64;
  else if constexpr (std::is_same_v<T, float>)
    return VT::F32;
  else
    return VT::F64;
}

// The simple (numeric) ops: which wasm operator, operand/result types, shape.
struct Simple {
  bool is = false;
  Opcode opc = Opcode::Unreachable;
  VT a = VT::I32;
  VT r = VT::I32;
  bool binary = false;
  bool imm = false;  // the second operand is inline (BinImm: one word; BinFImm: f32 one, f64 two)
};

constexpr std::array<Simple, kOpCount> make_simple_table() {
  std::array<Simple, kOpCount> t{};
#define SPRAWLING_JIT_META(OpName, Name, A, R, Bin, Imm) \
  t[static_cast<std::size_t>(Op::OpName)] = Simple{true, Opcode::Name, vt_of<A>(), vt_of<R>(), Bin, Imm};
#define SPRAWLING_JIT_Un(Name, A, R) SPRAWLING_JIT_META(Num##Name, Name, A, R, false, false)
#define SPRAWLING_JIT_Bin(Name, A, R) SPRAWLING_JIT_META(Num##Name, Name, A, R, true, false)
#define SPRAWLING_JIT_BinImm(Name, A, R) \
  SPRAWLING_JIT_Bin(Name, A, R) SPRAWLING_JIT_META(Num##Name##Imm, Name, A, R, true, true)
#define SPRAWLING_JIT_BinFImm(Name, A, R) SPRAWLING_JIT_BinImm(Name, A, R)
#define SPRAWLING_JIT_BinF32Imm(Name, A, R) SPRAWLING_JIT_BinFImm(Name, A, R)
#define SPRAWLING_JIT_BinF64Imm(Name, A, R) SPRAWLING_JIT_BinFImm(Name, A, R)
#define SPRAWLING_SIMPLE_OP(Name, A, R, Form, Trap) SPRAWLING_JIT_##Form(Name, A, R)
#include "wasm/simple_ops.inc"
#undef SPRAWLING_SIMPLE_OP
#undef SPRAWLING_JIT_Un
#undef SPRAWLING_JIT_Bin
#undef SPRAWLING_JIT_BinImm
#undef SPRAWLING_JIT_BinFImm
#undef SPRAWLING_JIT_BinF32Imm
#undef SPRAWLING_JIT_BinF64Imm
#undef SPRAWLING_JIT_META
  return t;
}
constexpr auto kSimple = make_simple_table();

constexpr std::size_t idx(Op o) {
  return static_cast<std::size_t>(o);
}
constexpr bool in_range(Op o, Op first, Op last) {
  return idx(o) >= idx(first) && idx(o) <= idx(last);
}
constexpr bool is_fused(Op o) {
  return in_range(o, Op::BrIfI32Eq, Op::BrUnlessI32GeUImm);
}

// Handler offset -> Op for a variant; Op::Count_ where two ops share a handler (never expected:
// then those ops are not compiled, since the interpreter could not tell them apart either).
class OpDecoder {
 public:
  explicit OpDecoder(bool metered) {
    const std::int32_t* offs = handler_offsets(metered);
    for (std::size_t i = 0; i < kOpCount; ++i) {
      auto [it, fresh] = map_.try_emplace(offs[i], static_cast<Op>(i));
      if (!fresh) it->second = Op::Count_;
    }
  }
  [[nodiscard]] Op op(u32 word) const {
    auto it = map_.find(static_cast<std::int32_t>(word));
    return it == map_.end() ? Op::Count_ : it->second;
  }

 private:
  std::unordered_map<std::int32_t, Op> map_;
};

// Words of an instruction (0: not supported by this compiler).
u32 length(Op o, const u32* ip, bool metered) {
  const u32 m = metered ? 1 : 0;
  if (is_fused(o)) return 4 + m;
  if (in_range(o, Op::I32Load, Op::I64Store32)) return 4;
  if (in_range(o, Op::I32LoadAdd, Op::I64Store32Add)) return 5;
  if (in_range(o, Op::I32LoadAbs, Op::I64Store32Abs)) return 4;
  const Simple& s = kSimple[idx(o)];
  if (s.is) {
    if (!s.binary) return 3;
    if (s.imm && s.a == VT::F64) return 5;
    return 4;
  }
  switch (o) {
    case Op::Unreachable: return 1;
    case Op::Br: return 2;
    case Op::BrIf:
    case Op::BrUnless: return 3 + m;
    case Op::BrTable: return 4 + ip[2];
    case Op::Copy: return 3;
    case Op::Copy2: return 5;
    case Op::Const32: return 3;
    case Op::Const64: return 4;
    case Op::Call: return 4;
    case Op::CallIndirect: return 6;
    case Op::Return: return 1;
    case Op::Fuel: return 2;
    case Op::FuelCheck: return 3;
    case Op::Select: return 5;
    case Op::GlobalGet:
    case Op::GlobalSet: return 3;
    case Op::MemorySize: return 2;
    case Op::MemoryGrow: return 3;
    case Op::RefIsNull:
    case Op::RefFunc: return 3;
    case Op::TableGet:
    case Op::TableSet: return 4;
    case Op::TableSize: return 3;
    case Op::TableGrow:
    case Op::TableFill: return 5;
    case Op::TableCopy:
    case Op::TableInit: return 6;
    case Op::ElemDrop:
    case Op::DataDrop: return 2;
    case Op::MemoryFill:
    case Op::MemoryCopy: return 4;
    case Op::MemoryInit: return 5;
    default: return 0;
  }
}

struct Instr {
  u32 word;
  Op op;
};

// Pass 1: the instructions of a function from its entry word, or why it cannot be compiled.
struct Scan {
  std::vector<Instr> instrs;
  std::vector<u32> targets;
  std::string reason;
};

Scan scan(const CompiledFunc& f, u32 start, const OpDecoder& dec, bool metered) {
  Scan s;
  const std::vector<u32>& code = f.code;
  const auto n = static_cast<u32>(code.size());
  std::vector<bool> starts(n + 1, false);
  auto fail = [&](std::string why) {
    s.reason = std::move(why);
    s.instrs.clear();
    return s;
  };
  auto target = [&](u32 at, u32 off) { s.targets.push_back(at + off); };
  for (u32 w = start; w < n;) {
    const Op o = dec.op(code[w]);
    if (o == Op::Count_) return fail("an instruction word the decoder does not know");
    const u32 len = length(o, code.data() + w, metered);
    if (o == Op::ReturnCall || o == Op::ReturnCallIndirect)
      return fail("uses a tail call (return_call / return_call_indirect), which the compiled tier does not compile");
    if (len == 0)
      return fail("uses an instruction the compiled tier does not handle yet (op " + std::to_string(idx(o)) + ")");
    if (w + len > n) return fail("an instruction runs past the end of the code");
    starts[w] = true;
    s.instrs.push_back({w, o});
    const u32* ip = code.data() + w;
    if (o == Op::Br) target(w, ip[1]);
    if (o == Op::BrIf || o == Op::BrUnless) target(w, ip[2]);
    if (is_fused(o)) target(w, ip[3]);
    if (o == Op::BrTable)
      for (u32 i = 0; i <= ip[2]; ++i) target(w, ip[3 + i]);
    w += len;
  }
  starts[n] = false;
  for (u32 t : s.targets)
    if (t >= n || !starts[t]) return fail("a branch into the middle of an instruction");
  // The interpreter's metered JUMP skips the loop header's FuelCheck [cost 0-visible] when the
  // balance is positive; that equals running the check only if the target is one.
  if (metered) {
    for (const Instr& in : s.instrs) {
      const u32* ip = code.data() + in.word;
      std::optional<std::int32_t> off;
      if (in.op == Op::Br) off = static_cast<std::int32_t>(ip[1]);
      if (in.op == Op::BrIf || in.op == Op::BrUnless) off = static_cast<std::int32_t>(ip[2]);
      if (is_fused(in.op)) off = static_cast<std::int32_t>(ip[3]);
      if (off && *off < 0) {
        const u32 t = in.word + static_cast<u32>(*off);
        if (dec.op(code[t]) != Op::FuelCheck || code[t + 2] != 0) return fail("a backward branch to no loop header");
      }
    }
  }
  return s;
}

// ---------------------------------------------------------------- IR emission

struct Types {
  llvm::Type* i1;
  llvm::Type* i8;
  llvm::Type* i16;
  llvm::Type* i32;
  llvm::Type* i64;
  llvm::Type* f32;
  llvm::Type* f64;
  llvm::PointerType* ptr;
  llvm::FunctionType* wasm_fn;
};

struct ModuleEmitter {
  const CompiledModule::Impl& cm;
  const std::vector<CompiledFunc>& funcs;
  bool metered;
  llvm::LLVMContext& ctx;
  llvm::Module& mod;
  Types t;
  std::vector<llvm::Function*> fns;  // per defined function: its IR function, null if interpreted
  llvm::FunctionCallee refuel, call, call_indirect, memory_grow;
  std::array<llvm::FunctionCallee, kOpCount> num{};

  ModuleEmitter(const CompiledModule::Impl& m, const std::vector<CompiledFunc>& f, bool met, llvm::LLVMContext& c,
                llvm::Module& md)
      : cm(m), funcs(f), metered(met), ctx(c), mod(md) {
    t.i1 = llvm::Type::getInt1Ty(ctx);
    t.i8 = llvm::Type::getInt8Ty(ctx);
    t.i16 = llvm::Type::getInt16Ty(ctx);
    t.i32 = llvm::Type::getInt32Ty(ctx);
    t.i64 = llvm::Type::getInt64Ty(ctx);
    t.f32 = llvm::Type::getFloatTy(ctx);
    t.f64 = llvm::Type::getDoubleTy(ctx);
    t.ptr = llvm::PointerType::get(ctx, 0);
    t.wasm_fn = llvm::FunctionType::get(t.i32, {t.ptr, t.ptr}, false);
    refuel = mod.getOrInsertFunction("sprawling_jit_refuel", llvm::FunctionType::get(t.i32, {t.ptr, t.i64}, false));
    call = mod.getOrInsertFunction("sprawling_jit_call", llvm::FunctionType::get(t.i32, {t.ptr, t.ptr, t.ptr}, false));
    call_indirect = mod.getOrInsertFunction("sprawling_jit_call_indirect",
                                            llvm::FunctionType::get(t.i32, {t.ptr, t.i32, t.i32, t.i32, t.ptr}, false));
    memory_grow =
        mod.getOrInsertFunction("sprawling_jit_memory_grow", llvm::FunctionType::get(t.i32, {t.ptr, t.i32}, false));
  }
  // A runtime helper by name (runtime_calls.hpp), declared on first use.
  llvm::FunctionCallee helper(const char* name, llvm::Type* ret, llvm::ArrayRef<llvm::Type*> params) {
    return mod.getOrInsertFunction(name, llvm::FunctionType::get(ret, params, false));
  }
  llvm::FunctionCallee num_helper_fn(Op o) {
    if (!num[idx(o)]) {
      num[idx(o)] = mod.getOrInsertFunction("sprawling_jit_num_" + std::to_string(idx(o)),
                                            llvm::FunctionType::get(t.i64, {t.i64, t.i64, t.ptr}, false));
    }
    return num[idx(o)];
  }
};

class FunctionEmitter {
 public:
  FunctionEmitter(ModuleEmitter& me, u32 defined, const Scan& sc)
      : me_(me),
        t_(me.t),
        f_(me.funcs[defined]),
        code_(f_.code.data()),
        defined_(defined),
        scan_(sc),
        fn_(me.fns[defined]),
        b_(me.ctx) {}

  void emit() {
    fn_->addFnAttr(llvm::Attribute::StrictFP);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    fn_->addParamAttr(0, llvm::Attribute::NoAlias);
    fn_->addParamAttr(1, llvm::Attribute::NoAlias);
    b_.setIsFPConstrained(true);
    b_.setDefaultConstrainedExcept(llvm::fp::ebStrict);
    b_.setDefaultConstrainedRounding(llvm::RoundingMode::NearestTiesToEven);
    ctxp_ = fn_->getArg(0);
    fp_ = fn_->getArg(1);
    auto* entry = llvm::BasicBlock::Create(me_.ctx, "entry", fn_);
    b_.SetInsertPoint(entry);
    slots_.resize(f_.frame_slots);
    for (u32 i = 0; i < f_.frame_slots; ++i) slots_[i] = b_.CreateAlloca(t_.i64);
    fuel_ = b_.CreateAlloca(t_.i64);
    mem_base_ = b_.CreateAlloca(t_.ptr);
    mem_size_ = b_.CreateAlloca(t_.i64);
    trap_out_ = b_.CreateAlloca(t_.i32);
    scratch_ = b_.CreateAlloca(t_.i64);
    for (u32 i = 0; i < f_.num_params; ++i) b_.CreateStore(b_.CreateLoad(t_.i64, fp_at(i)), slots_[i]);
    for (u32 i = f_.num_params; i < f_.num_locals; ++i) b_.CreateStore(b_.getInt64(0), slots_[i]);
    b_.CreateStore(ctx_load(t_.i64, offsetof(Ctx, fuel)), fuel_);
    funcs_ = invariant(ctx_load(t_.ptr, offsetof(Ctx, funcs)));
    globals_ = invariant(ctx_load(t_.ptr, offsetof(Ctx, globals)));
    reload_memory();

    // The shared trap exit: the counter and the location go to the context.
    trap_bb_ = llvm::BasicBlock::Create(me_.ctx, "trap", fn_);
    {
      llvm::IRBuilderBase::InsertPointGuard g(b_);
      b_.SetInsertPoint(trap_bb_);
      trap_kind_ = b_.CreatePHI(t_.i32, 4);
      trap_word_ = b_.CreatePHI(t_.i32, 4);
      store_fuel();
      ctx_store(load_func(me_.cm.module.imported_funcs + defined_), offsetof(Ctx, loc_fn));
      ctx_store(llvm::ConstantPointerNull::get(t_.ptr), offsetof(Ctx, loc_ip));
      ctx_store(trap_word_, offsetof(Ctx, loc_word));
      b_.CreateRet(trap_kind_);
    }

    for (u32 tw : scan_.targets) block_at(tw);
    bool open = true;  // the current block can fall into the next instruction
    for (const Instr& in : scan_.instrs) {
      if (auto it = blocks_.find(in.word); it != blocks_.end()) {
        if (open) b_.CreateBr(it->second);
        b_.SetInsertPoint(it->second);
        open = true;
      } else if (!open) {
        b_.SetInsertPoint(llvm::BasicBlock::Create(me_.ctx, "dead", fn_));
        open = true;
      }
      open = instr(in);
    }
    if (open) b_.CreateUnreachable();  // only dead code can end open (the scan checked the rest)
  }

 private:
  ModuleEmitter& me_;
  const Types& t_;
  const CompiledFunc& f_;
  const u32* code_;
  u32 defined_;
  const Scan& scan_;
  llvm::Function* fn_;
  llvm::IRBuilder<> b_;
  llvm::Value* ctxp_ = nullptr;
  llvm::Value* fp_ = nullptr;
  llvm::Value* funcs_ = nullptr;
  llvm::Value* globals_ = nullptr;
  std::vector<llvm::AllocaInst*> slots_;
  llvm::AllocaInst* fuel_ = nullptr;
  llvm::AllocaInst* mem_base_ = nullptr;
  llvm::AllocaInst* mem_size_ = nullptr;
  llvm::AllocaInst* trap_out_ = nullptr;
  llvm::AllocaInst* scratch_ = nullptr;  // a helper's i64 result (slots must not escape: mem2reg)
  llvm::BasicBlock* trap_bb_ = nullptr;
  llvm::PHINode* trap_kind_ = nullptr;
  llvm::PHINode* trap_word_ = nullptr;
  std::unordered_map<u32, llvm::BasicBlock*> blocks_;
  u32 w_ = 0;  // the current instruction's first word

  // ---- helpers
  llvm::BasicBlock* block_at(u32 word) {
    auto [it, fresh] = blocks_.try_emplace(word, nullptr);
    if (fresh) it->second = llvm::BasicBlock::Create(me_.ctx, "w" + std::to_string(word), fn_);
    return it->second;
  }
  llvm::BasicBlock* new_block(const char* name) { return llvm::BasicBlock::Create(me_.ctx, name, fn_); }
  llvm::Value* fp_at(u32 slot) { return b_.CreateConstInBoundsGEP1_64(t_.i64, fp_, slot); }
  llvm::Value* ctx_field(std::size_t off) { return b_.CreateConstInBoundsGEP1_64(t_.i8, ctxp_, off); }
  llvm::Value* ctx_load(llvm::Type* ty, std::size_t off) { return b_.CreateLoad(ty, ctx_field(off)); }
  void ctx_store(llvm::Value* v, std::size_t off) { b_.CreateStore(v, ctx_field(off)); }
  llvm::Value* invariant(llvm::Value* v) {
    if (auto* li = llvm::dyn_cast<llvm::LoadInst>(v))
      li->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(me_.ctx, {}));
    return v;
  }
  llvm::Value* load_func(u32 funcidx) {
    return invariant(b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.ptr, funcs_, funcidx)));
  }
  void reload_memory() {
    b_.CreateStore(b_.CreateLoad(t_.ptr, ctx_load(t_.ptr, offsetof(Ctx, mem_base))), mem_base_);
    b_.CreateStore(b_.CreateLoad(t_.i64, ctx_load(t_.ptr, offsetof(Ctx, mem_size))), mem_size_);
  }
  void store_fuel() { ctx_store(b_.CreateLoad(t_.i64, fuel_), offsetof(Ctx, fuel)); }
  void load_fuel() { b_.CreateStore(ctx_load(t_.i64, offsetof(Ctx, fuel)), fuel_); }
  void charge(u32 cost) {
    if (!me_.metered || cost == 0) return;
    b_.CreateStore(b_.CreateSub(b_.CreateLoad(t_.i64, fuel_), b_.getInt64(cost)), fuel_);
  }

  // Slots: 64-bit, i32/f32 values zero-extended (the interpreter's invariant).
  llvm::Value* slot(u32 s) { return b_.CreateLoad(t_.i64, slots_[s]); }
  void set_slot(u32 s, llvm::Value* v64) { b_.CreateStore(v64, slots_[s]); }
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
  void trap_if(llvm::Value* cond, llvm::Value* kind) {
    auto* cont = new_block("ok");
    llvm::MDBuilder md(me_.ctx);
    b_.CreateCondBr(cond, trap_bb_, cont, md.createBranchWeights(1, 1 << 20));
    trap_kind_->addIncoming(kind, b_.GetInsertBlock());
    trap_word_->addIncoming(u32c(w_), b_.GetInsertBlock());
    b_.SetInsertPoint(cont);
  }
  void trap_if(llvm::Value* cond, TrapKind k) { trap_if(cond, u32c(static_cast<u32>(k))); }
  void trap(TrapKind k) {
    trap_kind_->addIncoming(u32c(static_cast<u32>(k)), b_.GetInsertBlock());
    trap_word_->addIncoming(u32c(w_), b_.GetInsertBlock());
    b_.CreateBr(trap_bb_);
  }
  // REFUEL(visible) at this instruction.
  void refuel(i64 visible) {
    store_fuel();
    llvm::Value* st = b_.CreateCall(me_.refuel, {ctxp_, b_.getInt64(static_cast<u64>(visible))});
    load_fuel();
    trap_if(b_.CreateICmpNE(st, u32c(0)), st);
  }
  // if (fuel - visible <= 0) refuel(visible)
  void fuel_check(i64 visible) {
    auto* slow = new_block("refuel");
    auto* cont = new_block("fuelled");
    llvm::Value* f = b_.CreateLoad(t_.i64, fuel_);
    llvm::Value* low = b_.CreateICmpSLE(b_.CreateSub(f, b_.getInt64(static_cast<u64>(visible))), b_.getInt64(0));
    llvm::MDBuilder md(me_.ctx);
    b_.CreateCondBr(low, slow, cont, md.createBranchWeights(1, 1 << 20));
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
  llvm::Value* address(llvm::Value* ea64, u32 size) {
    llvm::Value* end = b_.CreateAdd(ea64, b_.getInt64(size));
    trap_if(b_.CreateICmpUGT(end, b_.CreateLoad(t_.i64, mem_size_)), TrapKind::OutOfBoundsMemoryAccess);
    return b_.CreateInBoundsGEP(t_.i8, b_.CreateLoad(t_.ptr, mem_base_), ea64);
  }
  struct Access {
    llvm::Type* mem;
    bool sign;
    bool wide;  // result in an i64 slot
  };
  Access access_of(Op base_op) {
    switch (base_op) {
      case Op::I32Load: return {t_.i32, false, false};
      case Op::I64Load: return {t_.i64, false, true};
      case Op::I32Load8S: return {t_.i8, true, false};
      case Op::I32Load8U: return {t_.i8, false, false};
      case Op::I32Load16S: return {t_.i16, true, false};
      case Op::I32Load16U: return {t_.i16, false, false};
      case Op::I64Load8S: return {t_.i8, true, true};
      case Op::I64Load8U: return {t_.i8, false, true};
      case Op::I64Load16S: return {t_.i16, true, true};
      case Op::I64Load16U: return {t_.i16, false, true};
      case Op::I64Load32S: return {t_.i32, true, true};
      case Op::I64Load32U: return {t_.i32, false, true};
      case Op::I32Store: return {t_.i32, false, false};
      case Op::I64Store: return {t_.i64, false, true};
      case Op::I32Store8:
      case Op::I64Store8: return {t_.i8, false, false};
      case Op::I32Store16:
      case Op::I64Store16: return {t_.i16, false, false};
      case Op::I64Store32: return {t_.i32, false, true};
      default: return {t_.i8, false, false};
    }
  }
  void load(Op base_op, u32 dst, llvm::Value* ea64) {
    const Access a = access_of(base_op);
    const u32 size = a.mem->getPrimitiveSizeInBits() / 8;
    llvm::Value* v = b_.CreateAlignedLoad(a.mem, address(ea64, size), llvm::MaybeAlign(1));
    llvm::Type* rt = a.wide ? t_.i64 : t_.i32;
    if (a.mem != rt) v = a.sign ? b_.CreateSExt(v, rt) : b_.CreateZExt(v, rt);
    put(dst, v, a.wide ? VT::I64 : VT::I32);
  }
  void store(Op base_op, u32 src, llvm::Value* ea64) {
    const Access a = access_of(base_op);
    const u32 size = a.mem->getPrimitiveSizeInBits() / 8;
    llvm::Value* ptr = address(ea64, size);
    b_.CreateAlignedStore(b_.CreateTrunc(slot(src), a.mem), ptr, llvm::MaybeAlign(1));
  }
  llvm::Value* ea(u32 addr_slot, u32 offset) {
    return b_.CreateAdd(b_.CreateZExt(get(addr_slot, VT::I32), t_.i64), b_.getInt64(offset));
  }
  llvm::Value* ea_add(u32 base_slot, u32 imm, u32 offset) {
    llvm::Value* a32 = b_.CreateAdd(get(base_slot, VT::I32), u32c(imm));
    return b_.CreateAdd(b_.CreateZExt(a32, t_.i64), b_.getInt64(offset));
  }

  // ---- calls
  void store_args(u32 base, u32 n) {
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
    auto* bad = new_block("call_trap");
    auto* cont = new_block("call_ok");
    llvm::MDBuilder md(me_.ctx);
    b_.CreateCondBr(b_.CreateICmpNE(st, u32c(0)), bad, cont, md.createBranchWeights(1, 1 << 20));
    b_.SetInsertPoint(bad);
    auto* located = new_block("located");
    auto* here = new_block("here");
    b_.CreateCondBr(b_.CreateICmpUGE(st, u32c(kLocated)), located, here);
    b_.SetInsertPoint(located);
    b_.CreateRet(b_.CreateAnd(st, u32c(0xFF)));
    b_.SetInsertPoint(here);
    trap_kind_->addIncoming(st, here);
    trap_word_->addIncoming(u32c(w_), here);
    b_.CreateBr(trap_bb_);
    b_.SetInsertPoint(cont);
  }
  void emit_call(u32 funcidx, u32 base, u32 post) {
    const Module& m = me_.cm.module;
    const FuncType& ft = m.func_type(funcidx);
    const auto np = static_cast<u32>(ft.params.size());
    const auto nr = static_cast<u32>(ft.results.size());
    llvm::Value* nfp = b_.CreateConstInBoundsGEP1_64(t_.i64, fp_, base);
    store_args(base, np);
    llvm::Function* direct = nullptr;
    if (funcidx >= m.imported_funcs) direct = me_.fns[funcidx - m.imported_funcs];
    auto* join = new_block("returned");
    auto* slow = new_block("call_slow");
    if (direct != nullptr) {
      const CompiledFunc& callee = me_.cm.funcs[funcidx - m.imported_funcs];  // frame_slots as FuncInst has it
      const CompiledFunc& callee_v = me_.funcs[funcidx - m.imported_funcs];
      auto* fast = new_block("call_fast");
      llvm::Value* sp = b_.CreateIntrinsic(llvm::Intrinsic::stacksave, {t_.ptr}, {});
      llvm::Value* limit = ctx_load(t_.ptr, offsetof(Ctx, native_limit));
      b_.CreateCondBr(b_.CreateICmpULT(b_.CreatePtrToInt(sp, t_.i64), b_.CreatePtrToInt(limit, t_.i64)), slow, fast);
      b_.SetInsertPoint(fast);
      llvm::Value* fr = ctx_load(t_.ptr, offsetof(Ctx, fr));
      llvm::Value* fr_end = ctx_load(t_.ptr, offsetof(Ctx, fr_end));
      llvm::Value* stack_end = ctx_load(t_.ptr, offsetof(Ctx, stack_end));
      llvm::Value* room = b_.CreateLShr(
          b_.CreateSub(b_.CreatePtrToInt(stack_end, t_.i64), b_.CreatePtrToInt(nfp, t_.i64)), b_.getInt64(3));
      llvm::Value* exhausted =
          b_.CreateOr(b_.CreateICmpEQ(fr, fr_end), b_.CreateICmpULT(room, b_.getInt64(callee.frame_slots)));
      trap_if(exhausted, TrapKind::CallStackExhausted);
      if (me_.metered) {
        auto* slow_fuel = new_block("entry_refuel");
        auto* ok = new_block("entry_ok");
        b_.CreateCondBr(b_.CreateICmpSLE(b_.CreateLoad(t_.i64, fuel_), b_.getInt64(1)), slow_fuel, ok);
        b_.SetInsertPoint(slow_fuel);
        refuel(1);
        b_.CreateBr(ok);
        b_.SetInsertPoint(ok);
        charge(callee_v.code[1]);  // the callee's entry FuelCheck cost (FuncInst::entry_fuel)
      }
      ctx_store(b_.CreateConstInBoundsGEP1_64(t_.i8, fr, sizeof(Frame)), offsetof(Ctx, fr));
      store_fuel();
      llvm::CallInst* st = b_.CreateCall(direct, {ctxp_, nfp});
      st->setTailCallKind(llvm::CallInst::TCK_None);
      ctx_store(fr, offsetof(Ctx, fr));
      auto* failed = new_block("callee_trapped");
      b_.CreateCondBr(b_.CreateICmpNE(st, u32c(0)), failed, join);
      b_.SetInsertPoint(failed);
      b_.CreateRet(st);  // located by the callee, counter stored by it
    } else {
      b_.CreateBr(slow);
    }
    b_.SetInsertPoint(slow);
    store_fuel();
    llvm::Value* st = b_.CreateCall(me_.call, {ctxp_, load_func(funcidx), nfp});
    helper_status(st);
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    after_call(base, nr, post);
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
  llvm::Value* inline_num(const Simple& s, llvm::Value* a, llvm::Value* b) {
    using O = Opcode;
    llvm::Type* at = ty(s.a);
    const unsigned bits = at->getPrimitiveSizeInBits();
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
      case O::I32Eq:
      case O::I64Eq: return bool32(b_.CreateICmpEQ(a, b));
      case O::I32Ne:
      case O::I64Ne: return bool32(b_.CreateICmpNE(a, b));
      case O::I32LtS:
      case O::I64LtS: return bool32(b_.CreateICmpSLT(a, b));
      case O::I32LtU:
      case O::I64LtU: return bool32(b_.CreateICmpULT(a, b));
      case O::I32GtS:
      case O::I64GtS: return bool32(b_.CreateICmpSGT(a, b));
      case O::I32GtU:
      case O::I64GtU: return bool32(b_.CreateICmpUGT(a, b));
      case O::I32LeS:
      case O::I64LeS: return bool32(b_.CreateICmpSLE(a, b));
      case O::I32LeU:
      case O::I64LeU: return bool32(b_.CreateICmpULE(a, b));
      case O::I32GeS:
      case O::I64GeS: return bool32(b_.CreateICmpSGE(a, b));
      case O::I32GeU:
      case O::I64GeU: return bool32(b_.CreateICmpUGE(a, b));
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
  void numeric(Op o, const Simple& s) {
    const u32* ip = code_ + w_;
    const u32 dst = ip[1];
    llvm::Value* a_bits = slot(ip[2]);
    llvm::Value* b_bits = b_.getInt64(0);
    if (s.binary) {
      if (!s.imm) {
        b_bits = slot(ip[3]);
      } else if (s.a == VT::I32 || s.a == VT::F32) {
        b_bits = b_.getInt64(ip[3]);  // zero-extended
      } else if (s.a == VT::I64) {
        b_bits = b_.getInt64(static_cast<u64>(static_cast<i64>(static_cast<std::int32_t>(ip[3]))));
      } else {
        b_bits = b_.getInt64(static_cast<u64>(ip[3]) | (static_cast<u64>(ip[4]) << 32));
      }
    }
    if (llvm::Value* r = inline_num(s, from_bits(a_bits, s.a), from_bits(b_bits, s.a))) {
      put(dst, r, s.r);
      return;
    }
    llvm::Value* r = b_.CreateCall(me_.num_helper_fn(o), {a_bits, b_bits, trap_out_});
    using O = Opcode;
    const bool traps = (s.opc >= O::I32TruncF32S && s.opc <= O::I64TruncF64U);
    if (traps) {
      llvm::Value* k = b_.CreateLoad(t_.i32, trap_out_);
      trap_if(b_.CreateICmpNE(k, u32c(0)), k);
    }
    set_slot(dst, r);
  }

  llvm::Value* fused_cond(Op o) {
    const u32* ip = code_ + w_;
    const auto k = static_cast<u32>(idx(o) - idx(Op::BrIfI32Eq));
    const u32 cmp = k / 4;
    const bool imm = (k % 4) % 2 == 1;
    const bool negate = (k % 4) >= 2;
    llvm::Value* a = get(ip[1], VT::I32);
    llvm::Value* b = imm ? u32c(ip[2]) : get(ip[2], VT::I32);
    static constexpr llvm::CmpInst::Predicate kPred[] = {
        llvm::CmpInst::ICMP_EQ,  llvm::CmpInst::ICMP_NE,  llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_ULT,
        llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_UGT, llvm::CmpInst::ICMP_SLE, llvm::CmpInst::ICMP_ULE,
        llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_UGE};
    llvm::Value* c = b_.CreateICmp(kPred[cmp], a, b);
    return negate ? b_.CreateNot(c) : c;
  }

  // One instruction; false when control does not fall through to the next.
  bool instr(const Instr& in) {
    w_ = in.word;
    const u32* ip = code_ + w_;
    const Op o = in.op;
    if (const Simple& s = kSimple[idx(o)]; s.is) {
      numeric(o, s);
      return true;
    }
    if (is_fused(o)) {
      cond_branch(fused_cond(o), ip[3], 4);
      return true;
    }
    if (in_range(o, Op::I32Load, Op::I64Load32U)) {
      load(o, ip[1], ea(ip[2], ip[3]));
      return true;
    }
    if (in_range(o, Op::I32Store, Op::I64Store32)) {
      store(o, ip[2], ea(ip[1], ip[3]));
      return true;
    }
    if (in_range(o, Op::I32LoadAdd, Op::I64Load32UAdd)) {
      load(static_cast<Op>(idx(o) - idx(Op::I32LoadAdd) + idx(Op::I32Load)), ip[1], ea_add(ip[2], ip[3], ip[4]));
      return true;
    }
    if (in_range(o, Op::I32StoreAdd, Op::I64Store32Add)) {
      store(static_cast<Op>(idx(o) - idx(Op::I32StoreAdd) + idx(Op::I32Store)), ip[3], ea_add(ip[1], ip[2], ip[4]));
      return true;
    }
    if (in_range(o, Op::I32LoadAbs, Op::I64Load32UAbs)) {
      load(static_cast<Op>(idx(o) - idx(Op::I32LoadAbs) + idx(Op::I32Load)), ip[1],
           b_.getInt64(static_cast<u64>(ip[2]) + ip[3]));
      return true;
    }
    if (in_range(o, Op::I32StoreAbs, Op::I64Store32Abs)) {
      store(static_cast<Op>(idx(o) - idx(Op::I32StoreAbs) + idx(Op::I32Store)), ip[2],
            b_.getInt64(static_cast<u64>(ip[1]) + ip[3]));
      return true;
    }
    switch (o) {
      case Op::Unreachable: trap(TrapKind::Unreachable); return false;
      case Op::Br: b_.CreateBr(block_at(w_ + ip[1])); return false;
      case Op::BrIf: cond_branch(b_.CreateICmpNE(get(ip[1], VT::I32), u32c(0)), ip[2], 3); return true;
      case Op::BrUnless: cond_branch(b_.CreateICmpEQ(get(ip[1], VT::I32), u32c(0)), ip[2], 3); return true;
      case Op::BrTable: {
        const u32 n = ip[2];
        llvm::SwitchInst* sw = b_.CreateSwitch(get(ip[1], VT::I32), block_at(w_ + ip[3 + n]), n);
        for (u32 i = 0; i < n; ++i) sw->addCase(b_.getInt32(i), block_at(w_ + ip[3 + i]));
        return false;
      }
      case Op::Copy: set_slot(ip[1], slot(ip[2])); return true;
      case Op::Copy2:
        set_slot(ip[1], slot(ip[2]));
        set_slot(ip[3], slot(ip[4]));
        return true;
      case Op::Const32: set_slot(ip[1], b_.getInt64(ip[2])); return true;
      case Op::Const64:
        set_slot(ip[1], b_.getInt64(static_cast<u64>(ip[2]) | (static_cast<u64>(ip[3]) << 32)));
        return true;
      case Op::Call: emit_call(ip[1], ip[2], ip[3]); return true;
      case Op::CallIndirect: {
        const FuncType& ft = me_.cm.module.types[ip[1]];
        llvm::Value* nfp = b_.CreateConstInBoundsGEP1_64(t_.i64, fp_, ip[3]);
        llvm::Value* element = get(ip[4], VT::I32);
        store_args(ip[3], static_cast<u32>(ft.params.size()));
        store_fuel();
        llvm::Value* st = b_.CreateCall(me_.call_indirect, {ctxp_, u32c(ip[1]), u32c(ip[2]), element, nfp});
        helper_status(st);
        after_call(ip[3], static_cast<u32>(ft.results.size()), ip[5]);
        return true;
      }
      case Op::Return:
        for (u32 i = 0; i < f_.num_results; ++i) b_.CreateStore(slot(i), fp_at(i));
        store_fuel();
        b_.CreateRet(u32c(0));
        return false;
      case Op::Fuel: charge(ip[1]); return true;
      case Op::FuelCheck:
        if (me_.metered) {
          fuel_check(static_cast<i64>(ip[2]));
          charge(ip[1]);
        }
        return true;
      case Op::Select:
        set_slot(ip[1], b_.CreateSelect(b_.CreateICmpNE(get(ip[4], VT::I32), u32c(0)), slot(ip[2]), slot(ip[3])));
        return true;
      case Op::GlobalGet:
      case Op::GlobalSet: {
        const u32 g = o == Op::GlobalGet ? ip[2] : ip[1];
        llvm::Value* gp = invariant(b_.CreateLoad(t_.ptr, b_.CreateConstInBoundsGEP1_64(t_.ptr, globals_, g)));
        llvm::Value* bits = b_.CreateConstInBoundsGEP1_64(t_.i8, gp, offsetof(GlobalInst, bits));
        if (o == Op::GlobalGet)
          set_slot(ip[1], b_.CreateLoad(t_.i64, bits));
        else
          b_.CreateStore(slot(ip[2]), bits);
        return true;
      }
      case Op::MemorySize:
        set_slot(ip[1],
                 b_.CreateZExt(
                     b_.CreateTrunc(b_.CreateUDiv(b_.CreateLoad(t_.i64, mem_size_), b_.getInt64(kPageSize)), t_.i32),
                     t_.i64));
        return true;
      case Op::MemoryGrow: {
        llvm::Value* r = b_.CreateCall(me_.memory_grow, {ctxp_, get(ip[2], VT::I32)});
        put(ip[1], r, VT::I32);
        reload_memory();
        return true;
      }
      case Op::RefIsNull: put(ip[1], bool32(b_.CreateICmpEQ(slot(ip[2]), b_.getInt64(0))), VT::I32); return true;
      case Op::RefFunc: set_slot(ip[1], b_.CreatePtrToInt(load_func(ip[2]), t_.i64)); return true;
      default: return bulk(o, ip);
    }
  }

  // Bulk memory and table instructions: the runtime helpers (they may charge per unit and refuel).
  bool bulk(Op o, const u32* ip) {
    const Types& t = t_;
    auto call_status = [&](const char* name, llvm::ArrayRef<llvm::Type*> params, llvm::ArrayRef<llvm::Value*> args) {
      store_fuel();
      llvm::Value* st = b_.CreateCall(me_.helper(name, t.i32, params), args);
      load_fuel();
      helper_status(st);
    };
    auto i32s = [&](u32 s) { return get(s, VT::I32); };
    switch (o) {
      case Op::MemoryFill:
        call_status("sprawling_jit_memory_fill", {t.ptr, t.i32, t.i32, t.i32},
                    {ctxp_, i32s(ip[1]), i32s(ip[2]), i32s(ip[3])});
        return true;
      case Op::MemoryCopy:
        call_status("sprawling_jit_memory_copy", {t.ptr, t.i32, t.i32, t.i32},
                    {ctxp_, i32s(ip[1]), i32s(ip[2]), i32s(ip[3])});
        return true;
      case Op::MemoryInit:
        call_status("sprawling_jit_memory_init", {t.ptr, t.i32, t.i32, t.i32, t.i32},
                    {ctxp_, u32c(ip[1]), i32s(ip[2]), i32s(ip[3]), i32s(ip[4])});
        return true;
      case Op::DataDrop:
        b_.CreateCall(me_.helper("sprawling_jit_data_drop", llvm::Type::getVoidTy(me_.ctx), {t.ptr, t.i32}),
                      {ctxp_, u32c(ip[1])});
        return true;
      case Op::ElemDrop:
        b_.CreateCall(me_.helper("sprawling_jit_elem_drop", llvm::Type::getVoidTy(me_.ctx), {t.ptr, t.i32}),
                      {ctxp_, u32c(ip[1])});
        return true;
      case Op::TableGet:
        call_status("sprawling_jit_table_get", {t.ptr, t.i32, t.i32, t.ptr},
                    {ctxp_, u32c(ip[2]), i32s(ip[3]), scratch_});
        set_slot(ip[1], b_.CreateLoad(t.i64, scratch_));
        return true;
      case Op::TableSet:
        call_status("sprawling_jit_table_set", {t.ptr, t.i32, t.i32, t.i64},
                    {ctxp_, u32c(ip[1]), i32s(ip[2]), slot(ip[3])});
        return true;
      case Op::TableSize:
        put(ip[1], b_.CreateCall(me_.helper("sprawling_jit_table_size", t.i32, {t.ptr, t.i32}), {ctxp_, u32c(ip[2])}),
            VT::I32);
        return true;
      case Op::TableGrow:
        call_status("sprawling_jit_table_grow", {t.ptr, t.i32, t.i64, t.i32, t.ptr},
                    {ctxp_, u32c(ip[2]), slot(ip[3]), i32s(ip[4]), scratch_});
        set_slot(ip[1], b_.CreateLoad(t.i64, scratch_));
        return true;
      case Op::TableFill:
        call_status("sprawling_jit_table_fill", {t.ptr, t.i32, t.i32, t.i64, t.i32},
                    {ctxp_, u32c(ip[1]), i32s(ip[2]), slot(ip[3]), i32s(ip[4])});
        return true;
      case Op::TableCopy:
        call_status("sprawling_jit_table_copy", {t.ptr, t.i32, t.i32, t.i32, t.i32, t.i32},
                    {ctxp_, u32c(ip[1]), u32c(ip[2]), i32s(ip[3]), i32s(ip[4]), i32s(ip[5])});
        return true;
      case Op::TableInit:
        call_status("sprawling_jit_table_init", {t.ptr, t.i32, t.i32, t.i32, t.i32, t.i32},
                    {ctxp_, u32c(ip[1]), u32c(ip[2]), i32s(ip[3]), i32s(ip[4]), i32s(ip[5])});
        return true;
      default: break;
    }
    // scan() admits only what is handled above.
    trap(TrapKind::Unreachable);
    return false;
  }
};

// ---------------------------------------------------------------- LLVM set-up

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string error_text(llvm::Error e) {
  return llvm::toString(std::move(e));
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1);
  mpm.run(m, mam);
}

// LLVM failed to compile a function on its first call (the IR was verified, so an LLVM bug or
// memory exhaustion): there is no result to give the caller.
std::uint32_t lazy_compile_failed(Ctx*, std::uint64_t*) {
  std::fputs("sprawl: the compiled tier failed to compile a function on first use (LLVM error); aborting\n", stderr);
  std::abort();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::shared_ptr<ModuleCode> compile_module(const CompiledModule::Impl& cm, bool metered) {
  init_llvm();
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<CompiledFunc>& funcs = metered ? cm.metered() : cm.funcs;
  auto out = std::make_shared<ModuleCode>(funcs.size());
  const OpDecoder dec(metered);

  for (const FunctionBody& body : cm.module.code) out->code_bytes += body.code_size;
  std::vector<Scan> scans;
  scans.reserve(funcs.size());
  for (const CompiledFunc& f : funcs) {
    const u32 start = metered ? 3 : 0;
    if (metered && (f.code.size() < 3 || dec.op(f.code[0]) != Op::FuelCheck || f.code[2] != 1)) {
      Scan s;
      s.reason = "the metered code does not start with the entry check";
      scans.push_back(std::move(s));
      continue;
    }
    scans.push_back(scan(f, start, dec, metered));
  }

  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    out->error = error_text(jtmb.takeError());
    return out;
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  auto tm = jtmb->createTargetMachine();
  if (!tm) {
    out->error = error_text(tm.takeError());
    return out;
  }
  // Lazy: each function is optimized and compiled on its first call (through a stub), so code that
  // never runs (most of libc in a typical module) costs nothing beyond its IR.
  auto lljit = llvm::orc::LLLazyJITBuilder()
                   .setJITTargetMachineBuilder(*jtmb)
                   .setLazyCompileFailureAddr(llvm::orc::ExecutorAddr::fromPtr(&lazy_compile_failed))
                   .create();
  if (!lljit) {
    out->error = error_text(lljit.takeError());
    return out;
  }
  auto impl = std::make_unique<ModuleCode::Impl>();
  impl->tm = std::move(*tm);
  for (const FunctionBody& body : cm.module.code) impl->body_bytes.push_back(body.code_size);
  ModuleCode* code = out.get();
  ModuleCode::Impl* state = impl.get();
  (*lljit)->getIRTransformLayer().setTransform(
      [code, state](llvm::orc::ThreadSafeModule tsm,
                    const llvm::orc::MaterializationResponsibility&) -> llvm::Expected<llvm::orc::ThreadSafeModule> {
        const std::lock_guard lock(state->optimize_mutex);
        const auto t = std::chrono::steady_clock::now();
        tsm.withModuleDo([&](llvm::Module& m) {
          optimize(m, *state->tm);
          for (const llvm::Function& f : m.functions()) {
            llvm::StringRef name = f.getName();
            std::size_t i = 0;
            if (f.isDeclaration() || !name.consume_front("wasm_f") || name.getAsInteger(10, i)) continue;
            ++code->materialized;
            if (i < state->body_bytes.size()) code->materialized_bytes += state->body_bytes[i];
          }
        });
        code->seconds_opt += seconds_since(t);
        return tsm;
      });

  auto context = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>("wasm", *context);
  mod->setDataLayout((*lljit)->getDataLayout());
  mod->setTargetTriple(state->tm->getTargetTriple().str());
  ModuleEmitter me(cm, funcs, metered, *context, *mod);
  me.fns.assign(funcs.size(), nullptr);
  for (std::size_t i = 0; i < funcs.size(); ++i) {
    if (!scans[i].reason.empty()) {
      out->reasons[i] = scans[i].reason;
      continue;
    }
    me.fns[i] =
        llvm::Function::Create(me.t.wasm_fn, llvm::Function::ExternalLinkage, "wasm_f" + std::to_string(i), *mod);
  }
  for (std::size_t i = 0; i < funcs.size(); ++i)
    if (me.fns[i] != nullptr) FunctionEmitter(me, static_cast<u32>(i), scans[i]).emit();

  std::string verify;
  llvm::raw_string_ostream vs(verify);
  if (llvm::verifyModule(*mod, &vs)) {
    out->error = "the compiled tier generated invalid IR: " + verify;
    return out;
  }
  out->seconds_ir = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();

  llvm::orc::JITDylib& jd = (*lljit)->getMainJITDylib();
  llvm::orc::SymbolMap symbols;
  for (const HelperSymbol& h : runtime_symbols()) {
    symbols[(*lljit)->mangleAndIntern(llvm::StringRef(h.name.data(), h.name.size()))] = {
        llvm::orc::ExecutorAddr::fromPtr(h.address), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  }
  if (auto e = jd.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    out->error = error_text(std::move(e));
    return out;
  }
  if (auto e = (*lljit)->addLazyIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(context)))) {
    out->error = error_text(std::move(e));
    return out;
  }
  for (std::size_t i = 0; i < funcs.size(); ++i) {
    if (me.fns[i] == nullptr) continue;
    auto addr = (*lljit)->lookup("wasm_f" + std::to_string(i));
    if (!addr) {
      out->error = error_text(addr.takeError());
      for (auto& e : out->entries) e.store(nullptr, std::memory_order_relaxed);
      out->compiled = 0;
      return out;
    }
    out->entries[i].store(addr->toPtr<Entry>(), std::memory_order_release);
    ++out->compiled;
  }
  out->seconds_codegen = seconds_since(t0);  // the stubs only: functions compile on first call
  impl->lljit = std::move(*lljit);
  out->impl = std::move(impl);
  return out;
}

}  // namespace jit

const jit::ModuleCode& CompiledModule::Impl::jit(int variant) const {
  std::call_once(jit_once[variant], [&] { jit_code[variant] = jit::compile_module(*this, variant == kMetered); });
  return *jit_code[variant];
}

}  // namespace sprawling::wasm
