// The compiled tier's compiler: LLVM IR from the internal code (decoded through internal_code.hpp,
// generated from internal_ops.def), optimized and linked by ORC's LLJIT. Each
// instruction does what its interpreter handler does, so fuel segments, trap sites and results
// are the interpreter's by construction; a function using anything not handled here stays
// interpreted (ModuleCode::reasons says what; with every 2.0 instruction handled, that is an
// internal code the decoder does not recognise).
#include "wasm/jit/jit.hpp"
#include "wasm/jit/emitter.hpp"
#include "wasm/jit/fuel_merging.hpp"
#include "wasm/jit/loop_versioning.hpp"
#include "wasm/jit/minimum_bounds.hpp"
#include "wasm/jit/recursion_inlining.hpp"
#include "wasm/jit/runtime_calls.hpp"
#include "wasm/jit/scan.hpp"
#include "wasm/jit/v128_phis.hpp"

#include <llvm-c/Core.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
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
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>
#include <llvm/Transforms/Vectorize/LoopVectorize.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/IndVarSimplify.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace sprawling::wasm {

namespace jit {

struct ModuleCode::Impl {
  // Lazy (compile_module), holding a cached object (load_object), or (tier-up) one IR module per
  // function added by the tier-up thread, made on its first job.
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::unique_ptr<llvm::TargetMachine> tm;  // for the optimizer's cost model (lazy and tier-up)
  // Tier-up: code generation of one function per module, by tm, or for a function above the
  // FastISel bound by fast_tm (CodeGenOptLevel::None: FastISel and the fast register allocator;
  // an optnone function under tm still gets the greedy allocator, which took CPython's eval loop
  // 17 s of wall time on a loaded machine).
  std::unique_ptr<llvm::TargetMachine> fast_tm;
  std::mutex optimize_mutex;                // partitions of one module optimize one at a time
  std::vector<std::size_t> body_bytes;      // per defined function: its wasm code size
  std::size_t imported_funcs = 0;           // the module's: a defined function's index is this + its own
  // The lazy path's compile memory limit: the heap's growth at its last reading, and the
  // functions compiled since (compile_module's transform).
  std::uint64_t grown = 0;
  unsigned unread = 256;
  // The lazy path's IR, emitted at each function's first call: the module, the variant, which
  // functions have a module (declared where called), and the emitters' table of IR functions.
  const CompiledModule::Impl* cm = nullptr;
  bool metered = false;
  std::vector<char> compilable;
  std::vector<llvm::Function*> fns;
};

namespace {

// ---------------------------------------------------------------- LLVM set-up

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();  // the inline asm of FunctionEmitter::ok_status
    // X86's domain reassignment (moving chains of general-purpose logic into AVX-512 mask
    // registers) took 21% of the code generation of CPython's eval loop and 6% of a bench
    // partition's, and changed no byte of either object (llc-19 -O2 with and without it on an
    // AVX-512 host): off. An LLVM option, so it holds for the process's LLVM (this plugin's).
    auto& options = llvm::cl::getRegisteredOptions();
    if (const auto it = options.find("disable-x86-domain-reassignment"); it != options.end())
      static_cast<llvm::cl::opt<bool>*>(it->second)->setValue(true);
  });
}

std::string error_text(llvm::Error e) {
  return llvm::toString(std::move(e));
}

// Functions larger than this many IR instructions after optimization are compiled with LLVM's
// fast instruction selector (the optnone path of code generation: FastISel, no machine-code
// optimization passes), which costs about half the codegen time of the optimizing selector at a
// loss of code quality; in the benchmarks' modules only libc's printf core is that large.
// SPRAWLING_JIT_FAST_CODEGEN_ABOVE overrides it (0: every function; the spec suite runs that way
// too, so both code generators are checked for exactness).
constexpr unsigned kFastCodegenAbove = 4000;
unsigned fast_codegen_above() {
  static const unsigned limit = [] {
    const char* v = std::getenv("SPRAWLING_JIT_FAST_CODEGEN_ABOVE");
    if (v == nullptr || *v == '\0') return kFastCodegenAbove;
    char* end = nullptr;
    const unsigned long n = std::strtoul(v, &end, 10);
    if (*end != '\0' || n > ~0U) {
      // An embedding process is not stopped over a tuning knob: say so and keep the default.
      std::fprintf(stderr, "sprawl: SPRAWLING_JIT_FAST_CODEGEN_ABOVE=%s is not a count of IR instructions; using %u\n",
                   v, kFastCodegenAbove);
      return kFastCodegenAbove;
    }
    return static_cast<unsigned>(n);
  }();
  return limit;
}

