// The full-size soak: 10,000 back-to-back jobs on one WasmSandbox, then 2 threads
// x 5,000 jobs on two sandboxes sharing the module cache. Prints the figures and exits non-zero if
// an outcome was wrong, resident memory at the end exceeds the post-warm-up figure by over 5%, or
// an fd leaked. Usage: sprawl_soak [JOBS_SINGLE [JOBS_PER_THREAD]].
#include "hostile/soak.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

bool report(const char* name, const sprawling::hostile::soak::Figures& f) {
  const double warm = static_cast<double>(f.rss_warm) / 1048576.0;
  const double end = static_cast<double>(f.rss_end) / 1048576.0;
  const bool rss_ok = f.rss_end <= f.rss_warm + f.rss_warm / 20;
  const bool fds_ok = f.fds_end == f.fds_warm;
  std::printf("%s: %zu jobs in %.2f s (%.0f jobs/s); wrong outcomes %zu; memory after warm-up %.2f MiB, at end %.2f MiB "
              "(%+.2f%%)%s; fds %zu -> %zu%s\n  (memory figure: %s)\n",
              name, f.jobs, f.seconds, static_cast<double>(f.jobs) / f.seconds, f.wrong, warm, end,
              (end - warm) / warm * 100.0, rss_ok ? "" : " OVER 5%", f.fds_warm, f.fds_end, fds_ok ? "" : " LEAK",
              sprawling::hostile::kMemoryFigureName);
  if (f.wrong != 0) std::printf("  first wrong: %s\n", f.first_wrong.c_str());
  return f.wrong == 0 && rss_ok && fds_ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t single = argc > 1 ? std::stoul(argv[1]) : 10'000;
  const std::size_t per_thread = argc > 2 ? std::stoul(argv[2]) : 5'000;
  bool ok = report("one sandbox", sprawling::hostile::soak::run(1, single));
  ok = report("two threads", sprawling::hostile::soak::run(2, per_thread)) && ok;
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
