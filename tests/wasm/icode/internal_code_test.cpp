// The declared instruction set (internal_code.hpp from internal_ops.def): the word layouts a
// compiled tier reads are pinned, the variant maps hold, and real translated code decodes into
// whole instructions in both interpreter variants.
#include "wasm/engine_fixtures.hpp"
#include "wasm/icode/internal_code.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <set>

namespace sprawling::wasm {
namespace {

using testing::compile_fixture;

// The layouts as code.hpp documented them before the declaration existed: [operands] after word 0.
TEST(InternalCode, LayoutsKeepTheirWords) {
  EXPECT_EQ(layout::Call::kWords, 4u);  // [funcidx base post]
  EXPECT_EQ(layout::Call::post, 3u);
  EXPECT_EQ(layout::CallIndirect::kWords, 6u);  // [typeidx tableidx base idx post]
  EXPECT_EQ(layout::CallIndirect::idx, 4u);
  EXPECT_EQ(layout::FuelCheck::kWords, 3u);  // [cost visible]
  EXPECT_EQ(layout::FuelCheck::cost, 1u);
  EXPECT_EQ(layout::LoadAdd::kWords, 5u);  // [dst base imm offset]
  EXPECT_EQ(layout::LoadAdd::offset, 4u);
  EXPECT_EQ(layout::StoreAdd::val, 3u);  // [base imm val offset]
  EXPECT_EQ(layout::StoreAbs::addr, 1u);  // [addr val offset]
  EXPECT_EQ(layout::Const64::value_hi_, 3u);  // [dst lo hi]
  EXPECT_EQ(layout::JumpTable::targets, 3u);  // [idx n off0..off(n-1) off_default]
  EXPECT_EQ(layout::CmpImmBranch::fixed_words(false), 4u);  // [a imm off] (+ fall when metered)
  EXPECT_EQ(layout::CmpImmBranch::fixed_words(true), 5u);
  EXPECT_EQ(layout::BinaryF64Imm::kWords, 5u);  // [dst a bits(2)]
  EXPECT_EQ(layout::TableCopy::kWords, 6u);  // [dsttable srctable d s n]
}

TEST(InternalCode, OpTableFollowsTheDeclaration) {
  EXPECT_EQ(info(Op::I64Load16SAbs).name, "I64Load16SAbs");
  EXPECT_EQ(info(Op::I64Load16SAbs).layout, Layout::LoadAbs);
  EXPECT_TRUE(info(Op::I64Load16SAbs).can_trap);
  EXPECT_EQ(info(Op::NumI32DivUImm).layout, Layout::BinaryImm);
  EXPECT_TRUE(info(Op::NumI32DivUImm).can_trap);
  EXPECT_FALSE(info(Op::NumI32AddImm).can_trap);
  EXPECT_TRUE(info(Op::BrUnlessI32GeU).ends_segment);
  EXPECT_EQ(numeric_op(Opcode::F64Div, SecondOperand::Imm), Op::NumF64DivImm);
  EXPECT_EQ(numeric_op(Opcode::I64Ctz, SecondOperand::Imm), Op::Count_);  // unary: no immediate form
  EXPECT_EQ(fused_branch(Opcode::I64Eq, SecondOperand::Slot, BranchWhen::True), Op::Count_);
  for (std::size_t i = 0; i < kOpCount; ++i) {
    const OpInfo& o = kOps[i];
    if (o.mem_base == Op::Count_) continue;
    EXPECT_EQ(mem_variant(o.mem_base, o.mem_mode), static_cast<Op>(i)) << o.name;
  }
}

TEST(InternalCode, HandlerWordsNameOneOpEach) {
  for (const bool metered : {false, true}) {
    std::set<std::uint32_t> seen;
    for (std::size_t i = 0; i < kOpCount; ++i) {
      const auto op = static_cast<Op>(i);
      const std::uint32_t w = word_of_op(op, metered);
      EXPECT_TRUE(seen.insert(w).second) << info(op).name;
      EXPECT_EQ(op_of_word(w, metered), op) << info(op).name;
    }
  }
}

TEST(InternalCode, TranslatedCodeDecodesIntoWholeInstructions) {
  const auto m = compile_fixture("translator");
  ASSERT_TRUE(m);
  for (const bool metered : {false, true}) {
    const auto funcs = m->impl().all_code(metered);
    ASSERT_FALSE(funcs.empty());
    for (const CompiledFunc& f : funcs) {
      const auto d = decode_instructions(f.code, metered);
      ASSERT_TRUE(d.has_value()) << d.error();
      std::uint32_t next = 0;
      for (const Instr& in : *d) {
        EXPECT_EQ(in.at, next);
        EXPECT_EQ(in.words, instr_words(in.op, f.code.data() + in.at, metered));
        next += in.words;
      }
      EXPECT_EQ(next, f.code.size());
      if (metered) {
        EXPECT_EQ(d->front().op, Op::FuelCheck);
      }
    }
  }
}

TEST(InternalCode, DecodingRejectsWhatIsNoCode) {
  const std::uint32_t bad[] = {0xFFFFFFF0u};
  const auto d = decode_instructions(bad, false);
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().find("word 0"), std::string::npos) << d.error();
  // A Call cut short after its first operand.
  const std::uint32_t cut[] = {word_of_op(Op::Call, false), 0};
  const auto c = decode_instructions(cut, false);
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().find("runs past the end"), std::string::npos) << c.error();
}

TEST(InternalCode, TypedWriteAndReadAgree) {
  std::uint32_t words[layout::LoadAdd::kWords] = {};
  layout::LoadAdd::write(words, {.dst = 7, .base = 2, .imm = 40, .offset = 8});
  EXPECT_EQ(words[layout::LoadAdd::imm], 40u);
  const auto a = layout::LoadAdd::read(words);
  EXPECT_EQ(a.dst, 7u);
  EXPECT_EQ(a.offset, 8u);
  std::uint32_t c64[layout::Const64::kWords] = {};
  layout::Const64::write(c64, {.dst = 1, .value = 0x1234'5678'9ABC'DEF0ull});
  EXPECT_EQ(c64[layout::Const64::value], 0x9ABC'DEF0u);
  EXPECT_EQ(c64[layout::Const64::value_hi_], 0x1234'5678u);
  EXPECT_EQ(layout::Const64::read(c64).value, 0x1234'5678'9ABC'DEF0ull);
}

TEST(InternalCode, VisitorHandsEachOpItsTypedOperands) {
  // I32LoadAdd [dst base imm offset], then Return, as the unmetered interpreter's words.
  const std::uint32_t code[] = {word_of_op(Op::I32LoadAdd, false), 5, 1, 16, 4, word_of_op(Op::Return, false)};
  const auto d = decode_instructions(code, false);
  ASSERT_TRUE(d.has_value()) << d.error();
  ASSERT_EQ(d->size(), 2u);
  std::vector<std::string> seen;
  for (const Instr& in : *d) {
    seen.push_back(visit_instruction(in.op, code + in.at, []<Op O>(const auto& a) -> std::string {
      if constexpr (O == Op::I32LoadAdd) {
        return "load t" + std::to_string(a.dst) + " <- [" + std::to_string(a.base) + "+" + std::to_string(a.imm) +
               "+" + std::to_string(a.offset) + "]";
      } else {
        return std::string(info(O).name);
      }
    }));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"load t5 <- [1+16+4]", "Return"}));
}

}  // namespace
}  // namespace sprawling::wasm