// The IR the emitter produces needs little: its slots, counter and memory base/size live in
// allocas (SROA makes them SSA values), loads of the context repeat (EarlyCSE), and the trap and
// fall-through blocks leave straight-line chains (SimplifyCFG, InstCombine). LLVM's O1 pipeline
// cost about 30% more time on the bench modules for code that was no faster (CGSCC passes,
// inliner and function-attribute passes have nothing to do: each function is its own partition).
// `slots_only` (tier-up, a function whose emitted IR is over kHugeFactor times the FastISel
// bound, e.g. CPython's eval loop): SROA alone, which makes the slots SSA values; the other three
// passes cost most of the optimization time of such a function for little gain at FastISel.
constexpr unsigned kHugeFactor = 3;
// Ahead of time (compile_object: `sprawl compile`, the code cache), a function is generated with
// the optimizing code generator up to this many times the FastISel bound: CPython's eval loop
// (57,600 IR instructions after the four passes) takes about 10 s of CPU that way and gives 308 KB
// of code, against 17 s for optnone (FastISel code then through the greedy allocator, which the
// optimizing target machine still runs) giving 780 KB of spill-bound code that ran about 1.5x the
// interpreter. Above it (hostile bodies), optnone as in the lazy path bounds the time.
constexpr unsigned kAheadOfTimeFactor = 25;
// After those four passes, a function with a loop and at most kLoopPassesAbove IR instructions
// gets loop rotation, LICM, GVN and IndVarSimplify, with a last InstCombine and SimplifyCFG. The
// emitter's loops carry their invariants (memory base and size, the context's fields, a local's
// address arithmetic) as phis, and their i32 induction variables as zero-extended i64 slots; these
// passes hoist the first and rewrite the second (matmul's inner loop then steps one counter and
// folds the constant address parts into displacements). Measured from the code cache, interleaved
// against the four passes alone, median of the per-round ratios of 5-7 rounds: matmul 0.71x, fib
// 0.86x, sieve 0.89x, bytecode 0.92x, strings 0.93x, memops 0.93x, the other nine bench
// workloads 0.98-1.04x; compile time about 15% more. IndVarSimplify alone did less for matmul and
// was slower on sieve, sha256 and nbody (1.07-1.10x); LLVM's O2 function simplification pipeline
// doubled the added compile time (30%) for no more speed. Above the bound (libc's printf core,
// interpreter loops such as CPython's eval loop) the passes' time grows faster than the code's
// gain, so those keep the four passes.
constexpr unsigned kLoopPassesAbove = 4000;
// recursion_inlining.hpp's two steps, after the four passes and before the loop passes, on a
// function that calls itself: inlined into itself while it stays within kSelfInliningInstructions
// IR instructions, at most kSelfInliningRounds times (two: one native call covers up to four wasm
// calls), then its base case tested at the call sites. fib from the code cache (medians of 7
// interleaved runs, CPU): 0.47 s before, 0.27 s after (native 0.43 s, node 24 0.28 s); metered
// 0.57 s before, 0.34 s after (each inlined level still tests and charges). One round with the
// base case peeled: 0.29 s; two rounds without it: 0.34-0.45 s (a leaf call still pays the
// whole prologue); without the peel a third round ran no faster and a fourth slower. The peeled
// copy (`.rest`) is not tidied again: doing so made fib 0.27 s (0.26) and metered fib 0.41 s
// (0.34), for reasons not studied; neither was a JumpThreading pass after inlining any faster.
constexpr unsigned kSelfInliningRounds = 2;
constexpr unsigned kSelfInliningInstructions = 1000;
// loop_versioning.hpp's pass, between GVN (which leaves the memory size a loop invariant) and a
// second LICM (which hoists what the check-free copy no longer keeps in the loop). A function
// that got a check-free copy then goes through LLVM's loop vectorizer: only such a copy can
// vectorize (a check, a fuel check or a call is an exit or a side effect it refuses; scalar
// floating point is constrained, which it does not vectorize). Measured from the code cache
// against versioning alone (medians of 5-9 interleaved rounds): strings 0.78x, sieve 0.85x,
// quicksort 0.95x, the other twelve within 1%, for about 4% more compile time. A SimplifyCFG and
// an InstCombine first fold the copy's dead check edges and its joined fuel offsets into one
// addition, which the vectorizer takes as a reduction (metered copies vectorize too).
// After the vectorizer, in those functions only, LLVM's loop unroller with its O2 settings (full,
// partial and runtime unrolling as the target's cost model chooses), where LLVM's own pipeline
// runs it: a check-free copy, whose checks are no longer exits of the loop, is what pays for
// unrolling (the checked copies beside it are unrolled too where the model says so). Measured
// from the code cache against the vectorizer alone (medians of 9 interleaved rounds, CPU): sha256
// 0.92x (its compression's check-free loops), strings 0.98x, the other workloads within the
// noise (about +-1.5%); metered, sha256 0.93x; the bench modules' code 0.35% larger, their
// compile time and CPython's within the noise. The unroller on the loops of every function
// instead gave the same sha256 but json 1.03x.
struct VersionLoopsOnRangeChecks : llvm::PassInfoMixin<VersionLoopsOnRangeChecks> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam) {
    if (version_loops_on_range_checks(f) == 0) return llvm::PreservedAnalyses::all();
    fam.invalidate(f, llvm::PreservedAnalyses::none());
    llvm::FunctionPassManager vectorize;
    vectorize.addPass(llvm::SimplifyCFGPass());
    vectorize.addPass(llvm::InstCombinePass(llvm::InstCombineOptions().setMaxIterations(1).setVerifyFixpoint(false)));
    vectorize.addPass(llvm::LoopSimplifyPass());
    vectorize.addPass(llvm::LoopVectorizePass());
    // Partial and runtime unrolling as the target allows them: x86-64's scheduling models give a
    // loop buffer size, which enables both and sizes them, for loops without calls (asked for
    // explicitly, checked loops with calls were unrolled too, for nothing: 8 KB more code).
    vectorize.addPass(llvm::LoopUnrollPass(llvm::LoopUnrollOptions(/*OptLevel=*/2)));
    (void)vectorize.run(f, fam);
    return llvm::PreservedAnalyses::none();
  }
};
// minimum_bounds.hpp's pass, right after SROA (an access's end is an SSA value then, and its
// check is still as the emitter made it). The checks it folds never reach the loop passes, so a
// loop whose other accesses are affine (a CRC's table lookup beside its buffer's walk) versions
// into a copy with no check at all. The slot-only pipeline of huge functions runs it too.
struct FoldChecksBelowMinimum : llvm::PassInfoMixin<FoldChecksBelowMinimum> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& /*fam*/) {
    return fold_checks_below_minimum(f) == 0 ? llvm::PreservedAnalyses::all() : llvm::PreservedAnalyses::none();
  }
};
// v128_phis.hpp's pass, right after SROA has made the slots' phis, so that InstCombine and the
// loop passes see a loop-carried v128 as one vector.
struct JoinV128Phis : llvm::PassInfoMixin<JoinV128Phis> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& /*fam*/) {
    if (join_v128_phis(f) == 0) return llvm::PreservedAnalyses::all();
    llvm::PreservedAnalyses kept;
    kept.preserveSet<llvm::CFGAnalyses>();
    return kept;
  }
};
llvm::FunctionPassManager loop_passes() {
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::LoopRotatePass(), /*UseMemorySSA=*/false));
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::LICMPass(llvm::LICMOptions()));
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/true));
  }
  fpm.addPass(llvm::GVNPass());
  fpm.addPass(VersionLoopsOnRangeChecks());
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::LICMPass(llvm::LICMOptions()));
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/true));
  }
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::IndVarSimplifyPass());
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/false));
  }
  fpm.addPass(llvm::InstCombinePass(llvm::InstCombineOptions().setMaxIterations(1).setVerifyFixpoint(false)));
  fpm.addPass(llvm::SimplifyCFGPass());
  return fpm;
}
// SPRAWLING_JIT_DUMP_IR=DIR: the optimized IR of each function tier-up compiles (DIR/wasm_f<defined>.ll),
// of each module the lazy path materializes (DIR/lazy_<its first function>.ll) and of each
// partition an ahead-of-time compile makes (DIR/partition_<first defined>.ll), to study code
// generation with llc.
void dump_ir(const llvm::Module& m, const std::string& name) {
  const char* dir = std::getenv("SPRAWLING_JIT_DUMP_IR");
  if (dir == nullptr || *dir == '\0') return;
  std::error_code ec;
  llvm::raw_fd_ostream os(std::string(dir) + "/" + name + ".ll", ec);
  if (!ec) m.print(os, nullptr);
}
void optimize(llvm::Module& m, llvm::TargetMachine& tm, bool slots_only = false, unsigned fast_factor = 1) {
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
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass(slots_only ? llvm::SROAOptions::PreserveCFG : llvm::SROAOptions::ModifyCFG));
  fpm.addPass(FoldChecksBelowMinimum());
  if (!slots_only) {
    fpm.addPass(JoinV128Phis());
    fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/false));
    fpm.addPass(llvm::SimplifyCFGPass());
    fpm.addPass(llvm::InstCombinePass(llvm::InstCombineOptions().setMaxIterations(1).setVerifyFixpoint(false)));
  }
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(m, mam);
  if (!slots_only) {
    std::vector<llvm::Function*> defined;
    for (llvm::Function& f : m.functions())
      if (!f.isDeclaration()) defined.push_back(&f);
    for (llvm::Function* f : defined) {
      const unsigned rounds = inline_self_recursion(*f, kSelfInliningInstructions, kSelfInliningRounds);
      if (!peel_base_case(*f, kSelfInliningInstructions) && rounds == 0) continue;
      llvm::FunctionPassManager tidy;
      tidy.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
      tidy.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/false));
      tidy.addPass(llvm::SimplifyCFGPass());
      tidy.addPass(llvm::InstCombinePass(llvm::InstCombineOptions().setMaxIterations(1).setVerifyFixpoint(false)));
      fam.invalidate(*f, llvm::PreservedAnalyses::none());
      (void)tidy.run(*f, fam);
    }
    llvm::FunctionPassManager loops = loop_passes();
    for (llvm::Function& f : m.functions()) {
      if (f.isDeclaration() || f.getInstructionCount() > kLoopPassesAbove) continue;
      if (fam.getResult<llvm::LoopAnalysis>(f).empty()) continue;
      (void)loops.run(f, fam);
    }
    // Last, on every function: the loop passes above read the fuel checks as the emitter made
    // them (fuel_merging.hpp); the header tests move after the charge once the merges are made.
    for (llvm::Function& f : m.functions()) {
      if (f.isDeclaration()) continue;
      (void)merge_fuel_checks_into_calls(f);
      (void)test_fuel_after_charge(f);
    }
  }
  const unsigned bound = fast_codegen_above();
  const unsigned limit = bound > ~0U / fast_factor ? ~0U : bound * fast_factor;
  for (llvm::Function& f : m.functions()) {
    if (f.isDeclaration() || f.getInstructionCount() <= limit) continue;
    f.addFnAttr(llvm::Attribute::OptimizeNone);  // read by code generation only: the IR passes ran
    f.addFnAttr(llvm::Attribute::NoInline);      // which optnone requires
  }
}

// LLVM failed to compile a function on its first call (the IR was verified, so an LLVM bug or
// memory exhaustion): there is no result to give the caller.
EntryResult lazy_compile_failed(Ctx*, std::uint64_t*) {
  std::fputs("sprawl: the compiled tier failed to compile a function on first use (LLVM error); aborting\n", stderr);
  std::abort();
}

