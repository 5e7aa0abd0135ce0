#!/bin/sh
# sim_plot.sh - chorus_sim's predictions as a chart, from its JSON (-J).
# Installed as chorus_sim_plot (chorus_sim(1)).
#
#   chorus_sim_plot sim.json out.png
#
# One panel per collective and layout (at most 12, in the order the run
# made them): every candidate algorithm's predicted time against the size,
# log-log, and the planner's choice marked on its candidate's curve, so
# that a crossover the planner misses shows as marks off the lowest curve.
# Needs python3 (reads the JSON) and gnuplot (pngcairo if present, else png).
set -eu

usage() {
  echo "usage: $0 sim.json out.png" >&2
  exit 2
}
[ $# -eq 2 ] || usage
case "$1" in -h|--help) usage ;; esac
command -v gnuplot >/dev/null 2>&1 || { echo "$0: gnuplot not found" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "$0: python3 not found" >&2; exit 2; }

if gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then
  terminal='pngcairo size %d,%d font ",10"'
else
  terminal='png size %d,%d'
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" "$terminal" "$1" "$2" <<'PY'
import json, math, os, sys

tmp, terminal, path, out = sys.argv[1:5]
kMaxPanels = 12

def quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

try:
    with open(path) as f:
        doc = json.load(f)
except (OSError, ValueError) as e:
    sys.exit("chorus_sim_plot: cannot read %s: %s" % (path, e))

# Panels in the run's order: (collective, nodes, ranks per node).
panels, rowsOf = [], {}
for r in doc.get("runs", []):
    if r.get("bytes", 0) <= 0 or not r.get("candidates"):
        continue  # the barrier has no size
    key = (r["coll"], r["nodes"], r["ranks_per_node"])
    if key not in rowsOf:
        panels.append(key)
        rowsOf[key] = []
    rowsOf[key].append(r)
if not panels:
    sys.exit("chorus_sim_plot: %s has no rows with a size" % path)
if len(panels) > kMaxPanels:
    print("chorus_sim_plot: %d panels, drawing the first %d" % (len(panels), kMaxPanels), file=sys.stderr)
    panels = panels[:kMaxPanels]

cols = min(3, len(panels))
rows = int(math.ceil(len(panels) / cols))
script = ["set terminal " + terminal % (560 * cols, 420 * rows),
          "set output " + quote(out),
          "set multiplot layout %d,%d title %s noenhanced" % (
              rows, cols, quote("chorus_sim: %s (%s)" % (doc.get("preset", "?"), doc.get("description", "")))),
          "set logscale xy", "set grid", "set key top left noenhanced font ',8'",
          "set xlabel 'bytes'", "set ylabel 'predicted time (us)'", "set format x '%.0s%c'"]
for n, key in enumerate(panels):
    coll, nodes, rpn = key
    algos = []
    for r in rowsOf[key]:
        for a in r["candidates"]:
            if a not in algos:
                algos.append(a)
    plots = []
    for i, a in enumerate(algos):
        data = os.path.join(tmp, "p%d_%d.dat" % (n, i))
        with open(data, "w") as f:
            for r in rowsOf[key]:
                if a in r["candidates"]:
                    f.write("%d %.9g\n" % (r["bytes"], r["candidates"][a]))
        plots.append("%s using 1:2 with lines lw 2 title %s" % (quote(data), quote(a)))
    chosen = os.path.join(tmp, "p%d_planner.dat" % n)
    with open(chosen, "w") as f:
        for r in rowsOf[key]:
            t = r["candidates"].get(r.get("planner"))
            if t is not None:
                f.write("%d %.9g\n" % (r["bytes"], t))
    plots.append("%s using 1:2 with points pt 7 ps 1.2 lc rgb 'black' title 'planner'" % quote(chosen))
    script.append("set title %s noenhanced" % quote("%s, %d x %d ranks" % (coll, nodes, rpn)))
    script.append("plot " + ", \\\n     ".join(plots))
script.append("unset multiplot")
with open(os.path.join(tmp, "plot.gp"), "w") as f:
    f.write("\n".join(script) + "\n")
PY

gnuplot "$tmp/plot.gp"
echo "wrote $2" >&2
