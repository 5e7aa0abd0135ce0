#!/bin/sh
# 4 ranks, two to a device: the kernels across devices (CUDA IPC).
# On the CPU emulation (CHORUS_GPU_MUST_RUN, tests/gpu/Makefile.am) the
# protocols other than Simple run the sum and the pair types' ops only,
# and their large case at 2 MiB (run-gpu.sh, CHORUS_TEST_NARROW: still 8
# LL slices a channel, where 8 MiB gave 32): LL's whole matrix took 180 s
# there against Simple's 63, most of it the 8 MiB cases of 4 ranks polling
# on 2 cores.  An op's functor is the same whichever protocol carries its
# data, and np2.sh runs LL over every op and the 8 MiB cases.  A real GPU
# runs the whole matrix.
[ -n "${CHORUS_GPU_MUST_RUN:-}" ] && export CHORUS_TEST_NARROW=1
exec "$(dirname "$0")/run-gpu.sh" 4 test_gpu
