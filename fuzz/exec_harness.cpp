// Calls a module's exports under fuel (exec_harness.hpp) and checks the engine's own promises
// on every call: results match the function type, a trap has a kind, fuel stays within budget.
#include "exec_harness.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <tuple>

#include <unistd.h>

namespace sprawling::fuzz {

namespace {
constexpr std::uint32_t kMaxCallDepth = 20'000;
}  // namespace

std::string value_text(const wasm::Value& v) {
  char buffer[512];
  if (v.type == wasm::ValType::I32) {
    std::snprintf(buffer, sizeof buffer, "i32:%" PRIu32, static_cast<std::uint32_t>(v.bits));
  } else if (v.type == wasm::ValType::I64) {
    std::snprintf(buffer, sizeof buffer, "i64:%" PRIu64, v.bits);
  } else if (v.type == wasm::ValType::F32) {
    float f;
    const auto bits = static_cast<std::uint32_t>(v.bits);
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) return "f32:nan";
    std::snprintf(buffer, sizeof buffer, "f32:%f", static_cast<double>(f));
  } else if (v.type == wasm::ValType::F64) {
    double d;
    std::memcpy(&d, &v.bits, 8);
    if (std::isnan(d)) return "f64:nan";
    std::snprintf(buffer, sizeof buffer, "f64:%f", d);
  } else {
    std::snprintf(buffer, sizeof buffer, "ref:%" PRIu64, v.bits);
  }
  return buffer;
}

