// Device buffers on a communicator that spans nodes: staged through pinned
// host memory, then the host executor runs the collective over shared
// memory and UCX as for host buffers.
//
// Why whole buffers and not a proxy thread streaming slots: the host engine
// already runs every algorithm across nodes (rings in node order, trees
// across nodes, the hierarchical allreduce), and UCX as Debian builds it
// cannot read GPU memory anyway, so every byte crosses PCIe into host memory
// before it can leave the node.  Staging the whole buffer costs one copy
// each way that a slot pipeline would overlap with the network; it is the
// correct first step, and leaves the kernels out of the inter-node path
// until GPUDirect RDMA is available to measure against.
//
// Ordering: the call waits for the stream's earlier work (which produced the
// send buffer), and the result is in the receive buffer when it returns, for
// the _enqueue variants too (their stream then has nothing left to wait for).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "coll/exact_executor.h"
#include "coll/host_executor.h"
#include "coll/host_channel.h"
#include "transport/transport.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_executor.h"
#include "cuda/device_pool.h"

namespace chorus {

namespace {

// From the device pool: cudaFreeHost would wait for every kernel on the
// device, other communicators' among them (cuda/device_pool.h).
Status ensureStaging(CudaAttachment &cuda, size_t bytes) {
  if (bytes <= cuda.stagingBytes) return Status::Ok;
  devicePoolGive(cuda.staging);
  cuda.staging = nullptr;
  cuda.stagingBytes = 0;
  CHORUS_CHECK(devicePoolTake(PoolMemory::HostMapped, bytes, &cuda.staging));
  cuda.stagingBytes = bytes;
  return Status::Ok;
}

}  // namespace

Status cudaExecuteStaged(const PeerLinks &links, HostChannel &channel, CudaAttachment &cuda, const CollRequest &req,
                         CUstream_st *stream, const PlanShape *exactShape, size_t *stagedBytes, char *errText,
                         size_t errLen) {
  *stagedBytes = 0;
  const size_t sendBytes = sentBytes(req, links.rank, links.nranks);
  const size_t recvBytes = receivedBytes(req, links.rank, links.nranks);
  // In place (and every bcast): one region both ways.
  const bool shared = req.sendbuf == req.recvbuf;
  const size_t sendRegion = (sendBytes + 63) & ~size_t(63);
  const size_t total = shared ? (sendBytes > recvBytes ? sendBytes : recvBytes) : sendRegion + recvBytes;
  if (ensureStaging(cuda, total > 0 ? total : 1) != Status::Ok) {
    snprintf(errText, errLen, "%s across nodes: could not allocate %zu bytes of pinned host memory to stage device "
             "buffers", collName(req.coll), total);
    return Status::CudaError;
  }
  char *hostSend = static_cast<char *>(cuda.staging);
  char *hostRecv = shared ? hostSend : hostSend + sendRegion;
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  // The staged copies and the host collective run in this thread now, which
  // a graph could not replay.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CHORUS_CUDACHECK(cudaStreamIsCapturing(s, &capture));
  if (capture != cudaStreamCaptureStatusNone) {
    snprintf(errText, errLen, "%s %s on a stream under graph capture: device buffers are staged through "
             "host memory by the calling thread, which a graph cannot replay; call it outside the capture",
             collName(req.coll),
             exactShape ? "in the exact mode (CHORUS_REPRODUCIBLE=exact or the chorus_reproducible hint)" : "across nodes");
    return Status::Unsupported;
  }
  // A type with gaps leaves the receive buffer's gap bytes alone: stage them
  // first (a bcast's non-root receives into the region it shares).
  if (req.gaps && recvBytes > 0)
    CHORUS_CUDACHECK(cudaMemcpyAsync(hostRecv, req.recvbuf, recvBytes, cudaMemcpyDefault, s));
  // cudaMemcpyDefault: either buffer may be host memory (mixed calls).
  if (sendBytes > 0) CHORUS_CUDACHECK(cudaMemcpyAsync(hostSend, req.sendbuf, sendBytes, cudaMemcpyDefault, s));
  CHORUS_CUDACHECK(cudaStreamSynchronize(s));

  CollRequest host = req;
  host.sendbuf = hostSend;
  host.recvbuf = hostRecv;
  Status st = exactShape ? hostExecuteExact(channel, host, *exactShape) : hostExecute(channel, host);
  if (st != Status::Ok) {
    snprintf(errText, errLen, "%s", channel.errorText);
    return st;
  }
  if (recvBytes > 0) {
    CHORUS_CUDACHECK(cudaMemcpyAsync(req.recvbuf, hostRecv, recvBytes, cudaMemcpyDefault, s));
    CHORUS_CUDACHECK(cudaStreamSynchronize(s));
  }
  // (A type with gaps staged the receive buffer in first, too.)
  *stagedBytes = sendBytes + recvBytes + (req.gaps ? recvBytes : 0);
  return Status::Ok;
}

void cudaStagingFree(CudaAttachment &cuda) {
  devicePoolGive(cuda.staging);
  cuda.staging = nullptr;
  cuda.stagingBytes = 0;
}

}  // namespace chorus
