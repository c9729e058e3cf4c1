#!/usr/bin/env python3
"""What each kernel costs inside the captured decode step.

On the GPU machine: runs `lily bench --profile` once at one context to list the step's launches
(kernel name and grid), then `lily bench` once per distinct launch label with that label left
out (`--leave-out`), and reports each label's marginal cost: the full step's time minus the
time of the step without it, launch overlap included. This is what an eager per-kernel profile
cannot show: under a graph and programmatic dependent launch a kernel costs what it adds to the
chain, not its isolated duration. The tokens of a run with a kernel left out are meaningless;
only its time is used.

    python3 scripts/profile/ablate_decode.py .gpu/lily --context 1024 > OUTDIR/ablation.md
"""

import argparse
import re
import subprocess
import sys


# Launches whose leave-out changes what the rest of the step reads, so that the step's time
# without them is not their cost. Without the router the expert ids are never written: they
# keep what the fresh buffer held (evidently one expert in every slot, as zeros would be), so
# gate|up and down stream one expert's bytes instead of eight, and the step got 0.37-0.41 ms
# faster than the router's work can explain (diagnostic variants that skip parts of the router
# put its own work at ~1.3 us per launch).
NOT_ITS_COST = {
    "moe_router": "without it the expert ids are never written (the slots read one expert)",
}


def bench(lily, context, extra):
    """Decode tok/s of `lily bench --synthetic` at `context` (None if the run fails), and its
    stdout (or stderr's tail)."""
    cmd = [lily, "bench", "--synthetic", "--contexts", str(context)] + extra
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr[-2000:]
    out = run.stdout
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0] == str(context):
            return float(cells[3]), out
    sys.exit(f"no result row for context {context} in:\n{out}")


def step_launches(profile_out, context):
    """(label, launches, eager us each) of the decode step table that --profile prints."""
    rows, inside = [], False
    for line in profile_out.splitlines():
        if line.startswith("## "):
            inside = line.startswith(f"## decode step at context {context}")
            continue
        m = re.match(r"\|\s*([^|]+?)\s*\|\s*(\d+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|", line)
        if inside and m:
            rows.append((m.group(1), int(m.group(2)), float(m.group(4))))
    if not rows:
        sys.exit("the profile printed no decode step table")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lily", help="the lily binary")
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--min-us", type=float, default=0.0,
                    help="skip launches whose eager time per step is below this")
    a = ap.parse_args()

    full, profile_out = bench(a.lily, a.context, ["--profile"])
    if full is None:
        sys.exit(f"the profiled run failed:\n{profile_out}")
    launches = step_launches(profile_out, a.context)
    step_ms = 1e3 / full
    print(f"# decode step at context {a.context}: {full:.1f} tok/s, {step_ms:.3f} ms per step")
    print("| launch (kernel grid) | per step | eager us each | tok/s without | marginal ms per step | marginal us per launch |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, count, eager_us in launches:
        if count * eager_us < a.min_us:
            continue
        reason = NOT_ITS_COST.get(label.split()[0])
        if reason:
            print(f"| {label} | {count} | {eager_us:.2f} | not measured: {reason} | | |", flush=True)
            continue
        without, err = bench(a.lily, a.context, ["--leave-out", label])
        if without is None:
            # Some launches cannot be left out (the step then fails its own checks).
            # The error's own line, not the backtrace's last frame (which can be "9: <unknown>").
            lines = err.strip().splitlines() or ["(no output)"]
            reason = next((l for l in lines if l.startswith("Error")), lines[-1]).replace("|", "/")
            print(f"| {label} | {count} | {eager_us:.2f} | failed: {reason} | | |", flush=True)
            continue
        marginal = step_ms - 1e3 / without
        print(f"| {label} | {count} | {eager_us:.2f} | {without:.1f} | {marginal:.3f} | {1e3 * marginal / count:.2f} |",
              flush=True)
    again, _ = bench(a.lily, a.context, [])
    again = float("nan") if again is None else again
    print(f"# the full step again at the end: {again:.1f} tok/s (run-to-run drift)")


if __name__ == "__main__":
    main()
