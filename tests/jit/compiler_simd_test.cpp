// The compiled tier's SIMD code (src/wasm/jit/emitter.cpp, the SIMD helpers of runtime_calls.cpp):
// every fixed-width and relaxed SIMD instruction compiles, and compiled code gives the interpreter's
// results (v128 bits, NaN lanes included), traps (kind, function, offset) and fuel, metered and
// unmetered.
#include "jit/tier_fixture.hpp"
#include "wasm/jit/jit.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm {
namespace {

using jit_testing::compile_wat;
using jit_testing::Outcome;
using jit_testing::run;

struct Row {
  std::string_view text;
  std::string_view imm;
  std::string_view sig;
};
constexpr Row kRows[] = {
#define WASM_SIMD_OPCODE(code, Name, text, imm, sig, fn) {text, #imm, #sig},
#include "wasm/syntax/simd_opcodes.def"
#include "wasm/syntax/relaxed_simd_opcodes.def"
#undef WASM_SIMD_OPCODE
};

// One exported function per SIMD instruction, named after it: its operands are the parameters
// (lane immediates 1, memory offsets 3, a fixed shuffle), a store returns what it stored.
std::string simd_module() {
  std::string wat = "(module (memory 1)\n (data (i32.const 0) \"\\00\\01\\02\\80\\7f\\ff\\fe\\10\\20\\30\\c0\\7f\\00\\00\\80\\ff"
                    "\\01\\00\\c0\\7f\\00\\00\\80\\7f\\ff\\ff\\ff\\ff\\00\\00\\00\\80\")\n";
  wat += " (data (i32.const 65488) \"\\ff\\fe\\fd\\fc\\fb\\fa\\f9\\f8\\f7\\f6\\f5\\f4\\f3\\f2\\f1\\f0\\01\\00\\c0\\ff\\00\\00\\f8\\7f"
         "\\11\\22\\33\\44\\55\\66\\77\\88\\99\\aa\\bb\\cc\\dd\\ee\\10\\20\\30\\40\\50\\60\\70\\80\")\n";
  for (const Row& r : kRows) {
    const std::string op(r.text);
    std::string f = " (func (export \"" + op + "\")";
    const std::string_view sig = r.sig;
    const std::string_view imm = r.imm;
    const auto scalar = [](char c) { return c == 'i' ? "i32" : c == 'l' ? "i64" : c == 'f' ? "f32" : "f64"; };
    if (imm == "V128") {
      f += " (result v128) (v128.const i32x4 1 -2 0x7fc00001 0x80000000)";
    } else if (imm == "Shuffle") {
      f += " (param v128 v128) (result v128) (" + op +
           " 0 17 2 19 31 5 16 7 8 9 26 11 12 13 14 15 (local.get 0) (local.get 1))";
    } else if (imm.starts_with("MemArgLane")) {
      if (sig == "iV_V")
        f += " (param i32 v128) (result v128) (" + op + " offset=3 1 (local.get 0) (local.get 1))";
      else
        f += " (param i32 v128) (result v128) (" + op + " offset=3 1 (local.get 0) (local.get 1))"
             " (v128.load offset=3 (local.get 0))";
    } else if (imm.starts_with("MemArg")) {
      if (sig == "i_V")
        f += " (param i32) (result v128) (" + op + " offset=3 (local.get 0))";
      else
        f += " (param i32 v128) (result v128) (" + op + " offset=3 (local.get 0) (local.get 1))"
             " (v128.load offset=3 (local.get 0))";
    } else if (imm.starts_with("Lane")) {
      if (sig[0] == 'V' && sig[1] == '_')
        f += std::string(" (param v128) (result ") + scalar(sig[2]) + ") (" + op + " 1 (local.get 0))";
      else
        f += std::string(" (param v128 ") + scalar(sig[1]) + ") (result v128) (" + op + " 1 (local.get 0) (local.get 1))";
    } else if (sig == "V_V") {
      f += " (param v128) (result v128) (" + op + " (local.get 0))";
    } else if (sig == "VV_V") {
      f += " (param v128 v128) (result v128) (" + op + " (local.get 0) (local.get 1))";
    } else if (sig == "VVV_V") {
      f += " (param v128 v128 v128) (result v128) (" + op + " (local.get 0) (local.get 1) (local.get 2))";
    } else if (sig == "Vi_V") {
      f += " (param v128 i32) (result v128) (" + op + " (local.get 0) (local.get 1))";
    } else if (sig == "V_i") {
      f += " (param v128) (result i32) (" + op + " (local.get 0))";
    } else {  // splat: one scalar
      f += std::string(" (param ") + scalar(sig[0]) + ") (result v128) (" + op + " (local.get 0))";
    }
    wat += f + ")\n";
  }
  return wat + ")";
}

Value v128(std::uint64_t lo, std::uint64_t hi) {
  return Value{ValType::V128, lo, hi};
}

// Lane patterns: integer extremes, float specials (signalling and negative NaNs with payloads, -0,
// infinities, ties for nearest, values out of the i32 range), byte indexes for swizzles.
const std::vector<Value>& vectors() {
  static const std::vector<Value> v = {
      v128(0, 0),
      v128(~0ULL, ~0ULL),
      v128(0x0706050403020100ULL, 0x1F0E0D0C0B0A1009ULL),
      v128(0x800000003FC00000ULL, 0xFFC001237F800001ULL),
      v128(0xC02000007F800000ULL, 0x4F32D05E00000000ULL),
      v128(0x8000000000000000ULL, 0x7FF4000000000001ULL),
      v128(0x4004000000000000ULL, 0xC1E0000000000001ULL),
      v128(0x80007FFFFFFF0001ULL, 0x7F80FF0100FE8081ULL),
      v128(0xBF0000003F000000ULL, 0xC060000040200000ULL),
      v128(0x3FE0000000000000ULL, 0xFFF8000000000000ULL),
  };
  return v;
}
std::vector<Value> scalars(char type) {
  switch (type) {
    case 'i': return {Value::i32(0), Value::i32(1), Value::i32(7), Value::i32(33), Value::i32(0x80000000u)};
    case 'f': return {Value::f32_bits(0x3FC00000u), Value::f32_bits(0x7F800001u), Value::f32_bits(0x80000000u)};
    case 'l': return {Value::i64(0), Value::i64(65), Value::i64(0x8000000000000001ULL)};
    default: return {Value::f64_bits(0x7FF4000000000001ULL), Value::f64_bits(0xC004000000000000ULL)};
  }
}
// Addresses: inside, at the last byte an access of 16 (or less) with offset 3 may start, past the end.
const std::vector<Value>& addresses() {
  static const std::vector<Value> a = {Value::i32(0),         Value::i32(5),          Value::i32(65536 - 19),
                                       Value::i32(65536 - 18), Value::i32(65536 - 11), Value::i32(65536 - 5),
                                       Value::i32(65536 - 3),  Value::i32(0xFFFFFFFFu)};
  return a;
}

// The argument lists each instruction runs with.
std::vector<std::vector<Value>> argument_lists(const Row& r) {
  const std::vector<Value>& v = vectors();
  const std::size_t n = v.size();
  std::vector<std::vector<Value>> out;
  const std::string_view sig = r.sig;
  if (r.imm == "V128") return {{}};
  if (r.imm.starts_with("MemArg")) {
    for (const Value& a : addresses()) {
      if (sig == "i_V")
        out.push_back({a});
      else
        out.push_back({a, v[out.size() % n]});
    }
    return out;
  }
  if (r.imm.starts_with("Lane") && !(sig[0] == 'V' && sig[1] == '_')) {
    for (std::size_t i = 0; i < n; ++i)
      for (const Value& x : scalars(sig[1])) out.push_back({v[i], x});
    return out;
  }
  if (sig == "V_V" || sig == "V_i" || r.imm.starts_with("Lane")) {
    for (const Value& a : v) out.push_back({a});
  } else if (sig == "VV_V") {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t d : {0, 1, 3, 4, 7}) out.push_back({v[i], v[(i + d) % n]});
  } else if (sig == "VVV_V") {
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back({v[i], v[(i + 1) % n], v[(i + 2) % n]});
      out.push_back({v[i], v[(i + 5) % n], v[(i + 3) % n]});
    }
  } else if (sig == "Vi_V") {
    for (std::size_t i = 0; i < n; ++i)
      for (const Value& x : scalars('i')) out.push_back({v[i], x});
  } else {
    for (const Value& x : scalars(sig[0])) out.push_back({x});
  }
  return out;
}

