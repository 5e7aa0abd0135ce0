#include "coll/exact_executor.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>
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

// Up to this many bytes gathered per rank (every rank's contributions to
// every element), one allgather of the values and a local exact sum beat
// the passes' two or three collectives: latency, not bytes, decides there
// (measured crossover, doubles: 32 KiB gathered at 2 and 4 ranks, perf/
// RESULTS.md).  Either way each element is the same function of its
// contributions.
constexpr size_t kExactGatherBytes = 32 * 1024;

// One pass: `coll` on `count` elements of `type` with `op`, planned afresh
// (the pass's size is not the call's) and tagged as its own call, so that a
// rank in another pass is a mismatch, not a misread.
Status runPass(HostChannel &ch, const PlanShape &shape, Coll coll, DataType type, size_t elemSize, RedOp op,
               size_t count, const void *send, void *recv, int root) {
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
  hostBeginCall(ch, coll, plan.algo, ch.seq, hostCallArgs(planBytes * 3 + 1, int(type), int(op), root));
  return hostExecute(ch, pass);
}

// Large calls go in chunks of this many elements (of each rank's block for
// reduce-scatter), each its own passes: each element is summed alone, so a
// chunk's results are the whole call's.  The chunk bounds the scratch (about
// 40 bytes an element of double at 2 ranks: 2.5 MiB) and keeps the limbs in
// cache between the step that writes them and the pass that reads them.
constexpr size_t kExactChunkElements = size_t(64) << 10;

// Scratch kept by each thread (the caller's, or a communicator's progress
// thread), at most a chunk's: the passes would otherwise fault in fresh
// pages on every call.
struct ExactScratch {
  std::vector<uint16_t> keys;
  std::vector<int64_t> limbs, sums;
  std::vector<unsigned char> values, results, mine;
};
thread_local ExactScratch t_scratch;

// Whether this thread's double arithmetic is IEEE's default: round to
// nearest, subnormals neither flushed nor read as zero (a program built
// with -ffast-math sets FTZ/DAZ).  The small calls' fast sum needs it.
bool ieeeArithmetic() {
  if (fegetround() != FE_TONEAREST) return false;
  volatile double subnormal = 0x1p-1070, one = 1.0, smallest = 0x1p-1022;
  return subnormal * one != 0 && smallest / 4 != 0;
}

// The exact sum of element i's doubles rounded once, by Shewchuk's
// error-free partial sums (the sum of the partials is always the exact
// sum; the last steps round it once, half-way cases to even as CPython's
// math.fsum does), stored at `out` - when it is the same bits as the
// limbs' path: every contribution finite and within the window of the
// largest (so the limbs are exact too and both are the exact sum rounded
// once), and the partial sums unable to overflow.  Returns false, leaving
// the element to the limbs, otherwise.  A few ns where the limbs take tens.
bool sumDoublesInWindow(const unsigned char *gathered, size_t total, int nranks, size_t i, unsigned char *out) {
  constexpr int kWindow = kExactLimbBits * 3 - 53;  // exponents apart whose bits all lie in the window
  constexpr int kMaxPartials = 8;                   // the window spans 126 bits: at most 3 partials
  int top = 0, bottom = 2047;
  bool allNegativeZero = true;
  for (int r = 0; r < nranks; ++r) {
    uint64_t b;
    memcpy(&b, gathered + (size_t(r) * total + i) * 8, 8);
    const int exponent = int((b >> 52) & 0x7ff);
    if (exponent == 0x7ff) return false;
    const bool zero = (b << 1) == 0;
    allNegativeZero = allNegativeZero && zero && (b >> 63);
    if (zero) continue;
    const int effective = exponent == 0 ? 1 : exponent;
    top = effective > top ? effective : top;
    bottom = effective < bottom ? effective : bottom;
  }
  if (top == 0) {  // only zeros
    const double zero = allNegativeZero ? -0.0 : 0.0;
    memcpy(out, &zero, 8);
    return true;
  }
  int ranksBits = 0;
  while ((1 << ranksBits) < nranks) ++ranksBits;
  if (top - bottom > kWindow || top + ranksBits + 1 >= 0x7ff) return false;
  double partials[kMaxPartials];
  int count = 0;
  for (int r = 0; r < nranks; ++r) {
    double x;
    memcpy(&x, gathered + (size_t(r) * total + i) * 8, 8);
    int kept = 0;
    for (int j = 0; j < count; ++j) {
      double y = partials[j];
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y, lo = y - (hi - x);
      if (lo != 0.0) partials[kept++] = lo;
      x = hi;
    }
    if (kept >= kMaxPartials) return false;  // (cannot happen within the window)
    partials[kept] = x;
    count = kept + 1;
  }
  int n = count;
  double hi = partials[--n], lo = 0.0;
  while (n > 0) {
    const double x = hi, y = partials[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) break;
  }
  if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
    const double y = lo * 2, x = hi + y;
    if (y == x - hi) hi = x;
  }
  if (hi == 0.0) hi = 0.0;  // an exact zero of values not all -0 is +0, as the limbs give
  memcpy(out, &hi, 8);
  return true;
}

