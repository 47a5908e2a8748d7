// Test support for the WASI host: a temporary host tree with a content hash, and a fake guest
// (a std::vector as linear memory) that calls the wasi_snapshot_preview1 functions directly.
#pragma once

#include "wasi/abi.hpp"
#include "wasi/wasi.hpp"
#include "wasm/runtime/host.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasi::test {

namespace fs = std::filesystem;
namespace e = abi::errno_;
namespace r = abi::rights;

// A fresh directory under the temp dir, removed (without following links) at the end.
class TempTree {
 public:
  TempTree();
  ~TempTree();
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  [[nodiscard]] const fs::path& root() const noexcept { return root_; }
  fs::path path(std::string_view rel) const { return root_ / rel; }
  void file(std::string_view rel, std::string_view content) const;
  void dir(std::string_view rel) const;
  void symlink(std::string_view target, std::string_view rel) const;
  [[nodiscard]] std::string read(std::string_view rel) const;
  [[nodiscard]] bool exists(std::string_view rel) const;  // without following a final symlink

 private:
  fs::path root_;
};

// Everything a guest could change, for the whole tree: names, types, modes, sizes, link counts,
// contents, link targets and modification times (not access times, which reads may touch).
[[nodiscard]] std::string tree_fingerprint(const fs::path& root);

// Host fds open in this process right now.
[[nodiscard]] std::size_t host_fd_count();

struct CallOutcome {
  wasm::HostStatus status = wasm::HostStatus::Ok;
  std::uint16_t errno_value = 0;
  std::string trap_message;
  std::uint32_t exit_code = 0;
};

class FakeGuest {
 public:
  explicit FakeGuest(WasiConfig config, std::size_t memory_bytes = 4 << 20);

  [[nodiscard]] WasiContext& context() { return *context_; }

  // The raw call: any ending.
  CallOutcome call(std::string_view name, std::initializer_list<std::uint64_t> args);
  // A call that must return normally: its errno.
  std::uint16_t errno_of(std::string_view name, std::initializer_list<std::uint64_t> args);

  // Guest memory: a bump allocator over the vector (starting at 1024), and typed access.
  std::uint32_t alloc(std::uint32_t size, std::uint32_t align = 8);
  std::uint32_t put(std::string_view bytes);  // copies bytes (no NUL added)
  [[nodiscard]] std::uint32_t u32_at(std::uint32_t ptr) const;
  [[nodiscard]] std::uint64_t u64_at(std::uint32_t ptr) const;
  [[nodiscard]] std::uint16_t u16_at(std::uint32_t ptr) const;
  [[nodiscard]] std::uint8_t u8_at(std::uint32_t ptr) const { return memory_.at(ptr); }
  [[nodiscard]] std::string bytes_at(std::uint32_t ptr, std::uint32_t len) const;
  void set_u32(std::uint32_t ptr, std::uint32_t v);
  void set_bytes(std::uint32_t ptr, std::string_view bytes);
  [[nodiscard]] std::uint32_t memory_size() const { return static_cast<std::uint32_t>(memory_.size()); }
  [[nodiscard]] wasm::MemoryView view() { return wasm::MemoryView{memory_.data(), memory_.size()}; }

  // Conveniences over path_open / fd_write / fd_read. They return the errno; *fd_out / the
  // text are only meaningful on success.
  std::uint16_t open(std::uint32_t dirfd, std::string_view path, std::uint32_t* fd_out,
                     std::uint32_t oflags = 0, std::uint64_t rights = r::fd_read | r::fd_seek | r::fd_readdir,
                     std::uint32_t fdflags = 0, std::uint32_t lookupflags = abi::lookupflags::symlink_follow);
  std::uint16_t write(std::uint32_t fd, std::string_view data, std::uint32_t* written = nullptr);
  std::uint16_t pwrite(std::uint32_t fd, std::string_view data, std::uint64_t offset);
  std::uint16_t read(std::uint32_t fd, std::uint32_t max, std::string* out);
  // A path call of the shape (fd, path, path_len).
  std::uint16_t path_call(std::string_view name, std::uint32_t fd, std::string_view path);

 private:
  std::unique_ptr<WasiContext> context_;
  std::vector<std::uint8_t> memory_;
  std::uint32_t next_ = 1024;
};

// A config with one preopen (fd 3) of `host` named "/sandbox".
WasiConfig config_with_mount(const fs::path& host, bool writable);

}  // namespace sprawling::wasi::test
