#!/bin/sh
# plot.sh - bandwidth and latency against message size from the perf
# tools' JSON (-J).  Installed as chorus_perf_plot.
#
#   perf/plot.sh results.json out.png
#   perf/plot.sh run1.json run2.json ... out.png     (several runs, one chart)
#
# Two panels: busbw (GB/s) over size (log2 axis), and the time per call (us)
# over size on log-log axes, where the small sizes' latency shows; each for
# Chorus, Chorus in place (where the run timed it) and, where the run had
# --mpi, MPI's own collective.  Needs python3 (reads the JSON) and gnuplot
# (pngcairo terminal if present, else png).
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
  terminal='pngcairo size 1600,620 font ",10"'
else
  terminal='png size 1600,620'
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
    names = {"chorus": "Chorus", "chorus_inplace": "Chorus in place", "mpi": "MPI"}
    for who in ("chorus", "chorus_inplace", "mpi"):
        pts = [(r["bytes"], r[who]["busbw"], r[who]["time_us"]) for r in rows
               if isinstance(r.get(who), dict) and r[who].get("busbw") is not None
               and r[who].get("time_us") is not None]
        if not pts:
            continue
        data = os.path.join(tmp, "curve%d.dat" % len(curves))
        with open(data, "w") as f:
            for b, bw, t in pts:
                f.write("%d %.9g %.9g\n" % (b, bw, t))
        curves.append((data, names[who] + tag, who))

ticks = sorted(sizes)
step = max(1, (len(ticks) + 11) // 12)  # at most about a dozen labels
xtics = ", ".join('"%s" %d' % (human(b), b) for b in ticks[::step])
title = titles[0] if len(set(titles)) == 1 else "; ".join(sorted(set(titles)))

def plot(column):
    lines = []
    for data, label, who in curves:
        style = "lw 2 pt 7 ps 0.8" + {"mpi": " dt 2", "chorus_inplace": " dt 3"}.get(who, "")
        lines.append("%s using 1:%d with linespoints %s title %s" % (quote(data), column, style, quote(label)))
    return "plot " + ", \\\n     ".join(lines) + "\n"

with open(os.path.join(tmp, "plot.gp"), "w") as f:
    f.write("set terminal %s\n" % terminal)
    f.write("set output %s\n" % quote(out))
    f.write("set multiplot layout 1,2 title %s noenhanced\n" % quote(title))
    f.write("set xlabel 'message size (bytes)'\nset logscale x 2\nset xtics (%s) rotate by -45\n" % xtics)
    f.write("set grid\nset key top left noenhanced\n")
    f.write("set title 'bus bandwidth'\nset ylabel 'bus bandwidth (GB/s)'\nset yrange [0:*]\n")
    f.write(plot(2))
    # Log-log: latency spans decades between the smallest and largest sizes.
    f.write("set title 'time per call (log-log)'\nset ylabel 'time per call (us)'\n")
    f.write("set logscale y 10\nset yrange [*:*]\n")
    f.write(plot(3))
    f.write("unset multiplot\n")
PY

gnuplot "$tmp/plot.gp"
for out in "$@"; do :; done
echo "wrote $out" >&2
