// The nonblocking collectives (MPIX_I*_gpu), each checked bitwise against
// MPI's own nonblocking collective on the same data, their requests mixed
// in one array with MPI's:
//   - all seven outstanding at once on one communicator, several sizes,
//     completed by MPI_Waitall, then by MPI_Testany;
//   - more of one kind outstanding on one communicator (call order), and a
//     blocking Chorus collective behind them;
//   - communicators started in opposite orders on different ranks;
//   - overlap with point-to-point traffic: rank 0 posts an allreduce and
//     then sends to rank 1, which receives first and only then joins;
//   - bad arguments: an MPI error code whose message names the argument,
//     and MPI_REQUEST_NULL in *request.
// Argument "multiple" (default) or "single": the thread level asked of
// MPI_Init_thread; "late-error" (multiple): only a collective that times out
// after its call, whose error MPI_Wait must return.  Below MPI_THREAD_MULTIPLE the requests come back
// complete, which is checked, and the overlap case is skipped (it would
// deadlock by design, as documented).  One PASS or FAIL line per rank.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "chorus.h"
#include "rank_test.h"

namespace {

int g_rank = 0, g_size = 1;
std::string g_failure;

void fail(const std::string &what) {
  if (g_failure.empty()) g_failure = what;
}

// Values whose sums are exact in any order, different on every rank and
// position.
template <class T>
std::vector<T> inputs(size_t n, int salt) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = T(int((i * 7 + size_t(g_rank) * 13 + size_t(salt) * 5) % 97) - 40);
  return v;
}

template <class T>
void expectSame(const std::vector<T> &chorus, const std::vector<T> &mpi, const std::string &what) {
  if (chorus.size() != mpi.size() || memcmp(chorus.data(), mpi.data(), chorus.size() * sizeof(T)) != 0) {
    size_t i = 0;
    while (i < chorus.size() && chorus[i] == mpi[i]) ++i;
    fail(what + ": differs from MPI's at element " + std::to_string(i) + " of " + std::to_string(chorus.size()));
  }
}

void check(int rc, const std::string &what) {
  if (rc != MPI_SUCCESS) fail(what + " returned " + errorText(rc));
}

// The seven collectives of one size, Chorus's on `c` and MPI's on `m`, all
// posted before any completes; `requests` gets 14 requests, Chorus's and
// MPI's interleaved.  The results are compared by compareAll.
struct Round {
  size_t n;
  int root;
  std::vector<double> arIn, arC, arM;            // allreduce
  std::vector<int> rdIn, rdC, rdM;               // reduce (MPI_MAX)
  std::vector<long> bcC, bcM;                    // bcast
  std::vector<float> agIn, agC, agM;             // allgather
  std::vector<int> rsIn, rsC, rsM;               // reduce_scatter_block
  std::vector<short> aaIn, aaC, aaM;             // alltoall
};

