// Locally detectable bad arguments: each call returns an error code (with
// MPI_ERRORS_RETURN) from a Chorus error class, whose MPI_Error_string names
// the argument and its value; the receive buffer is left alone, and the
// communicator still works afterwards.  Every rank passes the same bad
// arguments, so no rank is left waiting in a collective.
#define BOOST_TEST_MODULE chorus_mpi_errors
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <vector>

#include "harness.h"

using namespace chorus_test;

namespace {

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int worldSize() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// `need` holds alternatives separated by '|'; one of them must occur
// (case-insensitively) in `text`.
bool mentions(const std::string &text, const std::string &need) {
  const std::string t = lower(text);
  size_t start = 0;
  while (true) {
    const size_t bar = need.find('|', start);
    if (t.find(lower(need.substr(start, bar - start))) != std::string::npos) return true;
    if (bar == std::string::npos) return false;
    start = bar + 1;
  }
}

constexpr size_t kRecvInts = 256;
constexpr int kUntouched = 0x5eed5eed;

// Runs `call` (which writes into the recv buffer it is given), and checks:
// an error, of a Chorus class, naming every entry of `need`, recvbuf intact.
void expectError(const std::string &what, const std::vector<std::string> &need,
                 const std::function<int(int *recv)> &call) {
  std::vector<int> recv(kRecvInts, kUntouched);
  const int rc = call(recv.data());
  BOOST_CHECK_MESSAGE(rc != MPI_SUCCESS, what << ": returned MPI_SUCCESS");
  BOOST_CHECK_MESSAGE(std::all_of(recv.begin(), recv.end(), [](int v) { return v == kUntouched; }),
                      what << ": recvbuf was written by a failing call");
  if (rc == MPI_SUCCESS) return;
  const std::string msg = errorString(rc);
  if (worldRank() == 0) BOOST_TEST_MESSAGE(what << " -> \"" << msg << "\"");
  for (const std::string &n : need)
    BOOST_CHECK_MESSAGE(mentions(msg, n), what << ": error string \"" << msg << "\" does not mention \"" << n << "\"");
  int cls = MPI_SUCCESS;
  BOOST_CHECK_EQUAL(MPI_Error_class(rc, &cls), MPI_SUCCESS);
  BOOST_CHECK_MESSAGE(cls != MPI_SUCCESS, what << ": error class is MPI_SUCCESS");
  const std::string clsMsg = errorString(cls);
  BOOST_CHECK_MESSAGE(mentions(clsMsg, "chorus"),
                      what << ": error class " << cls << " string \"" << clsMsg << "\" does not mention Chorus");
}

const char *const kNullValue = "NULL|nil|0x0|nullptr";

// A correct allreduce and allgather on `comm` (the communicator is usable).
void expectWorks(MPI_Comm comm, const std::string &name) {
  Checker ck(comm, name);
  BOOST_CHECK(ck.run({Coll::Allreduce, &typeByName("MPI_INT"), &opByName("MPI_SUM"), 1021, false, 0}));
  BOOST_CHECK(ck.run({Coll::Allgather, &typeByName("MPI_FLOAT"), nullptr, 13, false, 0}));
}

// Every collective with `comm`, otherwise valid arguments.
void expectBadComm(MPI_Comm comm, const std::vector<std::string> &need) {
  int send[kRecvInts] = {0};
  const int n = std::max(worldSize(), 1);
  const int c = static_cast<int>(kRecvInts) / n / 2;
  expectError("allreduce", need, [&](int *r) { return MPIX_Allreduce_gpu(send, r, 4, MPI_INT, MPI_SUM, comm); });
  expectError("reduce", need, [&](int *r) { return MPIX_Reduce_gpu(send, r, 4, MPI_INT, MPI_SUM, 0, comm); });
  expectError("bcast", need, [&](int *r) { return MPIX_Bcast_gpu(r, 4, MPI_INT, 0, comm); });
  expectError("allgather", need,
              [&](int *r) { return MPIX_Allgather_gpu(send, c, MPI_INT, r, c, MPI_INT, comm); });
  expectError("reduce_scatter_block", need,
              [&](int *r) { return MPIX_Reduce_scatter_block_gpu(send, r, c, MPI_INT, MPI_SUM, comm); });
  expectError("alltoall", need, [&](int *r) { return MPIX_Alltoall_gpu(send, c, MPI_INT, r, c, MPI_INT, comm); });
  expectError("barrier", need, [&](int *) { return MPIX_Barrier_gpu(comm); });
  expectError("allreduce_enqueue", need,
              [&](int *r) { return MPIX_Allreduce_gpu_enqueue(send, r, 4, MPI_INT, MPI_SUM, comm, nullptr); });
}

// The reductions with (datatype, op).
void expectBadTypeOp(MPI_Datatype dt, MPI_Op op, const std::vector<std::string> &need) {
  int send[kRecvInts] = {0};
  expectError("allreduce", need, [&](int *r) { return MPIX_Allreduce_gpu(send, r, 4, dt, op, MPI_COMM_WORLD); });
  expectError("reduce", need, [&](int *r) { return MPIX_Reduce_gpu(send, r, 4, dt, op, 0, MPI_COMM_WORLD); });
  expectError("reduce_scatter_block", need,
              [&](int *r) { return MPIX_Reduce_scatter_block_gpu(send, r, 1, dt, op, MPI_COMM_WORLD); });
}

}  // namespace

