#!/usr/bin/env python3
"""Plots an mlp_example CSV like the cuSync paper's Figure 6: per M, each family's best time relative to the best
StreamSync time with the same kernels (higher is faster), plus cuBLAS. Usage: plot_mlp.py CSV PNG [TITLE]"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def family(variant: str) -> str:
    if variant == "cuBLAS":
        return "cuBLAS"
    if variant == "StreamSync":
        return "StreamSync"
    if variant.startswith("PDL-GridSync"):
        return "PDL grid sync"
    return variant.split("+")[0]  # TileSync / RowSync


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "GPT-3 MLP"
    best = defaultdict(dict)  # M -> family -> us
    with open(source) as f:
        for row in csv.DictReader(f):
            if row["correct"] != "1":
                continue
            m, fam, us = int(row["M"]), family(row["variant"]), float(row["us"])
            if us > 0 and (fam not in best[m] or us < best[m][fam]):
                best[m][fam] = us
    ms = sorted(m for m in best if "StreamSync" in best[m])  # the baseline of every bar
    families = ["TileSync", "RowSync", "PDL grid sync", "cuBLAS"]
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(families)
    for i, fam in enumerate(families):
        ratios = [best[m]["StreamSync"] / best[m][fam] if fam in best[m] else 0 for m in ms]
        ax.bar([x + i * width for x in range(len(ms))], ratios, width, label=fam)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + 1.5 * width for x in range(len(ms))])
    ax.set_xticklabels([str(m) for m in ms])
    ax.set_xlabel("M (tokens)")
    ax.set_ylabel("speedup over StreamSync")
    ax.set_title(title)
    ax.legend(ncol=4, fontsize=8)
    fig.tight_layout()
    fig.savefig(target, dpi=120)


if __name__ == "__main__":
    main()
