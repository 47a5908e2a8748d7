// Workload: encoding — base64 (RFC 4648) encode then decode of a 768 KiB buffer with a round-trip
// check: table lookups, shifts and byte stores. Argument: passes.
#include "common.h"

#define RAW (768u * 1024u)

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static uint8_t raw[RAW];
static char encoded[RAW / 3 * 4 + 4];
static uint8_t decoded[RAW];
static uint8_t reverse[256];

static uint32_t encode(const uint8_t *in, uint32_t n, char *out) {
  uint32_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    out[o++] = alphabet[v >> 18];
    out[o++] = alphabet[(v >> 12) & 63];
    out[o++] = alphabet[(v >> 6) & 63];
    out[o++] = alphabet[v & 63];
  }
  if (i < n) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
    out[o++] = alphabet[v >> 18];
    out[o++] = alphabet[(v >> 12) & 63];
    out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
    out[o++] = '=';
  }
  return o;
}

// Returns the decoded length, or 0xFFFFFFFF on a character outside the alphabet.
static uint32_t decode(const char *in, uint32_t n, uint8_t *out) {
  uint32_t o = 0;
  for (uint32_t i = 0; i + 4 <= n; i += 4) {
    uint32_t a = reverse[(uint8_t)in[i]], b = reverse[(uint8_t)in[i + 1]];
    uint32_t c = in[i + 2] == '=' ? 0 : reverse[(uint8_t)in[i + 2]];
    uint32_t d = in[i + 3] == '=' ? 0 : reverse[(uint8_t)in[i + 3]];
    if ((a | b | c | d) & 0x80) return 0xFFFFFFFFu;
    uint32_t v = a << 18 | b << 12 | c << 6 | d;
    out[o++] = (uint8_t)(v >> 16);
    if (in[i + 2] != '=') out[o++] = (uint8_t)(v >> 8);
    if (in[i + 3] != '=') out[o++] = (uint8_t)v;
  }
  return o;
}

int main(int argc, char **argv) {
  uint32_t passes = size_arg(argc, argv, 400);
  for (uint32_t i = 0; i < 256; i++) reverse[i] = 0x80;
  for (uint32_t i = 0; i < 64; i++) reverse[(uint8_t)alphabet[i]] = (uint8_t)i;
  uint64_t seed = 0xBA5E64ULL;
  for (uint32_t i = 0; i < RAW; i++) raw[i] = (uint8_t)(rng_next(&seed) >> 56);
  uint64_t h = 0;
  for (uint32_t p = 0; p < passes; p++) {
    uint32_t n = RAW - (p % 3);  // exercise both padding forms
    uint32_t elen = encode(raw, n, encoded);
    uint32_t dlen = decode(encoded, elen, decoded);
    if (dlen != n) {
      printf("base64: round trip length %u != %u\n", dlen, n);
      return 1;
    }
    uint64_t fold = 0;
    for (uint32_t i = 0; i < n; i += 1024) fold = fold * 1099511628211ULL ^ decoded[i];
    for (uint32_t i = 0; i < elen; i += 777) fold = fold * 1099511628211ULL ^ (uint8_t)encoded[i];
    h = mix(h, fold ^ ((uint64_t)elen << 32));
    // Change the input from the encoded text so the next pass differs.
    raw[(p * 7919u) % RAW] ^= (uint8_t)encoded[(p * 104729u) % elen];
    if (decoded[(p * 31u) % n] != raw[(p * 31u) % n] && (p * 31u) % RAW != (p * 7919u) % RAW) {
      printf("base64: round trip mismatch\n");
      return 1;
    }
  }
  return report("base64", h);
}
