// Workload: recursion — the doubly recursive Fibonacci function, i.e. call and return
// overhead with almost no other work. Argument: n.
#include "common.h"

static uint32_t fib(uint32_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(int argc, char **argv) {
  uint32_t n = size_arg(argc, argv, 41);
  uint64_t h = 0;
  // Two calls so that neither result can be folded from the other.
  h = mix(h, fib(n));
  h = mix(h, fib(n - 3));
  return report("fib", h);
}