std::string show(const std::vector<Value>& args) {
  std::string s;
  char buf[48];
  for (const Value& a : args) {
    std::snprintf(buf, sizeof buf, " %016llx:%016llx", static_cast<unsigned long long>(a.bits_hi),
                  static_cast<unsigned long long>(a.bits));
    s += buf;
  }
  return s;
}

TEST(CompilerSimd, EverySimdInstructionCompiles) {
  const auto module = compile_wat(simd_module());
  ASSERT_NE(module, nullptr);
  for (int variant : {kUnmetered, kMetered}) {
    const jit::ModuleCode& code = module->impl().jit(variant);
    EXPECT_EQ(code.error, "");
    EXPECT_EQ(code.compiled, module->module().code.size()) << "variant " << variant;
    for (std::size_t i = 0; i < code.reasons.size(); ++i) EXPECT_EQ(code.reasons[i], "") << kRows[i].text;
  }
}

// Where both operands of a lane of f32x4/f64x2 add, sub, mul or div are NaNs, the CPU returns the
// payload of the one the compiler put first, and GCC and LLVM may order them differently (the spec
// allows either: both are arithmetic NaNs; the scalar operators are the same). Such a lane must
// hold one of the two operands quieted in either tier; it is then cleared in both outcomes, so every
// other bit is still compared exactly. Returns false if a lane holds anything else.
bool clear_lanes_of_two_nans(const Row& r, const std::vector<Value>& args, Outcome& want, Outcome& got) {
  const std::string_view text = r.text;
  const bool f32 = text.starts_with("f32x4."), f64 = text.starts_with("f64x2.");
  const std::string_view op = text.substr(6);
  if (!(f32 || f64) || !(op == "add" || op == "sub" || op == "mul" || op == "div") || args.size() != 2 ||
      want.results.size() != 1 || got.results.size() != 1)
    return true;
  const unsigned bits = f32 ? 32 : 64;
  const std::uint64_t lane_mask = f32 ? 0xFFFFFFFFULL : ~0ULL;
  const std::uint64_t quiet = f32 ? 0x00400000ULL : 0x0008000000000000ULL;
  auto lane = [&](const Value& v, unsigned i) {
    const unsigned at = i * bits;
    return ((at < 64 ? v.bits : v.bits_hi) >> (at % 64)) & lane_mask;
  };
  auto is_nan = [&](std::uint64_t x) {
    return f32 ? (x & 0x7FFFFFFFULL) > 0x7F800000ULL : (x & 0x7FFFFFFFFFFFFFFFULL) > 0x7FF0000000000000ULL;
  };
  for (unsigned i = 0; i < 128 / bits; ++i) {
    const std::uint64_t a = lane(args[0], i), b = lane(args[1], i);
    if (!is_nan(a) || !is_nan(b)) continue;
    for (Outcome* o : {&want, &got}) {
      const std::uint64_t x = lane(o->results[0], i);
      if (x != (a | quiet) && x != (b | quiet)) return false;
      const unsigned at = i * bits;
      std::uint64_t& word = at < 64 ? o->results[0].bits : o->results[0].bits_hi;
      word &= ~(lane_mask << (at % 64));
    }
  }
  return true;
}

