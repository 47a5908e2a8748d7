// Parsing of `sprawl run` options (Wasmtime's spellings where they exist).
#include "cli/options.hpp"

#include <charconv>
#include <memory>
#include <cstdlib>
#include <filesystem>

namespace sprawling::cli {
namespace {

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  std::uint64_t value = 0;
  const char* const first = std::to_address(text.begin());
  const char* const end = std::to_address(text.end());
  auto [ptr, ec] = std::from_chars(first, end, value);
  if (ec != std::errc{} || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::expected<runtime::Mount, UsageError> parse_dir(std::string_view spec) {
  const std::string form = "expected --dir HOST, --dir HOST::GUEST or --dir HOST::GUEST::ro";
  std::string_view host = spec;
  std::string_view guest;
  bool writable = true;
  if (auto sep = spec.find("::"); sep != std::string_view::npos) {
    host = spec.substr(0, sep);
    guest = spec.substr(sep + 2);
    if (auto sep2 = guest.find("::"); sep2 != std::string_view::npos) {
      const std::string_view mode = guest.substr(sep2 + 2);
      guest = guest.substr(0, sep2);
      if (mode == "ro") {
        writable = false;
      } else if (mode == "rw") {
        writable = true;
      } else {
        return std::unexpected(UsageError{"--dir '" + std::string(spec) + "': unknown mode '" + std::string(mode) +
                                          "' (ro or rw); " + form});
      }
    }
  } else {
    guest = spec;
  }
  // DESIGN.md's spelling HOST::GUEST:ro (one colon) means the same as HOST::GUEST::ro.
  if (guest.ends_with(":ro") || guest.ends_with(":rw")) {
    writable = guest.ends_with(":rw");
    guest.remove_suffix(3);
  }
  if (host.empty() || guest.empty()) {
    return std::unexpected(UsageError{"--dir '" + std::string(spec) + "': empty host or guest path; " + form});
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::path(host), ec)) {
    return std::unexpected(UsageError{"--dir '" + std::string(spec) + "': host directory '" + std::string(host) +
                                      "' does not exist or is not a directory"});
  }
  // Guests see absolute mount points. Wasmtime's `--dir ./work` would expose a relative name;
  // we anchor it at '/' ("./work" → "/work", "." → "/"), where wasi-libc's cwd also starts.
  std::string guest_path = (std::filesystem::path("/") / std::filesystem::path(guest)).lexically_normal().string();
  while (guest_path.size() > 1 && guest_path.back() == '/') guest_path.pop_back();
  return runtime::Mount{.host = std::filesystem::path(host), .guest = guest_path, .writable = writable};
}

std::expected<void, UsageError> apply_wasm_option(RunRequest& request, std::string_view option) {
  const auto eq = option.find('=');
  const std::string_view key = option.substr(0, eq);
  const std::string_view value = eq == std::string_view::npos ? std::string_view{} : option.substr(eq + 1);
  if (key == "simd" || key == "tail-call" || key == "extended-const" || key == "relaxed-simd" || key == "multi-memory" ||
      key == "memory64" || key == "exceptions" || key == "function-references" ||
      key == "gc" || key == "nan-canonicalization") {
    // WebAssembly 3.0 feature switches and NaN canonicalization, Wasmtime's spelling: a bare
    // -W simd means yes.
    bool on = true;
    if (eq != std::string_view::npos) {
      if (value == "y" || value == "yes" || value == "true") {
        on = true;
      } else if (value == "n" || value == "no" || value == "false") {
        on = false;
      } else {
        return std::unexpected(UsageError{"-W " + std::string(key) + "='" + std::string(value) + "': expected y or n"});
      }
    }
    (key == "simd"             ? request.simd
     : key == "tail-call"      ? request.tail_call
     : key == "relaxed-simd"   ? request.relaxed_simd
     : key == "multi-memory"   ? request.multi_memory
     : key == "memory64"       ? request.memory64
     : key == "exceptions"     ? request.exceptions
     : key == "function-references" ? request.function_references
     : key == "gc"             ? request.gc
     : key == "nan-canonicalization" ? request.nan_canonicalization
                               : request.extended_const) = on;
    return {};
  }
  if (eq == std::string_view::npos || value.empty()) {
    return std::unexpected(UsageError{"-W '" + std::string(option) + "': expected -W KEY=VALUE"});
  }
  if (key == "fuel") {
    auto n = parse_u64(value);
    if (!n) return std::unexpected(UsageError{"-W fuel='" + std::string(value) + "': expected a whole number"});
    request.fuel = n;
  } else if (key == "max-memory-size") {
    auto n = parse_size(value);
    if (!n) {
      return std::unexpected(
          UsageError{"-W max-memory-size='" + std::string(value) + "': expected bytes, e.g. 268435456 or 256M"});
    }
    request.max_memory_bytes = n;
  } else if (key == "timeout") {
    auto d = parse_duration(value);
    if (!d) {
      return std::unexpected(UsageError{"-W timeout='" + std::string(value) + "': expected a duration, e.g. 500ms, 2s, 1m"});
    }
    request.timeout = d;
  } else if (key == "max-table-elements" || key == "max-tables" || key == "max-memories") {
    auto n = parse_u64(value);
    if (!n || *n > UINT32_MAX) {
      return std::unexpected(UsageError{"-W " + std::string(key) + "='" + std::string(value) +
                                        "': expected a whole number up to 4294967295"});
    }
    const auto count = static_cast<std::uint32_t>(*n);
    (key == "max-table-elements" ? request.max_table_elements
     : key == "max-tables"       ? request.max_tables
                                 : request.max_memories) = count;
  } else if (key == "max-store-size") {
    auto n = parse_size(value);
    if (!n) {
      return std::unexpected(
          UsageError{"-W max-store-size='" + std::string(value) + "': expected bytes, e.g. 1073741824 or 1G"});
    }
    request.max_store_bytes = n;
  } else if (key == "compile-memory") {
    auto n = parse_size(value);
    if (!n) {
      return std::unexpected(
          UsageError{"-W compile-memory='" + std::string(value) + "': expected bytes, e.g. 536870912 or 512M (0: no limit)"});
    }
    request.compile_memory = n;
  } else {
    return std::unexpected(UsageError{"-W '" + std::string(key) +
                                      "': unknown option (supported: fuel, max-memory-size, max-table-elements, "
                                      "max-tables, max-memories, max-store-size, compile-memory, timeout, simd, tail-call, "
                                      "extended-const, relaxed-simd, multi-memory, memory64, exceptions, "
                                      "function-references, gc, nan-canonicalization)"});
  }
  return {};
}

// One KEY=VALUE of -S (Wasmtime's WASI options): hostcall-fuel, and our max-disk-write.
std::expected<void, UsageError> apply_wasi_option(RunRequest& request, std::string_view option) {
  const auto eq = option.find('=');
  const std::string_view key = option.substr(0, eq);
  const std::string_view value = eq == std::string_view::npos ? std::string_view{} : option.substr(eq + 1);
  if (key == "max-disk-write") {
    auto n = value.empty() ? std::nullopt : parse_size(value);
    if (!n) {
      return std::unexpected(
          UsageError{"-S max-disk-write='" + std::string(value) + "': expected bytes, e.g. 1073741824 or 1G"});
    }
    request.max_disk_write_bytes = n;
    return {};
  }
  if (key != "hostcall-fuel") {
    return std::unexpected(UsageError{"-S '" + std::string(key) +
                                      "': unknown option (supported: hostcall-fuel, max-disk-write; the guest never "
                                      "inherits the host's environment, network or other resources)"});
  }
  auto n = value.empty() ? std::nullopt : parse_size(value);
  if (!n) {
    return std::unexpected(UsageError{"-S hostcall-fuel='" + std::string(value) +
                                      "': expected bytes, e.g. 134217728 or 128M"});
  }
  request.hostcall_copy_limit = n;
  return {};
}

// One KEY=VALUE of -C (Wasmtime's codegen options): cache=y|n, the compiled-code cache;
// tier-up=y|n, background compilation of hot functions under --tier auto.
std::expected<void, UsageError> apply_codegen_option(RunRequest& request, std::string_view option) {
  const auto eq = option.find('=');
  const std::string_view key = option.substr(0, eq);
  const std::string_view value = eq == std::string_view::npos ? std::string_view{} : option.substr(eq + 1);
  bool* target = nullptr;
  if (key == "cache") {
    target = &request.code_cache;
  } else if (key == "tier-up") {
    target = &request.tier_up;
  } else {
    return std::unexpected(
        UsageError{"-C '" + std::string(key) + "': unknown option (supported: cache=y|n, tier-up=y|n)"});
  }
  if (value == "y" || value == "yes" || value == "true" || value.empty()) {
    *target = true;
  } else if (value == "n" || value == "no" || value == "false") {
    *target = false;
  } else {
    return std::unexpected(UsageError{"-C " + std::string(key) + "='" + std::string(value) + "': expected y or n"});
  }
  return {};
}

// "-W a=1,b=2" / "-Wa=1": each item of the comma-separated list through `apply`.
template <class Apply>
std::expected<void, UsageError> apply_list(std::string_view list, Apply apply) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (auto r = apply(list.substr(0, comma)); !r) return r;
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return {};
}

}  // namespace

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) ++digits;
  if (digits == 0) return std::nullopt;
  const std::string number(text.substr(0, digits));
  const std::string_view unit = text.substr(digits);
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || value < 0) return std::nullopt;
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ns") scale = 1;
  else if (unit == "m") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  else return std::nullopt;
  const double ns = value * scale;
  if (ns > 9.2e18) return std::nullopt;
  return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  auto number = parse_u64(text.substr(0, digits));
  if (!number) return std::nullopt;
  const std::string_view unit = text.substr(digits);
  unsigned shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "KiB" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "MiB") shift = 20;
  else if (unit == "G" || unit == "GiB") shift = 30;
  else return std::nullopt;
  if (shift != 0 && *number > (std::uint64_t{1} << (64 - shift)) - 1) return std::nullopt;
  return *number << shift;
}

