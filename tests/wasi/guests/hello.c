// Guest: prints its arguments and $GREETING, writes a line to stderr, and exits with the code
// given as argv[1] (0 when absent), so a test can check args, env, stdio and proc_exit at once.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  printf("argc=%d\n", argc);
  for (int i = 0; i < argc; ++i) printf("argv[%d]=%s\n", i, argv[i]);
  const char* greeting = getenv("GREETING");
  printf("GREETING=%s\n", greeting ? greeting : "(unset)");
  fprintf(stderr, "to stderr\n");
  return argc > 1 ? atoi(argv[1]) : 0;
}
