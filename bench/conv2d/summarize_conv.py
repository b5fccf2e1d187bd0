#!/usr/bin/env python3
"""Summarizes a conv2d_chain_example CSV (and torch_conv_baselines.py's, from the same device call): per model, a
table of every layer and batch with the floor, cuDNN (torch), each variant's best time over the tile
configurations (CUTLASS-stock and CUTLASS-stock-PDL: CUTLASS's own sm90 convolution of the same configurations, back
to back), the best cusync variant's speed-ups over the best StreamSync, over the best CUTLASS stock and over cuDNN,
and the waves of each kernel (tiles over SMs times resident blocks per SM) of the configurations that won. Writes the table's rows as
CSV, and with --plot a figure like the cuSync paper's Figure 7: per model, the improvement of the best cusync
variant over StreamSync (and over cuDNN) at each batch, one line per layer. Times are never asserted.

The floor is max(flops / GEMM rate, bytes / read bandwidth) with the ceilings the example measured in the same
process (its CSV's gemm_tflops and read_gbs columns); --tflops and --gbps replace them (e.g. for a check-only CSV).

A timing run stopped by a time limit leaves a CSV whose last (model, layer, batch) group may lack configurations
or variants (the example writes each row as it finishes): --partial leaves that group out and says so.

Usage: summarize_conv.py CONV_CSV [--torch TORCH_CSV] [--csv OUT.csv] [--plot OUT.png] [--tflops T --gbps G]
                         [--partial]
Exit status: 0, or 1 when a row of either CSV failed its check (the table marks it), 2 for bad input.
"""
import argparse
import csv
import sys
from collections import OrderedDict, defaultdict

VARIANTS = ["StreamSync", "TileSync", "RowSync", "TileSync-PDL", "RowSync-PDL", "TileSync-W", "RowSync-W",
            "CUTLASS-stock", "CUTLASS-stock-PDL"]
# Tile-synchronized, the hooked kernels. -W (no wait-kernel) rows exist only where every block of a chain fits in one
# wave; elsewhere, and in CSVs from before them, they are "n/a" or absent. A configuration may carry a split-K
# suffix ("64x64x64_s4_b1_k8+8"): it is searched like any other configuration.
CUSYNC = ["TileSync", "RowSync", "TileSync-PDL", "RowSync-PDL", "TileSync-W", "RowSync-W"]
STOCK = ["CUTLASS-stock", "CUTLASS-stock-PDL"]  # CUTLASS's own kernels; CSVs from before them have neither


def read_rows(path):
    try:
        with open(path, newline="") as handle:
            return list(csv.DictReader(handle))
    except OSError as error:
        raise SystemExit(f"summarize_conv.py: cannot read {path}: {error.strerror}")


def require(rows, path, columns):
    if not rows:
        raise SystemExit(f"summarize_conv.py: {path} has no rows")
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        raise SystemExit(f"summarize_conv.py: {path} lacks the column(s) {', '.join(missing)}")


def floor_us(row, tflops, gbps):
    """The floor of one example row: the example's own when it measured ceilings, else from --tflops/--gbps."""
    measured = float(row.get("floor_us") or 0)
    if measured > 0 and tflops is None:
        return measured
    rate = tflops if tflops is not None else float(row.get("gemm_tflops") or 0)
    bandwidth = gbps if gbps is not None else float(row.get("read_gbs") or 0)
    if rate <= 0 or bandwidth <= 0:
        return 0.0
    return max(float(row["flops"]) / (rate * 1e12), float(row["bytes"]) / (bandwidth * 1e9)) * 1e6


def fastest(best, variants):
    """The variant of `variants` with the lowest best time, or None when none was timed."""
    timed = [v for v in variants if v in best]
    return min(timed, key=lambda v: float(best[v]["median_us"])) if timed else None


def group_key(row):
    """The (model, layer, batch) a row of the example's CSV belongs to."""
    return (row["model"], row["layer"], int(row["batch"]))


