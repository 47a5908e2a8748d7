// A GC module shared by the rooting tests (tests/wasm/runtime/heap/gc_heap_test.cpp: references the host holds;
// tests/jit/gc_roots_test.cpp: references compiled frames hold): it makes struct objects, hands
// them out as anyref or wrapped as externref (extern.convert_any), churns through 16 MiB of
// garbage arrays (several collections), and reads an object's field back (through the externref:
// a cast failure if the object was freed).
#pragma once

#include <string_view>

namespace sprawling::wasm::gc_testing {

constexpr std::string_view kGcChurnModule = R"((module
  (type $s (struct (field i32)))
  (type $a (array (mut i64)))
  (func (export "make") (param i32) (result (ref null $s)) (struct.new $s (local.get 0)))
  (func (export "make_extern") (param i32) (result externref) (extern.convert_any (struct.new $s (local.get 0))))
  (func (export "churn")
    (local $i i32)
    (loop $l
      (drop (array.new_default $a (i32.const 1024)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 2000)))))
  (func (export "read") (param (ref null $s)) (result i32) (struct.get $s 0 (local.get 0)))
  (func (export "read_extern") (param externref) (result i32)
    (struct.get $s 0 (ref.cast (ref $s) (any.convert_extern (local.get 0)))))
))";

}  // namespace sprawling::wasm::gc_testing
