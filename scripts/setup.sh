#!/usr/bin/env bash
# setup.sh - install the build dependencies (Debian/Ubuntu), generate the
# build system and build Chorus out of tree in _build.  Idempotent: apt runs
# only when a package is missing, autogen only when configure is missing or
# older than configure.ac, configure only when _build has no Makefile (make
# itself reruns autotools and config.status when their inputs change).
#
# --deps-only: stop after the packages and autogen (scripts/demo.sh builds
# its own, smaller tree).
#
# Environment:
#   CHORUS_CONFIGURE_FLAGS  extra ./configure arguments (first configure only)
#   CHORUS_JOBS             make parallelism (default 2)
set -euo pipefail

deps_only=0
[ "${1:-}" = --deps-only ] && deps_only=1

cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${CHORUS_JOBS:-2}

packages=(build-essential g++ gfortran autoconf automake libtool pkg-config
          make cmake openmpi-bin libopenmpi-dev libhwloc-dev libucx-dev
          libboost-test-dev groff-base mandoc gnuplot-nox python3 valgrind
          mpich libmpich-dev)  # the second MPI: scripts/test-mpich.sh

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${packages[@]}"; do
    if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != 'install ok installed' ]; then
      missing+=("$p")
    fi
  done
else
  echo "setup.sh: no dpkg; assuming the dependencies are installed" >&2
fi

if ((${#missing[@]})); then
  echo "setup.sh: installing ${missing[*]}"
  sudo=
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=sudo
    else
      echo "setup.sh: need root (or sudo) to install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update
  $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [ ! -x configure ] || [ configure.ac -nt configure ]; then
  ./autogen.sh
fi
[ "$deps_only" = 1 ] && exit 0

mkdir -p _build
cd _build
if [ ! -f Makefile ]; then
  # shellcheck disable=SC2086  # word splitting of the flags is intended
  ../configure ${CHORUS_CONFIGURE_FLAGS:-}
fi
make -j"$jobs"
echo "setup.sh: built in $root/_build"
