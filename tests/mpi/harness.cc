// Shared helpers of the multi-rank tests; see harness.h.  The element
// types, their input generators and tables are in harness_types.cc.
#include "harness.h"

#define BOOST_TEST_NO_MAIN  // main comes from the test file's BOOST_TEST_MODULE
#include <boost/test/unit_test.hpp>

#include <dirent.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "coll/lowp.h"
#include "transport/fifo.h"

namespace chorus_test {

// ---- MPI set-up --------------------------------------------------------------

// MPI_Init before the first test, MPI_Finalize after the last.  Errors return
// instead of aborting, on MPI_COMM_WORLD and on MPI_COMM_SELF (where MPI
// raises errors about MPI_COMM_NULL), so that a failing Chorus call is
// reported as a failed check, and so that the error tests can look at codes.
struct MpiFixture {
  MpiFixture() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
      std::printf("chorus tests: %d ranks, CHORUS_ALGO=%s, slot %zu bytes, %s\n", size, algoName(),
                  slotBytes(), MPIX_Gpu_version_string());
    std::fflush(stdout);
  }
  ~MpiFixture() {
    MPI_Finalize();
    // A call after MPI_Finalize must fail cleanly, not run on the freed
    // context that MPI_COMM_WORLD's last call left cached.
    float in = 1, out = 0;
    if (MPIX_Allreduce_gpu(&in, &out, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS) {
      std::fprintf(stderr, "FAIL: MPIX_Allreduce_gpu after MPI_Finalize returned MPI_SUCCESS\n");
      std::_Exit(1);
    }
  }
};
BOOST_TEST_GLOBAL_FIXTURE(MpiFixture);

// ---- settings and sizes ----------------------------------------------------------

const char *collName(Coll c) {
  switch (c) {
    case Coll::Allreduce: return "allreduce";
    case Coll::Reduce: return "reduce";
    case Coll::Bcast: return "bcast";
    case Coll::Allgather: return "allgather";
    case Coll::ReduceScatterBlock: return "reduce_scatter_block";
    case Coll::Alltoall: return "alltoall";
  }
  return "?";
}

const char *algoName() {
  const char *a = std::getenv("CHORUS_ALGO");
  return a && *a ? a : "auto";
}

size_t slotBytes() {
  const char *s = std::getenv("CHORUS_SHM_SLOT_SIZE");
  if (!s || !*s) return 256 * 1024;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  switch (end && *end ? *end : ' ') {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
  }
  return v ? static_cast<size_t>(v) : 256 * 1024;
}

std::vector<size_t> smallCounts() { return {0, 1, 2, 3, 7, 13, 31, 127, 1021, 4093}; }

std::vector<size_t> boundaryCounts(Coll coll, const TypeDesc &t, int nranks) {
  const size_t slot = slotBytes() / t.size;
  const size_t all = slot * static_cast<size_t>(nranks);
  // Messages up to kInlineMaxBytes travel inline (transport/fifo.h): whole
  // vectors (one-shot) and per-rank chunks (ring) on either side of it.
  const size_t inl = chorus::kInlineMaxBytes / t.size;
  const size_t inlAll = inl * static_cast<size_t>(nranks);
  std::vector<size_t> c = {inl, inl + 1, inlAll - 1, inlAll + 1, slot - 1, slot, slot + 1, (size_t{1} << 20) / t.size};
  // A vector of nranks slots gives each ring chunk one slot.  A block
  // collective's count is already one rank's chunk (slot +- 1 above), so
  // there the same count would be nranks^2 slots a rank: 21 MB buffers at
  // 9 ranks, most of a run's time in page faults and copies, no boundary.
  if (!isBlockColl(coll)) c.insert(c.end(), {all - 1, all + 1});
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

std::vector<int> testRoots(int nranks) {
  std::vector<int> r = {0, nranks - 1, nranks / 2};
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

std::string errorString(int code) {
  char s[MPI_MAX_ERROR_STRING + 1] = {0};
  int len = 0;
  if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) return "(MPI_Error_string failed)";
  return std::string(s, static_cast<size_t>(len));
}

int openFdCount() {
  int n = 0;
  if (DIR *d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}

int shmMappingCount() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line))
    if (line.find("/dev/shm") != std::string::npos) ++n;
  return n;
}

// ---- buffers with guard bytes ---------------------------------------------------