std::optional<std::vector<CallRecord>> run_exports(
    const std::shared_ptr<const wasm::CompiledModule>& compiled, const ExecLimits& limits,
    const ArgsFor& args_for) {
  const wasm::Module& module = compiled->module();
  if (!module.imports.empty()) return std::nullopt;
  wasm::Store store(wasm::StoreLimits{.max_memory_bytes = limits.max_memory_bytes,
                                      .max_table_elements = limits.max_table_elements,
                                      .max_call_depth = kMaxCallDepth,
                                      .max_value_stack_slots = 4u << 20,
                                      .max_store_bytes = limits.max_store_bytes});
  auto budget_for = [&](std::size_t call) -> std::optional<std::uint64_t> {
    return call < limits.fuel_by_call.size() ? std::optional(limits.fuel_by_call[call]) : limits.fuel_per_call;
  };
  if (!store.set_tier(limits.tier)) {
    std::fprintf(stderr, "the compiled tier cannot run here: %s\n", wasm::compiled_tier_unavailable_reason().c_str());
    std::_Exit(kNoCompiledTierExit);
  }
  if (limits.code_cache != nullptr) store.set_code_cache(limits.code_cache);
  store.set_budget(wasm::ExecutionBudget{.fuel = limits.fuel_per_call, .deadline = std::nullopt});
  auto instance = store.instantiate(compiled, {});
  if (!instance) {
    if (instance.error().kind == wasm::InstantiationError::Kind::Trap &&
        (!instance.error().trap || instance.error().trap->kind == wasm::TrapKind::None)) {
      std::fprintf(stderr, "instantiation trapped without a trap kind: %s\n", instance.error().message.c_str());
      std::abort();
    }
    return std::nullopt;
  }
  std::uint64_t max_body_bytes = 0;
  for (const auto& body : module.code) max_body_bytes = std::max<std::uint64_t>(max_body_bytes, body.code_size);
  std::vector<CallRecord> records;
  for (const auto& e : module.exports) {
    if (e.kind != wasm::ExternKind::Func) continue;
    auto found = (*instance)->find_export(e.name);
    auto* func = found ? std::get_if<wasm::FuncInst*>(&*found) : nullptr;
    if (func == nullptr) {
      std::fprintf(stderr, "function export `%s` not found on the instance\n", e.name.c_str());
      std::abort();
    }
    const wasm::FuncType& type = wasm::func_type(*func);
    CallRecord record{.name = e.name, .has_params = !type.params.empty(), .trap = std::nullopt, .results = {}, .fuel_consumed = 0, .trap_func = std::nullopt, .trap_offset = 0};
    std::vector<wasm::Value> args;
    if (record.has_params) {
      if (!args_for) {
        records.push_back(std::move(record));
        continue;
      }
      args = args_for(type);
    }
    const std::optional<std::uint64_t> budget = budget_for(records.size());
    store.set_budget(wasm::ExecutionBudget{.fuel = budget, .deadline = std::nullopt});
    auto result = store.invoke(*func, args);
    record.fuel_consumed = store.fuel_consumed();
    // The engine's fuel promises (docs/interpreter.md, "Fuel"): an OutOfFuel stop reports exactly
    // the budget (finding F1 was 4,294,967,305 after a bulk operation). Any other end may be
    // overdrawn, as in Wasmtime, but only by code that ran after the last check passed: checks
    // sit at every function entry and loop header, so each frame on the stack contributes at
    // most one forward pass through its body (each operator is at least one byte and costs at
    // most 1; bulk operations check their charge). Finding F4 was a call-stack-exhausted trap
    // reporting the costs of 20,000 post-call segments that never ran.
    const bool out_of_fuel = !result && result.error().kind == wasm::TrapKind::OutOfFuel;
    const std::uint64_t overdraw = (std::uint64_t{kMaxCallDepth} + 1) * max_body_bytes;
    if (!budget ? record.fuel_consumed != 0 || out_of_fuel
        : out_of_fuel ? record.fuel_consumed != *budget
                      : record.fuel_consumed > *budget + overdraw) {
      std::fprintf(stderr, "`%s` consumed %" PRIu64 " fuel on a budget of %" PRIu64 " (%s)\n", e.name.c_str(),
                   record.fuel_consumed, budget.value_or(0),
                   !budget       ? "unmetered: must be 0 and never out of fuel"
                   : out_of_fuel ? "out of fuel: must be the budget"
                                 : "more than any run could overdraw");
      std::abort();
    }
    if (result) {
      if (result->size() != type.results.size()) {
        std::fprintf(stderr, "`%s` returned %zu values for %zu results\n", e.name.c_str(), result->size(), type.results.size());
        std::abort();
      }
      for (std::size_t i = 0; i < result->size(); ++i) {
        if ((*result)[i].type != type.results[i]) {
          std::fprintf(stderr, "`%s` result %zu has the wrong type\n", e.name.c_str(), i);
          std::abort();
        }
      }
      record.results = std::move(*result);
    } else {
      if (result.error().kind == wasm::TrapKind::None || result.error().kind == wasm::TrapKind::Host ||
          result.error().kind == wasm::TrapKind::Exit || result.error().kind == wasm::TrapKind::DeadlineExceeded) {
        std::fprintf(stderr, "`%s` ended with an impossible trap kind %d (%s)\n", e.name.c_str(),
                     static_cast<int>(result.error().kind), result.error().message.c_str());
        std::abort();
      }
      record.trap = result.error().kind;
      record.trap_func = result.error().func_index;
      record.trap_offset = result.error().offset;
    }
    records.push_back(std::move(record));
  }
  return records;
}

