#!/bin/sh
# 4 ranks, two to a device: the kernels across devices (CUDA IPC), every
# collective, op and type on each protocol.
exec "$(dirname "$0")/run-gpu.sh" 4 test_gpu
