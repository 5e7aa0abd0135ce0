// ucx transport: full slots by zero-copy put (CHORUS_NET_PROTO).
//
// As an active message a full slot is copied four times: into the slot,
// into UCX's send buffers, out of its receive buffers on reassembly, into
// the receive slot by our handler.  As a put it leaves the sender's slot
// and lands in the receiver's: each rank registers its FIFO copies with
// UCX (ucp_mem_map) and tells every peer on another node, over the user's
// MPI communicator at set-up, where its receive copy of their FIFO is and
// the rkey to reach it.  A put then goes to the slot of the same offset in
// the peer's copy (both copies take the link's shape), a worker fence, and
// a header-only active message (kAmPut) that the receiver checks as any
// data message (ucx_arrival.cc) before it raises the tail.
//
// Why this is safe without a handshake per slot: the sender puts message m
// only once the receiver's credit says it consumed message m - nslots, the
// slot's previous tenant; the fence orders the notice after the put
// (ucp_worker_fence: operations before it complete, at the target, before
// any after it); and the receiver reads the slot only after the notice.
// The notice carries the token; the put needs the rkey, which only this
// communicator's ranks hold.  (UCX's tcp transport writes a put where it
// says without checking an rkey, so there, as for its other messages, the
// token is what keeps a process outside the job out of the data path;
// a put from outside could only overwrite a slot, never raise a tail, and
// CHORUS_CHECKSUM=1 names the link of a slot whose bytes changed.)
//
// Under `auto`, puts go only where UCX has a native RMA lane to the peer
// (an RDMA NIC): over tcp with the peer failure detection Chorus asks for
// (UCP_ERR_HANDLING_MODE_PEER), UCX 1.13 emulates a put with 8 KiB active
// messages and a completion message each, which measured 3-4x slower
// than plain active messages from 64 KiB to 4 MiB (perf/RESULTS.md); and
// small full slots still go as active messages: a put and its notice are
// two operations where one eager message suffices.  `put` puts every full
// slot, emulated or not (CI runs it over tcp, so that the protocol is
// exercised where no RDMA NIC is).  A put over tcp needs the target's CPU
// for its completion, which the progress thread gives while the target
// computes (ucx_progress.cc): without it, a rank's end-of-call flush waited
// for a peer that had returned to MPI.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/log.h"
#include "core/params.h"
#include "transport/ucx/ucx_state.h"

