#!/bin/sh
# info-options.sh - chorus_info's options do what chorus_info(1) says:
# --version and -V print the version and stop; -t is --topo (and so honours
# CHORUS_TOPO_FILE); the --topo options are refused without it, not ignored;
# the build section says whether this process finds the CUDA driver.
set -u
info=./chorus_info
[ -x "$info" ] || { echo "skipped: chorus_info not built"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

out=$("$info" --version </dev/null) || fail "--version exited $?"
case $out in "Chorus "[0-9]*) ;; *) fail "--version printed '$out'" ;; esac
[ "$("$info" -V </dev/null)" = "$out" ] || fail "-V and --version differ"

for opt in --json "--layout 2x2" "--channels 2"; do
  # shellcheck disable=SC2086  # the option and its value are two words
  if err=$("$info" $opt </dev/null 2>&1 >/dev/null); then fail "$opt without --topo was accepted"; fi
  case $err in *"only with --topo"*) ;; *) fail "$opt without --topo: '$err'" ;; esac
done

fixture=${srcdir:-.}/../tests/topo/nvswitch-8gpu-8nic.xml
if [ -f "$fixture" ]; then
  long=$(CHORUS_TOPO_FILE=$fixture "$info" --topo </dev/null) || fail "--topo exited $?"
  short=$(CHORUS_TOPO_FILE=$fixture "$info" -t </dev/null) || fail "-t exited $?"
  [ "$long" = "$short" ] || fail "-t and --topo differ"
  case $short in *"GPUs (8)"*) ;; *) fail "-t did not read CHORUS_TOPO_FILE=$fixture" ;; esac
fi

"$info" </dev/null 2>/dev/null | grep -q "^#   CUDA driver : \(present\|absent\)" || fail "no CUDA driver line"
echo "chorus_info: --version, -t, refused --topo options and the CUDA driver line as documented"
