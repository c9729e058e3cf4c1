#!/usr/bin/env bash
# s24 call 6: every kernel launch of lily bench at 8K (warm-up and measured prefill, two decode
# steps) timed by Nsight Compute (duration only, clocks locked), main b46743e: where the 8K
# prefill's time goes beside the GEMMs and attention.
set -u
O=$OUT/call6; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/gpu.tar.xz -C .gpu
timeout 400 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum -c 5000 --csv .gpu/lily bench --synthetic --contexts 8192 --rounds 1 --steps 2 --no-token-loop > $O/ncu_8k.csv 2> $O/ncu_8k.err
echo "rc=$? rows=$(wc -l < $O/ncu_8k.csv)"
timeout 100 .gpu/lily bench --synthetic --contexts 8192 --rounds 2 --no-token-loop > $O/bench_8k.md 2>&1
tail -3 $O/bench_8k.md
cd $OUT && xz -9 $O/ncu_8k.csv; ls -la $O