BOOST_AUTO_TEST_CASE(null_communicator) {
  expectBadComm(MPI_COMM_NULL, {"comm", "MPI_COMM_NULL|null"});
  expectWorks(MPI_COMM_WORLD, "world");
}

BOOST_AUTO_TEST_CASE(intercommunicator) {
  if (worldSize() < 2) {
    BOOST_TEST_MESSAGE("intercommunicator: needs 2 ranks, not checked");
    return;
  }
  MPI_Comm half, inter;
  const int color = worldRank() % 2;
  BOOST_REQUIRE_EQUAL(MPI_Comm_split(MPI_COMM_WORLD, color, worldRank(), &half), MPI_SUCCESS);
  BOOST_REQUIRE_EQUAL(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 42, &inter), MPI_SUCCESS);
  expectBadComm(inter, {"comm", "inter"});
  MPI_Comm_free(&inter);
  expectWorks(half, "half");
  MPI_Comm_free(&half);
}

BOOST_AUTO_TEST_CASE(negative_count) {
  int send[kRecvInts] = {0};
  const MPI_Comm w = MPI_COMM_WORLD;
  expectError("allreduce count -5", {"count", "-5"},
              [&](int *r) { return MPIX_Allreduce_gpu(send, r, -5, MPI_INT, MPI_SUM, w); });
  expectError("allreduce_enqueue count -5", {"count", "-5"},
              [&](int *r) { return MPIX_Allreduce_gpu_enqueue(send, r, -5, MPI_INT, MPI_SUM, w, nullptr); });
  expectError("reduce count -5", {"count", "-5"},
              [&](int *r) { return MPIX_Reduce_gpu(send, r, -5, MPI_INT, MPI_SUM, 0, w); });
  expectError("bcast count -5", {"count", "-5"}, [&](int *r) { return MPIX_Bcast_gpu(r, -5, MPI_INT, 0, w); });
  expectError("reduce_scatter_block recvcount -5", {"recvcount", "-5"},
              [&](int *r) { return MPIX_Reduce_scatter_block_gpu(send, r, -5, MPI_INT, MPI_SUM, w); });
  expectError("allgather sendcount -5", {"sendcount", "-5"},
              [&](int *r) { return MPIX_Allgather_gpu(send, -5, MPI_INT, r, 1, MPI_INT, w); });
  expectError("allgather recvcount -5", {"recvcount", "-5"},
              [&](int *r) { return MPIX_Allgather_gpu(send, 1, MPI_INT, r, -5, MPI_INT, w); });
  expectError("alltoall sendcount -5", {"sendcount", "-5"},
              [&](int *r) { return MPIX_Alltoall_gpu(send, -5, MPI_INT, r, 1, MPI_INT, w); });
  expectError("alltoall recvcount -5", {"recvcount", "-5"},
              [&](int *r) { return MPIX_Alltoall_gpu(send, 1, MPI_INT, r, -5, MPI_INT, w); });
  expectWorks(w, "world");
}

