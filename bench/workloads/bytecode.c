// Workload: a bytecode interpreter — a switch-dispatched stack machine with locals, arithmetic,
// compares and jumps running a small loop program. Argument: loop iterations in thousands.
#include "common.h"

enum { PUSH, LOAD, STORE, ADD, SUB, MUL, MOD, SHR, XOR, AND, EQ, LT, JZ, JMP, DUP, POP, HALT };

typedef struct {
  uint8_t op;
  uint32_t arg;
} insn_t;

static uint32_t run(const insn_t *code, uint32_t *locals) {
  uint32_t stack[64];
  uint32_t sp = 0, pc = 0;
  for (;;) {
    const insn_t in = code[pc++];
    switch (in.op) {
      case PUSH: stack[sp++] = in.arg; break;
      case LOAD: stack[sp++] = locals[in.arg]; break;
      case STORE: locals[in.arg] = stack[--sp]; break;
      case ADD: sp--; stack[sp - 1] += stack[sp]; break;
      case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
      case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
      case MOD: sp--; stack[sp - 1] %= stack[sp]; break;
      case SHR: sp--; stack[sp - 1] >>= (stack[sp] & 31); break;
      case XOR: sp--; stack[sp - 1] ^= stack[sp]; break;
      case AND: sp--; stack[sp - 1] &= stack[sp]; break;
      case EQ: sp--; stack[sp - 1] = stack[sp - 1] == stack[sp]; break;
      case LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; break;
      case JZ: if (stack[--sp] == 0) pc = in.arg; break;
      case JMP: pc = in.arg; break;
      case DUP: stack[sp] = stack[sp - 1]; sp++; break;
      case POP: sp--; break;
      case HALT: return sp ? stack[sp - 1] : 0;
      default: return 0xFFFFFFFFu;
    }
  }
}

// locals: 0 = i, 1 = n, 2 = acc, 3 = odd count
static const insn_t program[] = {
    /* 0 */ {PUSH, 0}, {STORE, 0}, {PUSH, 0}, {STORE, 2}, {PUSH, 0}, {STORE, 3},
    /* 6 loop */ {LOAD, 0}, {LOAD, 1}, {LT, 0}, {JZ, 46},
    /* 10 */ {LOAD, 0}, {LOAD, 0}, {MUL, 0}, {PUSH, 7}, {MOD, 0}, {PUSH, 3}, {EQ, 0}, {JZ, 23},
    /* 18 then: acc += i */ {LOAD, 2}, {LOAD, 0}, {ADD, 0}, {STORE, 2}, {JMP, 33},
    /* 23 else: acc = (acc ^ (i >> 3)) * 2654435761 */
    {LOAD, 2}, {LOAD, 0}, {PUSH, 3}, {SHR, 0}, {XOR, 0}, {PUSH, 2654435761u}, {MUL, 0}, {STORE, 2},
    /* 31 */ {JMP, 33}, {HALT, 0},
    /* 33 next: odd += i & 1; i += 1 */
    {LOAD, 0}, {PUSH, 1}, {AND, 0}, {LOAD, 3}, {ADD, 0}, {STORE, 3},
    /* 39 */ {LOAD, 0}, {PUSH, 1}, {ADD, 0}, {DUP, 0}, {POP, 0}, {STORE, 0}, {JMP, 6},
    /* 46 end */ {LOAD, 2}, {LOAD, 3}, {XOR, 0}, {HALT, 0},
};

int main(int argc, char **argv) {
  uint32_t thousands = size_arg(argc, argv, 12000);
  uint64_t h = 0;
  // Several runs with different bounds so the result is not one closed form.
  for (uint32_t k = 0; k < 4; k++) {
    uint32_t locals[4] = {0, thousands * 250u + k * 7u, 0, 0};
    uint32_t result = run(program, locals);
    h = mix(h, result);
    h = mix(h, locals[2]);
    h = mix(h, locals[3]);
  }
  return report("bytecode", h);
}
