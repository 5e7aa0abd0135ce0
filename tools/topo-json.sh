#!/bin/sh
# chorus_info --topo --json on the recorded 8-GPU NVSwitch node, two nodes
# of 8 ranks: the JSON must parse and describe valid rings and trees.
# Exit 77 (skipped) without python3.
set -u
fixture=${srcdir:-.}/../tests/topo/nvswitch-8gpu-8nic.xml
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
out=topo-json.out
CHORUS_TOPO_FILE=$fixture ./chorus_info --topo --json --layout 2x8 >"$out" || exit 1
exec python3 - "$out" <<'PY'
import json
import sys

with open(sys.argv[1]) as f:
    topo = json.load(f)
for key in ("gpus", "nics", "rings", "trees"):
    assert isinstance(topo[key], list) and topo[key], "%s is missing or empty" % key
assert len(topo["gpus"]) == 8 and len(topo["nics"]) == 8, "expected 8 GPUs and 8 NICs"
assert topo["nvswitch"] is True
node_of = topo["layout"]["node_of_rank"]
n = len(node_of)
assert n == 16 and topo["layout"]["nodes"] == 2
send_nics = set()
for ring in topo["rings"]:
    order = ring["order"]
    assert sorted(order) == list(range(n)), "ring %d is not a permutation" % ring["channel"]
    changes = sum(node_of[order[i]] != node_of[order[(i + 1) % n]] for i in range(n))
    assert changes == 2, "ring %d crosses node boundaries %d times" % (ring["channel"], changes)
    assert len(ring["crossings"]) == 2
    assert ring["bandwidth_gbs"] > 0
    send_nics.add(ring["crossings"][0]["send_nic"])
assert len(send_nics) == len(topo["rings"]), "channels share NICs: %s" % sorted(send_nics)
for tree in topo["trees"]:
    parent, children = tree["parent"], tree["children"]
    assert parent[tree["root_rank"]] == -1
    seen, todo = [], [tree["root_rank"]]
    while todo:
        r = todo.pop()
        seen.append(r)
        for c in children[r]:
            assert parent[c] == r
            todo.append(c)
    assert sorted(seen) == list(range(n)), "tree %d does not reach every rank once" % tree["tree"]
print("ok: %d GPUs, %d NICs, %d rings, %d trees" % (len(topo["gpus"]), len(topo["nics"]), len(topo["rings"]),
                                                     len(topo["trees"])))
PY
