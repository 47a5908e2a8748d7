// Test support for the WASI host: temporary trees, tree fingerprints, fd counting, and the
// vector-backed fake guest that calls the host functions directly.
#include "wasi_test_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace sprawling::wasi::test {

TempTree::TempTree() {
  std::string pattern = (fs::temp_directory_path() / "sprawling-wasi-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = pattern;
}

TempTree::~TempTree() {
  std::error_code ec;
  // Make every directory writable again first (tests may have changed modes).
  for (auto it = fs::recursive_directory_iterator(root_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
  }
  fs::remove_all(root_, ec);
}

void TempTree::file(std::string_view rel, std::string_view content) const {
  std::ofstream out(path(rel), std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}
void TempTree::dir(std::string_view rel) const { fs::create_directories(path(rel)); }
void TempTree::symlink(std::string_view target, std::string_view rel) const {
  fs::create_symlink(fs::path(target), path(rel));
}
std::string TempTree::read(std::string_view rel) const {
  std::ifstream in(path(rel), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
bool TempTree::exists(std::string_view rel) const {
  struct stat st {};
  return ::lstat(path(rel).c_str(), &st) == 0;
}

std::string tree_fingerprint(const fs::path& root) {
  std::map<std::string, std::string> entries;
  auto describe = [](const fs::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return std::string("missing");
    std::ostringstream out;
    out << "mode=" << std::oct << st.st_mode << std::dec << " nlink=" << st.st_nlink
        << " mtime=" << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec;
    if (S_ISREG(st.st_mode)) {
      std::ifstream in(p, std::ios::binary);
      std::stringstream content;
      content << in.rdbuf();
      out << " size=" << st.st_size << " content=" << content.str();
    } else if (S_ISLNK(st.st_mode)) {
      out << " target=" << fs::read_symlink(p).string();
    }
    return out.str();
  };
  entries["."] = describe(root);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    entries[it->path().lexically_relative(root).string()] = describe(it->path());
  }
  std::string all;
  for (const auto& [name, what] : entries) all.append(name).append(": ").append(what).append("\n");
  return all;
}

std::size_t host_fd_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

FakeGuest::FakeGuest(WasiConfig config, std::size_t memory_bytes) : memory_(memory_bytes, 0) {
  auto created = WasiContext::create(std::move(config));
  if (!created) throw std::runtime_error("WasiContext::create: " + created.error().message);
  context_ = std::move(*created);
}

CallOutcome FakeGuest::call(std::string_view name, std::initializer_list<std::uint64_t> args) {
  for (const wasm::HostFunctionDef& def : WasiContext::functions()) {
    if (def.name != name) continue;
    EXPECT_EQ(args.size(), def.type.params.size()) << name << ": wrong argument count in the test";
    std::vector<std::uint64_t> slots(args);
    std::vector<std::uint64_t> results(def.type.results.size(), 0xDEAD);
    wasm::HostCall hc{slots, results, wasm::MemoryView{memory_.data(), memory_.size()}, context_.get(), {}, 0};
    CallOutcome out;
    out.status = def.fn(hc);
    out.errno_value = results.empty() ? 0 : static_cast<std::uint16_t>(results[0]);
    out.trap_message = hc.trap_message;
    out.exit_code = hc.exit_code;
    return out;
  }
  ADD_FAILURE() << "no WASI function named " << name;
  return {wasm::HostStatus::Trap, 0, "unknown function", 0};
}

std::uint16_t FakeGuest::errno_of(std::string_view name, std::initializer_list<std::uint64_t> args) {
  CallOutcome out = call(name, args);
  EXPECT_EQ(out.status, wasm::HostStatus::Ok) << name << " trapped: " << out.trap_message;
  return out.errno_value;
}

std::uint32_t FakeGuest::alloc(std::uint32_t size, std::uint32_t align) {
  next_ = (next_ + align - 1) / align * align;
  const std::uint32_t at = next_;
  next_ += size;
  if (next_ > memory_.size()) throw std::runtime_error("fake guest memory exhausted");
  return at;
}

std::uint32_t FakeGuest::put(std::string_view bytes) {
  const std::uint32_t at = alloc(static_cast<std::uint32_t>(bytes.size()) + 1, 1);
  std::memcpy(memory_.data() + at, bytes.data(), bytes.size());
  return at;
}

std::uint32_t FakeGuest::u32_at(std::uint32_t ptr) const {
  std::uint32_t v = 0;
  std::memcpy(&v, memory_.data() + ptr, 4);
  return v;
}
std::uint64_t FakeGuest::u64_at(std::uint32_t ptr) const {
  std::uint64_t v = 0;
  std::memcpy(&v, memory_.data() + ptr, 8);
  return v;
}
std::uint16_t FakeGuest::u16_at(std::uint32_t ptr) const {
  std::uint16_t v = 0;
  std::memcpy(&v, memory_.data() + ptr, 2);
  return v;
}
std::string FakeGuest::bytes_at(std::uint32_t ptr, std::uint32_t len) const {
  return std::string(reinterpret_cast<const char*>(memory_.data()) + ptr, len);
}
void FakeGuest::set_u32(std::uint32_t ptr, std::uint32_t v) { std::memcpy(memory_.data() + ptr, &v, 4); }
void FakeGuest::set_bytes(std::uint32_t ptr, std::string_view bytes) {
  std::memcpy(memory_.data() + ptr, bytes.data(), bytes.size());
}

std::uint16_t FakeGuest::open(std::uint32_t dirfd, std::string_view path, std::uint32_t* fd_out, std::uint32_t oflags,
                              std::uint64_t rights, std::uint32_t fdflags, std::uint32_t lookupflags) {
  const std::uint32_t p = put(path);
  const std::uint32_t out = alloc(4, 4);
  const std::uint16_t err = errno_of("path_open", {dirfd, lookupflags, p, path.size(), oflags, rights, rights, fdflags, out});
  if (fd_out != nullptr) *fd_out = err == 0 ? u32_at(out) : UINT32_MAX;
  return err;
}

std::uint16_t FakeGuest::write(std::uint32_t fd, std::string_view data, std::uint32_t* written) {
  const std::uint32_t buf = put(data);
  const std::uint32_t iov = alloc(8, 4);
  set_u32(iov, buf);
  set_u32(iov + 4, static_cast<std::uint32_t>(data.size()));
  const std::uint32_t out = alloc(4, 4);
  const std::uint16_t err = errno_of("fd_write", {fd, iov, 1, out});
  if (written != nullptr) *written = u32_at(out);
  return err;
}

std::uint16_t FakeGuest::pwrite(std::uint32_t fd, std::string_view data, std::uint64_t offset) {
  const std::uint32_t buf = put(data);
  const std::uint32_t iov = alloc(8, 4);
  set_u32(iov, buf);
  set_u32(iov + 4, static_cast<std::uint32_t>(data.size()));
  const std::uint32_t out = alloc(4, 4);
  return errno_of("fd_pwrite", {fd, iov, 1, offset, out});
}

std::uint16_t FakeGuest::read(std::uint32_t fd, std::uint32_t max, std::string* text) {
  const std::uint32_t buf = alloc(max, 1);
  const std::uint32_t iov = alloc(8, 4);
  set_u32(iov, buf);
  set_u32(iov + 4, max);
  const std::uint32_t out = alloc(4, 4);
  const std::uint16_t err = errno_of("fd_read", {fd, iov, 1, out});
  if (text != nullptr) *text = err == 0 ? bytes_at(buf, u32_at(out)) : std::string();
  return err;
}

std::uint16_t FakeGuest::path_call(std::string_view name, std::uint32_t fd, std::string_view path) {
  const std::uint32_t p = put(path);
  return errno_of(name, {fd, p, path.size()});
}

WasiConfig config_with_mount(const fs::path& host, bool writable) {
  WasiConfig config;
  config.args = {"guest"};
  config.preopens.push_back(Preopen{host, "/sandbox", writable});
  return config;
}

}  // namespace sprawling::wasi::test
