#!/usr/bin/env bash
# s24 call 8: as call 6, at 1K: where a 1K prefill's time goes (every launch timed by Nsight Compute).
set -u
O=$OUT/call8; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/gpu.tar.xz -C .gpu
timeout 400 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum -c 5000 --csv .gpu/lily bench --synthetic --contexts 1024 --rounds 1 --steps 2 --no-token-loop > $O/ncu_1k.csv 2> $O/ncu_1k.err
echo "rc=$? rows=$(wc -l < $O/ncu_1k.csv)"
timeout 100 .gpu/lily bench --synthetic --contexts 1024 --rounds 2 --no-token-loop > $O/bench_1k.md 2>&1
tail -3 $O/bench_1k.md
cd $OUT && xz -9 $O/ncu_1k.csv; ls -la $O
