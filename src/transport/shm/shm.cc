// shm transport: each rank owns one POSIX shared-memory segment holding its
// publish ring and its inbound FIFOs, one per peer on its node, each full or
// small as its link needs (coll/bulk_links.h); peers map it and write into
// "their" FIFO.  Names are unlinked as soon as every peer has mapped them,
// so a job that crashes once it is set up leaves nothing behind in /dev/shm;
// one killed during the set-up leaves its segments to the next set-up on
// the machine, which removes those of dead processes (shmReapDead).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "transport/shm/shm.h"

#include "transport/transport.h"
#include "core/log.h"

namespace chorus {

namespace {

// A fallback nonce where getrandom is unavailable: the clock's nanoseconds.
int64_t nowForNonce() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct ShmState {
  char name[kShmNameMax] = "";
  bool linked = false;
  char *local = nullptr;
  size_t bytes = 0;
  std::vector<char *> peerBase;     // mapped segments of the peers (nullptr for self)
  std::vector<size_t> peerBytes;    // and their sizes
};

// Publish rings serve single-node communicators, where every reader maps
// them; the consumed counters of all readers must fit in the inline area.
bool hasPublishRing(const PeerLinks &ctx) { return ctx.nnodes == 1 && ctx.nranks <= kMaxPublishReaders; }

// Where things lie in `owner`'s segment: its RankStatus, its publish ring, then the
// inbound FIFO of each peer on its node, in rank order, each of the shape
// its link needs.  Any rank computes any segment's layout alike (fifoShape
// is rank arithmetic), so a sender finds its FIFO with no further exchange.
struct SegmentLayout {
  size_t bytes = 0;
  std::vector<size_t> fifoAt;  // by sender rank; peers on owner's node only
  int full = 0, small = 0;     // inbound FIFOs of each shape, for the log
};

SegmentLayout segmentLayout(const PeerLinks &ctx, int owner) {
  SegmentLayout l;
  l.fifoAt.assign(size_t(ctx.nranks), 0);
  l.bytes = kRankStatusBytes;
  if (hasPublishRing(ctx)) l.bytes += hostFifoBytes(ctx, ctx.fullFifo);  // at kRankStatusBytes
  for (int p = 0; p < ctx.nranks; ++p) {
    if (p == owner || ctx.nodeOf[size_t(p)] != ctx.nodeOf[size_t(owner)]) continue;
    const bool full = ctx.fullLink(ctx, owner, p);
    l.fifoAt[size_t(p)] = l.bytes;
    l.bytes += hostFifoBytes(ctx, full ? ctx.fullFifo : ctx.smallFifo);
    ++(full ? l.full : l.small);
  }
  if (l.bytes == kRankStatusBytes) l.bytes = 0;  // alone on its node, in a communicator spanning nodes
  return l;
}

}  // namespace

size_t shmSegmentBytesOf(const PeerLinks &links, int owner) { return segmentLayout(links, owner).bytes; }
bool shmHasPublishRing(const PeerLinks &links) { return hasPublishRing(links); }

namespace {

bool shmCanConnect(const PeerInfo &self, const PeerInfo &peer) { return self.hostHash == peer.hostHash; }

}  // namespace

Status shmMapSegment(const char *name, size_t bytes, bool create, char **out) {
  int fd = shm_open(name, create ? (O_RDWR | O_CREAT | O_EXCL) : O_RDWR, 0600);
  if (fd < 0) {
    CHORUS_WARN("shm_open(%s) failed: %s", name, strerror(errno));
    return Status::SystemError;
  }
  if (!create) {
    // A peer's segment is mapped at the size this rank computes for it; a
    // page of it that the file does not hold is a SIGBUS at first touch, in
    // the middle of a collective.  Refuse any other size (the ranks sized it
    // from different settings, or someone resized it) and any other owner.
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      CHORUS_WARN("fstat of shared-memory segment %s failed: %s", name, strerror(errno));
      close(fd);
      return Status::SystemError;
    }
    if (st.st_uid != geteuid() || uint64_t(st.st_size) != uint64_t(bytes)) {
      CHORUS_WARN("shared-memory segment %s is %lld bytes owned by uid %d where %zu bytes owned by uid %d were "
                  "expected: the ranks sized it from different settings (CHORUS_SHM_SLOT_SIZE, CHORUS_SHM_SLOTS) "
                  "or another process changed it; not mapped",
                  name, (long long)st.st_size, int(st.st_uid), bytes, int(geteuid()));
      close(fd);
      return Status::SystemError;
    }
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

namespace {

// This process's pid namespace (the inode of /proc/self/ns/pid; 0 when
// unknown).  A pid means this process only inside its namespace: a segment
// is reaped only by a process of the namespace that named it.
unsigned long long pidNamespace() {
  static const unsigned long long ns = [] {
    struct stat st {};
    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0ull;
  }();
  return ns;
}

}  // namespace

void shmSegmentName(char *out, size_t len) {
  static std::atomic<unsigned> sequence{0};
  // The pid keeps names apart and, with the pid namespace, says whose the
  // segment is (shmReapDead); 64 random bits make names unguessable, so no
  // other local user can pre-create the segment (O_EXCL refuses it then)
  // or open it before it is unlinked.
  uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, 0) != ssize_t(sizeof nonce)) nonce = uint64_t(nowForNonce()) * 0x9e3779b97f4a7c15ull;
  snprintf(out, len, "/chorus-%d-%llx-%u-%016llx", int(getpid()), pidNamespace(), sequence++,
           (unsigned long long)nonce);
}