// Each instruction over lane patterns chosen for its edge cases (NaN payloads and signs, -0,
// saturation, shift counts past the lane width, out-of-range swizzle indexes, accesses across the
// end of memory): the same v128 bits, trap kind, function and offset, and fuel.
TEST(CompilerSimd, EveryInstructionAgreesWithTheInterpreter) {
  const auto module = compile_wat(simd_module());
  ASSERT_NE(module, nullptr);
  std::size_t runs = 0;
  for (const Row& r : kRows) {
    for (const std::vector<Value>& args : argument_lists(r)) {
      for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1000}}) {
        Outcome want = run(module, Tier::Interpret, r.text, args, fuel);
        Outcome got = run(module, Tier::Compile, r.text, args, fuel);
        EXPECT_TRUE(clear_lanes_of_two_nans(r, args, want, got))
            << r.text << show(args) << " want" << show(want.results) << " got" << show(got.results);
        EXPECT_EQ(want, got) << r.text << show(args) << " fuel " << (fuel ? 1000 : -1) << " want" << show(want.results)
                             << " got" << show(got.results);
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 2000U);
}

// A loop of SIMD arithmetic over memory, v128 values passed to and returned from compiled and
// interpreted callees ($via_tail is kept interpreted: over the compile budget), and a v128 global: results,
// traps and fuel for every budget from 1 past completion.
const std::string kLoop = R"((module
  (memory 1)
  (global $acc (mut v128) (v128.const i64x2 0 0))
  (func $mix (param v128 v128) (result v128)
    (f32x4.add (i32x4.mul (local.get 0) (local.get 1)) (f32x4.min (local.get 0) (local.get 1))))
  (func $id (param v128) (result v128) (local.get 0))
  (func $via_tail (param v128) (result v128)
    )" + jit_testing::kept_interpreted() + R"(
    (return_call $id (local.get 0)))
  (func (export "run") (param $n i32) (param $stride i32) (result v128)
    (local $i i32) (local $v v128) (local $w v128)
    (local.set $v (v128.const i32x4 1 2 3 4))
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (v128.store (i32.mul (local.get $i) (local.get $stride)) (local.get $v))
        (local.set $w (v128.load (i32.mul (local.get $i) (local.get $stride))))
        (local.set $v (call $mix (local.get $w) (i8x16.swizzle (local.get $v) (v128.const i8x16 3 2 1 0 7 6 5 4 11 10 9 8 15 14 13 12))))
        (local.set $v (call $via_tail (i16x8.add_sat_s (local.get $v) (i16x8.splat (local.get $i)))))
        (global.set $acc (i64x2.add (global.get $acc) (local.get $v)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (v128.xor (global.get $acc) (local.get $v)))
))";