// Issue 33, item 6: MPI forbids sendbuf == recvbuf (in place is said with
// MPI_IN_PLACE); it was accepted, and the algorithms then read what they had
// already overwritten.
BOOST_AUTO_TEST_CASE(aliased_buffers) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int c = static_cast<int>(kRecvInts) / std::max(worldSize(), 1) / 2;
  const std::vector<std::string> need = {"sendbuf = recvbuf", "MPI_IN_PLACE"};
  expectError("allreduce sendbuf == recvbuf", need,
              [&](int *r) { return MPIX_Allreduce_gpu(r, r, 4, MPI_INT, MPI_SUM, w); });
  if (worldRank() == 0)  // the root's buffers only: the others have no recvbuf
    expectError("reduce sendbuf == recvbuf at the root", need,
                [&](int *r) { return MPIX_Reduce_gpu(r, r, 4, MPI_INT, MPI_SUM, 0, w); });
  expectError("allgather sendbuf == recvbuf", need,
              [&](int *r) { return MPIX_Allgather_gpu(r, c, MPI_INT, r, c, MPI_INT, w); });
  expectError("reduce_scatter_block sendbuf == recvbuf", need,
              [&](int *r) { return MPIX_Reduce_scatter_block_gpu(r, r, c, MPI_INT, MPI_SUM, w); });
  expectError("alltoall sendbuf == recvbuf", need,
              [&](int *r) { return MPIX_Alltoall_gpu(r, c, MPI_INT, r, c, MPI_INT, w); });
  expectWorks(w, "world");
}

BOOST_AUTO_TEST_CASE(null_buffer) {
  int send[kRecvInts] = {0};
  const MPI_Comm w = MPI_COMM_WORLD;
  expectError("allreduce sendbuf NULL", {"sendbuf", kNullValue},
              [&](int *r) { return MPIX_Allreduce_gpu(nullptr, r, 4, MPI_INT, MPI_SUM, w); });
  expectError("allreduce recvbuf NULL", {"recvbuf", kNullValue},
              [&](int *) { return MPIX_Allreduce_gpu(send, nullptr, 4, MPI_INT, MPI_SUM, w); });
  expectError("bcast buffer NULL", {"buffer", kNullValue},
              [&](int *) { return MPIX_Bcast_gpu(nullptr, 4, MPI_INT, 0, w); });
  expectError("allgather sendbuf NULL", {"sendbuf", kNullValue},
              [&](int *r) { return MPIX_Allgather_gpu(nullptr, 1, MPI_INT, r, 1, MPI_INT, w); });
  expectError("alltoall recvbuf NULL", {"recvbuf", kNullValue},
              [&](int *) { return MPIX_Alltoall_gpu(send, 1, MPI_INT, nullptr, 1, MPI_INT, w); });
  // A null buffer with count 0 is valid MPI.
  BOOST_CHECK_EQUAL(MPIX_Allreduce_gpu(nullptr, nullptr, 0, MPI_INT, MPI_SUM, w), MPI_SUCCESS);
  BOOST_CHECK_EQUAL(MPIX_Bcast_gpu(nullptr, 0, MPI_INT, 0, w), MPI_SUCCESS);
  expectWorks(w, "world");
}