// The limits of the job this thread compiles for (set_job_limits), or null.
thread_local JobLimits* job_limits = nullptr;

// Whether the job this thread compiles for is past its deadline (recorded in it when so).
bool past_job_deadline() {
  if (job_limits == nullptr) return false;
  if (!job_limits->passed && std::chrono::steady_clock::now() >= job_limits->at) job_limits->passed = true;
  return job_limits->passed;
}

// Past the deadline of the job this thread compiles for: the running machine code's counter goes
// back to the store's reserve (fuel consumed stays exact), so its next fuel check refuels, and
// refuelling past the deadline ends the run with DeadlineExceeded. The function being compiled
// is still compiled whole (the compile budget bounds it; its stub needs code for later jobs).
void give_up_if_past_job_deadline() {
  if (!past_job_deadline()) return;
  Ctx* c = job_limits->ctx;
  if (c == nullptr || !c->metered || c->fuel <= 0) return;
  c->store->reserve += static_cast<std::uint64_t>(c->fuel);
  c->fuel = 0;
}

// The job's compile memory limit (JobLimits::compile_memory): 0 when none.
std::uint64_t compile_memory_limit() {
  return job_limits != nullptr ? job_limits->compile_memory : 0;
}

// Why a function stays interpreted for the compile memory limit.
std::string over_memory_reason(std::uint64_t limit, std::uint64_t grown, std::uint64_t expected) {
  return "past the compile memory limit of " + std::to_string(limit) +
         " bytes (-W compile-memory): the heap had grown by " + std::to_string(grown) +
         " bytes since the module's compile began, and compiling this function takes about " +
         std::to_string(expected) + " more";
}

// The body of a function the compile memory limit leaves interpreted, whose IR function must
// exist (other functions of the module call it directly): it leaves itself pending as a tail
// call (kTailPending, Ctx::tail_callee), its entry made by its caller, so whoever called it runs
// it at the same frame, interpreted (run_pending and the interpreter find its slot's entry null,
// which is cleared before this code can run). So its results, traps and fuel are the interpreter's.
void emit_interpreted_body(llvm::Function& f, std::uint32_t funcidx) {
  if (!f.isDeclaration()) f.deleteBody();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(f.getContext(), "interpreted", &f));
  llvm::Value* ctx = f.getArg(0);
  llvm::Value* funcs =
      b.CreateLoad(b.getPtrTy(), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), ctx, offsetof(Ctx, funcs)));
  llvm::Value* self = b.CreateLoad(b.getPtrTy(), b.CreateConstInBoundsGEP1_64(b.getPtrTy(), funcs, funcidx));
  b.CreateStore(self, b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), ctx, offsetof(Ctx, tail_callee)));
  b.CreateRet(entry_result(b, b.getInt32(kTailPending), b.getInt64(0)));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string function_name(std::size_t defined) { return entry_symbol(defined); }
// The IR instructions of a tier-up module: its function's entry and body (ModuleEmitter::body).
unsigned instruction_count(const llvm::Module& m) {
  unsigned n = 0;
  for (const llvm::Function& f : m)
    if (!f.isDeclaration()) n += f.getInstructionCount();
  return n;
}

// The defined index function_name gave `name`, or none for any other name (helpers, intrinsics).
std::optional<std::size_t> defined_index(llvm::StringRef name) {
  std::size_t i = 0;
  if (!name.consume_front("wasm_f") || name.getAsInteger(10, i)) return std::nullopt;
  return i;
}

// SPRAWLING_JIT_PERFMAP=1: each function tier-up compiles gets a line in /tmp/perf-<pid>.map
// (perf's convention for JIT code: `start size name` in hex), so `perf report` names machine
// code by its wasm function instead of an anonymous address. Only the tier-up thread writes.
bool perf_map_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("SPRAWLING_JIT_PERFMAP");
    return v != nullptr && std::string_view(v) == "1";
  }();
  return wanted;
}
// Whether both hold a value; the error of each that does not is consumed (dropped).
template <typename A, typename B>
bool both_taken(llvm::Expected<A>& a, llvm::Expected<B>& b) {
  if (!a) llvm::consumeError(a.takeError());
  if (!b) llvm::consumeError(b.takeError());
  return a && b;
}
// The size of `name`'s code in a relocatable object (0 if absent): its section's size, since
// the JIT's objects carry no symbol sizes and tier-up puts one function in each.
std::uint64_t symbol_size(const llvm::MemoryBuffer& object, llvm::StringRef name) {
  auto obj = llvm::object::ObjectFile::createObjectFile(object.getMemBufferRef());
  if (!obj) {
    llvm::consumeError(obj.takeError());
    return 0;
  }
  for (const llvm::object::SymbolRef& sym : (*obj)->symbols()) {
    auto n = sym.getName();
    auto section = sym.getSection();
    if (!both_taken(n, section) || *n != name || *section == (*obj)->section_end()) continue;
    return (*section)->getSize();
  }
  return 0;
}

void perf_map_add(std::uint64_t start, std::uint64_t size, const Module& m, std::uint32_t defined) {
  const std::uint32_t index = m.imported_funcs + defined;
  const auto named = m.function_names.find(index);
  const std::string name = named != m.function_names.end() ? named->second : "f" + std::to_string(index);
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  static std::FILE* const file = std::fopen(("/tmp/perf-" + std::to_string(getpid()) + ".map").c_str(), "a");
  if (file == nullptr) return;
  std::fprintf(file, "%llx %llx wasm::%s\n", static_cast<unsigned long long>(start),
               static_cast<unsigned long long>(size), name.c_str());
  std::fflush(file);
}

// The host target every path compiles for (and the code cache keys on).
llvm::Expected<llvm::orc::JITTargetMachineBuilder> host_target_builder() {
  init_llvm();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (jtmb) {
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    // x86-64 JIT code defaults to the large code model (every call and constant address a 64-bit
    // immediate in a register). JITLink lays each object out in one block and reaches the
    // engine's helpers through stubs it makes, so the small model links too, position-independent
    // (jump tables then hold offsets, not 32-bit absolute addresses the mapping cannot meet).
    jtmb->setCodeModel(llvm::CodeModel::Small);
    jtmb->setRelocationModel(llvm::Reloc::PIC_);
  }
  return jtmb;
}

