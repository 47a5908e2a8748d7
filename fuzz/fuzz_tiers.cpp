// Fuzz target (f): the compiled tier against the interpreter (the reference). Each module (a
// generated one, or a "\0asm" input run as it is) runs its exports under both tiers (the compiled
// tier's code made function by function at first calls, and the whole-module code a code cache
// holds), metered, unmetered and at a sweep of fuel budgets, and every call must agree exactly: results, trap kind,
// trap function index and byte offset, and the fuel consumed (so an out-of-fuel stop too). The one
// exception is the store's heap limit, reached where conservative roots let it be
// (ends_at_a_heap_limit).
#include "exec_harness.hpp"
#include "module_gen.hpp"
#include "wasm/icode/internal_verify.hpp"
#include "wasm/jit/jit.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace sprawling;

// NaN classes (the spec's words): canonical (only the quiet bit in the payload), arithmetic
// (quiet bit and more), signalling (quiet bit clear). The sign of a NaN is not part of its class.
enum class NanClass : std::uint8_t { NotNan, Canonical, Arithmetic, Signalling };

NanClass nan_class(const wasm::Value& v) {
  if (v.type == wasm::ValType::F32) {
    const auto bits = static_cast<std::uint32_t>(v.bits);
    if ((bits & 0x7f800000u) != 0x7f800000u || (bits & 0x007fffffu) == 0) return NanClass::NotNan;
    const std::uint32_t payload = bits & 0x007fffffu;
    return payload == 0x00400000u ? NanClass::Canonical : (payload & 0x00400000u) ? NanClass::Arithmetic
                                                                                  : NanClass::Signalling;
  }
  if (v.type == wasm::ValType::F64) {
    constexpr std::uint64_t exp = 0x7ff0000000000000ULL, mantissa = 0x000fffffffffffffULL, quiet = 0x0008000000000000ULL;
    if ((v.bits & exp) != exp || (v.bits & mantissa) == 0) return NanClass::NotNan;
    const std::uint64_t payload = v.bits & mantissa;
    return payload == quiet ? NanClass::Canonical : (payload & quiet) ? NanClass::Arithmetic : NanClass::Signalling;
  }
  return NanClass::NotNan;
}

// Generated modules make every NaN deterministic (GenOptions::canonical_nan_pairs), so their
// values are compared bit for bit. Modules run as they are may add two NaNs, where each tier may
// return either operand's payload (both are arithmetic NaNs the spec allows): their float results
// are compared by NaN class when both are NaNs.
bool same_value(const wasm::Value& a, const wasm::Value& b, bool exact) {
  if (a.type != b.type) return false;
  if (a.bits == b.bits) return true;
  if (exact) return false;
  const NanClass ca = nan_class(a);
  return ca != NanClass::NotNan && ca == nan_class(b);
}

bool same_call(const fuzz::CallRecord& a, const fuzz::CallRecord& b, bool exact) {
  return a.name == b.name && a.trap == b.trap && a.trap_func == b.trap_func && a.trap_offset == b.trap_offset &&
         a.fuel_consumed == b.fuel_consumed && a.results.size() == b.results.size() &&
         std::equal(a.results.begin(), a.results.end(), b.results.begin(),
                    [exact](const wasm::Value& x, const wasm::Value& y) { return same_value(x, y, exact); });
}

// The store's limits on GC objects and exceptions are reached at an allocation that depends on
// what a collection keeps, and roots are conservative in both tiers (the interpreter's value stack
// and compiled frames' native stack are scanned word by word, so a stale word keeps garbage): the
// two tiers may reach the limit at different allocations, hence with different fuel. A tier
// that keeps more reaches it sooner, and under a budget between the two points only that tier
// reaches it (the other runs out of fuel further on). So a call that ends at the limit on one tier
// must end at it on the other too, or have got at least as far there before ending otherwise:
// consumed at least as much fuel, or run out of it (an out-of-fuel stop counts the budget, while
// the limit may be reached in the segment that overdrew it); the rest of its record, and the calls
// after it, which run on the state it left, are not compared.
bool ends_at_a_heap_limit(const fuzz::CallRecord& r) {
  return r.trap == wasm::TrapKind::GcHeapLimit || r.trap == wasm::TrapKind::ExceptionLimit;
}

