// The compiled tier's garbage collection (src/wasm/jit/emitter.cpp, the GC helpers of
// runtime_calls.cpp): every Gc-family instruction compiles, compiled code gives the interpreter's
// results, traps (kind, function, offset) and fuel at every budget, metered and unmetered; the
// collector finds every reference a compiled frame holds (a local, the operand stack, a field of
// an object only a compiled frame reaches, a caller's frame across a nested call) when it
// collects inside compiled code; and a guest allocating up to the store's limit ends the same
// way on both tiers.
#include "jit/tier_fixture.hpp"
#include "wasm/jit/jit.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sprawling::wasm {
namespace {

using jit_testing::compile_wat;
using jit_testing::expect_all_compiled;
using jit_testing::Outcome;
using jit_testing::run;

// One export per group of instructions, each taking an i32 that steers it into its edge cases
// (null operands, indexes at and past the end, lengths past a segment, failing casts).
constexpr std::string_view kOps = R"((module
  (type $pt (struct (field $x (mut i32)) (field $y (mut i64)) (field $b (mut i8)) (field $h (mut i16))
                    (field $f (mut f64)) (field $v (mut v128)) (field $r (mut anyref)) (field $g f32)))
  (type $ai (array (mut i32)))
  (type $a8 (array (mut i8)))
  (type $a16 (array (mut i16)))
  (type $al (array (mut i64)))
  (type $av (array (mut v128)))
  (type $af (array (mut funcref)))
  (type $ar (array (mut anyref)))
  (type $base (sub (struct (field i32))))
  (type $derived (sub $base (struct (field i32) (field i64))))
  (type $other (sub (struct (field i32))))
  (type $fn (func (result i32)))
  (data $d "\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f\10\81\82\83\84")
  (elem $e func $one $two $three $one)
  (func $one (type $fn) (i32.const 1))
  (func $two (type $fn) (i32.const 2))
  (func $three (type $fn) (i32.const 3))

  (func (export "struct_rw") (param $n i32) (result i64)
    (local $p (ref null $pt))
    (local.set $p (struct.new $pt (local.get $n) (i64.extend_i32_s (local.get $n)) (local.get $n) (local.get $n)
                                  (f64.convert_i32_s (local.get $n)) (i32x4.splat (local.get $n))
                                  (ref.i31 (local.get $n)) (f32.const 1.5)))
    (struct.set $pt $b (local.get $p) (i32.add (local.get $n) (i32.const 0x7f)))
    (struct.set $pt $h (local.get $p) (i32.sub (i32.const 0) (local.get $n)))
    (struct.set $pt $v (local.get $p) (i64x2.splat (i64.const -3)))
    (if (i32.eq (local.get $n) (i32.const 9)) (then (local.set $p (ref.null $pt))))
    (struct.set $pt $x (local.get $p) (i32.mul (struct.get $pt $x (local.get $p)) (i32.const 3)))
    (i64.add
      (i64.add (i64.extend_i32_u (struct.get $pt $x (local.get $p))) (struct.get $pt $y (local.get $p)))
      (i64.add
        (i64.add (i64.extend_i32_s (struct.get_s $pt $b (local.get $p)))
                 (i64.extend_i32_u (struct.get_u $pt $b (local.get $p))))
        (i64.add
          (i64.add (i64.extend_i32_s (struct.get_s $pt $h (local.get $p)))
                   (i64.extend_i32_u (struct.get_u $pt $h (local.get $p))))
          (i64.add
            (i64.add (i64.trunc_f64_s (struct.get $pt $f (local.get $p)))
                     (i64x2.extract_lane 1 (struct.get $pt $v (local.get $p))))
            (i64.add (i64.extend_i32_s (i31.get_s (ref.cast (ref i31) (struct.get $pt $r (local.get $p)))))
                     (i64.trunc_f32_s (struct.get $pt $g (local.get $p)))))))))

  (func (export "struct_default") (param $n i32) (result i64)
    (local $p (ref null $pt))
    (local.set $p (struct.new_default $pt))
    (if (local.get $n) (then (struct.set $pt $y (local.get $p) (i64.const 5))))
    (i64.add (struct.get $pt $y (local.get $p))
             (i64.extend_i32_u (ref.is_null (struct.get $pt $r (local.get $p))))))