// A module of its own (`wasm_f<defined index>`) for every compilable function of a variant, its
// body a placeholder until its first call; out->reasons says why the others stay interpreted.
// The lazy path's.
struct Emitted {
  std::unique_ptr<llvm::LLVMContext> context;
  std::vector<std::unique_ptr<llvm::Module>> mods;  // one per compilable function, in the context
  std::vector<char> compilable;                     // per defined function: whether it has a module
};
std::optional<Emitted> emit_module(const CompiledModule::Impl& cm, bool metered, const llvm::DataLayout& layout,
                                   const llvm::Triple& triple, ModuleCode& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const FunctionCode funcs = cm.all_code(metered);  // each function translated when first read
  for (const FunctionBody& body : cm.module.code) out.code_bytes += body.code_size;
  // The module as a whole (kLazyModuleBudget): the functions up to the first that does not fit
  // get IR; from that one on none is translated or scanned here, and each keeps a short reason
  // (a string without a heap block: a million of them cost nothing more), the first the whole one.
  std::vector<Scan> scans;
  std::size_t taken = 0;
  std::size_t taken_bytes = 0;
  for (std::size_t i = 0; i < funcs.size(); ++i) {
    const std::size_t bytes = cm.module.code[i].code_size;
    if (taken >= kLazyModuleBudget.functions || taken_bytes + bytes > kLazyModuleBudget.code_bytes) {
      out.reasons[i] = "past the lazy compile's module budget of " + std::to_string(kLazyModuleBudget.functions) +
                       " functions and " + std::to_string(kLazyModuleBudget.code_bytes) + " wasm code bytes (" +
                       std::to_string(taken) + " functions, " + std::to_string(taken_bytes) + " bytes before it)";
      for (std::size_t j = i + 1; j < funcs.size(); ++j) out.reasons[j] = "module budget";
      break;
    }
    scans.push_back(scan(funcs[i], metered, cm.module, i));
    // Only the verdict and the facts are kept: the IR is made from a new scan at the first call.
    scans.back().instrs = {};
    scans.back().targets = {};
    if (!scans.back().reason.empty()) continue;
    ++taken;
    taken_bytes += bytes;
  }
  if (const char* stats = std::getenv("SPRAWLING_JIT_STATS"); stats != nullptr && std::string_view(stats) == "2") {
    // How close the module's compiled functions come to the compile budget.
    CompileFacts top;
    for (const Scan& sc : scans) {
      if (!sc.reason.empty()) continue;
      top.code_bytes = std::max(top.code_bytes, sc.facts.code_bytes);
      top.nesting = std::max(top.nesting, sc.facts.nesting);
      top.branch_targets = std::max(top.branch_targets, sc.facts.branch_targets);
      top.table_entries = std::max(top.table_entries, sc.facts.table_entries);
      top.locals = std::max(top.locals, sc.facts.locals);
      top.signature = std::max(top.signature, sc.facts.signature);
      top.frame_slots = std::max(top.frame_slots, sc.facts.frame_slots);
      top.slots_by_nesting = std::max(top.slots_by_nesting, sc.facts.slots_by_nesting);
      top.simd_ops = std::max(top.simd_ops, sc.facts.simd_ops);
      top.gc_ops = std::max(top.gc_ops, sc.facts.gc_ops);
      top.spilled_slots = std::max(top.spilled_slots, sc.facts.spilled_slots);
    }
    std::fprintf(stderr,
                 "sprawl jit: largest compiled function figures (compile budget): wasm code bytes %zu (%zu), nesting "
                 "depth %u (%u), branch targets %zu (%zu), counting every br_table entry %zu (%zu), locals %zu (%zu), parameters and results %zu (%zu), frame "
                 "slots %zu (%zu), frame slots * nesting depth %zu (%zu), v128 instructions %zu (%zu), GC instructions %zu (%zu), frame slots spilled %zu (%zu)\n",
                 top.code_bytes, kCompileBudget.code_bytes, top.nesting, kCompileBudget.nesting, top.branch_targets,
                 kCompileBudget.branch_targets, top.table_entries, kCompileBudget.table_entries, top.locals, kCompileBudget.locals, top.signature,
                 kCompileBudget.signature, top.frame_slots, kCompileBudget.frame_slots, top.slots_by_nesting,
                 kCompileBudget.slots_by_nesting, top.simd_ops, kCompileBudget.simd_ops, top.gc_ops,
                 kCompileBudget.gc_ops, top.spilled_slots, kCompileBudget.spilled_slots);
  }
  // One IR module per function, in one context: the lazy JIT splits a module into the functions
  // it compiles by cloning the module's declarations for each one, so one module of every
  // function made each first call cost time in proportion to the module (1,000 functions called
  // once: 6 s; 4,000: 82 s). Each module holds a placeholder body until the function is first
  // called: the transform (compile_module) then emits its IR, so only called functions have IR,
  // and only while they are compiled (CPython's every function up front: 1.19 GB).
  Emitted e;
  e.context = std::make_unique<llvm::LLVMContext>();
  e.compilable.assign(funcs.size(), 0);  // those past the module budget stay 0
  for (std::size_t i = 0; i < scans.size(); ++i) {
    if (scans[i].reason.empty()) {
      e.compilable[i] = 1;
    } else {
      out.reasons[i] = scans[i].reason;
    }
  }
  llvm::FunctionType* wasm_fn = entry_type(*e.context);
  for (std::size_t i = 0; i < scans.size(); ++i) {
    if (e.compilable[i] == 0) continue;
    // A job's deadline, between functions: its run ends there (nothing of this is kept).
    if (i % 1024 == 0 && past_job_deadline()) {
      out.error = "compilation stopped at the job's deadline";
      out.stopped_at_deadline = true;
      return std::nullopt;
    }
    auto mod = std::make_unique<llvm::Module>(function_name(i), *e.context);
    mod->setDataLayout(layout);
    mod->setTargetTriple(triple.str());
    llvm::Function* f = llvm::Function::Create(wasm_fn, llvm::Function::ExternalLinkage, function_name(i), *mod);
    new llvm::UnreachableInst(*e.context, llvm::BasicBlock::Create(*e.context, "placeholder", f));
    e.mods.push_back(std::move(mod));
  }
  out.seconds_ir = seconds_since(t0);
  return e;
}