// An empty call that repeats one that passed returns at once (the fast path
// of api/empty_call.h); one argument changed must be checked again in full.
BOOST_AUTO_TEST_CASE(repeated_empty_calls_still_checked) {
  int send[kRecvInts] = {0};
  const MPI_Comm w = MPI_COMM_WORLD;
  expectWorks(w, "world");  // the communicator has its context: the fast path applies
  for (int i = 0; i < 2; ++i) {
    BOOST_CHECK_EQUAL(MPIX_Allreduce_gpu(send, send + 8, 0, MPI_INT, MPI_SUM, w), MPI_SUCCESS);
    expectError("empty allreduce recvbuf MPI_IN_PLACE", {"recvbuf", "MPI_IN_PLACE"},
                [&](int *) { return MPIX_Allreduce_gpu(send, MPI_IN_PLACE, 0, MPI_INT, MPI_SUM, w); });
    expectError("empty allreduce op MPI_OP_NULL", {"op"},
                [&](int *r) { return MPIX_Allreduce_gpu(send, r, 0, MPI_INT, MPI_OP_NULL, w); });
    BOOST_CHECK_EQUAL(MPIX_Reduce_gpu(send, send + 8, 0, MPI_INT, MPI_SUM, 0, w), MPI_SUCCESS);
    expectError("empty reduce root -1", {"root", "-1"},
                [&](int *r) { return MPIX_Reduce_gpu(send, r, 0, MPI_INT, MPI_SUM, -1, w); });
    BOOST_CHECK_EQUAL(MPIX_Bcast_gpu(send, 0, MPI_INT, 0, w), MPI_SUCCESS);
    expectError("empty bcast datatype MPI_DATATYPE_NULL", {"datatype"},
                [&](int *r) { return MPIX_Bcast_gpu(r, 0, MPI_DATATYPE_NULL, 0, w); });
    BOOST_CHECK_EQUAL(MPIX_Alltoall_gpu(send, 0, MPI_INT, send + 8, 0, MPI_INT, w), MPI_SUCCESS);
    expectError("empty alltoall sendcount 1", {"sendcount", "recvcount"},
                [&](int *r) { return MPIX_Alltoall_gpu(send, 1, MPI_INT, r, 0, MPI_INT, w); });
    BOOST_CHECK_EQUAL(MPIX_Allgather_gpu(send, 0, MPI_INT, send + 8, 0, MPI_INT, w), MPI_SUCCESS);
    expectError("empty allgather sendtype MPI_FLOAT", {"sendtype", "recvtype"},
                [&](int *r) { return MPIX_Allgather_gpu(send, 0, MPI_FLOAT, r, 0, MPI_INT, w); });
    BOOST_CHECK_EQUAL(MPIX_Reduce_scatter_block_gpu(send, send + 8, 0, MPI_INT, MPI_SUM, w), MPI_SUCCESS);
    expectError("empty reduce_scatter_block recvbuf MPI_IN_PLACE", {"recvbuf", "MPI_IN_PLACE"},
                [&](int *) { return MPIX_Reduce_scatter_block_gpu(send, MPI_IN_PLACE, 0, MPI_INT, MPI_SUM, w); });
  }
  expectWorks(w, "world");
}

BOOST_AUTO_TEST_CASE(invalid_root) {
  int send[kRecvInts] = {0};
  const MPI_Comm w = MPI_COMM_WORLD;
  const int n = worldSize();
  for (int root : {-1, n}) {
    const std::string v = std::to_string(root);
    expectError("reduce root " + v, {"root", v},
                [&](int *r) { return MPIX_Reduce_gpu(send, r, 4, MPI_INT, MPI_SUM, root, w); });
    expectError("bcast root " + v, {"root", v}, [&](int *r) { return MPIX_Bcast_gpu(r, 4, MPI_INT, root, w); });
  }
  expectWorks(w, "world");
}

BOOST_AUTO_TEST_CASE(derived_datatype) {
  MPI_Datatype pair;
  BOOST_REQUIRE_EQUAL(MPI_Type_contiguous(2, MPI_INT, &pair), MPI_SUCCESS);
  BOOST_REQUIRE_EQUAL(MPI_Type_commit(&pair), MPI_SUCCESS);
  int send[kRecvInts] = {0};
  const MPI_Comm w = MPI_COMM_WORLD;
  expectBadTypeOp(pair, MPI_SUM, {"datatype"});
  expectError("bcast derived", {"datatype"}, [&](int *r) { return MPIX_Bcast_gpu(r, 4, pair, 0, w); });
  expectError("allgather derived", {"sendtype|recvtype"},
              [&](int *r) { return MPIX_Allgather_gpu(send, 1, pair, r, 1, pair, w); });
  expectError("alltoall derived", {"sendtype|recvtype"},
              [&](int *r) { return MPIX_Alltoall_gpu(send, 1, pair, r, 1, pair, w); });
  MPI_Type_free(&pair);
  expectWorks(w, "world");
}

namespace {
void userSum(void *in, void *inout, int *len, MPI_Datatype *) {
  for (int i = 0; i < *len; ++i) static_cast<int *>(inout)[i] += static_cast<int *>(in)[i];
}
}  // namespace

