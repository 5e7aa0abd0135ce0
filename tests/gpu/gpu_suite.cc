// The GPU tier's matrix: every collective for every datatype, every op valid
// on it and sizes around the protocols' slots, on device buffers, out of
// place, in place and stream-ordered, at byte offsets from cudaMalloc's
// alignment; each compared bit for bit with its reference.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu_suite.h"
#include "chorus.h"

namespace gpu_test {

namespace {

struct Variant {
  const char *name;
  bool inPlace, enqueue;
};

struct Case {
  Coll coll;
  const TypeInfo *type;
  const OpInfo *op;  // null for the copy collectives
  size_t count;
  int root;
  // Bytes from cudaMalloc's alignment of sendbuf and recvbuf; -1: the
  // default (one element off for odd counts).
  int sendOff = -1, recvOff = -1;
};

std::string labelOf(const Case &k, const Variant &v) {
  char s[200];
  snprintf(s, sizeof s, "%s %s %s proto=%s count=%zu%s", collName(k.coll), k.type->name, k.op ? k.op->name : "-",
           g_proto, k.count, v.name);
  std::string l = s;
  if (k.coll == Coll::Reduce || k.coll == Coll::Bcast) l += " root=" + std::to_string(k.root);
  if (k.sendOff >= 0) l += " sendbuf+" + std::to_string(k.sendOff) + " recvbuf+" + std::to_string(k.recvOff);
  return l;
}

void runVariant(const Case &k, const Variant &v, const std::vector<char> &in, const std::vector<char> &ref,
                const std::string &refError) {
  const TypeInfo &t = *k.type;
  const size_t inBytes = in.size(), outBytes = outElems(k.coll, k.count) * t.size;
  // Odd counts run one element off cudaMalloc's alignment, so the
  // element-wise paths run too, not only 16-byte vectors.
  const size_t sendShift = k.sendOff >= 0 ? size_t(k.sendOff) : k.count % 2 ? t.size : 0;
  const size_t shift = k.recvOff >= 0 ? size_t(k.recvOff) : k.count % 2 ? t.size : 0;
  const size_t span = std::max(shift, sendShift) + std::max(inBytes, outBytes) + kGuard;
  char *dSend = g_send.get(span) + sendShift;
  char *dRecvBase = g_recv.get(span), *dRecv = dRecvBase + shift;
  CUDA_OK(cudaMemset(dRecvBase, kSentinel, span));
  const bool isRoot = g_rank == k.root;
  const bool inPlace = v.inPlace && (k.coll != Coll::Reduce || isRoot);  // MPI: in place at the root only
  const void *send = dSend;
  if (k.coll == Coll::Bcast) {
    if (isRoot) upload(dRecv, in);
    send = nullptr;
  } else if (inPlace) {
    send = MPI_IN_PLACE;
    upload(k.coll == Coll::Allgather ? dRecv + size_t(g_rank) * inBytes : dRecv, in);
  } else {
    upload(dSend, in);
  }
  // The memset and a pageable upload may still be in flight on the legacy
  // stream, which does not order the non-blocking stream of _enqueue.
  CUDA_OK(cudaDeviceSynchronize());

  const int rc = callChorus(k.coll, send, dRecv, k.count, t, k.op ? k.op->op : MPI_OP_NULL, k.root, v.enqueue);
  if (v.enqueue) CUDA_OK(cudaStreamSynchronize(g_stream));

  std::string why = refError;
  if (why.empty() && rc != MPI_SUCCESS) why = errorText(rc);
  if (why.empty()) {
    const std::vector<char> got = download(dRecvBase, span);
    if (inPlace) {
      // The rest of the buffer held input (reduce-scatter): only the result counts.
      why = firstDifference(got.data() + shift, ref.data(), ref.size(), 0, ref.size(), t.size, "recvbuf");
    } else {
      // Sentinel everywhere but the result: catches a non-root reduce
      // writing its recvbuf and stores past either end.
      std::vector<char> want(span, char(kSentinel));
      if (!ref.empty()) memcpy(want.data() + shift, ref.data(), ref.size());
      why = firstDifference(got.data(), want.data(), span, shift, ref.size(), t.size, "recvbuf");
    }
  }
  if (why.empty() && send == dSend && inBytes) {  // sendbuf is const
    const std::vector<char> after = download(dSend, inBytes);
    why = firstDifference(after.data(), in.data(), inBytes, 0, inBytes, t.size, "sendbuf changed");
  }
  check(labelOf(k, v), why);
}

// One (collective, type, op, count): the reference once, then each variant
// on device buffers.  In place and _enqueue run with `allVariants` only:
// they change the buffers and the stream, not the arithmetic, so one op per
// type covers them.
void runCase(const Case &k, uint64_t seed, bool allVariants) {
  const std::vector<char> in = makeInput(*k.type, k.op ? k.op->gen : Gen::Raw, seed, inElems(k.coll, k.count));
  std::vector<char> ref;
  const int rc = reference(k.coll, *k.type, k.op, in, k.count, k.root, ref);
  const std::string refError = rc == MPI_SUCCESS ? "" : "reference failed, " + errorText(rc);
  runVariant(k, Variant{"", false, false}, in, ref, refError);
  if (!allVariants) return;
  if (k.coll != Coll::Bcast) runVariant(k, Variant{" in-place", true, false}, in, ref, refError);  // bcast always is
  runVariant(k, Variant{" enqueue", false, true}, in, ref, refError);
}

// 0, 1, two primes, one element either side of LL's half slot and of a
// whole Simple slot (one more slice, one more channel).
std::vector<size_t> countsFor(const TypeInfo &t) {
  const size_t ll = kSlotBytes / 2 / t.size, simple = kSlotBytes / t.size;
  return {0, 1, 7, 1031, ll - 1, ll + 1, simple - 1, simple + 1};
}

// CHORUS_TEST_OPS=sum,minloc (names, comma-separated) runs those reduction
// ops only; unset, every op.  CHORUS_TEST_LARGE_BYTES replaces the large
// case's 8 MiB.  np4.sh's LL run on the CPU emulation takes both (there
// the whole matrix took 180 s against Simple's 63).
size_t largeBytes() {
  const char *v = getenv("CHORUS_TEST_LARGE_BYTES");
  const long long bytes = v ? atoll(v) : 0;
  return bytes >= 4 ? size_t(bytes) & ~size_t(3) : kLargeBytes;
}

bool opWanted(const char *name) {
  const char *list = getenv("CHORUS_TEST_OPS");
  if (!list || !*list) return true;
  const size_t len = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    const size_t n = end ? size_t(end - p) : strlen(p);
    if (n == len && strncmp(p, name, len) == 0) return true;
    p += n + (end ? 1 : 0);
  }
  return false;
}

uint64_t seedOf(Coll c, size_t type, size_t op, size_t count) {
  return mix((uint64_t(c) << 56) ^ (uint64_t(type) << 48) ^ (uint64_t(op) << 40) ^ uint64_t(count));
}

}  // namespace

