#!/usr/bin/env python3
"""Markdown tables from an mlp_example CSV: best time per family and M (with the floor from the run's log), and
the effect of R (TileSync+PDL as written, with hand-written WeightsFirst "+R", and with the rewriter's "+Rw").
Usage: summarize_mlp.py CSV [CSV...] (e.g. the main run and a --baselines-only run with Stream-K). A LLaMA CSV
(mlp_llama_example: a waves_swiglu column) shows the waves of its three kernels, g1/gs/g2."""
import csv
import re
import sys
from collections import defaultdict


def family(variant: str) -> str:
    if variant in ("cuBLAS", "StreamSync"):
        return variant
    if variant.startswith("PDL-GridSync"):
        return "PDL"
    return variant.split("+")[0]


def main() -> None:
    rows = [r for path in sys.argv[1:] for r in csv.DictReader(open(path))]
    good = [r for r in rows if r["correct"] == "1"]
    print(f"{len(good)} of {len(rows)} rows correct; largest relative error "
          f"{max(float(r['relative_error']) for r in rows):.2g}\n")
    best = defaultdict(dict)
    for r in good:
        m, f, us = int(r["M"]), family(r["variant"]), float(r["us"])
        if f not in best[m] or us < best[m][f][0]:
            best[m][f] = (us, r["variant"], r["config"], float(r["waves_gemm1"]), float(r["waves_gemm2"]),
                          float(r["waves_swiglu"]) if r.get("waves_swiglu") else None)
    three_stages = any(r.get("waves_swiglu") for r in good)
    waves_header = "g1/gs/g2" if three_stages else "g1/g2"
    print(f"| M | cuBLAS us | CUTLASS Stream-K us | StreamSync us (config, waves {waves_header}) | TileSync us (variant, config) | "
          "RowSync us (variant, config) | PDL grid sync us | best cusync / StreamSync | best cusync / cuBLAS | "
          "best cusync / Stream-K |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in sorted(best):
        b = best[m]
        if "StreamSync" not in b or not ("TileSync" in b or "RowSync" in b):
            continue  # a run without the families this table compares
        missing = (float("inf"), "-", "-")
        ss, ts, rs = b["StreamSync"], b.get("TileSync", missing), b.get("RowSync", missing)
        cusync = min(ts[0], rs[0])
        streamk = b.get("StreamK", (0,))[0]
        waves = f"{ss[3]:.2f}/{ss[5]:.2f}/{ss[4]:.2f}" if ss[5] is not None else f"{ss[3]:.2f}/{ss[4]:.2f}"
        print(f"| {m} | {b.get('cuBLAS', (0,))[0]:.1f} | {streamk:.1f} | {ss[0]:.1f} ({ss[2]}, {waves}) | "
              f"{ts[0]:.1f} ({ts[1]}, {ts[2]}) | {rs[0]:.1f} ({rs[1]}, {rs[2]}) | {b.get('PDL', (0,))[0]:.1f} | "
              f"{ss[0] / cusync:.3f} | {b.get('cuBLAS', (0,))[0] / cusync:.3f} | "
              f"{(streamk / cusync if streamk else 0):.3f} |")
    times = {(int(r["M"]), r["config"], r["variant"]): float(r["us"]) for r in good}
    print("\n| M | config (fastest TileSync+PDL) | TileSync+PDL us | +R hand-written us (speedup) | "
          "+Rw rewriter us (speedup) |")
    print("|---|---|---|---|---|")
    for m in sorted(best):
        candidates = []
        for (mm, config, variant), us in times.items():
            if mm != m or variant != "TileSync+PDL" or "_Rw" in config:
                continue
            hand = times.get((m, config, "TileSync+PDL+R"))
            # "+Rw" kernels are named with _Rw right after the kernel's own name (..._b1[_p]), before the split-K,
            # order and other labels.
            rewritten_config = re.sub(r"(_b\d+(?:_p)?)", r"\1_Rw", config, count=1)
            rewritten = times.get((m, rewritten_config, "TileSync+PDL"))
            if hand and rewritten:
                candidates.append((us, config, hand, rewritten))
        if candidates:
            us, config, hand, rewritten = min(candidates)
            print(f"| {m} | {config} | {us:.1f} | {hand:.1f} ({us / hand:.3f}x) | {rewritten:.1f} "
                  f"({us / rewritten:.3f}x) |")


if __name__ == "__main__":
    main()
