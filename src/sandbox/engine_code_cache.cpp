// The compiled-code cache's files (engine_code_cache.hpp). Entries verify themselves (the engine checks
// a header with the full key and a checksum on every read): here only atomic replacement, the
// folder's ownership (the cache holds code this process will run) and the size bound.
#include "sandbox/engine_code_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

namespace sprawling::runtime::engine {

namespace {

// A read marks its entry used (its modification time, by which eviction goes) when it was last
// marked longer ago than this.
constexpr std::chrono::hours kTouchEvery{1};

// Names the engine makes: hex digits and ".code"; anything else (a path) is refused.
bool valid_name(std::string_view name) {
  if (!name.ends_with(".code") || name.size() <= 5) return false;
  return std::ranges::all_of(name.substr(0, name.size() - 5),
                             [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The folder holds code that will run: only its owner (this user) may write it.
std::expected<void, std::string> check_folder(const std::filesystem::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return std::unexpected("'" + dir.string() + "': " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return std::unexpected("'" + dir.string() + "' is not a folder");
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return std::unexpected("'" + dir.string() + "' is not owned by this user or is writable by others: not used");
  return {};
}

bool write_all(int fd, std::span<const std::uint8_t> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::uint8_t>> FileCodeCache::read(std::string_view name) {
  if (!valid_name(name) || !check_folder(dir_)) return std::nullopt;
  const std::filesystem::path path = dir_ / name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::vector<std::uint8_t>> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid()) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    bytes.resize(done);  // shorter than fstat said: the entry's own header catches it
    out = std::move(bytes);
    // Recently used: eviction goes by modification time, to the hour; touched at most once an
    // hour, so the entry's identity (below) stays the same between reads meanwhile.
    if (std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec) >
        kTouchEvery)
      ::futimens(fd, nullptr);
  }
  ::close(fd);
  return out;
}

std::optional<std::string> FileCodeCache::identity(std::string_view name) {
  if (!valid_name(name) || !check_folder(dir_)) return std::nullopt;
  struct stat st {};
  if (::lstat((dir_ / name).c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return std::nullopt;
  return std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
         std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

std::expected<void, std::string> FileCodeCache::write(std::string_view name, std::span<const std::uint8_t> bytes) {
  if (!valid_name(name)) return std::unexpected("'" + std::string(name) + "' is not an entry name");
  if (bytes.size() > max_bytes_) {
    return std::unexpected("the entry (" + std::to_string(bytes.size()) + " bytes) is larger than the cache's bound (" +
                           std::to_string(max_bytes_) + " bytes)");
  }
  std::error_code ec;
  if (!std::filesystem::exists(dir_, ec)) {
    std::filesystem::create_directories(dir_, ec);
    if (ec) return std::unexpected("cannot create '" + dir_.string() + "': " + ec.message());
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all, ec);
  }
  if (auto ok = check_folder(dir_); !ok) return ok;
  // A name no other writer uses: concurrent writers of one entry each rename a whole file.
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  const std::string tmp_name = std::string(name) + ".tmp." + std::to_string(::getpid()) + "." +
                               std::to_string(counter.fetch_add(1)) + "." + std::to_string(random() & 0xffffffff);
  const std::filesystem::path tmp = dir_ / tmp_name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return std::unexpected("cannot create '" + tmp.string() + "': " + std::strerror(errno));
  const bool written = write_all(fd, bytes);
  const int saved = errno;
  if (::close(fd) != 0 || !written) {
    ::unlink(tmp.c_str());
    return std::unexpected("cannot write '" + tmp.string() + "': " + std::strerror(written ? errno : saved));
  }
  if (::rename(tmp.c_str(), (dir_ / name).c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return std::unexpected("cannot rename '" + tmp.string() + "' into place: " + why);
  }
  evict(name);
  return {};
}

void FileCodeCache::evict(std::string_view keep) {
  struct Entry {
    std::filesystem::file_time_type used;
    std::uint64_t bytes;
    std::filesystem::path path;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  const auto stale = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    std::error_code fe;
    if (!e.is_regular_file(fe)) continue;
    const std::string name = e.path().filename().string();
    const auto used = e.last_write_time(fe);
    if (fe) continue;
    if (name.find(".code.tmp.") != std::string::npos) {
      if (used < stale) std::filesystem::remove(e.path(), fe);  // a writer that died mid-write
      continue;
    }
    if (!valid_name(name)) continue;
    const std::uint64_t bytes = e.file_size(fe);
    if (fe) continue;
    total += bytes;
    if (name != keep) entries.push_back({used, bytes, e.path()});
  }
  if (total <= max_bytes_) return;
  std::ranges::sort(entries, {}, &Entry::used);
  const std::uint64_t target = max_bytes_ / 10 * 7;
  for (const Entry& e : entries) {
    if (total <= target) break;
    std::error_code re;
    if (std::filesystem::remove(e.path, re)) total -= e.bytes;
  }
}

}  // namespace sprawling::runtime::engine
