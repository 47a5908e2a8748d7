// The soak's multi-threaded half at CI size: 2 threads x 1,000 jobs on two WasmSandboxes sharing the
// process-wide module cache (labelled `threads`, so the tsan preset runs it).
#include "hostile/soak.hpp"

#include <gtest/gtest.h>

namespace sprawling::hostile {
namespace {

TEST(SoakThreads, TwoSandboxesShareTheModuleCache) {
  const auto f = soak::run(2, 1'000);
  EXPECT_EQ(f.wrong, 0u) << f.first_wrong;
  EXPECT_LE(f.rss_end, f.rss_warm + f.rss_warm / 20)
      << kMemoryFigureName << " after the warm-up " << f.rss_warm << " bytes, at the end " << f.rss_end;
  EXPECT_EQ(f.fds_end, f.fds_warm);
  std::printf("soak: %zu jobs in %.2f s on 2 threads, %s %.1f -> %.1f MiB, fds %zu -> %zu\n", f.jobs, f.seconds, kMemoryFigureName,
              static_cast<double>(f.rss_warm) / 1048576.0, static_cast<double>(f.rss_end) / 1048576.0, f.fds_warm,
              f.fds_end);
}

}  // namespace
}  // namespace sprawling::hostile
