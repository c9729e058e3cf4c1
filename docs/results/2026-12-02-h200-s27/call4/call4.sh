#!/usr/bin/env bash
# s27 call 4: main's per-launch profile (lily bench --profile, launched eagerly) of the 8K and
# 32K prefills and their decode steps, for where the prefill's time goes after this session.
set -u
O=$OUT/call4; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/gpu.tar.xz -C .gpu 2>/dev/null
bin=$(ls .gpu/lily* | head -1); chmod +x $bin
timeout 200 $bin bench --synthetic --contexts 8192,32768 --no-token-loop --rounds 1 --profile > $O/profile_8k_32k.md 2>&1; echo "profile rc=$?"
grep -A12 "^## prefill" $O/profile_8k_32k.md | cut -c1-120
cd $OUT && tar czf call4.tgz call4
