#include "coll/exact_executor.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "coll/exact_simd.h"
#include "coll/exact_sum.h"

namespace chorus {

bool exactApplies(const CollRequest &req) {
  return (req.op == RedOp::Sum || req.op == RedOp::Avg) && exactFormatOf(req.type).limbs > 0 &&
         (req.coll == Coll::Allreduce || req.coll == Coll::Reduce || req.coll == Coll::ReduceScatter);
}

const char *exactRefusal(DataType type, RedOp op) {
  if (!isFloatType(type)) return nullptr;
  if (op == RedOp::Min || op == RedOp::Max) return nullptr;
  if (op == RedOp::Sum || op == RedOp::Avg)
    return exactFormatOf(type).limbs > 0 ? nullptr : "the fp8 types have no exact sum";
  return "only MPI_SUM, MPIX_GPU_AVG, MPI_MIN and MPI_MAX are order-independent on floating types";
}

namespace {

// Small calls: when each rank's vector is at most this many bytes, one
// allgather of the values and a local exact sum of every element beat the
// passes' two collectives (an alltoall and an allgather): latency decides,
// and a collective across nodes costs tens of us where one node's costs
// one.  Measured crossovers (perf/RESULTS.md, doubles): one node, 2 ranks,
// 512 B (1 KiB: 1.23 us gathered against 0.71); 4 ranks on 2 cores, 2 KiB;
// played nodes over tcp, 2 and 4 ranks, above 32 KiB (32 KiB: 33 us
// against 47 at 2 ranks, 217 against 270 at 4).  Capped in total, so that
// many ranks do not each gather and sum a large vector.  Either way each
// element is the same function of its contributions.
constexpr size_t kExactGatherBytesOneNode = 512;
constexpr size_t kExactGatherBytesNodes = 32 * 1024;
constexpr size_t kExactGatherTotalBytes = 256 * 1024;

// One pass: `coll` on `count` elements of `type` with `op`, planned afresh
// (the pass's size is not the call's) and tagged as its own call, so that a
// rank in another pass is a mismatch, not a misread.
Status runPass(HostChannel &ch, const PlanShape &shape, Coll coll, DataType type, size_t elemSize, RedOp op,
               size_t count, const void *send, void *recv, int root, bool skipOwnBlock = false) {
  const size_t planBytes = count * elemSize;  // (one rank's block for allgather and reduce-scatter)
  Plan plan = planCollective(coll, planBytes, shape);
  if (plan.algo == Algo::Publish && !ch.publish) plan.algo = Algo::Ring;
  CollRequest pass;
  pass.coll = coll;
  pass.algo = plan.algo;
  pass.type = type;
  pass.op = op;
  pass.count = count;
  pass.elemSize = elemSize;
  pass.sendbuf = send;
  pass.recvbuf = recv;
  pass.root = root;
  pass.skipOwnBlock = skipOwnBlock;
  hostBeginCall(ch, coll, plan.algo, ch.seq, hostCallArgs(planBytes * 3 + 1, int(type), int(op), root));
  return hostExecute(ch, pass);
}

// Large calls go in chunks of this many elements (of each rank's block for
// reduce-scatter), each its own passes: each element is summed alone, so a
// chunk's results are the whole call's.  The chunk bounds the scratch (the
// values sent, received and summed: about 3 MiB of doubles); 16Ki to 128Ki
// measured alike (perf/RESULTS.md).
constexpr size_t kExactChunkElements = size_t(64) << 10;

// Scratch kept by each thread (the caller's, or a communicator's progress
// thread), at most a chunk's: the passes would otherwise fault in fresh
// pages on every call.
struct ExactScratch {
  std::vector<uint16_t> keys;
  std::vector<int64_t> sums;
  std::vector<unsigned char> values, results, mine;
  std::vector<const unsigned char *> vectors;
};
thread_local ExactScratch t_scratch;

// The per-element steps with the format a constant, so that the compiler
// folds the shifts and masks of each type.
template <DataType T>
struct Steps {
  static constexpr ExactFormat f = exactFormatOf(T);

