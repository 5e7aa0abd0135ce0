#include "transport/shm/cma.h"

#include <errno.h>
#include <sys/uio.h>

#include <cstdio>
#include <cstring>

namespace chorus {

namespace {
// "chorus" and a version, so that a stray match is unlikely.
const uint64_t g_probeWord = 0x63686f7275730001ull;
}  // namespace

const uint64_t *cmaProbeWord() { return &g_probeWord; }

bool cmaCanRead(pid_t pid, uint64_t remoteProbe) {
#ifdef __linux__
  uint64_t value = 0;
  iovec local = {&value, sizeof value};
  iovec remote = {reinterpret_cast<void *>(uintptr_t(remoteProbe)), sizeof value};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == ssize_t(sizeof value) && value == g_probeWord;
#else
  (void)pid;
  (void)remoteProbe;
  return false;
#endif
}

Status cmaRead(pid_t pid, int peerRank, const void *remote, void *local, size_t bytes, char *err, size_t errLen) {
#ifdef __linux__
  size_t done = 0;
  while (done < bytes) {
    // The kernel may copy less than asked (it stops at a page it cannot
    // pin, or after a signal); go on from where it stopped.
    iovec to = {static_cast<char *>(local) + done, bytes - done};
    iovec from = {const_cast<char *>(static_cast<const char *>(remote)) + done, bytes - done};
    const ssize_t got = process_vm_readv(pid, &to, 1, &from, 1, 0);
    if (got > 0) {
      done += size_t(got);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    const int e = got < 0 ? errno : EFAULT;
    if (e == ESRCH) {
      snprintf(err, errLen, "rank %d (pid %d) died: its memory could not be read (process_vm_readv: %s)", peerRank,
               int(pid), strerror(e));
      return Status::PeerFailed;
    }
    snprintf(err, errLen, "reading %zu bytes of rank %d (pid %d) at %p failed (process_vm_readv: %s)", bytes - done,
             peerRank, int(pid), static_cast<const char *>(remote) + done, strerror(e));
    return Status::SystemError;
  }
  return Status::Ok;
#else
  snprintf(err, errLen, "cross-memory attach is Linux only (rank %d, pid %d, %zu bytes at %p)", peerRank, int(pid),
           bytes, remote);
  return Status::Unsupported;
#endif
}

}  // namespace chorus
