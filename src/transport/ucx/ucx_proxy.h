// The device proxy: FIFOs between GPU kernels on different nodes, carried
// by UCX (ucx_proxy.cc).
//
// A kernel's link to a rank on another node is a pair of FIFOs in local
// pinned host memory that the GPU maps: the send copy (the kernel fills a
// slot and raises its tail; the peer's credits raise its head) and the
// receive copy (the network fills slots and raises the tail; the kernel
// raises the head as it consumes).  So the kernels' send and receive verbs
// stay what they are on NVLink: a link simply has a remote end.  A thread
// per communicator, the proxy, watches the counters the kernels write and
// hands each new message and each credit to the ucx transport, which puts
// a full slot straight into the peer's registered receive slot (zero copy,
// CHORUS_NET_PROTO) or sends it as an active message, and checks every
// arrival (sequence number, window, size, token) as for host FIFOs.  No
// host work per launch: a kernel replayed from a CUDA graph drives the
// proxy as an eager launch does.
//
// Each channel is a communicator context of the ucx transport of its own
// (its own token, so its messages never mix with the host FIFOs' or with
// another channel's), sharing the process's worker and endpoints.
//
// Memory ordering, kernel -> proxy -> NIC -> peer's kernel:
//  - a kernel writes a message's slot and its size (line 1's flag word of
//    the message's inline slot, unused by full messages), then a
//    fence.acq_rel.sys and a strong store of the tail (prims_device.cuh):
//    a release at system scope.  The proxy's acquire load of the tail
//    synchronizes with it, so the slot and size it then reads are the
//    message's;
//  - the transport hands the slot to UCX (a put into the peer's slot, then
//    behind ucp_worker_fence a notice; or an active message carrying it),
//    and the peer's handler stores the slot's bytes (or finds the put's
//    there: the fence's contract) before its release store of the tail;
//  - the peer's kernel polls that tail with relaxed.sys loads and an
//    acquire.sys load (prims_device.cuh), which synchronizes with the
//    handler's release on x86's and the PCIe's ordering of a CPU's stores
//    to host memory as the GPU reads them;
//  - credits go back the same way: the kernel's release store of the
//    head, the proxy's acquire load of it, a credit message, the sender's
//    handler's release store of the send copy's head, the kernel's acquire.
// The proxy reads only counters and slots the kernels released, and writes
// only what the kernels never write (the inline line the transport sends
// as a full message's header).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/common.h"
#include "transport/fifo.h"
#include "transport/transport.h"
#include "transport/ucx/ucx.h"

namespace chorus {

struct NetProxy;

// The kernels' FIFO shape on these links, and where their memory comes
// from: pinned, GPU-mapped host memory, the slots in device memory under
// GPUDirect RDMA.
struct NetProxyConfig {
  int nchannels = 1;
  size_t slotBytes = 0;
  int nslots = 0;
  NetCopyMemory memory;  // (transport.h; slotAlloc set: GPUDirect RDMA's layout)
  // The ranks on other nodes to link (cuda/device_links.h; the same set on
  // both ends of each link); empty: every one.
  std::vector<int> peers;
};

// Whether the process's UCX can register memory of type `memoryType` (a
// ucs_memory_type_t; CUDA for GPUDirect RDMA), and a registration of
// `probe` (`bytes`) as that type succeeds; when not, `why` says which.
// `base`: a communicator context whose ucx transport is set up.
bool netProxyCanRegister(const PeerLinks &base, int memoryType, void *probe, size_t bytes, char *why, size_t len);

// Collective over base.comm: every rank sets up its channels' contexts,
// links its peers on other nodes (config.peers, or every one: the kernels'
// FIFO pointers must exist before a launch) and connects.  Not Ok when this rank could not; the
// caller agrees on the outcome with the other ranks.
Status netProxyCreate(const PeerLinks &base, const NetProxyConfig &config, NetProxy **out);
// The ends of channel `channel`'s link with `peer` (on another node), in
// host memory: the kernel's views are made of these pointers.
const FifoEnd &netProxySendEnd(const NetProxy &proxy, int channel, int peer);
const FifoEnd &netProxyRecvEnd(const NetProxy &proxy, int channel, int peer);
// Starts the thread.  `abortWord`: pinned host memory the kernels poll,
// set to 1 once a link failed (a peer died, aborted, or broke the
// transport's contract), after the reason is recorded (netProxyFailure).
Status netProxyStart(NetProxy &proxy, int *abortWord);
// A launch was enqueued: the thread looks at once instead of at its next
// idle poll.
void netProxyKick(NetProxy &proxy);
// Why the links failed (false: they did not).
bool netProxyFailure(NetProxy &proxy, Status *status, char *text, size_t len);
// The communicator's release began: this rank's kernels are done.  A link
// that fails from now on is a peer that finished and left first (at
// MPI_Finalize ranks free their communicators in different orders), or
// one that died too late to matter: recorded, said at INFO, not WARN.
void netProxyClosing(NetProxy &proxy);
// Messages posted to the network, for tests and logs.
uint64_t netProxyMessages(const NetProxy &proxy);
// Tests only: the ucx transport's faults (ucx.h, kNetFault*) on every
// channel's messages, and what its channels' contexts counted (summed).
void netProxySetTestFaults(NetProxy &proxy, unsigned faults);
UcxCounters netProxyCounters(const NetProxy &proxy);
// Stops the thread and frees every channel's context (its sends flushed,
// bounded) and memory.  After the release barrier: a peer's kernel may
// wait for what this proxy still carries until every rank passed it.
void netProxyFree(NetProxy *proxy);

}  // namespace chorus