// The runtime helpers compiled code calls, by name (runtime_calls.hpp).
llvm::Error define_helpers(llvm::orc::LLJIT& lljit) {
  llvm::orc::SymbolMap symbols;
  for (const HelperSymbol& h : runtime_symbols()) {
    symbols[lljit.mangleAndIntern(llvm::StringRef(h.name.data(), h.name.size()))] = {
        llvm::orc::ExecutorAddr::fromPtr(h.address), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  }
  return lljit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

// The symbol `name(i)` of every function with machine code (out.reasons[i] ""), in one lookup:
// each lookup materializes the lazy re-exports of all the symbols not yet looked up, so one lookup
// per function was quadratic (100,000 functions: minutes). `flags` WeaklyReferencedSymbol leaves
// a symbol that is not there out of the map instead of failing. On error: out.error, and none.
struct FoundSymbols {
  std::vector<llvm::orc::SymbolStringPtr> names;  // per defined function, null when not looked up
  llvm::orc::SymbolMap map;
  [[nodiscard]] llvm::orc::ExecutorAddr address(std::size_t i) const {
    if (names[i] == nullptr) return {};
    const auto it = map.find(names[i]);
    return it == map.end() ? llvm::orc::ExecutorAddr() : it->second.getAddress();
  }
};
std::optional<FoundSymbols> lookup_functions(llvm::orc::LLJIT& lljit, ModuleCode& out,
                                             const std::function<std::string(std::size_t)>& name,
                                             llvm::orc::SymbolLookupFlags flags) {
  llvm::orc::SymbolLookupSet wanted;
  FoundSymbols found;
  found.names.resize(out.entries.size());
  for (std::size_t i = 0; i < out.entries.size(); ++i) {
    if (!out.reasons[i].empty()) continue;
    found.names[i] = lljit.mangleAndIntern(name(i));
    wanted.add(found.names[i], flags);
  }
  auto map = lljit.getExecutionSession().lookup(
      llvm::orc::makeJITDylibSearchOrder(&lljit.getMainJITDylib(), llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
      std::move(wanted));
  if (!map) {
    out.error = error_text(map.takeError());
    return std::nullopt;
  }
  found.map = std::move(*map);
  return found;
}

// Publishes the entry of every function with machine code, or none on error.
void publish_entries(llvm::orc::LLJIT& lljit, ModuleCode& out) {
  const std::optional<FoundSymbols> found =
      lookup_functions(lljit, out, function_name, llvm::orc::SymbolLookupFlags::RequiredSymbol);
  if (!found) return;
  for (std::size_t i = 0; i < out.entries.size(); ++i) {
    if (!out.reasons[i].empty()) continue;
    out.entries[i].entry.store(found->address(i).toPtr<Entry>(), std::memory_order_release);
    ++out.compiled;
  }
}

// Whole-module code: the register-argument entry points its objects export (ModuleCode::bodies;
// ModuleEmitter::calls says which functions have one), looked up after publish_entries.
void publish_bodies(llvm::orc::LLJIT& lljit, ModuleCode& out) {
  const std::optional<FoundSymbols> found = lookup_functions(
      lljit, out, [](std::size_t i) { return ModuleEmitter::body_name(static_cast<u32>(i)); },
      llvm::orc::SymbolLookupFlags::WeaklyReferencedSymbol);
  if (!found) return;
  out.bodies.assign(out.entries.size(), nullptr);
  for (std::size_t i = 0; i < out.entries.size(); ++i) out.bodies[i] = found->address(i).toPtr<void*>();
}

}  // namespace

std::shared_ptr<ModuleCode> compile_module(const CompiledModule::Impl& cm, bool metered) {
  const std::size_t nfuncs = cm.module.code.size();
  auto out = std::make_shared<ModuleCode>(nfuncs);
  out->heap_base = heap_bytes_in_use();  // the compile memory limit counts from here
  auto jtmb = host_target_builder();
  if (!jtmb) {
    out->error = error_text(jtmb.takeError());
    return out;
  }
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
  impl->imported_funcs = cm.module.imported_funcs;
  ModuleCode* code = out.get();
  ModuleCode::Impl* state = impl.get();
  (*lljit)->getIRTransformLayer().setTransform(
      [code, state](llvm::orc::ThreadSafeModule tsm,
                    const llvm::orc::MaterializationResponsibility&) -> llvm::Expected<llvm::orc::ThreadSafeModule> {
        const std::lock_guard lock(state->optimize_mutex);
        give_up_if_past_job_deadline();
        const auto t = std::chrono::steady_clock::now();
        tsm.withModuleDo([&](llvm::Module& m) {
          // The job's compile memory limit, before each function's IR: one that would pass it
          // gets the interpreted body, its slot's entry cleared first (every later call goes to
          // the interpreter; one in flight through the stub gets there from the body). The heap
          // is read when the last reading is within 64 MiB of the limit, and every 256
          // functions (a reading walks malloc's free lists: on a fragmented heap it took a fifth
          // of the compile time of many small functions when made at each one).
          const std::uint64_t limit = compile_memory_limit();
          const FunctionCode funcs = state->cm->all_code(state->metered);
          for (llvm::Function& f : m.functions()) {
            const std::optional<std::size_t> defined = defined_index(f.getName());
            if (f.isDeclaration() || !defined || *defined >= state->body_bytes.size() ||
                !code->reasons[*defined].empty())
              continue;
            const std::size_t i = *defined;
            const auto funcidx = static_cast<std::uint32_t>(state->imported_funcs + i);
            const std::uint64_t expected =
                std::uint64_t{state->body_bytes[i]} * (kIrBytesPerCodeByte + kCompileBytesPerCodeByte);
            if (limit != 0 && (state->unread >= 256 || state->grown + expected + (std::uint64_t{64} << 20) > limit)) {
              const std::uint64_t now = heap_bytes_in_use();
              state->grown = now > code->heap_base ? now - code->heap_base : 0;
              state->unread = 0;
            }
            ++state->unread;
            if (limit != 0 && (state->grown > limit || expected > limit - state->grown)) {
              code->entries[i].entry.store(nullptr, std::memory_order_release);
              --code->compiled;
              ++code->over_memory;
              code->reasons[i] = over_memory_reason(limit, state->grown, expected);
              emit_interpreted_body(f, funcidx);
              continue;
            }
            // Its IR, from a new scan (the first one's instructions were not kept), in place of
            // the placeholder; the functions it calls are declared in this module as it calls them.
            const auto t_ir = std::chrono::steady_clock::now();
            const Scan sc = scan(funcs[i], state->metered, state->cm->module, i);
            f.deleteBody();
            ModuleEmitter me(*state->cm, funcs, state->metered, m.getContext(), m);
            me.fns = std::move(state->fns);
            me.declare_on_use = &state->compilable;
            me.define(static_cast<u32>(i), &f);
            me.note_calls(sc, funcs[i]);
            emit_function(me, static_cast<u32>(i), sc);
            llvm::Function* body = i < me.bodies.size() ? me.bodies[i] : nullptr;
            state->fns = std::move(me.fns);
            for (const llvm::Function& g : m)
              if (const auto d = defined_index(g.getName()); d && *d < state->fns.size()) state->fns[*d] = nullptr;
            std::string verify;
            llvm::raw_string_ostream vs(verify);
            if (llvm::verifyFunction(f, &vs) || (body != nullptr && llvm::verifyFunction(*body, &vs))) {
              // An emitter bug: this function stays interpreted rather than failing its caller.
              if (body != nullptr) {
                f.deleteBody();
                body->dropAllReferences();
                body->eraseFromParent();
              }
              code->entries[i].entry.store(nullptr, std::memory_order_release);
              --code->compiled;
              code->reasons[i] = "the compiled tier generated invalid IR: " + verify;
              emit_interpreted_body(f, funcidx);
            } else {
              ++code->materialized;
              code->materialized_bytes += state->body_bytes[i];
            }
            code->seconds_ir += seconds_since(t_ir);
          }
          optimize(m, *state->tm);
          for (const llvm::Function& f : m.functions()) {
            if (f.isDeclaration()) continue;
            dump_ir(m, "lazy_" + f.getName().str());
            break;
          }
        });
        code->seconds_opt += seconds_since(t);
        // The job's deadline, between functions (give_up_if_past_job_deadline); a run that
        // compiled something and returns past its deadline ends with DeadlineExceeded too
        // (Store::call).
        if (job_limits != nullptr) job_limits->compiled = true;
        give_up_if_past_job_deadline();
        return tsm;
      });

  std::optional<Emitted> emitted =
      emit_module(cm, metered, (*lljit)->getDataLayout(), state->tm->getTargetTriple(), *out);
  if (!emitted) return out;
  state->cm = &cm;
  state->metered = metered;
  state->compilable = std::move(emitted->compilable);
  state->fns.assign(cm.module.code.size(), nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  if (auto e = define_helpers(**lljit)) {
    out->error = error_text(std::move(e));
    return out;
  }
  const llvm::orc::ThreadSafeContext context(std::move(emitted->context));
  for (std::unique_ptr<llvm::Module>& mod : emitted->mods) {
    if (auto e = (*lljit)->addLazyIRModule(llvm::orc::ThreadSafeModule(std::move(mod), context))) {
      out->error = error_text(std::move(e));
      return out;
    }
  }
  publish_entries(**lljit, *out);
  out->seconds_codegen = seconds_since(t0);  // the stubs only: functions compile on first call
  impl->lljit = std::move(*lljit);
  out->impl = std::move(impl);
  return out;
}

namespace {
// Tier-up code's JIT, made by its first job (off the interpreter's thread): the helpers and
// kTierUpSlotsSymbol, the address its objects read their callees' slots at. False (code.error
// says why) when LLVM could not be set up.
bool tier_up_jit(ModuleCode& code) {
  if (!code.error.empty()) return false;
  if (!code.impl) code.impl = std::make_unique<ModuleCode::Impl>();
  ModuleCode::Impl& state = *code.impl;
  if (state.lljit) return true;
  auto jtmb = host_target_builder();
  if (!jtmb) {
    code.error = error_text(jtmb.takeError());
    return false;
  }
  auto tm = jtmb->createTargetMachine();
  if (!tm) {
    code.error = error_text(tm.takeError());
    return false;
  }
  auto fast_jtmb = *jtmb;
  fast_jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  auto fast_tm = fast_jtmb.createTargetMachine();
  if (!fast_tm) {
    code.error = error_text(fast_tm.takeError());
    return false;
  }
  auto lljit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
  if (!lljit) {
    code.error = error_text(lljit.takeError());
    return false;
  }
  if (auto e = define_helpers(**lljit)) {
    code.error = error_text(std::move(e));
    return false;
  }
  llvm::orc::SymbolMap slots;
  slots[(*lljit)->mangleAndIntern(kTierUpSlotsSymbol)] = {llvm::orc::ExecutorAddr::fromPtr(code.entries.data()),
                                                          llvm::JITSymbolFlags::Exported};
  if (auto e = (*lljit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(slots)))) {
    code.error = error_text(std::move(e));
    return false;
  }
  state.tm = std::move(*tm);
  state.fast_tm = std::move(*fast_tm);
  state.lljit = std::move(*lljit);
  return true;
}
}  // namespace

TierUpObject compile_function(const CompiledModule::Impl& cm, ModuleCode& code, std::uint32_t defined,
                              const std::atomic<bool>& cancel, bool upgrade) {
  // An upgrade replaces quick code (and only that); anything else compiles a function once.
  const bool has_entry = code.entries[defined].entry.load(std::memory_order_acquire) != nullptr;
  if (upgrade ? !has_entry || defined >= code.quick.size() || code.quick[defined] == 0 : has_entry) return {};
  if (!tier_up_jit(code)) return {};
  ModuleCode::Impl& state = *code.impl;
  const std::string name = tier_up_symbol(defined, upgrade);
  if (cancel.load(std::memory_order_relaxed)) return {};
  const bool metered = code.metered;
  auto t0 = std::chrono::steady_clock::now();
  const FunctionCode funcs = cm.all_code(metered);
  const Scan sc = scan(funcs[defined], metered, cm.module, defined);
  if (!sc.reason.empty()) {
    code.reasons[defined] = sc.reason;
    return {};
  }
  auto context = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>("wasm_f" + std::to_string(defined), *context);
  u32 osr = 0;  // 1 + the loop header where the function takes on-stack replacement requests
  mod->setDataLayout(state.lljit->getDataLayout());
  mod->setTargetTriple(state.tm->getTargetTriple().str());
  {
    // Only this function has IR: its calls read the callee's slot and call its machine code
    // natively once it has some (its own tier-up), else take sprawling_jit_call, which
    // interprets it.
    ModuleEmitter me(cm, funcs, metered, *context, *mod);
    me.tier_up = &code;
    // An upgrade takes on-stack replacement requests where the quick code does: the interpreter
    // reads the header (Slot::osr) apart from the entry, so the two must not change.
    me.osr_hint = upgrade ? code.entries[defined].osr.load(std::memory_order_relaxed)
                          : code.entries[defined].loop_hint.load(std::memory_order_relaxed);
    me.fns.assign(funcs.size(), nullptr);
    me.define(defined, llvm::Function::Create(me.t.wasm_fn, llvm::Function::ExternalLinkage, name, *mod));
    me.note_calls(sc, funcs[defined]);
    osr = emit_function(me, defined, sc);
  }
  if (upgrade && osr != code.entries[defined].osr.load(std::memory_order_relaxed)) return {};
  std::string verify;
  llvm::raw_string_ostream vs(verify);
  if (llvm::verifyModule(*mod, &vs)) {
    code.reasons[defined] = "the compiled tier generated invalid IR: " + verify;
    return {};
  }
  const double ir = seconds_since(t0);
  code.seconds_ir += ir;
  if (cancel.load(std::memory_order_relaxed)) return {};
  t0 = std::chrono::steady_clock::now();
  // An upgrade: the four passes (and the loop passes) and the optimizing code generator up to
  // ahead of time's bound, as `sprawl compile` makes the function. Else the quick pipeline for a
  // huge function (SROA alone, FastISel) and FastISel above the bound.
  const bool huge = !upgrade && instruction_count(*mod) > kHugeFactor * fast_codegen_above();
  optimize(*mod, *state.tm, huge, upgrade ? kAheadOfTimeFactor : 1);
  const double opt = seconds_since(t0);
  code.seconds_opt += opt;
  const unsigned instructions = instruction_count(*mod);
  dump_ir(*mod, name);
  if (cancel.load(std::memory_order_relaxed)) return {};
  t0 = std::chrono::steady_clock::now();
  const bool fast = !upgrade && instructions > fast_codegen_above();
  llvm::orc::SimpleCompiler compiler(fast ? *state.fast_tm : *state.tm);
  auto object = compiler(*mod);
  if (!object) {
    if (!upgrade) code.reasons[defined] = "LLVM: " + error_text(object.takeError());
    return {};
  }
  const std::uint64_t machine_bytes = perf_map_wanted() ? symbol_size(**object, name) : 0;
  // Kept for the hot set (the code cache): the object is linked from a copy of its bytes.
  TierUpObject kept{osr, {(*object)->getBufferStart(), (*object)->getBufferEnd()}, fast, upgrade};
  if (auto e = state.lljit->addObjectFile(std::move(*object))) {
    if (!upgrade) code.reasons[defined] = "LLVM: " + error_text(std::move(e));
    return {};
  }
  auto found = state.lljit->lookup(name);  // links it
  const double codegen = seconds_since(t0);
  code.seconds_codegen += codegen;
  // SPRAWLING_JIT_STATS=2: each function as it is compiled (which ones cost what).
  if (const char* stats = std::getenv("SPRAWLING_JIT_STATS"); stats != nullptr && std::string_view(stats) == "2") {
    std::fprintf(stderr,
                 "sprawl jit: tier-up f%u (%zu wasm code bytes, %u IR instructions%s): IR %.3f s, optimizing %.3f s, "
                 "code generation %.3f s\n",
                 defined, cm.module.code[defined].code_size, instructions,
                 upgrade ? ", upgrade" : (fast ? ", FastISel" : ""), ir, opt, codegen);
  }
  if (!found) {
    if (!upgrade) code.reasons[defined] = "LLVM: " + error_text(found.takeError());
    return {};
  }
  if (perf_map_wanted()) perf_map_add(found->getValue(), machine_bytes, cm.module, defined);
  if (code.quick.size() < code.entries.size()) code.quick.resize(code.entries.size(), 0);
  code.quick[defined] = fast ? 1 : 0;
  if (upgrade) {
    // The quick code stays linked: activations running in it finish there, and callers that
    // read its address before (FuncInst::native) keep calling it, with the same results.
    ++code.upgraded;
    code.entries[defined].entry.store(found->toPtr<Entry>(), std::memory_order_release);
    return kept;
  }
  code.reasons[defined].clear();
  ++code.compiled;
  ++code.materialized;
  code.materialized_bytes += cm.module.code[defined].code_size;
  code.entries[defined].osr.store(osr, std::memory_order_relaxed);  // published with the entry
  code.entries[defined].entry.store(found->toPtr<Entry>(), std::memory_order_release);
  return kept;
}

std::string link_tier_up_object(const CompiledModule::Impl& cm, ModuleCode& code, std::uint32_t defined,
                                std::uint32_t osr, std::span<const std::uint8_t> object, bool upgraded) {
  if (code.entries[defined].entry.load(std::memory_order_acquire) != nullptr) return "";
  if (!tier_up_jit(code)) return code.error;
  ModuleCode::Impl& state = *code.impl;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string name = tier_up_symbol(defined, upgraded);
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char*>(object.data()), object.size()), name);
  // A copy another process made: it must define this function and nothing the JIT has already
  // (a function linked twice), else it is refused before it is added.
  auto file = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
  if (!file) return "not an object file: " + error_text(file.takeError());
  bool defines = false;
  for (const llvm::object::SymbolRef& sym : (*file)->symbols()) {
    auto flags = sym.getFlags();
    auto sym_name = sym.getName();
    if (!flags || !sym_name) {
      llvm::consumeError(flags.takeError());
      llvm::consumeError(sym_name.takeError());
      return "an unreadable symbol";
    }
    if ((*flags & llvm::object::SymbolRef::SF_Global) == 0 || (*flags & llvm::object::SymbolRef::SF_Undefined) != 0)
      continue;
    if (*sym_name != name) return "it defines " + sym_name->str() + ", not only " + name;
    defines = true;
  }
  if (!defines) return "it does not define " + name;
  const std::uint64_t machine_bytes = perf_map_wanted() ? symbol_size(*buffer, name) : 0;
  if (auto e = state.lljit->addObjectFile(std::move(buffer))) return "LLVM: " + error_text(std::move(e));
  auto found = state.lljit->lookup(name);
  if (!found) return "LLVM: " + error_text(found.takeError());
  code.seconds_codegen += seconds_since(t0);
  if (perf_map_wanted()) perf_map_add(found->getValue(), machine_bytes, cm.module, defined);
  code.reasons[defined].clear();
  ++code.compiled;
  ++code.from_hot_set;
  code.entries[defined].osr.store(osr, std::memory_order_relaxed);  // published with the entry
  code.entries[defined].entry.store(found->toPtr<Entry>(), std::memory_order_release);
  return "";
}

