// CHORUS_CHECKSUM=1 (set by checksum-*.test through run-checksum.sh).
//
// First, checksums must never fire on good data: every collective at sizes
// from 0 to several full slots, inline and slotted messages, is compared
// with MPI's own.  Then a byte of one message from rank 0 to rank 1 is
// flipped after its checksum was taken (the library's test-only hook,
// HostChannel::corruptPeer), on a full slot and on an inline message: rank 1
// must fail with the "arrived corrupted" class, naming the link "rank 0 ->
// rank 1" and the message number, its buffer untouched; and an allreduce
// whose message is corrupted must not return a wrong answer on any rank.
// Besides, every rank's shared-memory segment must have lost its name once
// the context is set up.  One PASS or FAIL line per rank; run-checksum.sh
// counts them.
#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "chorus.h"
#include "comm/context.h"
#include "rank_test.h"

namespace {

int rank = 0, size = 1;
std::string failure;

void fail(const std::string &why) {
  if (failure.empty()) failure = why;
}

// Every rank's shared-memory segment must be unlinked once the context is
// set up (every peer has mapped it), so that a job killed later leaves
// nothing in /dev/shm: the name is gone, the mapping stays.
void checkSegmentsUnlinked(MPI_Comm c) {
  const chorus::Context *ctx = chorus::contextFind(c);
  if (!ctx) return fail("no Chorus context on the communicator");
  const std::string name = ctx->peers[size_t(rank)].shmName;
  if (name.empty()) return;  // alone on its node: no segment
  if (access(("/dev/shm" + name).c_str(), F_OK) == 0) fail("segment " + name + " still has its name after set-up");
  std::ifstream maps("/proc/self/maps");
  bool mapped = false;
  for (std::string line; std::getline(maps, line);)
    mapped = mapped || (contains(line, "/dev/shm" + name) && contains(line, "(deleted)"));
  if (!mapped) fail("segment " + name + " is not mapped (deleted) in this process");
}

// The next message rank 0 sends rank 1 on `c` gets a byte flipped.
void corruptNextToRank1(MPI_Comm c) {
  if (rank != 0) return;
  chorus::Context *ctx = chorus::contextFind(c);
  if (!ctx) return fail("no Chorus context on the communicator");
  if (!ctx->recvFrom[0].sums && !ctx->sendTo[1].sums) return fail("CHORUS_CHECKSUM=1 did not give the FIFOs checksums");
  ctx->channel.corruptPeer = 1;
  ctx->channel.corruptMessage = ctx->sendTo[1].step + 1;
  // Large broadcasts on one node of 3+ ranks go through the publish ring
  // instead (every reader then fails).
  if (!ctx->publish.empty()) ctx->channel.corruptPublished = ctx->publish[0].step + 1;
}

// Rank 0 broadcasts `n` ints whose first message to rank 1 is corrupted.
void corruptedBcast(int n, const char *kind) {
  MPI_Comm c = dupReturningErrors();
  const std::string what = std::string("corrupted bcast of ") + std::to_string(n) + " ints (" + kind + ")";
  std::vector<int> buf(size_t(n), rank == 0 ? 12345 : -7);
  if (MPIX_Barrier_gpu(c) != MPI_SUCCESS) fail(what + ": the warm-up barrier failed");
  if (rank == 0 && chorus::contextFind(c)->recvFrom[1].step == 0 && chorus::contextFind(c)->sendTo[1].step == 0)
    fail(what + ": the warm-up moved no message");
  corruptNextToRank1(c);
  const int rc = MPIX_Bcast_gpu(buf.data(), n, MPI_INT, 0, c);
  const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
  printf("rank %d: %s: %s\n", rank, what.c_str(), rc == MPI_SUCCESS ? "success" : text.c_str());
  if (rank == 1) {
    if (rc == MPI_SUCCESS) fail(what + ": rank 1 returned success");
    else if (!contains(errorClassText(rc), "arrived corrupted")) fail(what + ": wrong error class: " + errorClassText(rc));
    else if (!contains(text, "link rank 0 -> rank 1") || !contains(text, "message ") ||
             !(contains(text, kind) || contains(text, "publish ring")))
      fail(what + ": the error does not name the link, message and kind: " + text);
    else if (buf[0] != -7) fail(what + ": rank 1's buffer was written although the message was corrupt");
  }
  // Other ranks may fail too (across nodes the root's last sends to rank 1
  // fail once rank 1 has given up), but never succeed with wrong data.
  for (int v : buf)
    if (rc == MPI_SUCCESS && v != 12345) {
      fail(what + ": rank " + std::to_string(rank) + " succeeded with wrong data");
      break;
    }
  MPIX_Comm_gpu_free(c);
  MPI_Comm_free(&c);
}

// An allreduce whose message from rank 0 to rank 1 is corrupted: rank 1
// fails naming the link, and no rank returns success with a wrong sum
// (rank 0 then waits for rank 1 until CHORUS_TIMEOUT).
void corruptedAllreduce(int n) {
  MPI_Comm c = dupReturningErrors();
  std::vector<int> in(size_t(n), rank + 1), out(size_t(n), 0);
  if (MPIX_Barrier_gpu(c) != MPI_SUCCESS) fail("allreduce: the warm-up barrier failed");
  corruptNextToRank1(c);
  const int rc = MPIX_Allreduce_gpu(in.data(), out.data(), n, MPI_INT, MPI_SUM, c);
  const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
  printf("rank %d: corrupted allreduce of %d ints: %s\n", rank, n, rc == MPI_SUCCESS ? "success" : text.c_str());
  if (rank == 1 && (rc == MPI_SUCCESS || !contains(text, "link rank 0 -> rank 1")))
    fail("corrupted allreduce: rank 1 did not name the corrupted link: " + text);
  // Rank 0 waits for rank 1 in vain; on one node it can see why (fault.cc).
  const chorus::Context *ctx = chorus::contextFind(c);
  if (rank == 0 && ctx && ctx->nodeOf[0] == ctx->nodeOf[1] && !contains(text, "rank 1 failed in it"))
    fail("corrupted allreduce: rank 0's error does not say that rank 1 failed: " + text);
  bool right = true;
  for (int v : out) right = right && v == size * (size + 1) / 2;
  if (rc == MPI_SUCCESS && !right) fail("corrupted allreduce: success with a wrong sum");
  MPIX_Comm_gpu_free(c);
  MPI_Comm_free(&c);
}

}  // namespace

int main(int argc, char **argv) {
  initRanks(&argc, &argv, &rank, &size);
  MPI_Comm c = dupReturningErrors();
  // Empty, inline (<= 448 B), one small slot, several full slots.
  for (int n : {0, 1, 13, 112, 1000, 5000, 70001, 300000}) checkCollectivesAgainstMpi(c, n, rank, size, &failure);
  checkSegmentsUnlinked(c);
  MPIX_Comm_gpu_free(c);
  MPI_Comm_free(&c);
  if (size >= 2) {
    corruptedBcast(1 << 18, "full slot");
    corruptedBcast(16, "inline");
    corruptedAllreduce(1 << 18);
  }
  const int status = reportRank(rank, failure, "");
  MPI_Finalize();
  return status;
}
