// Workload: memcpy/memmove/memset-heavy code — copies, overlapping moves and fills of small,
// medium and large blocks inside a 4 MiB buffer. Argument: operations (in thousands).
#include <string.h>

#include "common.h"

#define BUF (4u << 20)

static uint8_t buf[BUF];
static uint8_t scratch[1u << 16];

int main(int argc, char **argv) {
  uint32_t kops = size_arg(argc, argv, 7000);
  uint64_t seed = 0xC0FFEEULL;
  for (uint32_t i = 0; i < BUF; i++) buf[i] = (uint8_t)(i * 131u + (i >> 9));
  uint64_t h = 0;
  for (uint32_t k = 0; k < kops; k++) {
    for (uint32_t op = 0; op < 1000; op++) {
      uint64_t r = rng_next(&seed);
      // Sizes: mostly small (struct-sized), some medium, an occasional large block.
      uint32_t kind = (uint32_t)(r & 15);
      uint32_t len = kind < 10 ? 1 + (uint32_t)((r >> 8) & 63)
                   : kind < 15 ? 64 + (uint32_t)((r >> 8) & 2047)
                               : 16384 + (uint32_t)((r >> 8) & 32767);
      uint32_t src = (uint32_t)(r >> 24) % (BUF - len);
      uint32_t dst = (uint32_t)(r >> 44) % (BUF - len);
      switch ((r >> 4) & 3) {
        case 0:
          memcpy(scratch, buf + src, len < sizeof scratch ? len : sizeof scratch);
          memcpy(buf + dst, scratch, len < sizeof scratch ? len : sizeof scratch);
          break;
        case 1:
          memmove(buf + dst, buf + src, len);
          break;
        case 2:
          memset(buf + dst, (int)(r >> 56), len);
          break;
        default:
          memmove(buf + src + (len >> 1), buf + src, len >> 1);
          break;
      }
      buf[dst] ^= (uint8_t)op;
    }
    // Sample the buffer so that every thousand operations leave a trace in the checksum.
    uint32_t at = (uint32_t)(rng_next(&seed) % (BUF - 8));
    uint64_t word;
    memcpy(&word, buf + at, sizeof word);
    h = mix(h, word);
  }
  for (uint32_t i = 0; i < BUF; i += 8) {
    uint64_t word;
    memcpy(&word, buf + i, sizeof word);
    h = mix(h, word);
  }
  return report("memops", h);
}
