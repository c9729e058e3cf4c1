#!/usr/bin/env bash
# Profiles kernels with Nsight Compute on the GPU machine and summarises where their warps stall
# (scripts/profile/ncu_summary.py). Runs one of the staged GPU test binaries (scripts/gpu/gpu_check.sh
# --stage) under ncu, e.g. a kernel micro-benchmark:
#
#   scripts/profile/ncu_kernels.sh OUTDIR 'gdn_chunk_(solve|scan)' .gpu/benches/gdn --bench bench_gdn_prefill_8k
#
# Writes OUTDIR/ncu.txt (the speed-of-light, occupancy and warp-state sections), OUTDIR/sass.csv
# (per-instruction samples) and OUTDIR/summary.txt. Profiles the first launch of each matching
# kernel (NCU_COUNT, default 2 launches in all). ncu locks the clocks, so its durations are not
# the benchmark's.
set -euo pipefail
out=${1:?usage: ncu_kernels.sh OUTDIR KERNEL_REGEX TEST_BINARY [TEST ARGS...]}
regex=${2:?kernel name regex}
shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
ncu --target-processes all -k "regex:$regex" -c "${NCU_COUNT:-2}" \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SourceCounters -o "$out/profile" -f \
    "$@" --nocapture --test-threads=1 >"$out/run.log" 2>&1
ncu -i "$out/profile.ncu-rep" >"$out/ncu.txt"
ncu -i "$out/profile.ncu-rep" --page source --print-source sass --csv >"$out/sass.csv"
python3 "$here/scripts/profile/ncu_summary.py" "$out/sass.csv" | tee "$out/summary.txt"
