// Workload: memory-bound scans — the sieve of Eratosthenes over a byte array larger than the
// caches, run several times. Argument: repetitions.
#include <string.h>

#include "common.h"

#define LIMIT (16u * 1024u * 1024u)

static uint8_t composite[LIMIT];

int main(int argc, char **argv) {
  uint32_t reps = size_arg(argc, argv, 14);
  uint64_t h = 0;
  for (uint32_t r = 0; r < reps; r++) {
    // Each repetition sieves a slightly different range so none can be skipped.
    uint32_t limit = LIMIT - r * 4099u;
    for (uint32_t i = 0; i < limit; i++) composite[i] = 0;
    for (uint32_t p = 2; p * p < limit; p++) {
      if (composite[p]) continue;
      for (uint32_t m = p * p; m < limit; m += p) composite[m] = 1;
    }
    uint32_t count = 0;
    uint64_t sum = 0;
    for (uint32_t i = 2; i < limit; i++) {
      if (!composite[i]) {
        count++;
        sum += i;
      }
    }
    h = mix(h, count);
    h = mix(h, sum);
  }
  return report("sieve", h);
}
