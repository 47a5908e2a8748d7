// Workload: a hash map — open addressing with linear probing and tombstones, 64-bit keys to
// 32-bit values: inserts, hits, misses and deletes at ~60% load. Argument: rounds.
#include <string.h>

#include "common.h"

#define CAP (1u << 21)
#define EMPTY 0u
#define TOMB 1u

typedef struct {
  uint64_t key;  // 0 = empty, 1 = deleted; real keys are >= 2
  uint32_t value;
} slot_t;

static slot_t table[CAP];
static uint32_t live;

static inline uint32_t slot_of(uint64_t key) {
  return (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> 43) & (CAP - 1);
}

static void put(uint64_t key, uint32_t value) {
  uint32_t i = slot_of(key), tomb = CAP;
  for (;;) {
    uint64_t k = table[i].key;
    if (k == key) {
      table[i].value = value;
      return;
    }
    if (k == EMPTY) break;
    if (k == TOMB && tomb == CAP) tomb = i;
    i = (i + 1) & (CAP - 1);
  }
  if (tomb != CAP) i = tomb;
  table[i].key = key;
  table[i].value = value;
  live++;
}

static int get(uint64_t key, uint32_t *value) {
  for (uint32_t i = slot_of(key);; i = (i + 1) & (CAP - 1)) {
    uint64_t k = table[i].key;
    if (k == key) {
      *value = table[i].value;
      return 1;
    }
    if (k == EMPTY) return 0;
  }
}

static int erase(uint64_t key) {
  for (uint32_t i = slot_of(key);; i = (i + 1) & (CAP - 1)) {
    uint64_t k = table[i].key;
    if (k == key) {
      table[i].key = TOMB;
      live--;
      return 1;
    }
    if (k == EMPTY) return 0;
  }
}

int main(int argc, char **argv) {
  uint32_t rounds = size_arg(argc, argv, 3);
  const uint32_t n = 1200000;  // ~57% of CAP
  uint64_t h = 0;
  for (uint32_t r = 0; r < rounds; r++) {
    memset(table, 0, sizeof table);
    live = 0;
    uint64_t seed = 0xABCDEF12345ULL + r;
    for (uint32_t i = 0; i < n; i++) put((rng_next(&seed) | 2) & 0xFFFFFFFFFFULL, i);
    // Lookups: replay the insert sequence (hits, some overwritten) and a fresh one (misses).
    uint64_t replay = 0xABCDEF12345ULL + r, fresh = 0x5555ULL + r;
    uint64_t found = 0, sum = 0;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t v;
      if (get((rng_next(&replay) | 2) & 0xFFFFFFFFFFULL, &v)) {
        found++;
        sum += v;
      }
      if (get((rng_next(&fresh) | 2) & 0xFFFFFFFFFFULL, &v)) {
        found++;
        sum += v;
      }
    }
    // Delete every other key of the insert sequence, then reinsert a third of them.
    replay = 0xABCDEF12345ULL + r;
    uint32_t erased = 0;
    for (uint32_t i = 0; i < n; i++) {
      uint64_t key = (rng_next(&replay) | 2) & 0xFFFFFFFFFFULL;
      if ((i & 1) && erase(key)) erased++;
      if (i % 3 == 0) put(key, i * 7u);
    }
    h = mix(h, found);
    h = mix(h, sum);
    h = mix(h, erased);
    h = mix(h, live);
  }
  return report("hashmap", h);
}
