#!/usr/bin/env bash
# s29 call 4: ahead-attn (309ab59, shape l2_ahead_rows_attn: the router's ahead rows per group of
# 16 when the next layer is an attention layer's q|k|v; GDN in_proj keeps l2_ahead_rows = 3).
# gpu_kernels and gpu_backend under l2_ahead_rows_attn=7; decode 1K x 3 rounds of 3 (main's),
# 5, 7, 10 and 128K x 1 of 3 and the best guess 7, every run under clock_log.sh (CLOCKS=1).
set -u
P=309ab59
O=$OUT/call4; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache LILY_TINY_FIXTURE=$PWD/.gpu_v/fixture
D=.gpu_v
tar xJf $D/lily.tar.xz -C $D; find $D -name '*.gz' -exec gunzip -f {} +; chmod +x $D/lily_* $D/tests_*/*
for t in gpu_kernels gpu_backend; do
  LILY_SHAPES=l2_ahead_rows_attn=7 timeout 120 $D/tests_$P/$t --test-threads=1 >> $O/tests_a7.log 2>&1; echo "$t rc=$?" >> $O/tests_a7.log
done
grep -E "rc=|test result|FAILED|panicked" $O/tests_a7.log | head
CLOCKS=1 CONTEXTS=1024 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 330 scripts/ab_bench.sh $O/ab.md \
  "main=$D/lily_$P" "a5=env LILY_SHAPES=l2_ahead_rows_attn=5 $D/lily_$P" \
  "a7=env LILY_SHAPES=l2_ahead_rows_attn=7 $D/lily_$P" "a10=env LILY_SHAPES=l2_ahead_rows_attn=10 $D/lily_$P" > /dev/null 2>&1
echo "ab rc=$?"
CLOCKS=1 CONTEXTS=131072 ROUNDS=1 BENCH_FLAGS=--no-token-loop timeout 90 scripts/ab_bench.sh $O/ab.md \
  "main=$D/lily_$P" "a7=env LILY_SHAPES=l2_ahead_rows_attn=7 $D/lily_$P" > /dev/null 2>&1
echo "ab128 rc=$?"; grep -v clocks $O/ab.md | cut -c1-110; grep clocks $O/ab.md | sed 's/throttle.*//' | cut -c1-150
