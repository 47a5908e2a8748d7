// Workload: a JSON tokenizer — scans generated JSON text (objects, arrays, strings with escapes,
// integers and decimals, literals), converts numbers by hand and hashes keys: byte-at-a-time
// branching typical of parsers. Argument: passes.
#include "common.h"

#define TEXT (2u << 20)

static char text[TEXT + 256];
static uint32_t text_len;

static void emit(const char *s) {
  while (*s) text[text_len++] = *s++;
}

static void emit_uint(uint32_t v) {
  char tmp[12];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) text[text_len++] = tmp[--n];
}

static void generate(uint64_t *seed) {
  static const char *keys[] = {"id", "name", "value", "tags", "x", "enabled", "ratio", "child"};
  emit("[");
  uint32_t depth = 0;
  while (text_len < TEXT - 200) {
    uint64_t r = rng_next(seed);
    emit("{\"");
    emit(keys[r & 7]);
    emit("\":");
    emit_uint((uint32_t)(r >> 8) & 0xFFFFF);
    emit(",\"name\":\"item\\\"");
    emit_uint((uint32_t)(r >> 32) & 0xFFF);
    emit("\\n\",\"ratio\":-");
    emit_uint((uint32_t)(r >> 20) & 0xFF);
    emit(".");
    emit_uint((uint32_t)(r >> 40) & 0x3FF);
    emit(",\"tags\":[true,false,null,");
    emit_uint((uint32_t)(r >> 50));
    emit("]");
    if ((r & 0x30) == 0 && depth < 6) {
      emit(",\"child\":[");
      depth++;
      continue;
    }
    emit("}");
    while (depth && (r & 0x100)) {
      emit("]}");
      depth--;
      r >>= 1;
    }
    emit(",\n ");
  }
  emit("{}");
  while (depth--) emit("]}");
  emit("]");
  text[text_len] = 0;
}

typedef struct {
  uint32_t objects, arrays, strings, numbers, literals, escapes;
  uint64_t int_sum, frac_sum, key_hash;
} counts_t;

// Returns 0 on success, or the offset + 1 of the first byte it could not tokenize.
static uint32_t tokenize(const char *s, uint32_t n, counts_t *c) {
  uint32_t i = 0;
  while (i < n) {
    char ch = s[i];
    switch (ch) {
      case ' ': case '\n': case '\t': case '\r': case ',': case ':':
        i++;
        break;
      case '{': c->objects++; i++; break;
      case '[': c->arrays++; i++; break;
      case '}': case ']': i++; break;
      case '"': {
        uint64_t hash = 1469598103934665603ULL;
        i++;
        while (i < n && s[i] != '"') {
          if (s[i] == '\\') {
            c->escapes++;
            i++;
          }
          hash = (hash ^ (uint8_t)s[i]) * 1099511628211ULL;
          i++;
        }
        if (i >= n) return i + 1;
        i++;
        c->strings++;
        c->key_hash += hash;
        break;
      }
      case 't': case 'f': case 'n': {
        const char *lit = ch == 't' ? "true" : ch == 'f' ? "false" : "null";
        uint32_t k = 0;
        while (lit[k] && i + k < n && s[i + k] == lit[k]) k++;
        if (lit[k]) return i + 1;
        i += k;
        c->literals++;
        break;
      }
      default: {
        if (ch != '-' && (ch < '0' || ch > '9')) return i + 1;
        int negative = ch == '-';
        if (negative) i++;
        uint64_t whole = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') whole = whole * 10 + (uint64_t)(s[i++] - '0');
        uint64_t frac = 0;
        if (i < n && s[i] == '.') {
          i++;
          while (i < n && s[i] >= '0' && s[i] <= '9') frac = frac * 10 + (uint64_t)(s[i++] - '0');
        }
        c->numbers++;
        c->int_sum += negative ? (uint64_t)0 - whole : whole;
        c->frac_sum += frac;
        break;
      }
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  uint32_t passes = size_arg(argc, argv, 200);
  uint64_t seed = 0x150BULL;
  generate(&seed);
  uint64_t h = 0;
  for (uint32_t p = 0; p < passes; p++) {
    counts_t c = {0};
    uint32_t bad = tokenize(text, text_len, &c);
    if (bad) {
      printf("json: cannot tokenize at %u\n", bad - 1);
      return 1;
    }
    h = mix(h, c.objects ^ (uint64_t)c.arrays << 32);
    h = mix(h, c.strings ^ (uint64_t)c.numbers << 32);
    h = mix(h, c.literals ^ (uint64_t)c.escapes << 32);
    h = mix(h, c.int_sum);
    h = mix(h, c.frac_sum ^ c.key_hash);
    // Change one digit so every pass tokenizes different text.
    uint32_t at = (uint32_t)(rng_next(&seed) % text_len);
    while (at < text_len && (text[at] < '0' || text[at] > '8')) at++;
    if (at < text_len) text[at]++;
  }
  return report("json", h);
}