def summarize(conv_rows, torch_rows, tflops, gbps):
    """One summary row per (model, layer, batch), in the example's order."""
    groups = OrderedDict()
    failed = False
    for row in conv_rows:
        key = group_key(row)
        groups.setdefault(key, []).append(row)
        failed = failed or (row["passed"] != "1")
    cudnn = {}
    for row in torch_rows:
        # CSVs from before the models existed hold two-convolution ResNet chains only.
        key = (row.get("model", "resnet"), row.get("layer") or f"{row['size']}x{row['size']}x{row['channels']}",
               int(row["batch"]))
        if row["correct"] == "1":
            cudnn[key] = float(row["us"])
        else:
            failed = True
    summary = []
    for (model, layer, batch), rows in groups.items():
        best = {}
        flags = defaultdict(str)
        for row in rows:
            variant = row["variant"]
            us = float(row["median_us"])
            if row["passed"] != "1":
                flags[variant] = "FAILED" if not row["skipped"] else (flags[variant] or "refused")
                continue
            if row["skipped"].startswith("not applicable"):
                flags[variant] = flags[variant] or "n/a"
                continue
            if us > 0 and (variant not in best or us < float(best[variant]["median_us"])):
                best[variant] = row
        out = OrderedDict(model=model, layer=layer, stages=int(rows[0]["stages"]), batch=batch,
                          floor_us=round(floor_us(rows[0], tflops, gbps), 2))
        out["cudnn_us"] = cudnn.get((model, layer, batch), "")
        for variant in VARIANTS:
            out[f"{variant}_us"] = float(best[variant]["median_us"]) if variant in best else flags[variant]
            out[f"{variant}_config"] = best[variant]["config"] if variant in best else ""
        winner = fastest(best, CUSYNC)
        out["best_cusync"] = winner or ""
        stream = float(best["StreamSync"]["median_us"]) if "StreamSync" in best else None
        cusync = float(best[winner]["median_us"]) if winner else None
        out["speedup_vs_streamsync"] = round(stream / cusync, 3) if stream and cusync else ""
        stock_winner = fastest(best, STOCK)
        out["best_stock"] = stock_winner or ""
        stock = float(best[stock_winner]["median_us"]) if stock_winner else None
        out["speedup_vs_stock"] = round(stock / cusync, 3) if stock and cusync else ""
        out["speedup_vs_cudnn"] = round(out["cudnn_us"] / cusync, 3) if out["cudnn_us"] != "" and cusync else ""
        out["waves_streamsync"] = best["StreamSync"]["waves"] if "StreamSync" in best else ""
        out["waves_cusync"] = best[winner]["waves"] if winner else ""
        summary.append(out)
    return summary, failed


def cell(value, digits=1):
    if value == "" or value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def print_tables(summary):
    """Markdown, one table per model: each variant's best time (us), the best cusync's speed-ups (over StreamSync,
    the best CUTLASS stock and cuDNN), the waves."""
    for model in OrderedDict((row["model"], None) for row in summary):
        print(f"\n### {model}\n")
        header = ["layer", "N", "B", "floor", "cuDNN"] + VARIANTS + [
            "best cusync / StreamSync", "CUTLASS stock / best cusync", "cuDNN / best cusync", "waves (StreamSync)",
            "waves (best cusync)"]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in summary:
            if row["model"] != model:
                continue
            times = [row[f"{v}_us"] for v in VARIANTS] + [row["cudnn_us"]]
            fastest = min((t for t in times if isinstance(t, float)), default=None)
            cells = [row["layer"], str(row["stages"]), str(row["batch"]), cell(row["floor_us"]),
                     ("**" + cell(row["cudnn_us"]) + "**") if row["cudnn_us"] == fastest else cell(row["cudnn_us"])]
            for v in VARIANTS:
                text = cell(row[f"{v}_us"])
                if isinstance(row[f"{v}_us"], float):
                    text += f" ({row[f'{v}_config']})"
                    if row[f"{v}_us"] == fastest:
                        text = "**" + text + "**"
                cells.append(text)
            cells += [cell(row["speedup_vs_streamsync"], 2), cell(row["speedup_vs_stock"], 2),
                      cell(row["speedup_vs_cudnn"], 2),
                      cell(row["waves_streamsync"]), cell(row["waves_cusync"])]
            print("| " + " | ".join(cells) + " |")


