#!/usr/bin/env bash
# s28 call 1: attn_prepare asks the split-KV decode's first keys into L2 before its wait
# (branch kv-ahead, 9babb81, shape attn_kv_ahead) against main 32b0363: gpu_kernels and
# gpu_backend under attn_kv_ahead=64, decode 1K / 8K / 128K x 2 rounds (main, 64, 128), then a
# traced step at 1K of main and of 64.
set -u
M=32b0363; K=9babb81
O=$OUT/call1; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache LILY_TINY_FIXTURE=$PWD/.gpu_v/fixture
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv > $O/gpu.txt
D=.gpu_v
tar xJf $D/lily.tar.xz -C $D; find $D -name '*.gz' -exec gunzip -f {} +; chmod +x $D/lily_* $D/tests_*/*
for t in gpu_kernels gpu_backend; do
  LILY_SHAPES=attn_kv_ahead=64 timeout 150 $D/tests_$K/$t --test-threads=1 >> $O/tests_kv64.log 2>&1; echo "$t rc=$?" >> $O/tests_kv64.log
done
grep -E "rc=|test result|FAILED|panicked" $O/tests_kv64.log | head
CONTEXTS=1024,8192,131072 ROUNDS=2 BENCH_FLAGS=--no-token-loop timeout 300 scripts/ab_bench.sh $O/ab.md \
  "main=$D/lily_$M" "kv64=env LILY_SHAPES=attn_kv_ahead=64 $D/lily_$K" "kv128=env LILY_SHAPES=attn_kv_ahead=128 $D/lily_$K" > /dev/null 2>&1
echo "ab rc=$?"; cut -c1-160 $O/ab.md
for v in "main:" "kv64:attn_kv_ahead=64"; do
  n=${v%%:*}; s=${v#*:}; b=$D/lily_$M; [ -n "$s" ] && b=$D/lily_$K
  LILY_SHAPES=$s timeout 70 $b bench --synthetic --contexts 1024 --no-token-loop --trace /tmp/t_$n.csv > /dev/null 2>&1 &&
    python3 scripts/trace_summary.py /tmp/t_$n.csv > $O/trace_$n.md && grep -E "attn|gemv_hidden_normed grid 132x1x1, before attn" $O/trace_$n.md
done
cd $OUT && tar czf call1.tgz call1