namespace {

// ---------------------------------------------------------------- ahead of time, in partitions

// compile_object compiles consecutive functions together, up to this much wasm code (a larger
// function alone) or this many functions: each partition is an LLVM module of its own, so
// partitions compile on separate threads, and the IR alive at once is a partition's per thread,
// not the module's. The partitions depend on the module only, so the objects are the same
// whatever the thread count. Smaller partitions balance the threads better; each costs a module's
// set-up and makes calls out of it go through a stub the linker makes.
constexpr std::size_t kPartitionBytes = 32 * 1024;
constexpr std::size_t kPartitionFunctions = 512;
// The heap is measured (mallinfo2, which walks malloc's free lists) at the end of each phase of a
// partition and every this many functions while emitting IR; the clock at every function.
constexpr std::size_t kMemoryCheckEvery = 64;
// The default time limit (CompileOptions::time_limit unset): 10 minutes, plus 2 minutes per MB of
// wasm code. One core compiles about 15 KB of wasm code per CPU second (bench modules, CPython, a
// 250 KB module of bench workloads), a MB in about 70 s; 120 s a MB leaves room for a slower or
// busy machine, and a 100 MB module gets 3.5 hours.
constexpr std::chrono::nanoseconds kDefaultTimeBase = std::chrono::minutes(10);
constexpr std::chrono::nanoseconds kDefaultTimePerMB = std::chrono::minutes(2);

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string describe_function(const Module& m, std::size_t defined) {
  const std::size_t index = m.imported_funcs + defined;
  const auto named = m.function_names.find(static_cast<u32>(index));
  std::string s = "function " + std::to_string(index);
  if (named != m.function_names.end()) s += " (" + named->second + ")";
  return s;
}

std::string describe_seconds(std::chrono::nanoseconds d) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%g s", std::chrono::duration<double>(d).count());
  return buf;
}

