#!/bin/sh
exec "$(dirname "$0")/run-gpu.sh" 2 test_gpu
