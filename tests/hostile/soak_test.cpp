// The soak at CI size: 2,000 back-to-back jobs on one WasmSandbox; every outcome
// as expected, resident memory at the end within 5% of after the first 100 jobs, no fd leaked.
// Full size (10,000 jobs; 2 threads x 5,000) is bench/soak.
#include "hostile/soak.hpp"

#include <gtest/gtest.h>

namespace sprawling::hostile {
namespace {

TEST(Soak, OneSandboxBackToBack) {
  const auto f = soak::run(1, 2'000);
  EXPECT_EQ(f.wrong, 0u) << f.first_wrong;
  EXPECT_LE(f.rss_end, f.rss_warm + f.rss_warm / 20)
      << kMemoryFigureName << " after the warm-up " << f.rss_warm << " bytes, at the end " << f.rss_end;
  EXPECT_EQ(f.fds_end, f.fds_warm);
  std::printf("soak: %zu jobs in %.2f s, %s %.1f -> %.1f MiB, fds %zu -> %zu\n", f.jobs, f.seconds, kMemoryFigureName,
              static_cast<double>(f.rss_warm) / 1048576.0, static_cast<double>(f.rss_end) / 1048576.0, f.fds_warm,
              f.fds_end);
}

}  // namespace
}  // namespace sprawling::hostile
