#include "transport/cuda_ipc/cuda_ipc.h"

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "core/log.h"
#include "cuda/cuda_check.h"

namespace chorus {

static_assert(sizeof(cudaIpcMemHandle_t) == kIpcHandleBytes, "PeerInfo::ipcHandle must hold a cudaIpcMemHandle_t");

struct CudaIpcState {
  char *local = nullptr;
  size_t bytes = 0;
  std::vector<char *> peer;  // mapped peer memory (nullptr for self)
};

bool cudaIpcCanConnect(const PeerInfo &self, const PeerInfo &peer) {
  return self.hostHash == peer.hostHash && peer.hasIpc;
}

Status cudaIpcSetup(void *p, size_t bytes, CUstream_st *stream, PeerInfo &self, CudaIpcState **out) {
  auto *st = new CudaIpcState;
  *out = st;
  st->bytes = bytes;
  int dev = -1;
  CHORUS_CUDACHECK(cudaGetDevice(&dev));
  st->local = static_cast<char *>(p);
  // Zeroed before any peer can map it.  Not cudaMemset and
  // cudaDeviceSynchronize: the legacy stream waits for every blocking
  // stream, and the device for every kernel, among them kernels of other
  // communicators that may be waiting for ranks now blocked in this
  // setup's MPI calls: a deadlock.
  CHORUS_CUDACHECK(cudaMemsetAsync(p, 0, bytes, stream));
  CHORUS_CUDACHECK(cudaStreamSynchronize(stream));
  cudaIpcMemHandle_t h;
  CHORUS_CUDACHECK(cudaIpcGetMemHandle(&h, p));
  memcpy(self.ipcHandle, &h, sizeof h);
  self.cudaDevice = dev;
  self.hasIpc = 1;
  if (cudaDeviceGetPCIBusId(self.busId, kBusIdMax, dev) != cudaSuccess) {
    cudaGetLastError();
    strcpy(self.busId, "?");
  }
  CHORUS_INFO(kSubsysTransport, "cuda_ipc: %zu bytes of device FIFOs on GPU %d (%s)", bytes, dev, self.busId);
  return Status::Ok;
}

Status cudaIpcConnect(CudaIpcState &st, const PeerInfo *all, int nranks, int self) {
  st.peer.assign(nranks, nullptr);
  for (int p = 0; p < nranks; ++p) {
    // Ranks on other nodes are the device proxy's (transport/ucx/ucx_proxy.h).
    if (p == self || all[p].hostHash != all[self].hostHash) continue;
    if (!cudaIpcCanConnect(all[self], all[p])) {
      CHORUS_WARN("cuda_ipc: rank %d cannot reach rank %d (it exported no device FIFOs)", self, p);
      return Status::Unsupported;
    }
    if (all[p].pid == all[self].pid) {
      // CUDA refuses to open a handle in the process that exported it.
      CHORUS_WARN("cuda_ipc: ranks %d and %d are the same process (pid %d): CUDA IPC cannot map a process's own "
                  "memory; run one rank per process",
                  self, p, int(all[p].pid));
      return Status::Unsupported;
    }
    cudaIpcMemHandle_t h;
    memcpy(&h, all[p].ipcHandle, sizeof h);
    void *mapped = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle(&mapped, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      cudaGetLastError();
      CHORUS_WARN("cuda_ipc: cannot map rank %d's device FIFOs (GPU %d, %s) from GPU %d (%s): %s (%s). Peer "
                  "access between these GPUs may be unsupported (no NVLink/P2P, or isolated by the container)",
                  p, int(all[p].cudaDevice), all[p].busId, int(all[self].cudaDevice), all[self].busId,
                  cudaGetErrorName(e), cudaGetErrorString(e));
      return Status::CudaError;
    }
    st.peer[p] = static_cast<char *>(mapped);
  }
  return Status::Ok;
}

char *cudaIpcLocal(const CudaIpcState &st) { return st.local; }
char *cudaIpcPeer(const CudaIpcState &st, int peer) { return st.peer[peer]; }

void cudaIpcUnmapPeers(CudaIpcState &st) {
  for (char *&p : st.peer) {
    if (p) CHORUS_CUDACHECK_IGNORE(cudaIpcCloseMemHandle(p));
    p = nullptr;
  }
}

void cudaIpcFree(CudaIpcState *st) {
  if (!st) return;
  cudaIpcUnmapPeers(*st);
  delete st;
}

}  // namespace chorus