  // Each element's key stored at `out`, or with `max` the larger of it
  // and what is there.
  static void keys(const unsigned char *in, size_t n, uint16_t *out, bool max) {
    if (exactKeysVector(T, in, n, out, max)) return;
    for (size_t i = 0; i < n; ++i) {
      const uint16_t k = exactKey(exactLoadBits(in + i * f.bytes, f.bytes), f);
      out[i] = max && out[i] > k ? out[i] : k;
    }
  }
  // The limbs stored at `out`, or added to what is there (`accumulate`).
  static void limbs(const unsigned char *in, size_t n, const uint16_t *keys, int64_t *out, bool accumulate) {
    if (exactLimbsVector(T, in, n, keys, out, accumulate)) return;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t bits = exactLoadBits(in + i * f.bytes, f.bytes);
      if (accumulate) exactLimbsInto<true>(bits, keys[i], f, out + i * f.limbs);
      else exactLimbs(bits, keys[i], f, out + i * f.limbs);
    }
  }
  static void round(const int64_t *sums, const uint16_t *keys, size_t n, uint64_t divisor, unsigned char *out) {
    for (size_t i = 0; i < n; ++i)
      exactStoreBits(out + i * f.bytes, f.bytes, exactRound(sums + i * f.limbs, keys[i], divisor, f));
  }
};

struct StepTable {
  DataType type;
  void (*keys)(const unsigned char *, size_t, uint16_t *, bool);
  void (*limbs)(const unsigned char *, size_t, const uint16_t *, int64_t *, bool);
  void (*round)(const int64_t *, const uint16_t *, size_t, uint64_t, unsigned char *);
};
template <DataType T>
constexpr StepTable stepsOf() {
  return {T, Steps<T>::keys, Steps<T>::limbs, Steps<T>::round};
}
StepTable stepTable(DataType t) {
  switch (t) {
    case DataType::Float16: return stepsOf<DataType::Float16>();
    case DataType::BFloat16: return stepsOf<DataType::BFloat16>();
    case DataType::Float32: return stepsOf<DataType::Float32>();
    default: return stepsOf<DataType::Float64>();
  }
}

// The exact sums of `len` elements from every rank's contributions to
// them (vector r's at gathered + (r * stride + first) elements), into
// `out`, a step at a time over whole vectors so that the steps run in
// vector registers: the keys' maximum, each rank's limbs added into the
// sums as they are made (as int64, wrapping: the same bits in any order),
// the rounding; where the CPU allows, all three fused per element, and for
// two contributions the FPU's addition (coll/exact_pair.cc).  When
// `own` is given, rank ownRank's vector is there instead (an owner's own
// piece, read where the user left it).
void sumContributions(const StepTable &steps, const ExactFormat &f, const unsigned char *gathered, size_t stride,
                      size_t first, size_t len, int nranks, uint64_t divisor, unsigned char *out, int ownRank = -1,
                      const unsigned char *own = nullptr) {
  ExactScratch &s = t_scratch;
  const size_t bytes = size_t(f.bytes);
  const auto vectorOf = [&](int r) {
    return r == ownRank && own ? own : gathered + (size_t(r) * stride + first) * bytes;
  };
  if (divisor <= 1) {
    s.vectors.resize(size_t(nranks));
    for (int r = 0; r < nranks; ++r) s.vectors[size_t(r)] = vectorOf(r);
    if (nranks == 2 && exactSumOfTwo(steps.type, s.vectors.data(), len, out)) return;
    if (exactSumVector(steps.type, s.vectors.data(), nranks, len, out)) return;
  }
  s.keys.resize(len);
  for (int r = 0; r < nranks; ++r) steps.keys(vectorOf(r), len, s.keys.data(), r > 0);
  s.sums.resize(len * size_t(f.limbs));
  for (int r = 0; r < nranks; ++r) steps.limbs(vectorOf(r), len, s.keys.data(), s.sums.data(), r > 0);
  steps.round(s.sums.data(), s.keys.data(), len, divisor, out);
}

// Small calls: every rank's values to every rank, each sums what it returns.
Status gatherAndSum(HostChannel &ch, const CollRequest &req, const PlanShape &shape, const StepTable &steps,
                    size_t total, uint64_t divisor) {
  const ExactFormat f = exactFormatOf(req.type);
  ExactScratch &s = t_scratch;
  s.values.resize(total * size_t(f.bytes) * size_t(ch.nranks));
  Status st = runPass(ch, shape, Coll::Allgather, DataType::Bytes, size_t(f.bytes), RedOp::Sum, total, req.sendbuf,
                      s.values.data(), 0);
  if (st != Status::Ok) return st;
  auto *out = static_cast<unsigned char *>(req.recvbuf);
  if (req.coll == Coll::Allreduce || (req.coll == Coll::Reduce && ch.rank == req.root))
    sumContributions(steps, f, s.values.data(), total, 0, total, ch.nranks, divisor, out);
  else if (req.coll == Coll::ReduceScatter)
    sumContributions(steps, f, s.values.data(), total, req.count * size_t(ch.rank), req.count, ch.nranks, divisor, out);
  return Status::Ok;
}

// One chunk of a large call: elements [first, first + n) of every block of
// the input (one block, the whole vector, for allreduce and reduce; the
// ranks' blocks of `stride` elements for reduce-scatter), their results to
// the same elements of `out` (reduce-scatter: of this rank's block).
//
// The values themselves go to the rank that sums them (an alltoall: each
// rank's piece of each rank's block), which finds each element's largest
// exponent, aligns and sums every contribution and rounds; an allreduce or
// reduce then gathers the blocks' results.  The bytes are the default
// allreduce's (values, then results, each (n - 1) / n of the vector),
// where limbs reduce-scattered would be three times the values' for double
// plus a pass for the keys; a reduce moves about twice the default
// reduce's, its owners' sums in parallel instead of all at the root.
Status exactChunk(HostChannel &ch, const CollRequest &req, const PlanShape &shape, const StepTable &steps,
                  size_t first, size_t n, size_t stride, uint64_t divisor) {
  const ExactFormat f = exactFormatOf(req.type);
  const Coll coll = req.coll;
  const size_t nranks = size_t(ch.nranks), bytes = size_t(f.bytes);
  const auto *in = static_cast<const unsigned char *>(req.sendbuf);
  // (A reduce's non-root may pass no recvbuf.)
  auto *out = req.recvbuf ? static_cast<unsigned char *>(req.recvbuf) + first * bytes : nullptr;
  ExactScratch &s = t_scratch;
  Status st;
  // Each rank's piece: reduce-scatter's n elements of each block (packed
  // here), or an allreduce's chunk in equal blocks (the last padded).
  const size_t block = coll == Coll::ReduceScatter ? n : (n + nranks - 1) / nranks;
  const size_t padded = block * nranks;
  const unsigned char *send = in + first * bytes;
  if (coll == Coll::ReduceScatter) {
    s.values.resize(padded * bytes);
    for (size_t r = 0; r < nranks; ++r)
      memcpy(s.values.data() + r * n * bytes, in + (r * stride + first) * bytes, n * bytes);
    send = s.values.data();
  } else if (padded != n) {
    s.values.resize(padded * bytes);
    memcpy(s.values.data(), send, n * bytes);
    memset(s.values.data() + n * bytes, 0, (padded - n) * bytes);
    send = s.values.data();
  }
  // This rank's own piece stays where it is: the sums read it there.
  s.results.resize(padded * bytes);
  st = runPass(ch, shape, Coll::Alltoall, DataType::Bytes, bytes, RedOp::Sum, block, send, s.results.data(), 0, true);
  if (st != Status::Ok) return st;
  const unsigned char *ownPiece = send + size_t(ch.rank) * block * bytes;
  if (coll == Coll::ReduceScatter) {
    sumContributions(steps, f, s.results.data(), block, 0, block, ch.nranks, divisor, out, ch.rank, ownPiece);
    return Status::Ok;
  }
  // The blocks' results to every rank (a reduce's non-roots drop them:
  // their recvbuf is not theirs to write).  Where the results land in
  // `out` whole, this rank's block is summed into its place there and the
  // allgather runs in place (no copy of it).
  const bool mine = coll == Coll::Allreduce || ch.rank == req.root;
  const bool direct = mine && padded == n;
  unsigned char *gathered = direct ? out : s.results.data();
  unsigned char *own = gathered + size_t(ch.rank) * block * bytes;
  if (!direct) {
    s.mine.resize(block * bytes);
    own = s.mine.data();
  }
  sumContributions(steps, f, s.results.data(), block, 0, block, ch.nranks, divisor, own, ch.rank, ownPiece);
  st = runPass(ch, shape, Coll::Allgather, DataType::Bytes, bytes, RedOp::Sum, block, own, gathered, 0);
  if (st == Status::Ok && mine && !direct) memcpy(out, s.results.data(), n * bytes);
  return st;
}

}  // namespace

