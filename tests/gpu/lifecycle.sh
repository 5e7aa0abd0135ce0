#!/bin/sh
# Communicators set up and freed in a loop while another communicator's
# kernel waits for a peer (test_gpu_lifecycle.cc).  CHORUS_PROTO=auto runs
# both protocols (the freed communicator's small allreduce on LL, the other
# one's on Simple).  A teardown that waited for the device would hold each
# round until the kernels time out: 20 s, so that it fails in minutes.
CHORUS_TIMEOUT=20 CHORUS_TEST_PROTOS=auto exec "$(dirname "$0")/run-gpu.sh" 2 test_gpu_lifecycle
