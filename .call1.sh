#!/usr/bin/env bash
set -u
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia, os; [print(os.path.join(p, "cu13", "lib")) for p in nvidia.__path__]' | head -1):${LD_LIBRARY_PATH:-}
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
o=$OUT/c1; mkdir -p $o
# tests + A/B 1K, 3 rounds: main, route-flag, token-ahead-mapped
CONTEXTS=1024 ROUNDS=3 timeout 420 scripts/ab_check.sh $o/ab .gpu > $o/ab_check.log 2>&1
echo "ab_check rc=$? at $(el)s" | tee -a $o/ab_check.log
B=.gpu
if [ $(el) -lt 470 ]; then
  CONTEXTS=131072 ROUNDS=1 timeout $((560 - $(el))) scripts/ab_bench.sh $o/ab_128k.md "main=$B/lily_21b05bd" "route-flag=$B/lily_c0ae93c" > /dev/null 2>&1
  echo "128k at $(el)s" >> $o/ab_check.log
fi
if [ $(el) -lt 520 ]; then
  CONTEXTS=1024 ROUNDS=1 timeout $((585 - $(el))) scripts/ab_bench.sh $o/ab_warps.md "flag-w4=env LILY_SHAPES=moe_warps=4 $B/lily_c0ae93c" "flag-w16=env LILY_SHAPES=moe_warps=16 $B/lily_c0ae93c" > /dev/null 2>&1
  echo "warps at $(el)s" >> $o/ab_check.log
fi
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