void runSuite() {
  const TypeInfo reduceTypes[] = {
      {"int8", MPI_INT8_T, 1, Kind::Signed, 0, 0},        {"uint8", MPI_UINT8_T, 1, Kind::Unsigned, 0, 0},
      {"int16", MPI_INT16_T, 2, Kind::Signed, 0, 0},      {"uint16", MPI_UINT16_T, 2, Kind::Unsigned, 0, 0},
      {"int32", MPI_INT32_T, 4, Kind::Signed, 0, 0},      {"uint32", MPI_UINT32_T, 4, Kind::Unsigned, 0, 0},
      {"int64", MPI_INT64_T, 8, Kind::Signed, 0, 0},      {"uint64", MPI_UINT64_T, 8, Kind::Unsigned, 0, 0},
      {"float", MPI_FLOAT, 4, Kind::Float, 0, 0},         {"double", MPI_DOUBLE, 8, Kind::Float, 0, 0},
      {"float16", MPIX_GPU_FLOAT16, 2, Kind::LowP, 5, 10}, {"bfloat16", MPIX_GPU_BFLOAT16, 2, Kind::LowP, 8, 7},
      {"fp8_e4m3", MPIX_GPU_FP8_E4M3, 1, Kind::LowP, 4, 3}, {"fp8_e5m2", MPIX_GPU_FP8_E5M2, 1, Kind::LowP, 5, 2},
  };
  // SUM first: the in-place and enqueue variants run with it.  (AVG is
  // valid on integers too: integer division, see src/coll/functors.h.)
  const OpInfo ops[] = {
      {"sum", MPI_SUM, Gen::Sum, false, false},       {"prod", MPI_PROD, Gen::Prod, false, false},
      {"min", MPI_MIN, Gen::MinMax, false, false},    {"max", MPI_MAX, Gen::MinMax, false, false},
      {"avg", MPIX_GPU_AVG, Gen::Sum, false, true},   {"land", MPI_LAND, Gen::Logical, true, false},
      {"lor", MPI_LOR, Gen::Logical, true, false},    {"lxor", MPI_LXOR, Gen::Logical, true, false},
      {"band", MPI_BAND, Gen::Bits, true, false},     {"bor", MPI_BOR, Gen::Bits, true, false},
      {"bxor", MPI_BXOR, Gen::Bits, true, false},
  };
  const Coll reductions[] = {Coll::Allreduce, Coll::Reduce, Coll::ReduceScatter};
  const size_t ntypes = sizeof reduceTypes / sizeof reduceTypes[0], nops = sizeof ops / sizeof ops[0];
  for (size_t ti = 0; ti < ntypes; ++ti) {
    const TypeInfo &t = reduceTypes[ti];
    const std::vector<size_t> counts = countsFor(t);
    for (size_t oi = 0; oi < nops; ++oi) {
      if ((ops[oi].integerOnly && !isInteger(t)) || !opWanted(ops[oi].name)) continue;
      for (size_t si = 0; si < counts.size(); ++si)
        for (Coll c : reductions)
          runCase(Case{c, &t, &ops[oi], counts[si], int(si % size_t(g_size))}, seedOf(c, ti, oi, counts[si]), oi == 0);
    }
  }
  // Many slices per channel on every channel: one large size, float sum only
  // to keep the run short.
  for (size_t ti = 0; ti < ntypes; ++ti)
    if (reduceTypes[ti].type == MPI_FLOAT)
      for (Coll c : reductions)
        runCase(Case{c, &reduceTypes[ti], &ops[0], largeBytes() / 4, g_size - 1}, seedOf(c, ti, 0, largeBytes()), true);

  // MINLOC and MAXLOC on the pair types, the 16-byte ones on Simple only.
  // Types with gaps (MPI_DOUBLE_INT, MPI_SHORT_INT) are staged and must leave
  // the gaps of recvbuf alone; their in-place variants would need the
  // reference to start from the in-place input, so they run out of place.
  const TypeInfo pairTypes[] = {
      {"2int", MPI_2INT, 8, Kind::Pair, 0, 0, 4, 4, 4, false, false},
      {"float_int", MPI_FLOAT_INT, 8, Kind::Pair, 0, 0, 4, 4, 4, true, false},
      {"double_int", MPI_DOUBLE_INT, 16, Kind::Pair, 0, 0, 8, 8, 4, true, false},
      {"short_int", MPI_SHORT_INT, 8, Kind::Pair, 0, 0, 2, 4, 4, false, false},
      {"2double_precision", MPI_2DOUBLE_PRECISION, 16, Kind::Pair, 0, 0, 8, 8, 8, true, true},
  };
  const OpInfo locOps[] = {{"minloc", MPI_MINLOC, Gen::Loc, false, false}, {"maxloc", MPI_MAXLOC, Gen::Loc, false, false}};
  for (size_t ti = 0; ti < sizeof pairTypes / sizeof pairTypes[0]; ++ti) {
    const TypeInfo &t = pairTypes[ti];
    const bool gaps = t.indexOffset + t.indexBytes < t.size || t.indexOffset > t.valueBytes;
    const std::vector<size_t> counts = countsFor(t);
    for (size_t oi = 0; oi < 2; ++oi)
      for (size_t si = 0; si < counts.size() && opWanted(locOps[oi].name); ++si)
        for (Coll c : reductions)
          runCase(Case{c, &t, &locOps[oi], counts[si], int(si % size_t(g_size))}, seedOf(c, 50 + ti, oi, counts[si]),
                  oi == 0 && !gaps);
    for (Coll c : {Coll::Bcast, Coll::Allgather, Coll::Alltoall})
      runCase(Case{c, &t, nullptr, counts[3], 0}, seedOf(c, 50 + ti, 9, counts[3]), false);
  }

  // The copy collectives move bytes whatever the type: bytes (odd lengths)
  // and float (whole words) cover them.
  const TypeInfo copyTypes[] = {{"byte", MPI_BYTE, 1, Kind::Unsigned, 0, 0},
                                {"float", MPI_FLOAT, 4, Kind::Float, 0, 0}};
  const Coll copies[] = {Coll::Bcast, Coll::Allgather, Coll::Alltoall};
  for (size_t ti = 0; ti < 2; ++ti) {
    std::vector<size_t> counts = countsFor(copyTypes[ti]);
    if (ti == 1) counts.push_back(largeBytes() / 4);
    for (size_t si = 0; si < counts.size(); ++si)
      for (Coll c : copies)
        runCase(Case{c, &copyTypes[ti], nullptr, counts[si], int(si % size_t(g_size))},
                seedOf(c, 100 + ti, 0, counts[si]), true);
  }

  // Buffers at byte offsets from cudaMalloc's alignment, equal and mutually
  // different, so the data mover's peeled heads, shifted loads and narrow
  // stores (src/cuda/reduce_copy.cuh) run, over one and several channels.
  // Floats stay 4-byte aligned, as C requires.
  const int byteOffsets[][2] = {{1, 1}, {1, 4}, {4, 8}, {8, 3}, {0, 5}};
  const int floatOffsets[][2] = {{4, 4}, {4, 8}, {8, 12}, {12, 0}};
  const TypeInfo &int8 = reduceTypes[0], &flt = reduceTypes[8];
  for (size_t count : {size_t(1031), 2 * kSlotBytes + 5}) {
    for (const auto &o : byteOffsets) {
      const int which = o[0] * 16 + o[1];
      for (Coll c : copies)
        runCase(Case{c, &copyTypes[0], nullptr, count, 1 % g_size, o[0], o[1]}, seedOf(c, 150, which, count), false);
      runCase(Case{Coll::Allreduce, &int8, &ops[0], count, 0, o[0], o[1]}, seedOf(Coll::Allreduce, 151, which, count),
              false);
    }
    for (const auto &o : floatOffsets)
      runCase(Case{Coll::Allreduce, &flt, &ops[0], count, 0, o[0], o[1]},
              seedOf(Coll::Allreduce, 152, o[0] * 16 + o[1], count), false);
  }
}

// 16 slots of Simple and one float more: allreduce, reduce and bcast take
// a channel per slot of the vector, the block collectives one per round
// of loads (32 KiB at 512 threads) of a rank's block, so every collective
// fills the 16 channels of a GPU build, with a ragged last piece.
void runGeometrySuite() {
  const TypeInfo flt{"float", MPI_FLOAT, 4, Kind::Float, 0, 0};
  const OpInfo sum{"sum", MPI_SUM, Gen::Sum, false, false};
  const size_t count = 16 * kSlotBytes / 4 + 1;
  for (Coll c : {Coll::Allreduce, Coll::Reduce, Coll::ReduceScatter})
    runCase(Case{c, &flt, &sum, count, g_size - 1}, seedOf(c, 200, 0, count), false);
  for (Coll c : {Coll::Bcast, Coll::Allgather, Coll::Alltoall})
    runCase(Case{c, &flt, nullptr, count, g_size - 1}, seedOf(c, 201, 0, count), false);
}

}  // namespace gpu_test
