;; An exception-heavy program: a recursive evaluator of generated arithmetic expressions that
;; reports an error (a division by zero) by throwing out of the recursion, caught by a try_table
;; around each expression, as a C interpreter reports its errors by longjmp (the same program as
;; throw_eval.c, whose native build gives the same checksum). About two thirds of the expressions
;; throw, from up to ten frames deep.
;; A WASI command: `throw_eval.wat N` evaluates N expressions (default 2,000,000) and prints the
;; checksum and the error count: `sprawl run bench/features/throw_eval.wat 2000000`.
(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (tag $div0)
  (global $state (mut i64) (i64.const 0x9E3779B97F4A7C15))

  ;; xorshift64, its high 32 bits.
  (func $next (result i32)
    (local $s i64)
    (local.set $s (global.get $state))
    (local.set $s (i64.xor (local.get $s) (i64.shl (local.get $s) (i64.const 13))))
    (local.set $s (i64.xor (local.get $s) (i64.shr_u (local.get $s) (i64.const 7))))
    (local.set $s (i64.xor (local.get $s) (i64.shl (local.get $s) (i64.const 17))))
    (global.set $state (local.get $s))
    (i32.wrap_i64 (i64.shr_u (local.get $s) (i64.const 32))))

  ;; A random expression of at most $depth levels, evaluated as it is generated: a leaf (0..9) or
  ;; two operands and one of + - * /; a division by zero throws $div0.
  (func $eval (param $depth i32) (result i64)
    (local $r i32) (local $a i64) (local $b i64)
    (local.set $r (call $next))
    (if (i32.or (i32.eqz (local.get $depth)) (i32.eqz (i32.rem_u (local.get $r) (i32.const 4))))
      (then (return (i64.extend_i32_u (i32.rem_u (local.get $r) (i32.const 10))))))
    (local.set $a (call $eval (i32.sub (local.get $depth) (i32.const 1))))
    (local.set $b (call $eval (i32.sub (local.get $depth) (i32.const 1))))
    (block $div
      (block $mul
        (block $sub
          (block $add
            (br_table $add $sub $mul $div (i32.rem_u (i32.shr_u (local.get $r) (i32.const 8)) (i32.const 4))))
          (return (i64.add (local.get $a) (local.get $b))))
        (return (i64.sub (local.get $a) (local.get $b))))
      (return (i64.mul (local.get $a) (local.get $b))))
    (if (i64.eqz (local.get $b)) (then (throw $div0)))
    (i64.div_u (local.get $a) (local.get $b)))

  ;; $n expressions: the checksum of their values (sum * 31 + value) and how many threw.
  (func $run (param $n i64) (result i64 i64)
    (local $sum i64) (local $errors i64) (local $i i64)
    (block $done
      (loop $each
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (block $failed
          (local.set $sum
            (i64.add (i64.mul (local.get $sum) (i64.const 31))
                     (try_table (result i64) (catch $div0 $failed) (call $eval (i32.const 10)))))
          (local.set $i (i64.add (local.get $i) (i64.const 1)))
          (br $each))
        (local.set $errors (i64.add (local.get $errors) (i64.const 1)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $each)))
    (local.get $sum) (local.get $errors))

  ;; The decimal digits of $v ending at byte $end (exclusive): the first digit's address.
  (func $digits (param $v i64) (param $end i32) (result i32)
    (loop $more
      (local.set $end (i32.sub (local.get $end) (i32.const 1)))
      (i64.store8 (local.get $end) (i64.add (i64.const 48) (i64.rem_u (local.get $v) (i64.const 10))))
      (local.set $v (i64.div_u (local.get $v) (i64.const 10)))
      (br_if $more (i64.ne (local.get $v) (i64.const 0))))
    (local.get $end))

  ;; argv[1] as a decimal number (2,000,000 without one); prints "SUM ERRORS\n".
  (func (export "_start")
    (local $n i64) (local $p i32) (local $c i32) (local $sum i64) (local $errors i64) (local $at i32)
    (local $first i32)
    (local.set $n (i64.const 2000000))
    (drop (call $args_sizes_get (i32.const 0) (i32.const 4)))
    (if (i32.ge_u (i32.load (i32.const 0)) (i32.const 2))
      (then
        (drop (call $args_get (i32.const 64) (i32.const 1024)))
        (local.set $p (i32.load (i32.const 68)))
        (local.set $n (i64.const 0))
        (block $end
          (loop $digit
            (local.set $c (i32.sub (i32.load8_u (local.get $p)) (i32.const 48)))
            (br_if $end (i32.gt_u (local.get $c) (i32.const 9)))
            (local.set $n (i64.add (i64.mul (local.get $n) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $digit)))))
    (call $run (local.get $n))
    (local.set $errors)
    (local.set $sum)
    ;; "SUM ERRORS\n" built backwards from byte 4096.
    (i32.store8 (i32.const 4095) (i32.const 10))
    (local.set $at (call $digits (local.get $errors) (i32.const 4095)))
    (local.set $at (i32.sub (local.get $at) (i32.const 1)))
    (i32.store8 (local.get $at) (i32.const 32))
    (local.set $first (call $digits (local.get $sum) (local.get $at)))
    (i32.store (i32.const 8) (local.get $first))
    (i32.store (i32.const 12) (i32.sub (i32.const 4096) (local.get $first)))
    (drop (call $fd_write (i32.const 1) (i32.const 8) (i32.const 1) (i32.const 16)))))
