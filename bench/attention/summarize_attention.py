#!/usr/bin/env python3
"""One table from attention_example's CSVs (one per shape) and torch_attention_baselines.py's CSV: per model, phase
and shape, StreamSync (the same kernels stream-ordered), the fastest cusync variant and its speedup over StreamSync
(the paper's Figure 6b measure), PDL grid sync (the same kernels launched early, each waiting for the whole previous
one) and cusync's speedup over it, cuBLAS GEMMs around the same attention kernel, and torch eager / torch.compile,
with cusync's speedup over the faster torch, and StreamSync's (SS/torch: the hooked kernels without overlap).
attention_example's CSV has one row per GEMM configuration it ran; a
variant's time is that of its fastest, named in the last columns (StreamSync's and the best cusync variant's).
Since the variants' fastest configurations may differ (each variant's search picks its own), a second table compares
them on the same GEMMs: for each configuration that StreamSync or PDL grid sync ran together with a synchronized
variant, their time over the fastest synchronized variant's on it; the median and range per shape (session 32 found
PDL grid sync ahead in the first table and level in this one).
With --plot FILE, also the Figure 6b-style bar chart (needs
matplotlib; skipped with a note when it is missing). Never asserts timings.

Usage: summarize_attention.py --torch TORCH.csv [--plot OUT.png] EXAMPLE.csv...
"""
import argparse
import csv
import statistics
import sys


def read(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--torch", default=None)
    parser.add_argument("--plot", default=None)
    parser.add_argument("examples", nargs="+")
    args = parser.parse_args()
    shapes = {}  # (model, phase, batch, seq, cache) -> {variant: us}, the fastest configuration's
    per_configuration = {}  # (model, phase, batch, seq, cache) -> {configuration: {variant: us}}, correct rows only
    configurations = {}  # (model, phase, batch, seq, cache) -> {variant: that configuration}
    failures = []
    for path in args.examples:
        for row in read(path):
            key = (row["model"], row["phase"], int(row["batch"]), int(row["seq"]), int(row["cache"]))
            us = float(row["us"])
            known = shapes.setdefault(key, {}).get(row["variant"])
            if known is None or (us > 0 and (known <= 0 or us < known)):
                shapes[key][row["variant"]] = us
                configurations.setdefault(key, {})[row["variant"]] = row.get("configuration", "")
            if row["correct"] != "1":
                failures.append(f"{key} {row['variant']} [{row.get('configuration', '')}]")
            elif us > 0:
                per_configuration.setdefault(key, {}).setdefault(row.get("configuration", ""), {})[row["variant"]] = us
    if args.torch:
        for row in read(args.torch):
            key = (row["model"], row["phase"], int(row["batch"]), int(row["seq"]), int(row["cache"]))
            shapes.setdefault(key, {})[row["variant"]] = float(row["us"])
            if row["correct"] != "1":
                failures.append(f"{key} {row['variant']}")
    cache_label = "S'"
    header = (f"{'model':6} {'phase':6} {'B':>2} {'S':>5} {cache_label:>5} {'StreamSync':>10} {'cusync':>9} {'speedup':>7} "
              f"{'PDL-Grid':>9} {'vs PDL':>6} {'cuBLAS+attn':>11} {'torch':>9} {'compile':>9} {'vs torch':>8} {'SS/torch':>8}  "
              f"best cusync variant [its GEMMs]; "
              f"StreamSync's GEMMs")
    lines = [header]
    plot_rows = []
    for key in sorted(shapes):
        v = shapes[key]
        stream = v.get("StreamSync", 0.0)
        synced = {name: us for name, us in v.items() if name.startswith(("Strided+", "Stream+")) and us > 0}
        best_name, best = min(synced.items(), key=lambda item: item[1]) if synced else ("-", 0.0)
        torch_best = min([us for name, us in v.items() if name.startswith("torch") and us > 0], default=0.0)
        speedup = stream / best if best and stream else 0.0
        grid = v.get("PDL-GridSync", 0.0)
        versus_grid = grid / best if best and grid else 0.0
        versus_torch = torch_best / best if best and torch_best else 0.0
        # The same kernels stream-ordered against torch: what the hooked GEMMs and attention reach without overlap.
        stream_versus_torch = torch_best / stream if stream and torch_best else 0.0
        fmt = lambda us: f"{us:9.1f}" if us else f"{'-':>9}"  # noqa: E731
        lines.append(f"{key[0]:6} {key[1]:6} {key[2]:2d} {key[3]:5d} {key[4]:5d} {fmt(stream):>10} {fmt(best)} "
                     f"{speedup:7.3f} {fmt(grid)} {versus_grid:6.3f} {fmt(v.get('cuBLAS+attn', 0.0)):>11} {fmt(v.get('torch-eager', 0.0))} "
                     f"{fmt(v.get('torch-compile', 0.0))} {versus_torch:8.3f} {stream_versus_torch:8.3f}  {best_name} "
                     f"[{configurations.get(key, {}).get(best_name, '-')}]; "
                     f"{configurations.get(key, {}).get('StreamSync', '-')}")
        plot_rows.append((f"{key[0]} {key[1]}\nB={key[2]} S={key[3]} S'={key[4]}", speedup, versus_torch))
    lines += same_gemm_lines(per_configuration)
    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            fig, ax = plt.subplots(figsize=(max(6, len(plot_rows) * 0.9), 4))
            xs = range(len(plot_rows))
            ax.bar([x - 0.2 for x in xs], [r[1] for r in plot_rows], 0.4, label="cusync / StreamSync")
            ax.bar([x + 0.2 for x in xs], [r[2] for r in plot_rows], 0.4, label="cusync / best torch")
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_xticks(list(xs))
            ax.set_xticklabels([r[0] for r in plot_rows], fontsize=6)
            ax.set_ylabel("speedup")
            ax.set_title("Attention block (cf. cuSync Figure 6b)")
            ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(args.plot, dpi=150)
        except ImportError:
            print(f"(no matplotlib: {args.plot} not written)")
    print("\n".join(lines))
    if failures:
        print("FAILED checks: " + "; ".join(failures))
        return 1
    return 0


def is_synchronized(variant):
    return variant.startswith(("Strided+", "Stream+"))


def same_gemm_lines(per_configuration):
    """Per shape: StreamSync's and PDL grid sync's time over the fastest synchronized variant's on each configuration
    they both ran (> 1: cusync faster), as median, range and count."""
    lines = ["", "same GEMMs (each configuration a baseline and a synchronized variant both ran): baseline / fastest "
                 "synchronized variant on it, median [min, max] (configurations)"]
    for key in sorted(per_configuration):
        cells = []
        for baseline in ("StreamSync", "PDL-GridSync"):
            ratios = []
            for times in per_configuration[key].values():
                synced = [us for variant, us in times.items() if is_synchronized(variant)]
                if baseline in times and synced:
                    ratios.append(times[baseline] / min(synced))
            cells.append(f"{baseline} {statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}] "
                         f"({len(ratios)})" if ratios else f"{baseline} -")
        lines.append(f"{key[0]:6} {key[1]:6} {key[2]:2d} {key[3]:5d} {key[4]:5d}  " + "; ".join(cells))
    return lines


if __name__ == "__main__":
    sys.exit(main())
