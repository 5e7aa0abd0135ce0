#!/usr/bin/env python3
"""plot_ratios.py - the ratio MPI/Chorus against message size, from the
markdown tables compare.sh writes (median per size, lowest-highest run).

    perf/plot_ratios.py tables.md outdir

Writes outdir/TOOL.png per tool found with more than one size (not the
barrier): two panels (back to back; per call
after a barrier), one line per rank count, each point the median ratio with
a bar from the lowest to the highest run, and the 0.95 floor drawn across.
A ratio above 1 means Chorus is faster.  Needs gnuplot.
"""
import os
import re
import subprocess
import sys
import tempfile

HEADER = re.compile(r"^(?:chorus_)?(\w+)_perf, (\d+) ranks, .*?, (back-to-back|sync) timing")
UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_bytes(text):
    m = re.match(r"^([\d.]+)\s*([BKMG])", text.strip())
    return int(float(m.group(1)) * UNITS[m.group(2)]) if m else None


def read_tables(path):
    """{tool: {timing: {np: [(bytes, median, low, high)]}}}"""
    tables, current = {}, None
    with open(path) as f:
        for line in f:
            m = HEADER.match(line)
            if m:
                tool, np, timing = m.group(1), int(m.group(2)), m.group(3)
                current = tables.setdefault(tool, {}).setdefault(timing, {}).setdefault(np, [])
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is None or len(cells) < 7 or not cells[0] or cells[0].startswith("-"):
                continue
            size = size_bytes(cells[0]) if cells[0] != "-" else 0
            if size is None:  # the header row, or a barrier row without a size
                if cells[0] in ("", "size"):
                    continue
                size = 0
            try:
                ratio = float(cells[5])
                low, high = (float(x) for x in cells[6].split("-"))
            except ValueError:
                continue
            # The 0 B row sits left of 8 B on the log axis.
            current.append((max(size, 4), ratio, low, high))
    return tables


def plot(tool, timings, outdir, terminal):
    with tempfile.TemporaryDirectory() as tmp:
        panels = []
        for timing, title in (("back-to-back", "back to back"), ("sync", "per call after a barrier")):
            curves = []
            for np, rows in sorted(timings.get(timing, {}).items()):
                if len(rows) < 2:
                    continue
                data = os.path.join(tmp, f"{timing}-{np}.dat")
                with open(data, "w") as d:
                    for row in sorted(rows):
                        d.write("%d %g %g %g\n" % row)
                curves.append(f"'{data}' using 1:2:3:4 with yerrorlines title '{np} ranks'")
            if curves:
                panels.append((title, curves))
        if not panels:
            return None
        out = os.path.join(outdir, f"{tool}.png")
        script = [f"set terminal {terminal}", f"set output '{out}'",
                  f"set multiplot layout 1,{len(panels)} title '{tool}: MPI time / Chorus time (above 1: Chorus faster)'",
                  "set logscale x 2", "set logscale y 2", "set grid", "set offsets graph 0.03, graph 0.03, 0, 0",
                  "set xtics (\"0 B\" 4, \"64 B\" 64, \"1 KiB\" 1024, \"16 KiB\" 16384, \"256 KiB\" 262144, "
                  "\"4 MiB\" 4194304, \"16 MiB\" 16777216)",
                  "set xlabel 'message size'", "set ylabel 'MPI / Chorus'",
                  "set key top left", "set yrange [0.25:*]"]
        for title, curves in panels:
            script.append(f"set title '{title}'")
            script.append("plot " + ", ".join(curves) + ", 0.95 with lines dashtype 2 lc rgb 'red' title '0.95'")
        script.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)
        return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    probe = subprocess.run(["gnuplot", "-e", "set terminal pngcairo"], capture_output=True)
    terminal = "pngcairo size 1200,500 font ',10'" if probe.returncode == 0 else "png size 1200,500"
    for tool, timings in sorted(read_tables(source).items()):
        out = plot(tool, timings, outdir, terminal)
        if out:
            print(out)


if __name__ == "__main__":
    main()
