#!/usr/bin/env python3
"""summarize_trace.py's launch costs on a made-up trace: two blocks entering 1 us apart, their first MMAs 3 and 4 us
after entry, the last unit ending 20 us after the first entry, the launch timed at 25 us: 5 us outside. A trace
without the columns gets no launch line. Exits non-zero on a failed expectation."""
import csv
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import summarize_trace  # noqa: E402

HEADER = "M,config,variant,launch,stage,x,y,part,block,sm,drawn,math_start,mma_done,done,mma_cycles"
ROWS = [  # block 0 enters at 1000 ns, block 1 at 2000; units of block 0 start at 4000 and 9000, block 1's at 6000
    "128,c,Fused,0,0,0,0,0,0,0,3000,4000,8000,9000,6000,1000,25.0",
    "128,c,Fused,0,1,0,0,0,0,0,8500,9000,18000,21000,16000,1000,25.0",
    "128,c,Fused,0,0,1,0,0,1,1,5000,6000,10000,11000,6000,2000,25.0",
]


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def main():
    failures = []
    traced = rows(HEADER + ",block_entered,launch_us\n" + "\n".join(ROWS) + "\n")
    timed, spread, entry, outside = summarize_trace.launch_costs(traced)
    expect = {"timed": (timed, 25.0), "spread": (spread, 1.0), "entry": (entry, 3.5), "outside": (outside, 5.0)}
    for name, (got, want) in expect.items():
        if abs(got - want) > 1e-9:
            failures.append(f"{name}: {got}, expected {want}")
    older = rows(HEADER + "\n" + "\n".join(r.rsplit(",", 2)[0] for r in ROWS) + "\n")
    if summarize_trace.launch_costs(older) is not None:
        failures.append("a trace without block_entered got launch costs")
    for failure in failures:
        print("FAILED:", failure)
    print("summarize_trace launch costs:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
