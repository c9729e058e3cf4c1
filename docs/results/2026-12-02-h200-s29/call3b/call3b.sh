#!/usr/bin/env bash
# s29 call 3b: decode alone long enough for the power meter: main (ab9e4e5) at 1K, 16 rounds of
# 512 steps (each round from the 1K prompt), then 128K, 4 rounds of 512; each under
# scripts/clock_log.sh (instantaneous power), every sample kept.
set -u
O=$OUT/call3b; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/gpu.tar.xz -C .gpu
scripts/clock_log.sh $O/clocks_1k.csv .gpu/lily bench --synthetic --contexts 1024 --steps 512 --rounds 16 --no-token-loop 2>>$O/bench.err | grep -E "^\| [0-9]" | tee -a $O/bench.md
cat $O/clocks_1k.csv.summary | tee -a $O/bench.md
scripts/clock_log.sh $O/clocks_128k.csv .gpu/lily bench --synthetic --contexts 131072 --steps 512 --rounds 4 --no-token-loop 2>>$O/bench.err | grep -E "^\| [0-9]" | tee -a $O/bench.md
cat $O/clocks_128k.csv.summary | tee -a $O/bench.md
cd $OUT && tar czf call3b.tgz call3b