std::expected<RunRequest, UsageError> parse_run(std::span<const std::string_view> args, bool module_required) {
  RunRequest request;
  std::size_t i = 0;
  auto take_value = [&](std::string_view flag, std::string_view arg) -> std::expected<std::string_view, UsageError> {
    if (auto eq = arg.find('='); eq != std::string_view::npos && arg.starts_with("--")) return arg.substr(eq + 1);
    // A following option is not taken as the value: `--json -c` must not write a file named "-c".
    if (i + 1 >= args.size() || (args[i + 1].starts_with("-") && args[i + 1] != "-")) {
      return std::unexpected(UsageError{std::string(flag) + " needs a value"});
    }
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (!arg.starts_with("-") || arg == "-") break;  // the module (run) or the first guest argument (python)
    const std::string_view flag = arg.substr(0, arg.find('='));
    if (flag == "--dir") {
      auto value = take_value(flag, arg);
      if (!value) return std::unexpected(value.error());
      auto mount = parse_dir(*value);
      if (!mount) return std::unexpected(mount.error());
      request.mounts.push_back(std::move(*mount));
    } else if (flag == "--env") {
      auto value = take_value(flag, arg);
      if (!value) return std::unexpected(value.error());
      const auto eq = value->find('=');
      if (eq == 0 || value->empty()) {
        return std::unexpected(UsageError{"--env '" + std::string(*value) + "': expected --env NAME=VALUE or --env NAME"});
      }
      if (eq == std::string_view::npos) {
        // Wasmtime: --env NAME copies that one variable from the host, skipped if unset.
        if (const char* host_value = std::getenv(std::string(*value).c_str())) {
          request.env.emplace_back(std::string(*value), host_value);
        }
      } else {
        request.env.emplace_back(std::string(value->substr(0, eq)), std::string(value->substr(eq + 1)));
      }
    } else if (flag == "--fuel" || flag == "--max-memory-size" || flag == "--timeout" ||
               flag == "--max-table-elements" || flag == "--max-tables" || flag == "--max-memories" ||
               flag == "--max-store-size") {
      // The long form of a -W option: --KEY VALUE is -W KEY=VALUE.
      auto value = take_value(flag, arg);
      if (!value) return std::unexpected(value.error());
      if (auto r = apply_wasm_option(request, std::string(flag.substr(2)) + "=" + std::string(*value)); !r) {
        return std::unexpected(r.error());
      }
    } else if (flag == "--hostcall-fuel" || flag == "--max-disk-write") {
      auto value = take_value(flag, arg);
      if (!value) return std::unexpected(value.error());
      if (auto r = apply_wasi_option(request, std::string(flag.substr(2)) + "=" + std::string(*value)); !r) {
        return std::unexpected(r.error());
      }
    } else if (flag == "--tier") {
      auto value = take_value(flag, arg);
      if (!value) return std::unexpected(value.error());
      if (*value == "interpret") {
        request.tier = runtime::ExecutionTier::Interpret;
      } else if (*value == "compile") {
        request.tier = runtime::ExecutionTier::Compile;
      } else if (*value == "auto") {
        request.tier = runtime::ExecutionTier::Auto;
      } else {
        return std::unexpected(UsageError{"--tier '" + std::string(*value) + "': expected auto, interpret or compile"});
      }
    } else if (flag == "--cache" || flag == "--tier-up") {
      // The long form of a -C option: --KEY VALUE is -C KEY=VALUE.
      auto value = take_value(flag, arg);
      if (!value) return std::unexpected(value.error());
      if (auto r = apply_codegen_option(request, std::string(flag.substr(2)) + "=" + std::string(*value)); !r)
        return std::unexpected(r.error());
    } else if (flag == "--json") {
      auto value = take_value(flag, arg);
      if (!value) return std::unexpected(value.error());
      request.json_path = std::string(*value);
    } else if (flag == "--stdin") {
      auto value = take_value(flag, arg);
      if (!value) return std::unexpected(value.error());
      request.stdin_path = std::string(*value);
    } else if (module_required && (arg.starts_with("-W") || arg.starts_with("-S") || arg.starts_with("-C"))) {
      std::string_view list;
      if (arg.size() == 2) {
        if (i + 1 >= args.size()) return std::unexpected(UsageError{std::string(arg) + " needs KEY=VALUE"});
        list = args[++i];
      } else {
        list = arg.substr(2);
      }
      // -W, -S and -C take comma-separated lists, as in Wasmtime: -W fuel=100,timeout=1s
      const char group = arg[1];
      auto r = group == 'W'   ? apply_list(list, [&](std::string_view o) { return apply_wasm_option(request, o); })
               : group == 'S' ? apply_list(list, [&](std::string_view o) { return apply_wasi_option(request, o); })
                              : apply_list(list, [&](std::string_view o) { return apply_codegen_option(request, o); });
      if (!r) return std::unexpected(r.error());
    } else if (!module_required) {
      break;  // python mode: the first option that is not ours starts the interpreter's arguments
    } else {
      return std::unexpected(UsageError{"unknown option '" + std::string(arg) + "' (see --help)"});
    }
  }
  if (module_required) {
    if (i >= args.size()) return std::unexpected(UsageError{"missing MODULE (a .wasm or .wat file)"});
    request.module = std::string(args[i++]);
  }
  for (; i < args.size(); ++i) request.args.emplace_back(args[i]);
  for (std::size_t a = 0; a < request.mounts.size(); ++a) {
    for (std::size_t b = a + 1; b < request.mounts.size(); ++b) {
      if (request.mounts[a].guest == request.mounts[b].guest) {
        return std::unexpected(UsageError{"--dir: guest path '" + request.mounts[a].guest + "' is mounted twice"});
      }
    }
  }
  return request;
}

std::filesystem::path user_cache_folder(const char* env_var, std::string_view leaf) {
  if (const char* dir = std::getenv(env_var); dir != nullptr && *dir != '\0') return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    return std::filesystem::path(xdg) / "sprawling" / leaf;
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return std::filesystem::path(home) / ".cache" / "sprawling" / leaf;
  }
  return {};
}

}  // namespace sprawling::cli
