// Command-line parsing for `sprawl run` / `sprawl python`: Wasmtime's spellings turned into a
// SandboxJob + SandboxConfig, with one clear message per malformed argument.
#pragma once

#include <sprawling/runtime/wasm_sandbox.hpp>

#include <cstdint>
#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::cli {

// What `sprawl run` was asked to do.
struct RunRequest {
  std::string module;             // path of the .wasm / .wat
  std::vector<std::string> args;  // guest arguments after the module (argv[1..])
  std::vector<runtime::Mount> mounts;
  std::vector<std::pair<std::string, std::string>> env;
  std::optional<std::uint64_t> fuel;              // empty: fuel not metered
  std::optional<std::uint64_t> max_memory_bytes;  // empty: the engine's default (4 GiB)
  std::optional<std::chrono::nanoseconds> timeout;
  std::optional<std::uint64_t> hostcall_copy_limit;  // empty: the sandbox's default (128 MiB)
  // Empty: the sandbox's defaults (SandboxConfig).
  std::optional<std::uint32_t> max_table_elements;
  std::optional<std::uint32_t> max_tables;
  std::optional<std::uint32_t> max_memories;
  std::optional<std::uint64_t> max_store_bytes;
  std::optional<std::uint64_t> compile_memory;  // -W compile-memory (run): the lazy compile's heap limit
  std::optional<std::uint64_t> max_disk_write_bytes;
  std::optional<std::string> json_path;           // "-" = stderr
  std::optional<std::string> stdin_path;          // --stdin FILE; default: the CLI's own stdin
  runtime::ExecutionTier tier = runtime::ExecutionTier::Auto;  // --tier
  bool code_cache = true;                                        // -C cache=y|n, --cache y|n
  bool tier_up = true;                                           // -C tier-up=y|n, --tier-up y|n
  bool simd = true;                                              // -W simd=y|n
  bool tail_call = true;       // -W tail-call=y|n
  bool exceptions = true;      // -W exceptions=y|n
  bool function_references = true;  // -W function-references=y|n
  bool gc = true;              // -W gc=y|n
  bool extended_const = true;  // -W extended-const=y|n
  bool relaxed_simd = true;    // -W relaxed-simd=y|n
  bool nan_canonicalization = false;  // -W nan-canonicalization=y|n
  bool multi_memory = true;    // -W multi-memory=y|n
  bool memory64 = true;        // -W memory64=y|n
};

// A usage error: what was wrong and the accepted form.
struct UsageError {
  std::string message;
};

// Parses the options of `sprawl run` (and `sprawl python`, with module_required = false: then
// the first argument that is not one of our long options — `-c`, a script, or anything after
// `--` — starts the interpreter's arguments; -W belongs to Python there, so use the long forms).
[[nodiscard]] std::expected<RunRequest, UsageError> parse_run(std::span<const std::string_view> args,
                                                              bool module_required = true);

// A per-user cache folder: $ENV_VAR, else $XDG_CACHE_HOME/sprawling/LEAF, else
// ~/.cache/sprawling/LEAF; empty when none can be named.
[[nodiscard]] std::filesystem::path user_cache_folder(const char* env_var, std::string_view leaf);

// "500ms", "2s", "1m", "1.5s", "250us", "10ns"; a bare number is seconds.
[[nodiscard]] std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);
// Bytes, with an optional binary suffix: 65536, 64K, 256M, 4G (also KiB/MiB/GiB).
[[nodiscard]] std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace sprawling::cli
