/* Preloaded by tools/redteam/disk_full.py: a file system that is full past a byte budget. write/pwrite/pwrite64 into
 * a file under $SLUICE_REDTEAM_FULL_DIR fail with ENOSPC when they would take the file past $SLUICE_REDTEAM_BUDGET
 * bytes, as a full disk does; every other write goes through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int past_budget(int fd, off_t end) {
  const char* dir = getenv("SLUICE_REDTEAM_FULL_DIR");
  const char* budget = getenv("SLUICE_REDTEAM_BUDGET");
  if (!dir || !budget || end <= (off_t)strtoll(budget, NULL, 10)) return 0;
  char link[64], target[PATH_MAX] = {0};
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  const ssize_t length = readlink(link, target, sizeof(target) - 1);
  return length > 0 && strncmp(target, dir, strlen(dir)) == 0;
}

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  static ssize_t (*next)(int, const void*, size_t, off_t);
  if (!next) next = (ssize_t (*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  if (past_budget(fd, offset + (off_t)count)) {
    errno = ENOSPC;
    return -1;
  }
  return next(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) { return pwrite(fd, buffer, count, offset); }

ssize_t write(int fd, const void* buffer, size_t count) {
  static ssize_t (*next)(int, const void*, size_t);
  if (!next) next = (ssize_t (*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  const off_t position = lseek(fd, 0, SEEK_CUR);
  if (position >= 0 && past_budget(fd, position + (off_t)count)) {
    errno = ENOSPC;
    return -1;
  }
  return next(fd, buffer, count);
}
