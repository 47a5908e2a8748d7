// Start-to-exit figures of whole processes (e.g. `sprawl python -c 'print(1)'`): each command
// spawned N times, the commands interleaved, medians of wall time, CPU time (user + sys from
// wait4) and page faults, and where the wall time went besides the CPU: the run-queue wait and
// the time on a CPU from /proc/PID/schedstat (read before the child is reaped), the rest being
// time the process slept (I/O, locks). A benchmark, not a test.
//
// Usage: sprawl_startup_bench RUNS -- [NAME=VALUE...] COMMAND [ARGS...] [';;' [NAME=VALUE...] COMMAND...]
// (NAME=VALUE words before a command are added to its environment; COMMAND is a path.)
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;  // NOLINT: POSIX

namespace {

struct Command {
  std::vector<std::string> env;   // NAME=VALUE added to this process's environment
  std::vector<std::string> argv;
  std::vector<double> wall, cpu, faults, run_queue, slept;  // per run, ms (faults: count)
};

double now_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::ranges::sort(v);
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ms(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; }

// One run: false when the command could not be spawned or did not exit with status 0.
bool run_once(Command& c, bool record) {
  std::vector<char*> argv;
  for (auto& a : c.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> env;
  for (auto& e : c.env) env.push_back(e.data());
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const double t0 = now_ms();
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  siginfo_t info{};
  waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT);  // exited, not yet reaped
  const double t1 = now_ms();
  double on_cpu = 0;
  double waited = 0;
  {
    std::ifstream schedstat("/proc/" + std::to_string(pid) + "/schedstat");
    unsigned long long run_ns = 0;
    unsigned long long wait_ns = 0;
    if (schedstat >> run_ns >> wait_ns) {
      on_cpu = static_cast<double>(run_ns) / 1e6;
      waited = static_cast<double>(wait_ns) / 1e6;
    }
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  if (record) {
    c.wall.push_back(t1 - t0);
    c.cpu.push_back(ms(usage.ru_utime) + ms(usage.ru_stime));
    c.faults.push_back(static_cast<double>(usage.ru_minflt + usage.ru_majflt));
    c.run_queue.push_back(waited);
    c.slept.push_back(t1 - t0 - on_cpu - waited);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.size() < 3 || args[1] != "--") {
    std::fputs("usage: sprawl_startup_bench RUNS -- [NAME=VALUE...] COMMAND [ARGS...] [';;' ...]\n", stderr);
    return 2;
  }
  const int runs = std::atoi(std::string(args[0]).c_str());
  std::vector<Command> commands(1);
  for (std::size_t i = 2; i < args.size(); ++i) {
    if (args[i] == ";;") {
      commands.emplace_back();
    } else if (commands.back().argv.empty() && args[i].find('=') != std::string_view::npos && !args[i].starts_with("/")) {
      commands.back().env.emplace_back(args[i]);
    } else {
      commands.back().argv.emplace_back(args[i]);
    }
  }
  for (int r = -3; r < runs; ++r) {  // three unrecorded rounds first: page cache, snapshot files
    for (auto& c : commands) {
      if (c.argv.empty() || !run_once(c, r >= 0)) {
        std::fprintf(stderr, "sprawl_startup_bench: `%s` could not run or did not exit with status 0\n",
                     c.argv.empty() ? "" : c.argv[0].c_str());
        return 1;
      }
    }
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) load[0] = load[1] = load[2] = -1;
  std::printf("load average %.2f %.2f %.2f; %d runs of each command, interleaved; medians (ms)\n", load[0], load[1],
              load[2], runs);
  std::printf("%-58s %8s %8s %8s %7s %9s %7s\n", "command", "wall", "min", "cpu", "faults", "run-queue", "slept");
  for (const auto& c : commands) {
    std::string name;
    for (const auto& e : c.env) name += e.substr(0, e.find('=') + 1) + "… ";
    for (const auto& a : c.argv) name += (&a == &c.argv.front() ? a.substr(a.rfind('/') + 1) : a) + " ";
    if (name.size() > 58) name = name.substr(0, 55) + "...";
    std::printf("%-58s %8.2f %8.2f %8.2f %7.0f %9.2f %7.2f\n", name.c_str(), median(c.wall),
                *std::ranges::min_element(c.wall), median(c.cpu), median(c.faults), median(c.run_queue), median(c.slept));
  }
  return 0;
}
