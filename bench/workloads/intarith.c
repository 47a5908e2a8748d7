// Workload: integer arithmetic — Collatz trajectories (64-bit shifts, adds, branches), Euclid's
// gcd (32-bit remainder) and 64-bit division. Argument: how many starting values.
#include "common.h"

static uint32_t gcd32(uint32_t a, uint32_t b) {
  while (b != 0) {
    uint32_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

int main(int argc, char **argv) {
  uint32_t n = size_arg(argc, argv, 2500000);
  uint64_t h = 0;
  uint64_t total_steps = 0;
  uint32_t acc = 12345;
  for (uint32_t i = 1; i <= n; i++) {
    uint64_t v = i;
    uint32_t steps = 0;
    while (v != 1) {
      v = (v & 1) ? 3 * v + 1 : v >> 1;
      steps++;
    }
    total_steps += steps;
    acc = acc * 1664525u + 1013904223u;
    uint32_t g = gcd32(acc | 1u, i * 2654435761u);
    uint64_t q = ((uint64_t)acc << 20 | i) / (uint64_t)(steps + 3);
    h = mix(h, steps ^ ((uint64_t)g << 32) ^ q);
  }
  h = mix(h, total_steps);
  return report("intarith", h);
}
