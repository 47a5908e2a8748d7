// The runtime functions of clang's WebAssembly setjmp/longjmp lowering (see setjmp.h), as LLVM 19
// calls them: __wasm_setjmp records which frame and which setjmp; __wasm_longjmp throws the
// `__c_longjmp` tag with a pointer to {buffer, value}; the frame that catches it asks
// __wasm_setjmp_test whether the buffer is one of its own setjmps (its label) or not (0: rethrow).
// Built without the lowering, with exception handling on.
#include "setjmp.h"

// The tag longjmp throws, defined here (the lowering's objects reference it weakly).
__asm__(".globl __c_longjmp\n.tagtype __c_longjmp i32\n__c_longjmp:\n");

void __wasm_setjmp(void* env, uint32_t label, void* invocation) {
  jmp_buf* buf = env;
  (*buf)->invocation = invocation;
  (*buf)->label = label;
}

uint32_t __wasm_setjmp_test(void* env, void* invocation) {
  jmp_buf* buf = env;
  return (*buf)->invocation == invocation ? (*buf)->label : 0;
}

_Noreturn void __wasm_longjmp(void* env, int value) {
  jmp_buf* buf = env;
  (*buf)->thrown.env = env;
  (*buf)->thrown.value = value != 0 ? value : 1;
  __builtin_wasm_throw(1, &(*buf)->thrown);
}
