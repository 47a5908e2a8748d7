// Running one job from the command line: shared by `sprawl run` and `sprawl python`.
#pragma once

#include "cli/options.hpp"

#include <expected>
#include <optional>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sprawling::cli {

// The guest's stdin, streamed on demand: --stdin FILE (opened here, closed with this), else this
// process's stdin unless it is a terminal or closed (then no fd: the guest reads EOF).
struct GuestStdin {
  std::optional<int> fd;
  int owned = -1;
  GuestStdin() = default;
  GuestStdin(GuestStdin&& other) noexcept : fd(other.fd), owned(std::exchange(other.owned, -1)) {}
  GuestStdin(const GuestStdin&) = delete;
  GuestStdin& operator=(const GuestStdin&) = delete;
  GuestStdin& operator=(GuestStdin&&) = delete;
  ~GuestStdin();
};
[[nodiscard]] std::expected<GuestStdin, std::string> open_stdin_for_guest(const RunRequest& request);

// [start-up] Whether the process leaves right after its job without tearing down what it loaded
// (SandboxConfig::process_exits_after_run, then std::_Exit in main): always, except when
// SPRAWLING_JIT_STATS asks the compiled tier for its statistics, which it prints when a module's
// code is destroyed.
[[nodiscard]] bool exit_without_teardown();

// [start-up] For a process that runs one job and exits without teardown (exit_without_teardown):
// malloc's heap on transparent huge pages, as glibc's `glibc.malloc.hugetlb=1` tunable would do
// (which only the environment can set, before the process starts). A `sprawl python` job fills
// ~6 MB of heap (the decoded module, 8,124 function instances, the code copied from the snapshot
// file): ~1,500 page faults on 4 KiB pages, a few on 2 MiB ones (docs/python.md). The heap grows
// once by 64 MiB of address space (untouched pages cost nothing), blocks up to 32 MiB come from
// it rather than from mappings of their own, and it is never trimmed. Where the kernel's THP
// setting is `never`, or under a sanitizer, it changes nothing that matters.
void heap_on_huge_pages();

// Runs `wasm_path` with `argv`, the request's options, and `extra_mounts` before the request's
// own; streams output, prints a one-line reason for a non-success ending, writes --json;
// returns the exit status. [snapshots] `snapshot` and `snapshot_dir`: SandboxJob::snapshot and
// SandboxConfig::snapshot_dir (`sprawl run` starts cold).
int run_job(const RunRequest& request, std::vector<std::string> argv, std::vector<runtime::Mount> extra_mounts,
            std::string_view wasm_path, runtime::SnapshotPolicy snapshot = {.enabled = false, .init_mounts = 0},
            std::filesystem::path snapshot_dir = {});

}  // namespace sprawling::cli
