;; The smallest wasip1 command that does I/O: writes "hello\n" to stdout and exits 0.
;; The in-process benchmark (hello_bench.cpp) measures the per-job cost of running it.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "hello\n")
  (func (export "_start")
    ;; one iovec at 0: { base 16, len 6 }; the count written goes to 8
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 6))
    (if (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))
      (then (call $proc_exit (i32.const 1))))
    (call $proc_exit (i32.const 0))))
