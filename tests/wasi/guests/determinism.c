// Guest: prints what varies from run to run on a real host — both clocks, random bytes, the
// time a sleep took — and polls stdin, so a test can check that deterministic mode makes two
// runs byte-for-byte identical.
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static long long ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void) {
  printf("realtime=%lld monotonic=%lld\n", ns(CLOCK_REALTIME), ns(CLOCK_MONOTONIC));
  unsigned char bytes[16];
  if (getentropy(bytes, sizeof bytes) != 0) return 2;
  printf("random=");
  for (unsigned i = 0; i < sizeof bytes; ++i) printf("%02x", bytes[i]);
  printf("\n");
  long long before = ns(CLOCK_MONOTONIC);
  struct timespec second = {1, 0};
  nanosleep(&second, NULL);
  printf("slept=%lld\n", ns(CLOCK_MONOTONIC) - before);
  struct pollfd fds[1] = {{.fd = 0, .events = POLLIN}};
  int ready = poll(fds, 1, 5000);
  printf("poll=%d revents=%d\n", ready, fds[0].revents);
  return 0;
}