  (func (export "array_rw") (param $n i32) (result i64)
    (local $a (ref null $ai)) (local $l (ref null $al)) (local $v (ref null $av))
    (local.set $a (array.new $ai (i32.const 7) (i32.const 10)))
    (local.set $l (array.new_default $al (local.get $n)))
    (local.set $v (array.new $av (v128.const i64x2 11 12) (i32.const 2)))
    (array.set $ai (local.get $a) (local.get $n) (i32.const 40))
    (array.set $av (local.get $v) (i32.const 1) (i64x2.splat (i64.extend_i32_u (local.get $n))))
    (if (i32.gt_u (local.get $n) (i32.const 2)) (then (array.set $al (local.get $l) (i32.const 2) (i64.const -9))))
    (i64.add
      (i64.add (i64.extend_i32_u (array.get $ai (local.get $a) (local.get $n)))
               (i64.extend_i32_u (array.len (local.get $l))))
      (i64.add (i64x2.extract_lane 0 (array.get $av (local.get $v) (i32.const 1)))
               (i64.add (i64x2.extract_lane 1 (array.get $av (local.get $v) (i32.const 0)))
                        (if (result i64) (i32.gt_u (local.get $n) (i32.const 2))
                          (then (array.get $al (local.get $l) (i32.const 2))) (else (i64.const 0)))))))

  (func (export "array_packed") (param $n i32) (result i32)
    (local $a (ref null $a8)) (local $h (ref null $a16))
    (local.set $a (array.new $a8 (i32.const -1) (i32.const 4)))
    (local.set $h (array.new_fixed $a16 3 (i32.const 0x8001) (local.get $n) (i32.const -2)))
    (array.set $a8 (local.get $a) (i32.const 2) (i32.add (local.get $n) (i32.const 0x100)))
    (i32.add
      (i32.add (array.get_s $a8 (local.get $a) (i32.const 0)) (array.get_u $a8 (local.get $a) (i32.const 1)))
      (i32.add (array.get_u $a8 (local.get $a) (i32.const 2))
        (i32.add (array.get_s $a16 (local.get $h) (i32.const 0))
          (i32.add (array.get_u $a16 (local.get $h) (local.get $n)) (array.get_s $a16 (local.get $h) (i32.const 2)))))))

  (func (export "array_null") (param $n i32) (result i32)
    (local $a (ref null $ai))
    (if (local.get $n) (then (local.set $a (array.new_fixed $ai 1 (i32.const 3)))))
    (array.len (local.get $a)))

  (func (export "array_data") (param $n i32) (result i32)
    (local $a (ref null $a16)) (local $b (ref null $a8))
    (local.set $a (array.new_data $a16 $d (local.get $n) (i32.const 4)))
    (local.set $b (array.new_default $a8 (i32.const 6)))
    (array.init_data $a8 $d (local.get $b) (i32.const 1) (local.get $n) (i32.const 3))
    (i32.add (array.get_u $a16 (local.get $a) (i32.const 3))
      (i32.add (array.get_s $a8 (local.get $b) (i32.const 3)) (array.len (local.get $a)))))

  (func (export "array_elem") (param $n i32) (result i32)
    (local $a (ref null $af)) (local $b (ref null $af))
    (local.set $a (array.new_elem $af $e (local.get $n) (i32.const 2)))
    (local.set $b (array.new_default $af (i32.const 5)))
    (array.init_elem $af $e (local.get $b) (local.get $n) (i32.const 0) (i32.const 3))
    (i32.add (call_ref $fn (ref.cast (ref $fn) (array.get $af (local.get $a) (i32.const 1))))
             (call_ref $fn (ref.cast (ref $fn) (array.get $af (local.get $b) (i32.const 4))))))

