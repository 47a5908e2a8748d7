// The translator's rewrites keep wasm semantics: lazy operands, folded address adds (still
// wrapping at 2^32), reassociation, retargeted results, fused compare-branches, branch copies.
// Each runs unmetered and metered (two translations).
#include "wasm/engine_fixtures.hpp"

namespace sprawling::wasm {
namespace {

using testing::compile_fixture;
using testing::export_func;

class TranslatorTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    module_ = compile_fixture("translator");
    ASSERT_TRUE(module_);
    auto inst = store_.instantiate(module_, {});
    ASSERT_TRUE(inst.has_value()) << inst.error().message;
    instance_ = *inst;
    if (GetParam()) store_.set_budget(ExecutionBudget{1'000'000'000, std::nullopt});
  }
  std::vector<std::uint64_t> call(std::string_view name, std::vector<Value> args) {
    auto r = store_.invoke(export_func(*instance_, name), args);
    EXPECT_TRUE(r.has_value()) << name << ": " << (r ? "" : r.error().message);
    std::vector<std::uint64_t> bits;
    if (r)
      for (const Value& v : *r) bits.push_back(v.bits);
    return bits;
  }
  std::uint64_t call1(std::string_view name, std::vector<Value> args) {
    auto r = call(name, std::move(args));
    return r.empty() ? ~std::uint64_t{0} : r[0];
  }

  Store store_;
  std::shared_ptr<const CompiledModule> module_;
  Instance* instance_ = nullptr;
};

TEST_P(TranslatorTest, FoldedAddressAddStillWraps) {
  EXPECT_EQ(call1("load_wrap", {Value::i32(0xFFFFFFFFu)}), 1u);
  EXPECT_EQ(call1("load_wrap", {Value::i32(2)}), 4u);
  auto oob = store_.invoke(export_func(*instance_, "load_wrap"), std::vector{Value::i32(65535)});
  ASSERT_FALSE(oob.has_value());
  EXPECT_EQ(oob.error().kind, TrapKind::OutOfBoundsMemoryAccess);
}

TEST_P(TranslatorTest, ConstantAddresses) {
  EXPECT_EQ(call1("abs_load", {}), 6u);
  auto oob = store_.invoke(export_func(*instance_, "abs_store_oob"), std::vector{Value::i32(1)});
  ASSERT_FALSE(oob.has_value());
  EXPECT_EQ(oob.error().kind, TrapKind::OutOfBoundsMemoryAccess);
}

TEST_P(TranslatorTest, ReassociatedAddress) {
  EXPECT_EQ(call1("load_reassoc", {Value::i32(1), Value::i32(2)}), 8u);
  EXPECT_EQ(call1("load_reassoc", {Value::i32(0xFFFFFFFCu), Value::i32(0)}), 1u);
}

TEST_P(TranslatorTest, FoldedStoreAddressUsesTheOldLocal) {
  EXPECT_EQ(call1("store_wrap", {Value::i32(0xFFFFFFFFu)}), 99u);
}

TEST_P(TranslatorTest, LazyOperandsSeeOldValues) {
  EXPECT_EQ(call1("old_value", {Value::i32(5)}), static_cast<std::uint32_t>(-10));
  EXPECT_EQ(call1("stale_add", {Value::i32(1)}), 106u);
}

TEST_P(TranslatorTest, ParallelResultMove) {
  EXPECT_EQ(call("swap", {Value::i32(1), Value::i32(2)}), (std::vector<std::uint64_t>{2, 1}));
}

TEST_P(TranslatorTest, BranchesCarryValues) {
  EXPECT_EQ(call1("br_if_value", {Value::i32(1)}), 7u);
  EXPECT_EQ(call1("br_if_value", {Value::i32(0)}), 9u);
  EXPECT_EQ(call1("br_table_value", {Value::i32(0)}), 101u);
  EXPECT_EQ(call1("br_table_value", {Value::i32(1)}), 102u);
  EXPECT_EQ(call1("br_table_value", {Value::i32(2)}), 100u);
  EXPECT_EQ(call1("br_table_value", {Value::i32(77)}), 100u);
}

TEST_P(TranslatorTest, FusedCompareBranches) {
  EXPECT_EQ(call1("cmp_neg", {Value::i32(static_cast<std::uint32_t>(-6))}), 1u);
  EXPECT_EQ(call1("cmp_neg", {Value::i32(static_cast<std::uint32_t>(-5))}), 3u);
  EXPECT_EQ(call1("cmp_neg", {Value::i32(0)}), 2u);
  EXPECT_EQ(call1("cmp_neg", {Value::i32(0x80000000u)}), 1u);
  EXPECT_EQ(call1("sum", {Value::i32(0)}), 0u);
  EXPECT_EQ(call1("sum", {Value::i32(100)}), 5050u);
}

TEST_P(TranslatorTest, SelectAndWideImmediates) {
  EXPECT_EQ(call1("pick", {Value::i64(5), Value::i64(6), Value::i32(1)}), 5u);
  EXPECT_EQ(call1("pick", {Value::i64(5), Value::i64(6), Value::i32(0)}), ~std::uint64_t{0});
  EXPECT_EQ(call1("i64_imm", {Value::i64(2)}), 0x100000000ull - 6);
}

INSTANTIATE_TEST_SUITE_P(Variants, TranslatorTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Metered" : "Unmetered"; });

}  // namespace
}  // namespace sprawling::wasm

namespace sprawling::wasm {
namespace {

// i64.const -1 in 9 and 10 bytes and INT64_MIN in 10: the translator's LEB reader must shift in
// unsigned arithmetic (a fuzz finding: negating INT64_MIN while sign-extending).
TEST(TranslatorLeb, LongSignedLebConstants) {
  const std::vector<std::uint8_t> bytes = {
      0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00,        // header
      0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7E,              // type: [] -> [i64]
      0x03, 0x03, 0x02, 0x00, 0x00,                          // two functions
      0x07, 0x09, 0x02, 0x01, 'a', 0x00, 0x00, 0x01, 'b', 0x00, 0x01,  // exports a, b
      0x0A, 0x1C, 0x02,                                      // code
      0x0C, 0x00, 0x42, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x0B,        // -1, 9 bytes
      0x0D, 0x00, 0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7F, 0x0B,  // INT64_MIN
  };
  auto compiled = compile(bytes);
  ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
  Store store;
  auto inst = store.instantiate(*compiled, {});
  ASSERT_TRUE(inst.has_value());
  EXPECT_EQ((*store.invoke(testing::export_func(**inst, "a"), {}))[0].bits, ~std::uint64_t{0});
  EXPECT_EQ((*store.invoke(testing::export_func(**inst, "b"), {}))[0].bits, std::uint64_t{1} << 63);
}

}  // namespace
}  // namespace sprawling::wasm
