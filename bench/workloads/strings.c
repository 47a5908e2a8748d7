// Workload: string processing — split a generated text into words, case-fold, reverse and
// compare them, search substrings naively and rebuild a separated, capitalised copy, all with
// byte loops written here (not libc's) so both sides run the same code. Argument: passes.
#include "common.h"

#define TEXT (1u << 20)

static char text[TEXT + 1];
static char out[TEXT * 2 + 16];

static uint32_t str_len(const char *s) {
  const char *p = s;
  while (*p) p++;
  return (uint32_t)(p - s);
}

static int str_cmp(const char *a, uint32_t na, const char *b, uint32_t nb) {
  uint32_t n = na < nb ? na : nb;
  for (uint32_t i = 0; i < n; i++) {
    if (a[i] != b[i]) return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
  }
  return na < nb ? -1 : na > nb;
}

static uint32_t count_occurrences(const char *hay, uint32_t n, const char *needle, uint32_t m) {
  uint32_t count = 0;
  for (uint32_t i = 0; i + m <= n; i++) {
    uint32_t j = 0;
    while (j < m && hay[i + j] == needle[j]) j++;
    if (j == m) count++;
  }
  return count;
}

int main(int argc, char **argv) {
  uint32_t passes = size_arg(argc, argv, 80);
  static const char *syllables[] = {"ka", "lo", "mi", "sen", "tra", "vu", "ex", "qui", "z", "ob", "rin", "da"};
  uint64_t seed = 0xFEEDULL;
  uint32_t len = 0;
  while (len < TEXT - 40) {
    uint32_t parts = 1 + (uint32_t)(rng_next(&seed) % 4);
    for (uint32_t p = 0; p < parts; p++) {
      const char *s = syllables[rng_next(&seed) % 12];
      while (*s) text[len++] = *s++;
    }
    uint64_t r = rng_next(&seed) % 16;
    text[len++] = r == 0 ? '.' : r == 1 ? ',' : ' ';
    if (r < 2) text[len++] = ' ';
  }
  text[len] = 0;

  uint64_t h = 0;
  for (uint32_t pass = 0; pass < passes; pass++) {
    uint32_t n = str_len(text);
    uint32_t o = 0, words = 0, ordered = 0;
    const char *prev = text;
    uint32_t prev_len = 0;
    uint32_t i = 0;
    while (i < n) {
      while (i < n && (text[i] == ' ' || text[i] == '.' || text[i] == ',')) i++;
      uint32_t start = i;
      while (i < n && text[i] != ' ' && text[i] != '.' && text[i] != ',') i++;
      uint32_t wl = i - start;
      if (wl == 0) break;
      words++;
      if (str_cmp(prev, prev_len, text + start, wl) <= 0) ordered++;
      prev = text + start;
      prev_len = wl;
      // Capitalise the first letter, reverse the rest into the output, separate with '-'.
      out[o++] = (char)(text[start] - 'a' + 'A');
      for (uint32_t k = wl; k > 1; k--) out[o++] = text[start + k - 1];
      out[o++] = '-';
    }
    out[o] = 0;
    uint32_t hits = count_occurrences(out, o, "ak-", 3) + count_occurrences(text, n, "tra", 3);
    // Mutate the text so each pass differs: rotate one letter of the alphabet region.
    uint32_t at = (uint32_t)(rng_next(&seed) % n);
    if (text[at] >= 'a' && text[at] < 'z') text[at]++;
    uint64_t fold = 0;
    for (uint32_t k = 0; k < o; k += 61) fold = fold * 31 + (unsigned char)out[k];
    h = mix(h, words);
    h = mix(h, ordered);
    h = mix(h, hits);
    h = mix(h, fold ^ str_len(out));
  }
  return report("strings", h);
}
