// ucx transport: full slots by zero-copy put (CHORUS_NET_PROTO).
//
// As an active message a full slot is copied four times: into the slot,
// into UCX's send buffers, out of its receive buffers on reassembly, into
// the receive slot by our handler.  As a put it leaves the sender's slot
// and lands in the receiver's: each rank registers its FIFO copies for a
// peer on another node with UCX (ucp_mem_map) when it links that peer
// (ucxLinkPeer: on first use, or at set-up under CHORUS_NET_CONNECT=eager)
// and tells the peer, in a message with the communicator's token
// (kAmRkey), where its receive copy of the peer's FIFO is and the rkey to
// reach it.  Until that message is in, the peer sends its full slots as
// active messages.  A put then goes to the slot of the same offset in
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
// communicator's ranks hold (it travels with the token).  (UCX's tcp transport writes a put where it
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

void ucxChoosePutProtocol(UcxState &st) {
  const char *proto = paramString(ParamId::NetProto);
  st.putMinBytes = strcmp(proto, "put") == 0 ? 1 : strcmp(proto, "am") == 0 ? ~size_t(0) : kAutoPutMinBytes;
  st.putNativeOnly = strcmp(proto, "auto") == 0;
}

namespace {

// Registers the FIFO copies of the link to `peer` (both: our send copy is
// where puts leave from) and packs the rkey the peer needs.  Empty: none
// (the peer then sends us active messages).
std::vector<char> registerLink(UcxState &st, int peer) {
  PeerLinks &ctx = *st.ctx;
  ucp_mem_map_params_t mp = {};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  mp.address = st.sendCopy[size_t(peer)];
  mp.length = netLinkBytes(ctx, peer);
  if (st.slotsApart) {
    // Only the slots take puts: both copies' slots, of the memory type
    // they are (device memory under GPUDirect RDMA).
    const FifoShape out = fifoShape(ctx, peer, ctx.rank), in = fifoShape(ctx, ctx.rank, peer);
    mp.address = ctx.sendTo[size_t(peer)].slots;
    mp.length = out.slotBytes * size_t(out.nslots) + in.slotBytes * size_t(in.nslots);
    mp.field_mask |= UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    mp.memory_type = ucs_memory_type_t(ctx.netMemory.slotsMemoryType);
  }
  ucp_mem_h &memh = st.linkMemh[size_t(peer)];
  ucs_status_t s = ucp_mem_map(st.ucp, &mp, &memh);
  if (s != UCS_OK) {
    memh = nullptr;
    CHORUS_WARN("rank %d: could not register its UCX FIFO copies for rank %d (%s): that rank sends it full slots as "
                "active messages", ctx.rank, peer, ucs_status_string(s));
    return {};
  }
  void *packed = nullptr;
  size_t bytes = 0;
  s = ucp_rkey_pack(st.ucp, memh, &packed, &bytes);
  std::vector<char> rkey;
  if (s == UCS_OK && bytes <= kRkeyMax) rkey.assign(static_cast<char *>(packed), static_cast<char *>(packed) + bytes);
  else
    CHORUS_WARN("rank %d: no rkey for its UCX FIFO copies (%s, %zu bytes, room for %u): rank %d sends it full slots "
                "as active messages", ctx.rank, s == UCS_OK ? "too large" : ucs_status_string(s), bytes, kRkeyMax,
                peer);
  if (s == UCS_OK) ucp_rkey_buffer_release(packed);
  return rkey;
}

}  // namespace

// Every peer, whatever its own CHORUS_NET_PROTO, gets our rkey: each
// sender chooses for itself, and each receiver takes both.  A peer we
// could not register for gets a message with no rkey, which changes
// nothing there (it keeps sending active messages).
void ucxSendOwedRkeys(UcxState &st) {
  std::vector<int> owed;
  owed.swap(st.rkeysOwed);
  for (int p : owed) {
    std::vector<char> &out = st.rkeyOut[size_t(p)];
    out = registerLink(st, p);
    if (out.empty()) continue;
    // Where a put's offset counts from: our receive copy, or its slots
    // when they are apart (the sender counts from its send copy's alike).
    const char *base = st.slotsApart ? st.ctx->recvFrom[size_t(p)].slots : st.recvCopy[size_t(p)];
    const uint64_t where = uint64_t(reinterpret_cast<uintptr_t>(base));
    ucxSend(st, p, kAmRkey, NetHeader{st.token, int32_t(st.ctx->rank), 0, where, 0, 0, 0}, out.data(), out.size());
  }
}

