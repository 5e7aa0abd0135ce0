// shm transport: each rank owns one POSIX shared-memory segment holding its
// inbound FIFOs, one per peer; peers map it and write into "their" FIFO.
// Names are unlinked as soon as every peer has mapped them, so a crashed job
// leaves nothing behind in /dev/shm.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/context.h"
#include "core/log.h"

namespace chorus {

namespace {

struct ShmState {
  char name[kShmNameMax] = "";
  bool linked = false;
  char *local = nullptr;
  size_t bytes = 0;
  std::vector<char *> peerBase;  // mapped segments of the peers (nullptr for self)
};

size_t segmentBytes(const Context &ctx) { return fifoFootprint(ctx.slotBytes, ctx.nslots) * size_t(ctx.nranks); }

bool shmCanConnect(const PeerInfo &self, const PeerInfo &peer) { return self.hostHash == peer.hostHash; }

Status mapSegment(const char *name, size_t bytes, bool create, char **out) {
  int fd = shm_open(name, create ? (O_RDWR | O_CREAT | O_EXCL) : O_RDWR, 0600);
  if (fd < 0) {
    CHORUS_WARN("shm_open(%s) failed: %s", name, strerror(errno));
    return Status::SystemError;
  }
  if (create) {
    // Reserve the pages now: a full /dev/shm then fails here with a clear
    // error instead of a SIGBUS in the middle of a collective.
    int rc = ftruncate(fd, off_t(bytes));
    if (rc == 0) rc = posix_fallocate(fd, 0, off_t(bytes));
    if (rc != 0) {
      CHORUS_WARN("cannot reserve %zu bytes of shared memory for %s (is /dev/shm full?): %s", bytes, name,
                  strerror(rc > 0 ? rc : errno));
      close(fd);
      shm_unlink(name);
      return Status::SystemError;
    }
  }
  void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    CHORUS_WARN("mmap of %zu bytes of %s failed: %s", bytes, name, strerror(errno));
    return Status::SystemError;
  }
  *out = static_cast<char *>(base);
  return Status::Ok;
}

Status shmSetup(Context &ctx, PeerInfo &self) {
  static std::atomic<unsigned> sequence{0};
  auto *st = new ShmState;
  ctx.transportState = st;
  st->bytes = segmentBytes(ctx);
  snprintf(st->name, sizeof st->name, "/chorus-%d-%u", int(getpid()), sequence++);
  CHORUS_CHECK(mapSegment(st->name, st->bytes, true, &st->local));
  st->linked = true;
  memcpy(self.shmName, st->name, sizeof self.shmName);
  CHORUS_INFO(kSubsysTransport, "shm segment %s: %zu bytes for %d inbound FIFOs", st->name, st->bytes, ctx.nranks - 1);
  return Status::Ok;
}

Status shmConnect(Context &ctx, const PeerInfo *all) {
  auto *st = static_cast<ShmState *>(ctx.transportState);
  const size_t fifoBytes = fifoFootprint(ctx.slotBytes, ctx.nslots);
  st->peerBase.assign(ctx.nranks, nullptr);
  for (int p = 0; p < ctx.nranks; ++p) {
    if (p == ctx.rank || !shmCanConnect(all[ctx.rank], all[p])) continue;  // another node: ucx
    CHORUS_CHECK(mapSegment(all[p].shmName, st->bytes, false, &st->peerBase[p]));
    // Our FIFO in p's segment is the one indexed by our rank, and p's FIFO
    // in ours is indexed by p.
    ctx.sendTo[p] = makeFifoEnd(st->peerBase[p] + fifoBytes * size_t(ctx.rank), ctx.slotBytes, ctx.nslots, p);
    ctx.recvFrom[p] = makeFifoEnd(st->local + fifoBytes * size_t(p), ctx.slotBytes, ctx.nslots, p);
  }
  // Every rank's own FIFO (index = its rank) is its publish ring: for
  // single-node communicators, where every reader maps it.
  if (ctx.nranks <= kMaxPublishReaders && ctx.nnodes == 1) {
    ctx.publish.resize(ctx.nranks);
    for (int p = 0; p < ctx.nranks; ++p) {
      char *base = p == ctx.rank ? st->local : st->peerBase[p];
      ctx.publish[p] = makeFifoEnd(base + fifoBytes * size_t(p), ctx.slotBytes, ctx.nslots, p);
    }
  }
  return Status::Ok;
}

Status shmPostConnect(Context &ctx) {
  auto *st = static_cast<ShmState *>(ctx.transportState);
  if (st->linked) shm_unlink(st->name);
  st->linked = false;
  return Status::Ok;
}

Status shmFree(Context &ctx) {
  auto *st = static_cast<ShmState *>(ctx.transportState);
  if (!st) return Status::Ok;
  for (char *base : st->peerBase)
    if (base) munmap(base, st->bytes);
  if (st->local) munmap(st->local, st->bytes);
  if (st->linked) shm_unlink(st->name);
  delete st;
  ctx.transportState = nullptr;
  return Status::Ok;
}

}  // namespace

const TransportOps kShmTransport = {"shm", shmCanConnect, shmSetup, shmConnect, shmPostConnect, shmFree};

}  // namespace chorus
