#!/usr/bin/env python3
"""How busy DRAM was while each launch of one decode step held the critical path.

Reads the samples scripts/profile/ncu_step.sh wrote (ncu's PM sampling of one step graph: the DRAM read
throughput every ~1.5 us, and each launch's end). A launch's window runs from the end of every
launch before it to its own end (completion to completion: under PDL the next launch's wait
releases then), so the windows tile the step; the DRAM figure is the sampled read throughput,
as a fraction of its peak, averaged over the window (each sample covers the interval before
its timestamp). "Idle" is the window times the unused fraction: the DRAM time that launch
leaves on the table. Launch names follow scripts/profile/trace_summary.py (a grid that is several
products of the model is split by its neighbour).

    python3 scripts/profile/pm_timeline.py OUTDIR/step_samples.csv [--launches] > pm_timeline.md
"""

import argparse
import bisect
import collections
import csv
import re
import sys

from trace_summary import products

DRAM_READ = "dramc__read_throughput.avg.pct_of_peak_sustained_elapsed"


def instances(cell):
    """ncu's `--print-metric-instances details` cell, `AGG (K1 (+D1): V1; K2 (+D2): V2; ...)`
    or `AGG (K1: V1; ...)`, as [(K, V)] with V a string."""
    m = re.search(r"\((.*)\)\s*$", cell, re.S)
    if not m:
        return []
    out = []
    for part in m.group(1).split(";"):
        key, sep, value = part.strip().partition(": ")
        if sep:
            out.append((int(key.split(" ")[0].replace(",", "")), value.strip()))
    return out


def number(v):
    return float(v.replace(",", ""))


def column(header, suffix):
    hits = [i for i, h in enumerate(header) if h == suffix or h.endswith("." + suffix)]
    if len(hits) != 1:
        sys.exit(f"expected one column named like {suffix}, found {len(hits)}")
    return hits[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="step_samples.csv from scripts/profile/ncu_step.sh")
    ap.add_argument("--launches", action="store_true", help="also list every launch")
    args = ap.parse_args()

    with open(args.csv, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 3:
        sys.exit(f"{args.csv}: no profiled workload (a header, a units row and a result row expected)")
    header, row = rows[0], rows[2]
    cell = lambda name: row[column(header, name)]
    names = {i: v for i, v in instances(cell("launch__kernel_name"))}
    grid = [{i: int(number(v)) for i, v in instances(cell(f"launch__grid_dim_{a}"))} for a in "xyz"]
    ends = {int(number(v)): t for t, v in instances(cell("profiler__timestamp_workload_end_0"))}
    starts = {int(number(v)): t for t, v in instances(cell("profiler__timestamp_workload_start_0"))}
    interval = number(instances(cell("profiler__pmsampler_interval_time"))[0][1]) * 1e3  # ns
    samples = sorted((t, number(v)) for t, v in instances(cell(DRAM_READ)) if t > 0)
    order = sorted(ends)
    if not order or not samples or set(order) != set(names):
        sys.exit(f"{args.csv}: launches, their ends or the DRAM samples are missing")
    times = [t for t, _ in samples]

    def mean_between(a, b):
        total = weight = 0.0
        k = bisect.bisect_left(times, a)
        while k < len(samples) and times[k] - interval < b:
            lo, hi = max(a, times[k] - interval), min(b, times[k])
            if hi > lo:
                total += samples[k][1] * (hi - lo)
                weight += hi - lo
            k += 1
        return total / weight if weight else float("nan")

    launches = collections.OrderedDict()
    done = starts[order[0]]
    for i in order:
        a, b = done, max(done, ends[i])
        label = f"{names[i]} grid {grid[0][i]}x{grid[1][i]}x{grid[2][i]}"
        launches[i] = {"label": label, "window": (b - a) / 1e3, "dram": mean_between(a, b), "at": (a - starts[order[0]]) / 1e3}
        done = b

    span = (done - starts[order[0]]) / 1e3
    busy = sum(l["window"] * l["dram"] / 100 for l in launches.values())
    print(f"# one decode step under ncu PM sampling: {len(order)} launches, {span:.1f} us, "
          f"DRAM read {100 * busy / span:.1f}% of peak over the step (samples every {interval / 1e3:.2f} us)")
    print()
    print("| kernel grid | launches | window us each (end to end) | DRAM read, % of peak | DRAM idle us each | idle us in all |")
    print("|---|---:|---:|---:|---:|---:|")
    table = []
    for name, ids in products(launches, order).items():
        window = sum(launches[i]["window"] for i in ids) / len(ids)
        dram = sum(launches[i]["window"] * launches[i]["dram"] for i in ids) / (window * len(ids)) if window else 0.0
        idle = window * (1 - dram / 100)
        table.append((idle * len(ids), name, len(ids), window, dram, idle))
    for total, name, n, window, dram, idle in sorted(table, reverse=True):
        print(f"| {name} | {n} | {window:.2f} | {dram:.1f} | {idle:.2f} | {total:.1f} |")

    if args.launches:
        print()
        print("| # | kernel grid | window from, us | window us | DRAM read, % of peak |")
        print("|---:|---|---:|---:|---:|")
        for i in order:
            l = launches[i]
            print(f"| {i} | {l['label']} | {l['at']:.2f} | {l['window']:.2f} | {l['dram']:.1f} |")


if __name__ == "__main__":
    main()
