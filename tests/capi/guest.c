// Guest of the C API and Python module tests: one wasip1 command whose first argument picks
// what it does, so that one module reaches every outcome kind, the mounts, stdin, argv and env.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cat(void) {
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) fwrite(buf, 1, n, stdout);
  return 0;
}

static int write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "write %s: %s\n", path, strerror(errno));
    return 3;
  }
  fputs(text, f);
  return fclose(f) == 0 ? 0 : 3;
}

static int read_file(const char* path) {
  FILE* f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "read %s: %s\n", path, strerror(errno));
    return 3;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
  fclose(f);
  return 0;
}

// A CPU-bound loop: the volatile keeps clang from folding it, so each round runs in the guest.
static int spin(unsigned long long rounds) {
  volatile uint32_t x = 1;
  for (unsigned long long i = 0; i < rounds; ++i) x = x * 1103515245u + 12345u;
  printf("%u\n", (unsigned)x);
  return 0;
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "hello";
  if (strcmp(what, "hello") == 0) {
    puts("hello");
    return 0;
  }
  if (strcmp(what, "cat") == 0) return cat();
  if (strcmp(what, "ready") == 0) {  // says so at once, then copies stdin: a job that waits for its input
    puts("ready");
    fflush(stdout);
    return cat();
  }
  if (strcmp(what, "args") == 0) {  // argv after the command, then the variable K
    for (int i = 2; i < argc; ++i) puts(argv[i]);
    const char* k = getenv("K");
    printf("K=%s\n", k != NULL ? k : "(unset)");
    return 0;
  }
  if (strcmp(what, "stderr") == 0) {
    fputs("to stderr\n", stderr);
    return 0;
  }
  if (strcmp(what, "exit") == 0 && argc > 2) return atoi(argv[2]);  // 200 is outside WASI's range
  if (strcmp(what, "loop") == 0) {
    volatile unsigned n = 0;
    for (;;) ++n;
  }
  if (strcmp(what, "trap") == 0) __builtin_trap();
  if (strcmp(what, "write") == 0 && argc > 3) return write_file(argv[2], argv[3]);
  if (strcmp(what, "read") == 0 && argc > 2) return read_file(argv[2]);
  if (strcmp(what, "spin") == 0 && argc > 2) return spin(strtoull(argv[2], NULL, 10));
  if (strcmp(what, "grow") == 0 && argc > 2) {  // allocates and touches N MiB; 4 when refused
    size_t bytes = (size_t)strtoull(argv[2], NULL, 10) << 20;
    char* p = malloc(bytes);
    if (p == NULL) {
      fputs("grow: out of memory\n", stderr);
      return 4;
    }
    memset(p, 1, bytes);
    // Reading the memory back keeps the compiler from eliding the allocation.
    printf("grew %zu (%d)\n", bytes, p[bytes - 1]);
    return 0;
  }
  fprintf(stderr, "guest: unknown command '%s'\n", what);
  return 2;
}
