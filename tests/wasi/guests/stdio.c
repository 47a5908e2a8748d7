// Guest: copies stdin to stdout upper-cased, sleeps 10 ms (poll_oneoff) and checks that the
// monotonic clock moved, draws random bytes, then reports on stderr.
#include <ctype.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  int c;
  long n = 0;
  while ((c = getchar()) != EOF) {
    putchar(toupper(c));
    ++n;
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  struct timespec ten_ms = {0, 10 * 1000 * 1000};
  if (nanosleep(&ten_ms, NULL) != 0) return 2;
  clock_gettime(CLOCK_MONOTONIC, &b);
  long long elapsed = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
  unsigned char random_bytes[32];
  if (getentropy(random_bytes, sizeof random_bytes) != 0) return 3;
  int nonzero = 0;
  for (unsigned i = 0; i < sizeof random_bytes; ++i) nonzero |= random_bytes[i];
  fprintf(stderr, "read %ld bytes, slept %s, random %s\n", n, elapsed >= 10000000 ? "enough" : "too little",
          nonzero ? "ok" : "all zero");
  return 0;
}
