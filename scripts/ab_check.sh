#!/usr/bin/env bash
# On the GPU machine: the variants scripts/stage_variants.sh staged in DIR, in one go: each
# variant's GPU tests (if staged), then scripts/ab_bench.sh over all of them.
#   scripts/ab_check.sh OUTDIR DIR        (CONTEXTS, ROUNDS as ab_bench.sh takes them)
# Writes OUTDIR/tests_<rev>.log and OUTDIR/ab.md; exits non-zero if a test or a bench failed.
set -uo pipefail
out=${1:?usage: ab_check.sh OUTDIR DIR}
dir=${2:?usage: ab_check.sh OUTDIR DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
tar xJf "$dir/lily.tar.xz" -C "$dir"
find "$dir" -name '*.gz' -exec gunzip -f {} +
chmod +x "$dir"/lily_* "$dir"/tests_*/* 2>/dev/null
export LILY_TINY_FIXTURE="$dir/fixture" LILY_KERNEL_CACHE=${LILY_KERNEL_CACHE:-/tmp/lily-kernel-cache}
status=0
variants=()
for bin in "$dir"/lily_*; do
    rev=${bin##*/lily_}
    variants+=("$rev=$bin")
    for t in "$dir/tests_$rev"/*; do
        [ -x "$t" ] || continue
        "$t" --test-threads=1 >>"$out/tests_$rev.log" 2>&1 || status=1
    done
    [ -e "$out/tests_$rev.log" ] && echo "$rev tests: $(grep -h 'test result' "$out/tests_$rev.log" | tr '\n' ' ')"
done
"$here/scripts/ab_bench.sh" "$out/ab.md" "${variants[@]}" || status=1
exit $status
