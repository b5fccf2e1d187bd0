#!/usr/bin/env python3
"""Where a fused chain's time goes, from mlp_fused_example --trace FILE (one row per work unit; chain_trace.h).

Per (M, config, variant): the span from the first unit's start to the last unit's end, and per stage the units,
the median time of a unit's MMA (operand arrival included, so a consumer unit stalled on an unposted A tile shows
here) and of its tail (split-K reduction, epilogue, store completion, post), the SM clock during the MMA (cycles
over nanoseconds, where the trace has mma_cycles), and the share of block-time spent without a unit (before the
first, between units, after the last). Stream-ordered variants have two launches;
their records share the global timer, so the launch gap is counted as idle too.

Where the trace has block_entered and launch_us (each block's first instruction, and each traced launch timed
between CUDA events whose start waits until the launch is enqueued), one more line per run says what a launch
costs besides its units: the spread of its blocks' entries, the median block's time from entry to its first unit's
MMA (barrier set-up, cluster sync, first draw, first loads), and the event-timed launch less the span from the first
block's entry to the last unit's end (dispatch before the first block, and the end after the last unit).

Usage: summarize_trace.py TRACE.csv
"""
import csv
import statistics
import sys
from collections import defaultdict


def launch_costs(rows):
    """(launch_us, entry_spread_us, entry_to_first_mma_us, outside_us), summed over the run's launches (the spread
    and the entry-to-MMA time: their medians over launches); None without block_entered and launch_us."""
    if not rows or "block_entered" not in rows[0] or "launch_us" not in rows[0]:
        return None
    launches = defaultdict(list)
    for r in rows:
        launches[r["launch"]].append(r)
    timed = outside = 0.0
    spreads, entries = [], []
    for units in launches.values():
        block_entry, first_math = {}, {}  # per block: its entry, and its first unit's MMA start
        for r in units:
            block, start = r["block"], int(r["math_start"])
            block_entry[block] = int(r["block_entered"])
            first_math[block] = min(first_math.get(block, start), start)
        entered = [t for t in block_entry.values() if t > 0]
        if not entered:
            return None
        launch_us = float(units[0]["launch_us"])
        span_ns = max(int(r["done"]) for r in units) - min(entered)
        timed += launch_us
        outside += launch_us - span_ns / 1e3
        spreads.append((max(entered) - min(entered)) / 1e3)
        entries.append(statistics.median(first_math[b] - block_entry[b] for b in block_entry) / 1e3)
    return timed, statistics.median(spreads), statistics.median(entries), outside


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
        costs = launch_costs(rows)
        if costs is not None:
            timed, spread, entry, outside = costs
            print(f"{'':5} launch {timed:.1f} us timed: blocks entered over {spread:.1f} us, entry to first MMA "
                  f"{entry:.1f} us (median block), {outside:.1f} us outside the blocks' span")


if __name__ == "__main__":
    main()
