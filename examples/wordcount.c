/* Example guest: counts the lines, words and bytes of the files named on its command line
 * (under a read-only mount) and prints them like `wc`; exits 1 if a file cannot be opened. */
#include <ctype.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    FILE* f = fopen(argv[i], "r");
    if (f == NULL) {
      perror(argv[i]);
      status = 1;
      continue;
    }
    long lines = 0, words = 0, bytes = 0;
    int in_word = 0, c;
    while ((c = fgetc(f)) != EOF) {
      ++bytes;
      if (c == '\n') ++lines;
      if (isspace(c)) {
        in_word = 0;
      } else if (!in_word) {
        in_word = 1;
        ++words;
      }
    }
    fclose(f);
    printf("%7ld %7ld %7ld %s\n", lines, words, bytes, argv[i]);
  }
  return status;
}
