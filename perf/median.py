#!/usr/bin/env python3
"""median.py - the median of repeated perf runs, as a Markdown table.

    perf/median.py run1.json run2.json ... [--min-ratio R] [--min-ratio-from BYTES:R]

Each JSON file is one run of a perf tool with --mpi and -J (same tool, same
sizes).  Per size it prints the median Chorus time, the median MPI time, the
median of the per-run ratios MPI/Chorus, the smallest ratio seen and the
number of wrong elements summed over runs, with each figure's range over the
runs (lowest-highest), so a loss can be told from noise.  With --min-ratio (and
--min-ratio-from for sizes at or above BYTES) it exits 1 when a median ratio
misses the target, so a sweep can be checked by a script.
"""
import json
import re
import statistics
import sys


def human(b):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= div and b % div == 0:
            return "%d %s" % (b // div, unit)
    return "%d B" % b


def us(t):
    """Microseconds with three significant digits: small calls take 0.05 us."""
    return "%.3g" % t if t < 100 else "%.0f" % t


def parse_args(argv):
    files, floor, from_rules = [], None, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--min-ratio":
            floor = float(argv[i + 1])
            i += 2
        elif a == "--min-ratio-from":
            size, ratio = argv[i + 1].split(":")
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:].upper(), 1)
            base = size[:-1] if mult > 1 else size
            from_rules.append((int(base) * mult, float(ratio)))
            i += 2
        elif a.startswith("-"):
            sys.exit("usage: median.py run.json ... [--min-ratio R] [--min-ratio-from BYTES:R]")
        else:
            files.append(a)
            i += 1
    if not files:
        sys.exit("usage: median.py run.json ... [--min-ratio R] [--min-ratio-from BYTES:R]")
    return files, floor, from_rules


def main():
    files, floor, from_rules = parse_args(sys.argv[1:])
    runs = []
    for path in files:
        with open(path) as f:
            runs.append(json.load(f))
    first = runs[0]
    rows = {}
    for run in runs:
        for r in run["results"]:
            row = rows.setdefault(r["bytes"], {"ch": [], "mpi": [], "ratio": [], "wrong": 0})
            row["ch"].append(r["chorus"]["time_us"])
            if r.get("mpi"):
                row["mpi"].append(r["mpi"]["time_us"])
                row["ratio"].append(r["mpi"]["ratio"])
            row["wrong"] += r["wrong"] or 0
    # compare.sh writes one file per range of each run (-runN-partM); a
    # size two ranges share counts twice in its row but is still one run.
    nruns = len({re.sub(r"-part\d+(?=\.json$)", "", path) for path in files})
    timing = first.get("timing", "back-to-back")
    if first.get("null_run"):
        timing += " (--null: MPI in both columns)"
    print("%s, %d ranks, %s, %s timing, %d runs (median per size; the range is the lowest and highest run)\n" %
          (first["tool"], first["nranks"], first["results"][0]["type"], timing, nruns))
    print("| size | Chorus us | range | MPI us | range | MPI/Chorus | ratio range | #wrong |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    missed = []
    for size in sorted(rows):
        row = rows[size]
        ch = statistics.median(row["ch"])
        ch_range = "%s-%s" % (us(min(row["ch"])), us(max(row["ch"])))
        if row["ratio"]:
            mpi = statistics.median(row["mpi"])
            ratio = statistics.median(row["ratio"])
            print("| %s | %s | %s | %s | %s-%s | %.2f | %.2f-%.2f | %d |" %
                  (human(size), us(ch), ch_range, us(mpi), us(min(row["mpi"])), us(max(row["mpi"])), ratio,
                   min(row["ratio"]), max(row["ratio"]), row["wrong"]))
            # Every row is held to the floor, the empty call (0 B, and the
            # barrier) included: it should cost no more than its checks.
            want = floor
            for start, r in from_rules:
                if size >= start and size > 0:
                    want = max(want or 0, r)
            if want is not None and ratio < want:
                missed.append("%s: median ratio %.2f < %.2f" % (human(size), ratio, want))
        else:
            print("| %s | %s | %s | - | - | - | - | %d |" % (human(size), us(ch), ch_range, row["wrong"]))
        if row["wrong"]:
            missed.append("%s: %d wrong elements" % (human(size), row["wrong"]))
    if missed:
        print("\nmissed: " + "; ".join(missed))
        sys.exit(1)


if __name__ == "__main__":
    main()
