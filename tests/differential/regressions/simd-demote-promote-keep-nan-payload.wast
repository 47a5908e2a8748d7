;; Found checking against Wasmtime with wasm-smith modules: f64x2.promote_low_f32x4 gave the
;; canonical NaN for a NaN lane, where Wasmtime (and f64.promote_f32 in both engines) keep the
;; payload, quieted; a module that reinterpreted the result as integers and branched on it took
;; the other path. Demote and promote now convert a NaN lane as their scalar forms do, on both
;; tiers. The expected bits are Wasmtime's.
(module
  (func (export "promote") (param i32 i32) (result v128)
    (f64x2.promote_low_f32x4
      (i32x4.replace_lane 1 (i32x4.splat (local.get 0)) (local.get 1))))
  (func (export "demote") (param i64 i64) (result v128)
    (f32x4.demote_f64x2_zero
      (i64x2.replace_lane 1 (i64x2.splat (local.get 0)) (local.get 1))))
  (func (export "scalar_promote") (param i32) (result i64)
    (i64.reinterpret_f64 (f64.promote_f32 (f32.reinterpret_i32 (local.get 0)))))
  ;; The shape the generated module had: a relaxed truncation's out-of-range lane (all ones),
  ;; promoted, its high half widened and tested.
  (func (export "branch") (result i32)
    (i64x2.all_true
      (i64x2.extend_high_i32x4_s
        (f64x2.promote_low_f32x4
          (i32x4.relaxed_trunc_f32x4_u (v128.const i32x4 0x8b1d3a50 0x7af4fcee 0x17b98583 0x2c49b52c)))))))
(assert_return (invoke "promote" (i32.const 0) (i32.const 0xffffffff))
  (v128.const i64x2 0 0xffffffffe0000000))
(assert_return (invoke "promote" (i32.const 0xff800001) (i32.const 0x7fa00001))
  (v128.const i64x2 0xfff8000020000000 0x7ffc000020000000))
(assert_return (invoke "demote" (i64.const 0xfff0000000000001) (i64.const 0x7ff4000000000000))
  (v128.const i32x4 0xffc00000 0x7fe00000 0 0))
(assert_return (invoke "scalar_promote" (i32.const 0xffffffff)) (i64.const 0xffffffffe0000000))
(assert_return (invoke "branch") (i32.const 1))
