/* Example guest that oversteps: tries to write into its (read-only) mount, reports the refusal,
 * then computes forever — the fuel budget ends it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* target = argc > 1 ? argv[1] : "/data/stolen.txt";
  FILE* f = fopen(target, "w");
  if (f == NULL) {
    printf("write to %s refused: %s\n", target, strerror(errno));
  } else {
    fputs("this should not be here\n", f);
    fclose(f);
    printf("wrote %s\n", target);
  }
  fflush(stdout);
  volatile unsigned long spins = 0;
  for (;;) ++spins;
}