std::string describe_bytes(std::uint64_t n) {
  char buf[48];
  if (n >= (std::uint64_t{1} << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / static_cast<double>(1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(n));
  return buf;
}

// What the threads of one compile_object share: its limits and the first reason to stop.
class AheadOfTime {
 public:
  AheadOfTime(const CompiledModule::Impl& cm, const CompileOptions& options)
      : cm_(cm), options_(options), start_(std::chrono::steady_clock::now()), base_(heap_bytes_in_use()) {
    if (options.time_limit) {
      limit_ = *options.time_limit;
    } else {
      std::size_t bytes = 0;
      for (const FunctionBody& body : cm.module.code) bytes += body.code_size;
      limit_ = kDefaultTimeBase + kDefaultTimePerMB * static_cast<std::int64_t>(bytes / 1'000'000);
    }
    // Zero: no limit; so is a limit beyond a century (steady_clock counts nanoseconds in 64 bits).
    if (limit_.count() > 0 && limit_ < std::chrono::hours(24 * 365 * 100)) deadline_ = start_ + limit_;
  }

  // Whether the compile goes on; `defined` is the function about to be compiled or just compiled
  // (`doing` says which phase), `memory` whether to measure the heap too.
  bool check(std::size_t defined, const char* doing, bool memory) {
    if (stopped_.load(std::memory_order_relaxed)) return false;
    if (std::chrono::steady_clock::now() >= deadline_) {
      return stop("stopped past the compile time limit of " + describe_seconds(limit_) + " while " +
                  doing + " " + describe_function(cm_.module, defined));
    }
    if (!memory) return true;
    const std::uint64_t used = heap_bytes_in_use();
    const std::uint64_t growth = used > base_ ? used - base_ : 0;
    std::uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (growth > peak && !peak_.compare_exchange_weak(peak, growth, std::memory_order_relaxed)) {
    }
    if (options_.memory_limit != 0 && growth > options_.memory_limit) {
      return stop("stopped past the compile memory limit of " + describe_bytes(options_.memory_limit) +
                  " (the heap had grown by " + describe_bytes(growth) + ") while " + doing + " " +
                  describe_function(cm_.module, defined));
    }
    return true;
  }
  // Ends the compile for every thread with `why` (the first reason given wins); false.
  bool stop(std::string why) {
    const std::lock_guard lock(mutex_);
    if (!stopped_.exchange(true)) error_ = std::move(why);
    return false;
  }
  [[nodiscard]] bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
  [[nodiscard]] const std::string& error() const { return error_; }  // once the threads are joined
  [[nodiscard]] std::uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  [[nodiscard]] double seconds() const { return seconds_since(start_); }
  // A partition of `functions` functions is done: tells options.progress, one call at a time.
  void done(std::size_t functions, std::size_t total) {
    const std::lock_guard lock(mutex_);
    done_ += functions;
    if (options_.progress) options_.progress(done_, total);
  }

 private:
  const CompiledModule::Impl& cm_;
  const CompileOptions& options_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::nanoseconds limit_{0};
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  std::uint64_t base_;
  std::atomic<std::uint64_t> peak_{0};
  std::atomic<bool> stopped_{false};
  std::mutex mutex_;
  std::string error_;
  std::size_t done_ = 0;
};

struct Partition {
  std::size_t first = 0;  // defined functions [first, end)
  std::size_t end = 0;
  std::size_t compilable = 0;  // of which have machine code
};

// Partitions of every defined function, in order (functions that stay interpreted included, so
// progress counts them; a partition with no compilable function makes no object).
std::vector<Partition> partitions_of(const CompiledModule::Impl& cm, const std::vector<Scan>& scans) {
  std::vector<Partition> parts;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    const std::size_t size = cm.module.code[i].code_size;
    if (parts.empty() || (parts.back().end > parts.back().first &&
                          (bytes + size > kPartitionBytes || parts.back().end - parts.back().first >= kPartitionFunctions))) {
      parts.push_back(Partition{i, i, 0});
      bytes = 0;
    }
    parts.back().end = i + 1;
    bytes += size;
    if (scans[i].reason.empty()) ++parts.back().compilable;
  }
  return parts;
}

// The threads compile_object uses: `asked`, or 0 for the cores this process may run on.
unsigned compile_threads(unsigned asked) {
  if (asked != 0) return asked;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  return std::max(1U, std::thread::hardware_concurrency());
}

// One thread of compile_object: takes the next partition until none is left or the compile
// stopped; each partition in its own LLVMContext and module, compiled with this thread's target
// machine into results[p].
void compile_partitions(const CompiledModule::Impl& cm, bool metered, const std::vector<Scan>& scans,
                        const std::vector<char>& compilable, const std::vector<unsigned char>& calls,
                        const std::vector<Partition>& parts,
                        std::atomic<std::size_t>& next, llvm::orc::JITTargetMachineBuilder jtmb, AheadOfTime& aot,
                        std::vector<std::vector<std::uint8_t>>& results, std::atomic<double>& cpu) {
  const double cpu0 = thread_cpu_seconds();
  // Each function's frame size in .stack_sizes, read back by the loader (ModuleCode::segment_bytes).
  jtmb.getOptions().EmitStackSizeSection = true;
  auto tm = jtmb.createTargetMachine();
  if (!tm) {
    aot.stop("LLVM: " + error_text(tm.takeError()));
    return;
  }
  const FunctionCode funcs = cm.all_code(metered);
  for (;;) {
    const std::size_t p = next.fetch_add(1);
    if (p >= parts.size() || aot.stopped()) break;
    const Partition& part = parts[p];
    if (part.compilable == 0) {
      aot.done(part.end - part.first, scans.size());
      continue;
    }
    llvm::LLVMContext context;
    llvm::Module mod("wasm_p" + std::to_string(p), context);
    mod.setDataLayout((*tm)->createDataLayout());
    mod.setTargetTriple((*tm)->getTargetTriple().str());
    ModuleEmitter me(cm, funcs, metered, context, mod);
    me.fns.assign(funcs.size(), nullptr);
    me.declare_on_use = &compilable;  // functions of other partitions: declared when called
    me.segment_limits = true;
    me.calls = &calls;
    std::size_t last = part.first;
    std::uint64_t frame_slots = 1;  // this partition's largest frame, either variant's
    for (std::size_t i = part.first; i < part.end; ++i) {
      if (compilable[i] == 0) continue;
      frame_slots = std::max<std::uint64_t>(
          {frame_slots, funcs[i].frame_slots, cm.code(static_cast<u32>(i), false).frame_slots});
      me.define(static_cast<u32>(i),
                llvm::Function::Create(me.t.wasm_fn, llvm::Function::ExternalLinkage, function_name(i), mod));
      me.fns[i]->setDSOLocal(true);  // called directly (PC-relative) inside the partition
      last = i;
    }
    std::size_t emitted = 0;
    for (std::size_t i = part.first; i < part.end; ++i) {
      if (compilable[i] == 0) continue;
      if (!aot.check(i, "emitting the IR of", emitted++ % kMemoryCheckEvery == 0)) break;
      emit_function(me, static_cast<u32>(i), scans[i]);
      if (me.needs_body_adapter(static_cast<u32>(i))) emit_body_adapter(me, static_cast<u32>(i));
    }
    if (aot.stopped()) break;
    auto* slots = new llvm::GlobalVariable(mod, me.t.i64, true, llvm::GlobalValue::InternalLinkage,
                                           llvm::ConstantInt::get(me.t.i64, frame_slots), "sprawling_frame_slots");
    slots->setSection(kFrameSlotsSection);
    llvm::appendToUsed(mod, {slots});
    std::string verify;
    llvm::raw_string_ostream vs(verify);
    if (llvm::verifyModule(mod, &vs)) {
      aot.stop("the compiled tier generated invalid IR: " + verify);
      break;
    }
    if (!aot.check(last, "emitting the IR of", true)) break;
    optimize(mod, **tm, false, kAheadOfTimeFactor);
    dump_ir(mod, "partition_" + std::to_string(part.first));
    if (!aot.check(last, "optimizing the partition ending with", true)) break;
    llvm::orc::SimpleCompiler compiler(**tm);
    auto object = compiler(mod);
    if (!object) {
      aot.stop("LLVM: " + error_text(object.takeError()));
      break;
    }
    results[p].assign((*object)->getBufferStart(), (*object)->getBufferEnd());
    if (!aot.check(last, "generating the code of the partition ending with", true)) break;
    aot.done(part.end - part.first, scans.size());
  }
  cpu.fetch_add(thread_cpu_seconds() - cpu0, std::memory_order_relaxed);
}

}  // namespace

