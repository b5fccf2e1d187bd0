#!/usr/bin/env python3
"""Plots mlp_fused_example CSVs of the few-token chains (M <= 8) as time per M relative to the bandwidth floor, one
panel per CSV (model): cuBLASLt, the best fused chain, and each GEMV chain (gemv_* configurations), Fused variant
only, correct rows only; 1.0 is the floor. Usage: plot_small_m.py PNG CSV[=TITLE] [CSV[=TITLE] ...]"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(path: str) -> dict:
    """Family -> {M: us}: cuBLASLt, 'fused chain' (best fused configuration and split per M), each GEMV chain; and
    'floor'."""
    best = defaultdict(dict)
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["correct"] != "1" and row["variant"] != "floor":
                continue
            if row["variant"] not in ("Fused", "cuBLAS", "floor"):
                continue
            config = row["config"]
            family = ("floor" if row["variant"] == "floor" else "cuBLASLt" if row["variant"] == "cuBLAS"
                      else "fused chain (best split)" if config.startswith("fused") else config)
            m, us = int(row["M"]), float(row["us"])
            best[family][m] = min(us, best[family].get(m, float("inf")))
    return best


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    target, sources = sys.argv[1], sys.argv[2:]
    figure, axes = plt.subplots(1, len(sources), figsize=(6 * len(sources), 4.2), squeeze=False)
    for axis, source in zip(axes[0], sources):
        path, _, title = source.partition("=")
        best = series(path)
        floor = best.pop("floor")
        for family, points in sorted(best.items()):
            ms = sorted(m for m in points if m in floor)
            axis.plot(ms, [points[m] / floor[m] for m in ms], marker="o", label=family)
        axis.axhline(1.0, color="black", linewidth=0.8, linestyle="--", label="floor (one-pass read)")
        axis.set_xscale("log", base=2)
        axis.set_xlabel("M (tokens)")
        axis.set_ylabel("time / floor")
        axis.set_title(title or path)
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(target, dpi=120)


if __name__ == "__main__":
    main()
