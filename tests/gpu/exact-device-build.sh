#!/bin/sh
# exact-device-build.sh - src/coll/exact_sum.h, which the host executor
# runs, still compiles as device code (exact_device.cu, every type's three
# steps in a kernel) with this build's nvcc and architectures.
# Exit status: 0 pass, 1 fail, 77 when nvcc did not build the kernels.
set -u
srcdir=${srcdir:-.}
if [ -z "${NVCC:-}" ]; then
  echo "skipped: the kernels were not compiled by nvcc"
  exit 77
fi
# shellcheck disable=SC2086
if ! "$NVCC" -std=c++17 ${NVCC_GENCODE:-} -I"$srcdir/../../src" -c "$srcdir/exact_device.cu" -o exact_device.o; then
  echo "FAIL: src/coll/exact_sum.h does not compile as device code"
  exit 1
fi
rm -f exact_device.o
echo "PASS: the exact sums' steps compile as device code"