def plot(summary, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"summarize_conv.py: matplotlib is not installed; {path} not written", file=sys.stderr)
        return
    models = list(OrderedDict((row["model"], None) for row in summary))
    fig, axes = plt.subplots(1, len(models), figsize=(4.5 * len(models), 3.6), squeeze=False)
    for ax, model in zip(axes[0], models):
        rows = [r for r in summary if r["model"] == model]
        for layer in OrderedDict((r["layer"], None) for r in rows):
            points = [(r["batch"], r) for r in rows if r["layer"] == layer]
            stream = [(b, 100.0 * (r["speedup_vs_streamsync"] - 1)) for b, r in points
                      if r["speedup_vs_streamsync"] != ""]
            line = None
            if stream:
                line, = ax.plot([b for b, _ in stream], [v for _, v in stream], marker="o",
                                label=f"{layer} ({points[0][1]['stages']} convs)")
            versus_cudnn = [(b, 100.0 * (r["speedup_vs_cudnn"] - 1)) for b, r in points
                            if r["speedup_vs_cudnn"] != ""]
            if versus_cudnn:
                ax.plot([b for b, _ in versus_cudnn], [v for _, v in versus_cudnn], linestyle="--", marker="x",
                        color=line.get_color() if line else None, alpha=0.6)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xscale("log", base=2)
        batches = sorted({r["batch"] for r in rows})
        ax.set_xticks(batches)
        ax.set_xticklabels([str(b) for b in batches])
        ax.set_xlabel("batch")
        ax.set_ylabel("improvement of best cusync (%)")
        ax.set_title(f"{model}: over StreamSync (solid), cuDNN (dashed)", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("conv_csv")
    parser.add_argument("--torch", help="torch_conv_baselines.py's CSV")
    parser.add_argument("--csv", help="write the summary rows here")
    parser.add_argument("--plot", help="write the Figure-7-like plot here (needs matplotlib)")
    parser.add_argument("--tflops", type=float, help="GEMM rate for the floor (default: the CSV's measured one)")
    parser.add_argument("--gbps", type=float, help="read bandwidth for the floor (default: the CSV's measured one)")
    parser.add_argument("--partial", action="store_true",
                        help="the timing run was cut: leave out the CSV's last layer-and-batch group")
    args = parser.parse_args()
    if (args.tflops is None) != (args.gbps is None):
        parser.error("--tflops and --gbps go together")
    if args.tflops is not None and (args.tflops <= 0 or args.gbps <= 0):
        parser.error("--tflops and --gbps must be positive")
    conv_rows = read_rows(args.conv_csv)
    require(conv_rows, args.conv_csv, ["model", "layer", "stages", "batch", "config", "variant", "passed", "skipped",
                                       "median_us", "waves", "flops", "bytes"])
    if args.partial:
        last = group_key(conv_rows[-1])
        cut = [row for row in conv_rows if group_key(row) == last]
        conv_rows = [row for row in conv_rows if group_key(row) != last]
        print(f"partial run: {last[0]} {last[1]} B = {last[2]} left out ({len(cut)} rows, perhaps not every "
              "configuration and variant)\n")
        if not conv_rows:
            raise SystemExit(f"summarize_conv.py: {args.conv_csv} has no complete layer-and-batch group")
    torch_rows = read_rows(args.torch) if args.torch else []
    if args.torch:
        require(torch_rows, args.torch, ["batch", "us", "correct"])
    summary, failed = summarize(conv_rows, torch_rows, args.tflops, args.gbps)
    if args.csv:
        with open(args.csv, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(summary[0].keys()))
            writer.writeheader()
            writer.writerows(summary)
    if args.plot:
        plot(summary, args.plot)
    print_tables(summary)
    if failed:
        print("\nSOME ROWS FAILED THEIR CHECK (marked FAILED above, or a cuDNN row left out)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
