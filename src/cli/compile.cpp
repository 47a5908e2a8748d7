// `sprawl compile`: a module compiled whole to machine code ahead of time, into the compiled-code
// cache where later `sprawl run` / `sprawl python` jobs (tier auto or compile) find it.
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/report.hpp"

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace sprawling::cli {

namespace {

constexpr std::string_view kCompileHelp = R"(Usage: sprawl compile [OPTIONS] MODULE...

Compiles every function of each MODULE (.wasm or .wat) to machine code with LLVM, ahead of time,
into the compiled-code cache: SPRAWLING_CACHE_DIR, else $XDG_CACHE_HOME/sprawling/code, else
~/.cache/sprawling/code (created 0700). Later runs of the same module (`sprawl run`, `sprawl
python`; --tier auto, the default, or compile) by this same sprawl binary on this CPU start on that
machine code instead of the interpreter. Prints each entry written. An entry is specific to the
module's bytes, this build of sprawl and of its compiler plugin (libsprawling_jit.so), the LLVM
library, the CPU's features and the fuel mode;
entries are checked on every read (a corrupt or foreign one is ignored), and the folder is kept
under 1 GiB by removing the least recently used entries.

Options:
  --unmetered   only the code for runs without --fuel
  --metered     only the code for runs with --fuel (fuel metering compiled in)
                (default: both)
  --compile-timeout DURATION
                stop a variant's compile that runs longer (500ms, 90s, 10m; 0: no limit;
                default 10m plus 2m per MB of wasm code)
  --compile-memory BYTES
                stop a variant's compile once the process's heap has grown by more
                (512M, 4G; 0: no limit; default 4G)
  -j, --jobs N  compile on N threads (also -jN; default: the cores this process may
                use); the machine code is the same whatever N
  -W compile-timeout=DURATION,compile-memory=BYTES,jobs=N
                the same, as a comma-separated list
  -W nan-canonicalization=y|n
                the code for runs with `sprawl run -W nan-canonicalization=y` (a
                deterministic run's too), default n: an entry of its own
  -h, --help    this text

A compile past a limit stops between two functions, names the limit and the function it was
compiling, and writes no entry. On a terminal, a compile that takes over a second shows its
progress on stderr (functions done of the total, time so far, an estimate of the rest).

Exit status: 0 when every entry was written; 127 without the compiled tier (a build without it, or
its plugin libsprawling_jit.so not found: the message says where it looked); 128 usage;
132 an invalid module; 126 the cache could not be written, or a limit stopped the compile.
)";

// A terminal's progress line (stderr, rewritten in place), once a compile has run a second.
class Progress {
 public:
  Progress() : shown_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { finish(); }

  void update(std::size_t done, std::size_t total) {
    if (!shown_) return;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < 1.0 || (drawn_ && now - last_ < std::chrono::milliseconds(200) && done < total)) return;
    last_ = now;
    drawn_ = true;
    char eta[64] = "";
    if (done > 0 && done < total) {
      std::snprintf(eta, sizeof eta, ", about %.0f s left",
                    elapsed * static_cast<double>(total - done) / static_cast<double>(done));
    }
    std::fprintf(stderr, "\r\033[Ksprawl compile: %s%s: %zu of %zu functions, %.0f s%s", label_.c_str(),
                 label_.empty() ? "" : " code", done, total, elapsed, eta);
    std::fflush(stderr);
  }
  // A new variant's compile starts: its own clock.
  void start(std::string label) {
    finish();
    label_ = std::move(label);
    start_ = std::chrono::steady_clock::now();
  }
  void finish() {
    if (!drawn_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  bool shown_;
  bool drawn_ = false;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

struct CompileRequest {
  bool metered = true;
  bool unmetered = true;
  bool nan_canonicalization = false;
  runtime::PrecompileOptions options;
  std::vector<std::string_view> modules;
};

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

// One -W setting by its key (a limit, the thread count or nan-canonicalization; a limit is also
// the long option --KEY).
std::expected<void, UsageError> apply_setting(CompileRequest& request, std::string_view key, std::string_view value) {
  if (key == "compile-timeout") {
    auto d = parse_duration(value);
    if (!d) return std::unexpected(UsageError{"compile-timeout '" + std::string(value) + "': expected a duration, e.g. 90s, 10m"});
    request.options.time_limit = *d;
  } else if (key == "compile-memory") {
    auto n = parse_size(value);
    if (!n) return std::unexpected(UsageError{"compile-memory '" + std::string(value) + "': expected bytes, e.g. 512M, 4G"});
    request.options.memory_limit = *n;
  } else if (key == "nan-canonicalization") {
    if (value != "y" && value != "n") {
      return std::unexpected(UsageError{"nan-canonicalization '" + std::string(value) + "': expected y or n"});
    }
    request.nan_canonicalization = value == "y";
  } else if (key == "jobs") {
    auto n = parse_count(value);
    if (!n || *n == 0 || *n > 1024) {
      return std::unexpected(UsageError{"jobs '" + std::string(value) + "': expected a thread count from 1 to 1024"});
    }
    request.options.jobs = static_cast<unsigned>(*n);
  } else {
    return std::unexpected(
        UsageError{"-W '" + std::string(key) +
                   "': unknown option (supported: compile-timeout, compile-memory, jobs, nan-canonicalization)"});
  }
  return {};
}

std::expected<void, UsageError> apply_w_list(CompileRequest& request, std::string_view list) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos && item == "nan-canonicalization") {
      request.nan_canonicalization = true;  // a bare switch means yes, as `sprawl run -W` reads it
    } else if (eq == std::string_view::npos) {
      return std::unexpected(UsageError{"-W '" + std::string(item) + "': expected -W KEY=VALUE"});
    } else if (auto r = apply_setting(request, item.substr(0, eq), item.substr(eq + 1)); !r) {
      return r;
    }
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return {};
}

}  // namespace

