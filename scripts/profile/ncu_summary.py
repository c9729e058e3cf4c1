"""Where a kernel's warps stall, from Nsight Compute's per-instruction source counters.

Reads the SASS-level CSV that `ncu -i REPORT --page source --print-source sass --csv` prints
(scripts/profile/ncu_kernels.sh makes it) and prints, per kernel: the sampled stall reasons as shares
of all samples, the executed instructions by opcode (an issue-bound kernel shows what it spends
its issue slots on, e.g. cvt.rna.tf32 lowered to FSETP/SEL/LOP3), the samples by
twentieths of the kernel's code (which phase of a kernel costs), and the instructions with the
most samples with their main stall reason.

    python3 scripts/profile/ncu_summary.py sass.csv [--top 15]
"""
import argparse
import collections
import csv
import sys


def kernels(path):
    """{kernel name: [row dicts in code order]} from the CSV (one table per kernel)."""
    out, name, header = collections.OrderedDict(), None, None
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) >= 2 and row[0] == "Kernel Name":
                name, header = row[1], None
            elif row and row[0] == "Address":
                header = row
            elif name and header and len(row) == len(header):
                out.setdefault(name, []).append(dict(zip(header, row)))
    return out


def number(x):
    try:
        return int(x)
    except ValueError:
        return 0


def summarize(name, rows, top):
    header = rows[0].keys()
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    samples = [number(r["Warp Stall Sampling (All Samples)"]) for r in rows]
    total = sum(samples)
    print(f"== {name}: {len(rows)} instructions, {total} samples")
    if total == 0:
        return
    by_reason = collections.Counter()
    for r in rows:
        for s in reasons:
            by_reason[s] += number(r[s])
    print("stalls: " + ", ".join(f"{s[6:]} {100 * c / total:.1f}%" for s, c in by_reason.most_common(8)))
    executed = [number(r.get("Instructions Executed", "0")) for r in rows]
    if sum(executed):
        by_opcode = collections.Counter()
        for r, n in zip(rows, executed):
            words = r["Source"].split()
            if words and words[0].startswith("@"):  # a predicate guard, not the opcode
                words = words[1:]
            by_opcode[words[0].split(".")[0] if words else "?"] += n
        print(f"executed: {sum(executed):,} warp instructions; by opcode: "
              + ", ".join(f"{op} {100 * n / sum(executed):.1f}%" for op, n in by_opcode.most_common(10)))
    parts = [0] * 20
    for i, s in enumerate(samples):
        parts[i * 20 // len(rows)] += s
    print("samples by twentieths of the code: " + " ".join(f"{round(100 * p / total)}" for p in parts))
    for i in sorted(sorted(range(len(rows)), key=lambda i: -samples[i])[:top]):
        r = rows[i]
        main = max(reasons, key=lambda s: number(r[s]))
        print(f"  {i:5d} {r['Source'].strip()[:64]:64s} {samples[i]:6d} {main[6:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    found = kernels(args.csv)
    if not found:
        sys.exit(f"{args.csv}: no per-instruction tables (expected ncu --page source --csv output)")
    for name, rows in found.items():
        summarize(name, rows, args.top)


if __name__ == "__main__":
    main()