void post(Round &r, MPI_Comm c, MPI_Comm m, std::vector<MPI_Request> &requests) {
  const size_t n = r.n, p = size_t(g_size);
  r.arIn = inputs<double>(n, 1);
  r.arC.assign(n, -1);
  r.arM.assign(n, -2);
  r.rdIn = inputs<int>(n, 2);
  r.rdC.assign(n, -1);
  r.rdM.assign(n, -2);
  r.bcC = inputs<long>(n, 3);
  r.bcM = r.bcC;
  r.agIn = inputs<float>(n, 4);
  r.agC.assign(n * p, -1);
  r.agM.assign(n * p, -2);
  r.rsIn = inputs<int>(n * p, 5);
  r.rsC.assign(n, -1);
  r.rsM.assign(n, -2);
  r.aaIn = inputs<short>(n * p, 6);
  r.aaC.assign(n * p, -1);
  r.aaM.assign(n * p, -2);
  const int ni = int(n);
  MPI_Request q;
  check(MPIX_Iallreduce_gpu(r.arIn.data(), r.arC.data(), MPI_Count(n), MPI_DOUBLE, MPI_SUM, c, &q), "Iallreduce");
  requests.push_back(q);
  MPI_Iallreduce(r.arIn.data(), r.arM.data(), ni, MPI_DOUBLE, MPI_SUM, m, &q);
  requests.push_back(q);
  check(MPIX_Ireduce_gpu(r.rdIn.data(), r.rdC.data(), MPI_Count(n), MPI_INT, MPI_MAX, r.root, c, &q), "Ireduce");
  requests.push_back(q);
  MPI_Ireduce(r.rdIn.data(), r.rdM.data(), ni, MPI_INT, MPI_MAX, r.root, m, &q);
  requests.push_back(q);
  check(MPIX_Ibcast_gpu(r.bcC.data(), MPI_Count(n), MPI_LONG, r.root, c, &q), "Ibcast");
  requests.push_back(q);
  MPI_Ibcast(r.bcM.data(), ni, MPI_LONG, r.root, m, &q);
  requests.push_back(q);
  check(MPIX_Iallgather_gpu(r.agIn.data(), MPI_Count(n), MPI_FLOAT, r.agC.data(), MPI_Count(n), MPI_FLOAT, c, &q),
        "Iallgather");
  requests.push_back(q);
  MPI_Iallgather(r.agIn.data(), ni, MPI_FLOAT, r.agM.data(), ni, MPI_FLOAT, m, &q);
  requests.push_back(q);
  check(MPIX_Ireduce_scatter_block_gpu(r.rsIn.data(), r.rsC.data(), MPI_Count(n), MPI_INT, MPI_SUM, c, &q),
        "Ireduce_scatter_block");
  requests.push_back(q);
  MPI_Ireduce_scatter_block(r.rsIn.data(), r.rsM.data(), ni, MPI_INT, MPI_SUM, m, &q);
  requests.push_back(q);
  check(MPIX_Ialltoall_gpu(r.aaIn.data(), MPI_Count(n), MPI_SHORT, r.aaC.data(), MPI_Count(n), MPI_SHORT, c, &q),
        "Ialltoall");
  requests.push_back(q);
  MPI_Ialltoall(r.aaIn.data(), ni, MPI_SHORT, r.aaM.data(), ni, MPI_SHORT, m, &q);
  requests.push_back(q);
  check(MPIX_Ibarrier_gpu(c, &q), "Ibarrier");
  requests.push_back(q);
  MPI_Ibarrier(m, &q);
  requests.push_back(q);
}

void compareAll(const Round &r) {
  const std::string at = " (count " + std::to_string(r.n) + ")";
  expectSame(r.arC, r.arM, "Iallreduce" + at);
  if (g_rank == r.root) expectSame(r.rdC, r.rdM, "Ireduce" + at);
  expectSame(r.bcC, r.bcM, "Ibcast" + at);
  expectSame(r.agC, r.agM, "Iallgather" + at);
  expectSame(r.rsC, r.rsM, "Ireduce_scatter_block" + at);
  expectSame(r.aaC, r.aaM, "Ialltoall" + at);
}

// Complete every request with MPI_Testany, one at a time.
void testanyAll(std::vector<MPI_Request> &requests) {
  for (size_t done = 0; done < requests.size();) {
    int index = MPI_UNDEFINED, flag = 0;
    MPI_Status status;
    check(MPI_Testany(int(requests.size()), requests.data(), &index, &flag, &status), "MPI_Testany");
    if (!g_failure.empty()) return;
    if (flag && index != MPI_UNDEFINED) ++done;
  }
}

