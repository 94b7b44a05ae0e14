// A full disk for one folder, by LD_PRELOAD, for tests that must run unprivileged (no tmpfs to mount):
// write(2), pwrite(2) and writev(2) to a file under $ORBITLAW_FULL_DISK_DIR succeed for the first
// $ORBITLAW_FULL_DISK_AFTER bytes the process writes there, in total, and then fail with ENOSPC, the way a
// filesystem that fills up does (the write that crosses the limit is cut short). Writes elsewhere (the
// terminal, other folders) are passed through untouched.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long long written_so_far = 0;

// Whether fd is a file under the folder (its path read back from /proc).
static int under_full_folder(int fd) {
  const char* dir = getenv("ORBITLAW_FULL_DISK_DIR");
  if (!dir || fd < 3) return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  const size_t length = strlen(dir);
  return strncmp(path, dir, length) == 0 && (path[length] == '/' || path[length] == '\0');
}

// How many of `size` bytes may still be written; -1 (errno ENOSPC) when none.
static ssize_t room_for(int fd, size_t size) {
  if (!under_full_folder(fd)) return (ssize_t)size;
  const char* after = getenv("ORBITLAW_FULL_DISK_AFTER");
  const long long limit = after ? atoll(after) : 0;
  const long long left = limit - written_so_far;
  if (left <= 0 && size > 0) {
    errno = ENOSPC;
    return -1;
  }
  return (ssize_t)((long long)size < left ? (long long)size : left);
}

ssize_t write(int fd, const void* data, size_t size) {
  static ssize_t (*real)(int, const void*, size_t);
  if (!real) real = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  const ssize_t allowed = room_for(fd, size);
  if (allowed < 0) return -1;
  const ssize_t done = real(fd, data, (size_t)allowed);
  if (done > 0 && under_full_folder(fd)) written_so_far += done;
  return done;
}

ssize_t pwrite(int fd, const void* data, size_t size, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t);
  if (!real) real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  const ssize_t allowed = room_for(fd, size);
  if (allowed < 0) return -1;
  const ssize_t done = real(fd, data, (size_t)allowed, offset);
  if (done > 0 && under_full_folder(fd)) written_so_far += done;
  return done;
}

ssize_t pwrite64(int fd, const void* data, size_t size, off_t offset) {
  return pwrite(fd, data, size, offset);
}

// writev as one write of the gathered bytes, so that the limit cuts it like the others.
ssize_t writev(int fd, const struct iovec* parts, int count) {
  size_t size = 0;
  for (int i = 0; i < count; ++i) size += parts[i].iov_len;
  char* gathered = malloc(size ? size : 1);
  if (!gathered) {
    errno = ENOMEM;
    return -1;
  }
  size_t at = 0;
  for (int i = 0; i < count; ++i) {
    memcpy(gathered + at, parts[i].iov_base, parts[i].iov_len);
    at += parts[i].iov_len;
  }
  const ssize_t done = write(fd, gathered, size);
  const int saved = errno;
  free(gathered);
  errno = saved;
  return done;
}
