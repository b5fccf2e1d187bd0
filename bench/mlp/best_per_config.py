#!/usr/bin/env python3
"""The best time of each fused configuration per M, over its tile orders, splits and unit waits, from one or more
mlp_fused_example CSVs (one per round); for A/B comparisons of configurations that differ in one property, such as
a staged epilogue (names ending in _st) against CUTLASS's. Only the Fused variant; split rows are folded into
their configuration unless --splits is given.

Usage: best_per_config.py [--splits] ROUND1.csv [ROUND2.csv ...]
"""
import csv
import re
import sys
from collections import defaultdict


def configuration(name, keep_splits):
    """The configuration of a variant name: without its padding, tile order and unit-wait suffix, and without its
    split unless keep_splits (e.g. fused_128x192x64_s5_coop_c2_sk2x1_g8_ww -> fused_128x192x64_s5_coop_c2)."""
    name = re.sub(r"_pad\d+", "", name)
    name = re.sub(r"_(g\d+:g\d+|g\d+|row|col)(_ww)?$", "", name)
    return name if keep_splits else re.sub(r"_sk\d+x\d+$", "", name)


def main():
    args = sys.argv[1:]
    keep_splits = "--splits" in args
    files = [a for a in args if a != "--splits"]
    if not files:
        sys.exit(__doc__)
    best = defaultdict(dict)  # (M, configuration) -> {round: us}
    for round_index, path in enumerate(files):
        with open(path) as f:
            for row in csv.DictReader(f):
                if row["variant"] != "Fused":
                    continue
                key = (int(row["M"]), configuration(row["config"], keep_splits))
                us = float(row["us"])
                best[key][round_index] = min(best[key].get(round_index, us), us)
    ms = sorted({m for m, _ in best})
    configs = sorted({c for _, c in best})
    width = max(len(c) for c in configs)
    print(f"{'configuration':{width}s}" + "".join(f"{m:>16d}" for m in ms))
    for c in configs:
        cells = []
        for m in ms:
            times = best.get((m, c), {})
            cells.append("/".join(f"{times[r]:.1f}" for r in sorted(times)) if times else "-")
        print(f"{c:{width}s}" + "".join(f"{cell:>16s}" for cell in cells))


if __name__ == "__main__":
    main()