// Kept as it came: unpacking needs the endpoint, made on first use
// outside the handlers (ucxPutSlot).
void ucxTakeRkey(UcxState &st, int peer, uint64_t recvCopy, const void *packed, size_t bytes) {
  PutTarget &t = st.putTo[size_t(peer)];
  if (t.rkey || !t.packedRkey.empty() || recvCopy == 0 || bytes == 0 || bytes > kRkeyMax) return;
  t.remoteRecvCopy = recvCopy;
  t.packedRkey.assign(static_cast<const char *>(packed), static_cast<const char *>(packed) + bytes);
}

namespace {

// The rkey `t` came with, unpacked for the endpoint to `peer`; false when
// there is none (yet) or it cannot be used (dropped: active messages).
bool unpackRkey(UcxState &st, int peer, PutTarget &t) {
  if (t.rkey) return true;
  if (t.packedRkey.empty()) return false;
  ucp_ep_h ep = ucxEndpoint(st, peer);
  const ucs_status_t s = ep ? ucp_ep_rkey_unpack(ep, t.packedRkey.data(), &t.rkey) : UCS_ERR_UNREACHABLE;
  t.packedRkey.clear();
  if (s != UCS_OK) {
    t.rkey = nullptr;
    CHORUS_WARN("rank %d: could not unpack rank %d's rkey (%s): full slots to it go as active messages", st.ctx->rank,
                peer, ucs_status_string(s));
    return false;
  }
  t.native = nativeRma(ep);
  if (!t.native && st.putNativeOnly)
    CHORUS_INFO(kSubsysNet, "rank %d sends full slots to rank %d as active messages (CHORUS_NET_PROTO=auto: UCX has "
                "no RMA lane to it and would emulate puts)", st.ctx->rank, peer);
  else
    CHORUS_INFO(kSubsysNet, "rank %d puts full slots of %s to rank %d (CHORUS_NET_PROTO=%s, %s RMA lane)",
                st.ctx->rank, st.putMinBytes <= 1 ? "every size" : "16 KiB and more", peer,
                paramString(ParamId::NetProto), t.native ? "a native" : "an emulated");
  return true;
}

}  // namespace

bool ucxPutSlot(UcxState &st, const FifoEnd &e, uint64_t msg, size_t bytes) {
  if (bytes < st.putMinBytes) return false;
  PutTarget &t = st.putTo[size_t(e.peer)];
  if (!unpackRkey(st, e.peer, t) || (!t.native && st.putNativeOnly)) return false;
  const char *slot = e.slot(msg);
  ucp_request_param_t param = {};
  const char *base = st.slotsApart ? st.ctx->sendTo[size_t(e.peer)].slots : st.sendCopy[size_t(e.peer)];
  const uint64_t remote = t.remoteRecvCopy + uint64_t(slot - base);
  ucs_status_ptr_t req = ucp_put_nbx(st.eps[size_t(e.peer)], slot, bytes, remote, t.rkey, &param);
  if (UCS_PTR_IS_ERR(req)) {
    // The peer's endpoint failed: the notice's send says so too.
    if (st.failed[size_t(e.peer)] == UCS_OK) st.failed[size_t(e.peer)] = UCS_PTR_STATUS(req);
    return false;
  }
  if (req) st.pending.push_back({req, nullptr});
  // (UCX 1.13 fences a whole worker, not an endpoint: on the shared worker
  // other communicators' operations are ordered too, which none relies on.)
  ucp_worker_fence(st.worker);
  ++st.counters.puts;
  return true;
}

bool ucxPutReady(const UcxState &st, int peer) {
  const PutTarget &t = st.putTo[size_t(peer)];
  return t.rkey || !t.packedRkey.empty();
}

void ucxReleasePuts(UcxState &st) {
  for (PutTarget &t : st.putTo)
    if (t.rkey) {
      ucp_rkey_destroy(t.rkey);
      t.rkey = nullptr;
    }
  for (ucp_mem_h &memh : st.linkMemh)
    if (memh) {
      ucp_mem_unmap(st.ucp, memh);
      memh = nullptr;
    }
}

}  // namespace chorus