void badArguments(MPI_Comm c) {
  std::vector<int> buf(8, 1), out(8);
  // *request holds junk before each call: a refused call must set it to
  // MPI_REQUEST_NULL (or, for a NULL request, not crash).
  MPI_Request q;
  auto expectRefused = [&](const char *what, const char *needle, int rc, bool nullRequest) {
    const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
    if (rc == MPI_SUCCESS) fail(std::string(what) + ": no error");
    else if (text.find(needle) == std::string::npos)
      fail(std::string(what) + ": the message does not name " + needle + ": " + text);
    else if (!nullRequest && q != MPI_REQUEST_NULL)
      fail(std::string(what) + ": *request is not MPI_REQUEST_NULL after the error");
  };
  MPI_Request junk;
  memset(&junk, 0x5a, sizeof junk);
  expectRefused("NULL request", "request",
                MPIX_Iallreduce_gpu(buf.data(), out.data(), 8, MPI_INT, MPI_SUM, c, nullptr), true);
  q = junk;
  expectRefused("negative count", "count", MPIX_Iallreduce_gpu(buf.data(), out.data(), -1, MPI_INT, MPI_SUM, c, &q),
                false);
  q = junk;
  expectRefused("MPI_OP_NULL", "op",
                MPIX_Ireduce_scatter_block_gpu(buf.data(), out.data(), 1, MPI_INT, MPI_OP_NULL, c, &q), false);
  q = junk;
  expectRefused("root out of range", "root", MPIX_Ibcast_gpu(buf.data(), 8, MPI_INT, g_size, c, &q), false);
  q = junk;
  expectRefused("NULL recvbuf", "recvbuf", MPIX_Iallgather_gpu(buf.data(), 1, MPI_INT, nullptr, 1, MPI_INT, c, &q),
                false);
  q = junk;
  expectRefused("MPI_COMM_NULL", "comm", MPIX_Ibarrier_gpu(MPI_COMM_NULL, &q), false);
}

// A collective that fails after its call (rank 1 never joins; the launcher
// sets CHORUS_TIMEOUT=2): the failure reaches the completion call, as an
// error code naming the timeout, not a hang and not a success.
void lateError() {
  MPI_Comm f;
  MPI_Comm_dup(MPI_COMM_WORLD, &f);
  MPI_Comm_set_errhandler(f, MPI_ERRORS_RETURN);
  check(MPIX_Comm_gpu_init(f, MPI_INFO_NULL), "MPIX_Comm_gpu_init");
  if (g_rank == 0) {
    std::vector<int> in(100, 1), out(100, -1);
    MPI_Request q;
    check(MPIX_Iallreduce_gpu(in.data(), out.data(), 100, MPI_INT, MPI_SUM, f, &q), "Iallreduce (late error)");
    MPI_Status status;
    const int rc = MPI_Wait(&q, &status);
    const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
    printf("rank 0: MPI_Wait: %s\n", rc == MPI_SUCCESS ? "success" : text.c_str());
    if (rc == MPI_SUCCESS) fail("MPI_Wait succeeded although rank 1 never joined the collective");
    else if (text.find("timed out") == std::string::npos) fail("MPI_Wait's error does not say it timed out: " + text);
    if (q != MPI_REQUEST_NULL) fail("the failed request was not freed by MPI_Wait");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&f);
}

}  // namespace

