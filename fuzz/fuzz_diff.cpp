// Fuzz target (e): differential against wabt's `wasm-interp`. Generated modules (with nothing
// whose result may legitimately differ between engines) run in our engine and in wasm-interp
// --run-all-exports; every exported function without parameters must give the same values
// (floats as wasm-interp prints them, NaNs as "nan") or the same trap kind. Before that, our
// metered run must agree with our unmetered run and with a rerun at budget = consumed + 1.
#include "exec_harness.hpp"
#include "module_gen.hpp"
#include "wasm/icode/internal_verify.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <chrono>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace sprawling;

// The trap kinds both engines distinguish, in words common to both.
std::string trap_class(wasm::TrapKind kind) {
  switch (kind) {
    case wasm::TrapKind::Unreachable: return "unreachable";
    case wasm::TrapKind::IntegerDivideByZero: return "integer divide by zero";
    case wasm::TrapKind::IntegerOverflow: return "integer overflow";
    case wasm::TrapKind::InvalidConversionToInteger: return "invalid conversion to integer";
    case wasm::TrapKind::OutOfBoundsMemoryAccess: return "out of bounds memory access";
    case wasm::TrapKind::OutOfBoundsTableAccess:
    case wasm::TrapKind::UndefinedElement: return "undefined table element";
    case wasm::TrapKind::UninitializedElement: return "uninitialized element";
    case wasm::TrapKind::IndirectCallTypeMismatch: return "indirect call type mismatch";
    default: return "other: " + std::string(wasm::trap_message(kind));
  }
}

std::string wabt_trap_class(const std::string& message) {
  auto has = [&](const char* s) { return message.find(s) != std::string::npos; };
  if (has("unreachable")) return "unreachable";
  if (has("divide by zero")) return "integer divide by zero";
  if (has("integer overflow")) return "integer overflow";
  if (has("invalid conversion")) return "invalid conversion to integer";
  if (has("out of bounds memory")) return "out of bounds memory access";
  if (has("undefined table index") || has("out of bounds table")) return "undefined table element";
  if (has("uninitialized")) return "uninitialized element";
  if (has("signature mismatch")) return "indirect call type mismatch";
  return "other: " + message;
}

std::string our_line(const fuzz::CallRecord& r) {
  std::string line = r.name + "() =>";
  if (r.trap) return line + " error: " + trap_class(*r.trap);
  for (std::size_t i = 0; i < r.results.size(); ++i) line += (i == 0 ? " " : ", ") + fuzz::value_text(r.results[i]);
  return line;
}

// wasm-interp's line with trap messages classified and NaNs spelled "nan".
std::string normalise_wabt(const std::string& line) {
  const auto arrow = line.find("() =>");
  if (arrow == std::string::npos) return line;
  std::string head = line.substr(0, arrow + 5);
  std::string rest = line.substr(arrow + 5);
  if (rest.empty()) return head;
  rest.erase(0, 1);  // the space after "=>"
  if (rest.rfind("error: ", 0) == 0) return head + " error: " + wabt_trap_class(rest.substr(7));
  std::string out = head;
  std::size_t pos = 0;
  for (bool first = true;; first = false) {
    const auto next = rest.find(", ", pos);
    std::string token = rest.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    if ((token.rfind("f32:", 0) == 0 || token.rfind("f64:", 0) == 0) && token.find("nan") != std::string::npos) {
      token = token.substr(0, 4) + "nan";
    }
    out += (first ? " " : ", ") + token;
    if (next == std::string::npos) break;
    pos = next + 2;
  }
  return out;
}