  (func (export "array_fill_copy") (param $n i32) (result i64)
    (local $a (ref null $ai)) (local $l (ref null $al)) (local $i i32) (local $s i64)
    (local.set $a (array.new_default $ai (i32.const 12)))
    (local.set $l (array.new $al (i64.const 1) (i32.const 12)))
    (array.fill $ai (local.get $a) (i32.const 2) (i32.const 5) (local.get $n))
    (array.copy $ai $ai (local.get $a) (i32.const 1) (local.get $a) (i32.const 0) (i32.shr_u (local.get $n) (i32.const 1)))
    (array.fill $al (local.get $l) (local.get $n) (i64.const -4) (i32.const 1))
    (loop $sum
      (local.set $s (i64.add (local.get $s)
        (i64.add (i64.extend_i32_u (array.get $ai (local.get $a) (local.get $i)))
                 (i64.mul (array.get $al (local.get $l) (local.get $i)) (i64.extend_i32_u (local.get $i))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $sum (i32.lt_u (local.get $i) (i32.const 12))))
    (local.get $s))

  (func (export "i31") (param $n i32) (result i32)
    (local $r i31ref)
    (if (i32.ne (local.get $n) (i32.const 9)) (then (local.set $r (ref.i31 (i32.mul (local.get $n) (i32.const 0x10000001))))))
    (i32.add (i31.get_s (local.get $r)) (i32.mul (i31.get_u (local.get $r)) (i32.const 3))))

  ;; The reference $n names: null, an i31, a $base, a $derived, an $other, an $ai, a host reference.
  (func $pick (param $n i32) (result anyref)
    (block $b6 (block $b5 (block $b4 (block $b3 (block $b2 (block $b1 (block $b0
      (br_table $b0 $b1 $b2 $b3 $b4 $b5 $b6 (local.get $n)))
      (return (ref.null any)))
      (return (ref.i31 (i32.const -5))))
      (return (struct.new $base (i32.const 10))))
      (return (struct.new $derived (i32.const 20) (i64.const 21))))
      (return (struct.new $other (i32.const 30))))
      (return (array.new_fixed $ai 2 (i32.const 40) (i32.const 41))))
    (any.convert_extern (extern.convert_any (ref.i31 (i32.const 77)))))

  (func (export "tests") (param $n i32) (result i32)
    (local $r anyref)
    (local.set $r (call $pick (local.get $n)))
    (i32.or
      (i32.or
        (i32.or (ref.test anyref (local.get $r)) (i32.shl (ref.test (ref any) (local.get $r)) (i32.const 1)))
        (i32.or (i32.shl (ref.test (ref null eq) (local.get $r)) (i32.const 2))
                (i32.shl (ref.test i31ref (local.get $r)) (i32.const 3))))
      (i32.or
        (i32.or (i32.shl (ref.test (ref struct) (local.get $r)) (i32.const 4))
                (i32.shl (ref.test (ref array) (local.get $r)) (i32.const 5)))
        (i32.or
          (i32.or (i32.shl (ref.test (ref $base) (local.get $r)) (i32.const 6))
                  (i32.shl (ref.test (ref null $derived) (local.get $r)) (i32.const 7)))
          (i32.or (i32.shl (ref.test (ref $other) (local.get $r)) (i32.const 8))
                  (i32.shl (ref.test nullref (local.get $r)) (i32.const 9)))))))

  (func (export "cast") (param $n i32) (result i32)
    (struct.get $base 0 (ref.cast (ref $base) (call $pick (local.get $n)))))

  (func (export "cast_null") (param $n i32) (result i32)
    (ref.is_null (ref.cast (ref null i31) (call $pick (local.get $n)))))

  (func (export "br_on_cast") (param $n i32) (result i32)
    (block $is_base (result (ref $base))
      (block $is_i31 (result (ref i31))
        (block $is_null (result nullref)
          (br_on_cast $is_null anyref nullref (call $pick (local.get $n)))
          (br_on_cast $is_i31 anyref (ref i31))
          (br_on_cast $is_base anyref (ref $base))
          (drop)
          (return (i32.const -1)))
        (return (i32.const -2)))
      (return (i31.get_s)))
    (struct.get $base 0))

  (func (export "br_on_cast_fail") (param $n i32) (result i32)
    (local $r anyref)
    (local.set $r
      (block $not_struct (result anyref)
        (return (struct.get $base 0
          (ref.cast (ref $base) (br_on_cast_fail $not_struct anyref (ref struct) (call $pick (local.get $n))))))))
    (if (result i32) (ref.test (ref array) (local.get $r))
      (then (array.len (ref.cast (ref array) (local.get $r))))
      (else (i32.const -3))))

  (func (export "extern") (param $n i32) (result i32)
    (local $a anyref) (local $e externref)
    (local.set $a (call $pick (local.get $n)))
    (local.set $e (extern.convert_any (local.get $a)))
    (i32.add (i32.add (ref.is_null (local.get $e))
                      (i32.shl (ref.eq (ref.cast (ref null eq) (any.convert_extern (local.get $e)))
                                       (ref.cast (ref null eq) (local.get $a))) (i32.const 1)))
             (i32.shl (ref.eq (ref.cast (ref null eq) (call $pick (local.get $n)))
                              (ref.cast (ref null eq) (local.get $a))) (i32.const 2))))
))";

constexpr std::string_view kExports[] = {"struct_rw", "struct_default", "array_rw",  "array_packed",
                                         "array_null", "array_data",    "array_elem", "array_fill_copy",
                                         "i31",       "tests",          "cast",      "cast_null",
                                         "br_on_cast", "br_on_cast_fail", "extern"};
constexpr std::uint32_t kArgs[] = {0, 1, 2, 3, 4, 5, 6, 9, 12, 17, 0xFFFFFFFFu};

TEST(CompilerGc, EveryGcFunctionCompiles) {
  const auto module = compile_wat(kOps);
  ASSERT_NE(module, nullptr);
  expect_all_compiled(*module);
}

// Each export on every argument, unmetered and under every budget from 1 up to what the run
// consumes (so out-of-fuel lands on each of its instructions, the per-element charges of
// array.new, fill and copy included): the same results, trap and fuel on both tiers.
TEST(CompilerGc, EveryInstructionAgreesWithTheInterpreterAtEveryBudget) {
  const auto module = compile_wat(kOps);
  ASSERT_NE(module, nullptr);
  std::size_t runs = 0;
  std::size_t traps = 0;
  for (std::string_view name : kExports) {
    for (std::uint32_t arg : kArgs) {
      const std::vector<Value> args{Value::i32(arg)};
      const Outcome want = run(module, Tier::Interpret, name, args, std::nullopt);
      EXPECT_EQ(want, run(module, Tier::Compile, name, args, std::nullopt)) << name << "(" << arg << ") unmetered";
      traps += want.trap != TrapKind::None ? 1 : 0;
      const Outcome full = run(module, Tier::Interpret, name, args, std::uint64_t{1} << 40);
      // Every budget up to 3000, then the last few (array.new of 2^32 - 1 elements charges them all).
      for (std::uint64_t fuel = 1; fuel <= full.fuel + 1; fuel = fuel == 3000 && full.fuel > 3003 ? full.fuel - 2 : fuel + 1) {
        const Outcome a = run(module, Tier::Interpret, name, args, fuel);
        const Outcome b = run(module, Tier::Compile, name, args, fuel);
        ASSERT_EQ(a, b) << name << "(" << arg << ") fuel " << fuel;
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 1000u);
  EXPECT_GT(traps, 10u);  // the edge cases do trap: null, bounds, casts, segments
}

// ---- roots. $churn allocates about 8 MiB of garbage (1 MiB a collection at least), so every
// call collects several times, inside machine code (the allocation helper called from $churn's
// compiled loop). Each export keeps references of one kind across it and reads them back: a
// freed object would be a null-reference trap (its handle's generation no longer matches). The
// references come from calls to $mk, whose result slot the next call's frame ($churn's)
// overwrites, so that only the compiled frame itself (its SSA values, and what it stores to its
// slots before a call) still holds them.
constexpr std::string_view kRoots = R"((module
  (type $box (struct (field $v (mut i32))))
  (type $pair (struct (field $a (mut (ref null $box))) (field $b (mut (ref null $box)))))
  (type $bytes (array (mut i8)))
  (func $churn
    (local $i i32) (local $t anyref) (local $u anyref)
    (loop $l
      (local.set $t (array.new_default $bytes (i32.const 4096)))
      (local.set $u (struct.new $box (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 2000)))))
  (func $mk (param $v i32) (result (ref $box)) (struct.new $box (local.get $v)))
  (func $mkpair (param $v i32) (result (ref $pair))
    (struct.new $pair (call $mk (local.get $v)) (call $mk (i32.const 5))))
  ;; Locals, kept across $churn and then across allocation helpers in this function's own loop.
  (func (export "local") (param $n i32) (result i32)
    (local $x (ref null $box)) (local $y (ref null $box)) (local $i i32)
    (local.set $x (call $mk (local.get $n)))
    (local.set $y (call $mk (i32.add (local.get $n) (i32.const 1))))
    (call $churn)
    (loop $l
      (drop (array.new_default $bytes (i32.const 4096)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 2000))))
    (i32.add (struct.get $box $v (local.get $x)) (struct.get $box $v (local.get $y))))
  (func $add (param $a (ref $box)) (param $unit i32) (param $b (ref $box)) (result i32)
    (i32.add (struct.get $box $v (local.get $a)) (struct.get $box $v (local.get $b))))
  (func $churn_i32 (result i32) (call $churn) (i32.const 0))
  ;; Operand stack: the first argument is on the stack while the second's evaluation collects.
  (func (export "operand") (param $n i32) (result i32)
    (call $add (call $mk (local.get $n)) (call $churn_i32) (call $mk (i32.const 1000))))
  ;; A field: the boxes are reachable only through the pair, which only this frame holds.
  (func (export "field") (param $n i32) (result i32)
    (local $p (ref null $pair))
    (local.set $p (call $mkpair (local.get $n)))
    (call $churn)
    (i32.add (struct.get $box $v (struct.get $pair $a (local.get $p)))
             (struct.get $box $v (struct.get $pair $b (local.get $p)))))
  ;; Nested: the outer frame's box survives the inner call, whose own box survives its churn.
  (func $inner (param $n i32) (result i32)
    (local $x (ref null $box))
    (local.set $x (call $mk (i32.mul (local.get $n) (i32.const 2))))
    (call $churn)
    (struct.get $box $v (local.get $x)))
  (func (export "nested") (param $n i32) (result i32)
    (local $x (ref null $box))
    (local.set $x (call $mk (local.get $n)))
    (i32.add (call $inner (local.get $n)) (struct.get $box $v (local.get $x))))
))";

TEST(CompilerGc, CompiledFramesKeepEveryKindOfRootAlive) {
  const auto module = compile_wat(kRoots);
  ASSERT_NE(module, nullptr);
  struct Case {
    const char* name;
    std::uint32_t want;
  };
  for (const Case& c : {Case{"local", 41 + 42}, Case{"operand", 41 + 1000}, Case{"field", 41 + 5},
                        Case{"nested", 41 * 2 + 41}}) {
    for (const Tier tier : {Tier::Interpret, Tier::Compile}) {
      for (const bool metered : {false, true}) {
        Store store;
        ASSERT_TRUE(store.set_tier(tier));
        store.set_tier_up(false);
        if (metered) store.set_budget({std::uint64_t{1} << 40, std::nullopt});
        auto inst = store.instantiate(module, {});
        ASSERT_TRUE(inst.has_value()) << inst.error().message;
        auto r = store.invoke(std::get<FuncInst*>(*(*inst)->find_export(c.name)), std::vector<Value>{Value::i32(41)});
        ASSERT_TRUE(r.has_value()) << c.name << " tier " << static_cast<int>(tier) << ": " << r.error().message;
        EXPECT_EQ((*r)[0].bits, c.want) << c.name;
        EXPECT_GT(store.impl().gc.collections(), 1u) << c.name;
      }
    }
  }
  expect_all_compiled(*module);
}

// ---- objects made in machine code: after the first collection the size classes' free lists
// hold blocks, so struct.new, array.new, array.new_default and array.new_fixed take the compiled
// tier's inline path (a block and a slot popped, header and data written there) rather than the
// helper. Every field and element kind (packed i8/i16 cut to size, a v128, a reference, floats),
// arrays of every length from empty to past a size class, read back from fresh objects and from
// survivors kept across collections: the same results, fuel (the per-element charge included)
// and heap on both tiers (as many collections and, up to what the native stack's conservative
// scan keeps, live objects: the inline path leaves the heap as make does).
constexpr std::string_view kChurn = R"((module
  (type $pt (struct (field $x (mut i32)) (field $y i64) (field $b i8) (field $h i16)
                    (field $f f64) (field $v v128) (field $r anyref) (field $g f32)))
  (type $keep (array (mut (ref null $pt))))
  (func $sum (param $p (ref null $pt)) (result i64)
    (i64.add
      (i64.add (i64.extend_i32_u (struct.get $pt $x (local.get $p))) (struct.get $pt $y (local.get $p)))
      (i64.add
        (i64.add (i64.extend_i32_s (struct.get_s $pt $b (local.get $p)))
                 (i64.extend_i32_u (struct.get_u $pt $b (local.get $p))))
        (i64.add
          (i64.add (i64.extend_i32_s (struct.get_s $pt $h (local.get $p)))
                   (i64.extend_i32_u (struct.get_u $pt $h (local.get $p))))
          (i64.add
            (i64.add (i64.trunc_sat_f64_s (struct.get $pt $f (local.get $p)))
                     (i64.add (i64.extend_i32_u (i32x4.extract_lane 3 (struct.get $pt $v (local.get $p))))
                              (i64.extend_i32_u (i32x4.extract_lane 0 (struct.get $pt $v (local.get $p))))))
            (i64.add (if (result i64) (ref.is_null (struct.get $pt $r (local.get $p)))
                       (then (i64.const 7))
                       (else (i64.extend_i32_s (i31.get_s (ref.cast (ref i31) (struct.get $pt $r (local.get $p)))))))
                     (i64.trunc_sat_f32_s (struct.get $pt $g (local.get $p)))))))))
  (func (export "churn") (param $n i32) (result i64)
    (local $i i32) (local $p (ref null $pt)) (local $k (ref null $keep)) (local $s i64)
    (local.set $k (array.new_default $keep (i32.const 64)))
    (loop $l
      (local.set $p (struct.new $pt (i32.mul (local.get $i) (i32.const 0x9E3779B1))
                                    (i64.extend_i32_s (i32.sub (i32.const 0) (local.get $i)))
                                    (i32.add (local.get $i) (i32.const 0x1234))
                                    (i32.sub (i32.const 0) (local.get $i))
                                    (f64.convert_i32_s (local.get $i))
                                    (i32x4.splat (i32.xor (local.get $i) (i32.const -1)))
                                    (ref.i31 (i32.shl (local.get $i) (i32.const 3)))
                                    (f32.convert_i32_u (local.get $i))))
      (if (i32.eqz (i32.and (local.get $i) (i32.const 7)))
        (then (array.set $keep (local.get $k) (i32.and (i32.shr_u (local.get $i) (i32.const 3)) (i32.const 63))
                         (local.get $p))))
      (local.set $s (i64.add (i64.mul (local.get $s) (i64.const 31))
                             (i64.add (call $sum (local.get $p)) (call $sum (struct.new_default $pt)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (local.set $i (i32.const 0))
    (loop $l
      (if (i32.eqz (ref.is_null (array.get $keep (local.get $k) (local.get $i))))
        (then (local.set $s (i64.add (i64.mul (local.get $s) (i64.const 31))
                                     (call $sum (array.get $keep (local.get $k) (local.get $i)))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 64))))
    (local.get $s))
  ;; Arrays of each element size, of lengths 0 up to past a size class (i32 × 130: 520 bytes),
  ;; with and without an initial value, and fixed ones; summed back from fresh ones and from
  ;; survivors.
  (type $a8 (array (mut i8)))
  (type $a16 (array (mut i16)))
  (type $a32 (array (mut i32)))
  (type $a64 (array (mut i64)))
  (type $av (array (mut v128)))
  (type $keepa (array (mut (ref null $a8))))
  (func $sum8 (param $a (ref $a8)) (result i64)
    (local $i i32) (local $s i64)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (array.len (local.get $a))))
        (local.set $s (i64.add (i64.mul (local.get $s) (i64.const 3))
                               (i64.extend_i32_s (array.get_s $a8 (local.get $a) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i64.add (local.get $s) (i64.extend_i32_u (array.len (local.get $a)))))
  (func (export "arrays") (param $n i32) (result i64)
    (local $i i32) (local $len i32) (local $s i64) (local $k (ref null $keepa)) (local $a (ref null $a8))
    (local $b (ref null $a16)) (local $c (ref null $a32)) (local $d (ref null $a64)) (local $v (ref null $av))
    (local.set $k (array.new_default $keepa (i32.const 32)))
    (loop $l
      (local.set $len (i32.rem_u (local.get $i) (i32.const 131)))
      (local.set $a (array.new $a8 (i32.add (local.get $i) (i32.const 0x1f0)) (local.get $len)))
      (local.set $b (array.new_default $a16 (i32.add (local.get $len) (i32.const 1))))
      (array.set $a16 (local.get $b) (i32.const 0) (i32.const -2))
      (local.set $c (array.new $a32 (i32.mul (local.get $i) (i32.const 7)) (local.get $len)))
      (local.set $d (array.new_fixed $a64 3 (i64.extend_i32_u (local.get $i)) (i64.const -1) (i64.const 5)))
      (local.set $v (array.new $av (i32x4.splat (local.get $i)) (i32.and (local.get $len) (i32.const 31))))
      (if (i32.eqz (i32.and (local.get $i) (i32.const 15)))
        (then (array.set $keepa (local.get $k) (i32.and (i32.shr_u (local.get $i) (i32.const 4)) (i32.const 31))
                         (local.get $a))))
      (local.set $s
        (i64.add (i64.mul (local.get $s) (i64.const 31))
          (i64.add (call $sum8 (ref.as_non_null (local.get $a)))
            (i64.add (call $sum8 (array.new_fixed $a8 5 (local.get $i) (i32.const 0x180) (i32.const 3)
                                                    (local.get $len) (i32.const -1)))
              (i64.add
                (i64.add (i64.extend_i32_s (array.get_s $a16 (local.get $b) (i32.const 0)))
                         (i64.extend_i32_u (array.get_u $a16 (local.get $b)
                                                       (i32.shr_u (local.get $len) (i32.const 1)))))
                (i64.add
                  (if (result i64) (local.get $len)
                    (then (i64.extend_i32_u (array.get $a32 (local.get $c) (i32.sub (local.get $len) (i32.const 1)))))
                    (else (i64.const 11)))
                  (i64.add (array.get $a64 (local.get $d) (i32.const 0))
                    (i64.add (i64.extend_i32_u (array.len (local.get $v)))
                      (if (result i64) (i32.and (local.get $len) (i32.const 31))
                        (then (i64x2.extract_lane 1 (array.get $av (local.get $v) (i32.const 0))))
                        (else (i64.const 13)))))))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (local.set $i (i32.const 0))
    (loop $l
      (if (i32.eqz (ref.is_null (array.get $keepa (local.get $k) (local.get $i))))
        (then (local.set $s (i64.add (i64.mul (local.get $s) (i64.const 31))
                                     (call $sum8 (ref.as_non_null (array.get $keepa (local.get $k) (local.get $i))))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 32))))
    (local.get $s))
))";

TEST(CompilerGc, ObjectsMadeInlineAfterCollectionsMatchTheInterpreter) {
  const auto module = compile_wat(kChurn);
  ASSERT_NE(module, nullptr);
  struct Heap {
    Outcome outcome;
    std::size_t live = 0;
    std::uint64_t collections = 0;
  };
  auto run_export = [&](Tier tier, std::string_view name, std::uint32_t arg, std::optional<std::uint64_t> fuel) {
    Store store;
    EXPECT_TRUE(store.set_tier(tier));
    store.set_tier_up(false);
    store.set_budget({fuel, std::nullopt});
    auto inst = store.instantiate(module, {});
    EXPECT_TRUE(inst.has_value());
    if (!inst) return Heap{};
    auto r = store.invoke(std::get<FuncInst*>(*(*inst)->find_export(name)), std::vector<Value>{Value::i32(arg)});
    return Heap{jit_testing::outcome_of(store, r), store.impl().gc.live_objects(), store.impl().gc.collections()};
  };
  for (const auto& [name, arg] : {std::pair<std::string_view, std::uint32_t>{"churn", 40000}, {"arrays", 6000}}) {
    const Heap full = run_export(Tier::Interpret, name, arg, std::uint64_t{1} << 40);
    ASSERT_EQ(full.outcome.trap, TrapKind::None) << name;
    EXPECT_GT(full.collections, 3u) << name;
    // Unmetered, metered to the end, and out of fuel early, halfway and on the last instruction.
    for (std::optional<std::uint64_t> fuel :
         {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{std::uint64_t{1} << 40},
          std::optional<std::uint64_t>{full.outcome.fuel / 50}, std::optional<std::uint64_t>{full.outcome.fuel / 2},
          std::optional<std::uint64_t>{full.outcome.fuel - 1}}) {
      const std::string what = std::string(name) + " " + (fuel ? std::to_string(*fuel) : "unmetered");
      const Heap want = run_export(Tier::Interpret, name, arg, fuel);
      const Heap got = run_export(Tier::Compile, name, arg, fuel);
      EXPECT_EQ(want.outcome, got.outcome) << what;
      // The compiled tier also scans the native stack conservatively, where stale copies of
      // handles may keep objects the interpreter frees (8 of 4,600 under ASan+UBSan, whose
      // frames keep more): never fewer, and a few stale words, never a share of the
      // allocations, which a miscounting inline path would give.
      EXPECT_GE(got.live, want.live) << what;
      EXPECT_LE(got.live, want.live + 64 + want.live / 32) << what;
      EXPECT_EQ(want.collections, got.collections) << what;
    }
  }
  for (int variant : {kUnmetered, kMetered}) {
    const jit::ModuleCode& code = module->impl().jit(variant);
    EXPECT_EQ(code.compiled, module->module().code.size());
  }
}

// ---- allocating until the store's limit: a list that keeps every node alive (so the point of
// refusal does not depend on what a conservative scan happens to keep) and a doubling array.
constexpr std::string_view kHostile = R"((module
  (type $buf (array (mut i64)))
  (type $node (struct (field $next (ref null $node)) (field $v i64) (field $payload (ref null $buf))))
  (func (export "list") (param $n i32) (result i32)
    (local $l (ref null $node)) (local $i i32)
    (loop $more
      (local.set $l (struct.new $node (local.get $l) (i64.extend_i32_u (local.get $i))
                                      (array.new_default $buf (local.get $n))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $more))
    (local.get $i))
  (func (export "doubling") (param $n i32) (result i32)
    (local $keep (ref null $buf))
    (loop $more
      (local.set $keep (array.new $buf (i64.const 7) (local.get $n)))
      (local.set $n (i32.add (local.get $n) (local.get $n)))
      (br $more))
    (i32.const 0))
))";

TEST(CompilerGc, AllocatingUpToTheStoreLimitEndsTheSameWay) {
  const auto module = compile_wat(kHostile);
  ASSERT_NE(module, nullptr);
  StoreLimits limits;
  limits.max_store_bytes = std::uint64_t{24} << 20;
  for (const auto& [name, arg] : {std::pair<const char*, std::uint32_t>{"list", 0}, {"list", 30}, {"doubling", 1}}) {
    for (std::optional<std::uint64_t> fuel : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{std::uint64_t{1} << 40}}) {
      const Outcome want = run(module, Tier::Interpret, name, {Value::i32(arg)}, fuel, limits);
      const Outcome got = run(module, Tier::Compile, name, {Value::i32(arg)}, fuel, limits);
      EXPECT_EQ(want.trap, TrapKind::GcHeapLimit) << name;
      EXPECT_EQ(want, got) << name << "(" << arg << ") " << (fuel ? "metered" : "unmetered");
    }
  }
}

}  // namespace
}  // namespace sprawling::wasm
