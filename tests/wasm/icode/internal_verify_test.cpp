// The verifier of translated code: real translations pass in both variants, and each invariant,
// broken on its own in a small hand-made function, is reported with the word that breaks it.
#include "wasm/engine_fixtures.hpp"
#include "wasm/icode/internal_verify.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <initializer_list>

namespace sprawling::wasm {
namespace {

using testing::compile_fixture;

TEST(InternalVerify, EveryFixtureFunctionPassesInBothVariants) {
  for (const char* stem : {"translator", "fuel", "calls", "limits", "reenter"}) {
    const auto m = compile_fixture(stem);
    ASSERT_TRUE(m) << stem;
    for (const bool metered : {false, true}) {
      const auto funcs = m->impl().all_code(metered);
      for (std::size_t i = 0; i < funcs.size(); ++i)
        EXPECT_EQ(verify_code(funcs[i], metered), "") << stem << " function " << i << (metered ? " metered" : "");
    }
  }
}

// A FuncInst has one frame size for both variants (resolve_code): fuel ops use no slot.
TEST(InternalVerify, BothVariantsOfAFunctionHaveTheSameFrame) {
  for (const char* stem : {"translator", "fuel", "calls", "limits", "reenter", "lazy"}) {
    const auto m = compile_fixture(stem);
    ASSERT_TRUE(m) << stem;
    const auto unmetered = m->impl().all_code(false);
    const auto metered = m->impl().all_code(true);
    for (std::size_t i = 0; i < unmetered.size(); ++i)
      EXPECT_EQ(unmetered[i].frame_slots, metered[i].frame_slots) << stem << " function " << i;
  }
}

// Builds a function from (op, operand words...) rows for the given variant.
CompiledFunc make(bool metered, std::initializer_list<std::initializer_list<std::uint32_t>> rows,
                  std::uint32_t frame_slots = 4) {
  CompiledFunc f;
  f.num_params = 1;
  f.num_locals = 2;
  f.num_results = 1;
  f.frame_slots = frame_slots;
  for (const auto& row : rows) {
    auto it = row.begin();
    const auto op = static_cast<Op>(*it++);
    const auto at = static_cast<std::uint32_t>(f.code.size());
    f.code.push_back(word_of_op(op, metered));
    f.code.insert(f.code.end(), it, row.end());
    if (info(op).can_trap) f.trap_sites.emplace_back(at, 0);
  }
  return f;
}
constexpr std::uint32_t op(Op o) { return static_cast<std::uint32_t>(o); }

TEST(InternalVerify, AcceptsAWellFormedLoop) {
  // @0 FuelCheck; @3 FuelCheck (loop header); @6 BrIf p0 -> @3, fall; @10 Return
  const auto f = make(true, {{op(Op::FuelCheck), 0, 1}, {op(Op::FuelCheck), 2, 0},
                             {op(Op::BrIf), 0, static_cast<std::uint32_t>(-3), 0}, {op(Op::Return)}});
  EXPECT_EQ(verify_code(f, true), "");
}

TEST(InternalVerify, BackwardBranchMustLandOnAFuelCheck) {
  // @0 FuelCheck; @3 Copy; @6 Br -> @3
  const auto f = make(true, {{op(Op::FuelCheck), 0, 1}, {op(Op::Copy), 2, 0}, {op(Op::Br), static_cast<std::uint32_t>(-3)}});
  EXPECT_NE(verify_code(f, true).find("Br at word 6: backward branch to word 3, which is no FuelCheck"),
            std::string::npos)
      << verify_code(f, true);
  // Unmetered code has no fuel checks: the same shape is fine there.
  const auto g = make(false, {{op(Op::Copy), 2, 0}, {op(Op::Br), static_cast<std::uint32_t>(-3)}});
  EXPECT_EQ(verify_code(g, false), "");
}

TEST(InternalVerify, BranchMustLandOnAnInstructionStart) {
  const auto f = make(false, {{op(Op::Copy), 2, 0}, {op(Op::Br), static_cast<std::uint32_t>(-2)}});
  EXPECT_NE(verify_code(f, false).find("lands on no instruction start"), std::string::npos) << verify_code(f, false);
  const auto table = make(false, {{op(Op::BrTable), 0, 1, 5, 9}, {op(Op::Return)}});
  EXPECT_NE(verify_code(table, false).find("BrTable at word 0: branch offset 9"), std::string::npos)
      << verify_code(table, false);
}

TEST(InternalVerify, SlotsMustBeInsideTheFrame) {
  const auto f = make(false, {{op(Op::Copy), 4, 0}, {op(Op::Return)}});
  EXPECT_NE(verify_code(f, false).find("Copy at word 0: slot 4 (dst) outside the frame of 4"), std::string::npos)
      << verify_code(f, false);
}

TEST(InternalVerify, TrapSitesMustMatchTheOpsThatTrap) {
  auto f = make(false, {{op(Op::NumI32DivU), 2, 0, 1}, {op(Op::Return)}});
  ASSERT_EQ(verify_code(f, false), "");
  f.trap_sites.clear();
  EXPECT_NE(verify_code(f, false).find("NumI32DivU at word 0: can trap but has no trap site"), std::string::npos);
  f.trap_sites = {{0, 0}, {4, 0}};
  EXPECT_NE(verify_code(f, false).find("Return at word 4: has a trap site but cannot trap"), std::string::npos);
  f.trap_sites = {{0, 0}, {2, 0}};
  EXPECT_NE(verify_code(f, false).find("trap site at word 2"), std::string::npos);
}

TEST(InternalVerify, WordCountsMustMatchTheDeclaration) {
  // A Call lacking its `post` word swallows the Return that follows as that word, then ends the code.
  const auto f = make(false, {{op(Op::Call), 0, 2}, {op(Op::Return)}});
  EXPECT_NE(verify_code(f, false), "");
  // Metered conditional branches have the FALL word; without it the next op's word is read as it.
  const auto g = make(true, {{op(Op::FuelCheck), 0, 1}, {op(Op::BrIf), 0, 5}, {op(Op::Return)}, {op(Op::Return)}});
  EXPECT_NE(verify_code(g, true), "");
}

TEST(InternalVerify, FuelOpsOnlyInMeteredCodeWhichStartsWithTheEntryCheck) {
  const auto f = make(false, {{op(Op::Fuel), 3}, {op(Op::Return)}});
  EXPECT_NE(verify_code(f, false).find("fuel op in unmetered code"), std::string::npos);
  const auto g = make(true, {{op(Op::Fuel), 3}, {op(Op::Return)}});
  EXPECT_NE(verify_code(g, true).find("does not start with the entry FuelCheck"), std::string::npos);
}

TEST(InternalVerify, CodeMustNotRunOffItsEnd) {
  const auto f = make(false, {{op(Op::Copy), 2, 0}});
  EXPECT_NE(verify_code(f, false).find("falls through"), std::string::npos);
}

}  // namespace
}  // namespace sprawling::wasm
