// Guest: the ordinary file work of a program through wasi-libc — create, write, read, seek,
// stat, truncate, rename, links, readdir, times, remove — in the writable mount /rw, then reads
// and refused writes in the read-only mount /ro. Prints "files ok" or the first failing check.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      printf("FAIL line %d: %s (errno %d: %s)\n", __LINE__, #cond, errno, strerror(errno)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

static void write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  CHECK(fputs(text, f) >= 0);
  CHECK(fclose(f) == 0);
}

static void expect_content(const char* path, const char* text) {
  char buf[256] = {0};
  FILE* f = fopen(path, "r");
  CHECK(f != NULL);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  CHECK(fclose(f) == 0);
  CHECK(n == strlen(text) && memcmp(buf, text, n) == 0);
}

int main(void) {
  // Create, read back, append.
  write_file("/rw/new.txt", "hello");
  expect_content("/rw/new.txt", "hello");
  int fd = open("/rw/new.txt", O_WRONLY | O_APPEND);
  CHECK(fd >= 0);
  CHECK(write(fd, " world", 6) == 6);
  CHECK(close(fd) == 0);
  expect_content("/rw/new.txt", "hello world");

  // Seek, pread, pwrite, truncate, stat.
  fd = open("/rw/new.txt", O_RDWR);
  CHECK(fd >= 0);
  char buf[16] = {0};
  CHECK(lseek(fd, 6, SEEK_SET) == 6);
  CHECK(read(fd, buf, 5) == 5 && memcmp(buf, "world", 5) == 0);
  CHECK(pwrite(fd, "W", 1, 6) == 1);
  CHECK(pread(fd, buf, 5, 6) == 5 && memcmp(buf, "World", 5) == 0);
  CHECK(ftruncate(fd, 5) == 0);
  struct stat st;
  CHECK(fstat(fd, &st) == 0 && st.st_size == 5 && S_ISREG(st.st_mode));
  CHECK(close(fd) == 0);
  CHECK(open("/rw/new.txt", O_CREAT | O_EXCL | O_WRONLY, 0644) < 0 && errno == EEXIST);
  CHECK(open("/rw/absent.txt", O_RDONLY) < 0 && errno == ENOENT);

  // Directories, rename, symlinks, hard links.
  CHECK(mkdir("/rw/d", 0755) == 0);
  CHECK(mkdir("/rw/d", 0755) < 0 && errno == EEXIST);
  CHECK(rename("/rw/new.txt", "/rw/d/moved.txt") == 0);
  CHECK(access("/rw/new.txt", F_OK) < 0 && errno == ENOENT);
  CHECK(symlink("moved.txt", "/rw/d/ln") == 0);
  char target[64] = {0};
  CHECK(readlink("/rw/d/ln", target, sizeof target) == 9 && memcmp(target, "moved.txt", 9) == 0);
  expect_content("/rw/d/ln", "hello");
  CHECK(link("/rw/d/moved.txt", "/rw/d/hard") == 0);
  CHECK(stat("/rw/d/hard", &st) == 0 && st.st_nlink == 2);
  CHECK(lstat("/rw/d/ln", &st) == 0 && S_ISLNK(st.st_mode));

  // Listing.
  DIR* dir = opendir("/rw/d");
  CHECK(dir != NULL);
  int entries = 0, saw_dot = 0, saw_moved = 0;
  struct dirent* e;
  while ((e = readdir(dir)) != NULL) {
    ++entries;
    if (strcmp(e->d_name, ".") == 0) saw_dot = 1;
    if (strcmp(e->d_name, "moved.txt") == 0 && e->d_type == DT_REG) saw_moved = 1;
  }
  CHECK(closedir(dir) == 0);
  CHECK(entries == 5 && saw_dot && saw_moved);

  // Times.
  struct timespec times[2] = {{1000000000, 0}, {1200000000, 5}};
  CHECK(utimensat(AT_FDCWD, "/rw/d/moved.txt", times, 0) == 0);
  CHECK(stat("/rw/d/moved.txt", &st) == 0 && st.st_mtim.tv_sec == 1200000000 && st.st_mtim.tv_nsec == 5);

  // Removal.
  CHECK(rmdir("/rw/d") < 0 && errno == ENOTEMPTY);
  CHECK(unlink("/rw/d/moved.txt") == 0);
  CHECK(unlink("/rw/d/hard") == 0);
  CHECK(unlink("/rw/d/ln") == 0);
  CHECK(rmdir("/rw/d") == 0);

  // The read-only mount: reads work, every change is refused with EPERM.
  expect_content("/ro/input.txt", "read me");
  CHECK(open("/ro/input.txt", O_WRONLY) < 0 && errno == EPERM);
  CHECK(open("/ro/input.txt", O_RDONLY | O_TRUNC) < 0 && errno == EPERM);
  CHECK(open("/ro/new.txt", O_CREAT | O_WRONLY, 0644) < 0 && errno == EPERM);
  CHECK(unlink("/ro/input.txt") < 0 && errno == EPERM);
  CHECK(mkdir("/ro/d", 0755) < 0 && errno == EPERM);
  CHECK(rename("/ro/input.txt", "/rw/stolen.txt") < 0 && errno == EPERM);
  CHECK(link("/ro/input.txt", "/rw/alias.txt") < 0 && errno == EPERM);
  CHECK(symlink("input.txt", "/ro/ln") < 0 && errno == EPERM);
  fd = open("/ro/input.txt", O_RDONLY);
  CHECK(fd >= 0);
  CHECK(write(fd, "x", 1) < 0);
  CHECK(close(fd) == 0);
  expect_content("/ro/input.txt", "read me");

  printf("files ok\n");
  return 0;
}
