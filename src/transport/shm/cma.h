// Cross-memory attach (process_vm_readv): one rank copies straight out of
// another's buffer on the same machine, one copy instead of the FIFO's
// two.  What it buys is not bandwidth but fewer hand-offs: the reader
// needs the owner only to learn the address and to say when it is done,
// not once per slot, which matters when ranks share cores (alltoall, 8
// ranks on 2 cores: about 600 context switches per rank and call through
// the FIFOs).  Linux only; the kernel must allow this process to read its
// peers (same user, and Yama's ptrace_scope 0, or CAP_SYS_PTRACE).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "core/common.h"

namespace chorus {

// A word every process holds at a known address with a known value, for
// cmaCanRead to read from its peers.
const uint64_t *cmaProbeWord();

// Whether this process can read process `pid`'s memory: reads its probe
// word at `remoteProbe` and checks the value.
bool cmaCanRead(pid_t pid, uint64_t remoteProbe);

// Copy `bytes` at `remote` in process `pid` into `local`.  On failure
// writes why into `err` (naming `peerRank`) and returns PeerFailed (the
// process is gone) or SystemError.
Status cmaRead(pid_t pid, int peerRank, const void *remote, void *local, size_t bytes, char *err, size_t errLen);

}  // namespace chorus
