#!/bin/sh
# A rank that never joins a collective: the others' kernels must time out
# (CHORUS_TIMEOUT, counted on the device) and the error must name it.
CHORUS_TIMEOUT=${CHORUS_STALL_TIMEOUT:-3} exec "$(dirname "$0")/run-gpu.sh" 2 test_gpu --stalled-peer
