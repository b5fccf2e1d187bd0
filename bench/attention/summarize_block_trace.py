#!/usr/bin/env python3
"""Summarizes attention_example --trace files: per variant and stage, when its blocks started and finished, split
by kind of work unit (whole tiles and split-K parts), and how many SMs the stage kept busy over time.

Why: the chain's QKV GEMM at 512 tokens gains nothing from splitting its last wave, where a round of whole tiles and
one short round of parts should take about 1.2 tile times (docs/BENCHMARKS.md, issue 14, sessions 13-15). The
trace says when each block ran, so the rounds can be seen.

Usage: summarize_block_trace.py TRACE.csv [TRACE.csv ...]
Columns (attention_example): variant,configuration,stage,block,sm,tile_x,tile_y,part,start_us,waited_us,done_us.
For the CUTLASS GEMMs waited_us is when the block's last MMA completed; done_us when it posted (or handed its
split-K part over)."""
import csv
import statistics
import sys
from collections import defaultdict


def quantiles(values):
    values = sorted(values)
    return values[0], statistics.median(values), values[-1]


def busy_profile(rows, step_us):
    """SMs running a block of the stage, sampled every step_us from the first start to the last finish."""
    begin = min(r["start"] for r in rows)
    end = max(r["done"] for r in rows)
    samples = []
    t = begin
    while t <= end:
        samples.append((t, sum(1 for r in rows if r["start"] <= t < r["done"])))
        t += step_us
    return samples


def summarize(path):
    groups = defaultdict(list)
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["variant"], row["configuration"], row["stage"])
            groups[key].append({
                "part": int(row["part"]), "start": float(row["start_us"]), "mma": float(row["waited_us"]),
                "done": float(row["done_us"]), "sm": int(row["sm"]), "x": int(row["tile_x"]),
                "y": int(row["tile_y"])})
    print(f"== {path}")
    for (variant, configuration, stage), rows in sorted(groups.items()):
        parts = max(r["part"] for r in rows) + 1
        print(f"{variant} [{configuration}] stage {stage}: {len(rows)} blocks on {len({r['sm'] for r in rows})} SMs")
        tiles = defaultdict(list)
        for r in rows:
            tiles[(r["x"], r["y"])].append(r)
        kinds = {"whole": [], "split": []}
        for members in tiles.values():
            kinds["whole" if len(members) == 1 else "split"].extend(members)
        for kind, members in kinds.items():
            if not members:
                continue
            s = quantiles([r["start"] for r in members])
            d = quantiles([r["done"] for r in members])
            mma = statistics.median(r["mma"] - r["start"] for r in members)
            tail = statistics.median(r["done"] - r["mma"] for r in members)
            print(f"  {kind:5s} {len(members):4d} blocks: start {s[0]:7.1f} / {s[1]:7.1f} / {s[2]:7.1f} us, "
                  f"to last MMA {mma:6.1f} us, MMA to done {tail:5.1f} us, done {d[0]:7.1f} / {d[1]:7.1f} / "
                  f"{d[2]:7.1f} us (first / median / last)")
        if parts > 1:
            print(f"  split-K: up to {parts} parts a tile")
        profile = busy_profile(rows, 10.0)
        print("  SMs busy every 10 us: " + " ".join(str(n) for _, n in profile))


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    for path in sys.argv[1:]:
        summarize(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
