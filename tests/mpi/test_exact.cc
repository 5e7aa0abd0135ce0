// CHORUS_REPRODUCIBLE=exact (issue 30), run by run-exact.sh: every element's
// result against an exact reference computed here, independently of the
// library (Shewchuk's exact partial sums, rounded once as Python's
// math.fsum does), and a digest of the result bits that the launcher
// compares between runs of another rank count, permutation, algorithm and
// layout.  Built with EXACT_ON_DEVICE (tests/gpu, test_exact_gpu), the
// same on device buffers.
//
// Each element has three contributions, held by the ranks a permutation
// (TEST_PERM_SEED, per element) says; the other ranks hold -0, which must
// change nothing.  The data: mixed signs and exponents across the whole
// range, exact and near cancellations, subnormals, zeros, infinities and
// NaN, sums that overflow, and a contribution below the window (then the
// result is within 1 ulp of the exact sum, and the same bits every run).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../unit/exact_ref.h"
#include "chorus.h"
#include "rank_test.h"
#ifdef EXACT_ON_DEVICE
#include <cuda_runtime.h>
#endif

using chorus_test::exactSum;

namespace {

int rank = 0, size = 1;
std::string failure;
uint64_t digest = 1469598103934665603ull;

void fail(const std::string &what) {
  if (failure.empty()) failure = what;
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Rng {
  uint64_t s;
  uint64_t next() { return s = mix(s); }
  int range(int lo, int hi) { return lo + int(next() % uint64_t(hi - lo + 1)); }
};

// The element types, as doubles they hold exactly.
enum class Kind { Double, Float, Half, BFloat16 };
struct KindInfo {
  const char *name;
  int precision, minExp, maxExp;  // normal exponents of 1.x
  int spread;                     // exponents apart within an element: exact sums fit in a double
};
KindInfo info(Kind k) {
  switch (k) {
    case Kind::Double: return {"double", 53, -1022, 1023, 70};
    case Kind::Float: return {"float", 24, -126, 127, 25};
    case Kind::Half: return {"half", 11, -14, 15, 25};
    default: return {"bfloat16", 8, -126, 127, 14};
  }
}

uint16_t bf16Of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
// `x` (a sum exact in double) rounded once into the type, as bits.
uint64_t bitsOf(Kind k, double x) {
  switch (k) {
    case Kind::Double: {
      uint64_t u;
      memcpy(&u, &x, 8);
      return u;
    }
    case Kind::Float: {
      const float f = float(x);
      uint32_t u;
      memcpy(&u, &f, 4);
      return u;
    }
    case Kind::Half: {
      const _Float16 h = _Float16(x);
      uint16_t u;
      memcpy(&u, &h, 2);
      return u;
    }
    default: return bf16Of(float(x));  // bfloat16 data keeps sums exact in float
  }
}
double valueOf(Kind k, uint64_t bits) {
  switch (k) {
    case Kind::Double: {
      double d;
      memcpy(&d, &bits, 8);
      return d;
    }
    case Kind::Float: {
      const uint32_t u = uint32_t(bits);
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
    case Kind::Half: {
      const uint16_t u = uint16_t(bits);
      _Float16 h;
      memcpy(&h, &u, 2);
      return double(h);
    }
    default: {
      const uint32_t u = uint32_t(bits) << 16;
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
  }
}
bool isNan(Kind k, uint64_t bits) { return std::isnan(valueOf(k, bits)); }

// A value of the type: `bits` significant bits, top exponent `e`.
double number(Rng &r, const KindInfo &ki, int e, int bits) {
  if (bits > ki.precision) bits = ki.precision;
  const uint64_t m = (uint64_t(1) << (bits - 1)) | (r.next() & ((uint64_t(1) << (bits - 1)) - 1));
  double v = std::ldexp(double(m), e - (bits - 1));
  return (r.next() & 1) ? -v : v;
}

// The three contributions of element `i`, and whether the exact sum is
// the reference (else: within 1 ulp, a contribution below the window).
bool contributions(Kind k, size_t i, bool avgData, double c[3]) {
  const KindInfo ki = info(k);
  Rng r{mix(i * 7919 + uint64_t(k))};
  const int top = r.range(std::min(ki.minExp + ki.spread, ki.maxExp - 2), ki.maxExp - 2);
  if (avgData) {  // 40-bit values close together: the sum is exact in double, its division rounds once
    for (int j = 0; j < 3; ++j) c[j] = number(r, ki, top - r.range(0, 8), 40);
    return true;
  }
  switch (i % 9) {
    case 0: case 8:
      for (int j = 0; j < 3; ++j) c[j] = number(r, ki, top - r.range(0, ki.spread), ki.precision);
      return true;
    case 1:  // exact cancellation
      c[0] = number(r, ki, top, ki.precision);
      c[1] = -c[0];
      c[2] = number(r, ki, top - r.range(0, ki.spread), ki.precision);
      return true;
    case 2: {  // near cancellation: the top bits go, the bottom ones decide
      c[0] = number(r, ki, top, ki.precision);
      const double ulp = std::ldexp(1.0, top - (ki.precision - 1));
      c[1] = -(c[0] - std::copysign(ulp * double(r.range(1, 3)), c[0]));
      c[2] = number(r, ki, top - ki.precision - r.range(0, 4), ki.precision);
      return true;
    }
    case 3:  // subnormals and the smallest normals
      for (int j = 0; j < 3; ++j) c[j] = number(r, ki, ki.minExp - r.range(0, ki.precision / 2), ki.precision);
      return true;
    case 4:  // zeros: all -0, or mixed
      c[0] = -0.0;
      c[1] = (i / 9) % 2 ? 0.0 : -0.0;
      c[2] = -0.0;
      return true;
    case 5: {  // infinities and NaN
      const double inf = HUGE_VAL;
      const int which = int((i / 9) % 4);
      c[0] = which == 3 ? std::nan("") : inf;
      c[1] = which == 1 ? -inf : number(r, ki, top, ki.precision);
      c[2] = which == 2 ? inf : number(r, ki, top, ki.precision);
      return true;
    }
    case 6:  // the sum overflows (or, with mixed signs, does not)
      for (int j = 0; j < 3; ++j) c[j] = number(r, ki, ki.maxExp, ki.precision);
      return true;
    default:  // 7: a contribution far below the window
      c[0] = number(r, ki, top, ki.precision);
      c[1] = number(r, ki, top - r.range(0, 4), ki.precision);
      // (Half's window holds its whole range: there it is exact.)
      c[2] = number(r, ki, std::max(ki.minExp, top - 140), ki.precision);
      return k == Kind::Half;
  }
}

// Which of the three contributions rank `rank` holds for element i (-1: none).
int holder(size_t i, uint64_t seed) {
  std::vector<int> perm(size_t(size), -1);
  for (int j = 0; j < size; ++j) perm[size_t(j)] = j;
  Rng r{mix(i ^ (seed << 32))};
  for (int j = size - 1; j > 0; --j) std::swap(perm[size_t(j)], perm[size_t(r.range(0, j))]);
  return perm[size_t(rank)] < 3 ? perm[size_t(rank)] : -1;
}

int bytesOf(Kind k) { return k == Kind::Double ? 8 : k == Kind::Float ? 4 : 2; }

MPI_Datatype typeOf(Kind k) {
  switch (k) {
    case Kind::Double: return MPI_DOUBLE;
    case Kind::Float: return MPI_FLOAT;
    case Kind::Half: return MPIX_GPU_FLOAT16;
    default: return MPIX_GPU_BFLOAT16;
  }
}

// This rank's input for `count` elements, and the expected result bits.
struct Case {
  std::vector<unsigned char> input;
  std::vector<uint64_t> expected;
  std::vector<bool> exact;
};

Case makeCase(Kind k, size_t count, uint64_t seed, bool avg) {
  Case c;
  const int b = bytesOf(k);
  c.input.resize(count * size_t(b));
  c.expected.resize(count);
  c.exact.resize(count);
  for (size_t i = 0; i < count; ++i) {
    double v[3];
    c.exact[i] = contributions(k, i, avg, v);
    for (double &x : v) x = valueOf(k, bitsOf(k, x));  // what the type holds of it (subnormals lose bits)
    const int h = holder(i, seed);
    const uint64_t mine = bitsOf(k, h >= 0 ? v[h] : -0.0);
    memcpy(&c.input[i * size_t(b)], &mine, size_t(b));  // little-endian: the low bytes
    bool nan = false, plus = false, minus = false;
    for (double x : v) {
      nan = nan || std::isnan(x);
      plus = plus || x == HUGE_VAL;
      minus = minus || x == -HUGE_VAL;
    }
    double expect;
    if (nan || (plus && minus)) expect = std::nan("");
    else if (plus || minus) expect = plus ? HUGE_VAL : -HUGE_VAL;
    else {
      std::vector<double> terms(v, v + 3);
      // The -0 of the ranks holding nothing: they change nothing.
      for (int extra = 3; extra < size; ++extra) terms.push_back(-0.0);
      // Near the top of the range, summed scaled down (exact for such
      // terms): the partial sums must not overflow where the sum does.
      double largest = 0;
      for (double x : terms) largest = std::max(largest, std::fabs(x));
      const int scale = largest >= std::ldexp(1.0, 1000) ? 16 : 0;
      for (double &x : terms) x = std::ldexp(x, -scale);
      expect = std::ldexp(exactSum(terms), scale);
      if (avg) expect /= size;
    }
    c.expected[i] = bitsOf(k, expect);
  }
  return c;
}

double ulpOf(Kind k, double x) {
  const KindInfo ki = info(k);
  int e = 0;
  std::frexp(x, &e);
  return std::ldexp(1.0, std::max(e - 1, ki.minExp) - (ki.precision - 1));
}

// Compare results[first..first+n) with the case's expectations.
// `digested`: a result whose bits every run must share (not a rank's own
// block, not an average over this run's rank count).
void verify(Kind k, const Case &c, const unsigned char *out, size_t first, size_t n, const std::string &what,
            bool digested = true) {
  const int b = bytesOf(k);
  for (size_t i = 0; i < n; ++i) {
    uint64_t got = 0;
    memcpy(&got, out + i * size_t(b), size_t(b));
    const uint64_t want = c.expected[first + i];
    if (digested) digest = (digest ^ got) * 1099511628211ull;
    if (got == want || (isNan(k, want) && isNan(k, got))) continue;
    const double g = valueOf(k, got), w = valueOf(k, want);
    if (!c.exact[first + i] && std::fabs(g - w) <= ulpOf(k, w)) continue;
    char text[256];
    snprintf(text, sizeof text, "%s: element %zu (case %zu): got %.17g (0x%llx), the exact sum is %.17g (0x%llx)",
             what.c_str(), first + i, (first + i) % 9, g, (unsigned long long)got, w, (unsigned long long)want);
    return fail(text);
  }
}

void check(int rc, const std::string &what) {
  if (rc != MPI_SUCCESS) fail(what + ": " + errorText(rc));
}

// The stream of the enqueued calls: a stream of the test's own on the
// device; none for host buffers (which complete before the call returns).
MPIX_Gpu_stream testStream() {
#ifdef EXACT_ON_DEVICE
  static cudaStream_t stream = [] {
    cudaStream_t created = nullptr;
    if (cudaStreamCreate(&created) != cudaSuccess) {
      fprintf(stderr, "FAIL: cudaStreamCreate\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return created;
  }();
  return stream;
#else
  return nullptr;
#endif
}

void waitTestStream() {
#ifdef EXACT_ON_DEVICE
  if (cudaStreamSynchronize(testStream()) != cudaSuccess) {
    fprintf(stderr, "FAIL: cudaStreamSynchronize\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
#endif
}

// Run `call(in, out)` on this program's buffers: host memory, or (built
// with EXACT_ON_DEVICE, tests/gpu) copies of them in device memory, the
// result copied back.  `in` may be MPI_IN_PLACE.
template <typename Call>
int onBuffers(const void *in, size_t inBytes, void *out, size_t outBytes, Call call) {
#ifdef EXACT_ON_DEVICE
  // The test's own CUDA calls: one that fails ends the job (the other
  // ranks would wait in the collective this rank could not call).
  const auto cuda = [](cudaError_t e, const char *what) {
    if (e == cudaSuccess) return;
    fprintf(stderr, "FAIL: %s: %s\n", what, cudaGetErrorString(e));
    MPI_Abort(MPI_COMM_WORLD, 1);
  };
  void *din = nullptr, *dout = nullptr;
  if (in != MPI_IN_PLACE) {
    cuda(cudaMalloc(&din, inBytes ? inBytes : 1), "cudaMalloc of the send buffer");
    cuda(cudaMemcpy(din, in, inBytes, cudaMemcpyHostToDevice), "cudaMemcpy of the input to the device");
  }
  cuda(cudaMalloc(&dout, outBytes ? outBytes : 1), "cudaMalloc of the receive buffer");
  cuda(cudaMemcpy(dout, out, outBytes, cudaMemcpyHostToDevice), "cudaMemcpy of the receive buffer to the device");
  const int rc = call(in == MPI_IN_PLACE ? MPI_IN_PLACE : static_cast<const void *>(din), dout);
  cuda(cudaMemcpy(out, dout, outBytes, cudaMemcpyDeviceToHost), "cudaMemcpy of the result from the device");
  if (din) cuda(cudaFree(din), "cudaFree");
  cuda(cudaFree(dout), "cudaFree");
  return rc;
#else
  (void)inBytes;
  (void)outBytes;
  return call(in, out);
#endif
}

void runAll(MPI_Comm comm, uint64_t seed) {
  const Kind kinds[] = {Kind::Double, Kind::Float, Kind::Half, Kind::BFloat16};
  // 500 elements: the small calls' single allgather; 1200 doubles: the
  // allgather at 3 ranks, the passes at 4 and 5 (the launcher compares
  // the bits of both); 3000: every case many times, the passes; 40000
  // doubles: several slots per link.
  for (Kind k : kinds) {
    for (size_t count : {size_t(500), size_t(1200), size_t(3000), size_t(k == Kind::Double ? 40000 : 0)}) {
      if (!count) continue;
      const std::string name = std::string(info(k).name) + " x " + std::to_string(count);
      const Case c = makeCase(k, count, seed, false);
      std::vector<unsigned char> out(c.input.size());
      check(onBuffers(c.input.data(), c.input.size(), out.data(), out.size(),
                      [&](const void *i, void *o) {
                        return MPIX_Allreduce_gpu(i, o, MPI_Count(count), typeOf(k), MPI_SUM, comm);
                      }),
            "allreduce " + name);
      verify(k, c, out.data(), 0, count, "allreduce " + name);
    }
  }
  // 3000 elements, and 140000: more than one of the passes' chunks (64Ki
  // elements, of each block for reduce-scatter), the last one short.
  for (const size_t n : {size_t(3000), size_t(140000)}) {
    const Case c = makeCase(Kind::Double, n, seed, false);
    std::vector<unsigned char> out(c.input.size());
    // In place.
    out = c.input;
    check(onBuffers(MPI_IN_PLACE, 0, out.data(), out.size(),
                    [&](const void *i, void *o) { return MPIX_Allreduce_gpu(i, o, MPI_Count(n), MPI_DOUBLE, MPI_SUM, comm); }),
          "in-place allreduce x " + std::to_string(n));
    verify(Kind::Double, c, out.data(), 0, n, "in-place allreduce x " + std::to_string(n));
    // Reduce to the last rank.
    std::fill(out.begin(), out.end(), 0);
    check(onBuffers(c.input.data(), c.input.size(), out.data(), out.size(),
                    [&](const void *i, void *o) {
                      return MPIX_Reduce_gpu(i, o, MPI_Count(n), MPI_DOUBLE, MPI_SUM, size - 1, comm);
                    }),
          "reduce x " + std::to_string(n));
    if (rank == size - 1) verify(Kind::Double, c, out.data(), 0, n, "reduce x " + std::to_string(n), false);
    // Reduce-scatter: blocks of n / size.
    const size_t block = n / size_t(size);
    std::vector<unsigned char> mine(block * 8);
    check(onBuffers(c.input.data(), c.input.size(), mine.data(), mine.size(),
                    [&](const void *i, void *o) {
                      return MPIX_Reduce_scatter_block_gpu(i, o, MPI_Count(block), MPI_DOUBLE, MPI_SUM, comm);
                    }),
          "reduce-scatter x " + std::to_string(n));
    verify(Kind::Double, c, mine.data(), block * size_t(rank), block, "reduce-scatter x " + std::to_string(n), false);
    // Nonblocking.
    check(onBuffers(c.input.data(), c.input.size(), out.data(), out.size(),
                    [&](const void *i, void *o) {
                      MPI_Request req;
                      const int rc = MPIX_Iallreduce_gpu(i, o, MPI_Count(n), MPI_DOUBLE, MPI_SUM, comm, &req);
                      if (rc == MPI_SUCCESS) MPI_Wait(&req, MPI_STATUS_IGNORE);
                      return rc;
                    }),
          "nonblocking allreduce x " + std::to_string(n));
    verify(Kind::Double, c, out.data(), 0, n, "nonblocking allreduce x " + std::to_string(n));
    // Stream-ordered.
    check(onBuffers(c.input.data(), c.input.size(), out.data(), out.size(),
                    [&](const void *i, void *o) {
                      const int rc = MPIX_Allreduce_gpu_enqueue(i, o, MPI_Count(n), MPI_DOUBLE, MPI_SUM, comm,
                                                                testStream());
                      waitTestStream();
                      return rc;
                    }),
          "enqueued allreduce x " + std::to_string(n));
    verify(Kind::Double, c, out.data(), 0, n, "enqueued allreduce x " + std::to_string(n));
    // Complex: per part.
    check(onBuffers(c.input.data(), c.input.size(), out.data(), out.size(),
                    [&](const void *i, void *o) {
                      return MPIX_Allreduce_gpu(i, o, MPI_Count(n / 2), MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm);
                    }),
          "complex allreduce x " + std::to_string(n));
    verify(Kind::Double, c, out.data(), 0, n, "complex allreduce x " + std::to_string(n));
  }
  const size_t n = 3000;
  const Case c = makeCase(Kind::Double, n, seed, false);
  std::vector<unsigned char> out(c.input.size()), mine(n * 8);
  // MPIX_GPU_AVG: the exact sum divided, rounded once.
  for (size_t count : {size_t(200), n}) {
    const Case a = makeCase(Kind::Double, count, seed, true);
    check(onBuffers(a.input.data(), a.input.size(), out.data(), out.size(),
                    [&](const void *i, void *o) {
                      return MPIX_Allreduce_gpu(i, o, MPI_Count(count), MPI_DOUBLE, MPIX_GPU_AVG, comm);
                    }),
          "average");
    verify(Kind::Double, a, out.data(), 0, count, "average x " + std::to_string(count), false);
  }
  // The small calls (one allgather and a local sum: at most 512 bytes a
  // rank on one node, 32 KiB across nodes): allreduce, reduce and
  // reduce-scatter of 12 doubles a rank's block.
  const size_t few = size_t(size) * 12;
  std::fill(out.begin(), out.end(), 0);
  check(onBuffers(c.input.data(), c.input.size(), out.data(), out.size(),
                  [&](const void *i, void *o) { return MPIX_Allreduce_gpu(i, o, MPI_Count(few), MPI_DOUBLE, MPI_SUM, comm); }),
        "small allreduce");
  verify(Kind::Double, c, out.data(), 0, few, "small allreduce", false);
  std::fill(out.begin(), out.end(), 0);
  check(onBuffers(c.input.data(), c.input.size(), out.data(), out.size(),
                  [&](const void *i, void *o) { return MPIX_Reduce_gpu(i, o, MPI_Count(few), MPI_DOUBLE, MPI_SUM, 0, comm); }),
        "small reduce");
  if (rank == 0) verify(Kind::Double, c, out.data(), 0, few, "small reduce", false);
  check(onBuffers(c.input.data(), c.input.size(), mine.data(), mine.size(),
                  [&](const void *i, void *o) {
                    return MPIX_Reduce_scatter_block_gpu(i, o, MPI_Count(few / size_t(size)), MPI_DOUBLE, MPI_SUM,
                                                         comm);
                  }),
        "small reduce-scatter");
  verify(Kind::Double, c, mine.data(), few / size_t(size) * size_t(rank), few / size_t(size), "small reduce-scatter",
         false);
  // Order-dependent ops on floats are refused; integers stay exact as they were.
  std::vector<double> d(8, 1.5), e(8);
  const int rc = MPIX_Allreduce_gpu(d.data(), e.data(), 8, MPI_DOUBLE, MPI_PROD, comm);
  if (rc == MPI_SUCCESS) fail("MPI_PROD on MPI_DOUBLE was accepted in the exact mode");
  else if (!contains(errorText(rc), "exact mode")) fail("the MPI_PROD refusal does not name the mode: " + errorText(rc));
  std::vector<long> li(64), lo(64), ref(64);
  for (size_t i = 0; i < li.size(); ++i) li[i] = long(mix(i + uint64_t(rank)) % 1000) - 500;
  check(MPIX_Allreduce_gpu(li.data(), lo.data(), 64, MPI_LONG, MPI_SUM, comm), "long allreduce");
  MPI_Allreduce(li.data(), ref.data(), 64, MPI_LONG, MPI_SUM, comm);
  if (lo != ref) fail("long allreduce differs from MPI_Allreduce");
}

}  // namespace

int main(int argc, char **argv) {
  initRanks(&argc, &argv, &rank, &size);
#ifdef EXACT_ON_DEVICE
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    if (rank == 0) printf("skipped: no GPU\n");
    MPI_Finalize();
    return 77;
  }
  cudaSetDevice(rank % devices);
#endif
  const char *seedText = getenv("TEST_PERM_SEED");
  const uint64_t seed = seedText ? strtoull(seedText, nullptr, 10) : 1;
  if (size < 3) fail("needs 3 ranks or more (three contributions per element)");
  // The mode from CHORUS_REPRODUCIBLE=exact, or else from the hint on
  // this communicator (MPIX_Comm_gpu_init's info).
  MPI_Comm comm = dupReturningErrors();
  const char *mode = getenv("CHORUS_REPRODUCIBLE");
  const bool byHint = !mode || strcmp(mode, "exact") != 0;
  if (byHint) {
    MPI_Info hint;
    MPI_Info_create(&hint);
    MPI_Info_set(hint, "chorus_reproducible", "exact");
    check(MPIX_Comm_gpu_init(comm, hint), "MPIX_Comm_gpu_init with chorus_reproducible = exact");
    MPI_Info_free(&hint);
  } else {
    // The hint "default" turns the mode off for one communicator: MPI_PROD
    // is taken there (1.5^size is exact whatever the order).
    MPI_Comm plain = dupReturningErrors();
    MPI_Info hint;
    MPI_Info_create(&hint);
    MPI_Info_set(hint, "chorus_reproducible", "default");
    check(MPIX_Comm_gpu_init(plain, hint), "MPIX_Comm_gpu_init with chorus_reproducible = default");
    double x = 1.5, y = 0;
    check(MPIX_Allreduce_gpu(&x, &y, 1, MPI_DOUBLE, MPI_PROD, plain), "MPI_PROD under the hint default");
    if (y != std::pow(1.5, size)) fail("MPI_PROD under the hint default gave " + std::to_string(y));
    // A value that is neither: refused, naming it.
    MPI_Info_set(hint, "chorus_reproducible", "exactly");
    const int rc = MPIX_Comm_gpu_init(plain, hint);
    if (rc == MPI_SUCCESS || !contains(errorText(rc), "\"exactly\""))
      fail("the hint chorus_reproducible = exactly was not refused by name: " + errorText(rc));
    MPI_Info_free(&hint);
    MPI_Comm_free(&plain);
  }
  if (failure.empty()) runAll(comm, seed);
  // The digest of every result this rank checked but its own share of the
  // reduce-scatter, the same on every rank and every run.
  unsigned long long all = digest;
  if (rank == 0) printf("digest rank 0: %016llx\n", all);
  if (rank == 0) printf("mode from %s\n", byHint ? "the hint" : "CHORUS_REPRODUCIBLE");
  MPI_Comm_free(&comm);
  const int rc = reportRank(rank, failure, "exact sums equal the reference");
  MPI_Finalize();
  return rc;
}