namespace {

constexpr size_t kGuard = 64;  // keeps the payload 64-byte aligned

unsigned char guardByte(size_t i) { return static_cast<unsigned char>(0xA5 ^ (i * 37)); }

class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes) : bytes_(bytes), store_(new unsigned char[bytes + 2 * kGuard + 64]) {
    uintptr_t p = reinterpret_cast<uintptr_t>(store_.get());
    base_ = store_.get() + ((64 - p % 64) % 64);
    for (size_t i = 0; i < kGuard; ++i) {
      base_[i] = guardByte(i);
      base_[kGuard + bytes_ + i] = guardByte(i + kGuard);
    }
  }
  unsigned char *data() { return base_ + kGuard; }
  size_t bytes() const { return bytes_; }
  // Empty string when both guards are intact, else where they were hit.
  std::string checkGuards() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (base_[i] != guardByte(i))
        return "wrote " + std::to_string(kGuard - i) + " bytes before the buffer";
    for (size_t i = kGuard; i-- > 0;)
      if (base_[kGuard + bytes_ + i] != guardByte(i + kGuard))
        return "wrote " + std::to_string(i + 1) + " bytes past the end of the buffer";
    return {};
  }

 private:
  size_t bytes_;
  std::unique_ptr<unsigned char[]> store_;  // not zeroed: 64 MiB cases stay quick
  unsigned char *base_;
};

uint64_t caseSeed(const Case &c, long serial) {
  uint64_t s = mix(static_cast<uint64_t>(c.coll) + 1);
  for (const char *p = c.type->name; *p; ++p) s = mix(s ^ static_cast<unsigned char>(*p));
  if (c.op)
    for (const char *p = c.op->name; *p; ++p) s = mix(s ^ static_cast<unsigned char>(*p));
  return mix(s ^ mix(c.count) ^ (c.inPlace ? 0x77 : 0) ^ mix(static_cast<uint64_t>(c.root) + 3) ^ mix(serial));
}

// The closed-form pattern (Case::pattern): small integers, so every sum over
// up to 16 ranks is exact in float; the index modulo a prime and the rank
// term make misplaced blocks show.
float patternValue(int rank, size_t index) { return static_cast<float>(index % 1021 + 1024 * static_cast<size_t>(rank)); }

float patternSum(int nranks, size_t index) {
  return static_cast<float>(static_cast<size_t>(nranks) * (index % 1021) + 1024 * static_cast<size_t>(nranks) * (nranks - 1) / 2);
}

int toInt(size_t n) {
  if (n > static_cast<size_t>(INT_MAX)) throw std::length_error("count too large for the MPI reference");
  return static_cast<int>(n);
}

}  // namespace

// ---- the checker -------------------------------------------------------------------

Checker::Checker(MPI_Comm comm, std::string commName) : comm_(comm), commName_(std::move(commName)) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void Checker::report(const Case &c, const std::string &what) {
  ++reported_;
  if (reported_ > 30) {
    if (reported_ == 31) BOOST_ERROR("rank " << rank_ << ": further failures on " << commName_ << " not shown");
    else BOOST_CHECK(false);  // still counted
    return;
  }
  std::ostringstream s;
  s << "rank " << rank_ << "/" << size_ << " comm " << commName_ << ": " << collName(c.coll)
    << " type=" << c.type->name << " op=" << (c.op ? c.op->name : "-") << " algo=" << algoName()
    << " count=" << c.count << " inplace=" << c.inPlace;
  if (c.coll == Coll::Reduce || c.coll == Coll::Bcast) s << " root=" << c.root;
  s << ": " << what;
  BOOST_ERROR(s.str());
}

