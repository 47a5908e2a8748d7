# Small modules in the text format (the engine takes .wat as well as .wasm) shared by the Python
# module's tests (test_sprawling.py) and its benchmark (bench.py).

# The canonical "ok\n" guest, as text: the engine takes .wat as well as .wasm.
OK_WAT = b"""(module
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 8) "ok\\n")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 8)) (i32.store (i32.const 4) (i32.const 3))
    (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
"""

DENIED_WAT = b"""(module (import "env" "open_socket" (func (param i32) (result i32)))
  (memory (export "memory") 1) (func (export "_start")))
"""

# Modules defining what each resource limit counts (checked when the module is instantiated).
TWO_TABLES_WAT = b'(module (table 1 funcref) (table 1 funcref) (memory (export "memory") 1) (func (export "_start")))'
BIG_TABLE_WAT = b'(module (table 1000 funcref) (memory (export "memory") 1) (func (export "_start")))'
ONE_MEMORY_WAT = b'(module (memory (export "memory") 1) (func (export "_start")))'

# Prints "snap\n" when started from its initialised instance, "cold\n" when _start runs on a fresh one.
SNAPSHOT_WAT = b"""(module
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $inited (mut i32) (i32.const 0))
  (data (i32.const 16) "cold\\nsnap\\n")
  (func (export "wizer.initialize") (global.set $inited (i32.const 1)))
  (func (export "_start")
    (i32.store (i32.const 0) (i32.add (i32.const 16) (i32.mul (global.get $inited) (i32.const 5))))
    (i32.store (i32.const 4) (i32.const 5))
    (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
"""

# Loops until stopped by its fuel, its deadline or a cancel.
SPIN_WAT = b'(module (memory (export "memory") 1) (func (export "_start") (loop $l (br $l))))'

# Exits with status 3.
EXIT3_WAT = b"""(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $exit (i32.const 3))))
"""

# Traps (unreachable).
TRAP_WAT = b'(module (memory (export "memory") 1) (func (export "_start") unreachable))'

# Uses a tail call (return_call): refused when the feature is off.
TAIL_CALL_WAT = b"""(module (memory (export "memory") 1)
  (func $f) (func (export "_start") (return_call $f)))
"""

# Exits with the sign bit of 0/0 computed from a local: x86 makes the NaN 0xFFC00000 (exit 1),
# NaN canonicalization the canonical 0x7FC00000 (exit 0).
NAN_SIGN_WAT = b"""(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (local f32)
    (call $exit (i32.shr_u (i32.reinterpret_f32 (f32.div (local.get 0) (local.get 0))) (i32.const 31)))))
"""
