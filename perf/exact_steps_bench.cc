// The exact mode's per-element steps (src/coll/exact_sum.h) on one core:
// ns per element for the exponent key, the limbs and the rounding, on 1M
// doubles of mixed signs and exponents, each step timed over a second pass
// (pages already faulted in); the limbs both scalar and in vector registers,
// and the sum of two contributions by the scalar steps and fused in vector
// registers (coll/exact_avx512.cc), which must agree, and of three fused.  Not a test:
// `make -C perf exact_steps_bench && perf/exact_steps_bench` (perf/
// RESULTS.md, "Exact sums").  Checks that
// rounding the limbs of one value gives the value back.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "coll/exact_simd.h"
#include "coll/exact_sum.h"

using namespace chorus;

int main() {
  constexpr ExactFormat f = exactFormatOf(DataType::Float64);
  const size_t n = size_t(1) << 20;
  std::vector<uint64_t> bits(n), out(n);
  std::mt19937_64 rng(1);
  for (auto &b : bits) {  // sign, exponent within 2^-60 of 1, random mantissa
    const double v = std::ldexp(double(rng() >> 11) / double(uint64_t(1) << 53) + 0.5, -int(rng() % 60));
    const double x = (rng() & 1) ? -v : v;
    memcpy(&b, &x, 8);
  }
  std::vector<uint16_t> keys(n);
  std::vector<int64_t> limbs(n * size_t(f.limbs)), vectorLimbs(n * size_t(f.limbs));
  bool vector = false;
  double best[4] = {1e30, 1e30, 1e30, 1e30};
  size_t wrong = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) keys[i] = exactKey(bits[i], f);
    const auto t1 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) exactLimbs(bits[i], keys[i], f, &limbs[i * size_t(f.limbs)]);
    const auto t2 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) out[i] = exactRound(&limbs[i * size_t(f.limbs)], keys[i], 1, f);
    const auto t3 = std::chrono::steady_clock::now();
    vector = exactLimbsVector(DataType::Float64, reinterpret_cast<const unsigned char *>(bits.data()), n, keys.data(),
                              vectorLimbs.data());
    const auto t4 = std::chrono::steady_clock::now();
    const auto ns = [n](auto a, auto b) { return std::chrono::duration<double, std::nano>(b - a).count() / double(n); };
    if (pass > 0) {
      best[0] = std::min(best[0], ns(t0, t1));
      best[1] = std::min(best[1], ns(t1, t2));
      best[2] = std::min(best[2], ns(t2, t3));
      best[3] = std::min(best[3], ns(t3, t4));
    }
  }
  for (size_t i = 0; i < n; ++i) wrong += out[i] != bits[i];
  size_t differ = 0;
  if (vector)
    for (size_t i = 0; i < limbs.size(); ++i) differ += limbs[i] != vectorLimbs[i];
  // Two contributions per element (each value and its neighbour's), their
  // sums rounded: the scalar steps one element at a time, and the fused
  // sum in vector registers (what an owner runs in a collective).
  std::vector<uint64_t> other(n), vectorOut(n);
  for (size_t i = 0; i < n; ++i) other[i] = bits[(i + 1) % n];
  const unsigned char *vectors[2] = {reinterpret_cast<const unsigned char *>(bits.data()),
                                     reinterpret_cast<const unsigned char *>(other.data())};
  double sumBest[2] = {1e30, 1e30};
  bool fused = false;
  for (int pass = 0; pass < 6; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) {
      const uint16_t a = exactKey(bits[i], f), b = exactKey(other[i], f), key = a > b ? a : b;
      int64_t sums[kExactMaxLimbs] = {};
      exactLimbsInto<true>(bits[i], key, f, sums);
      exactLimbsInto<true>(other[i], key, f, sums);
      out[i] = exactRound(sums, key, 1, f);
    }
    const auto t1 = std::chrono::steady_clock::now();
    fused = exactSumVector(DataType::Float64, vectors, 2, n, reinterpret_cast<unsigned char *>(vectorOut.data()));
    const auto t2 = std::chrono::steady_clock::now();
    const auto ns = [n](auto a, auto b) { return std::chrono::duration<double, std::nano>(b - a).count() / double(n); };
    if (pass > 0) {
      sumBest[0] = std::min(sumBest[0], ns(t0, t1));
      sumBest[1] = std::min(sumBest[1], ns(t1, t2));
    }
  }
  // The same on a block that stays in cache (an owner sums its block in
  // chunks of 64Ki elements; this is 16Ki, 256 KiB of contributions), to
  // tell the arithmetic from the memory traffic.
  double cachedBest = 1e30;
  constexpr size_t block = 16384;
  for (int pass = 0; fused && pass < 6; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int repeat = 0; repeat < 64; ++repeat)
      exactSumVector(DataType::Float64, vectors, 2, block, reinterpret_cast<unsigned char *>(vectorOut.data()));
    const auto t1 = std::chrono::steady_clock::now();
    if (pass > 0)
      cachedBest = std::min(cachedBest, std::chrono::duration<double, std::nano>(t1 - t0).count() / double(64 * block));
  }
  // Three contributions: the fused sum's integer form, what an owner runs
  // from 3 ranks on (at 2 the FPU's addition gives the same bits).
  std::vector<uint64_t> third(n);
  for (size_t i = 0; i < n; ++i) third[i] = bits[(i + 2) % n];
  const unsigned char *threeVectors[3] = {vectors[0], vectors[1], reinterpret_cast<const unsigned char *>(third.data())};
  double threeBest = 1e30, threeCachedBest = 1e30;
  for (int pass = 0; fused && pass < 6; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    exactSumVector(DataType::Float64, threeVectors, 3, n, reinterpret_cast<unsigned char *>(vectorOut.data()));
    const auto t1 = std::chrono::steady_clock::now();
    for (int repeat = 0; repeat < 64; ++repeat)
      exactSumVector(DataType::Float64, threeVectors, 3, block, reinterpret_cast<unsigned char *>(vectorOut.data()));
    const auto t2 = std::chrono::steady_clock::now();
    if (pass > 0) {
      threeBest = std::min(threeBest, std::chrono::duration<double, std::nano>(t1 - t0).count() / double(n));
      threeCachedBest =
          std::min(threeCachedBest, std::chrono::duration<double, std::nano>(t2 - t1).count() / double(64 * block));
    }
  }
  if (fused) {
    exactSumVector(DataType::Float64, vectors, 2, n, reinterpret_cast<unsigned char *>(vectorOut.data()));
    for (size_t i = 0; i < n; ++i) differ += out[i] != vectorOut[i];
  }
  printf("double, 1M elements, best of the later passes, ns per element:\n  key %.2f\n  limbs %.2f scalar, ",
         best[0], best[1]);
  if (vector) printf("%.2f vector\n", best[3]);
  else printf("no vector form on this CPU\n");
  printf("  rounding %.2f scalar (exact values)\n  sum of 2 contributions (keys, limbs, rounding) %.2f scalar, ", best[2],
         sumBest[0]);
  if (fused)
    printf("%.2f fused in AVX-512 registers (%.2f on a block in cache)\n"
           "  sum of 3 contributions %.2f fused (%.2f on a block in cache)\n",
           sumBest[1], cachedBest, threeBest, threeCachedBest);
  else printf("no vector form on this CPU\n");
  printf("%zu values not given back, %zu vector results differ from the scalar ones\n", wrong, differ);
  return wrong || differ ? 1 : 0;
}
