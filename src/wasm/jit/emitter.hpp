// The compiled tier's second pass (private to the jit): LLVM IR for the functions scan() passed.
// A ModuleEmitter holds what the functions of one IR module share (types, helper declarations,
// the IR function of every defined function compiled into it); emit_function writes one body.
#pragma once

#include "wasm/jit/scan.hpp"

#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <array>
#include <string>
#include <vector>

namespace sprawling::wasm::jit {

// The prototype of every function's entry (Entry): {status, first result slot} (Ctx*, u64* fp).
inline llvm::StructType* entry_result_type(llvm::LLVMContext& c) {
  return llvm::StructType::get(c, {llvm::Type::getInt32Ty(c), llvm::Type::getInt64Ty(c)});
}
inline llvm::FunctionType* entry_type(llvm::LLVMContext& c) {
  llvm::PointerType* ptr = llvm::PointerType::get(c, 0);
  return llvm::FunctionType::get(entry_result_type(c), {ptr, ptr}, false);
}
inline llvm::Value* entry_result(llvm::IRBuilderBase& b, llvm::Value* status, llvm::Value* value) {
  llvm::Value* r = llvm::PoisonValue::get(entry_result_type(b.getContext()));
  r = b.CreateInsertValue(r, status, 0);
  return b.CreateInsertValue(r, value, 1);
}

// Direct calls inside one IR module pass up to this many argument slots in registers, and get a
// function's single result slot back in one: such a function's code is an internal function
// (`wasm_r<defined>`, the body) taking (Ctx*, u64* fp, char* caller_fr, slot...) and returning
// {status, result}, and its entry `wasm_f<defined>` loads the arguments from the frame, calls it
// and stores the result at fp. Under the System V ABI the first three argument slots are in
// registers, the fourth on the native stack. Metered code's body also takes the fuel counter
// (before the slots) and returns it as a third field, {status, result, fuel}.
constexpr unsigned kRegisterArgs = 4;
// ModuleEmitter::calls, per defined function (bits).
constexpr unsigned char kCalledDirectly = 1;
constexpr unsigned char kCalledThroughReference = 2;

struct Types {
  llvm::Type* i1;
  llvm::Type* i8;
  llvm::Type* i16;
  llvm::Type* i32;
  llvm::Type* i64;
  llvm::Type* f32;
  llvm::Type* f64;
  llvm::PointerType* ptr;
  llvm::FunctionType* wasm_fn;  // entry_type
  llvm::StructType* result;     // entry_result_type
};

struct ModuleEmitter {
  const CompiledModule::Impl& cm;
  FunctionCode funcs;
  bool metered;
  llvm::LLVMContext& ctx;
  llvm::Module& mod;
  Types t;
  std::vector<llvm::Function*> fns;  // per defined function: its IR function, null if interpreted
  // Tier-up (compile_function): the code whose slots calls to functions outside this IR module
  // read their published entries from; null for the lazy and whole-module paths.
  const ModuleCode* tier_up = nullptr;
  u32 osr_hint = 0;  // tier-up: the function's Slot::loop_hint when its compilation started
  // A partition of the whole-module path (compile_object): per defined function, whether it has
  // machine code in another partition; its declaration is made on its first call (callee()).
  const std::vector<char>* declare_on_use = nullptr;
  std::vector<char> here;                 // per defined function: define() was called for it
  std::vector<char> called_here;          // per defined function: note_calls() saw a direct call of it
                                          // (the lazy and tier-up paths; whole-module code has `calls`)
  std::vector<llvm::Function*> bodies;    // per defined function: body(), made on first use
  std::vector<signed char> registers;     // per defined function: in_registers(), -1 not yet known
  // Whole-module code: a direct call of a body tests only Ctx::fr_lim (and fuel), not the native
  // stack, call depth and value stack one by one; the loader bounds the code's frames
  // (ModuleCode::segment_slots, segment_bytes) and the runtime sets the limit from them.
  bool segment_limits = false;
  // Whole-module code: per defined function, how this module's code may call it (module_calls:
  // kCalledDirectly, kCalledThroughReference). A function so called whose body takes registers
  // (in_registers) exports it as `wasm_r<d>`: a direct call from another partition calls it
  // there, and the loader records it (ModuleCode::bodies) for call_indirect and call_ref, which
  // call it when their type fits (registers_fit); a function called through a reference whose
  // type fits but whose code has tail calls exports emit_body_adapter's adapter instead.
  const std::vector<unsigned char>* calls = nullptr;
  llvm::FunctionCallee refuel, call, call_indirect, memory_grow;
  std::array<llvm::FunctionCallee, kOpCount> num{};
  // The code is for an x86-64 CPU with SSSE3 (`mod`'s triple; the tier compiles for the host):
  // i8x16.swizzle is pshufb, not a helper call.
  bool pshufb = false;