int compile_command(std::span<const std::string_view> args) {
  CompileRequest request;
  const auto usage = [](const UsageError& e) {
    std::fprintf(stderr, "sprawl compile: %s (see --help)\n", e.message.c_str());
    return status::kUsage;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      print(stdout, kCompileHelp);
      return 0;
    }
    // --KEY VALUE, --KEY=VALUE, -j N, -jN, -W KEY=VALUE[,...], -WKEY=VALUE.
    std::string_view key;
    std::optional<std::string_view> value;
    if (arg.starts_with("-j") && arg.size() > 2) {
      key = "jobs";
      value = arg.substr(2);
    } else if (arg == "--compile-timeout" || arg == "--compile-memory" || arg == "--jobs" || arg == "-j") {
      key = arg == "-j" ? std::string_view("jobs") : arg.substr(2);
      if (i + 1 >= args.size()) return usage(UsageError{std::string(arg) + " needs a value"});
      value = args[++i];
    } else if (arg.starts_with("--compile-timeout=") || arg.starts_with("--compile-memory=") ||
               arg.starts_with("--jobs=")) {
      const auto eq = arg.find('=');
      key = arg.substr(2, eq - 2);
      value = arg.substr(eq + 1);
    } else if (arg == "-W" || arg.starts_with("-W")) {
      std::string_view list = arg.substr(2);
      if (list.empty()) {
        if (i + 1 >= args.size()) return usage(UsageError{"-W needs KEY=VALUE"});
        list = args[++i];
      }
      if (auto r = apply_w_list(request, list); !r) return usage(r.error());
      continue;
    }
    if (value) {
      if (auto r = apply_setting(request, key, *value); !r) return usage(r.error());
    } else if (arg == "--metered") {
      request.unmetered = false;
    } else if (arg == "--unmetered") {
      request.metered = false;
    } else if (arg == "--") {
      request.modules.insert(request.modules.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    } else if (arg.starts_with("-")) {
      std::fprintf(stderr, "sprawl compile: unknown option '%.*s' (see --help)\n", static_cast<int>(arg.size()),
                   arg.data());
      return status::kUsage;
    } else {
      request.modules.push_back(arg);
    }
  }
  if (!request.metered && !request.unmetered) {
    std::fputs("sprawl compile: --metered and --unmetered exclude each other (default: both)\n", stderr);
    return status::kUsage;
  }
  if (request.modules.empty()) {
    std::fputs("sprawl compile: missing MODULE (a .wasm or .wat file)\n", stderr);
    return status::kUsage;
  }
  runtime::SandboxConfig config;
  config.nan_canonicalization = request.nan_canonicalization;
  config.code_cache_dir = user_cache_folder("SPRAWLING_CACHE_DIR", "code");
  if (config.code_cache_dir.empty()) {
    std::fputs("sprawl compile: no cache folder: set SPRAWLING_CACHE_DIR, XDG_CACHE_HOME or HOME\n", stderr);
    return status::kUsage;
  }
  Progress progress;
  for (const std::string_view module : request.modules) {
    // One call per variant, so the progress line names it and restarts its clock.
    for (const bool m : {false, true}) {
      if (!(m ? request.metered : request.unmetered)) continue;
      progress.start(std::string(module) + (m ? ": metered" : ": unmetered"));
      runtime::PrecompileOptions options = request.options;
      options.progress = [&progress](std::size_t done, std::size_t total) { progress.update(done, total); };
      const auto written = runtime::precompile_module(std::string(module), config, m, !m, options);
      progress.finish();
      if (!written) {
        std::fprintf(stderr, "sprawl compile: %s\n", written.error().to_string().c_str());
        return exit_status(written.error().code);
      }
      for (const auto& e : *written) {
        const double kb = static_cast<double>(e.wasm_code_bytes) / 1000.0;
        std::printf(
            "%s: %s code: %s (%zu bytes): %zu of %zu functions, %.1f KB of wasm code in %.2f s on %u thread%s, "
            "%.2f s CPU (%.1f KB/s of CPU), heap grew by at most %.1f MiB\n",
            std::string(module).c_str(), e.metered ? "metered" : "unmetered", e.file.c_str(), e.entry_bytes,
            e.compiled, e.functions, kb, e.wall_seconds, e.threads, e.threads == 1 ? "" : "s", e.cpu_seconds,
            e.cpu_seconds > 0 ? kb / e.cpu_seconds : 0.0,
            static_cast<double>(e.peak_heap_growth) / static_cast<double>(1 << 20));
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace sprawling::cli
