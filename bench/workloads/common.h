// Shared by every benchmark workload: a deterministic PRNG, a checksum mixer, the size argument
// and the one-line report. Header-only so that each workload is a single translation unit.
#ifndef SPRAWLING_BENCH_COMMON_H
#define SPRAWLING_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// xorshift64*: fixed-width arithmetic only, so native and wasm32 draw the same sequence
// (plain `long` is 64-bit on x86-64 but 32-bit on wasm32).
static inline uint64_t rng_next(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

// Folds one value into a running checksum; order-sensitive, so a reordered result shows.
static inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  h *= 0xFF51AFD7ED558CCDULL;
  return h ^ (h >> 32);
}

// The work scale: argv[1] when given (for quick experiments), else the benchmark size.
static inline uint32_t size_arg(int argc, char **argv, uint32_t benchmark_size) {
  if (argc > 1) {
    long v = strtol(argv[1], NULL, 10);
    if (v > 0) return (uint32_t)v;
  }
  return benchmark_size;
}

static inline int report(const char *name, uint64_t checksum) {
  printf("%s %016llx\n", name, (unsigned long long)checksum);
  return 0;
}

#endif