BOOST_AUTO_TEST_CASE(user_op) {
  MPI_Op op;
  BOOST_REQUIRE_EQUAL(MPI_Op_create(userSum, 1, &op), MPI_SUCCESS);
  expectBadTypeOp(MPI_INT, op, {"op"});
  MPI_Op_free(&op);
  expectWorks(MPI_COMM_WORLD, "world");
}

BOOST_AUTO_TEST_CASE(bytes_not_reducible) {
  expectBadTypeOp(MPI_BYTE, MPI_SUM, {"datatype", "MPI_BYTE"});
  // (MPI_BYTE with MPI_BAND/BOR/BXOR is valid MPI, so not an error.)
  expectBadTypeOp(MPI_CHAR, MPI_SUM, {"datatype", "MPI_CHAR"});
  expectWorks(MPI_COMM_WORLD, "world");
}

// Every (predefined type, op) pair Chorus does not reduce gets an error
// naming the type, never a success: the ops MPI does not define on the type,
// and the ones MPI defines but Chorus leaves to MPI (complex sums,
// MPI_LONG_DOUBLE, MINLOC on MPI_LONG_DOUBLE_INT...).
BOOST_AUTO_TEST_CASE(every_refused_type_op_pair) {
  int refused = 0;
  for (const TypeDesc &t : allTypes())
    for (const OpDesc &op : allOps()) {
      if (opValidFor(op, t)) continue;
      expectBadTypeOp(t.handle(), op.handle(), {std::string(t.name) + "|" + op.name});
      ++refused;
    }
  if (worldRank() == 0) BOOST_TEST_MESSAGE(refused << " refused (type, op) pairs");
  BOOST_TEST(refused > 300);
  expectWorks(MPI_COMM_WORLD, "world");
}

// Type names this MPI leaves undefined or MPI_DATATYPE_NULL are listed, not
// silently dropped from the suite; handles that are NULL are refused.
BOOST_AUTO_TEST_CASE(absent_types_listed) {
  if (worldRank() == 0)
    for (const std::string &name : absentTypes()) BOOST_TEST_MESSAGE("not in this MPI: " << name);
  expectBadTypeOp(MPI_DATATYPE_NULL, MPI_MINLOC, {"MPI_DATATYPE_NULL|null"});
}

BOOST_AUTO_TEST_CASE(logical_op_on_float) {
  expectBadTypeOp(MPI_FLOAT, MPI_LAND, {"MPI_LAND", "MPI_FLOAT"});
  expectBadTypeOp(MPI_DOUBLE, MPI_BXOR, {"MPI_BXOR", "MPI_DOUBLE"});
  expectBadTypeOp(MPIX_GPU_FLOAT16, MPI_LOR, {"MPI_LOR"});
  expectBadTypeOp(MPIX_GPU_FP8_E4M3, MPI_BAND, {"MPI_BAND"});
  expectWorks(MPI_COMM_WORLD, "world");
}

BOOST_AUTO_TEST_CASE(mismatched_send_recv) {
  int send[kRecvInts] = {0};
  const MPI_Comm w = MPI_COMM_WORLD;
  expectError("allgather MPI_INT/MPI_FLOAT", {"sendtype|recvtype", "MPI_INT", "MPI_FLOAT"},
              [&](int *r) { return MPIX_Allgather_gpu(send, 2, MPI_INT, r, 2, MPI_FLOAT, w); });
  expectError("alltoall MPI_INT/MPI_FLOAT", {"sendtype|recvtype", "MPI_INT", "MPI_FLOAT"},
              [&](int *r) { return MPIX_Alltoall_gpu(send, 2, MPI_INT, r, 2, MPI_FLOAT, w); });
  expectError("allgather counts 4/5", {"sendcount|recvcount", "4", "5"},
              [&](int *r) { return MPIX_Allgather_gpu(send, 4, MPI_INT, r, 5, MPI_INT, w); });
  expectError("alltoall counts 4/5", {"sendcount|recvcount", "4", "5"},
              [&](int *r) { return MPIX_Alltoall_gpu(send, 4, MPI_INT, r, 5, MPI_INT, w); });
  expectWorks(w, "world");
}

