#!/usr/bin/env bash
# s24 call 7: (1) main without the dead row-map select (gemm_moe_gate_up's PTX alone changes)
# against b46743e: its gpu_prefill_moe and gpu_backend, 8K x 3; (2) where gdn_chunk_scan and
# gdn_chunk_solve stall (Nsight Compute on bench_gdn_prefill_8k, b46743e's test binary: the GDN
# kernels are the same).
set -u
O=$OUT/call7; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=150 CONTEXTS=8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 330 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -E "tests:|left out|^\| [0-9a-f]+ \| round [0-9] \| 8192|rc=" $O/run.log | cut -c1-200
tar xJf .gpu/gpu.tar.xz -C .gpu
export PATH=/usr/local/cuda/bin:$PATH
timeout 200 scripts/ncu_kernels.sh $O/ncu_gdn 'gdn_chunk_(solve|scan)' .gpu/tests/gpu_prefill_gdn --ignored bench_gdn_prefill_8k > /dev/null 2>&1; echo "ncu rc=$?"
head -60 $O/ncu_gdn/summary.txt
rm -f $O/ncu_gdn/profile.ncu-rep; xz -9 $O/ncu_gdn/sass.csv 2>/dev/null
cd $OUT && tar czf call7.tgz call7
