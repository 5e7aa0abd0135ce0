#!/bin/sh
# layers.sh - the include arrows between src/ folders point down the layers
# (doc/how-it-works.md, "Layers"): a folder includes only headers of its
# own layer or of layers below it.  Fails naming the file and the include
# that points up.  Two arrows are known and allowed; each is argued there.
set -u
src=${srcdir:-.}/src
[ -d "$src" ] || src=$(dirname "$0")/../../src

# Bottom to top.  A transport folder sits on its layer (transport).
layer_of() {
  case "$1" in
    core) echo 0 ;;
    topo) echo 1 ;;
    transport|transport/*) echo 2 ;;
    coll) echo 3 ;;
    cuda|cuda/*) echo 4 ;;
    comm) echo 5 ;;
    api) echo 6 ;;
    interpose|fortran) echo 7 ;;
    *) echo "" ;;
  esac
}
allowed() {
  case "$1 -> $2" in
    # Rank arithmetic (header-only, no I/O): the topology's rings and trees
    # follow the algorithms' own arithmetic.
    "src/topo/rings.cc -> coll/patterns.h") return 0 ;;
    # The CUDA CHECK macros, a leaf header (CUDA runtime and core/log.h).
    "src/transport/cuda_ipc/cuda_ipc.cc -> cuda/cuda_check.h") return 0 ;;
  esac
  return 1
}

checked=0 bad=0
for f in $(cd "$src/.." && find src -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' | grep -v '^src/cuda/emu/' | sort); do
  dir=${f#src/}; dir=${dir%/*}
  from=$(layer_of "$dir")
  [ -n "$from" ] || continue
  for inc in $(sed -n 's/^#include "\([a-z_/]*\/[a-z_]*\.c*u*h\)".*/\1/p' "$src/../$f"); do
    to=$(layer_of "${inc%/*}")
    [ -n "$to" ] || continue
    checked=$((checked + 1))
    if [ "$to" -gt "$from" ] && ! allowed "$f" "$inc"; then
      echo "FAIL: $f includes $inc, a layer above its own"
      bad=$((bad + 1))
    fi
  done
done
[ "$checked" -gt 100 ] || { echo "FAIL: only $checked includes seen under $src: wrong folder?"; exit 1; }
echo "$checked includes between layers checked, $bad pointing up"
[ "$bad" -eq 0 ]
