#!/usr/bin/env python3
"""Compare the kernels of two `lily ptx --out DIR` outputs, entry point by entry point.

Does a change leave the GPU code alone? Build each revision, write its PTX, and compare:

    LILY_COMMIT=a cargo build --release -p lily-cli && target/release/lily ptx --out /tmp/a
    (change, rebuild)                               && target/release/lily ptx --out /tmp/b
    scripts/profile/ptx_diff.py /tmp/a /tmp/b

Branch labels and the mangled names of shared-memory variables are normalised (they change
with template parameters and code placement, not with the instructions). Prints each entry
as same / DIFFERENT (with the instruction mix that differs) / only in one side; exits 1 when
anything differs.
"""
import argparse
import collections
import difflib
import pathlib
import re
import sys


def entries(path):
    """{entry name: normalised body} of one PTX file."""
    text = path.read_text()
    out = {}
    for m in re.finditer(r"\.entry (\w+)\(", text):
        end = text.index("\n}", m.start())
        body = text[m.start():end]
        body = re.sub(r"\$L__\w+", "$L", body)
        body = re.sub(r"_ZZ\w+", "$SHARED", body)
        out[m.group(1)] = body
    return out


def opcodes(body):
    ops = collections.Counter()
    for line in body.splitlines():
        line = line.strip()
        if line and not line.startswith((".", "//", "{", "}", "$")):
            ops[line.split()[0].rstrip(";")] += 1
    return ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=pathlib.Path)
    ap.add_argument("b", type=pathlib.Path)
    args = ap.parse_args()
    differs = False
    names = sorted({p.name for p in args.a.glob("*.ptx")} | {p.name for p in args.b.glob("*.ptx")})
    if not names:
        sys.exit(f"no .ptx files in {args.a} or {args.b}")
    for name in names:
        pa, pb = args.a / name, args.b / name
        if not (pa.exists() and pb.exists()):
            print(f"{name}: only in {args.a if pa.exists() else args.b}")
            differs = True
            continue
        ea, eb = entries(pa), entries(pb)
        for entry in sorted(set(ea) | set(eb)):
            if entry not in ea or entry not in eb:
                print(f"{name} {entry}: only in {args.a if entry in ea else args.b}")
                differs = True
            elif ea[entry] == eb[entry]:
                print(f"{name} {entry}: same")
            else:
                differs = True
                oa, ob = opcodes(ea[entry]), opcodes(eb[entry])
                changed = sum(1 for line in difflib.unified_diff(ea[entry].splitlines(), eb[entry].splitlines(), n=0)
                              if line[:1] in "+-" and line[:3] not in ("+++", "---"))
                print(f"{name} {entry}: DIFFERENT ({changed} lines); instructions only in a: {dict(oa - ob)}; "
                      f"only in b: {dict(ob - oa)}")
    sys.exit(1 if differs else 0)


if __name__ == "__main__":
    main()