// Whether two runs of the exports agree: call by call exactly, up to a call that reached the
// store's heap limits (see ends_at_a_heap_limit).
bool same_run(const std::vector<fuzz::CallRecord>& a, const std::vector<fuzz::CallRecord>& b, bool exact) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const bool a_limit = ends_at_a_heap_limit(a[i]);
    const bool b_limit = ends_at_a_heap_limit(b[i]);
    if (a_limit && b_limit) return a[i].name == b[i].name;
    const auto as_far = [](const fuzz::CallRecord& limit, const fuzz::CallRecord& other) {
      return other.fuel_consumed >= limit.fuel_consumed || other.trap == wasm::TrapKind::OutOfFuel;
    };
    if (a_limit) return a[i].name == b[i].name && as_far(a[i], b[i]);
    if (b_limit) return a[i].name == b[i].name && as_far(b[i], a[i]);
    if (!same_call(a[i], b[i], exact)) return false;
  }
  return a.size() == b.size();
}

std::string call_line(const fuzz::CallRecord& r) {
  std::string text = r.name + "() =>";
  if (r.trap) {
    text += " trap: " + std::string(wasm::trap_message(*r.trap));
    char where[64];
    std::snprintf(where, sizeof where, " in function %d at 0x%zx", r.trap_func ? static_cast<int>(*r.trap_func) : -1,
                  r.trap_offset);
    text += where;
  }
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    char bits[32];
    std::snprintf(bits, sizeof bits, " (0x%" PRIx64 ")", r.results[i].bits);
    text += (i == 0 ? " " : ", ") + fuzz::value_text(r.results[i]) + bits;
  }
  return text + "  [fuel " + std::to_string(r.fuel_consumed) + "]";
}

// How much was compared (printed at exit).
struct Tally {
  std::size_t modules = 0, raw_modules = 0, calls = 0, runs = 0, out_of_fuel = 0, not_instantiable = 0;
  ~Tally() {
    std::fprintf(stderr,
                 "tiers: %zu modules compared (%zu of them inputs run as they are), %zu calls in %zu paired runs "
                 "(interpreter and compiled tier), %zu of those calls out of fuel; %zu modules not instantiable\n",
                 modules, raw_modules, calls, runs, out_of_fuel, not_instantiable);
  }
};
Tally tally;