// Runs wasm-interp directly (posix_spawn, no shell, no timeout(1): three execs became one, which
// doubled this target's rate) and kills it if it runs past 20 s.
std::vector<std::string> run_wabt(const std::vector<std::uint8_t>& binary, const std::string& path, int& status) {
  std::vector<std::string> lines;
  status = -1;
  if (!fuzz::write_file(path, binary)) return lines;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return lines;
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  // The generator emits tail calls and a second memory (WebAssembly 3.0), which wabt 1.0.32 runs
  // behind flags.
  std::string program = SPRAWLING_WASM_INTERP, flag = "--run-all-exports", tail = "--enable-tail-call",
              multi = "--enable-multi-memory", file = path;
  char* argv[] = {program.data(), flag.data(), tail.data(), multi.data(), file.data(), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    return lines;
  }
  // libFuzzer's timers interrupt poll and read (EINTR); giving up on one would cut the output short.
  std::string output;
  char buffer[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // timed out: the deadline check above kills it
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::size_t start = 0;
  while (start < output.size()) {
    const auto end = output.find('\n', start);
    lines.push_back(output.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

// How much was really compared (printed at exit: skipped modules are not evidence).
struct Tally {
  std::size_t modules = 0, functions = 0, skipped = 0, self_checked = 0, remembered = 0;
  ~Tally() {
    std::fprintf(stderr,
                 "diff: %zu modules compared with wasm-interp (%zu function results; %zu of them byte-identical to "
                 "a module compared before, whose wasm-interp lines were reused), %zu skipped; %zu checked "
                 "unmetered and at budget = consumed + 1\n",
                 modules, functions, remembered, skipped, self_checked);
  }
};
Tally tally;

// Many inputs generate a module byte-identical to one already compared (the generator ignores the
// bytes it does not reach). wasm-interp is deterministic on these modules, so its lines for that
// module are known: they are kept (module hash -> hash of the agreed lines) and our lines are
// checked against them again, without a process. A hash collision could only skip a comparison,
// never report a false difference (a mismatch reruns wasm-interp). The table is direct-mapped and
// allocated once: an allocation that outlives the input would make libFuzzer suspect a leak and
// rerun the input under LeakSanitizer.
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (const unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}
std::uint64_t lines_hash(const std::vector<std::string>& lines) {
  std::uint64_t h = fnv1a("lines");
  for (const auto& l : lines) h = fnv1a(std::string_view(l.data(), l.size() + 1), h);  // with its NUL
  return h;
}
struct Agreed {
  std::uint64_t module = 0, lines = 0;
};
constexpr std::size_t kAgreedSlots = std::size_t{1} << 22;  // 64 MiB
Agreed& agreed_slot(std::uint64_t module_hash) {
  static std::vector<Agreed> table(kAgreedSlots);
  return table[module_hash & (kAgreedSlots - 1)];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sprawling::wasm::set_code_verification(true);  // every translation is checked (internal_verify.hpp)
  // No 64-bit memories: wabt 1.0.32 reads a memarg offset as a u32 LEB even with --enable-memory64
  // when the memarg names a second memory, and rejects the module.
  const auto generated =
      fuzz::generate_module(std::span<const std::uint8_t>(data, size), {.deterministic_only = true, .memory64 = false});
  fuzz::keep_module_if_asked(generated.binary);
  auto compiled = wasm::compile(generated.binary);
  if (!compiled) {
    std::fprintf(stderr, "a generated module was rejected: %s\n", compiled.error().message.c_str());
    std::abort();
  }
  const fuzz::ExecLimits limits{
      .fuel_per_call = fuzz::kFuelPerCall, .max_memory_bytes = fuzz::kMemoryCapBytes, .max_table_elements = 1'000'000};
  auto records = fuzz::run_exports(*compiled, limits, nullptr);
  if (!records) {
    ++tally.skipped;
    return 0;
  }
  // Our own promises first (fuzz::check_reruns; cheap beside the wasm-interp process).
  if (auto report = fuzz::check_reruns(*compiled, *records, limits, nullptr)) {
    std::fprintf(stderr, "DIFFERENCE: %s", report->c_str());
    fuzz::keep_module_and_abort("diff", generated.binary);
  }
  if (!fuzz::any_out_of_fuel(*records)) ++tally.self_checked;
  std::vector<std::string> ours;
  for (const auto& r : *records) {
    if (r.trap == wasm::TrapKind::OutOfFuel || r.trap == wasm::TrapKind::CallStackExhausted) {
      ++tally.skipped;
      return 0;  // wasm-interp has neither our fuel nor our stack depth: nothing to compare
    }
    if (!r.has_params) ours.push_back(our_line(r));
  }
  const std::uint64_t module_hash =
      fnv1a(std::string_view(reinterpret_cast<const char*>(generated.binary.data()), generated.binary.size()));
  const std::uint64_t ours_hash = lines_hash(ours);
  if (const Agreed& known = agreed_slot(module_hash); known.module == module_hash && known.lines == ours_hash) {
    ++tally.modules;
    ++tally.remembered;
    tally.functions += ours.size();
    return 0;
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sprawl-fuzz-diff-" +
                           std::to_string(::getpid()) + ".wasm";
  int status = 0;
  auto theirs = run_wabt(generated.binary, path, status);
  ::unlink(path.c_str());
  for (const auto& line : theirs) {
    // wasm-interp's stacks are smaller than ours: where it runs out first there is nothing to compare.
    if (line.find("stack exhausted") != std::string::npos) {
      ++tally.skipped;
      return 0;
    }
  }
  bool same = WIFEXITED(status) && WEXITSTATUS(status) == 0 && theirs.size() == ours.size();
  for (std::size_t i = 0; same && i < ours.size(); ++i) same = normalise_wabt(theirs[i]) == ours[i];
  if (!same) {
    std::fprintf(stderr, "DIFFERENCE with wasm-interp (exit status %d)\nours:\n", status);
    for (const auto& l : ours) std::fprintf(stderr, "  %s\n", l.c_str());
    std::fprintf(stderr, "wasm-interp:\n");
    for (const auto& l : theirs) std::fprintf(stderr, "  %s\n", l.c_str());
    fuzz::keep_module_and_abort("diff", generated.binary);
  }
  ++tally.modules;
  tally.functions += ours.size();
  agreed_slot(module_hash) = {.module = module_hash, .lines = ours_hash};
  return 0;
}
