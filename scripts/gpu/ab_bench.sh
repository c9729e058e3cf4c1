#!/usr/bin/env bash
# Side-by-side decode/prefill of several lily builds (or LILY_SHAPES / --leave-out variants) in
# one go on the GPU machine, rounds interleaved so that drift hits every variant alike.
#   scripts/gpu/ab_bench.sh OUTFILE "LABEL=CMD" ["LABEL=CMD" ...]
# LABEL must not contain `=`; CMD is a lily binary with optional extra `lily bench` flags, or
# `env LILY_SHAPES=... BINARY` for a launch-shape variant, e.g.
#   scripts/gpu/ab_bench.sh $OUT/ab.md "main=.gpu/lily_base" "new=.gpu/lily" "no-prepare=.gpu/lily --leave-out attn_prepare"
# Environment: CONTEXTS (default 1024,131072), ROUNDS (default 2), BENCH_FLAGS (after `bench`, for
# every variant: e.g. --no-token-loop, which builds older than the token loop column do not know),
# CLOCKS=1 (each run under scripts/gpu/clock_log.sh: its SM clock and power as a row of its own).
set -uo pipefail
out=${1:?usage: ab_bench.sh OUTFILE LABEL=CMD...}
shift
status=0
for round in $(seq 1 "${ROUNDS:-2}"); do
    for v in "$@"; do
        label=${v%%=*}
        # CMD's words, with `bench` after the binary (the first word that is neither `env` nor
        # an assignment), so that CMD's own flags follow the subcommand.
        read -ra words <<<"${v#*=}"
        cmd=()
        placed=0
        for w in "${words[@]}"; do
            cmd+=("$w")
            if [ $placed = 0 ] && [ "$w" != env ] && [[ "$w" != *=* ]]; then
                cmd+=(bench)
                placed=1
            fi
        done
        if [ -n "${CLOCKS:-}" ]; then cmd=("$(dirname "$0")/clock_log.sh" "$out.clocks.csv" "${cmd[@]}"); fi
        # shellcheck disable=SC2086 # BENCH_FLAGS is a list of flags
        "${cmd[@]}" --synthetic --contexts "${CONTEXTS:-1024,131072}" ${BENCH_FLAGS:-} 2>"$out.err" |
            grep -E "^\| [0-9]" | sed "s/^/| $label | round $round /" | tee -a "$out" || {
            status=1
            echo "| $label | round $round | failed: $(grep -m1 -iE '^error' "$out.err")" | tee -a "$out"
        }
        if [ -n "${CLOCKS:-}" ]; then echo "| $label | round $round | $(cat "$out.clocks.csv.summary") |" | tee -a "$out"; fi
    done
done
rm -f "$out.err" "$out.clocks.csv" "$out.clocks.csv.summary"
exit $status
