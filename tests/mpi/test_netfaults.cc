// The ucx transport's arrival checks (ucx_arrival.cc), with the test-only
// fault hook (ucx.h, ucxSetTestFaults) on the messages ranks send to other
// nodes, and a process outside the job (net_forger) that connects to a
// rank's UCX port and sends forged messages.  Run at 4 ranks as 2 played
// nodes of 2 (netfaults-np4-2x2.test), CHORUS_TIMEOUT a few seconds.
//
// 0. links on first use (CHORUS_NET_CONNECT): on 2x2 each rank has two
//    peers on the other node; broadcasts from rank 0 (a node tree, or a
//    chain in ring order) leave some of those 8 links unmade (rank 3, the
//    chain's and the tree's last, needs none), and after an alltoall every
//    rank has linked both; with eager every rank linked both at set-up.
//    Each result matches MPI's.  The footprint chorus_sim predicts
//    (comm/footprint.h) is this communicator's: a context wired without MPI
//    from the same layout (wireCommunicator) has the live one's footprint;
//    the live tables are sized as it counts them, its shm segment is the
//    size predicted, and after the alltoall the UCX copies are the bytes
//    predicted for every remote peer.
// 1. several communicators at once (two duplicates and a split by rank
//    parity, each crossing the nodes): collectives interleaved on them,
//    each checked against MPI's; the three share the process's one UCX
//    worker (the same address in each, counted as its users); one freed
//    while the others run on, whose late messages must not count as forged.
// 2. reorder + forge: every collective at inline, one-slot and multi-slot
//    sizes matches MPI's although messages overtake each other and forged
//    copies (without the communicator's token) arrive; the faults really
//    happened (counted) and every rank that received forged copies dropped them.
// 3. duplicate, corrupt-header, out-of-window: each on a fresh communicator,
//    one message from rank 0 breaks the contract: its receiver fails with
//    the "arrived corrupted" class naming the fault and rank 0, and no rank
//    returns success with a wrong result.
// 4. net_forger, spawned by rank 1, sends forged headers (no token, a 4096-
//    line count, a short header, credits) to rank 1's worker while the job
//    runs allreduces: every result stays right, no collective fails (none
//    waits on the endpoint UCX made for the forger: a collective leaves the
//    worker's flush to the progress thread), and rank 1 counts the drops.
#include <mpi.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chorus.h"
#include "comm/context.h"
#include "comm/footprint.h"
#include "rank_test.h"
#include "transport/shm/shm.h"
#include "transport/ucx/ucx.h"

extern char **environ;