// i8x16.swizzle and relaxed_swizzle (pshufb on x86-64 with SSSE3 after a saturating add of 0x70,
// which makes every index from 16 up select 0; a helper call elsewhere): each of the 256 index
// bytes in each of the 16 lanes gives the interpreter's lane, metered and unmetered; and where the
// host has SSSE3 the IR calls pshufb and no helper.
TEST(CompilerSimd, SwizzlesGiveTheInterpretersLaneForEveryIndexByteInEveryLane) {
  const auto module = compile_wat(R"((module
    (func (export "swizzle") (param v128 v128) (result v128) (i8x16.swizzle (local.get 0) (local.get 1)))
    (func (export "relaxed") (param v128 v128) (result v128) (i8x16.relaxed_swizzle (local.get 0) (local.get 1)))))");
  ASSERT_NE(module, nullptr);
  const std::filesystem::path dump =
      std::filesystem::temp_directory_path() / ("sprawl-swizzle-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dump);
  ::setenv("SPRAWLING_JIT_DUMP_IR", dump.c_str(), 1);
  const Value data = v128(0xA7A6A5A4A3A2A1A0ULL, 0xAFAEADACABAAA9A8ULL);
  std::size_t selected = 0;
  for (unsigned k = 0; k < 256; ++k) {
    std::uint64_t half[2] = {0, 0};
    for (unsigned lane = 0; lane < 16; ++lane)  // lane `lane` of vector k: (k + 17 lane) mod 256
      half[lane / 8] |= std::uint64_t{(k + 17 * lane) & 0xFF} << (8 * (lane % 8));
    const std::vector<Value> args{data, v128(half[0], half[1])};
    for (const char* name : {"swizzle", "relaxed"}) {
      for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1000}}) {
        const Outcome want = run(module, Tier::Interpret, name, args, fuel);
        const Outcome got = run(module, Tier::Compile, name, args, fuel);
        EXPECT_EQ(want, got) << name << show(args) << " want" << show(want.results) << " got" << show(got.results);
        if (want.results.size() != 1) continue;
        for (unsigned lane = 0; lane < 16; ++lane) {  // the data's bytes are all non-zero
          const std::uint64_t word = lane < 8 ? want.results[0].bits : want.results[0].bits_hi;
          selected += ((word >> (8 * (lane % 8))) & 0xFF) != 0 ? 1 : 0;
        }
      }
    }
  }
  ::unsetenv("SPRAWLING_JIT_DUMP_IR");
  bool pshufb = false;
  bool helper = false;
  for (const jit_testing::DumpedLine& at : jit_testing::dumped_ir(dump)) {
    pshufb = pshufb || at.line.find("@llvm.x86.ssse3.pshuf.b.128") != std::string::npos;
    helper = helper || at.line.find("sprawling_jit_simd_") != std::string::npos;
  }
  std::filesystem::remove_all(dump);
  // Each lane sees each index once per function and budget, 16 of them below 16: 4 runs x 16 lanes
  // x 16 indexes select a byte of the data, the rest give 0.
  EXPECT_EQ(selected, 4U * 16U * 16U);
#if defined(__x86_64__)
  if (__builtin_cpu_supports("ssse3")) {
    EXPECT_TRUE(pshufb);
    EXPECT_FALSE(helper);
  }
#endif
}

TEST(CompilerSimd, LoopsCallsAndGlobalsAgreeForEveryBudget) {
  const auto module = compile_wat(kLoop);
  ASSERT_NE(module, nullptr);
  for (int variant : {kUnmetered, kMetered}) {
    const jit::ModuleCode& code = module->impl().jit(variant);
    EXPECT_EQ(code.reasons[0], "");
    EXPECT_EQ(code.reasons[1], "");
    EXPECT_NE(code.reasons[2].find("over the compile budget"), std::string::npos);  // $via_tail
    EXPECT_EQ(code.reasons[3], "");
  }
  for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1u << 30}}) {
    for (std::uint32_t stride : {16u, 4000u}) {  // 4000: the store of iteration 17 traps
      const std::vector<Value> args = {Value::i32(40), Value::i32(stride)};
      EXPECT_EQ(run(module, Tier::Interpret, "run", args, fuel), run(module, Tier::Compile, "run", args, fuel))
          << stride;
    }
  }
  const std::vector<Value> args = {Value::i32(6), Value::i32(16)};
  const Outcome full = run(module, Tier::Interpret, "run", args, std::uint64_t{1} << 30);
  ASSERT_EQ(full.trap, TrapKind::None);
  for (std::uint64_t budget = 1; budget <= full.fuel + 2; ++budget) {
    EXPECT_EQ(run(module, Tier::Interpret, "run", args, budget), run(module, Tier::Compile, "run", args, budget))
        << budget;
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace sprawling::wasm