bool write_file(const std::string& path, std::span<const std::uint8_t> bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

std::optional<InputModule> module_of_input(std::span<const std::uint8_t> input, const GenOptions& options,
                                           const char* target) {
  InputModule m;
  m.as_is = input.size() >= 4 && std::memcmp(input.data(), "\0asm", 4) == 0;
  m.binary = m.as_is ? std::vector<std::uint8_t>(input.begin(), input.end()) : generate_module(input, options).binary;
  if (!m.as_is) keep_module_if_asked(m.binary);
  auto compiled = wasm::compile(m.binary);
  if (!compiled) {
    if (m.as_is) return std::nullopt;
    std::fprintf(stderr, "a generated module was rejected: %s at 0x%zx\n", compiled.error().message.c_str(),
                 compiled.error().offset);
    keep_module_and_abort(target, m.binary);
  }
  m.compiled = std::move(*compiled);
  return m;
}

std::function<ArgsFor()> args_from_tail(const std::uint8_t* data, std::size_t size) {
  return [data, size]() -> ArgsFor {
    auto arg_pos = std::make_shared<std::size_t>(size / 2);
    auto next = [=](int n) {
      std::uint64_t v = 0;
      for (int i = 0; i < n; ++i) v |= std::uint64_t{*arg_pos < size ? data[(*arg_pos)++] : std::uint8_t{0}} << (8 * i);
      return v;
    };
    return [next](const wasm::FuncType& type) {
      std::vector<wasm::Value> args;
      for (auto t : type.params) {
        if (t == wasm::ValType::I32) args.push_back(wasm::Value::i32(static_cast<std::uint32_t>(next(4))));
        else if (t == wasm::ValType::I64) args.push_back(wasm::Value::i64(next(8)));
        else if (t == wasm::ValType::F32) args.push_back(wasm::Value::f32_bits(static_cast<std::uint32_t>(next(4))));
        else if (t == wasm::ValType::F64) args.push_back(wasm::Value::f64_bits(next(8)));
        else args.push_back(wasm::Value::null(t));  // the generator's references are nullable
      }
      return args;
    };
  };
}

bool any_out_of_fuel(const std::vector<CallRecord>& records) {
  return std::any_of(records.begin(), records.end(), [](const auto& r) { return r.trap == wasm::TrapKind::OutOfFuel; });
}

void keep_module_if_asked(std::span<const std::uint8_t> binary) {
  if (const char* keep = std::getenv("SPRAWLING_FUZZ_KEEP_MODULE"); keep != nullptr) (void)write_file(keep, binary);
}

void keep_module_and_abort(const char* target, std::span<const std::uint8_t> binary) {
  const std::string kept = std::string("/tmp/sprawl-fuzz-") + target + "-module-" + std::to_string(::getpid()) + ".wasm";
  if (write_file(kept, binary)) std::fprintf(stderr, "module written to %s\n", kept.c_str());
  std::abort();
}

std::optional<std::string> check_reruns(const std::shared_ptr<const wasm::CompiledModule>& compiled,
                                        const std::vector<CallRecord>& first, const ExecLimits& limits,
                                        const std::function<ArgsFor()>& fresh_args) {
  if (any_out_of_fuel(first)) return std::nullopt;
  ExecLimits unmetered = limits;
  unmetered.fuel_per_call = std::nullopt;
  unmetered.fuel_by_call.clear();
  ExecLimits exact = limits;
  exact.fuel_by_call.clear();
  for (const auto& r : first) exact.fuel_by_call.push_back(r.fuel_consumed + 1);
  auto line = [](const CallRecord& r) {
    std::string text = r.name + "() =>";
    if (r.trap) text += " trap: " + std::string(wasm::trap_message(*r.trap));
    for (std::size_t i = 0; i < r.results.size(); ++i) text += (i == 0 ? " " : ", ") + value_text(r.results[i]);
    return text + "  [fuel " + std::to_string(r.fuel_consumed) + "]";
  };
  for (const auto& [rerun_limits, what, compare_fuel] :
       {std::tuple{&unmetered, "unmetered", false}, std::tuple{&exact, "budget = consumed + 1", true}}) {
    auto again = run_exports(compiled, *rerun_limits, fresh_args ? fresh_args() : ArgsFor{});
    const bool same = again && again->size() == first.size() &&
                      std::equal(first.begin(), first.end(), again->begin(), [&](const auto& a, const auto& b) {
                        return a.trap == b.trap && a.results == b.results &&
                               (!compare_fuel || a.fuel_consumed == b.fuel_consumed);
                      });
    if (same) continue;
    std::string report = std::string("the metered run and the run with ") + what + " differ\nmetered:\n";
    for (const auto& r : first) report += "  " + line(r) + "\n";
    report += std::string(what) + ":\n";
    if (!again) report += "  (did not instantiate)\n";
    else
      for (const auto& r : *again) report += "  " + line(r) + "\n";
    return report;
  }
  return std::nullopt;
}

}  // namespace sprawling::fuzz
