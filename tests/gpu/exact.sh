#!/bin/sh
# CHORUS_REPRODUCIBLE=exact on device buffers (issue 30): test_exact_gpu
# (tests/mpi/test_exact.cc built with EXACT_ON_DEVICE) on 3 ranks, every
# element against the exact reference computed in the test.  The exact
# sums stage device buffers through host memory, so one protocol suffices.
CHORUS_REPRODUCIBLE=exact CHORUS_TEST_PROTOS=simple exec "$(dirname "$0")/run-gpu.sh" 3 test_exact_gpu
