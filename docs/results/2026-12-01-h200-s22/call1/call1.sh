#!/usr/bin/env bash
# Session 22 call 1: the prepared split branches, A/B at 1K with tests, shape variants, 128K, traces.
set -u
OUT=${1:?}
export LD_LIBRARY_PATH=$(ls -d $(python3 -c 'import nvidia,os;print(os.path.dirname(nvidia.__path__[0]))')/nvidia/cu13/lib 2>/dev/null):${LD_LIBRARY_PATH:-}
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
mkdir -p $OUT/ab
CONTEXTS=1024 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 330 scripts/ab_check.sh $OUT/ab .gpu > $OUT/ab/ab_check.log 2>&1
echo "ab_check rc=$?" >> $OUT/ab/ab_check.log
CONTEXTS=1024 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 90 scripts/ab_bench.sh $OUT/ab/shapes.md \
  "main=.gpu/lily_683f29f" "split5=env LILY_SHAPES=moe_gate_up_min_blocks=5 .gpu/lily_12665f8" \
  "lmsplit0=env LILY_SHAPES=lm_head_split=0 .gpu/lily_448ab0c" "both=.gpu/lily_797c730" > /dev/null 2>&1
CONTEXTS=131072 ROUNDS=1 BENCH_FLAGS=--no-token-loop timeout 60 scripts/ab_bench.sh $OUT/ab/long.md \
  "main=.gpu/lily_683f29f" "both=.gpu/lily_797c730" > /dev/null 2>&1
for r in 683f29f 797c730 12665f8; do
  timeout 40 .gpu/lily_$r bench --synthetic --contexts 1024 --no-token-loop --trace /tmp/t_$r.csv > /dev/null 2>&1 &&
    python3 scripts/trace_summary.py /tmp/t_$r.csv > $OUT/ab/trace_$r.md
done
cd $OUT && tar czf ab.tgz ab && rm -rf ab
