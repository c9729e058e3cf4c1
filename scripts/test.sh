#!/usr/bin/env bash
# The one test command (README): sets up the small Python environment the tests use
# (the official `openai` client for the server tests, NVRTC to check that every CUDA kernel
# compiles for sm_90a, cuobjdump to check the compiled code's PDL waits, vllm-router for the
# scale-out test), then runs every Rust test of the workspace. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/test-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r scripts/test-requirements.txt
export LILY_TEST_PYTHON="$PWD/$venv/bin/python"
# The first file under the venv's nvidia/ wheels matching a glob (empty if none).
venv_file() {
  "$venv/bin/python" - "$1" <<'PY'
import glob, os, sys, site
for base in site.getsitepackages():
    hits = sorted(glob.glob(os.path.join(base, "nvidia", "**", sys.argv[1]), recursive=True))
    if hits:
        print(hits[0]); sys.exit(0)
PY
}
nvrtc=$(venv_file "libnvrtc.so*")
nvrtc_dir=${nvrtc:+$(dirname "$nvrtc")}
cuobjdump=$(venv_file "bin/cuobjdump")
[ -n "$cuobjdump" ] && export LILY_CUOBJDUMP="$cuobjdump"
if [ -n "$nvrtc_dir" ]; then
  export LILY_REQUIRE_NVRTC=1
  export LD_LIBRARY_PATH="$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

cargo test --workspace --release "$@"
