;; binary-trees (the Computer Language Benchmarks Game's allocation kernel) on WebAssembly GC
;; structs: a stretch tree of depth n + 1, a long-lived tree of depth n, then for each depth d =
;; 4, 6, ..., n, 2^(n - d + 4) trees of depth d made and walked. `run(n)` returns the sum of every
;; walk's node count (a checksum every engine must agree on). A WASI command: `binary_trees.wat N`
;; prints run(N) (N defaults to 16): `sprawl run --tier interpret|compile bench/gc/binary_trees.wat 18`.
(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (type $node (struct (field $left (ref null $node)) (field $right (ref null $node))))

  (func $make (param $d i32) (result (ref $node))
    (if (result (ref $node)) (i32.eqz (local.get $d))
      (then (struct.new $node (ref.null $node) (ref.null $node)))
      (else
        (local.set $d (i32.sub (local.get $d) (i32.const 1)))
        (struct.new $node (call $make (local.get $d)) (call $make (local.get $d))))))

  (func $check (param $t (ref $node)) (result i32)
    (local $l (ref null $node))
    (local.set $l (struct.get $node $left (local.get $t)))
    (if (result i32) (ref.is_null (local.get $l))
      (then (i32.const 1))
      (else
        (i32.add (i32.const 1)
          (i32.add (call $check (ref.as_non_null (local.get $l)))
                   (call $check (ref.as_non_null (struct.get $node $right (local.get $t)))))))))

  (func $run (export "run") (param $n i32) (result i32)
    (local $sum i32) (local $long (ref null $node)) (local $d i32) (local $i i32) (local $iters i32)
    (local.set $sum (call $check (call $make (i32.add (local.get $n) (i32.const 1)))))
    (local.set $long (call $make (local.get $n)))
    (local.set $d (i32.const 4))
    (block $done
      (loop $depths
        (br_if $done (i32.gt_s (local.get $d) (local.get $n)))
        (local.set $iters (i32.shl (i32.const 1) (i32.add (i32.sub (local.get $n) (local.get $d)) (i32.const 4))))
        (local.set $i (i32.const 0))
        (loop $trees
          (local.set $sum (i32.add (local.get $sum) (call $check (call $make (local.get $d)))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $trees (i32.lt_s (local.get $i) (local.get $iters))))
        (local.set $d (i32.add (local.get $d) (i32.const 2)))
        (br $depths)))
    (i32.add (local.get $sum) (call $check (ref.as_non_null (local.get $long)))))

  ;; argv[1] as a decimal number (16 without one), run(N) printed in decimal with a newline.
  (func (export "_start")
    (local $n i32) (local $p i32) (local $c i32) (local $r i32) (local $at i32)
    (local.set $n (i32.const 16))
    (drop (call $args_sizes_get (i32.const 0) (i32.const 4)))
    (if (i32.ge_u (i32.load (i32.const 0)) (i32.const 2))
      (then
        (drop (call $args_get (i32.const 64) (i32.const 1024)))
        (local.set $p (i32.load (i32.const 68)))
        (local.set $n (i32.const 0))
        (block $end
          (loop $digits
            (local.set $c (i32.sub (i32.load8_u (local.get $p)) (i32.const 48)))
            (br_if $end (i32.gt_u (local.get $c) (i32.const 9)))
            (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10)) (local.get $c)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $digits)))))
    (local.set $r (call $run (local.get $n)))
    (local.set $at (i32.const 63))
    (i32.store8 (local.get $at) (i32.const 10))
    (loop $out
      (local.set $at (i32.sub (local.get $at) (i32.const 1)))
      (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.rem_u (local.get $r) (i32.const 10))))
      (local.set $r (i32.div_u (local.get $r) (i32.const 10)))
      (br_if $out (local.get $r)))
    (i32.store (i32.const 8) (local.get $at))
    (i32.store (i32.const 12) (i32.sub (i32.const 64) (local.get $at)))
    (drop (call $fd_write (i32.const 1) (i32.const 8) (i32.const 1) (i32.const 16)))))
