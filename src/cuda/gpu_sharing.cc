#include "cuda/gpu_sharing.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/log.h"

namespace chorus {

bool mpsActive(char *where, size_t len) {
  // The CUDA driver connects every context to the daemon through this pipe
  // when it exists, so its presence is what decides whether kernels of
  // different processes share the GPU's SMs or take turns.
  const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
  if (!dir || !*dir) dir = "/tmp/nvidia-mps";
  snprintf(where, len, "%s/control", dir);
  struct stat st;
  return stat(where, &st) == 0 && S_ISFIFO(st.st_mode);
}

int reportGpuSharing(const PeerInfo *all, int nranks, int self) {
  const PeerInfo &me = all[self];
  // Bus id "?": CUDA could not name the GPU, so sharing cannot be told.
  if (strcmp(me.busId, "?") == 0) return 1;
  std::string sharers;
  int count = 0, first = -1;
  for (int r = 0; r < nranks; ++r) {
    const PeerInfo &p = all[r];
    if (p.hostHash != me.hostHash || !p.hasIpc || strncmp(p.busId, me.busId, kBusIdMax) != 0) continue;
    if (first < 0) first = r;
    sharers += (count ? "," : "") + std::to_string(r);
    ++count;
  }
  if (count > 1 && first == self) {
    char pipe[512];
    if (mpsActive(pipe, sizeof pipe))
      CHORUS_INFO(kSubsysCuda,
                  "GPU %s is shared by ranks %s: MPS is active (%s), their kernels run concurrently", me.busId,
                  sharers.c_str(), pipe);
    else
      CHORUS_INFO(kSubsysCuda,
                  "GPU %s is shared by ranks %s without MPS (no %s): the GPU time-slices between their processes, "
                  "so each hand-off between them may wait for the other's timeslice; start nvidia-cuda-mps-control "
                  "-d for concurrent kernels, or run one rank per GPU",
                  me.busId, sharers.c_str(), pipe);
  }
  return count;
}

}  // namespace chorus
