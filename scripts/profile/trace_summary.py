#!/usr/bin/env python3
"""Summarises the per-block timeline of one decode step (`lily bench --trace FILE`).

For each launch: how many blocks, when its first and last blocks started, when its PDL wait
released (the first block past the wait: the previous kernel had then finished and its writes
were visible) and how long from that release to the next launch's: the launch's share of the
step's critical path. Then the same share averaged per kernel grid (what the ablation's
marginal costs estimate from outside) and how early each kernel's blocks were resident before
their wait released (what the loads before the wait had to work with).

    python3 scripts/profile/trace_summary.py trace.csv > trace_summary.md
"""

import argparse
import collections
import csv
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="the file lily bench --trace wrote")
    ap.add_argument("--launches", action="store_true", help="also list every launch")
    args = ap.parse_args()

    launches = collections.OrderedDict()
    with open(args.csv, newline="") as f:
        for row in csv.DictReader(f):
            i = int(row["launch"])
            l = launches.setdefault(i, {"label": row["label"], "start": [], "wait": [], "sms": set()})
            l["start"].append(int(row["start_ns"]))
            if row["wait_ns"]:
                l["wait"].append(int(row["wait_ns"]))
            l["sms"].add(int(row["sm"]))
    if not launches:
        sys.exit(f"{args.csv}: no launches")

    order = sorted(launches)
    # A launch whose blocks all returned before their wait has no release; the previous one's
    # stands in for it.
    release = {}
    last = 0
    for i in order:
        w = launches[i]["wait"]
        last = min(w) if w else last
        release[i] = last
    end = max(max(l["wait"] or l["start"]) for l in launches.values())
    share = {}
    for k, i in enumerate(order):
        nxt = release[order[k + 1]] if k + 1 < len(order) else end
        share[i] = nxt - release[i]

    step_us = (end - min(min(l["start"]) for l in launches.values())) / 1e3
    print(f"# one decode step: {len(order)} launches, {sum(len(l['start']) for l in launches.values())} blocks, "
          f"{step_us:.1f} us from the first block's start to the last mark")
    print()
    print("| kernel grid | launches | blocks | SMs | critical path us each (release to next release) | "
          "first block resident before its release, us | last block start after the release, us |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rows = []
    for label, ids in products(launches, order).items():
        l0 = launches[ids[0]]
        crit = statistics.mean(share[i] for i in ids) / 1e3
        lead = statistics.mean(release[i] - min(launches[i]["start"]) for i in ids) / 1e3
        late = statistics.mean(max(launches[i]["start"]) - release[i] for i in ids) / 1e3
        rows.append((crit * len(ids), label, len(ids), len(l0["start"]), len(l0["sms"]), crit, lead, late))
    for total, label, n, blocks, sms, crit, lead, late in sorted(rows, reverse=True):
        print(f"| {label} | {n} | {blocks} | {sms} | {crit:.2f} | {lead:.2f} | {late:.2f} |")

    if args.launches:
        print()
        print("| # | kernel grid | first start | last start | release | critical path us |")
        print("|---:|---|---:|---:|---:|---:|")
        for i in order:
            l = launches[i]
            print(f"| {i} | {l['label']} | {min(l['start']) / 1e3:.2f} | {max(l['start']) / 1e3:.2f} | "
                  f"{release[i] / 1e3:.2f} | {share[i] / 1e3:.2f} |")


def kernel(label):
    return label.split(" grid")[0]


def products(launches, order):
    """{name: [launch ids]}: the launches grouped by label (`kernel grid XxYxZ`), a label that is
    several products of the model split by its neighbour (split_by_neighbour)."""
    same_label = collections.OrderedDict()
    for k, i in enumerate(order):
        same_label.setdefault(launches[i]["label"], []).append((k, i))
    out = collections.OrderedDict()
    for label, ks in same_label.items():
        for name, part in split_by_neighbour(label, ks, launches, order):
            out[name] = [i for _, i in part]
    return out


def split_by_neighbour(label, ks, launches, order):
    """One kernel grid can be several products of the model (the streamed layer-input product is
    GDN in_proj and attention q|k|v; one output projection is GDN out_proj and o_proj): such a
    label is split by the kernel that follows it, else by the one before it, when each part
    has at least two launches (a layer's first or last launch alone is not a product)."""
    for offset, word in ((1, "before"), (-1, "after")):
        parts = collections.OrderedDict()
        for k, i in ks:
            j = k + offset
            near = kernel(launches[order[j]]["label"]) if 0 <= j < len(order) else "nothing"
            parts.setdefault(f"{label}, {word} {near}", []).append((k, i))
        if len(parts) > 1 and all(len(p) >= 2 for p in parts.values()):
            return list(parts.items())
    return [(label, ks)]


if __name__ == "__main__":
    main()
