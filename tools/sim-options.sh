#!/bin/sh
# sim-options.sh - chorus_sim does what chorus_sim(1) says: bad values are
# refused naming the option (exit 2), the presets list, and a run on two
# layouts writes JSON that parses, with each row's planner choice among its
# candidates and every candidate's time positive; --topo reads the same
# node from hwloc XML and chorus_info's JSON; --resources tables each node
# count.
set -u
sim=./chorus_sim
[ -x "$sim" ] || { echo "skipped: chorus_sim not built"; exit 77; }
# The JSON is checked by python3: without it the test says skipped, not passed.
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

for bad in "--preset nowhere" "--topo nowhere.json" "--nodes 0" "--nodes 2,x" "--coll allsum" "-b 1Q" "-f 1" "--fabric ring" "-d int"; do
  # shellcheck disable=SC2086  # the option and its value are two words
  if err=$("$sim" $bad </dev/null 2>&1 >/dev/null); then fail "'$bad' was accepted"; fi
  opt=${bad%% *}
  case $err in *"$opt"*) ;; *) fail "'$bad': the error does not name $opt: '$err'" ;; esac
done
"$sim" -b 2M -e 1M </dev/null >/dev/null 2>&1 && fail "-b above -e was accepted"
"$sim" --list-presets </dev/null | grep -q "^8xh100 " || fail "--list-presets lacks 8xh100"

json=sim-options.json
rm -f "$json"
"$sim" -p played -n 1,2 -c all -e 1M -f 64 -J "$json" </dev/null >sim-options.out || fail "the run exited $?"
grep -q "^# allreduce on 2 nodes x 2 ranks = 4 ranks" sim-options.out || fail "no table for 2 x 2"
python3 - "$json" <<'PY' || fail "the JSON is not what chorus_sim(1) says"
import json, sys
doc = json.load(open(sys.argv[1]))
runs = doc["runs"]
assert doc["preset"] == "played" and runs, "no runs"
colls = {r["coll"] for r in runs}
assert len(colls) == 7, colls
for r in runs:
    assert r["candidates"], r
    assert all(t > 0 for t in r["candidates"].values()), r
    assert r["best"] in r["candidates"], r
    assert min(r["candidates"].values()) == r["candidates"][r["best"]], r
PY
# Its chart: a PNG, where gnuplot is there.
if command -v gnuplot >/dev/null 2>&1; then
  rm -f sim-options.png
  ./chorus_sim_plot "$json" sim-options.png 2>sim-options.log || fail "chorus_sim_plot: $(cat sim-options.log)"
  [ "$(head -c 4 sim-options.png | od -An -c | tr -d ' ')" = "211PNG" ] || fail "chorus_sim_plot wrote no PNG"
  rm -f sim-options.png sim-options.log
  plotted=", chart drawn"
else
  plotted=", gnuplot not found: chart not tried"
fi
rm -f "$json" sim-options.out

# --topo: the recorded 8-GPU node, as hwloc XML and as chorus_info's JSON,
# describes the same machine (8 ranks, NVLink and NIC bandwidths).
fixture=${srcdir:-.}/../tests/topo/nvswitch-8gpu-8nic.xml
"$sim" --topo "$fixture" -e 1K </dev/null >sim-options.out || fail "--topo on the XML exited $?"
grep -q "^# allreduce on 1 node x 8 ranks" sim-options.out || fail "--topo: the XML's node is not 8 ranks"
fromXml=$(sed -n '1s/^[^(]*(\([^;]*\);.*/\1/p' sim-options.out)
CHORUS_TOPO_FILE=$fixture ./chorus_info --topo --json >sim-options.json </dev/null || fail "chorus_info --topo --json exited $?"
"$sim" --topo sim-options.json -e 1K </dev/null >sim-options.out || fail "--topo on the JSON exited $?"
fromJson=$(sed -n '1s/^[^(]*(\([^;]*\);.*/\1/p' sim-options.out)
case $fromXml in "8 GPUs, 450 GB/s"*) ;; *) fail "--topo: the XML read as '$fromXml'" ;; esac
[ "$fromXml" = "$fromJson" ] || fail "--topo: the XML gives '$fromXml', the JSON '$fromJson'"
rm -f sim-options.out sim-options.json

# --resources: a row per node count, its rank count the layout's; device
# FIFOs (column 14) for the node's peers, fewer per rank across nodes,
# and the device proxy's pinned links (column 10) only across nodes.
"$sim" -p 8xh100 -n 1,16 --resources </dev/null >sim-options.out || fail "--resources exited $?"
awk '$1 == 1 && $2 == 8 && $14 + 0 > 0 && $10 + 0 == 0 {one = $14 + 0}
     $1 == 16 && $2 == 128 && $10 + 0 > 0 {many = $14 + 0}
     END {exit !(one > 0 && many > 0 && many < one)}' sim-options.out ||
  fail "--resources: no rows for 1 x 8 and 16 x 8: $(cat sim-options.out)"
rm -f sim-options.out
echo "chorus_sim: bad values refused by name, presets listed, JSON of 2 layouts x 7 collectives valid$plotted, the node from XML and JSON alike, resources tabled"
