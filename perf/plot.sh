#!/bin/sh
# plot.sh - bus bandwidth against message size from perf tools' JSON (-J).
#
#   perf/plot.sh results.json out.png
#   perf/plot.sh run1.json run2.json ... out.png     (several runs, one chart)
#
# Draws busbw (GB/s) over size (log2 axis) for Chorus and, where the run had
# --mpi, for MPI's own collective.  Needs python3 (reads the JSON) and
# gnuplot (pngcairo terminal if present, else png).
set -eu

usage() {
  echo "usage: $0 results.json [more.json ...] out.png" >&2
  exit 2
}
[ $# -ge 2 ] || usage
case "$1" in -h|--help) usage ;; esac
command -v gnuplot >/dev/null 2>&1 || { echo "$0: gnuplot not found" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "$0: python3 not found" >&2; exit 2; }

if gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then
  terminal='pngcairo size 1000,620 font ",10"'
else
  terminal='png size 1000,620'
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# python3 turns the JSON files into one data file per curve and writes the
# gnuplot script; the last argument is the output.
python3 - "$tmp" "$terminal" "$@" <<'PY'
import json, os, sys

tmp, terminal, args = sys.argv[1], sys.argv[2], sys.argv[3:]
inputs, out = args[:-1], args[-1]

def human(b):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= div and b % div == 0:
            return "%d%s" % (b // div, unit)
    return str(b)

def quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

curves, sizes, titles = [], set(), []
for path in inputs:
    try:
        with open(path) as f:
            run = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("plot.sh: cannot read %s: %s" % (path, e))
    tag = "" if len(inputs) == 1 else " (%s)" % os.path.splitext(os.path.basename(path))[0]
    rows = [r for r in run.get("results", []) if r.get("bytes", 0) > 0]
    if not rows:
        sys.exit("plot.sh: %s has no results with size > 0" % path)
    for r in rows:
        sizes.add(r["bytes"])
    titles.append("%s, %d ranks, %s %s, %s memory" % (
        run.get("collective", "?"), run.get("nranks", 0), rows[0].get("type", "?"),
        rows[0].get("op", "?"), run.get("memory", "?")))
    for who in ("chorus", "mpi"):
        pts = [(r["bytes"], r[who]["busbw"]) for r in rows
               if isinstance(r.get(who), dict) and r[who].get("busbw") is not None]
        if not pts:
            continue
        data = os.path.join(tmp, "curve%d.dat" % len(curves))
        with open(data, "w") as f:
            for b, bw in pts:
                f.write("%d %.9g\n" % (b, bw))
        curves.append((data, ("Chorus" if who == "chorus" else "MPI") + tag, who))

ticks = sorted(sizes)
step = max(1, (len(ticks) + 11) // 12)  # at most about a dozen labels
xtics = ", ".join('"%s" %d' % (human(b), b) for b in ticks[::step])
title = titles[0] if len(set(titles)) == 1 else "; ".join(sorted(set(titles)))

plot = []
for data, label, who in curves:
    style = "lw 2 pt 7 ps 0.8" + (" dt 2" if who == "mpi" else "")
    plot.append("%s using 1:2 with linespoints %s title %s" % (quote(data), style, quote(label)))

with open(os.path.join(tmp, "plot.gp"), "w") as f:
    f.write("set terminal %s\n" % terminal)
    f.write("set output %s\n" % quote(out))
    f.write("set title %s noenhanced\n" % quote(title))
    f.write("set xlabel 'message size (bytes)'\nset ylabel 'bus bandwidth (GB/s)'\n")
    f.write("set logscale x 2\nset xtics (%s) rotate by -45\n" % xtics)
    f.write("set grid\nset key top left noenhanced\nset yrange [0:*]\n")
    f.write("plot " + ", \\\n     ".join(plot) + "\n")
PY

gnuplot "$tmp/plot.gp"
for out in "$@"; do :; done
echo "wrote $out" >&2