  ModuleEmitter(const CompiledModule::Impl& m, FunctionCode f, bool met, llvm::LLVMContext& c,
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
    t.wasm_fn = entry_type(ctx);
    t.result = entry_result_type(ctx);
    refuel = mod.getOrInsertFunction("sprawling_jit_refuel", llvm::FunctionType::get(t.i32, {t.ptr, t.i64}, false));
    call = mod.getOrInsertFunction("sprawling_jit_call", llvm::FunctionType::get(t.i32, {t.ptr, t.ptr, t.ptr}, false));
    call_indirect = mod.getOrInsertFunction("sprawling_jit_call_indirect",
                                            llvm::FunctionType::get(t.i32, {t.ptr, t.i32, t.i32, t.i64, t.ptr}, false));
    memory_grow =
        mod.getOrInsertFunction("sprawling_jit_memory_grow", llvm::FunctionType::get(t.i32, {t.ptr, t.i32}, false));
    pshufb = host_has_pshufb(mod);
  }
  static bool host_has_pshufb(const llvm::Module& m);
  // Where defined function `d`'s published entry is read under tier-up: `tier_up`'s slot, as an
  // offset from kTierUpSlotsSymbol (each tier-up JIT defines it as its code's entries, compiler.cpp),
  // so the object holds no address of this process and a later process can link it again.
  llvm::Value* tier_up_entry_address(llvm::IRBuilder<>& b, u32 d) {
    llvm::GlobalVariable* slots = mod.getGlobalVariable(kTierUpSlotsSymbol);
    if (slots == nullptr)
      slots = new llvm::GlobalVariable(mod, t.i8, false, llvm::GlobalValue::ExternalLinkage, nullptr, kTierUpSlotsSymbol);
    const auto* base = reinterpret_cast<const char*>(tier_up->entries.data());
    const auto* at = reinterpret_cast<const char*>(&tier_up->entries[d].entry);
    return b.CreateConstInBoundsGEP1_64(t.i8, slots, static_cast<std::uint64_t>(at - base));
  }
  // A runtime helper by name (runtime_calls.hpp), declared on first use.
  llvm::FunctionCallee helper(const char* name, llvm::Type* ret, llvm::ArrayRef<llvm::Type*> params) {
    return mod.getOrInsertFunction(name, llvm::FunctionType::get(ret, params, false));
  }
  // Defined function `d`'s entry is `f`, whose code this module holds (emit_function writes it).
  void define(u32 d, llvm::Function* f) {
    fns[d] = f;
    if (here.size() < fns.size()) here.resize(fns.size(), 0);
    here[d] = 1;
  }
  // The direct calls of a function this module will hold (its scan): a callee among the defined
  // functions gets a body (body()) only when some call of this module can use it, so that a
  // module whose calls all leave it (most of a big module's partitions) has no entry beside each
  // function. Every function of the module is noted before any is emitted.
  void note_calls(const Scan& sc, const CompiledFunc& f);
  // Whether defined function `d` takes its arguments and gives its result in registers when called
  // directly (kRegisterArgs): at most that many argument slots, at most one result slot, and no
  // tail call (its return_call* jumps with the entry's prototype, which musttail requires of the
  // function it leaves).
  bool in_registers(u32 d);
  // Whether a function of `params` argument slots and `results` result slots can take them in
  // registers (kRegisterArgs; metered, the counter takes one).
  bool registers_fit(u32 params, u32 results) const {
    return params + (metered ? 1 : 0) <= kRegisterArgs && results <= 1;
  }
  // A body's prototype for `params` argument slots: (ctx, fp, the caller's frame-record top);
  // metered, the counter too, and back as the result's third field.
  llvm::FunctionType* body_type(u32 params) {
    std::vector<llvm::Type*> types{t.ptr, t.ptr, t.ptr};
    if (metered) types.push_back(t.i64);
    types.insert(types.end(), params, t.i64);
    llvm::Type* result = metered ? llvm::StructType::get(ctx, {t.i32, t.i64, t.i64}) : t.result;
    return llvm::FunctionType::get(result, types, false);
  }
  // Whether defined function `d` has an exported register-argument body (`calls`).
  bool exports_body(u32 d) {
    return calls != nullptr && d < calls->size() && (*calls)[d] != 0 && in_registers(d);
  }
  // Whether defined function `d`, whose code this module holds, gets emit_body_adapter's adapter.
  bool needs_body_adapter(u32 d) {
    return calls != nullptr && d < calls->size() && ((*calls)[d] & kCalledThroughReference) != 0 &&
           registers_fit(funcs[d].num_params, funcs[d].num_results) && !in_registers(d);
  }
  // The body of defined function `d` when it takes its arguments in registers and either this
  // module holds its code and a direct call here or any call through exports_body can use it
  // (made on first use, written by emit_function), or another partition exports it (declared).
  // Else null.
  llvm::Function* body(u32 d) {
    const bool held = d < here.size() && here[d] != 0;
    const bool exported = exports_body(d);
    if (held) {
      if (!exported && (d >= called_here.size() || called_here[d] == 0 || !in_registers(d))) return nullptr;
    } else if (!exported || declare_on_use == nullptr || (*declare_on_use)[d] == 0) {
      return nullptr;
    }
    if (bodies.size() < fns.size()) bodies.resize(fns.size(), nullptr);
    if (bodies[d] == nullptr) {
      bodies[d] = llvm::Function::Create(body_type(funcs[d].num_params),
                                         exported ? llvm::Function::ExternalLinkage : llvm::Function::InternalLinkage,
                                         body_name(d), mod);
      if (exported) bodies[d]->setDSOLocal(held);  // called PC-relative inside its partition
    }
    return bodies[d];
  }
  static std::string body_name(u32 d) { return body_symbol(d); }
  // The IR function a call to defined function `d` calls directly, or null (it is interpreted,
  // or tier-up code, which reads its slot).
  llvm::Function* callee(u32 d) {
    if (fns[d] == nullptr && declare_on_use != nullptr && (*declare_on_use)[d] != 0)
      fns[d] = llvm::Function::Create(t.wasm_fn, llvm::Function::ExternalLinkage, "wasm_f" + std::to_string(d), mod);
    return fns[d];
  }
  llvm::FunctionCallee num_helper_fn(Op o) {
    if (!num[idx(o)]) {
      num[idx(o)] = mod.getOrInsertFunction("sprawling_jit_num_" + std::to_string(idx(o)),
                                            llvm::FunctionType::get(t.i64, {t.i64, t.i64, t.ptr}, false));
    }
    return num[idx(o)];
  }
};

// Emits defined function `defined` (its IR function is me.fns[defined]) from its scan. Returns
// 1 + the loop header where the function takes on-stack replacement requests, or 0.
u32 emit_function(ModuleEmitter& me, u32 defined, const Scan& sc);
// For a function that needs_body_adapter (its code makes tail calls, which need the entry's
// prototype): `wasm_r<defined>`, which takes the arguments as a body does, stores them in the
// callee's frame and calls its entry (emit_function first).
void emit_body_adapter(ModuleEmitter& me, u32 defined);
// ModuleEmitter::calls of a whole module from every defined function's code and scan:
// kCalledDirectly when some function's `call` names it; kCalledThroughReference when it is
// exported, or named by an element segment or a global's or a table's initial value (the only
// places validation lets ref.func take a function from).
std::vector<unsigned char> module_calls(const Module& m, FunctionCode funcs, const std::vector<Scan>& scans);

}  // namespace sprawling::wasm::jit
