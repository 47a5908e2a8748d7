// Guest: a hostile program using only libc — it tries to read or change files outside its
// mounts (.. chains, symlinks it plants, absolute paths). Prints each attempt's errno and exits
// 0 only if every attempt was refused.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int leaks = 0;

static void try_open(const char* path, int flags) {
  int fd = open(path, flags, 0644);
  if (fd >= 0) {
    printf("LEAK open %s\n", path);
    ++leaks;
    close(fd);
  } else {
    printf("open %s: %s\n", path, strerror(errno));
  }
}

int main(void) {
  try_open("/rw/../outside/secret.txt", O_RDONLY);
  try_open("/rw/../../../../etc/passwd", O_RDONLY);
  try_open("/etc/passwd", O_RDONLY);
  try_open("/rw/../outside/created.txt", O_WRONLY | O_CREAT);
  if (symlink("../outside", "/rw/out") == 0) {
    try_open("/rw/out/secret.txt", O_RDONLY);
    try_open("/rw/out/secret.txt", O_WRONLY | O_TRUNC);
  }
  if (symlink("../outside/planted.txt", "/rw/dangling") == 0) try_open("/rw/dangling", O_WRONLY | O_CREAT);
  if (mkdir("/rw/../outside/dir", 0755) == 0) {
    printf("LEAK mkdir\n");
    ++leaks;
  }
  if (unlink("/rw/out/secret.txt") == 0) {
    printf("LEAK unlink\n");
    ++leaks;
  }
  if (link("/rw/out/secret.txt", "/rw/hard") == 0) {
    printf("LEAK link\n");
    ++leaks;
  }
  if (rename("/rw/out/secret.txt", "/rw/moved") == 0) {
    printf("LEAK rename\n");
    ++leaks;
  }
  printf("%d leaks\n", leaks);
  return leaks == 0 ? 0 : 1;
}
