// The exact sum of finite doubles rounded once to nearest-even, computed
// independently of the library: Shewchuk's error-free partial sums, rounded
// with the half-way correction of CPython's math.fsum; -0 only when every
// term is -0.  The reference of tests/unit/test_exact_sum.cc and
// tests/mpi/test_exact.cc.
#pragma once

#include <cmath>
#include <utility>
#include <vector>

namespace chorus_test {

inline double exactSum(const std::vector<double> &xs) {
  std::vector<double> p;
  for (double x : xs) {
    size_t i = 0;
    for (double y : p) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y, lo = y - (hi - x);
      if (lo != 0.0) p[i++] = lo;
      x = hi;
    }
    p.resize(i);
    p.push_back(x);
  }
  if (p.empty()) return 0.0;
  size_t n = p.size();
  double hi = p[--n], lo = 0.0;
  while (n > 0) {
    const double x = hi, y = p[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) break;
  }
  if (n > 0 && ((lo < 0 && p[n - 1] < 0) || (lo > 0 && p[n - 1] > 0))) {
    const double y = lo * 2, x = hi + y;
    if (y == x - hi) hi = x;
  }
  if (hi == 0.0) {
    bool allNegativeZero = true;
    for (double x : xs) allNegativeZero = allNegativeZero && x == 0.0 && std::signbit(x);
    return allNegativeZero ? -0.0 : 0.0;
  }
  return hi;
}

}  // namespace chorus_test
