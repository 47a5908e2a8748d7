// Fuzz target (c): instantiate and run. Inputs starting with "\0asm" are modules run as they are
// (the testsuite seeds); any other input drives the generator (module_gen.hpp), whose modules
// must validate — a rejection is a generator or validator bug and stops the run.
#include "exec_harness.hpp"
#include "module_gen.hpp"
#include "wasm/icode/internal_verify.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>


extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sprawling::wasm::set_code_verification(true);  // every translation is checked (internal_verify.hpp)
  using namespace sprawling;
  auto input = fuzz::module_of_input(std::span<const std::uint8_t>(data, size), {}, "run");
  if (!input) return 0;
  const bool is_module = input->as_is;
  const auto& compiled = input->compiled;
  const auto& binary = input->binary;
  // Arguments come from the tail of the input, so the fuzzer steers them too; each run of the
  // exports (the first and check_reruns') replays the same ones.
  const auto fresh_args = fuzz::args_from_tail(data, size);
  const fuzz::ExecLimits limits{.fuel_per_call = fuzz::kFuelPerCall,
                                .max_memory_bytes = is_module ? std::uint64_t{64} << 20 : fuzz::kMemoryCapBytes,
                                .max_table_elements = 1'000'000};
  auto records = fuzz::run_exports(compiled, limits, fresh_args());
  if (!records) return 0;
  if (auto report = fuzz::check_reruns(compiled, *records, limits, fresh_args)) {
    std::fprintf(stderr, "%s", report->c_str());
    if (!is_module) fuzz::keep_module_and_abort("run", binary);
    std::abort();
  }
  return 0;
}
