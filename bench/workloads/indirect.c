// Workload: indirect calls through function pointers — a table of small operations chosen by
// data (the compiler cannot devirtualise them), like virtual dispatch. Argument: calls in millions.
#include "common.h"

typedef uint32_t (*op_fn)(uint32_t acc, uint32_t x);

static uint32_t op_add(uint32_t a, uint32_t x) { return a + x; }
static uint32_t op_sub(uint32_t a, uint32_t x) { return a - x * 3u; }
static uint32_t op_xor(uint32_t a, uint32_t x) { return a ^ (x << 7); }
static uint32_t op_mul(uint32_t a, uint32_t x) { return a * (x | 1u); }
static uint32_t op_rotl(uint32_t a, uint32_t x) { return (a << (x & 31)) | (a >> ((32 - (x & 31)) & 31)); }
static uint32_t op_shr(uint32_t a, uint32_t x) { return a ^ (a >> ((x & 15) + 1)); }
static uint32_t op_min(uint32_t a, uint32_t x) { return a < x ? a + 17u : a - x; }
static uint32_t op_hash(uint32_t a, uint32_t x) { return (a ^ x) * 0x85EBCA6Bu; }

// Two levels of indirection, as with an object's vtable.
typedef struct {
  op_fn first;
  op_fn second;
} vtable_t;

static const op_fn ops[8] = {op_add, op_sub, op_xor, op_mul, op_rotl, op_shr, op_min, op_hash};

#define SEQ 4096

int main(int argc, char **argv) {
  uint32_t millions = size_arg(argc, argv, 100);
  static uint8_t seq[SEQ];
  vtable_t vt[8];
  uint64_t seed = 0x0BADC0DEULL;
  for (uint32_t i = 0; i < SEQ; i++) seq[i] = (uint8_t)(rng_next(&seed) & 7);
  for (uint32_t i = 0; i < 8; i++) {
    vt[i].first = ops[(uint32_t)rng_next(&seed) & 7];
    vt[i].second = ops[(i * 5u + 3u) & 7];
  }
  uint32_t acc = 1;
  uint64_t h = 0;
  for (uint32_t m = 0; m < millions; m++) {
    for (uint32_t i = 0; i < 1000000; i += 2) {
      uint32_t s = seq[i & (SEQ - 1)];
      acc = ops[s](acc, i);
      acc = ((i & 2) ? vt[s].first : vt[s].second)(acc, i + 1);
    }
    h = mix(h, acc);
    // Rewire one vtable entry per million calls.
    vt[m & 7].second = vt[(m + 3) & 7].first;
    vt[m & 7].first = ops[acc & 7];
  }
  return report("indirect", h);
}
