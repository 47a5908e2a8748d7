// Tests of src/wasm/exec/simd.hpp's portable path (GCC vector extensions and lane loops, what non-x86 hosts
// compile), built here by defining SPRAWLING_SIMD_PORTABLE: the spec testsuite's cases replayed on it,
// and its name table exported for simd_test.cpp's differential tests against the x86 paths.
#define SPRAWLING_SIMD_PORTABLE 1
#include "wasm/exec/simd.hpp"
#include "wasm/exec/simd_test_support.hpp"

static_assert(SPRAWLING_SIMD_X86 == 0, "this file must compile the portable path");

namespace portable_table {
using namespace sprawling::wasm::simd;
using namespace simd_test;
#include "wasm/exec/simd_test_table.inc"
}  // namespace portable_table

const std::map<std::string, simd_test::Impl>& simd_test::portable_instructions() { return portable_table::instructions(); }

namespace {

#ifdef SPRAWLING_SIMD_CASES  // needs the 3.0 testsuite (tests/wasm/CMakeLists.txt)
TEST(SimdPortable, ReplaysEverySpecTestsuiteCase) {
  const auto checked = simd_test::replay_cases(portable_table::instructions(), SPRAWLING_SIMD_CASES);
  int total = 0;
  for (const auto& [op, n] : checked) total += n;
  // scripts/simd-cases finds 23013 cases of 229 instructions in the 2026-06 testsuite.
  EXPECT_GE(total, 23000);
  EXPECT_GE(checked.size(), 229U);
}
#endif

}  // namespace
