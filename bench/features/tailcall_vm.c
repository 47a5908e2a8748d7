// A tail-calling interpreter loop: each handler of a small bytecode VM ends by tail-calling the
// next handler through a table (`musttail`: return_call_indirect in WebAssembly, a jump natively),
// as interpreters written for tail calls (wasm3, CPython's newer eval loop) dispatch.
// Usage: tailcall_vm [STEPS]   (default 100,000,000 dispatch rounds); prints a checksum.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct Vm Vm;
typedef uint64_t (*Handler)(Vm* vm, const uint8_t* pc, uint64_t acc);
struct Vm {
  const Handler* table;
  uint64_t rounds;
};

#define DISPATCH(vm, pc, acc) __attribute__((musttail)) return (vm)->table[*(pc)]((vm), (pc), (acc))

static uint64_t op_add(Vm* vm, const uint8_t* pc, uint64_t acc) {
  acc += pc[1];
  pc += 2;
  DISPATCH(vm, pc, acc);
}
static uint64_t op_mul(Vm* vm, const uint8_t* pc, uint64_t acc) {
  acc *= 2654435761u;
  pc += 1;
  DISPATCH(vm, pc, acc);
}
static uint64_t op_mix(Vm* vm, const uint8_t* pc, uint64_t acc) {
  acc ^= acc >> 13;
  pc += 1;
  DISPATCH(vm, pc, acc);
}
static uint64_t op_loop(Vm* vm, const uint8_t* pc, uint64_t acc) {
  if (--vm->rounds == 0) return acc;
  pc -= pc[1];
  DISPATCH(vm, pc, acc);
}

int main(int argc, char** argv) {
  static const Handler table[4] = {op_add, op_mul, op_mix, op_loop};
  // add 7; mul; mix; add 3; mix; loop back 7 bytes
  static const uint8_t program[] = {0, 7, 1, 2, 0, 3, 2, 3, 7};
  Vm vm = {table, argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000ull};
  printf("%llu\n", (unsigned long long)table[program[0]](&vm, program, 1));
  return 0;
}