std::uint64_t fnv1a(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ULL;
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sprawling::wasm::set_code_verification(true);  // every translation is checked (internal_verify.hpp)
  // Every function runs compiled (this target insists on it): SIMD (NaN lanes are canonical in
  // both tiers), tail calls, second memories, memory64, table64, exception handling, typed
  // function references and GC included.
  const fuzz::GenOptions options{.deterministic_only = false,
                                 .canonical_nan_pairs = true,
                                 .tail_calls = true,
                                 .simd = true,
                                 .multi_memory = true,
                                 .memory64 = true,
                                 .exceptions = true,
                                 .gc = true,
                                 .strided_loops = true};
  auto input = fuzz::module_of_input(std::span<const std::uint8_t>(data, size), options, "tiers");
  if (!input) return 0;
  const bool is_module = input->as_is;
  const auto& compiled = input->compiled;
  const auto& binary = input->binary;
  const auto fresh_args = fuzz::args_from_tail(data, size);
  // The store's account is bounded too (a table.grow that skipped it was a compiled-tier bug).
  const fuzz::ExecLimits metered{.fuel_per_call = fuzz::kFuelPerCall,
                                 .max_memory_bytes = is_module ? std::uint64_t{64} << 20 : fuzz::kMemoryCapBytes,
                                 .max_table_elements = 1'000'000,
                                 .max_store_bytes = std::uint64_t{1} << 20};
  auto finding = [&](const char* what, const std::optional<std::vector<fuzz::CallRecord>>& interp,
                     const std::optional<std::vector<fuzz::CallRecord>>& jit) {
    std::fprintf(stderr, "DIFFERENCE between the tiers (%s)\ninterpreter:\n", what);
    if (!interp) std::fprintf(stderr, "  (did not instantiate)\n");
    else
      for (const auto& r : *interp) std::fprintf(stderr, "  %s\n", call_line(r).c_str());
    std::fprintf(stderr, "compiled tier:\n");
    if (!jit) std::fprintf(stderr, "  (did not instantiate)\n");
    else
      for (const auto& r : *jit) std::fprintf(stderr, "  %s\n", call_line(r).c_str());
    fuzz::keep_module_and_abort("tiers", binary);
  };
  // The module's whole-module code too: compiled ahead of time into a code cache, as `sprawl
  // compile` makes it (its native calls test one limit, Ctx::fr_lim, that the runtime sets). A
  // module object of its own, since a module keeps the code it first ran with; a generated
  // module must compile whole, as on the lazy path below.
  std::shared_ptr<const wasm::CompiledModule> whole;
  auto whole_cache = std::make_shared<wasm::MemoryCodeCache>();
  if (auto m = wasm::compile(binary)) {
    bool all = true;
    std::string why;
    for (const bool variant : {true, false}) {
      const auto report = wasm::precompile(**m, variant, *whole_cache);
      if (!report) why = report.error();
      all = all && report && report->compiled == report->functions;
    }
    if (all) {
      whole = std::move(*m);
    } else if (!is_module) {
      std::fprintf(stderr, "the module did not compile whole ahead of time%s%s\n", why.empty() ? "" : ": ",
                   why.c_str());
      fuzz::keep_module_and_abort("tiers", binary);
    }
  }
  // Runs the exports under `limits` on both tiers (the compiled tier compiling each function at
  // its first call, then from the whole-module code) and insists they agree; the interpreter's
  // records, or nothing when none could instantiate.
  auto compare = [&](fuzz::ExecLimits limits, const char* what) -> std::optional<std::vector<fuzz::CallRecord>> {
    limits.tier = wasm::Tier::Interpret;
    auto interp = fuzz::run_exports(compiled, limits, fresh_args());
    limits.tier = wasm::Tier::Compile;
    auto jit = fuzz::run_exports(compiled, limits, fresh_args());
    bool same = interp.has_value() == jit.has_value() && (!interp || same_run(*interp, *jit, !is_module));
    if (!same) finding(what, interp, jit);
    if (whole != nullptr) {
      limits.code_cache = whole_cache;
      auto aot = fuzz::run_exports(whole, limits, fresh_args());
      same = interp.has_value() == aot.has_value() && (!interp || same_run(*interp, *aot, !is_module));
      if (!same) finding((std::string(what) + "; whole-module code").c_str(), interp, aot);
    }
    if (interp) {
      ++tally.runs;
      tally.calls += interp->size();
      tally.out_of_fuel += static_cast<std::size_t>(std::count_if(
          interp->begin(), interp->end(), [](const auto& r) { return r.trap == wasm::TrapKind::OutOfFuel; }));
    }
    return interp;
  };

  const auto first = compare(metered, "metered, 200,000 fuel a call");
  if (!first) {
    ++tally.not_instantiable;
    return 0;
  }
  ++tally.modules;
  tally.raw_modules += is_module ? 1 : 0;
  // Every function of a generated module must really have run as machine code: a function the
  // compiled tier leaves to the interpreter would make the comparison above say nothing about it.
  if (!is_module) {
    const auto& code = compiled->impl().jit(wasm::kMetered);
    if (!code.error.empty() || code.compiled != code.entries.size()) {
      std::fprintf(stderr, "the compiled tier compiled %zu of %zu functions: %s\n", code.compiled,
                   code.entries.size(), !code.error.empty() ? code.error.c_str() : "");
      for (std::size_t i = 0; i < code.reasons.size(); ++i)
        if (!code.reasons[i].empty()) std::fprintf(stderr, "  function %zu: %s\n", i, code.reasons[i].c_str());
      fuzz::keep_module_and_abort("tiers", binary);
    }
  }
  // Unmetered (the code variant without fuel operations), unless a call ran out of fuel: without a
  // budget it could run for very long.
  if (!fuzz::any_out_of_fuel(*first)) {
    fuzz::ExecLimits unmetered = metered;
    unmetered.fuel_per_call = std::nullopt;
    compare(unmetered, "unmetered");
  }
  // Budgets around and below what each call consumed: every out-of-fuel stop must come at the
  // same instruction with exactly the budget consumed, and the calls after it (on the state it
  // left) must agree too. The last sweep's budgets depend on the input, so the fuzzer moves them.
  const std::uint64_t h = fnv1a(data, size);
  for (int sweep = 0; sweep < 5; ++sweep) {
    fuzz::ExecLimits budgets = metered;
    for (std::size_t i = 0; i < first->size(); ++i) {
      const std::uint64_t c = std::max<std::uint64_t>((*first)[i].fuel_consumed, 1);
      const std::uint64_t pick = (h >> (i % 48)) + i * 7919;
      switch (sweep) {
        case 0: budgets.fuel_by_call.push_back(c); break;
        case 1: budgets.fuel_by_call.push_back(std::max<std::uint64_t>(c - 1, 1)); break;
        case 2: budgets.fuel_by_call.push_back(std::max<std::uint64_t>(c / 2, 1)); break;
        case 3: budgets.fuel_by_call.push_back(1 + pick % 64); break;
        default: budgets.fuel_by_call.push_back(1 + pick % c); break;
      }
    }
    compare(budgets, sweep == 0 ? "budget = consumed" : sweep == 1 ? "budget = consumed - 1"
                     : sweep == 2 ? "budget = consumed / 2" : sweep == 3 ? "budget of 1 to 64" : "budget below consumed");
  }
  return 0;
}
