// Coverage feed for libFuzzer from GCC: GCC's -fsanitize-coverage=trace-pc calls
// __sanitizer_cov_trace_pc() in every basic block; we hash (previous block, this block) into
// an edge-counter array that libFuzzer reads as "inline 8-bit counters".
#include <cstddef>
#include <cstdint>

// libFuzzer's side; weak, so instrumented code linked without a fuzzer (the CLI) still links.
extern "C" __attribute__((weak)) void __sanitizer_cov_8bit_counters_init(std::uint8_t* start, std::uint8_t* stop);
extern "C" __attribute__((weak)) void __sanitizer_cov_trace_cmp4(std::uint32_t a, std::uint32_t b);
extern "C" __attribute__((weak)) void __sanitizer_cov_trace_cmp8(std::uint64_t a, std::uint64_t b);

namespace {
// 64 Ki edges: collisions stay rare for the few thousand blocks of the decoder or interpreter.
constexpr std::size_t kCounters = std::size_t{1} << 16;
alignas(4096) std::uint8_t counters[kCounters];
thread_local std::uintptr_t previous_block = 0;

__attribute__((constructor, no_sanitize_coverage)) void register_counters() {
  if (__sanitizer_cov_8bit_counters_init != nullptr) __sanitizer_cov_8bit_counters_init(counters, counters + kCounters);
}
}  // namespace

// Hot and re-entrant from anywhere, so nothing here may be instrumented or allocate.
extern "C" __attribute__((no_sanitize_coverage, no_sanitize_address, no_sanitize_undefined)) void
__sanitizer_cov_trace_pc() {
  const auto pc = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
  const std::uintptr_t block = (pc * 0x9E3779B97F4A7C15ULL) >> 48;
  counters[(block ^ previous_block) & (kCounters - 1)]++;
  previous_block = block >> 1;  // shifted so A→B and B→A are different edges
}

// GCC's trace-cmp also reports float compares, which libFuzzer has no hook for: give it the
// bit patterns, which is what its value profile and CMP dictionary work on anyway.
extern "C" __attribute__((no_sanitize_coverage)) void __sanitizer_cov_trace_cmpf(float a, float b) {
  std::uint32_t x, y;
  __builtin_memcpy(&x, &a, 4);
  __builtin_memcpy(&y, &b, 4);
  if (__sanitizer_cov_trace_cmp4 != nullptr) __sanitizer_cov_trace_cmp4(x, y);
}
extern "C" __attribute__((no_sanitize_coverage)) void __sanitizer_cov_trace_cmpd(double a, double b) {
  std::uint64_t x, y;
  __builtin_memcpy(&x, &a, 8);
  __builtin_memcpy(&y, &b, 8);
  if (__sanitizer_cov_trace_cmp8 != nullptr) __sanitizer_cov_trace_cmp8(x, y);
}