BOOST_AUTO_TEST_CASE(null_handles) {
  int send[kRecvInts] = {0};
  const MPI_Comm w = MPI_COMM_WORLD;
  expectBadTypeOp(MPI_DATATYPE_NULL, MPI_SUM, {"datatype", "MPI_DATATYPE_NULL|null"});
  expectBadTypeOp(MPI_INT, MPI_OP_NULL, {"op", "MPI_OP_NULL|null"});
  expectError("bcast MPI_DATATYPE_NULL", {"datatype", "MPI_DATATYPE_NULL|null"},
              [&](int *r) { return MPIX_Bcast_gpu(r, 4, MPI_DATATYPE_NULL, 0, w); });
  expectError("allgather recvtype MPI_DATATYPE_NULL", {"recvtype", "MPI_DATATYPE_NULL|null"},
              [&](int *r) { return MPIX_Allgather_gpu(send, 1, MPI_INT, r, 1, MPI_DATATYPE_NULL, w); });
  expectWorks(w, "world");
}

// Errors go through the communicator's error handler first.
namespace {
int gHandlerCalls = 0, gHandlerCode = MPI_SUCCESS;
void recordError(MPI_Comm *, int *code, ...) {
  ++gHandlerCalls;
  gHandlerCode = *code;
}
}  // namespace

BOOST_AUTO_TEST_CASE(error_handler_called) {
  MPI_Comm c;
  MPI_Errhandler eh;
  BOOST_REQUIRE_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
  BOOST_REQUIRE_EQUAL(MPI_Comm_create_errhandler(recordError, &eh), MPI_SUCCESS);
  MPI_Comm_set_errhandler(c, eh);
  int send[4] = {0}, recv[4] = {0};
  gHandlerCalls = 0;
  const int rc = MPIX_Allreduce_gpu(send, recv, -5, MPI_INT, MPI_SUM, c);
  BOOST_CHECK(rc != MPI_SUCCESS);
  BOOST_CHECK_EQUAL(gHandlerCalls, 1);
  BOOST_CHECK_EQUAL(gHandlerCode, rc);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  expectWorks(c, "dup");
  MPI_Errhandler_free(&eh);
  MPI_Comm_free(&c);
}

// A program can test a returned code's class against chorus.h's kinds: the
// classes are distinct, registered on demand, and an argument error is in
// the argument class (its code differs from the class: it carries a message).
BOOST_AUTO_TEST_CASE(error_classes_exported) {
  std::vector<int> classes;
  for (int kind = MPIX_GPU_ERR_ARGUMENT; kind <= MPIX_GPU_ERR_MISMATCH; ++kind) {
    const int cls = MPIX_Gpu_error_class(kind);
    BOOST_TEST(cls != MPI_UNDEFINED, "kind " << kind);
    BOOST_TEST(bool(std::find(classes.begin(), classes.end(), cls) == classes.end()), "kind " << kind << " repeats a class");
    classes.push_back(cls);
  }
  BOOST_CHECK_EQUAL(MPIX_Gpu_error_class(-1), MPI_UNDEFINED);
  BOOST_CHECK_EQUAL(MPIX_Gpu_error_class(MPIX_GPU_ERR_MISMATCH + 1), MPI_UNDEFINED);
  MPI_Comm c;
  BOOST_REQUIRE_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  int send[1] = {0}, recv[1] = {0};
  const int rc = MPIX_Allreduce_gpu(send, recv, -1, MPI_INT, MPI_SUM, c);
  int cls = -1;
  BOOST_REQUIRE_EQUAL(MPI_Error_class(rc, &cls), MPI_SUCCESS);
  BOOST_CHECK_EQUAL(cls, MPIX_Gpu_error_class(MPIX_GPU_ERR_ARGUMENT));
  BOOST_CHECK(cls != MPIX_Gpu_error_class(MPIX_GPU_ERR_TIMEOUT));
  MPI_Comm_free(&c);
}

// After all of the above, a dup of the world works as well as the world.
BOOST_AUTO_TEST_CASE(still_works) {
  MPI_Comm c;
  BOOST_REQUIRE_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
  expectWorks(c, "dup");
  expectWorks(MPI_COMM_WORLD, "world");
  MPI_Comm_free(&c);
}
