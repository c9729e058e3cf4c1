#!/usr/bin/env bash
# One decode step's hardware activity sampled over time (Nsight Compute's PM sampling: DRAM
# throughput, SM activity, ... every few hundred nanoseconds across the whole step graph), on
# the GPU machine: which stretches of the step leave DRAM idle. Runs `lily bench
# --profiler-step`, which replays one step with the profiler's capture on:
#
#   scripts/profile/ncu_step.sh OUTDIR LILY [CONTEXT]       # CONTEXT defaults to 1024
#
# With STALLS=1 it samples where each kernel's warps stall instead (PC sampling, the
# SourceCounters and WarpStateStats sections, over the same captured step as one graph) and
# writes OUTDIR/step.ncu-rep, OUTDIR/sass.csv.gz and OUTDIR/summary.txt (scripts/profile/ncu_summary.py: stall reasons, the
# samples by code region, the hottest instructions, per kernel).
#
# Writes OUTDIR/step.ncu-rep, OUTDIR/step_samples.csv (every sampled metric with its instance
# values and their correlation ids), OUTDIR/step_details.txt and OUTDIR/pm_timeline.md (how busy
# DRAM was in each launch's window, scripts/profile/pm_timeline.py). PM_INTERVAL sets ncu's
# --pm-sampling-interval. Clocks are left alone (--clock-control none), so the step runs at the
# clock the benchmark runs at; ncu flushes the caches before the step, whose launches then span
# about what they do unprofiled.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: ncu_step.sh OUTDIR LILY [CONTEXT]}
lily=${2:?usage: ncu_step.sh OUTDIR LILY [CONTEXT]}
context=${3:-1024}
mkdir -p "$out"
# One capture of the step, by what is sampled.
if [ "${STALLS:-0}" = 1 ]; then
    sections=(--section WarpStateStats --section SourceCounters)
else
    sections=(--section PmSampling ${PM_INTERVAL:+--pm-sampling-interval "$PM_INTERVAL"})
fi
ncu --profile-from-start off --graph-profiling graph --clock-control none "${sections[@]}" -o "$out/step" -f \
    "$lily" bench --synthetic --contexts "$context" --rounds 1 --steps 8 --profiler-step >"$out/run.log" 2>&1
if [ "${STALLS:-0}" = 1 ]; then
    ncu -i "$out/step.ncu-rep" --page source --print-source sass --csv >"$out/sass.csv"
    python3 "$here/scripts/profile/ncu_summary.py" "$out/sass.csv" --top 5 >"$out/summary.txt"
    gzip -f "$out/sass.csv"
    exit 0
fi
ncu -i "$out/step.ncu-rep" --page raw --csv --print-metric-instances details >"$out/step_samples.csv"
ncu -i "$out/step.ncu-rep" --page details --print-details all >"$out/step_details.txt"
python3 "$here/scripts/profile/pm_timeline.py" "$out/step_samples.csv" --launches >"$out/pm_timeline.md"