namespace chorus {

namespace {

// Under CHORUS_NET_PROTO=auto, full slots from this size go as puts.
constexpr size_t kAutoPutMinBytes = 16 * 1024;
// Room for one packed rkey in the set-up exchange: a few tens of bytes on
// tcp and one RDMA NIC, more with several NICs.  A larger one is not sent
// (its peers use active messages to this rank).
constexpr size_t kRkeyMax = 496;

// What one rank tells one peer on another node at set-up.
struct RkeyRecord {
  uint64_t recvCopy;  // its receive copy of the peer's FIFO; 0: no puts to it
  uint32_t rkeyBytes;
  uint32_t pad;
  char rkey[kRkeyMax];
};

size_t putMinBytesFromSetting() {
  const char *proto = paramString(ParamId::NetProto);
  if (strcmp(proto, "put") == 0) return 1;
  if (strcmp(proto, "am") == 0) return ~size_t(0);
  return kAutoPutMinBytes;
}

// Whether UCX reaches `ep` with an RMA lane of its own rather than the
// emulation over active messages.  UCX 1.13 has no query for a lane's use;
// its endpoint report names each lane's uses ("rma_bw#0" for a bandwidth
// RMA lane).  Should that report change, this says no and `auto` sends
// active messages, which is always correct.
bool nativeRma(ucp_ep_h ep) {
  char *text = nullptr;
  size_t size = 0;
  FILE *report = open_memstream(&text, &size);
  if (!report) return false;
  ucp_ep_print_info(ep, report);
  fclose(report);
  bool native = false;
  for (const char *line = text; line && *line && !native;) {
    const char *end = strchr(line, '\n');
    const std::string one(line, end ? size_t(end - line) : strlen(line));
    native = one.find("lane[") != std::string::npos && one.find(" rma_bw#") != std::string::npos;
    line = end ? end + 1 : nullptr;
  }
  free(text);
  return native;
}

}  // namespace

void ucxRegisterFifos(UcxState &st) {
  st.putMinBytes = putMinBytesFromSetting();
  if (!st.memory || st.memoryBytes == 0) return;
  ucp_mem_map_params_t mp = {};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  mp.address = st.memory;
  mp.length = st.memoryBytes;
  ucs_status_t s = ucp_mem_map(st.ucp, &mp, &st.memh);
  if (s != UCS_OK) {
    st.memh = nullptr;
    CHORUS_WARN("rank %d: could not register its UCX FIFO copies (%s): its peers on other nodes send it full slots "
                "as active messages", st.ctx->rank, ucs_status_string(s));
    return;
  }
  void *packed = nullptr;
  size_t bytes = 0;
  s = ucp_rkey_pack(st.ucp, st.memh, &packed, &bytes);
  if (s == UCS_OK && bytes <= kRkeyMax) st.packedRkey.assign(static_cast<char *>(packed), static_cast<char *>(packed) + bytes);
  else
    CHORUS_WARN("rank %d: no rkey for its UCX FIFO copies (%s, %zu bytes, room for %zu): its peers on other nodes "
                "send it full slots as active messages", st.ctx->rank, s == UCS_OK ? "too large" : ucs_status_string(s),
                bytes, kRkeyMax);
  if (s == UCS_OK) ucp_rkey_buffer_release(packed);
}

Status ucxExchangeRkeys(UcxState &st) {
  PeerLinks &ctx = *st.ctx;
  const size_t n = size_t(ctx.nranks);
  st.putTo.assign(n, PutTarget{});
  std::vector<RkeyRecord> out(n), in(n);
  for (size_t p = 0; p < n; ++p) {
    RkeyRecord &r = out[p];
    memset(&r, 0, sizeof r);
    if (!st.eps[p] || st.packedRkey.empty()) continue;
    r.recvCopy = uint64_t(reinterpret_cast<uintptr_t>(st.recvCopy[p]));
    r.rkeyBytes = uint32_t(st.packedRkey.size());
    memcpy(r.rkey, st.packedRkey.data(), st.packedRkey.size());
  }
  CHORUS_MPICHECK(MPI_Alltoall(out.data(), int(sizeof(RkeyRecord)), MPI_BYTE, in.data(), int(sizeof(RkeyRecord)),
                               MPI_BYTE, ctx.comm));
  size_t targets = 0;
  for (size_t p = 0; p < n; ++p) {
    const RkeyRecord &r = in[p];
    if (!st.eps[p] || r.recvCopy == 0 || r.rkeyBytes == 0 || r.rkeyBytes > kRkeyMax) continue;
    PutTarget &t = st.putTo[p];
    const ucs_status_t s = ucp_ep_rkey_unpack(st.eps[p], r.rkey, &t.rkey);
    if (s != UCS_OK) {
      t.rkey = nullptr;
      CHORUS_WARN("rank %d: could not unpack rank %zu's rkey (%s): full slots to it go as active messages",
                  ctx.rank, p, ucs_status_string(s));
      continue;
    }
    t.sendCopy = st.sendCopy[p];
    t.remoteRecvCopy = r.recvCopy;
    t.native = nativeRma(st.eps[p]);
    if (st.putMinBytes == kAutoPutMinBytes && !t.native) continue;  // emulated: active messages do better
    ++targets;
  }
  CHORUS_INFO(kSubsysNet, "UCX puts full slots of %s to %zu of the ranks on other nodes (CHORUS_NET_PROTO=%s)",
              st.putMinBytes <= 1 ? "every size" : "16 KiB and more", targets, paramString(ParamId::NetProto));
  return Status::Ok;
}

bool ucxPutSlot(UcxState &st, const FifoEnd &e, uint64_t msg, size_t bytes) {
  if (bytes < st.putMinBytes) return false;
  const PutTarget &t = st.putTo[size_t(e.peer)];
  if (!t.rkey || (!t.native && st.putMinBytes == kAutoPutMinBytes)) return false;
  const char *slot = e.slot(msg);
  ucp_request_param_t param = {};
  const uint64_t remote = t.remoteRecvCopy + uint64_t(slot - t.sendCopy);
  ucs_status_ptr_t req = ucp_put_nbx(st.eps[size_t(e.peer)], slot, bytes, remote, t.rkey, &param);
  if (UCS_PTR_IS_ERR(req)) {
    // The peer's endpoint failed: the notice's send says so too.
    if (st.failed[size_t(e.peer)] == UCS_OK) st.failed[size_t(e.peer)] = UCS_PTR_STATUS(req);
    return false;
  }
  if (req) st.pending.push_back({req, nullptr});
  ucp_worker_fence(st.worker);
  ++st.counters.puts;
  return true;
}

void ucxReleasePuts(UcxState &st) {
  for (PutTarget &t : st.putTo)
    if (t.rkey) {
      ucp_rkey_destroy(t.rkey);
      t.rkey = nullptr;
    }
  if (st.memh) ucp_mem_unmap(st.ucp, st.memh);
  st.memh = nullptr;
}

}  // namespace chorus
