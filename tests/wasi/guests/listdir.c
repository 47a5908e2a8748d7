// Guest: lists the directory named by argv[1] with readdir (wasi-libc refills its buffer with
// fd_readdir cookies, so a large directory takes many calls) and prints the entry count, how
// many names start with "entry-", and whether "." and ".." were seen.
#include <dirent.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  DIR* dir = opendir(argv[1]);
  if (dir == NULL) {
    perror("opendir");
    return 1;
  }
  int total = 0, entries = 0, dot = 0, dotdot = 0;
  unsigned long name_bytes = 0;
  struct dirent* e;
  while ((e = readdir(dir)) != NULL) {
    ++total;
    if (strcmp(e->d_name, ".") == 0) dot = 1;
    if (strcmp(e->d_name, "..") == 0) dotdot = 1;
    if (strncmp(e->d_name, "entry-", 6) == 0 && e->d_type == DT_REG) ++entries;
    name_bytes += strlen(e->d_name);
  }
  closedir(dir);
  printf("total=%d entries=%d dot=%d dotdot=%d name_bytes=%lu\n", total, entries, dot, dotdot, name_bytes);
  return 0;
}
