// The exact mode's per-element steps (src/coll/exact_sum.h) on one core:
// ns per element for the exponent key, the limbs and the rounding, on 1M
// doubles of mixed signs and exponents, each step timed over a second pass
// (pages already faulted in); the limbs both scalar and in vector registers,
// and the sum of two contributions by the scalar steps, by the FPU's pair
// form (coll/exact_pair.cc) and fused in vector registers
// (coll/exact_avx512.cc), which must agree, and of three fused.  Not a test:
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

// Best ns per element of `sum(count)` over later passes: on the whole
// vector (n elements, from memory), and on a block that stays in cache (an
// owner sums its block in chunks of 64Ki elements; this is 16Ki, 256 KiB of
// contributions), to tell the arithmetic from the memory traffic.
struct Timing {
  double whole = 1e30, cached = 1e30;
};
template <typename Sum>
Timing timeSum(Sum sum, size_t n) {
  constexpr size_t block = 16384;
  constexpr int repeats = 64;
  Timing best;
  for (int pass = 0; pass < 6; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    sum(n);
    const auto t1 = std::chrono::steady_clock::now();
    for (int repeat = 0; repeat < repeats; ++repeat) sum(block);
    const auto t2 = std::chrono::steady_clock::now();
    if (pass == 0) continue;
    best.whole = std::min(best.whole, std::chrono::duration<double, std::nano>(t1 - t0).count() / double(n));
    best.cached = std::min(best.cached, std::chrono::duration<double, std::nano>(t2 - t1).count() / double(repeats * block));
  }
  return best;
}

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
  // sums rounded: the scalar steps one element at a time, the FPU's pair
  // form (coll/exact_pair.cc: what an owner runs at 2 ranks) and the fused
  // integer form (from 3 ranks on), which must all agree; and three
  // contributions by the fused form.
  std::vector<uint64_t> other(n), third(n), vectorOut(n), pairOut(n);
  for (size_t i = 0; i < n; ++i) other[i] = bits[(i + 1) % n], third[i] = bits[(i + 2) % n];
  const unsigned char *vectors[3] = {reinterpret_cast<const unsigned char *>(bits.data()),
                                     reinterpret_cast<const unsigned char *>(other.data()),
                                     reinterpret_cast<const unsigned char *>(third.data())};
  double scalarBest = 1e30;
  for (int pass = 0; pass < 6; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) out[i] = exactSumElement(vectors, 2, i * 8, f);
    const auto t1 = std::chrono::steady_clock::now();
    if (pass > 0) scalarBest = std::min(scalarBest, std::chrono::duration<double, std::nano>(t1 - t0).count() / double(n));
  }
  unsigned char *const vectorBytes = reinterpret_cast<unsigned char *>(vectorOut.data());
  const bool fused = exactSumVector(DataType::Float64, vectors, 2, 0, vectorBytes);
  const bool paired = exactSumOfTwo(DataType::Float64, vectors, 0, vectorBytes);
  const Timing pair = timeSum([&](size_t count) { exactSumOfTwo(DataType::Float64, vectors, count, vectorBytes); }, n);
  const Timing two = timeSum([&](size_t count) { exactSumVector(DataType::Float64, vectors, 2, count, vectorBytes); }, n);
  const Timing three = timeSum([&](size_t count) { exactSumVector(DataType::Float64, vectors, 3, count, vectorBytes); }, n);
  if (paired) {
    exactSumOfTwo(DataType::Float64, vectors, n, reinterpret_cast<unsigned char *>(pairOut.data()));
    for (size_t i = 0; i < n; ++i) differ += out[i] != pairOut[i];
  }
  if (fused) {
    exactSumVector(DataType::Float64, vectors, 2, n, vectorBytes);
    for (size_t i = 0; i < n; ++i) differ += out[i] != vectorOut[i];
  }
  printf("double, 1M elements, best of the later passes, ns per element:\n  key %.2f\n  limbs %.2f scalar, ",
         best[0], best[1]);
  if (vector) printf("%.2f vector\n", best[3]);
  else printf("no vector form on this CPU\n");
  printf("  rounding %.2f scalar (exact values)\n  sum of 2 contributions (keys, limbs, rounding) %.2f scalar", best[2],
         scalarBest);
  if (paired) printf(", %.2f by the FPU's pair form (%.2f on a block in cache)", pair.whole, pair.cached);
  if (fused) printf(", %.2f fused in AVX-512 registers (%.2f in cache)", two.whole, two.cached);
  printf("\n");
  if (fused) printf("  sum of 3 contributions %.2f fused (%.2f on a block in cache)\n", three.whole, three.cached);
  else printf("  no fused form on this CPU\n");
  printf("%zu values not given back, %zu vector results differ from the scalar ones\n", wrong, differ);
  return wrong || differ ? 1 : 0;
}
