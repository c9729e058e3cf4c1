#!/usr/bin/env bash
# s28 call 4: the GDN gated norm in out_proj's prologue (branch gdn-out-norm) against main
# 32cc4b4: gpu_kernels, gpu_backend and gpu_prefill_gdn, decode 1K / 8K / 128K x 3 rounds, a
# traced step at 1K of the variant.
set -u
M=32cc4b4; P=${P:?}
O=$OUT/call4; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache LILY_TINY_FIXTURE=$PWD/.gpu_v/fixture
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv > $O/gpu.txt
D=.gpu_v
tar xJf $D/lily.tar.xz -C $D; find $D -name '*.gz' -exec gunzip -f {} +; chmod +x $D/lily_* $D/tests_*/*
for t in gpu_kernels gpu_backend gpu_prefill_gdn; do
  timeout 200 $D/tests_$P/$t --test-threads=1 --nocapture >> $O/tests_$P.log 2>&1; echo "$t rc=$?" >> $O/tests_$P.log
done
grep -E "rc=|test result|FAILED|panicked|gated norm step|read-out" $O/tests_$P.log | head -30
CONTEXTS=1024,8192,131072 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 300 scripts/ab_bench.sh $O/ab.md \
  "main=$D/lily_$M" "gated=$D/lily_$P" > /dev/null 2>&1
echo "ab rc=$?"; cut -c1-160 $O/ab.md
timeout 70 $D/lily_$P bench --synthetic --contexts 1024 --no-token-loop --trace /tmp/t_gon.csv > /dev/null 2>&1 &&
  python3 scripts/trace_summary.py /tmp/t_gon.csv > $O/trace_gated.md && grep -E "gdn|gemv_gdn" $O/trace_gated.md
cd $OUT && tar czf call4.tgz call4
