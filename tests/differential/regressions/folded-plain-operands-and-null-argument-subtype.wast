;; Two gaps found checking against Wasmtime's tools: a folded instruction whose operands are
;; plain instructions, `(ref.i31 local.get 0)` (wabt and wasm-tools accept it), did not parse; and
;; an invoke passing `(ref.null none)` for a `(ref null $t)` parameter was refused as "the wrong
;; type" (a null's type is its hierarchy's bottom, a subtype of every nullable type in it).
(module
  (type $t (struct (field i32)))
  (func (export "i31") (param i32) (result i32) (i31.get_s (ref.i31 local.get 0)))
  (func (export "sum") (param i32 i32) (result i32) (i32.add local.get 0 (local.get 1)))
  (func (export "null") (param (ref null $t)) (result i32) (ref.is_null local.get 0))
  (func (export "field") (param (ref null $t)) (result i32) (struct.get $t 0 (local.get 0))))
(assert_return (invoke "i31" (i32.const -5)) (i32.const -5))
(assert_return (invoke "sum" (i32.const 2) (i32.const 40)) (i32.const 42))
(assert_return (invoke "null" (ref.null none)) (i32.const 1))
(assert_return (invoke "null" (ref.null struct)) (i32.const 1))
(assert_trap (invoke "field" (ref.null none)) "null structure reference")
