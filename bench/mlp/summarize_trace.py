#!/usr/bin/env python3
"""Where a fused chain's time goes, from mlp_fused_example --trace FILE (one row per work unit; chain_trace.h).

Per (M, config, variant): the span from the first unit's start to the last unit's end, and per stage the units,
the median time of a unit's MMA (operand arrival included, so a consumer unit stalled on an unposted A tile shows
here) and of its tail (split-K reduction, epilogue, store completion, post), the SM clock during the MMA (cycles
over nanoseconds, where the trace has mma_cycles), and the share of block-time spent without a unit (before the
first, between units, after the last). Stream-ordered variants have two launches;
their records share the global timer, so the launch gap is counted as idle too.

Usage: summarize_trace.py TRACE.csv
"""
import csv
import statistics
import sys
from collections import defaultdict


def main():
    runs = defaultdict(list)
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            runs[(int(row["M"]), row["config"], row["variant"])].append(row)
    print(f"{'M':>5} {'config':34s} {'variant':17s} {'span_us':>8} {'idle%':>6} | "
          f"{'stage':>5} {'units':>5} {'mma_us':>8} {'tail_us':>8} {'clk_GHz':>7}")
    for (m, config, variant), rows in sorted(runs.items()):
        start = min(int(r["math_start"]) for r in rows)
        end = max(int(r["done"]) for r in rows)
        span = end - start
        by_block = defaultdict(list)
        for r in rows:
            by_block[(r["launch"], r["block"])].append((int(r["math_start"]), int(r["done"])))
        blocks = len({r["sm"] for r in rows})  # one block per SM at a time
        busy = sum(d - s for units in by_block.values() for s, d in units)
        idle = 1 - busy / (blocks * span) if span > 0 else 0
        first = True
        for stage in sorted({r["stage"] for r in rows}):
            units = [r for r in rows if r["stage"] == stage]
            mma = statistics.median(int(r["mma_done"]) - int(r["math_start"]) for r in units) / 1e3
            tail = statistics.median(int(r["done"]) - int(r["mma_done"]) for r in units) / 1e3
            # The clock rate of the SMs while they multiplied: a throttled GPU and a starved pipeline look alike in
            # mma_us, not here.
            clock = (statistics.median(int(r["mma_cycles"]) / max(1, int(r["mma_done"]) - int(r["math_start"]))
                                       for r in units) if units[0].get("mma_cycles") else float("nan"))
            head = (f"{m:5d} {config:34s} {variant:17s} {span / 1e3:8.1f} {100 * idle:6.1f}" if first
                    else " " * 73)
            print(f"{head} | {stage:>5} {len(units):5d} {mma:8.2f} {tail:8.2f} {clock:7.2f}")
            first = False


if __name__ == "__main__":
    main()
