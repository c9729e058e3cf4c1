#!/usr/bin/env bash
# The lily-cuda test executables of the release build of the checkout in the current directory
# (the repository root), one "<test> <path>" per line. cargo builds them if needed and names
# them: the newest file in target/ may belong to another revision.
set -euo pipefail
cargo test --release -q -p lily-cuda --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys; [print(m["target"]["name"], m["executable"]) for m in map(json.loads, sys.stdin) if m.get("reason") == "compiler-artifact" and m.get("executable") and "test" in m["target"]["kind"]]'
