// The disassembler, and through it the translator's output for a few small functions: the
// golden text below pins both (tests/wasm/fixtures/disasm.wat; unmetered and metered code). A
// deliberate change of the translator updates the text here, with the reason in its commit.
#include "wasm/engine_fixtures.hpp"
#include "wasm/icode/internal_disasm.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <algorithm>

namespace sprawling::wasm {
namespace {

using testing::compile_fixture;

struct Golden {
  const char* export_name;
  const char* unmetered;
  const char* metered;
};

// clang-format off
const Golden kGolden[] = {
  {"add",
R"(func 0 $add (unmetered): params 2, locals 0, results 1, frame 4 slots, 5 words
      0  NumI32Add     dst=p0 a=p0 b=p1
      4  Return
)",
R"(func 0 $add (metered): params 2, locals 0, results 1, frame 4 slots, 8 words
      0  FuelCheck     cost=4 visible=1  ; traps @0x70
      3  NumI32Add     dst=p0 a=p0 b=p1
      7  Return
)"},
  {"load_field",
R"(func 1 $load_field (unmetered): params 1, locals 0, results 1, frame 3 slots, 6 words
      0  I32LoadAdd    dst=p0 base=p0 imm=8 offset=4  ; traps @0x7d
      5  Return
)",
R"(func 1 $load_field (metered): params 1, locals 0, results 1, frame 3 slots, 9 words
      0  FuelCheck     cost=5 visible=1  ; traps @0x78
      3  I32LoadAdd    dst=p0 base=p0 imm=8 offset=4  ; traps @0x7d
      8  Return
)"},
  {"count",
R"(func 2 $count (unmetered): params 1, locals 1, results 1, frame 4 slots, 12 words
      0  NumI32AddImm  dst=l0 a=l0 imm=1
      4  BrIfI32LtS    a=l0 b=p0 off=-4->@0
      8  Copy          dst=p0 src=l0
     11  Return
)",
R"(func 2 $count (metered): params 1, locals 1, results 1, frame 4 slots, 19 words
      0  FuelCheck     cost=1 visible=1  ; traps @0x85
      3  FuelCheck     cost=8 visible=0  ; traps @0x85
      6  NumI32AddImm  dst=l0 a=l0 imm=1
     10  BrIfI32LtS    a=l0 b=p0 off=-7->@3 fall=1
     15  Copy          dst=p0 src=l0
     18  Return
)"},
  {"pick",
R"(func 3 $pick (unmetered): params 1, locals 0, results 1, frame 2 slots, 14 words
      0  BrTable       idx=p0 n=2 targets=[10->@10 6->@6 10->@10]
      6  Const32       dst=p0 imm=1
      9  Return
     10  Const32       dst=p0 imm=2
     13  Return
)",
R"(func 3 $pick (metered): params 1, locals 0, results 1, frame 2 slots, 21 words
      0  FuelCheck     cost=3 visible=1  ; traps @0x9b
      3  BrTable       idx=p0 n=2 targets=[12->@15 6->@9 12->@15]
      9  Fuel          cost=1
     11  Const32       dst=p0 imm=1
     14  Return
     15  Fuel          cost=1
     17  Const32       dst=p0 imm=2
     20  Return
)"},
  {"twice",
R"(func 4 $twice (unmetered): params 1, locals 0, results 1, frame 3 slots, 14 words
      0  Copy          dst=t0 src=p0
      3  Copy          dst=t1 src=p0
      6  Call          func=0(add) base=t0 post=0  ; traps @0xb4
     10  Copy          dst=p0 src=t0
     13  Return
)",
R"(func 4 $twice (metered): params 1, locals 0, results 1, frame 3 slots, 17 words
      0  FuelCheck     cost=4 visible=1  ; traps @0xb0
      3  Copy          dst=t0 src=p0
      6  Copy          dst=t1 src=p0
      9  Call          func=0(add) base=t0 post=0  ; traps @0xb4
     13  Copy          dst=p0 src=t0
     16  Return
)"},
  {"div",
R"(func 5 $div (unmetered): params 2, locals 0, results 1, frame 4 slots, 5 words
      0  NumI64DivS    dst=p0 a=p0 b=p1  ; traps @0xbd
      4  Return
)",
R"(func 5 $div (metered): params 2, locals 0, results 1, frame 4 slots, 8 words
      0  FuelCheck     cost=4 visible=1  ; traps @0xb9
      3  NumI64DivS    dst=p0 a=p0 b=p1  ; traps @0xbd
      7  Return
)"},
  {"scale",
R"(func 6 $scale (unmetered): params 1, locals 0, results 1, frame 3 slots, 6 words
      0  NumF64MulImm  dst=p0 a=p0 value=2.5
      5  Return
)",
R"(func 6 $scale (metered): params 1, locals 0, results 1, frame 3 slots, 9 words
      0  FuelCheck     cost=4 visible=1  ; traps @0xc1
      3  NumF64MulImm  dst=p0 a=p0 value=2.5
      8  Return
)"},
};
// clang-format on

TEST(InternalDisasm, SmallFunctionsMatchTheirGoldenText) {
  const auto m = compile_fixture("disasm");
  ASSERT_TRUE(m);
  const Module& mod = m->module();
  for (const Golden& g : kGolden) {
    const auto e = std::find_if(mod.exports.begin(), mod.exports.end(),
                                [&](const Export& x) { return x.name == g.export_name; });
    ASSERT_NE(e, mod.exports.end()) << g.export_name;
    const std::uint32_t defined = e->index - mod.imported_funcs;
    EXPECT_EQ(disassemble(mod, e->index, m->impl().code(defined, false), false), g.unmetered) << g.export_name;
    EXPECT_EQ(disassemble(mod, e->index, m->impl().code(defined, true), true), g.metered) << g.export_name;
  }
}

TEST(InternalDisasm, CodeThatDoesNotDecodeEndsInAnErrorLine) {
  const auto m = compile_fixture("disasm");
  ASSERT_TRUE(m);
  CompiledFunc f = m->impl().code(0, false);
  f.code.push_back(0xFFFFFFF0u);
  const std::string text = disassemble(m->module(), m->module().imported_funcs, f, false);
  EXPECT_NE(text.find("  error: word 5 (4294967280) is no handler of the unmetered interpreter\n"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace sprawling::wasm