bool Checker::run(const Case &c) {
  const TypeDesc &t = *c.type;
  const size_t es = t.size;
  const size_t n = static_cast<size_t>(size_);
  const MPI_Datatype dt = t.handle();
  const MPI_Op op = c.op ? c.op->handle() : MPI_OP_NULL;
  const MPI_Op refOp = c.op ? (c.op->isAvg ? MPI_SUM : op) : MPI_OP_NULL;
  const Gen gen = c.op ? c.op->gen : Gen::Copy;
  const uint64_t seed = caseSeed(c, casesRun_++);
  const bool root = rank_ == c.root;

  size_t sendElems = c.count, recvElems = c.count;
  switch (c.coll) {
    case Coll::Allreduce: case Coll::Reduce: break;
    case Coll::Bcast: sendElems = 0; break;
    case Coll::Allgather: recvElems = c.count * n; break;
    case Coll::ReduceScatterBlock: sendElems = c.count * n; recvElems = c.inPlace ? c.count * n : c.count; break;
    case Coll::Alltoall: sendElems = recvElems = c.count * n; break;
  }
  const bool inPlace = c.inPlace && (c.coll != Coll::Reduce || root) && c.coll != Coll::Bcast;

  // This rank's input.
  std::vector<unsigned char> in((c.coll == Coll::Bcast ? c.count : sendElems) * es);
  if (c.pattern) {
    float *f = reinterpret_cast<float *>(in.data());
    for (size_t i = 0; i < in.size() / sizeof(float); ++i) f[i] = patternValue(rank_, i);
  } else if (t.kind == Kind::Bytes) {  // any extent: random bytes
    fillBytes(in.data(), in.size(), gen, seed, rank_, size_, 0);
  } else {
    t.fill(in.data(), in.size() / es, gen, seed, rank_, size_, 0);
  }

  // Chorus's buffers: recv filled with poison except where in-place input
  // goes.  The poison differs by rank, so bytes MPI leaves alone (the gaps
  // of MPI_DOUBLE_INT...) show if Chorus carried them from another rank.
  const unsigned char poison = static_cast<unsigned char>(0xC3 ^ (seed & 0x3c) ^ (rank_ << 6));
  GuardedBuffer sendBuf(inPlace ? 0 : sendElems * es);
  GuardedBuffer recvBuf(recvElems * es);
  if (!inPlace && sendElems) std::memcpy(sendBuf.data(), in.data(), in.size());
  if (recvElems) std::memset(recvBuf.data(), poison, recvElems * es);
  if (inPlace && !in.empty()) {
    if (c.coll == Coll::Allgather) std::memcpy(recvBuf.data() + rank_ * c.count * es, in.data(), in.size());
    else std::memcpy(recvBuf.data(), in.data(), in.size());
  }
  if (c.coll == Coll::Bcast && root && !in.empty()) std::memcpy(recvBuf.data(), in.data(), in.size());
  const std::vector<unsigned char> recvBefore(recvBuf.data(), recvBuf.data() + recvElems * es);
  const void *sb = inPlace ? MPI_IN_PLACE : sendBuf.data();
  void *rb = recvBuf.data();
  const MPI_Count cnt = static_cast<MPI_Count>(c.count);

  int rc = MPI_SUCCESS;
  switch (c.coll) {
    case Coll::Allreduce: rc = MPIX_Allreduce_gpu(sb, rb, cnt, dt, op, comm_); break;
    case Coll::Reduce: rc = MPIX_Reduce_gpu(sb, rb, cnt, dt, op, c.root, comm_); break;
    case Coll::Bcast: rc = MPIX_Bcast_gpu(rb, cnt, dt, c.root, comm_); break;
    case Coll::Allgather: rc = MPIX_Allgather_gpu(sb, cnt, dt, rb, cnt, dt, comm_); break;
    case Coll::ReduceScatterBlock: rc = MPIX_Reduce_scatter_block_gpu(sb, rb, cnt, dt, op, comm_); break;
    case Coll::Alltoall: rc = MPIX_Alltoall_gpu(sb, cnt, dt, rb, cnt, dt, comm_); break;
  }

  // The reference: MPI's own collective on the same inputs (not in place).
  // Low-precision reductions run on float, exact by construction of the inputs.
  const size_t outElems = (c.coll == Coll::ReduceScatterBlock) ? c.count : recvElems;
  // MPI writes only the data bytes of each element, so the reference starts
  // from what Chorus's recvbuf held before the call (poison and in-place
  // input): gaps must come out as they went in.
  std::vector<unsigned char> expected = recvBefore;
  const int ic = toInt(c.count);
  if (c.pattern) {
    float *e = reinterpret_cast<float *>(expected.data());
    const size_t cn = c.count;
    switch (c.coll) {
      case Coll::Allreduce: for (size_t i = 0; i < cn; ++i) e[i] = patternSum(size_, i); break;
      case Coll::Reduce: if (root) for (size_t i = 0; i < cn; ++i) e[i] = patternSum(size_, i); break;
      case Coll::ReduceScatterBlock: for (size_t i = 0; i < cn; ++i) e[i] = patternSum(size_, rank_ * cn + i); break;
      case Coll::Bcast: for (size_t i = 0; i < cn; ++i) e[i] = patternValue(c.root, i); break;
      case Coll::Allgather:
        for (size_t r = 0; r < n; ++r)
          for (size_t i = 0; i < cn; ++i) e[r * cn + i] = patternValue(static_cast<int>(r), i);
        break;
      case Coll::Alltoall:
        for (size_t r = 0; r < n; ++r)
          for (size_t i = 0; i < cn; ++i) e[r * cn + i] = patternValue(static_cast<int>(r), rank_ * cn + i);
        break;
    }
  } else if (isReduction(c.coll) && t.lowPrecision) {
    std::vector<float> fin(sendElems), fout(outElems);
    t.toFloat(in.data(), fin.data(), sendElems);
    if (c.coll == Coll::Allreduce) MPI_Allreduce(fin.data(), fout.data(), ic, MPI_FLOAT, refOp, comm_);
    if (c.coll == Coll::Reduce) MPI_Reduce(fin.data(), fout.data(), ic, MPI_FLOAT, refOp, c.root, comm_);
    if (c.coll == Coll::ReduceScatterBlock)
      MPI_Reduce_scatter_block(fin.data(), fout.data(), ic, MPI_FLOAT, refOp, comm_);
    if (c.op->isAvg)
      for (float &f : fout) f /= static_cast<float>(size_);
    if (c.coll != Coll::Reduce || root) t.fromFloat(fout.data(), expected.data(), outElems);
  } else {
    // Open MPI 4.1.4 (on MPI_UNSIGNED_LONG) and MPICH 4.0.2 (on every
    // unsigned type) order unsigned integers as signed in MPI_MIN/MAX.
    // Flipping the top bit maps unsigned order onto signed order, so those
    // references run on the signed type of the same width, then flip back.
    // Open MPI 4.1.4 also orders MPI_OFFSET as unsigned: signed integers'
    // MIN/MAX references run on the fixed-width signed type of their size.
    const bool minMax = c.op && (refOp == MPI_MIN || refOp == MPI_MAX);
    const bool flipSign = t.kind == Kind::UnsignedInt && minMax;
    std::vector<unsigned char> refIn = in;
    if (flipSign) flipTopBits(refIn.data(), es, sendElems);
    const MPI_Datatype rdt = flipSign || (t.kind == Kind::SignedInt && minMax) ? signedIntOfSize(es) : dt;
    switch (c.coll) {
      case Coll::Allreduce: MPI_Allreduce(refIn.data(), expected.data(), ic, rdt, refOp, comm_); break;
      case Coll::Reduce: {
        std::vector<unsigned char> out = root ? recvBefore : std::vector<unsigned char>();
        MPI_Reduce(refIn.data(), out.data(), ic, rdt, refOp, c.root, comm_);
        if (root) expected = out;
        break;
      }
      case Coll::Bcast:
        if (root) expected = in;
        MPI_Bcast(expected.data(), ic, dt, c.root, comm_);
        break;
      case Coll::Allgather: MPI_Allgather(in.data(), ic, dt, expected.data(), ic, dt, comm_); break;
      case Coll::ReduceScatterBlock:
        MPI_Reduce_scatter_block(refIn.data(), expected.data(), ic, rdt, refOp, comm_);
        break;
      case Coll::Alltoall: MPI_Alltoall(in.data(), ic, dt, expected.data(), ic, dt, comm_); break;
    }
    if (flipSign && (c.coll != Coll::Reduce || root)) flipTopBits(expected.data(), es, outElems);
    if (c.op && c.op->isAvg && (c.coll != Coll::Reduce || root)) t.divide(expected.data(), outElems, size_);
  }

  if (rc != MPI_SUCCESS) {
    report(c, "returned error " + std::to_string(rc) + ": " + errorString(rc));
    return false;
  }
  bool ok = true;
  std::string g = recvBuf.checkGuards();
  if (!g.empty()) { report(c, "recvbuf: " + g); ok = false; }
  g = sendBuf.checkGuards();
  if (!g.empty()) { report(c, "sendbuf: " + g); ok = false; }
  if (!inPlace && sendElems && std::memcmp(sendBuf.data(), in.data(), in.size()) != 0) {
    report(c, "modified its (const) sendbuf");
    ok = false;
  }
  // Compare.  A non-root reduce's recvbuf must still hold the poison; the rest
  // of an in-place reduce_scatter_block's recvbuf is undefined, not compared.
  const size_t cmpElems = (c.coll == Coll::ReduceScatterBlock) ? c.count : recvElems;
  const unsigned char *got = recvBuf.data();
  if (cmpElems && std::memcmp(got, expected.data(), cmpElems * es) != 0) {
    size_t first = SIZE_MAX, bad = 0;
    for (size_t i = 0; i < cmpElems; ++i)
      if (std::memcmp(got + i * es, expected.data() + i * es, es) != 0) {
        if (first == SIZE_MAX) first = i;
        ++bad;
      }
    std::ostringstream s;
    if (c.coll == Coll::Reduce && !root) s << "non-root recvbuf was written: ";
    s << bad << " of " << cmpElems << " elements differ, first at index " << first;
    if (c.coll == Coll::Allgather || c.coll == Coll::Alltoall)
      s << " (block " << first / std::max<size_t>(c.count, 1) << ", offset " << first % std::max<size_t>(c.count, 1) << ")";
    auto show = [&](const unsigned char *e) {
      if (t.kind != Kind::Bytes || es == 1) return t.format(e);
      std::string hex;  // a wider copy-only element: all its bytes
      char b[4];
      for (size_t i = 0; i < es; ++i) {
        std::snprintf(b, sizeof b, "%02x", e[i]);
        hex += b;
      }
      return hex;
    };
    s << ": got " << show(got + first * es) << " expected " << show(expected.data() + first * es);
    report(c, s.str());
    ok = false;
  }
  return ok;
}

}  // namespace chorus_test
