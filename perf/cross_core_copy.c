/* cross_core_copy.c - how fast data crosses between two cores through a
 * ring of shared slots, as Chorus's FIFOs move it: a writer process on
 * core 1 copies a buffer into the slots, a reader on core 0 copies each
 * posted slot out into its own buffer.  For perf/RESULTS.md; not built by
 * make (no MPI needed):
 *
 *   cc -O2 perf/cross_core_copy.c -o cross_core_copy
 *   ./cross_core_copy 256     # slot size in KiB; 4 slots, 1 MiB per pass
 *
 * Prints the stream rate (bytes through the ring per second) and the
 * reader's copy rate alone (its time in memcpy), next to a local memcpy of
 * the same 1 MiB on one core.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

int main(int argc, char **argv) {
  const long slotKiB = argc == 2 ? atol(argv[1]) : 0;
  if (slotKiB <= 0 || slotKiB > 1024 || 1024 % slotKiB != 0) {
    fprintf(stderr, "usage: %s SLOT_KIB (a divisor of 1024)\n", argv[0]);
    return 2;
  }
  enum { kSlots = 4, kPasses = 2000 };
  const size_t slotBytes = (size_t)slotKiB << 10, passBytes = 1 << 20, perPass = passBytes / slotBytes;
  char *ring = mmap(NULL, kSlots * slotBytes + 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) return 2;
  long *posted = (long *)(ring + kSlots * slotBytes), *freed = posted + 16; /* separate lines */
  char *src = aligned_alloc(4096, passBytes), *dst = aligned_alloc(4096, passBytes);
  if (!src || !dst) return 2;
  memset(src, 1, passBytes);
  memset(dst, 2, passBytes);
  memset(ring, 0, kSlots * slotBytes);

  pinTo(0);
  double best = 1e9;
  for (int r = 0; r < 200; ++r) {
    const double t0 = now();
    memcpy(dst, src, passBytes);
    const double t = now() - t0;
    if (t < best) best = t;
  }
  const double local = passBytes / best / 1e9;

  const long total = (long)kPasses * (long)perPass;
  const pid_t writer = fork();
  if (writer == 0) {
    pinTo(1);
    for (long k = 0; k < total; ++k) {
      while (k - __atomic_load_n(freed, __ATOMIC_ACQUIRE) >= kSlots) __builtin_ia32_pause();
      memcpy(ring + (k % kSlots) * slotBytes, src + (k % perPass) * slotBytes, slotBytes);
      __atomic_store_n(posted, k + 1, __ATOMIC_RELEASE);
    }
    _exit(0);
  }
  double copying = 0;
  const double t0 = now();
  for (long k = 0; k < total; ++k) {
    while (__atomic_load_n(posted, __ATOMIC_ACQUIRE) <= k) __builtin_ia32_pause();
    const double c0 = now();
    memcpy(dst + (k % perPass) * slotBytes, ring + (k % kSlots) * slotBytes, slotBytes);
    copying += now() - c0;
    __atomic_store_n(freed, k + 1, __ATOMIC_RELEASE);
  }
  const double elapsed = now() - t0;
  waitpid(writer, NULL, 0);
  const int ok = dst[passBytes - 1] == 1;
  printf("slot %ld KiB: stream %.1f GB/s, reader's copy alone %.1f GB/s; local memcpy of 1 MiB %.1f GB/s%s\n",
         slotKiB, (double)total * slotBytes / elapsed / 1e9, (double)total * slotBytes / copying / 1e9, local,
         ok ? "" : "  [WRONG DATA]");
  return ok ? 0 : 1;
}
