;; A v128 global initialized by global.get of another v128 global (itself initialized the same
;; way) keeps all 128 bits: the high half was taken from the initializer expression (zero for a
;; global.get) instead of from the global it reads. Found against Wasmtime: i16x8.all_true of such
;; a global gave 0 where every lane is non-zero.
(module
  (global $a v128 (v128.const i32x4 0xf480780d 0x44630383 0xe70503db 0xcfb7b31c))
  (global $b v128 (global.get $a))
  (global $c (mut v128) (global.get $b))
  (func (export "b") (result v128) (global.get $b))
  (func (export "c") (result v128) (global.get $c))
  (func (export "all_true") (result i32) (i16x8.all_true (global.get $c))))
(assert_return (invoke "b") (v128.const i32x4 0xf480780d 0x44630383 0xe70503db 0xcfb7b31c))
(assert_return (invoke "c") (v128.const i32x4 0xf480780d 0x44630383 0xe70503db 0xcfb7b31c))
(assert_return (invoke "all_true") (i32.const 1))
