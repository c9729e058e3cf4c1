#!/usr/bin/env bash
# s27 call 8: bench_moe_prefill_8k at aaf7c55, which counts the plan's row tiles: the expert
# GEMMs' rate over the padded tiles beside the real rows (the tail-tile hypothesis, v32).
set -u
O=$OUT/call8; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
timeout 150 .gpu_t/gpu_prefill_moe --ignored --exact bench_moe_prefill_8k --nocapture > $O/bench.log 2>&1; echo "rc=$?" >> $O/bench.log
cat $O/bench.log | grep -v "^$" | tail -20
