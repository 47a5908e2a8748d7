// Workload: sorting — a hand-written quicksort (median of three, insertion sort below 16
// elements) of 32-bit keys: compares, swaps, unpredictable branches. Argument: rounds.
#include "common.h"

#define COUNT (1u << 20)

static uint32_t keys[COUNT];

static void insertion_sort(uint32_t *a, int32_t n) {
  for (int32_t i = 1; i < n; i++) {
    uint32_t v = a[i];
    int32_t j = i - 1;
    while (j >= 0 && a[j] > v) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = v;
  }
}

static void quicksort(uint32_t *a, int32_t n) {
  while (n > 16) {
    int32_t mid = n / 2;
    // Median of three into a[mid], guarding both ends.
    if (a[mid] < a[0]) { uint32_t t = a[mid]; a[mid] = a[0]; a[0] = t; }
    if (a[n - 1] < a[0]) { uint32_t t = a[n - 1]; a[n - 1] = a[0]; a[0] = t; }
    if (a[n - 1] < a[mid]) { uint32_t t = a[n - 1]; a[n - 1] = a[mid]; a[mid] = t; }
    uint32_t pivot = a[mid];
    int32_t i = 0, j = n - 1;
    for (;;) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i >= j) break;
      uint32_t t = a[i]; a[i] = a[j]; a[j] = t;
      i++;
      j--;
    }
    // Recurse into the smaller part, loop on the larger: bounded stack depth.
    int32_t left = j + 1;
    if (left < n - left) {
      quicksort(a, left);
      a += left;
      n -= left;
    } else {
      quicksort(a + left, n - left);
      n = left;
    }
  }
  insertion_sort(a, n);
}

int main(int argc, char **argv) {
  uint32_t rounds = size_arg(argc, argv, 8);
  uint64_t seed = 0xDEADBEEFULL;
  uint64_t h = 0;
  for (uint32_t r = 0; r < rounds; r++) {
    // Round 0 is uniform; later rounds have many duplicates, which stress the partition.
    uint32_t mask = r == 0 ? 0xFFFFFFFFu : (0xFFFFu >> r);
    for (uint32_t i = 0; i < COUNT; i++) keys[i] = (uint32_t)(rng_next(&seed) >> 32) & mask;
    quicksort(keys, (int32_t)COUNT);
    for (uint32_t i = 1; i < COUNT; i++) {
      if (keys[i - 1] > keys[i]) {
        printf("quicksort: not sorted at %u\n", i);
        return 1;
      }
    }
    for (uint32_t i = 0; i < COUNT; i += 97) h = mix(h, keys[i] ^ ((uint64_t)i << 32));
  }
  return report("quicksort", h);
}
