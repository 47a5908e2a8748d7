// Shared by the run and diff fuzz targets: instantiate a compiled module without imports and call
// each exported function under a fresh fuel budget, recording a printable result per call in the
// form wabt's `wasm-interp --run-all-exports` prints (so the diff target can compare lines).
#pragma once

#include "module_gen.hpp"
#include "wasm/runtime/runtime.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sprawling::fuzz {

struct CallRecord {
  std::string name;
  bool has_params = false;
  std::optional<wasm::TrapKind> trap;  // empty: returned
  std::vector<wasm::Value> results;
  std::uint64_t fuel_consumed = 0;
  // Where the trap happened (Trap::func_index, Trap::offset): the tiers target compares them.
  std::optional<std::uint32_t> trap_func;
  std::size_t trap_offset = 0;
};

// The exit status of a harness asked for the compiled tier that cannot load it (a build whose
// plugin came from other engine sources, say): not a finding, so not an abort; the reason is on
// stderr, and tests/differential/differential.py stops on it instead of filing each module.
inline constexpr int kNoCompiledTierExit = 3;

struct ExecLimits {
  std::optional<std::uint64_t> fuel_per_call;  // nullopt: unmetered (the engine's other code variant)
  std::uint64_t max_memory_bytes;
  std::uint32_t max_table_elements;
  // When not empty: the budget of call i (the i-th function export, in export order) instead.
  std::vector<std::uint64_t> fuel_by_call = {};
  // StoreLimits::max_store_bytes (the one account of host bytes: memories, tables, code, ...).
  std::uint64_t max_store_bytes = UINT64_MAX;
  // Which tier runs the calls (Store::set_tier; Compile only where compiled_tier_available()).
  wasm::Tier tier = wasm::Tier::Interpret;
  // Tier::Compile: the code cache the store reads (whole-module code, compiled ahead of time
  // into it), or none (each function compiled at its first call).
  std::shared_ptr<wasm::CodeCacheStorage> code_cache = nullptr;
};

using ArgsFor = std::function<std::vector<wasm::Value>(const wasm::FuncType&)>;

// nullopt when the module cannot be instantiated (imports, link limits, a trapping start).
// `args_for` supplies the arguments of functions with parameters (nullptr: they are skipped).
std::optional<std::vector<CallRecord>> run_exports(
    const std::shared_ptr<const wasm::CompiledModule>& compiled, const ExecLimits& limits,
    const ArgsFor& args_for);

// The engine's promises about its own two code variants and its fuel figure, checked by running
// the calls of `first` (made under `limits`) again on fresh instances:
// 1. unmetered (no budget: the code variant without fuel operations): the same results and traps;
// 2. each call's budget set to the fuel it consumed + 1: the same results, traps and consumed
//    figures (a finished or trapped run's figure is exact, and every check it passed saw less).
// `fresh_args` gives an `args_for` that replays the arguments of the first run (or nullptr).
// Returns a report of the first disagreement; nothing when all agree or when a call ran out of
// fuel (then an unmetered rerun could run for long, and there is nothing exact to compare).
std::optional<std::string> check_reruns(const std::shared_ptr<const wasm::CompiledModule>& compiled,
                                        const std::vector<CallRecord>& first, const ExecLimits& limits,
                                        const std::function<ArgsFor()>& fresh_args);

// The module an input stands for: an input starting with "\0asm" as it is, any other input through
// the generator (module_gen.hpp). Nothing when a module given as it is does not compile; a
// generated module that does not compile is a finding (it is kept, then abort).
struct InputModule {
  bool as_is = false;
  std::vector<std::uint8_t> binary;
  std::shared_ptr<const wasm::CompiledModule> compiled;
};
std::optional<InputModule> module_of_input(std::span<const std::uint8_t> input, const GenOptions& options,
                                           const char* target);

// Arguments read from the input's second half (so the fuzzer steers them too), a fresh reader
// for each run of the exports so that every run replays the same ones.
std::function<ArgsFor()> args_from_tail(const std::uint8_t* data, std::size_t size);

// True when some call ran out of fuel (then check_reruns has nothing to check).
[[nodiscard]] bool any_out_of_fuel(const std::vector<CallRecord>& records);

// Writes `bytes` to `path`; false if any step failed.
bool write_file(const std::string& path, std::span<const std::uint8_t> bytes);

// Triage: writes the module a generator input stands for to $SPRAWLING_FUZZ_KEEP_MODULE, when set
// (fuzz/README.md, "Reproduce a finding").
void keep_module_if_asked(std::span<const std::uint8_t> binary);
// A finding: writes the module to /tmp/sprawl-fuzz-TARGET-module-PID.wasm, says so, and aborts.
[[noreturn]] void keep_module_and_abort(const char* target, std::span<const std::uint8_t> binary);

// "i32:4294967291", "f32:nan", "f64:-0.100000" — wasm-interp's spelling of a value.
std::string value_text(const wasm::Value& v);

}  // namespace sprawling::fuzz