Status hostExecuteExact(HostChannel &ch, const CollRequest &req, const PlanShape &shape) {
  const ExactFormat f = exactFormatOf(req.type);
  if (ch.nranks > kExactMaxRanks) {
    snprintf(ch.errorText, sizeof ch.errorText, "CHORUS_REPRODUCIBLE=exact: %d ranks, more than the %d it sums exactly",
             ch.nranks, kExactMaxRanks);
    return Status::Unsupported;
  }
  const Coll coll = req.coll;
  const Algo algo = req.algo;
  const StepTable steps = stepTable(req.type);
  const size_t nranks = size_t(ch.nranks);
  // Elements this rank contributes; reduce-scatter's count is one block.
  const size_t total = coll == Coll::ReduceScatter ? req.count * nranks : req.count;
  const uint64_t divisor = req.op == RedOp::Avg ? uint64_t(ch.nranks) : 1;
  Status st = Status::Ok;
  const size_t vectorBytes = total * size_t(f.bytes);
  const size_t gatherLimit = shape.nnodes > 1 ? kExactGatherBytesNodes : kExactGatherBytesOneNode;
  if (vectorBytes <= gatherLimit && vectorBytes * nranks <= kExactGatherTotalBytes) {
    st = gatherAndSum(ch, req, shape, steps, total, divisor);
  } else {
    // A reduce-scatter's chunk takes its elements from every rank's block.
    const size_t span = coll == Coll::ReduceScatter ? req.count : total;
    // At least 64 elements a rank's piece: many ranks make larger chunks.
    const size_t chunk = coll == Coll::ReduceScatter ? std::max(kExactChunkElements / nranks, size_t(64))
                                                     : std::max(kExactChunkElements, nranks * 64);
    for (size_t first = 0; first < span && st == Status::Ok; first += chunk) {
      const size_t n = std::min(span - first, chunk);
      st = exactChunk(ch, req, shape, steps, first, n, req.count, divisor);
    }
  }
  ch.coll = coll;  // errors name the user's collective
  ch.algo = algo;
  return st;
}

}  // namespace chorus
