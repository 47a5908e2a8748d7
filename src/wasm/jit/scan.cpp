// The compiled tier's first pass and its compile budget (scan.hpp).
#include "wasm/jit/scan.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace sprawling::wasm::jit {

namespace {

// SPRAWLING_JIT_COMPILE_BUDGET=off lifts the budget (to measure what it bounds); anything else
// keeps it.
bool compile_budget_on() {
  static const bool on = [] {
    const char* v = std::getenv("SPRAWLING_JIT_COMPILE_BUDGET");
    return v == nullptr || std::string_view(v) != "off";
  }();
  return on;
}

std::string over_budget(std::string_view what, std::size_t figure, std::size_t limit) {
  return std::string(what) + " " + std::to_string(figure) + " over the compile budget's " + std::to_string(limit);
}

// Spans of code words between each branch and its target, open at the deepest point: what
// structured nesting leaves in the internal code (a block nobody branches out of costs nothing
// and leaves no span). One difference array over the words: linear in code and targets.
template <class Targets>
u32 nesting_depth(std::size_t words, const Targets& spans) {
  std::vector<std::int32_t> delta(words + 1, 0);
  for (const auto& [from, to] : spans) {
    const u32 lo = std::min(from, to);
    const u32 hi = std::max(from, to);
    if (hi >= words) continue;  // broken code: scan() reports it
    ++delta[lo];
    --delta[hi + 1];
  }
  std::int64_t open = 0;
  std::int64_t deepest = 0;
  for (std::size_t w = 0; w < words; ++w) {
    open += delta[w];
    deepest = std::max(deepest, open);
  }
  return static_cast<u32>(deepest);
}

}  // namespace