std::expected<ObjectImage, std::string> compile_object(const CompiledModule::Impl& cm, bool metered,
                                                       const CompileOptions& options) {
  const double cpu0 = thread_cpu_seconds();
  AheadOfTime aot(cm, options);
  const std::size_t nfuncs = cm.module.code.size();
  auto jtmb = host_target_builder();
  if (!jtmb) return std::unexpected(error_text(jtmb.takeError()));
  // Every function translated to internal code and scanned (the compile budget) first, here:
  // which functions get machine code is known before any partition calls another.
  const FunctionCode funcs = cm.all_code(metered);
  std::vector<Scan> scans;
  scans.reserve(nfuncs);
  std::vector<char> compilable(nfuncs, 0);
  for (std::size_t i = 0; i < nfuncs; ++i) {
    if (!aot.check(i, "translating", i % kMemoryCheckEvery == 0)) return std::unexpected(aot.error());
    scans.push_back(scan(funcs[i], metered, cm.module, i));
    compilable[i] = scans.back().reason.empty() ? 1 : 0;
  }
  const double seconds_ir = aot.seconds();
  const double cpu_scans = thread_cpu_seconds() - cpu0;
  const std::vector<Partition> parts = partitions_of(cm, scans);
  const std::vector<unsigned char> calls = module_calls(cm.module, funcs, scans);
  const unsigned threads =
      static_cast<unsigned>(std::min<std::size_t>(compile_threads(options.jobs), std::max<std::size_t>(1, parts.size())));
  std::vector<std::vector<std::uint8_t>> results(parts.size());
  std::atomic<std::size_t> next{0};
  std::atomic<double> cpu{0};
  {
    std::vector<std::thread> helpers;
    for (unsigned k = 1; k < threads; ++k) {
      helpers.emplace_back(compile_partitions, std::cref(cm), metered, std::cref(scans), std::cref(compilable), std::cref(calls),
                           std::cref(parts), std::ref(next), *jtmb, std::ref(aot), std::ref(results), std::ref(cpu));
    }
    compile_partitions(cm, metered, scans, compilable, calls, parts, next, *jtmb, aot, results, cpu);
    for (std::thread& t : helpers) t.join();
  }
  if (aot.stopped()) return std::unexpected(aot.error());
  ObjectImage image;
  image.reasons.resize(nfuncs);
  for (std::size_t i = 0; i < nfuncs; ++i) image.reasons[i] = std::move(scans[i].reason);
  for (std::vector<std::uint8_t>& object : results) {
    if (!object.empty()) image.objects.push_back(std::move(object));
  }
  image.wall_seconds = aot.seconds();
  image.cpu_seconds = cpu_scans + cpu.load();  // every thread's compile_partitions, and the scans
  image.threads = threads;
  image.peak_heap_growth = aot.peak();
  if (std::getenv("SPRAWLING_JIT_STATS") != nullptr) {
    std::fprintf(stderr,
                 "sprawl jit: whole module: %zu partitions on %u threads; translating and scanning %.3f s, all %.3f s "
                 "(%.3f s CPU), heap growth at most %s\n",
                 parts.size(), threads, seconds_ir, image.wall_seconds, image.cpu_seconds,
                 describe_bytes(image.peak_heap_growth).c_str());
    ModuleCode::print_over_budget(image.reasons);
  }
  return image;
}

std::shared_ptr<ModuleCode> load_object(const ObjectView& image) {
  auto out = std::make_shared<ModuleCode>(image.reasons.size());
  out->reasons = image.reasons;
  out->from_cache = true;
  const auto t0 = std::chrono::steady_clock::now();
  auto jtmb = host_target_builder();
  if (!jtmb) {
    out->error = error_text(jtmb.takeError());
    return out;
  }
  auto lljit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
  if (!lljit) {
    out->error = error_text(lljit.takeError());
    return out;
  }
  if (auto e = define_helpers(**lljit)) {
    out->error = error_text(std::move(e));
    return out;
  }
  // Not a copy when the bytes are aligned as LLVM's ELF reader requires ("Insufficient
  // alignment" otherwise; where the object starts in the entry depends on the key's length):
  // publish_entries below links the object (JITLink copies its sections into code memory)
  // before this returns, and nothing reads the buffer after that. The frame bounds
  // (ModuleCode::segment_slots and segment_bytes) are the engine's to read (load_cached).
  for (const std::span<const std::uint8_t> object : image.objects) {
    const llvm::StringRef bytes(reinterpret_cast<const char*>(object.data()), object.size());
    constexpr std::uintptr_t kObjectAlign = 16;
    auto buffer = reinterpret_cast<std::uintptr_t>(bytes.data()) % kObjectAlign == 0
                      ? llvm::MemoryBuffer::getMemBuffer(bytes, "sprawling-code-cache", /*RequiresNullTerminator=*/false)
                      : llvm::MemoryBuffer::getMemBufferCopy(bytes, "sprawling-code-cache");
    if (auto e = (*lljit)->addObjectFile(std::move(buffer))) {
      out->error = error_text(std::move(e));
      return out;
    }
  }
  publish_entries(**lljit, *out);  // the first lookup links every object
  // A failed link may leave the object unlinked in the JIT: it goes with it, before the bytes do.
  if (!out->error.empty()) return out;
  publish_bodies(**lljit, *out);
  if (!out->error.empty()) return out;
  out->seconds_codegen = seconds_since(t0);
  auto impl = std::make_unique<ModuleCode::Impl>();
  impl->lljit = std::move(*lljit);
  out->impl = std::move(impl);
  return out;
}

JobLimits* set_job_limits(JobLimits* limits) {
  JobLimits* outer = job_limits;
  job_limits = limits;
  return outer;
}

std::expected<TargetId, std::string> host_target() {
  auto jtmb = host_target_builder();
  if (!jtmb) return std::unexpected(error_text(jtmb.takeError()));
  return TargetId{jtmb->getTargetTriple().str(), jtmb->getCPU(), jtmb->getFeatures().getString()};
}

std::string llvm_version() {
  unsigned major = 0;
  unsigned minor = 0;
  unsigned patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace jit

}  // namespace sprawling::wasm