int shmReapDead() {
  DIR *dir = opendir("/dev/shm");
  if (!dir) return 0;
  const unsigned long long ns = pidNamespace();
  int reaped = 0;
  while (dirent *e = readdir(dir)) {
    int pid = 0, used = 0;
    unsigned long long theirNs = 0;
    unsigned seq = 0;
    // The name as shmSegmentName writes it, whole ("chorus-emu-..." and
    // other files do not parse).
    if (sscanf(e->d_name, "chorus-%d-%llx-%u-%*16[0-9a-f]%n", &pid, &theirNs, &seq, &used) != 3 ||
        e->d_name[used] != 0 || pid <= 0 || ns == 0 || theirNs != ns || pid == getpid())
      continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    const std::string path = std::string("/dev/shm/") + e->d_name;
    struct stat st {};
    // Only our own: /dev/shm is sticky, and another user's is not ours to remove.
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) continue;
    if (shm_unlink((std::string("/") + e->d_name).c_str()) == 0) {
      ++reaped;
      CHORUS_INFO(kSubsysTransport, "removed shm segment %s (%lld bytes) of pid %d, which died during its set-up",
                  e->d_name, (long long)st.st_size, pid);
    }
  }
  closedir(dir);
  return reaped;
}

namespace {

Status shmSetup(PeerLinks &ctx, PeerInfo &self) {
  auto *st = new ShmState;
  ctx.transportState = st;
  const SegmentLayout layout = segmentLayout(ctx, ctx.rank);
  st->bytes = layout.bytes;
  ctx.shmSegmentBytes = st->bytes;
  if (st->bytes == 0) return Status::Ok;  // alone on its node, in a communicator spanning nodes: nothing to share
  // Once per process: segments of jobs killed during their set-up, before
  // their names were unlinked, would otherwise hold their memory until reboot.
  static std::once_flag reap;
  std::call_once(reap, [] { shmReapDead(); });
  shmSegmentName(st->name, sizeof st->name);
  CHORUS_CHECK(shmMapSegment(st->name, st->bytes, true, &st->local));
  st->linked = true;
  ctx.status = reinterpret_cast<RankStatus *>(st->local);
  memcpy(self.shmName, st->name, sizeof self.shmName);
  CHORUS_INFO(kSubsysTransport, "shm segment %s: %zu bytes for %d full and %d small inbound FIFOs%s", st->name,
              st->bytes, layout.full, layout.small, hasPublishRing(ctx) ? " and the publish ring" : "");
  return Status::Ok;
}

Status shmConnect(PeerLinks &ctx, const PeerInfo *all) {
  auto *st = static_cast<ShmState *>(ctx.transportState);
  const SegmentLayout mine = segmentLayout(ctx, ctx.rank);
  st->peerBase.assign(ctx.nranks, nullptr);
  st->peerBytes.assign(ctx.nranks, 0);
  ctx.peerStatus.assign(size_t(ctx.nranks), nullptr);
  for (int p = 0; p < ctx.nranks; ++p) {
    if (p == ctx.rank || !shmCanConnect(all[ctx.rank], all[p])) continue;  // another node: ucx
    const SegmentLayout theirs = segmentLayout(ctx, p);
    CHORUS_CHECK(shmMapSegment(all[p].shmName, theirs.bytes, false, &st->peerBase[p]));
    st->peerBytes[p] = theirs.bytes;
    ctx.peerStatus[size_t(p)] = reinterpret_cast<const RankStatus *>(st->peerBase[p]);
    // Our FIFO in p's segment is the one p keeps for us, and p's FIFO in
    // ours the one we keep for p; each end derives its shape alike.
    const FifoShape out = fifoShape(ctx, p, ctx.rank), in = fifoShape(ctx, ctx.rank, p);
    ctx.sendTo[p] = makeHostFifoEnd(ctx, st->peerBase[p] + theirs.fifoAt[size_t(ctx.rank)], out, p);
    ctx.recvFrom[p] = makeHostFifoEnd(ctx, st->local + mine.fifoAt[size_t(p)], in, p);
  }
  // Every rank's publish ring opens its segment.
  if (hasPublishRing(ctx)) {
    ctx.publish.resize(ctx.nranks);
    for (int p = 0; p < ctx.nranks; ++p) {
      char *base = (p == ctx.rank ? st->local : st->peerBase[p]) + kRankStatusBytes;
      ctx.publish[p] = makeHostFifoEnd(ctx, base, ctx.fullFifo, p);
    }
  }
  return Status::Ok;
}

Status shmPostConnect(PeerLinks &ctx) {
  auto *st = static_cast<ShmState *>(ctx.transportState);
  if (st->linked) shm_unlink(st->name);
  st->linked = false;
  return Status::Ok;
}

Status shmFree(PeerLinks &ctx) {
  auto *st = static_cast<ShmState *>(ctx.transportState);
  if (!st) return Status::Ok;
  for (size_t p = 0; p < st->peerBase.size(); ++p)
    if (st->peerBase[p]) munmap(st->peerBase[p], st->peerBytes[p]);
  if (st->local) munmap(st->local, st->bytes);
  ctx.status = &ctx.ownStatus;
  ctx.peerStatus.clear();
  if (st->linked) shm_unlink(st->name);
  delete st;
  ctx.transportState = nullptr;
  return Status::Ok;
}

}  // namespace

size_t shmTableBytes(const PeerLinks &links) {
  const auto *st = static_cast<const ShmState *>(links.transportState);
  return st ? st->peerBase.size() * sizeof(char *) + st->peerBytes.size() * sizeof(size_t) : 0;
}

const TransportOps kShmTransport = {"shm", shmCanConnect, shmSetup, shmConnect, shmPostConnect, nullptr, shmFree,
                                   sizeof(char *) + sizeof(size_t)};  // ShmState::peerBase, peerBytes

}  // namespace chorus