Scan scan(const CompiledFunc& f, bool metered, const Module& module, std::size_t defined) {
  Scan s;
  auto fail = [&](std::string why) {
    s.reason = std::move(why);
    s.instrs.clear();
    s.targets.clear();
    return s;
  };
  // The compile budget's facts known before decoding.
  const FunctionBody& body = module.code[defined];
  const bool budget = compile_budget_on();
  CompileFacts& facts = s.facts;
  facts.code_bytes = body.code_size;
  facts.locals = body.locals.size();
  facts.signature = std::size_t{f.num_params} + f.num_results;
  facts.frame_slots = f.frame_slots;
  if (budget && facts.code_bytes > kCompileBudget.code_bytes)
    return fail(over_budget("wasm code bytes", facts.code_bytes, kCompileBudget.code_bytes));
  if (budget && facts.locals > kCompileBudget.locals)
    return fail(over_budget("locals", facts.locals, kCompileBudget.locals));
  if (budget && facts.signature > kCompileBudget.signature)
    return fail(over_budget("parameters and results", facts.signature, kCompileBudget.signature));
  if (budget && facts.frame_slots > kCompileBudget.frame_slots)
    return fail(over_budget("frame slots", facts.frame_slots, kCompileBudget.frame_slots));
  auto decoded = decode_instructions(f.code, metered);
  if (!decoded) return fail(std::move(decoded.error()));
  std::vector<Instr>& all = *decoded;
  std::size_t first = 0;
  if (metered) {
    // The caller made the entry check (FuncInst::entry_fuel): the body starts after it.
    if (all.empty() || all[0].op != Op::FuelCheck || layout::FuelCheck::read(&f.code[all[0].at]).visible != 1)
      return fail("the metered code does not start with the entry check");
    first = 1;
  }
  const u32* code = f.code.data();
  const auto n = static_cast<u32>(f.code.size());
  std::vector<bool> starts(n, false);
  std::size_t spills = 0;  // instructions that may spill the frame (CompileFacts::spilled_slots)
  for (std::size_t i = first; i < all.size(); ++i) {
    const Instr& in = all[i];
    if (!handled(in.op))
      return fail("uses " + std::string(info(in.op).name) + ", which the compiled tier does not handle yet");
    starts[in.at] = true;
    facts.simd_ops += info(in.op).family == OpFamily::Simd ? 1 : 0;
    facts.gc_ops += info(in.op).family == OpFamily::Gc ? 1 : 0;
    if (module.uses_gc) {
      const OpFamily family = info(in.op).family;
      spills += family == OpFamily::Call || family == OpFamily::TypedRef || family == OpFamily::Exception ||
                family == OpFamily::Gc;
    }
    s.instrs.push_back(in);
    for_each_target(in.op, code, in.at, [&](u32 t) { s.targets.push_back(t); });
  }
  if (budget && facts.simd_ops > kCompileBudget.simd_ops)
    return fail(over_budget("v128 instructions", facts.simd_ops, kCompileBudget.simd_ops));
  if (budget && facts.gc_ops > kCompileBudget.gc_ops)
    return fail(over_budget("GC instructions", facts.gc_ops, kCompileBudget.gc_ops));
  facts.spilled_slots = spills * facts.frame_slots;
  if (budget && facts.spilled_slots > kCompileBudget.spilled_slots)
    return fail(over_budget("frame slots spilled for the collector (" + std::to_string(spills) + " * " +
                                std::to_string(facts.frame_slots) + ")",
                            facts.spilled_slots, kCompileBudget.spilled_slots));
  for (u32 t : s.targets)
    if (t >= n || !starts[t]) return fail("a branch into the middle of an instruction");
  // Exception handling: a catch lands at its clause's target (find_handler), which the emitter
  // makes a block of its own, so it must start an instruction too; and a region covers whole
  // instructions (an exception leaving a call is caught by the regions around the call's word).
  for (const CatchClause& c : f.clauses)
    if (c.target >= n || !starts[c.target]) return fail("a catch target in the middle of an instruction");
  for (const HandlerRegion& r : f.regions)
    if (r.begin > r.end || r.end > n || (r.begin < n && !starts[r.begin]) || (r.end < n && !starts[r.end]) ||
        r.first_clause + std::size_t{r.clause_count} > f.clauses.size())
      return fail("a handler region that does not cover whole instructions");
  {
    // Nested or disjoint (structured blocks): the emitter's sweep keeps the open ones as a stack.
    std::vector<std::pair<u32, u32>> spans;
    for (const HandlerRegion& r : f.regions) spans.emplace_back(r.begin, r.end);
    std::ranges::sort(spans, [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : x.second > y.second;
    });
    std::vector<u32> ends;
    for (const auto& [begin, end] : spans) {
      while (!ends.empty() && ends.back() <= begin) ends.pop_back();
      if (!ends.empty() && end > ends.back()) return fail("handler regions that overlap without nesting");
      ends.push_back(end);
    }
  }
  // Another memory's access is MemAt, a plain scalar or a v128 load or store of the bytes it
  // checked, then MemRestore, with no branch into it: the emitter addresses the access from
  // MemAt's pointer.
  for (std::size_t i = 0; i < s.instrs.size(); ++i) {
    if (s.instrs[i].op != Op::MemAt) continue;
    const bool shaped = i + 2 < s.instrs.size() && redirectable_access(s.instrs[i + 1].op) &&
                        s.instrs[i + 2].op == Op::MemRestore &&
                        std::ranges::none_of(s.targets, [&](u32 t) {
                          return t == s.instrs[i + 1].at || t == s.instrs[i + 2].at;
                        });
    if (!shaped) return fail("an access to another memory not shaped as MemAt, a load or store, MemRestore");
  }
  // The interpreter's metered JUMP skips the loop header's FuelCheck [cost 0-visible] when the
  // balance is positive; that equals running the check only if the target is one.
  if (metered) {
    for (const Instr& in : s.instrs) {
      bool bad = false;
      for_each_target(in.op, code, in.at, [&](u32 t) {
        if (t >= in.at || in.op == Op::BrTable) return;  // forward; br_table's jump runs the check as is
        bad = bad || op_of_word(code[t], true) != Op::FuelCheck || layout::FuelCheck::read(code + t).visible != 0;
      });
      if (bad) return fail("a backward branch to no loop header");
    }
  }
  // The compile budget's facts of the decoded code.
  facts.table_entries = s.targets.size();
  if (budget && facts.table_entries > kCompileBudget.table_entries)
    return fail(over_budget("branch targets counting every br_table entry", facts.table_entries,
                            kCompileBudget.table_entries));
  // One span per distinct target of an instruction (a br_table's entries repeat their labels).
  std::vector<std::pair<u32, u32>> spans;
  spans.reserve(s.targets.size());
  std::vector<u32> mine;
  for (const Instr& in : s.instrs) {
    mine.clear();
    for_each_target(in.op, code, in.at, [&](u32 t) { mine.push_back(t); });
    std::ranges::sort(mine);
    const auto [last, end] = std::ranges::unique(mine);
    mine.erase(last, end);
    for (u32 t : mine) spans.emplace_back(in.at, t);
  }
  facts.branch_targets = spans.size();
  if (budget && facts.branch_targets > kCompileBudget.branch_targets)
    return fail(over_budget("branch targets", facts.branch_targets, kCompileBudget.branch_targets));
  facts.nesting = nesting_depth(n, spans);
  if (budget && facts.nesting > kCompileBudget.nesting)
    return fail(over_budget("nesting depth", facts.nesting, kCompileBudget.nesting));
  facts.slots_by_nesting = facts.frame_slots * facts.nesting;
  if (budget && facts.slots_by_nesting > kCompileBudget.slots_by_nesting)
    return fail(over_budget("frame slots * nesting depth (" + std::to_string(facts.frame_slots) + " * " +
                                std::to_string(facts.nesting) + ")",
                            facts.slots_by_nesting, kCompileBudget.slots_by_nesting));
  return s;
}

}  // namespace sprawling::wasm::jit
