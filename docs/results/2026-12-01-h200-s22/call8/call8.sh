#!/usr/bin/env bash
# Session 22 call 8: lily bench at every context on the final main (token loop warmed in the warm-up).
set -u
OUT=${1:?}
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))'):${LD_LIBRARY_PATH:-}
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
xz -d .gpu/lily.xz; chmod +x .gpu/lily
timeout 220 .gpu/lily bench --synthetic --json $OUT/bench.json 2>$OUT/bench.err | tee $OUT/bench.md
