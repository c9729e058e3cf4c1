#!/usr/bin/env bash
# Session 22 call 6: the token loop's gap to the replays against the number of steps (per token or per run?).
set -u
OUT=${1:?}
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))'):${LD_LIBRARY_PATH:-}
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/lily.tar.xz -C .gpu; chmod +x .gpu/lily_*
for s in 16 64 256 1024; do
  for r in 1 2; do
    timeout 60 .gpu/lily_f3de5cc bench --synthetic --contexts 1024 --steps $s --rounds 1 2>/dev/null | grep -E "^\| [0-9]" | sed "s/^/| steps $s | round $r /"
  done
done | tee $OUT/loop_steps.md
