#!/usr/bin/env bash
# Every GPU test and the benchmark in one go, on an H200 machine with the CUDA driver, NVRTC
# and PyTorch but no Rust toolchain and no network. Results go to OUTDIR.
#
# Build here first (x86-64 Linux, glibc <= the GPU machine's):
#   LILY_COMMIT=$(git rev-parse --short HEAD) cargo build --release -p lily-cli
#   scripts/gpu/gpu_check.sh --stage DIR           # lily + the GPU test and bench binaries (built if needed), packed as DIR/gpu.tar.xz
# Then on the GPU machine, from the repository root (carry DIR):
#   scripts/gpu/gpu_check.sh OUTDIR [DIR]              # DIR defaults to .gpu; unpacks DIR/gpu.tar.xz first
# Packed because the GPU machine takes at most 64 MiB of working tree and carried paths: the
# repository is ~36 MB and the stripped binaries ~28 MB (xz: ~6 MB). The other scripts run
# from an unpacked DIR: `tar xJf DIR/gpu.tar.xz -C DIR` (or after one gpu_check.sh run).
# The benchmark runs under scripts/gpu/clock_log.sh (OUTDIR/clocks.csv and its .summary: the SM
# clock and power it ran at).
# Environment: CONTEXTS (default: the contract's 256 .. 131072), BENCH_FLAGS (e.g. --profile),
# FP8_CONTEXTS (the FP8 benchmark's, default 1024,8192,131072), SKIP_TRANSFORMERS=1, TRANSFORMERS_CONTEXTS (default 1024,8192), SKIP_AGREEMENT=1,
# AGREEMENT_LAYERS (default 8), GPU_BENCHES=1 (also the kernels' micro-benchmarks, benches/),
# ABLATION=1 (also each decode launch's marginal cost at 1K, scripts/profile/ablate_decode.py, ~3 min),
# SHAPES_SWEEP="gemv_out_warps=4 moe_warps=8,moe_down_rows=2 ..." (decode launch shapes to try, see
# crates/cuda/src/shapes.rs: each runs the kernel tests, the tiny model's and the prefill MoE's
# and lily bench at SWEEP_CONTEXTS (default 1024), twice, interleaved with the defaults; ~70 s
# per shape).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${1:-}" = "--stage" ]; then
    dir=${2:?usage: gpu_check.sh --stage DIR}
    mkdir -p "$dir/tests" "$dir/benches"
    strip -o "$dir/lily" "$here/target/release/lily"
    built=$(cd "$here" && scripts/test_binaries.sh) || { echo "gpu_check.sh: building the test binaries failed" >&2; exit 1; }
    while read -r kind t exe; do
        strip -o "$dir/$kind/$t" "$exe"
    done <<<"$built"
    mkdir -p "$dir/fixture" "$dir/fixture_fp8"
    cp "$here"/crates/cpu/tests/fixtures/linear3_full1/* "$dir/fixture/"
    cp "$here"/crates/cpu/tests/fixtures/linear3_full1_fp8/* "$dir/fixture_fp8/"
    tar cf - -C "$dir" lily tests benches | xz -6 -T2 >"$dir/gpu.tar.xz"
    rm -r "$dir/lily" "$dir/tests" "$dir/benches"
    ls -la "$dir"
    exit 0
fi

out=${1:?usage: gpu_check.sh OUTDIR [BIN_DIR]}
bin=${2:-$here/.gpu}
if [ -e "$bin/gpu.tar.xz" ]; then tar xJf "$bin/gpu.tar.xz" -C "$bin" || exit 1; fi
mkdir -p "$out"
status=0

# NVRTC: the CUDA toolkit's, else the one PyTorch's wheels bring.
if ! ldconfig -p | grep -q libnvrtc.so.13; then
    for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
             $(python3 -c 'import nvidia, os; [print(os.path.join(p, "cu13", "lib")) for p in nvidia.__path__]' 2>/dev/null); do
        if [ -e "$d/libnvrtc.so.13" ]; then export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; break; fi
    done
fi

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
    ldd --version | head -1
    echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

echo "== GPU tests"
export LILY_TINY_FIXTURE="$bin/fixture" LILY_TINY_FP8_FIXTURE="$bin/fixture_fp8"
# pdl_order reads the SASS of this machine's own compiler (the code that runs here).
LILY_CUOBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null) && export LILY_CUOBJDUMP
for t in "$bin"/tests/*; do
    [ -x "$t" ] || continue
    echo "-- $(basename "$t")"
    "$t" --test-threads=1 --nocapture 2>&1 | tee -a "$out/tests.log" || status=1
done

if [ -n "${GPU_BENCHES:-}" ]; then
    echo "== kernel micro-benchmarks"
    for b in "$bin"/benches/*; do
        [ -x "$b" ] || continue
        "$b" --bench 2>&1 | tee -a "$out/kernel_bench.log"
    done
fi

echo "== lily bench --synthetic"
"$here/scripts/gpu/clock_log.sh" "$out/clocks.csv" "$bin/lily" bench --synthetic --contexts "${CONTEXTS:-256,512,1024,2048,4096,8192,16384,32768,65536,131072}" --json "$out/bench.json" ${BENCH_FLAGS:-} \
    2> >(tee "$out/bench.err" >&2) | tee "$out/bench.md" || status=1

echo "== lily bench --synthetic --dtype fp8"
"$bin/lily" bench --synthetic --dtype fp8 --contexts "${FP8_CONTEXTS:-1024,8192,131072}" --json "$out/bench_fp8.json" \
    2>"$out/bench_fp8.err" | tee "$out/bench_fp8.md" || status=1

if [ -n "${SHAPES_SWEEP:-}" ]; then
    echo "== decode launch-shape sweep"
    for spec in "" $SHAPES_SWEEP; do
        # Every op family's kernels (the prefill routing's blocks are moe_warps too) and the tiny
        # model end to end.
        for t in norm products gdn attention moe sampling backend; do
            echo "-- $t under LILY_SHAPES=${spec:-(defaults)}"
            LILY_SHAPES=$spec "$bin/tests/$t" --test-threads=1 2>&1 | grep -E "test result|panicked|FAILED" || status=1
        done
    done
    for round in 1 2; do
        for spec in "" $SHAPES_SWEEP; do
            LILY_SHAPES=$spec "$bin/lily" bench --synthetic --contexts "${SWEEP_CONTEXTS:-1024}" 2>/dev/null \
                | grep -E "^# decode launch shapes|^\| [0-9]" | tee -a "$out/shapes_sweep.md" || status=1
        done
    done
fi

if [ -n "${ABLATION:-}" ]; then
    echo "== decode step ablation"
    python3 "$here/scripts/profile/ablate_decode.py" "$bin/lily" --context 1024 --min-us 50 2>&1 | tee "$out/ablation.md" || status=1
fi

if [ -z "${SKIP_TRANSFORMERS:-}" ]; then
    echo "== transformers on the same shapes"
    PYTHONUNBUFFERED=1 python3 "$here/scripts/reference/bench_transformers.py" --contexts "${TRANSFORMERS_CONTEXTS:-1024,8192}" \
        --json "$out/transformers.json" 2>&1 | tee "$out/transformers.md" || status=1
fi
if [ -s "$out/bench.json" ]; then
    echo "== the picture: tok/s against context, with the ceilings (and transformers where it ran)"
    peer=()
    [ -s "$out/transformers.json" ] && peer=(--peer "transformers=$out/transformers.json")
    "$bin/lily" bench --plot "$out/bench.svg" --from "$out/bench.json" "${peer[@]}" || status=1
fi
if [ -z "${SKIP_AGREEMENT:-}" ]; then
    echo "== full-width agreement with transformers"
    PYTHONUNBUFFERED=1 python3 "$here/scripts/reference/agreement_check.py" "$bin/lily" "$out" --layers "${AGREEMENT_LAYERS:-8}" --fp8 \
        2>&1 | tee "$out/agreement.log" || status=1
fi
exit $status
