#!/usr/bin/env bash
# The GPU's clocks, power and throttle reasons every 200 ms while a command runs, then their
# summary: the decode step's latency-bound chains scale with the SM clock, so a tok/s figure
# compared across machines (or rounds) needs the clock it ran at beside it.
#   scripts/gpu/clock_log.sh CSV COMMAND [ARG ...]   # COMMAND's output and status pass through;
#                                                # the summary goes to stderr and CSV.summary
set -uo pipefail
csv=${1:?usage: clock_log.sh CSV COMMAND [ARG ...]}
shift
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw.instant,temperature.gpu,clocks_event_reasons.active \
    --format=csv,noheader,nounits -lms 200 >"$csv" 2>/dev/null &
smi=$!
"$@"
status=$?
kill "$smi" 2>/dev/null
wait "$smi" 2>/dev/null
# Samples with the GPU busy only (power over 150 W): an idle GPU drops its clock, which says
# nothing of the run.
python3 - "$csv" <<'PY' | tee "$csv.summary" >&2
import collections, statistics, sys
rows = [[f.strip() for f in line.split(",")] for line in open(sys.argv[1]) if line.count(",") >= 5]
busy = [r for r in rows if r[3].replace(".", "", 1).isdigit() and float(r[3]) > 150]
if not busy:
    print("clocks: no busy samples")
    sys.exit()
sm = sorted(int(r[1]) for r in busy)
reasons = collections.Counter(r[5] for r in busy)
print(f"clocks over {len(busy)} busy samples: SM min {sm[0]} / median {statistics.median_low(sm)} / max {sm[-1]} MHz,"
      f" memory {statistics.median_low(int(r[2]) for r in busy)} MHz,"
      f" power mean {statistics.mean(float(r[3]) for r in busy):.0f} W (max {max(float(r[3]) for r in busy):.0f}),"
      f" throttle reasons: " + ", ".join(f"{k} x{n}" for k, n in reasons.most_common()))
PY
exit $status
