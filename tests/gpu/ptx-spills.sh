#!/bin/sh
# ptx-spills.sh - no kernel of this build spills registers: ptxas's report
# of every instantiation (written by the nvcc build next to each object,
# src/cuda/*.ptxas) read by scripts/check-ptx.sh, which names any kernel
# that spills.  First it must catch the spill recorded in
# ptxas-spill.fixture, so a check that cannot fail does not pass.
# Exit status: 0 pass, 1 fail, 77 when nvcc did not build the kernels.
set -u
srcdir=${srcdir:-.}
check="$srcdir/../../scripts/check-ptx.sh"
if [ -z "${NVCC:-}" ]; then
  echo "skipped: the kernels were not compiled by nvcc"
  exit 77
fi
out=$(bash "$check" "$srcdir/ptxas-spill.fixture" 2>&1)
rc=$?
case $out in
  *"FAIL: spills in void chorus::collKernel<(chorus::Coll)4, double, chorus::FuncMax<double>, 0>"*) ;;
  *) rc=0 ;;
esac
if [ $rc != 1 ]; then
  echo "FAIL: check-ptx.sh did not name the spilling kernel of ptxas-spill.fixture (exit $rc):"
  echo "$out"
  exit 1
fi
echo "check-ptx.sh catches the recorded spill: $(echo "$out" | head -n 1)"
bash "$check" ../../src
