// WasiContext: the function list (all 46 of preview1, with their signatures, and nothing else),
// setup errors naming the failing mount, the fd layout (stdio, then preopens in order).
#include "wasi_test_support.hpp"

#include <algorithm>
#include <set>

namespace sprawling::wasi::test {
namespace {

using wasm::ValType;

TEST(WasiContext, FunctionsAreExactlyPreview1) {
  const std::set<std::string> expected = {
      "args_get", "args_sizes_get", "environ_get", "environ_sizes_get", "clock_res_get", "clock_time_get",
      "fd_advise", "fd_allocate", "fd_close", "fd_datasync", "fd_fdstat_get", "fd_fdstat_set_flags",
      "fd_fdstat_set_rights", "fd_filestat_get", "fd_filestat_set_size", "fd_filestat_set_times", "fd_pread",
      "fd_prestat_get", "fd_prestat_dir_name", "fd_pwrite", "fd_read", "fd_readdir", "fd_renumber", "fd_seek",
      "fd_sync", "fd_tell", "fd_write", "path_create_directory", "path_filestat_get", "path_filestat_set_times",
      "path_link", "path_open", "path_readlink", "path_remove_directory", "path_rename", "path_symlink",
      "path_unlink_file", "poll_oneoff", "proc_exit", "proc_raise", "random_get", "sched_yield", "sock_accept",
      "sock_recv", "sock_send", "sock_shutdown"};
  ASSERT_EQ(expected.size(), 46u);
  std::set<std::string> names;
  for (const auto& def : WasiContext::functions()) {
    EXPECT_EQ(def.module, "wasi_snapshot_preview1");
    EXPECT_NE(def.fn, nullptr) << def.name;
    names.insert(std::string(def.name));
  }
  EXPECT_EQ(WasiContext::functions().size(), 46u);
  EXPECT_EQ(names, expected);
  for (const char* absent : {"sock_open", "sock_connect", "sock_bind", "sock_listen"}) {
    EXPECT_EQ(names.count(absent), 0u) << absent;
  }
}

TEST(WasiContext, SignaturesMatchTheWitx) {
  auto type_of = [](std::string_view name) {
    for (const auto& def : WasiContext::functions()) {
      if (def.name == name) return def.type;
    }
    return wasm::FuncType{};
  };
  const ValType I = ValType::I32, J = ValType::I64;
  EXPECT_EQ(type_of("path_open"), (wasm::FuncType{{I, I, I, I, I, J, J, I, I}, {I}}));
  EXPECT_EQ(type_of("fd_seek"), (wasm::FuncType{{I, J, I, I}, {I}}));
  EXPECT_EQ(type_of("clock_time_get"), (wasm::FuncType{{I, J, I}, {I}}));
  EXPECT_EQ(type_of("fd_readdir"), (wasm::FuncType{{I, I, I, J, I}, {I}}));
  EXPECT_EQ(type_of("path_filestat_set_times"), (wasm::FuncType{{I, I, I, I, J, J, I}, {I}}));
  EXPECT_EQ(type_of("proc_exit"), (wasm::FuncType{{I}, {}}));
  EXPECT_EQ(type_of("sched_yield"), (wasm::FuncType{{}, {I}}));
  EXPECT_EQ(type_of("sock_recv"), (wasm::FuncType{{I, I, I, I, I, I}, {I}}));
  EXPECT_EQ(type_of("fd_advise"), (wasm::FuncType{{I, J, J, I}, {I}}));
}

TEST(WasiContext, MissingMountIsNamed) {
  TempTree tree;
  WasiConfig config;
  config.preopens.push_back({tree.root(), "/ok", true});
  config.preopens.push_back({tree.path("nope"), "/bad", false});
  auto created = WasiContext::create(std::move(config));
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().kind, WasiSetupError::Kind::PreopenOpen);
  EXPECT_EQ(created.error().preopen_index, 1u);
  EXPECT_EQ(created.error().guest, "/bad");
  EXPECT_EQ(created.error().os_errno, ENOENT);
  EXPECT_NE(created.error().message.find("/bad"), std::string::npos);
}

TEST(WasiContext, MountOnAFileIsNotADirectory) {
  TempTree tree;
  tree.file("f", "x");
  WasiConfig config;
  config.preopens.push_back({tree.path("f"), "/f", true});
  auto created = WasiContext::create(std::move(config));
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().kind, WasiSetupError::Kind::PreopenNotDirectory);
}

TEST(WasiContext, GuestNameMustBeUsable) {
  TempTree tree;
  WasiConfig config;
  config.preopens.push_back({tree.root(), "", true});
  auto created = WasiContext::create(std::move(config));
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().kind, WasiSetupError::Kind::PreopenGuestName);
}

TEST(WasiContext, TooManyPreopensForTheTable) {
  TempTree tree;
  WasiConfig config;
  config.max_fds = 4;
  config.preopens.push_back({tree.root(), "/a", true});
  config.preopens.push_back({tree.root(), "/b", true});
  auto created = WasiContext::create(std::move(config));
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().kind, WasiSetupError::Kind::TooManyPreopens);
}

TEST(WasiContext, StdioThenPreopensInMountOrder) {
  TempTree tree;
  tree.dir("a");
  tree.dir("b");
  WasiConfig config;
  config.preopens.push_back({tree.path("a"), "/first", true});
  config.preopens.push_back({tree.path("b"), "/second", false});
  FakeGuest guest(std::move(config));
  EXPECT_EQ(guest.context().open_fd_count(), 5u);
  const std::uint32_t prestat = guest.alloc(8, 4);
  const std::uint32_t name = guest.alloc(64, 1);
  for (std::uint32_t fd : {0u, 1u, 2u}) EXPECT_EQ(guest.errno_of("fd_prestat_get", {fd, prestat}), e::badf);
  ASSERT_EQ(guest.errno_of("fd_prestat_get", {3, prestat}), e::success);
  EXPECT_EQ(guest.u8_at(prestat), 0u);  // preopentype dir
  EXPECT_EQ(guest.u32_at(prestat + 4), 6u);
  ASSERT_EQ(guest.errno_of("fd_prestat_dir_name", {3, name, 6}), e::success);
  EXPECT_EQ(guest.bytes_at(name, 6), "/first");
  ASSERT_EQ(guest.errno_of("fd_prestat_get", {4, prestat}), e::success);
  EXPECT_EQ(guest.u32_at(prestat + 4), 7u);
  ASSERT_EQ(guest.errno_of("fd_prestat_dir_name", {4, name, 64}), e::success);
  EXPECT_EQ(guest.bytes_at(name, 7), "/second");
  EXPECT_EQ(guest.errno_of("fd_prestat_get", {5, prestat}), e::badf);
}

TEST(WasiContext, NoHostFdOutlivesTheContext) {
  TempTree tree;
  tree.file("f", "data");
  const std::size_t before = host_fd_count();
  {
    FakeGuest guest(config_with_mount(tree.root(), true));
    std::uint32_t fd = 0;
    ASSERT_EQ(guest.open(3, "f", &fd), e::success);
    EXPECT_GT(host_fd_count(), before);
  }
  EXPECT_EQ(host_fd_count(), before);
}

}  // namespace
}  // namespace sprawling::wasi::test
