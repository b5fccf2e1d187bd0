#!/usr/bin/env python3
"""Burst against sustained timing, per M: the best fused chain and the best anchor (cuBLASLt from the example's CSV,
torch's variants from torch_baselines.py's) in the default timing (--warmup-ms 0) and after a sustained warm-up
(--warmup-ms N on both sides), with anchor / fused and StreamSync / fused for each.

FUSED.csv is mlp_fused_example's CSV with a leading warmup_ms column (one file for both timings, as session 11's
call 11 wrote it); TORCH_BURST.csv and TORCH_SUSTAINED.csv are torch_baselines.py's CSVs for the two timings.

Usage: summarize_sustained.py FUSED.csv TORCH_BURST.csv TORCH_SUSTAINED.csv
"""
import csv
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    fused_path, torch_burst, torch_sustained = sys.argv[1:]
    fused = defaultdict(lambda: float("inf"))
    stream_sync = defaultdict(lambda: float("inf"))
    anchors = defaultdict(dict)  # (M, timing) -> {name: us}
    floor = {}
    timings = []
    with open(fused_path) as f:
        for row in csv.DictReader(f):
            if row["correct"] != "1":
                sys.exit(f"{fused_path}: an unchecked or wrong row: {row}")
            warmup, m, us = int(row["warmup_ms"]), int(row["M"]), float(row["us"])
            if warmup not in timings:
                timings.append(warmup)
            if row["variant"] == "Fused":
                fused[(m, warmup)] = min(fused[(m, warmup)], us)
            elif row["variant"] == "Fused-StreamSync":
                stream_sync[(m, warmup)] = min(stream_sync[(m, warmup)], us)
            elif row["variant"] == "cuBLAS":
                anchors[(m, warmup)]["cuBLASLt"] = us
            elif row["variant"] == "floor":
                floor[m] = us
    timings.sort()
    if len(timings) != 2:
        sys.exit(f"{fused_path}: expected two timings (burst and sustained), found {timings}")
    for path, warmup in ((torch_burst, timings[0]), (torch_sustained, timings[1])):
        with open(path) as f:
            for row in csv.DictReader(f):
                anchors[(int(row["M"]), warmup)][row["variant"]] = float(row["us"])
    print(f"{'M':>5} {'floor':>7} | " + " | ".join(
        f"{'warm-up ' + str(w) + ' ms: fused':>24} {'best anchor':>26} {'anchor/fused':>12} {'SS/fused':>8}"
        for w in timings))
    for m in sorted(floor):
        cells = []
        for w in timings:
            name, best = min(anchors[(m, w)].items(), key=lambda item: item[1])
            cells.append(f"{fused[(m, w)]:24.1f} {best:9.1f} {name:>16s} {best / fused[(m, w)]:12.3f} "
                         f"{stream_sync[(m, w)] / fused[(m, w)]:8.3f}")
        print(f"{m:5d} {floor[m]:7.1f} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
