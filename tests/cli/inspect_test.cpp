// `sprawl inspect --internal` through the real binary: what it prints for a module and a
// function, and its usage errors and exit statuses.
#include "tests/cli/process.hpp"
#include "tests/engine/guest.hpp"

#include <gtest/gtest.h>

namespace sprawling::cli {
namespace {

using test::TempDir;

test::ProcessResult sprawl(std::vector<std::string> args) {
  args.insert(args.begin(), SPRAWL_BINARY);
  return test::run_process(args);
}

constexpr std::string_view kModule = R"((module
  (import "env" "f" (func $imported))
  (func $sum (export "sum") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
  (func $spin (export "spin") (loop $l (br $l))))
)";

TEST(Inspect, PrintsEveryDefinedFunctionOrOneByIndexOrName) {
  TempDir dir;
  const auto wat = dir.write("m.wat", kModule).string();
  const auto all = sprawl({"inspect", "--internal", wat});
  EXPECT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(all.out,
            "func 1 $sum (unmetered): params 2, locals 0, results 1, frame 4 slots, 5 words\n"
            "      0  NumI32Add     dst=p0 a=p0 b=p1\n"
            "      4  Return\n"
            "\n"
            "func 2 $spin (unmetered): params 0, locals 0, results 0, frame 0 slots, 3 words\n"
            "      0  Br            off=0->@0\n"
            "      2  Return\n");
  const auto by_index = sprawl({"inspect", "--internal", "--metered", wat, "2"});
  EXPECT_EQ(by_index.status, 0) << by_index.err;
  EXPECT_EQ(by_index.out,
            "func 2 $spin (metered): params 0, locals 0, results 0, frame 0 slots, 11 words\n"
            "      0  FuelCheck     cost=1 visible=1  ; traps @0x41\n"
            "      3  FuelCheck     cost=1 visible=0  ; traps @0x41\n"
            "      6  Br            off=-3->@3\n"
            "      8  Fuel          cost=0\n"  // the unreachable join after the loop: dead code
            "     10  Return\n");
  const auto by_export = sprawl({"inspect", "--internal", wat, "sum"});
  EXPECT_EQ(by_export.status, 0);
  EXPECT_EQ(by_export.out.substr(0, 13), "func 1 $sum (");
}

TEST(Inspect, UsageErrorsAre128AndBadModules132) {
  TempDir dir;
  const auto wat = dir.write("m.wat", kModule).string();
  const auto bad = dir.write("bad.wasm", std::string("\0asm\x01\0\0\0\x0a\x01", 10)).string();
  EXPECT_EQ(sprawl({"inspect", "--help"}).status, 0);
  const auto no_view = sprawl({"inspect", wat});
  EXPECT_EQ(no_view.status, 128);
  EXPECT_NE(no_view.err.find("--internal"), std::string::npos) << no_view.err;
  EXPECT_EQ(sprawl({"inspect", "--internal"}).status, 128);
  EXPECT_EQ(sprawl({"inspect", "--internal", dir.path().string() + "/absent.wasm"}).status, 128);
  const auto missing = sprawl({"inspect", "--internal", wat, "nosuch"});
  EXPECT_EQ(missing.status, 128);
  EXPECT_NE(missing.err.find("no function 'nosuch'"), std::string::npos) << missing.err;
  const auto imported = sprawl({"inspect", "--internal", wat, "0"});
  EXPECT_EQ(imported.status, 128);
  EXPECT_NE(imported.err.find("function 0 is imported"), std::string::npos) << imported.err;
  const auto malformed = sprawl({"inspect", "--internal", bad});
  EXPECT_EQ(malformed.status, 132);
  EXPECT_NE(malformed.err.find("malformed at byte 0x"), std::string::npos) << malformed.err;
}

}  // namespace
}  // namespace sprawling::cli