// The per-element steps with the format a constant, so that the compiler
// folds the shifts and masks of each type.
template <DataType T>
struct Steps {
  static constexpr ExactFormat f = exactFormatOf(T);

  static void keys(const unsigned char *in, size_t n, uint16_t *out) {
    if (exactKeysVector(T, in, n, out, false)) return;
    for (size_t i = 0; i < n; ++i) out[i] = exactKey(exactLoadBits(in + i * f.bytes, f.bytes), f);
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
  // Each element's key, or the larger of it and what is at `out` (`max`).
  static void keysMax(const unsigned char *in, size_t n, uint16_t *out) {
    if (exactKeysVector(T, in, n, out, true)) return;
    for (size_t i = 0; i < n; ++i) {
      const uint16_t k = exactKey(exactLoadBits(in + i * f.bytes, f.bytes), f);
      out[i] = k > out[i] ? k : out[i];
    }
  }
  static void round(const int64_t *sums, const uint16_t *keys, size_t n, uint64_t divisor, unsigned char *out) {
    if (divisor <= 1 && exactRoundVector(T, sums, keys, n, out)) return;
    for (size_t i = 0; i < n; ++i)
      exactStoreBits(out + i * f.bytes, f.bytes, exactRound(sums + i * f.limbs, keys[i], divisor, f));
  }
  // Elements [first, first + n) from every rank's whole vector in
  // `gathered` (nranks vectors of `total`), summed here.  `ieee`: this
  // thread's arithmetic rounds to nearest with subnormals (ieeeArithmetic).
  static void sumGathered(const unsigned char *gathered, size_t total, int nranks, size_t first, size_t n,
                          uint64_t divisor, bool ieee, unsigned char *out) {
    for (size_t i = first; i < first + n; ++i) {
      if (T == DataType::Float64 && ieee && divisor == 1 && sumDoublesInWindow(gathered, total, nranks, i, out + (i - first) * 8))
        continue;
      uint16_t key = 0;
      for (int r = 0; r < nranks; ++r) {
        const uint16_t k = exactKey(exactLoadBits(gathered + (size_t(r) * total + i) * f.bytes, f.bytes), f);
        key = k > key ? k : key;
      }
      int64_t sums[kExactMaxLimbs] = {}, limb[kExactMaxLimbs];
      for (int r = 0; r < nranks; ++r) {
        exactLimbs(exactLoadBits(gathered + (size_t(r) * total + i) * f.bytes, f.bytes), key, f, limb);
        for (int k = 0; k < f.limbs; ++k) sums[k] = int64_t(uint64_t(sums[k]) + uint64_t(limb[k]));  // wraps, as the passes do
      }
      exactStoreBits(out + (i - first) * f.bytes, f.bytes, exactRound(sums, key, divisor, f));
    }
  }
};

struct StepTable {
  void (*keys)(const unsigned char *, size_t, uint16_t *);
  void (*limbs)(const unsigned char *, size_t, const uint16_t *, int64_t *, bool);
  void (*keysMax)(const unsigned char *, size_t, uint16_t *);
  void (*round)(const int64_t *, const uint16_t *, size_t, uint64_t, unsigned char *);
  void (*sumGathered)(const unsigned char *, size_t, int, size_t, size_t, uint64_t, bool, unsigned char *);
};
template <DataType T>
constexpr StepTable stepsOf() {
  return {Steps<T>::keys, Steps<T>::limbs, Steps<T>::keysMax, Steps<T>::round, Steps<T>::sumGathered};
}
StepTable stepTable(DataType t) {
  switch (t) {
    case DataType::Float16: return stepsOf<DataType::Float16>();
    case DataType::BFloat16: return stepsOf<DataType::BFloat16>();
    case DataType::Float32: return stepsOf<DataType::Float32>();
    default: return stepsOf<DataType::Float64>();
  }
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
  const bool ieee = ieeeArithmetic();
  if (req.coll == Coll::Allreduce) steps.sumGathered(s.values.data(), total, ch.nranks, 0, total, divisor, ieee, out);
  else if (req.coll == Coll::Reduce && ch.rank == req.root)
    steps.sumGathered(s.values.data(), total, ch.nranks, 0, total, divisor, ieee, out);
  else if (req.coll == Coll::ReduceScatter)
    steps.sumGathered(s.values.data(), total, ch.nranks, req.count * size_t(ch.rank), req.count, divisor, ieee, out);
  return Status::Ok;
}

// The exact sums of `len` elements from every rank's contributions to
// them (`gathered`: nranks vectors of len), into `out`, a step at a time
// over whole vectors so that the steps run in vector registers: the keys'
// maximum, each rank's limbs added into the sums as they are made (as
// int64, wrapping: the same bits in any order), the rounding.
void sumContributions(const StepTable &steps, const ExactFormat &f, const unsigned char *gathered, size_t len,
                      int nranks, uint64_t divisor, unsigned char *out) {
  ExactScratch &s = t_scratch;
  const size_t bytes = size_t(f.bytes);
  s.keys.resize(len);
  steps.keys(gathered, len, s.keys.data());
  for (int r = 1; r < nranks; ++r) steps.keysMax(gathered + size_t(r) * len * bytes, len, s.keys.data());
  s.sums.resize(len * size_t(f.limbs));
  for (int r = 0; r < nranks; ++r)
    steps.limbs(gathered + size_t(r) * len * bytes, len, s.keys.data(), s.sums.data(), r > 0);
  steps.round(s.sums.data(), s.keys.data(), len, divisor, out);
}

// One chunk of a large call: elements [first, first + n) of every block of
// the input (one block, the whole vector, for allreduce and reduce; the
// ranks' blocks of `stride` elements for reduce-scatter), their results to
// the same elements of `out` (reduce-scatter: of this rank's block).
//
// Allreduce and reduce-scatter: the values themselves go to the rank that
// sums them (an alltoall: each rank's piece of each rank's block), which
// finds each element's largest exponent, aligns and sums every
// contribution and rounds; an allreduce then gathers the blocks' results.
// The bytes are the default allreduce's (values, then results, each
// (n - 1) / n of the vector), where limbs reduce-scattered would be three
// times the values' for double plus a pass for the keys.
// Reduce: the keys agreed by an allreduce, then the limbs reduced to the
// root (an alltoall to one rank would bring it every rank's whole vector).
Status exactChunk(HostChannel &ch, const CollRequest &req, const PlanShape &shape, const StepTable &steps,
                  size_t first, size_t n, size_t stride, uint64_t divisor) {
  const ExactFormat f = exactFormatOf(req.type);
  const Coll coll = req.coll;
  const size_t nranks = size_t(ch.nranks), bytes = size_t(f.bytes), limbs = size_t(f.limbs);
  const auto *in = static_cast<const unsigned char *>(req.sendbuf);
  auto *out = static_cast<unsigned char *>(req.recvbuf) + first * bytes;
  ExactScratch &s = t_scratch;
  Status st;
  if (coll == Coll::Reduce) {
    s.keys.resize(n);
    steps.keys(in + first * bytes, n, s.keys.data());
    st = runPass(ch, shape, Coll::Allreduce, DataType::Uint16, sizeof(uint16_t), RedOp::Max, n, s.keys.data(),
                 s.keys.data(), 0);
    if (st != Status::Ok) return st;
    s.limbs.resize(n * limbs);
    steps.limbs(in + first * bytes, n, s.keys.data(), s.limbs.data(), false);
    st = runPass(ch, shape, Coll::Reduce, DataType::Int64, 8, RedOp::Sum, n * limbs, s.limbs.data(), s.limbs.data(),
                 req.root);
    if (st == Status::Ok && ch.rank == req.root) steps.round(s.limbs.data(), s.keys.data(), n, divisor, out);
    return st;
  }
  // Each rank's piece: reduce-scatter's n elements of each block (packed
  // here), or an allreduce's chunk in equal blocks (the last padded).
  const size_t block = coll == Coll::Allreduce ? (n + nranks - 1) / nranks : n;
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
  s.results.resize(padded * bytes);
  st = runPass(ch, shape, Coll::Alltoall, DataType::Bytes, bytes, RedOp::Sum, block, send, s.results.data(), 0);
  if (st != Status::Ok) return st;
  if (coll == Coll::ReduceScatter) {
    sumContributions(steps, f, s.results.data(), block, ch.nranks, divisor, out);
    return Status::Ok;
  }
  s.mine.resize(block * bytes);
  sumContributions(steps, f, s.results.data(), block, ch.nranks, divisor, s.mine.data());
  const bool whole = padded == n;
  st = runPass(ch, shape, Coll::Allgather, DataType::Bytes, bytes, RedOp::Sum, block, s.mine.data(),
               whole ? out : s.results.data(), 0);
  if (st == Status::Ok && !whole) memcpy(out, s.results.data(), n * bytes);
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
  if (total * size_t(f.bytes) * nranks <= kExactGatherBytes) {
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
