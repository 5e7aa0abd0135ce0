#!/bin/sh
# 3 ranks, each its own node, allreduces on device buffers; the last rank
# is killed (SIGKILL) at the sixth.  Every survivor talks to it through the
# device proxy, which must see its UCX connection fail and stop the
# kernels: each survivor fails naming it within 10 s although
# CHORUS_TIMEOUT is 60 (../mpi/run-kill.sh says what else it checks).
CHORUS_TIMEOUT=60 CHORUS_TEST_NAMED_WITHIN=10 CHORUS_TEST_LAYOUT=each \
  exec "$(dirname "$0")/../mpi/run-kill.sh" 3 test_kill_gpu
