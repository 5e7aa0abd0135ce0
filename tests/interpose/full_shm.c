/* Preloaded by interpose-hostile.sh ahead of libchorus_mpi.so: /dev/shm
 * looks full to Chorus's own segments ("/dev/shm/chorus-<pid>-...") and to
 * nothing else, so that MPI, which keeps its own shared memory there too,
 * runs as usual.  Chorus reserves a segment's pages with posix_fallocate,
 * which on a full tmpfs fails with ENOSPC. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int posix_fallocate(int fd, off_t offset, off_t len) {
  char link[64], path[512];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n > 0) {
    path[n] = '\0';
    if (strncmp(path, "/dev/shm/chorus-", 16) == 0 && strncmp(path, "/dev/shm/chorus-emu-", 20) != 0) return ENOSPC;
  }
  int (*real)(int, off_t, off_t) = (int (*)(int, off_t, off_t))dlsym(RTLD_NEXT, "posix_fallocate");
  return real ? real(fd, offset, len) : ENOSYS;
}