int main(int argc, char **argv) {
  const bool wantMultiple = !(argc > 1 && strcmp(argv[1], "single") == 0);
  const bool lateErrorOnly = argc > 1 && strcmp(argv[1], "late-error") == 0;
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, wantMultiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const bool multiple = provided == MPI_THREAD_MULTIPLE;
  if (wantMultiple && !multiple) {
    if (g_rank == 0) printf("skipped: MPI_THREAD_MULTIPLE not provided (level %d)\n", provided);
    MPI_Finalize();
    return 0;
  }
  // A refused call on MPI_COMM_NULL raises through MPI_COMM_WORLD's handler.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (lateErrorOnly) {
    lateError();
    int bad = !g_failure.empty(), anyBad = 0;
    MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad) printf("FAIL rank %d (late error): %s\n", g_rank, g_failure.c_str());
    else printf("PASS rank %d (late error)\n", g_rank);
    MPI_Finalize();
    return anyBad ? 1 : 0;
  }
  MPI_Comm c, c2, m;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_dup(MPI_COMM_WORLD, &c2);
  MPI_Comm_dup(MPI_COMM_WORLD, &m);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);

  // All seven at once, three sizes (one element, a prime, several FIFO
  // slots), the first two rounds outstanding together.
  {
    Round r[3];
    const size_t sizes[3] = {1, 1009, 70001};
    std::vector<MPI_Request> requests;
    for (int i = 0; i < 3; ++i) {
      r[i].n = sizes[i];
      r[i].root = (i + 1) % g_size;
      post(r[i], c, m, requests);
      if (i == 1) {
        check(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
        requests.clear();
      }
    }
    testanyAll(requests);
    for (const Round &x : r) compareAll(x);
  }

  // Below MPI_THREAD_MULTIPLE: the request is complete when returned.
  if (!multiple) {
    std::vector<int> in = inputs<int>(100, 7), outC(100), outM(100);
    MPI_Request q;
    check(MPIX_Iallreduce_gpu(in.data(), outC.data(), 100, MPI_INT, MPI_SUM, c, &q), "Iallreduce (single)");
    int flag = 0;
    MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    if (!flag) fail("below MPI_THREAD_MULTIPLE the request was not complete at return");
    MPI_Allreduce(in.data(), outM.data(), 100, MPI_INT, MPI_SUM, m);
    expectSame(outC, outM, "Iallreduce (single)");
  }

  // Eight allreduces outstanding on one communicator, then a blocking one
  // behind them: call order on every rank.
  {
    const int k = 8;
    std::vector<std::vector<int>> in(k), outC(k), outM(k);
    std::vector<MPI_Request> requests(k);
    for (int i = 0; i < k; ++i) {
      in[size_t(i)] = inputs<int>(size_t(100 + 500 * i), 10 + i);
      outC[size_t(i)].assign(in[size_t(i)].size(), -1);
      outM[size_t(i)].assign(in[size_t(i)].size(), -2);
      check(MPIX_Iallreduce_gpu(in[size_t(i)].data(), outC[size_t(i)].data(), MPI_Count(in[size_t(i)].size()), MPI_INT,
                                MPI_SUM, c, &requests[size_t(i)]),
            "Iallreduce (queued)");
    }
    std::vector<int> bin = inputs<int>(333, 30), boutC(333, -1), boutM(333, -2);
    check(MPIX_Allreduce_gpu(bin.data(), boutC.data(), 333, MPI_INT, MPI_SUM, c), "Allreduce behind the queue");
    check(MPI_Waitall(k, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall (queued)");
    for (int i = 0; i < k; ++i) {
      MPI_Allreduce(in[size_t(i)].data(), outM[size_t(i)].data(), int(in[size_t(i)].size()), MPI_INT, MPI_SUM, m);
      expectSame(outC[size_t(i)], outM[size_t(i)], "queued Iallreduce #" + std::to_string(i));
    }
    MPI_Allreduce(bin.data(), boutM.data(), 333, MPI_INT, MPI_SUM, m);
    expectSame(boutC, boutM, "blocking Allreduce behind the queue");
  }

  // Two communicators started in opposite orders on odd and even ranks
  // (MPI's order rule is per communicator): each has its own progress.
  if (multiple) {
    std::vector<double> a = inputs<double>(5000, 40), b = inputs<double>(5000, 41);
    std::vector<double> aC(5000), bC(5000), aM(5000), bM(5000);
    MPI_Request q[2];
    if (g_rank % 2 == 0) {
      check(MPIX_Iallreduce_gpu(a.data(), aC.data(), 5000, MPI_DOUBLE, MPI_SUM, c, &q[0]), "Iallreduce on c");
      check(MPIX_Iallreduce_gpu(b.data(), bC.data(), 5000, MPI_DOUBLE, MPI_SUM, c2, &q[1]), "Iallreduce on c2");
    } else {
      check(MPIX_Iallreduce_gpu(b.data(), bC.data(), 5000, MPI_DOUBLE, MPI_SUM, c2, &q[1]), "Iallreduce on c2");
      check(MPIX_Iallreduce_gpu(a.data(), aC.data(), 5000, MPI_DOUBLE, MPI_SUM, c, &q[0]), "Iallreduce on c");
    }
    check(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), "MPI_Waitall (two communicators)");
    MPI_Allreduce(a.data(), aM.data(), 5000, MPI_DOUBLE, MPI_SUM, m);
    MPI_Allreduce(b.data(), bM.data(), 5000, MPI_DOUBLE, MPI_SUM, m);
    expectSame(aC, aM, "Iallreduce on c (opposite orders)");
    expectSame(bC, bM, "Iallreduce on c2 (opposite orders)");
  }

  // Overlap with point-to-point: rank 0 posts, then sends 4 MiB (past any
  // eager limit) to rank 1, which receives before it joins.  Rank 0's
  // request cannot be complete before the send, since rank 1 has not joined.
  if (multiple && g_size > 1) {
    std::vector<int> in = inputs<int>(4096, 50), outC(4096, -1), outM(4096, -2);
    std::vector<char> message(size_t(4) << 20, char(g_rank));
    MPI_Request q = MPI_REQUEST_NULL;
    if (g_rank == 0) {
      check(MPIX_Iallreduce_gpu(in.data(), outC.data(), 4096, MPI_INT, MPI_SUM, c, &q), "Iallreduce (overlap)");
      int flag = 0;
      MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
      if (flag) fail("the overlapped Iallreduce completed before rank 1 had joined it");
      MPI_Send(message.data(), int(message.size()), MPI_CHAR, 1, 99, MPI_COMM_WORLD);
    } else {
      if (g_rank == 1) MPI_Recv(message.data(), int(message.size()), MPI_CHAR, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      check(MPIX_Iallreduce_gpu(in.data(), outC.data(), 4096, MPI_INT, MPI_SUM, c, &q), "Iallreduce (overlap)");
      if (g_rank == 1 && message[message.size() - 1] != 0) fail("the overlapping message arrived wrong");
    }
    check(MPI_Wait(&q, MPI_STATUS_IGNORE), "MPI_Wait (overlap)");
    MPI_Allreduce(in.data(), outM.data(), 4096, MPI_INT, MPI_SUM, m);
    expectSame(outC, outM, "Iallreduce overlapped with a send");
  }

  badArguments(c);
  // The communicator still works after the refused calls.
  {
    std::vector<int> in = inputs<int>(64, 60), outC(64, -1), outM(64, -2);
    MPI_Request q;
    check(MPIX_Iallreduce_gpu(in.data(), outC.data(), 64, MPI_INT, MPI_SUM, c, &q), "Iallreduce after errors");
    check(MPI_Wait(&q, MPI_STATUS_IGNORE), "MPI_Wait after errors");
    MPI_Allreduce(in.data(), outM.data(), 64, MPI_INT, MPI_SUM, m);
    expectSame(outC, outM, "Iallreduce after the refused calls");
  }

  // Freed with a collective outstanding: it completes first (MPI's rule).
  {
    MPI_Comm f;
    MPI_Comm_dup(MPI_COMM_WORLD, &f);
    std::vector<int> in = inputs<int>(2000, 70), outC(2000, -1), outM(2000, -2);
    MPI_Request q;
    check(MPIX_Iallreduce_gpu(in.data(), outC.data(), 2000, MPI_INT, MPI_SUM, f, &q), "Iallreduce before free");
    MPI_Comm_free(&f);
    check(MPI_Wait(&q, MPI_STATUS_IGNORE), "MPI_Wait after MPI_Comm_free");
    MPI_Allreduce(in.data(), outM.data(), 2000, MPI_INT, MPI_SUM, m);
    expectSame(outC, outM, "Iallreduce on a communicator freed before the wait");
  }

  int bad = !g_failure.empty(), anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad) printf("FAIL rank %d (%s): %s\n", g_rank, multiple ? "multiple" : "single", g_failure.c_str());
  else printf("PASS rank %d (%s)%s\n", g_rank, multiple ? "multiple" : "single", anyBad ? " (another rank failed)" : "");
  MPI_Comm_free(&c);
  MPI_Comm_free(&c2);
  MPI_Comm_free(&m);
  MPI_Finalize();
  return anyBad ? 1 : 0;
}
