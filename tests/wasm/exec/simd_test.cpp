// Tests of src/wasm/exec/simd.hpp and simd.cpp: the spec testsuite's simd_*.wast cases (extracted by
// scripts/simd-cases) replayed on the x86 path with and without the SSE4.1 kernels, hand-written edge
// cases per family, the NaN choice, and random differential runs of every path against the portable one.
#include "wasm/exec/simd.hpp"
#include "wasm/exec/simd_test_support.hpp"

#include <gtest/gtest-spi.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>

namespace x86_table {
using namespace sprawling::wasm::simd;
using namespace simd_test;
#include "wasm/exec/simd_test_table.inc"
}  // namespace x86_table

namespace {

using namespace sprawling::wasm::simd;
using simd_test::Val;

// Restores the SSE4.1 choice a test changed.
class Sse41Scope {
 public:
  explicit Sse41Scope(bool on) : saved_(sse41_enabled()) { set_sse41_enabled(on); }
  Sse41Scope(const Sse41Scope&) = delete;
  Sse41Scope& operator=(const Sse41Scope&) = delete;
  ~Sse41Scope() { set_sse41_enabled(saved_); }

 private:
  bool saved_;
};

V128 bytes(std::initializer_list<int> b) {
  std::array<std::uint8_t, 16> a{};
  std::size_t i = 0;
  for (int x : b) a.at(i++) = static_cast<std::uint8_t>(x);
  return std::bit_cast<V128>(a);
}
template <class L>
V128 lanes(std::initializer_list<L> l) {
  std::array<L, 16 / sizeof(L)> a{};
  std::size_t i = 0;
  for (L x : l) a.at(i++) = x;
  return std::bit_cast<V128>(a);
}
template <class L>
std::array<L, 16 / sizeof(L)> lanes_of(V128 v) {
  return std::bit_cast<std::array<L, 16 / sizeof(L)>>(v);
}
std::uint32_t f32_bits(float f) { return std::bit_cast<std::uint32_t>(f); }
std::uint64_t f64_bits(double d) { return std::bit_cast<std::uint64_t>(d); }

std::set<std::string> names(const std::map<std::string, simd_test::Impl>& table) {
  std::set<std::string> s;
  for (const auto& [name, impl] : table) s.insert(name);
  return s;
}

TEST(SimdTable, NamesAll236InstructionsOnEveryPath) {
  EXPECT_EQ(x86_table::instructions().size(), 236U);
  EXPECT_EQ(names(x86_table::instructions()), names(simd_test::portable_instructions()));
}

#if __has_include("wasm/simd_opcodes.def")
// The front end's single opcode list (the shared src/wasm/syntax/simd_opcodes.def): every instruction
// it names has lane semantics here, under the same text name. Compiled once that list is in the tree.
TEST(SimdTable, CoversEveryInstructionOfTheSharedOpcodeList) {
  static constexpr std::array kTexts = {
#define WASM_SIMD_OPCODE(code, name, text, immediate, signature, fn) std::string_view{text},
#include "wasm/syntax/simd_opcodes.def"
#undef WASM_SIMD_OPCODE
  };
  EXPECT_EQ(kTexts.size(), 236U);
  for (const std::string_view text : kTexts) {
    EXPECT_TRUE(x86_table::instructions().contains(std::string(text))) << text;
  }
}

// The list's fn column (the function the interpreter's handler calls) is each row's own text with
// `.` as `_`: a row naming another instruction's function of the same shape would compile.
TEST(SimdTable, EveryRowsFunctionIsItsOwnInstruction) {
  static constexpr std::array kRows = {
#define WASM_SIMD_OPCODE(code, name, text, immediate, signature, fn) \
  std::pair{std::string_view{text}, std::string_view{#fn}},
#include "wasm/syntax/simd_opcodes.def"
#undef WASM_SIMD_OPCODE
  };
  for (const auto& [text, fn] : kRows) {
    std::string want(text);
    std::replace(want.begin(), want.end(), '.', '_');
    EXPECT_EQ(fn, want);
  }
}
#endif

// The replay needs the 3.0 testsuite (tests/wasm/CMakeLists.txt); without it these two are not built.
#ifdef SPRAWLING_SIMD_CASES
void replay_and_count(const char* label) {
  const auto checked = simd_test::replay_cases(x86_table::instructions(), SPRAWLING_SIMD_CASES);
  int total = 0;
  for (const auto& [op, n] : checked) total += n;
  // scripts/simd-cases finds 23013 cases of 229 instructions in the 2026-06 testsuite; the other seven
  // (v128.const; the five stores, which return nothing; v128.load, whose testsuite modules also store)
  // are covered by hand below and by the differential test.
  EXPECT_GE(total, 23000) << label;
  std::set<std::string> missing;
  for (const auto& [name, impl] : x86_table::instructions()) {
    if (!checked.contains(name)) missing.insert(name);
  }
  const std::set<std::string> by_hand = {"v128.const", "v128.load", "v128.store", "v128.store8_lane", "v128.store16_lane",
                                         "v128.store32_lane", "v128.store64_lane"};
  for (const auto& name : missing) EXPECT_TRUE(by_hand.contains(name)) << label << ": no testsuite case for " << name;
  std::cout << label << ": " << total << " testsuite cases of " << checked.size() << " instructions checked\n";
}

TEST(SimdX86, ReplaysEverySpecTestsuiteCaseWithSse41) {
  if (!cpu_has_sse41()) GTEST_SKIP() << "this CPU has no SSE4.1; the baseline test covers the x86 path";
  const Sse41Scope scope(true);
  ASSERT_TRUE(sse41_enabled());
  replay_and_count("x86+SSE4.1");
}

TEST(SimdX86, ReplaysEverySpecTestsuiteCaseOnTheSse2Baseline) {
  const Sse41Scope scope(false);
  ASSERT_FALSE(sse41_enabled());
  replay_and_count("x86 SSE2");
}
#endif  // SPRAWLING_SIMD_CASES

// The replay must notice a wrong result, a wrong NaN class and an unknown instruction.
TEST(SimdReplay, NoticesWrongExpectations) {
  const auto path = std::filesystem::path(testing::TempDir()) / "simd_cases_wrong.txt";
  auto replay = [&path](const std::string& text) {
    std::ofstream(path) << text;
    return simd_test::replay_cases(x86_table::instructions(), path.string());
  };
  const std::string ok = "case t:1 i8x16.add - v:01000000000000000000000000000000 v:01000000000000000000000000000000 "
                         "=> v:02000000000000000000000000000000\n";
  EXPECT_EQ(replay(ok).at("i8x16.add"), 1);
  EXPECT_NONFATAL_FAILURE(replay("case t:2 i8x16.add - v:01000000000000000000000000000000 "
                                 "v:01000000000000000000000000000000 => v:03000000000000000000000000000000\n"),
                          "t:2 i8x16.add");
  // 0 / 0 is a canonical NaN, which is not the expected 1.0 and does satisfy nan:arithmetic.
  const std::string zeros = "v:00000000000000000000000000000000";
  EXPECT_NONFATAL_FAILURE(replay("case t:3 f32x4.div - " + zeros + " " + zeros + " => f32x4:3f800000,nan:canonical,nan:canonical,nan:canonical\n"),
                          "t:3 f32x4.div");
  EXPECT_EQ(replay("case t:4 f32x4.div - " + zeros + " " + zeros + " => f32x4:nan:arithmetic,nan:canonical,nan:arithmetic,nan:canonical\n")
                .at("f32x4.div"),
            1);
  EXPECT_NONFATAL_FAILURE(replay("case t:5 i8x16.frobnicate - " + zeros + " => " + zeros + "\n"), "unknown instruction");
  std::filesystem::remove(path);
}

// ---- random differential runs: every path bit-identical to the portable one, NaNs included --------
class Inputs {
 public:
  explicit Inputs(std::uint32_t seed) : rng_(seed) {}

  // A lane value biased towards the edges: integer extremes, signed zeros, infinities, NaNs with
  // payloads (quiet and signalling), halves for rounding, values at the truncation bounds.
  std::uint64_t lane(unsigned width) {
    static constexpr std::array<std::uint32_t, 20> f32s = {
        0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FA00001, 0xFF800001,
        0x3F000000, 0x3FC00000, 0x40200000, 0xC0200000, 0x4F000000, 0xCF000000, 0x4F800000, 0x00000001,
        0x80000001, 0x7F7FFFFF, 0x4EFFFFFF, 0x4B000001};
    static constexpr std::array<std::uint64_t, 18> f64s = {
        0x0000000000000000, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
        0xFFF8000000000000, 0x7FF4000000000001, 0x7FF0000000000001, 0x3FE0000000000000, 0x3FF8000000000000,
        0x4004000000000000, 0xC004000000000000, 0x41E0000000000000, 0xC1E0000000000000, 0x41EFFFFFFFE00000,
        0x41DFFFFFFFC00000, 0x0000000000000001, 0x47EFFFFFE0000000};
    const std::uint64_t mask = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
    switch (rng_() % 6) {
      case 0: return rng_() & mask;
      case 1: return (std::uint64_t{1} << (width - 1)) - (rng_() % 3);  // max, max-1, max-2 signed
      case 2: return ((std::uint64_t{1} << (width - 1)) + (rng_() % 3)) & mask;  // min signed and above
      case 3: return (mask - rng_() % 3) & mask;  // -1, -2, -3
      case 4:
        if (width == 32) return f32s.at(rng_() % f32s.size());
        if (width == 64) return f64s.at(rng_() % f64s.size());
        return rng_() % 4;
      default: return ((std::uint64_t{rng_()} << 32) | rng_()) & mask;
    }
  }
  V128 v128() {
    const unsigned width = std::array<unsigned, 4>{8, 16, 32, 64}.at(rng_() % 4);
    std::array<std::uint8_t, 16> b{};
    for (unsigned i = 0; i < 16; i += width / 8) {
      const std::uint64_t l = lane(width);
      std::memcpy(b.data() + i, &l, width / 8);
    }
    return std::bit_cast<V128>(b);
  }
  std::uint32_t below(std::uint32_t n) { return rng_() % n; }

 private:
  std::mt19937 rng_;
};

// Operands and immediates of a random case for the shape of `impl`.
struct RandomCase {
  std::vector<Val> args;
  simd_test::Imms imms;
};
RandomCase random_case(const simd_test::Impl& impl, Inputs& in) {
  RandomCase c;
  auto v = [&] { return simd_test::vec(in.v128()); };
  std::visit(
      [&](auto&& f) {
        using namespace simd_test;
        using T = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<T, V_V> || std::is_same_v<T, V_I>) c.args = {v()};
        else if constexpr (std::is_same_v<T, VV_V>) c.args = {v(), v()};
        else if constexpr (std::is_same_v<T, VVV_V>) c.args = {v(), v(), v()};
        else if constexpr (std::is_same_v<T, VI_V>) c.args = {v(), scalar('i', in.below(3) == 0 ? in.lane(32) : in.below(130))};
        else if constexpr (std::is_same_v<T, Splat32>) c.args = {scalar(f.kind, in.lane(32))};
        else if constexpr (std::is_same_v<T, Splat64>) c.args = {scalar(f.kind, in.lane(64))};
        else if constexpr (std::is_same_v<T, Extract32> || std::is_same_v<T, Extract64>) {
          c.args = {v()};
          c.imms.lanes = {in.below(16)};
        } else if constexpr (std::is_same_v<T, Replace32>) {
          c.args = {v(), scalar(f.kind, in.lane(32))};
          c.imms.lanes = {in.below(16)};
        } else if constexpr (std::is_same_v<T, Replace64>) {
          c.args = {v(), scalar(f.kind, in.lane(64))};
          c.imms.lanes = {in.below(2)};
        } else if constexpr (std::is_same_v<T, Shuffle>) {
          c.args = {v(), v()};
          for (int i = 0; i < 16; ++i) c.imms.lanes.push_back(in.below(32));
        } else if constexpr (std::is_same_v<T, LoadOf>) {
          c.args = {scalar('i', in.below(4096 - 16))};
        } else if constexpr (std::is_same_v<T, LoadLaneOf> || std::is_same_v<T, StoreLaneOf>) {
          c.args = {scalar('i', in.below(4096 - 16)), v()};
          c.imms.lanes = {in.below(16 / f.width)};
        } else if constexpr (std::is_same_v<T, StoreOf>) {
          c.args = {scalar('i', in.below(4096 - 16)), v()};
        }
        // ConstOf: no operands (compared through its immediate bytes in its own test).
      },
      impl);
  return c;
}

TEST(SimdDifferential, EveryPathMatchesThePortableOneBitForBit) {
  constexpr int kCasesPerInstruction = 3000;
  Inputs in(20261201);
  simd_test::Memory memory(4096);
  for (auto& b : memory) b = static_cast<std::uint8_t>(in.lane(8));
  int compared = 0;
  for (const auto& [name, impl] : x86_table::instructions()) {
    if (name == "v128.const") continue;
    const auto& portable = simd_test::portable_instructions().at(name);
    // Only the stores need a memory of their own per run; the loads share the random one.
    const bool stores = std::holds_alternative<simd_test::StoreOf>(impl) || std::holds_alternative<simd_test::StoreLaneOf>(impl);
    for (int i = 0; i < kCasesPerInstruction; ++i) {
      const RandomCase c = random_case(impl, in);
      simd_test::Memory expected_memory = stores ? memory : simd_test::Memory{};
      const auto want = simd_test::run(portable, c.imms, c.args, stores ? expected_memory : memory);
      ASSERT_TRUE(want.error.empty()) << name << ": " << want.error;
      for (const bool sse41 : {false, true}) {
        if (sse41 && !cpu_has_sse41()) continue;
        const Sse41Scope scope(sse41);
        simd_test::Memory got_memory = stores ? memory : simd_test::Memory{};
        const auto got = simd_test::run(impl, c.imms, c.args, stores ? got_memory : memory);
        ASSERT_EQ(got.results.size(), want.results.size()) << name;
        for (std::size_t r = 0; r < got.results.size(); ++r) {
          ASSERT_EQ(got.results[r], want.results[r])
              << name << (sse41 ? " (SSE4.1)" : " (SSE2)") << ": " << simd_test::show(got.results[r]) << " vs portable "
              << simd_test::show(want.results[r]) << " for " << simd_test::show(c.args.at(0));
        }
        ASSERT_TRUE(got_memory == expected_memory) << name << ": stores differ";
        ++compared;
      }
    }
  }
  std::cout << "differential: " << compared << " random cases compared with the portable path\n";
}

// ---- hand-written cases per family (the spec's rules, and what the testsuite cannot reach) --------
// add sub mul div sqrt give the CPU's NaN, as the scalar operators do: one instruction in machine
// code. On x86-64 a NaN operand comes back quieted with its payload and sign, and an invalid
// operation (inf - inf, sqrt(-1), 0 / 0) makes the default NaN, negative. Every path agrees.
TEST(SimdNan, ArithmeticGivesTheCpusNanAsTheScalarOperatorsDo) {
#if defined(__x86_64__)
  for (const bool sse41 : {false, true}) {
    const Sse41Scope scope(sse41);
    const V128 snan32 = lanes<std::uint32_t>({0xFF800001, 0x7FA00001, 0xFFC00000, 0x7FC12345});
    const std::array<std::uint32_t, 4> quieted32{0xFFC00001, 0x7FE00001, 0xFFC00000, 0x7FC12345};
    // Not 1.0: GCC may fold x * 1.0 into x, which keeps a signalling NaN as it is.
    const V128 two32 = f32x4_splat(f32_bits(2.0F));
    for (const V128 r : {f32x4_add(snan32, two32), f32x4_sub(two32, snan32), f32x4_mul(snan32, two32),
                         f32x4_div(two32, snan32), f32x4_sqrt(snan32)}) {
      EXPECT_EQ(lanes_of<std::uint32_t>(r), quieted32) << "sse41=" << sse41;
    }
    const V128 inf32 = f32x4_splat(0x7F800000);
    for (auto l : lanes_of<std::uint32_t>(f32x4_sub(inf32, inf32))) EXPECT_EQ(l, 0xFFC00000U);
    for (auto l : lanes_of<std::uint32_t>(f32x4_sqrt(f32x4_splat(f32_bits(-1.0F))))) EXPECT_EQ(l, 0xFFC00000U);
    for (auto l : lanes_of<std::uint32_t>(f32x4_div(f32x4_splat(0), f32x4_splat(0)))) EXPECT_EQ(l, 0xFFC00000U);
    const V128 snan64 = lanes<std::uint64_t>({0xFFF0000000000001, 0x7FF4000000000000});
    const std::array<std::uint64_t, 2> quieted64{0xFFF8000000000001, 0x7FFC000000000000};
    const V128 two64 = f64x2_splat(f64_bits(2.0));
    for (const V128 r : {f64x2_add(snan64, two64), f64x2_sub(snan64, two64), f64x2_mul(two64, snan64),
                         f64x2_div(two64, snan64), f64x2_sqrt(snan64)}) {
      EXPECT_EQ(lanes_of<std::uint64_t>(r), quieted64) << "sse41=" << sse41;
    }
    const V128 inf64 = f64x2_splat(0x7FF0000000000000);
    for (auto l : lanes_of<std::uint64_t>(f64x2_mul(inf64, f64x2_splat(0)))) EXPECT_EQ(l, 0xFFF8000000000000U);
    for (auto l : lanes_of<std::uint64_t>(f64x2_sqrt(f64x2_splat(f64_bits(-2.0))))) EXPECT_EQ(l, 0xFFF8000000000000U);
  }
#else
  GTEST_SKIP() << "the expected NaN bits are x86-64's";
#endif
}

// min max ceil floor trunc nearest give the positive canonical NaN whatever the operands.
TEST(SimdNan, MinMaxAndRoundingGiveThePositiveCanonicalNan) {
  for (const bool sse41 : {false, true}) {
    const Sse41Scope scope(sse41);
    const V128 snan32 = lanes<std::uint32_t>({0xFF800001, 0x7FA00001, 0xFFC00000, 0x7FC12345});
    const V128 one32 = f32x4_splat(f32_bits(1.0F));
    for (const V128 r : {f32x4_min(one32, snan32), f32x4_max(snan32, one32), f32x4_ceil(snan32), f32x4_floor(snan32),
                         f32x4_trunc(snan32), f32x4_nearest(snan32)}) {
      for (auto l : lanes_of<std::uint32_t>(r)) EXPECT_EQ(l, kCanonicalNanF32) << "sse41=" << sse41;
    }
    const V128 snan64 = lanes<std::uint64_t>({0xFFF0000000000001, 0x7FF4000000000000});
    const V128 one64 = f64x2_splat(f64_bits(1.0));
    for (const V128 r : {f64x2_min(snan64, one64), f64x2_max(one64, snan64), f64x2_ceil(snan64), f64x2_floor(snan64),
                         f64x2_trunc(snan64), f64x2_nearest(snan64)}) {
      for (auto l : lanes_of<std::uint64_t>(r)) EXPECT_EQ(l, kCanonicalNanF64) << "sse41=" << sse41;
    }
  }
}

// The conversions are not arithmetic: a NaN lane comes out as f32.demote_f64 and f64.promote_f32
// give it (quieted, the payload's high bits kept, the sign kept), which is what Wasmtime and V8
// give on x86-64; integer code reading the bits back then agrees across engines.
TEST(SimdNan, DemoteAndPromoteConvertANanAsTheirScalarFormsDo) {
  const V128 nan32 = lanes<std::uint32_t>({0xFF800001, 0x7FA00001, 0xFFFFFFFF, 0x3F800000});
  EXPECT_EQ(lanes_of<std::uint64_t>(f64x2_promote_low_f32x4(nan32)),
            (std::array<std::uint64_t, 2>{0xFFF8000020000000, 0x7FFC000020000000}));
  EXPECT_EQ(lanes_of<std::uint64_t>(f64x2_promote_low_f32x4(lanes<std::uint32_t>({0, 0xFFFFFFFF, 0, 0})))[1],
            0xFFFFFFFFE0000000);
  const V128 nan64 = lanes<std::uint64_t>({0xFFF0000000000001, 0x7FF4000000000000});
  EXPECT_EQ(lanes_of<std::uint32_t>(f32x4_demote_f64x2_zero(nan64)),
            (std::array<std::uint32_t, 4>{0xFFC00000, 0x7FE00000, 0, 0}));
}

TEST(SimdNan, BitOperationsAndPseudoMinMaxKeepNanPayloads) {
  const V128 nan = lanes<std::uint32_t>({0xFF800001, 0x7FA00001, 0x7FC00000, 0xFFC12345});
  const V128 one = f32x4_splat(f32_bits(1.0F));
  EXPECT_EQ(lanes_of<std::uint32_t>(f32x4_abs(nan)), (std::array<std::uint32_t, 4>{0x7F800001, 0x7FA00001, 0x7FC00000, 0x7FC12345}));
  EXPECT_EQ(lanes_of<std::uint32_t>(f32x4_neg(nan)), (std::array<std::uint32_t, 4>{0x7F800001, 0xFFA00001, 0xFFC00000, 0x7FC12345}));
  // pmin(a, b) = b < a ? b : a: with a NaN either way the comparison is false and a comes back as is.
  EXPECT_EQ(f32x4_pmin(nan, one), nan);
  EXPECT_EQ(f32x4_pmax(nan, one), nan);
  EXPECT_EQ(f32x4_pmin(one, nan), one);
  EXPECT_EQ(f32x4_pmax(one, nan), one);
  EXPECT_EQ(f32x4_extract_lane(nan, 0), 0xFF800001U);  // a signalling NaN travels as bits
  EXPECT_EQ(f64x2_extract_lane(f64x2_splat(0x7FF0000000000001), 1), 0x7FF0000000000001U);
}

TEST(SimdFloat, MinMaxOrderSignedZerosAndPseudoMinMaxDoNot) {
  const V128 pz = f32x4_splat(0x00000000);
  const V128 nz = f32x4_splat(0x80000000);
  EXPECT_EQ(f32x4_min(pz, nz), nz);
  EXPECT_EQ(f32x4_min(nz, pz), nz);
  EXPECT_EQ(f32x4_max(pz, nz), pz);
  EXPECT_EQ(f32x4_max(nz, pz), pz);
  EXPECT_EQ(f32x4_pmin(pz, nz), pz);  // -0 < +0 is false: the first operand
  EXPECT_EQ(f32x4_pmax(nz, pz), nz);
  const V128 pz64 = f64x2_splat(0);
  const V128 nz64 = f64x2_splat(0x8000000000000000);
  EXPECT_EQ(f64x2_min(pz64, nz64), nz64);
  EXPECT_EQ(f64x2_max(nz64, pz64), pz64);
}

TEST(SimdFloat, RoundingFollowsTheSpecOnBothPaths) {
  for (const bool sse41 : {false, true}) {
    const Sse41Scope scope(sse41);
    const V128 x = lanes<float>({-2.5F, 2.5F, -0.5F, 0.5F});
    EXPECT_EQ(f32x4_nearest(x), lanes<float>({-2.0F, 2.0F, -0.0F, 0.0F}));
    EXPECT_EQ(f32x4_ceil(x), lanes<float>({-2.0F, 3.0F, -0.0F, 1.0F}));
    EXPECT_EQ(f32x4_floor(x), lanes<float>({-3.0F, 2.0F, -1.0F, 0.0F}));
    EXPECT_EQ(f32x4_trunc(x), lanes<float>({-2.0F, 2.0F, -0.0F, 0.0F}));
    EXPECT_EQ(f64x2_nearest(lanes<double>({3.5, -4.5})), lanes<double>({4.0, -4.0}));
    EXPECT_EQ(f64x2_ceil(lanes<double>({-0.25, 0x1p51 + 0.5})), lanes<double>({-0.0, 0x1p51 + 1.0}));
  }
}

TEST(SimdInteger, SaturatingQ15AndAverages) {
  EXPECT_EQ(i8x16_add_sat_s(i8x16_splat(100), i8x16_splat(100)), i8x16_splat(127));
  EXPECT_EQ(i8x16_sub_sat_s(i8x16_splat(0x9C), i8x16_splat(100)), i8x16_splat(0x80));  // -100 - 100
  EXPECT_EQ(i8x16_add_sat_u(i8x16_splat(200), i8x16_splat(100)), i8x16_splat(255));
  EXPECT_EQ(i8x16_sub_sat_u(i8x16_splat(1), i8x16_splat(2)), i8x16_splat(0));
  EXPECT_EQ(i16x8_add_sat_s(i16x8_splat(0x7FFF), i16x8_splat(1)), i16x8_splat(0x7FFF));
  EXPECT_EQ(i16x8_sub_sat_u(i16x8_splat(0), i16x8_splat(0xFFFF)), i16x8_splat(0));
  EXPECT_EQ(i8x16_avgr_u(i8x16_splat(255), i8x16_splat(254)), i8x16_splat(255));  // (255 + 254 + 1) / 2
  EXPECT_EQ(i16x8_avgr_u(i16x8_splat(0), i16x8_splat(1)), i16x8_splat(1));
  for (const bool sse41 : {false, true}) {
    const Sse41Scope scope(sse41);
    const V128 a = lanes<std::int16_t>({-32768, -32768, 32767, 16384, -1, 1, 0, -32768});
    const V128 b = lanes<std::int16_t>({-32768, 32767, 32767, 16384, 1, 1, 5, 1});
    // -32768^2 saturates; -32768 * 32767 is the most negative product ((-2^30 + 2^15 + 2^14) >> 15 = -32767).
    EXPECT_EQ(i16x8_q15mulr_sat_s(a, b), lanes<std::int16_t>({32767, -32767, 32766, 8192, 0, 0, 0, -1}));
  }
}

TEST(SimdInteger, ShiftCountsAreTakenModuloTheLaneWidth) {
  const V128 x = i8x16_splat(0x81);
  EXPECT_EQ(i8x16_shl(x, 9), i8x16_shl(x, 1));
  EXPECT_EQ(i8x16_shl(x, 1), i8x16_splat(0x02));
  EXPECT_EQ(i8x16_shr_s(x, 7), i8x16_splat(0xFF));
  EXPECT_EQ(i8x16_shr_u(x, 15), i8x16_splat(0x01));
  EXPECT_EQ(i16x8_shr_s(i16x8_splat(0x8000), 16), i16x8_splat(0x8000));
  EXPECT_EQ(i32x4_shl(i32x4_splat(1), 0xFFFFFFFF), i32x4_splat(0x80000000));
  EXPECT_EQ(i64x2_shr_s(i64x2_splat(0x8000000000000000), 64 + 63), i64x2_splat(~std::uint64_t{0}));
  EXPECT_EQ(i64x2_shr_u(i64x2_splat(0x8000000000000000), 63), i64x2_splat(1));
}

TEST(SimdInteger, AbsNegWrapAtTheMinimum) {
  EXPECT_EQ(i8x16_abs(i8x16_splat(0x80)), i8x16_splat(0x80));
  EXPECT_EQ(i8x16_neg(i8x16_splat(0x80)), i8x16_splat(0x80));
  EXPECT_EQ(i16x8_abs(i16x8_splat(0xFFFF)), i16x8_splat(1));
  EXPECT_EQ(i32x4_abs(i32x4_splat(0x80000000)), i32x4_splat(0x80000000));
  EXPECT_EQ(i64x2_abs(i64x2_splat(0x8000000000000000)), i64x2_splat(0x8000000000000000));
  EXPECT_EQ(i64x2_neg(i64x2_splat(1)), i64x2_splat(~std::uint64_t{0}));
}

TEST(SimdInteger, NarrowExtendDotPopcntBitmask) {
  for (const bool sse41 : {false, true}) {
    const Sse41Scope scope(sse41);
    const V128 wide = lanes<std::int32_t>({-1, 65536, 40000, 7});
    EXPECT_EQ(i16x8_narrow_i32x4_u(wide, wide), lanes<std::uint16_t>({0, 65535, 40000, 7, 0, 65535, 40000, 7}));
    EXPECT_EQ(i16x8_narrow_i32x4_s(wide, wide), lanes<std::int16_t>({-1, 32767, 32767, 7, -1, 32767, 32767, 7}));
    EXPECT_EQ(i8x16_popcnt(bytes({0, 1, 3, 7, 15, 31, 63, 127, 255, 0x80, 0x55, 0xAA, 0x11, 0xF0, 0x0F, 0xFE})),
              bytes({0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 4, 4, 2, 4, 4, 7}));
  }
  const V128 n = lanes<std::int16_t>({-129, 128, -128, 127, 255, 256, -1, 0});
  EXPECT_EQ(i8x16_narrow_i16x8_s(n, n), bytes({0x80, 127, 0x80, 127, 127, 127, 0xFF, 0, 0x80, 127, 0x80, 127, 127, 127, 0xFF, 0}));
  EXPECT_EQ(i8x16_narrow_i16x8_u(n, n), bytes({0, 128, 0, 127, 255, 255, 0, 0, 0, 128, 0, 127, 255, 255, 0, 0}));
  const V128 b = bytes({0x80, 1, 2, 3, 4, 5, 6, 0xFF, 8, 9, 10, 11, 12, 13, 14, 0xFE});
  EXPECT_EQ(i16x8_extend_low_i8x16_s(b), lanes<std::int16_t>({-128, 1, 2, 3, 4, 5, 6, -1}));
  EXPECT_EQ(i16x8_extend_low_i8x16_u(b), lanes<std::uint16_t>({128, 1, 2, 3, 4, 5, 6, 255}));
  EXPECT_EQ(i16x8_extend_high_i8x16_s(b), lanes<std::int16_t>({8, 9, 10, 11, 12, 13, 14, -2}));
  EXPECT_EQ(i64x2_extend_high_i32x4_s(lanes<std::int32_t>({0, 0, -5, 6})), lanes<std::int64_t>({-5, 6}));
  EXPECT_EQ(i64x2_extmul_high_i32x4_u(i32x4_splat(0xFFFFFFFF), i32x4_splat(0xFFFFFFFF)),
            i64x2_splat(0xFFFFFFFE00000001));
  EXPECT_EQ(i16x8_extadd_pairwise_i8x16_s(i8x16_splat(0x80)), i16x8_splat(0xFF00));  // -256
  EXPECT_EQ(i32x4_extadd_pairwise_i16x8_u(i16x8_splat(0xFFFF)), i32x4_splat(0x1FFFE));
  // Only -32768 * -32768 * 2 overflows i32, and it wraps.
  EXPECT_EQ(i32x4_dot_i16x8_s(i16x8_splat(0x8000), i16x8_splat(0x8000)), i32x4_splat(0x80000000));
  EXPECT_EQ(i8x16_bitmask(bytes({0x80, 0, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x90})), 0x8005U);
  EXPECT_EQ(i16x8_bitmask(lanes<std::int16_t>({-1, 0, 0, 0, 0, 0, 0, -32768})), 0x81U);
  EXPECT_EQ(i32x4_bitmask(lanes<std::int32_t>({0, -1, 0, -1})), 0xAU);
  EXPECT_EQ(i64x2_bitmask(lanes<std::int64_t>({-1, 1})), 1U);
  EXPECT_EQ(i8x16_all_true(bytes({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0})), 0U);
  EXPECT_EQ(i64x2_all_true(lanes<std::uint64_t>({1, 0x100000000})), 1U);
  EXPECT_EQ(v128_any_true(lanes<std::uint64_t>({0, 0x8000000000000000})), 1U);
  EXPECT_EQ(v128_any_true(V128{0, 0}), 0U);
}

TEST(SimdLanes, SwizzleShuffleSplatExtractReplace) {
  const V128 a = bytes({10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25});
  const V128 b = bytes({30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45});
  for (const bool sse41 : {false, true}) {
    const Sse41Scope scope(sse41);
    // Out-of-range indexes (16, 0x70 + 16 would wrap a naive saturating trick, 0x80, 255) give 0.
    EXPECT_EQ(i8x16_swizzle(a, bytes({15, 0, 16, 17, 0x80, 255, 0x8F, 0x7F, 1, 2, 3, 4, 5, 6, 7, 8})),
              bytes({25, 10, 0, 0, 0, 0, 0, 0, 11, 12, 13, 14, 15, 16, 17, 18}));
  }
  const std::array<std::uint8_t, 16> idx = {31, 0, 16, 15, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22};
  EXPECT_EQ(i8x16_shuffle(a, b, idx.data()), bytes({45, 10, 30, 25, 11, 31, 12, 32, 13, 33, 14, 34, 15, 35, 16, 36}));
  EXPECT_EQ(i8x16_extract_lane_s(i8x16_splat(0x1FF), 15), 0xFFFFFFFFU);
  EXPECT_EQ(i8x16_extract_lane_u(i8x16_splat(0x1FF), 15), 0xFFU);
  EXPECT_EQ(i16x8_extract_lane_s(i16x8_splat(0x8000), 7), 0xFFFF8000U);
  EXPECT_EQ(i16x8_extract_lane_u(i16x8_splat(0x8000), 7), 0x8000U);
  EXPECT_EQ(i32x4_replace_lane(V128{0, 0}, 3, 0xDEADBEEF), (V128{0, 0xDEADBEEF00000000}));
  EXPECT_EQ(i64x2_replace_lane(V128{1, 2}, 0, 7), (V128{7, 2}));
  EXPECT_EQ(f64x2_replace_lane(V128{1, 2}, 1, 0x7FF0000000000001), (V128{1, 0x7FF0000000000001}));
  EXPECT_EQ(i8x16_replace_lane(V128{0, 0}, 8, 0x1AB), (V128{0, 0xAB}));
}

TEST(SimdConvert, TruncSatConvertDemotePromote) {
  const V128 f = lanes<float>({std::bit_cast<float>(0x7FC00000U), 2147483648.0F, -2147483904.0F, -1.5F});
  EXPECT_EQ(i32x4_trunc_sat_f32x4_s(f), lanes<std::int32_t>({0, 2147483647, -2147483647 - 1, -1}));
  EXPECT_EQ(i32x4_trunc_sat_f32x4_u(f), lanes<std::uint32_t>({0, 2147483648U, 0, 0}));
  EXPECT_EQ(i32x4_trunc_sat_f32x4_u(lanes<float>({4294967296.0F, 4294967040.0F, -0.9F, 1e30F})),
            lanes<std::uint32_t>({0xFFFFFFFF, 4294967040U, 0, 0xFFFFFFFF}));
  EXPECT_EQ(i32x4_trunc_sat_f64x2_s_zero(lanes<double>({-2147483648.9, 2147483647.9})),
            lanes<std::int32_t>({-2147483647 - 1, 2147483647, 0, 0}));
  EXPECT_EQ(i32x4_trunc_sat_f64x2_u_zero(lanes<double>({4294967295.5, -1.0})), lanes<std::uint32_t>({0xFFFFFFFF, 0, 0, 0}));
  // 16777217 rounds to even (16777216) and 0xFFFFFFFF to 2^32.
  EXPECT_EQ(f32x4_convert_i32x4_s(lanes<std::int32_t>({16777217, -16777219, 0, -1})),
            lanes<float>({16777216.0F, -16777220.0F, 0.0F, -1.0F}));
  EXPECT_EQ(f32x4_convert_i32x4_u(lanes<std::uint32_t>({0xFFFFFFFF, 0x80000001, 16777217, 0})),
            lanes<float>({4294967296.0F, 2147483648.0F, 16777216.0F, 0.0F}));
  EXPECT_EQ(f64x2_convert_low_i32x4_u(lanes<std::uint32_t>({0xFFFFFFFF, 1, 9, 9})), lanes<double>({4294967295.0, 1.0}));
  EXPECT_EQ(f64x2_convert_low_i32x4_s(lanes<std::int32_t>({-1, -2147483647 - 1, 9, 9})), lanes<double>({-1.0, -2147483648.0}));
  EXPECT_EQ(f32x4_demote_f64x2_zero(lanes<double>({1e300, 0x1.000001p0})), lanes<float>({std::bit_cast<float>(0x7F800000U), 1.0F, 0.0F, 0.0F}));
  EXPECT_EQ(f64x2_promote_low_f32x4(lanes<float>({-0.0F, 1.5F, 9.0F, 9.0F})), lanes<double>({-0.0, 1.5}));
}

TEST(SimdMemory, LoadsStoresAndLanesUseLittleEndianBytes) {
  std::array<std::uint8_t, 32> m{};
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint8_t>(0xF0 + i);
  EXPECT_EQ(v128_load(m.data() + 1), (V128{0xF8F7F6F5F4F3F2F1, 0x00FFFEFDFCFBFAF9}));
  EXPECT_EQ(v128_load8x8_s(m.data()), lanes<std::int16_t>({-16, -15, -14, -13, -12, -11, -10, -9}));
  EXPECT_EQ(v128_load16x4_u(m.data()), lanes<std::uint32_t>({0xF1F0, 0xF3F2, 0xF5F4, 0xF7F6}));
  EXPECT_EQ(v128_load32x2_s(m.data()), lanes<std::int64_t>({static_cast<std::int32_t>(0xF3F2F1F0), static_cast<std::int32_t>(0xF7F6F5F4)}));
  EXPECT_EQ(v128_load16_splat(m.data() + 3), i16x8_splat(0xF4F3));
  EXPECT_EQ(v128_load32_zero(m.data()), (V128{0xF3F2F1F0, 0}));
  EXPECT_EQ(v128_load64_zero(m.data()), (V128{0xF7F6F5F4F3F2F1F0, 0}));
  EXPECT_EQ(v128_load16_lane(m.data(), V128{0, 0}, 5), (V128{0, 0xF1F00000}));
  EXPECT_EQ(v128_const(m.data()), v128_load(m.data()));

  std::array<std::uint8_t, 32> out{};
  v128_store(out.data() + 3, V128{0x0706050403020100, 0x0F0E0D0C0B0A0908});
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], i >= 3 && i < 19 ? i - 3 : 0) << i;
  const V128 v = bytes({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  out.fill(0xEE);
  v128_store8_lane(out.data() + 1, v, 13);
  v128_store16_lane(out.data() + 2, v, 7);
  v128_store32_lane(out.data() + 4, v, 1);
  v128_store64_lane(out.data() + 8, v, 1);
  EXPECT_EQ(out[0], 0xEE);
  EXPECT_EQ(out[1], 13);
  EXPECT_EQ(out[2], 14);
  EXPECT_EQ(out[3], 15);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(out[4 + i], 4 + i);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(out[8 + i], 8 + i);
  EXPECT_EQ(out[16], 0xEE);
}

TEST(SimdSlots, TwoSlotsRoundTripAndKernelsFollowTheCpu) {
  std::array<std::uint64_t, 3> slots = {1, 2, 3};
  const V128 v = from_slots(slots.data() + 1);
  EXPECT_EQ(v, (V128{2, 3}));
  to_slots(slots.data(), i64x2_add(v, v));
  EXPECT_EQ(slots, (std::array<std::uint64_t, 3>{4, 6, 3}));
  const Sse41Scope scope(true);
  EXPECT_EQ(sse41_enabled(), cpu_has_sse41());
  set_sse41_enabled(false);
  EXPECT_FALSE(sse41_enabled());
}

}  // namespace
