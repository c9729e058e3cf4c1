#!/usr/bin/env bash
# s24 call 9: where gemm_moe_down's and gemm_moe_gate_up's warps stall (Nsight Compute on
# bench_moe_prefill_8k, b46743e's test binary; the GEMM kernels differ from c1219da only in
# gate_up's dead row-map select).
set -u
O=$OUT/call9; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache PATH=/usr/local/cuda/bin:$PATH
tar xJf .gpu/gpu.tar.xz -C .gpu
timeout 240 scripts/ncu_kernels.sh $O/ncu_moe 'gemm_moe_(down|gate_up)' .gpu/tests/gpu_prefill_moe --ignored bench_moe_prefill_8k > /dev/null 2>&1; echo "ncu rc=$?"
head -70 $O/ncu_moe/summary.txt | cut -c1-160
grep -E "gemm_moe|Duration|Throughput|Occupancy|Registers Per|Executed Ipc|L2 Hit|Mem Busy|Max Bandwidth" $O/ncu_moe/ncu.txt | head -40
rm -f $O/ncu_moe/profile.ncu-rep; xz -9 $O/ncu_moe/sass.csv 2>/dev/null
cd $OUT && tar czf call9.tgz call9