namespace {

int rank = 0, size = 1;
std::string failure;

void fail(const std::string &why) {
  if (failure.empty()) failure = why;
}

chorus::Context *contextOf(MPI_Comm c) {
  chorus::Context *ctx = chorus::contextFind(c);
  if (!ctx) fail("no Chorus context on the communicator");
  return ctx;
}

uint64_t sumOverRanks(uint64_t v) {
  uint64_t total = 0;
  MPI_Allreduce(&v, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

// The peers on other nodes this rank linked so far.
uint64_t linkedPeers(chorus::Context *ctx) { return ctx ? chorus::ucxCounters(*ctx).linkedPeers : 0; }

void checkFootprint(const chorus::Context &live);

void linksOnFirstUse() {
  MPI_Comm c = dupReturningErrors();
  const char *mode = getenv("CHORUS_NET_CONNECT");
  const bool eager = mode && strcmp(mode, "eager") == 0;
  for (int n : {1000, 70001}) {
    std::vector<int> mine(static_cast<size_t>(n)), ref(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) mine[size_t(i)] = ref[size_t(i)] = rank == 0 ? i * 7 + 3 : -1;
    if (MPIX_Bcast_gpu(mine.data(), n, MPI_INT, 0, c) != MPI_SUCCESS) fail("links: a broadcast failed");
    MPI_Bcast(ref.data(), n, MPI_INT, 0, c);
    if (mine != ref) fail("links: a broadcast differs from MPI_Bcast");
  }
  chorus::Context *ctx = contextOf(c);
  const uint64_t afterBcast = linkedPeers(ctx);
  const int n = 3000;
  std::vector<int> in(size_t(n) * size_t(size)), out(in.size()), ref(in.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = rank * 100000 + int(i);
  if (MPIX_Alltoall_gpu(in.data(), n, MPI_INT, out.data(), n, MPI_INT, c) != MPI_SUCCESS) fail("links: alltoall failed");
  MPI_Alltoall(in.data(), n, MPI_INT, ref.data(), n, MPI_INT, c);
  if (out != ref) fail("links: alltoall differs from MPI_Alltoall");
  const uint64_t afterAlltoall = linkedPeers(ctx);
  const int remotePeers = size / 2;  // 2x2: the other node's ranks
  printf("rank %d: links (%s): %llu peers on the other node after broadcasts, %llu after an alltoall\n", rank,
         eager ? "eager" : "on first use", (unsigned long long)afterBcast, (unsigned long long)afterAlltoall);
  const uint64_t linksAfterBcast = sumOverRanks(afterBcast), allLinks = uint64_t(size) * uint64_t(remotePeers);
  if (eager && afterBcast != uint64_t(remotePeers))
    fail("links: eager, but " + std::to_string(afterBcast) + " of " + std::to_string(remotePeers) +
         " peers on the other node linked after the first collectives");
  if (!eager && linksAfterBcast >= allLinks)
    fail("links: on first use, but the ranks linked all " + std::to_string(allLinks) +
         " links across nodes for broadcasts from rank 0");
  if (afterAlltoall != uint64_t(remotePeers))
    fail("links: " + std::to_string(afterAlltoall) + " peers linked after an alltoall, not all " +
         std::to_string(remotePeers));
  if (ctx) checkFootprint(*ctx);
  MPIX_Comm_gpu_free(c);
  MPI_Comm_free(&c);
}

template <typename Vector>
size_t bytesOf(const Vector &v) {
  return v.size() * sizeof(typename Vector::value_type);
}

// What chorus_sim predicts for this layout against what the set-up made
// (after an alltoall: every remote peer linked).
void checkFootprint(const chorus::Context &live) {
  const chorus::CommFootprint f = chorus::commFootprint(live);
  chorus::Context wired;
  wired.rank = live.rank;
  wired.nranks = live.nranks;
  std::vector<uint64_t> hosts(size_t(live.nranks));
  std::vector<int64_t> places(size_t(live.nranks));
  for (int r = 0; r < live.nranks; ++r) {
    hosts[size_t(r)] = uint64_t(live.nodeOf[size_t(r)]) + 1;
    places[size_t(r)] = live.ringWhere.empty() ? r : live.ringWhere[size_t(r)];  // the live ring order
  }
  chorus::wireCommunicator(wired, hosts, places);
  const chorus::CommFootprint w = chorus::commFootprint(wired);
  if (w.tableBytes != f.tableBytes || w.shmSegmentBytes != f.shmSegmentBytes || w.bulkNetPeers != f.bulkNetPeers ||
      w.bulkNetBytes != f.bulkNetBytes || w.allNetBytes != f.allNetBytes || w.remotePeers != f.remotePeers ||
      w.peerInfoBytes != f.peerInfoBytes || w.deviceFifoBytes != f.deviceFifoBytes)
    fail("footprint: a context wired from the layout without MPI differs from the live one's (tables " +
         std::to_string(w.tableBytes) + " vs " + std::to_string(f.tableBytes) + ", net " +
         std::to_string(w.allNetBytes) + " vs " + std::to_string(f.allNetBytes) + ")");
  const size_t tables = bytesOf(live.nodeOf) + bytesOf(live.peers) + bytesOf(live.sendTo) + bytesOf(live.recvFrom) +
                        bytesOf(live.peerStatus) + bytesOf(live.watchedPids) + bytesOf(live.publish) +
                        chorus::shmTableBytes(live) + chorus::ucxCounters(live).tableBytes +
                        bytesOf(live.ringOrder) + bytesOf(live.ringWhere) + bytesOf(live.nodeStart) +
                        bytesOf(live.localPrev) + bytesOf(live.crossPrev) + bytesOf(live.localRanks) +
                        bytesOf(live.crossRanks) + bytesOf(live.scratch);
  if (tables != f.tableBytes)
    fail("footprint: the live tables take " + std::to_string(tables) + " bytes, the footprint counts " +
         std::to_string(f.tableBytes));
  if (f.shmSegmentBytes != live.shmSegmentBytes)
    fail("footprint: shm segment of " + std::to_string(live.shmSegmentBytes) + " bytes, predicted " +
         std::to_string(f.shmSegmentBytes));
  const chorus::UcxCounters k = chorus::ucxCounters(live);
  // (Here every remote peer's copies fit: the pairwise exchange linked them all.)
  if (k.linkedBytes != f.alltoallNetBytes || k.linkedPeers != uint64_t(f.alltoallNetPeers) ||
      f.alltoallNetBytes != f.allNetBytes)
    fail("footprint: " + std::to_string(k.linkedPeers) + " peers linked in " + std::to_string(k.linkedBytes) +
         " bytes after an alltoall, predicted " + std::to_string(f.alltoallNetPeers) + " in " +
         std::to_string(f.alltoallNetBytes) + " (every remote peer's: " + std::to_string(f.allNetBytes) + ")");
  if (f.bulkNetPeers < 1 || f.bulkNetPeers > f.remotePeers)
    fail("footprint: " + std::to_string(f.bulkNetPeers) + " streaming links across nodes predicted, of " +
         std::to_string(f.remotePeers) + " remote peers");
  // Nodes played on one machine talk over its loopback: the planner keeps
  // its measured network, not the NIC that hwloc names (comm/context.cc).
  if (live.planShape.netLinkBytesPerUs != 0 || live.planShape.nodeNetBytesPerUs != 0)
    fail("plan: played nodes priced at a NIC's " + std::to_string(live.planShape.netLinkBytesPerUs) +
         " B/us a connection, " + std::to_string(live.planShape.nodeNetBytesPerUs) + " a node");
  if (rank == 0)
    printf("footprint: tables %zu B, shm segment %zu B, %d of %d remote peers streamed (%zu B), all linked %zu B\n",
           f.tableBytes, f.shmSegmentBytes, f.bulkNetPeers, f.remotePeers, f.bulkNetBytes, f.allNetBytes);
}

void reorderAndForge() {
  MPI_Comm c = dupReturningErrors();
  if (MPIX_Barrier_gpu(c) != MPI_SUCCESS) fail("reorder: the warm-up barrier failed");
  chorus::Context *ctx = contextOf(c);
  if (!ctx) return;
  chorus::ucxSetTestFaults(*ctx, chorus::kNetFaultReorder | chorus::kNetFaultForge);
  for (int n : {1, 13, 112, 1000, 5000, 70001}) checkCollectivesAgainstMpi(c, n, rank, size, &failure);
  if (MPIX_Barrier_gpu(c) != MPI_SUCCESS) fail("reorder: the last barrier failed");
  const chorus::UcxCounters k = chorus::ucxCounters(*ctx);
  chorus::ucxSetTestFaults(*ctx, 0);
  const uint64_t reordered = sumOverRanks(k.reordered), forged = sumOverRanks(k.forgedSent),
                 dropped = sumOverRanks(k.forgedDropped), puts = sumOverRanks(k.puts);
  if (rank == 0) printf("reorder + forge: %llu messages overtaken, %llu forged sent, %llu dropped, %llu full slots put\n",
                        (unsigned long long)reordered, (unsigned long long)forged, (unsigned long long)dropped,
                        (unsigned long long)puts);
  if (reordered == 0) fail("reorder: no message was overtaken: the fault did not happen");
  // Under CHORUS_NET_PROTO=put the full slots of 5000 and 70001 ints went
  // by put, their notices reordered and forged like any data message.
  const char *proto = getenv("CHORUS_NET_PROTO");
  if (proto && strcmp(proto, "put") == 0 && puts == 0) fail("put: CHORUS_NET_PROTO=put, but no full slot went by put");
  if (proto && strcmp(proto, "am") == 0 && puts != 0) fail("am: CHORUS_NET_PROTO=am, but full slots went by put");
  if (forged == 0 || dropped == 0) fail("forge: no forged message was sent or dropped");
  if (dropped > forged) fail("forge: more messages were dropped than forged");
  MPIX_Comm_gpu_free(c);
  MPI_Comm_free(&c);
}

// One message from rank 0 to another node breaks the contract (`fault`):
// allreduces until some rank fails, which must be its receiver, naming it.
void brokenContract(unsigned fault, const char *name, const char *named) {
  MPI_Comm c = dupReturningErrors();
  if (MPIX_Barrier_gpu(c) != MPI_SUCCESS) fail(std::string(name) + ": the warm-up barrier failed");
  chorus::Context *ctx = contextOf(c);
  if (!ctx) return;
  if (rank == 0) chorus::ucxSetTestFaults(*ctx, fault);
  const int n = 3000;  // a full slot, several messages per allreduce
  int anyFailed = 0, namedHere = 0;
  for (int round = 0; round < 5 && !anyFailed; ++round) {
    std::vector<int> in(size_t(n), rank + round), out(size_t(n), -1);
    const int rc = MPIX_Allreduce_gpu(in.data(), out.data(), n, MPI_INT, MPI_SUM, c);
    const int want = size * (size - 1) / 2 + size * round;
    if (rc == MPI_SUCCESS) {
      for (int v : out)
        if (v != want) {
          fail(std::string(name) + ": success with a wrong sum");
          break;
        }
    } else {
      const std::string text = errorText(rc);
      printf("rank %d: %s, round %d: %s\n", rank, name, round, text.c_str());
      const bool names = contains(text, named) && contains(text, "from rank 0");
      namedHere |= int(names);
      // Other ranks may fail otherwise (waiting for the receiver that gave
      // up), but a corrupted arrival is only ever the faulty message's.
      if (contains(errorClassText(rc), "arrived corrupted") && !names)
        fail(std::string(name) + ": the error does not name the fault and rank 0: " + text);
    }
    int failedHere = rc != MPI_SUCCESS;
    MPI_Allreduce(&failedHere, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  int namers = 0;
  MPI_Allreduce(&namedHere, &namers, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (!anyFailed) fail(std::string(name) + ": no rank failed in 5 allreduces");
  else if (!namers) fail(std::string(name) + ": no rank named the fault");
  MPIX_Comm_gpu_free(c);
  MPI_Comm_free(&c);
}

// Allreduce and broadcast of `n` ints on `c` (of `cSize` ranks, this one
// `cRank`), checked against MPI's on the same data; `salt` varies the data.
void checkAgainstMpi(MPI_Comm c, int cRank, int cSize, int n, int salt, const char *name) {
  const std::string at = std::string(name) + ", " + std::to_string(n) + " ints";
  std::vector<int> in(static_cast<size_t>(n)), out(in.size(), -1), ref(in.size(), -2);
  for (int i = 0; i < n; ++i) in[size_t(i)] = (i * 31 + cRank * 1009 + salt * 7) % 100003 - 50000;
  int rc = MPIX_Allreduce_gpu(in.data(), out.data(), n, MPI_INT, MPI_SUM, c);
  MPI_Allreduce(in.data(), ref.data(), n, MPI_INT, MPI_SUM, c);
  if (rc != MPI_SUCCESS) fail("several: allreduce failed (" + at + "): " + errorText(rc));
  else if (out != ref) fail("several: allreduce differs from MPI_Allreduce (" + at + ")");
  const int root = salt % cSize;
  std::vector<int> mine = in, theirs = in;
  rc = MPIX_Bcast_gpu(mine.data(), n, MPI_INT, root, c);
  MPI_Bcast(theirs.data(), n, MPI_INT, root, c);
  if (rc != MPI_SUCCESS) fail("several: bcast failed (" + at + "): " + errorText(rc));
  else if (mine != theirs) fail("several: bcast differs from MPI_Bcast (" + at + ")");
}

void severalCommunicators() {
  MPI_Comm comms[3];
  comms[0] = dupReturningErrors();
  comms[1] = dupReturningErrors();
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[2]);  // 2x2: {0, 2} and {1, 3}, across the nodes
  MPI_Comm_set_errhandler(comms[2], MPI_ERRORS_RETURN);
  const char *names[3] = {"first duplicate", "second duplicate", "split"};
  int ranks[3], sizes[3];
  for (int i = 0; i < 3; ++i) {
    MPI_Comm_rank(comms[i], &ranks[i]);
    MPI_Comm_size(comms[i], &sizes[i]);
    if (MPIX_Barrier_gpu(comms[i]) != MPI_SUCCESS)
      fail(std::string("several: the set-up barrier failed on the ") + names[i]);
  }
  chorus::Context *ctx[3];
  for (int i = 0; i < 3; ++i) ctx[i] = contextOf(comms[i]);
  if (!ctx[0] || !ctx[1] || !ctx[2]) return;
  // One worker: the address each communicator published is the same, and
  // it counts the three among its users.
  const chorus::PeerInfo &first = ctx[0]->peers[size_t(ranks[0])];
  for (int i = 1; i < 3; ++i) {
    const chorus::PeerInfo &self = ctx[i]->peers[size_t(ranks[i])];
    if (self.netAddrLen != first.netAddrLen || memcmp(self.netAddr, first.netAddr, size_t(first.netAddrLen)) != 0)
      fail(std::string("several: the ") + names[i] + " published another UCX worker address than the first duplicate");
  }
  const uint64_t users = chorus::ucxCounters(*ctx[0]).workerUsers;
  if (users < 3)
    fail("several: the process's UCX worker has " + std::to_string(users) + " users, not the 3 communicators");
  // Inline, one full slot, several full slots; the communicators in turn,
  // so that each one's messages arrive while another's collective runs.
  int salt = 0;
  for (int round = 0; round < 4; ++round)
    for (int n : {24, 3000, 70001})
      for (int i = 0; i < 3; ++i) checkAgainstMpi(comms[i], ranks[i], sizes[i], n, ++salt, names[i]);
  // The first goes; the others run on and count no forged message (the
  // first's last credits are late, not forged).
  MPIX_Comm_gpu_free(comms[0]);
  MPI_Comm_free(&comms[0]);
  for (int round = 0; round < 3; ++round)
    for (int n : {24, 70001})
      for (int i = 1; i < 3; ++i) checkAgainstMpi(comms[i], ranks[i], sizes[i], n, ++salt, names[i]);
  const chorus::UcxCounters left = chorus::ucxCounters(*ctx[1]);
  const uint64_t forged = sumOverRanks(left.forgedDropped + chorus::ucxCounters(*ctx[2]).forgedDropped);
  if (rank == 0)
    printf("several: 3 communicators on one UCX worker (%llu users here), one freed, %llu messages counted forged\n",
           (unsigned long long)users, (unsigned long long)forged);
  if (forged != 0) fail("several: " + std::to_string(forged) + " messages counted forged with no forger");
  if (left.workerUsers != users - 1)
    fail("several: the worker has " + std::to_string(left.workerUsers) + " users after one of " +
         std::to_string(users) + " was freed");
  for (int i = 1; i < 3; ++i) {
    MPIX_Comm_gpu_free(comms[i]);
    MPI_Comm_free(&comms[i]);
  }
}

// Rank 1 writes its UCX worker address where net_forger reads it and
// starts it; every rank runs allreduces until the forger is done, and a few
// more so that rank 1 takes in whatever it still holds.
void outsideForger() {
  MPI_Comm c = dupReturningErrors();
  if (MPIX_Barrier_gpu(c) != MPI_SUCCESS) fail("forger: the warm-up barrier failed");
  chorus::Context *ctx = contextOf(c);
  if (!ctx) return;
  pid_t forger = -1;
  const std::string file = "netfaults-address-" + std::to_string(getpid()) + ".bin";
  if (rank == 1) {
    const chorus::PeerInfo &self = ctx->peers[1];
    FILE *f = fopen(file.c_str(), "wb");
    if (!f || fwrite(self.netAddr, 1, size_t(self.netAddrLen), f) != size_t(self.netAddrLen)) fail("forger: cannot write " + file);
    if (f) fclose(f);
    char prog[] = "./net_forger";
    std::vector<char> arg(file.begin(), file.end());
    arg.push_back('\0');
    char *args[] = {prog, arg.data(), nullptr};
    // Under the sanitizers (CI's sanitizer stage) the forger is checked for
    // memory errors, not for what UCX leaves allocated at its exit.
    std::vector<char *> env;
    char noLeaks[] = "ASAN_OPTIONS=detect_leaks=0";
    for (char **e = environ; *e; ++e)
      if (std::string(*e).rfind("ASAN_OPTIONS=", 0) != 0) env.push_back(*e);
    env.push_back(noLeaks);
    env.push_back(nullptr);
    if (posix_spawn(&forger, prog, nullptr, nullptr, args, env.data()) != 0) fail("forger: cannot start ./net_forger");
  }
  const int n = 1000;
  int sent = 0, anyFailed = 0;
  std::string named;
  for (int round = 0, after = 0; after < 3 && round < 5000 && !anyFailed; ++round) {
    std::vector<int> in(size_t(n), rank * 3 + round), out(size_t(n), -1);
    const int rc = MPIX_Allreduce_gpu(in.data(), out.data(), n, MPI_INT, MPI_SUM, c);
    const int want = 3 * size * (size - 1) / 2 + size * round;
    for (int v : out)
      if (rc == MPI_SUCCESS && v != want) {
        fail("forger: allreduce gave a wrong sum");
        break;
      }
    if (rc != MPI_SUCCESS) {
      named = errorText(rc);
      fail("forger: an allreduce failed while the forger ran: " + named);
    }
    if (rank == 1 && !sent) {
      int status = 0;
      if (forger <= 0 || access((file + ".sent").c_str(), F_OK) == 0) sent = 1;
      else if (waitpid(forger, &status, WNOHANG) == forger) sent = -1, forger = -1;  // gone without sending
      else usleep(2000);
    }
    MPI_Bcast(&sent, 1, MPI_INT, 1, MPI_COMM_WORLD);
    int failedHere = rc != MPI_SUCCESS;
    MPI_Allreduce(&failedHere, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    after += sent != 0;
  }
  const uint64_t dropped = chorus::ucxCounters(*ctx).forgedDropped;
  MPIX_Comm_gpu_free(c);
  MPI_Comm_free(&c);
  if (rank != 1) return;
  if (FILE *f = fopen((file + ".done").c_str(), "w")) fclose(f);
  int status = 0, forgerStatus = -1;
  if (forger > 0 && waitpid(forger, &status, 0) == forger) forgerStatus = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  for (const char *end : {"", ".sent", ".done"}) unlink((file + end).c_str());
  printf("forger: exit status %d, rank 1 dropped %llu forged messages%s%s\n", forgerStatus, (unsigned long long)dropped,
         anyFailed ? "; the communicator then failed: " : "", named.c_str());
  if (forgerStatus != 0) fail("forger: net_forger failed (status " + std::to_string(forgerStatus) + ")");
  else if (sent != 1) fail("forger: net_forger did not send its messages");
  else if (!anyFailed && dropped < 6)
    fail("forger: rank 1 counted " + std::to_string(dropped) + " of the 6 forged messages");
}

}  // namespace

int main(int argc, char **argv) {
  initRanks(&argc, &argv, &rank, &size);
  linksOnFirstUse();
  severalCommunicators();
  reorderAndForge();
  brokenContract(chorus::kNetFaultDuplicate, "duplicate", "arrived twice");
  brokenContract(chorus::kNetFaultCorruptHeader, "corrupt-header", "does not fit");
  brokenContract(chorus::kNetFaultOutOfWindow, "out-of-window", "outside its FIFO's window");
  outsideForger();
  const int status = reportRank(rank, failure, "");
  MPI_Finalize();
  return status;
}
