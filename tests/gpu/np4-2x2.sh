#!/bin/sh
# Device buffers on 2 nodes of 2 ranks (CHORUS_HOSTID per rank): staged
# through pinned host memory and carried by the host engine over UCX.  One
# protocol suffices: the kernels do not run across nodes.
CHORUS_TEST_LAYOUT=2x2 CHORUS_TEST_PROTOS=simple \
  exec "$(dirname "$0")/run-gpu.sh" 4 test_gpu
