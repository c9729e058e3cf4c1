#!/usr/bin/env bash
# The lily-cuda test and micro-benchmark executables of the release build of the checkout in the
# current directory (the repository root), one "<tests|benches> <name> <path>" per line (a test
# and a benchmark may share a name: one per op family). cargo builds them if needed and names
# them: the newest file in target/ may belong to another revision.
set -euo pipefail
cargo test --release -q -p lily-cuda --tests --benches --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for m in map(json.loads, sys.stdin):
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    kind = m["target"]["kind"]
    if "test" in kind:
        print("tests", m["target"]["name"], m["executable"])
    elif "bench" in kind:
        print("benches", m["target"]["name"], m["executable"])
'
