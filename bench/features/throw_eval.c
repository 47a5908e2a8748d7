// The native form of throw_eval.wat, which gives its checksum: a recursive-descent evaluator of
// generated arithmetic expressions that reports an error (a division by zero) by longjmp out of
// the recursion, as C interpreters and parsers (Lua, SQLite, libpng) report theirs. Built for
// WebAssembly with clang's -mllvm -wasm-enable-sjlj (bench/features/run's sjlj_eval, with the
// setjmp.h and runtime of bench/features/sjlj/), every longjmp is a throw through the evaluator's
// frames; throw_eval.wat is the same program written by hand with try_table and throw.
// Usage: throw_eval [EXPRESSIONS]   (default 2,000,000); prints the checksum and the error count.
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf on_error;
static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint32_t next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (uint32_t)(state >> 32);
}

// A random expression of at most `depth` levels, evaluated as it is generated: a leaf (0..9) or
// two operands and one of + - * /; a division by zero longjmps to the expression's start.
static uint64_t eval(int depth) {
  const uint32_t r = next();
  if (depth == 0 || r % 4 == 0) return r % 10;
  const uint64_t a = eval(depth - 1);
  const uint64_t b = eval(depth - 1);
  switch ((r >> 8) % 4) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    default:
      if (b == 0) longjmp(on_error, 1);
      return a / b;
  }
}

// One expression: its value in *value (1), or 0 after its error.
__attribute__((noinline)) static int evaluate(uint64_t* value) {
  if (setjmp(on_error) != 0) return 0;
  *value = eval(10);
  return 1;
}

int main(int argc, char** argv) {
  const unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000ull;
  uint64_t sum = 0;
  uint64_t errors = 0;
  for (unsigned long long i = 0; i < n; ++i) {
    uint64_t value;
    if (evaluate(&value)) {
      sum = sum * 31 + value;
    } else {
      ++errors;
    }
  }
  printf("%llu %llu\n", (unsigned long long)sum, (unsigned long long)errors);
  return 0;
}
