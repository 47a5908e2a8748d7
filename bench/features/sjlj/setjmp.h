// setjmp/longjmp for C built with clang's WebAssembly setjmp/longjmp lowering
// (`-mllvm -wasm-enable-sjlj -mexception-handling`), which the wasi-libc of Debian 12 does not
// provide. The lowering turns every setjmp call into a call of __wasm_setjmp and a check after
// each call that may longjmp, and every longjmp into __wasm_longjmp, which throws the C longjmp
// tag; runtime.c defines those functions and the tag. A jmp_buf holds what they keep.
#ifndef SPRAWLING_BENCH_SJLJ_SETJMP_H
#define SPRAWLING_BENCH_SJLJ_SETJMP_H

#include <stdint.h>

typedef struct {
  void* invocation;  // the frame that called setjmp (an address the lowering makes per call)
  uint32_t label;    // which setjmp of that frame
  struct {
    void* env;       // the thrown payload: the buffer and the value setjmp returns
    int value;
  } thrown;
} jmp_buf[1];

int setjmp(jmp_buf env) __attribute__((returns_twice));
_Noreturn void longjmp(jmp_buf env, int value);

#endif
