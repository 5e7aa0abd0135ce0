#include "coll/exact_executor.h"

#include <cstdio>
#include <vector>

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

// One pass: `coll` on `count` integers of `type` with `op`, planned afresh
// (the pass's size is not the call's) and tagged as its own call, so that a
// rank in another pass is a mismatch, not a misread.
Status runPass(HostChannel &ch, const PlanShape &shape, Coll coll, DataType type, size_t elemSize, RedOp op,
               size_t count, const void *send, void *recv, int root) {
  const size_t planBytes = count * elemSize;
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

// Scratch kept by each thread (the caller's, or a communicator's progress
// thread): the passes of a large call would otherwise fault in fresh pages.
struct ExactScratch {
  std::vector<uint16_t> keys;
  std::vector<int64_t> limbs, sums;
};
thread_local ExactScratch t_scratch;

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
  // Elements this rank contributes; reduce-scatter's count is one block.
  const size_t block = req.count;
  const size_t total = coll == Coll::ReduceScatter ? block * size_t(ch.nranks) : block;
  const auto *in = static_cast<const unsigned char *>(req.sendbuf);
  ExactScratch &s = t_scratch;
  s.keys.resize(total);
  for (size_t i = 0; i < total; ++i) s.keys[i] = exactKey(exactLoadBits(in + i * size_t(f.bytes), f.bytes), f);
  Status st = runPass(ch, shape, Coll::Allreduce, DataType::Uint16, sizeof(uint16_t), RedOp::Max, total,
                      s.keys.data(), s.keys.data(), 0);
  if (st != Status::Ok) return st;
  const size_t limbs = size_t(f.limbs);
  s.limbs.resize(total * limbs);
  for (size_t i = 0; i < total; ++i)
    exactLimbs(exactLoadBits(in + i * size_t(f.bytes), f.bytes), s.keys[i], f, &s.limbs[i * limbs]);
  // The limbs of one element lie together, so that a reduce-scatter block
  // is the limbs of a block of elements.
  const int64_t *sums = s.limbs.data();
  size_t first = 0, results = total;
  switch (coll) {
    case Coll::Allreduce:
      st = runPass(ch, shape, Coll::Allreduce, DataType::Int64, 8, RedOp::Sum, total * limbs, s.limbs.data(),
                   s.limbs.data(), 0);
      break;
    case Coll::Reduce:
      st = runPass(ch, shape, Coll::Reduce, DataType::Int64, 8, RedOp::Sum, total * limbs, s.limbs.data(),
                   s.limbs.data(), req.root);
      if (ch.rank != req.root) results = 0;
      break;
    default:  // ReduceScatter
      s.sums.resize(block * limbs);
      st = runPass(ch, shape, Coll::ReduceScatter, DataType::Int64, 8, RedOp::Sum, block * limbs, s.limbs.data(),
                   s.sums.data(), 0);
      sums = s.sums.data();
      first = block * size_t(ch.rank);
      results = block;
      break;
  }
  ch.coll = coll;  // errors name the user's collective
  ch.algo = algo;
  if (st != Status::Ok) return st;
  const uint64_t divisor = req.op == RedOp::Avg ? uint64_t(ch.nranks) : 1;
  auto *out = static_cast<unsigned char *>(req.recvbuf);
  for (size_t i = 0; i < results; ++i)
    exactStoreBits(out + i * size_t(f.bytes), f.bytes, exactRound(sums + i * limbs, s.keys[first + i], divisor, f));
  return Status::Ok;
}

}  // namespace chorus
