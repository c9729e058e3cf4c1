#!/usr/bin/env bash
# On the GPU machine: the variants scripts/gpu/stage_variants.sh staged in DIR, in one go: each
# variant's GPU tests (if staged), its kernel micro-benchmarks (BENCHES), then
# scripts/gpu/ab_bench.sh over the variants whose tests passed.
#   scripts/gpu/ab_check.sh OUTDIR DIR        (CONTEXTS, ROUNDS, BENCH_FLAGS as ab_bench.sh takes them)
# BENCHES="moe:bench_moe_prefill_8k products:bench_gemm_8k": micro-benchmarks (binary:name, the
# binary staged from benches/, or at a revision from before benches/ the test binary that held
# the benchmark as an #[ignore]d test) run twice per variant, interleaved, into OUTDIR/benches.md.
# TEST_TIMEOUT (seconds, default 300) bounds each test binary: a kernel that never finishes (a
# wrong barrier phase) costs that, not the whole call, and its variant is left out of the bench.
# Writes OUTDIR/tests_<rev>.log (with what the tests print: their measured errors) and
# OUTDIR/ab.md; exits non-zero if a test or a bench failed.
set -uo pipefail
out=${1:?usage: ab_check.sh OUTDIR DIR}
dir=${2:?usage: ab_check.sh OUTDIR DIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
tar xJf "$dir/lily.tar.xz" -C "$dir"
find "$dir" -name '*.gz' -exec gunzip -f {} +
chmod +x "$dir"/lily_* "$dir"/tests_*/* "$dir"/benches_*/* 2>/dev/null
export LILY_TINY_FIXTURE="$dir/fixture" LILY_KERNEL_CACHE=${LILY_KERNEL_CACHE:-/tmp/lily-kernel-cache}
status=0
passed=()
for bin in "$dir"/lily_*; do
    rev=${bin##*/lily_}
    ok=1
    for t in "$dir/tests_$rev"/*; do
        [ -x "$t" ] || continue
        timeout "${TEST_TIMEOUT:-300}" "$t" --test-threads=1 --nocapture >>"$out/tests_$rev.log" 2>&1 || {
            rc=$?
            ok=0
            echo "${t##*/}: failed or timed out (exit $rc)" >>"$out/tests_$rev.log"
        }
    done
    [ -e "$out/tests_$rev.log" ] && echo "$rev tests: $(grep -h 'test result' "$out/tests_$rev.log" | tr '\n' ' ')"
    if [ $ok = 1 ]; then passed+=("$rev=$bin"); else status=1; echo "$rev: left out of the bench"; fi
done
for round in 1 2; do
    for v in "${passed[@]}"; do
        rev=${v%%=*}
        for b in ${BENCHES:-}; do
            if [ -x "$dir/benches_$rev/${b%%:*}" ]; then
                run=("$dir/benches_$rev/${b%%:*}" --bench "${b#*:}")
            elif [ -x "$dir/tests_$rev/${b%%:*}" ]; then
                run=("$dir/tests_$rev/${b%%:*}" --ignored --exact "${b#*:}" --nocapture)
            else
                continue
            fi
            timeout "${TEST_TIMEOUT:-300}" "${run[@]}" 2>&1 |
                grep -vE '^$|^running |^test |^test result|^-- ' | sed "s/^/| $rev | round $round | /" >>"$out/benches.md"
        done
    done
done
[ -e "$out/benches.md" ] && cat "$out/benches.md"
[ ${#passed[@]} -gt 0 ] && { "$here/scripts/gpu/ab_bench.sh" "$out/ab.md" "${passed[@]}" || status=1; }
exit $status
