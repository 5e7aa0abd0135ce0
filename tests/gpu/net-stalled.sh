#!/bin/sh
# 2 ranks, each its own node: the rank that never joins the second
# allreduce is reached through the device proxy; the other's kernel must
# time out (CHORUS_TIMEOUT, counted on the device) and name it.  Simple
# only: no other protocol crosses nodes.
CHORUS_TEST_PROTOS=simple CHORUS_TEST_LAYOUT=each CHORUS_TIMEOUT=${CHORUS_STALL_TIMEOUT:-3} exec "$(dirname "$0")/run-gpu.sh" 2 test_gpu --stalled-peer
