// SHA-256 (src/wasm/support/sha256.cpp): FIPS 180-4's example digests, the accelerated and portable
// code agreeing on every length around the block and padding boundaries, and the build-id.
#include "wasm/support/sha256.hpp"
#include "wasm/support/build_id.hpp"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace sprawling::wasm {
namespace {

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TEST(Sha256, StandardExamples) {
  EXPECT_EQ(to_hex(sha256(bytes_of(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256(bytes_of("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256(bytes_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::vector<std::uint8_t> million(1'000'000, 'a');
  EXPECT_EQ(to_hex(sha256(million)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(to_hex(sha256_portable(million)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, AcceleratedAndPortableAgreeAtEveryLengthAroundTheBlocks) {
  std::vector<std::uint8_t> data(300);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 131 + 7);
  for (std::size_t n = 0; n <= data.size(); ++n) {
    const auto part = std::span<const std::uint8_t>(data).first(n);
    ASSERT_EQ(sha256(part), sha256_portable(part)) << n << " bytes (accelerated: " << sha256_accelerated() << ")";
  }
}

// Debian's toolchain links with --build-id: the engine knows which build it is.
TEST(Sha256, TheEngineBinaryHasABuildId) {
  EXPECT_GE(engine_build_id().size(), 16u);
  EXPECT_EQ(engine_build_id().data(), engine_build_id().data());  // found once
}

}  // namespace
}  // namespace sprawling::wasm
