// Workload: checksumming — table-driven CRC-32 (IEEE 802.3, reflected) one byte at a time over
// a 1 MiB buffer: a load, a table lookup, shifts and xors per byte. Argument: passes.
#include "common.h"

#define BUF (1u << 20)

static uint32_t table[256];
static uint8_t data[BUF];

static void make_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
}

static uint32_t crc32(uint32_t crc, const uint8_t *p, uint32_t n) {
  crc = ~crc;
  for (uint32_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

int main(int argc, char **argv) {
  uint32_t passes = size_arg(argc, argv, 240);
  make_table();
  if (crc32(0, (const uint8_t *)"123456789", 9) != 0xCBF43926u) {
    printf("crc32 self-check failed\n");
    return 1;
  }
  uint64_t seed = 0x12121212ULL;
  for (uint32_t i = 0; i < BUF; i += 8) {
    uint64_t r = rng_next(&seed);
    for (int k = 0; k < 8; k++) data[i + k] = (uint8_t)(r >> (8 * k));
  }
  uint64_t h = 0;
  uint32_t crc = 0;
  for (uint32_t p = 0; p < passes; p++) {
    crc = crc32(crc, data, BUF);
    data[crc % BUF] ^= (uint8_t)p;
    h = mix(h, crc);
  }
  return report("crc32", h);
}
