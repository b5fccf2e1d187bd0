#!/usr/bin/env python3
"""Where the op's time goes when it is called without a CUDA graph: the host time per call of the public entry point
and of each step under it (argument checks, the dispatcher's custom op, run_into, the plan's native launch, the output
allocations), beside torch eager's host time for the same MLP and the op's GPU time in a graph. bench_mlp_op.py
measured the op without graphs at 1.6-7x its graph time (session 32, call 6), so eager callers pay a host cost that
the GPU time does not show; this finds which step it is. Host times: time.perf_counter over back-to-back calls with
the GPU kept from blocking the host (a synchronize every `--batch` calls, not timed). Checks the op's output against
torch's once per M. Prints a table; asserts nothing about time.

Usage: op_host_overhead.py [--activation gelu|swiglu] [--m 1,12] [--calls 400] [--batch 20]
Needs torch, an sm_90 GPU and libcusync_mlp.so (as bench_mlp_op.py).
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench" / "mlp"))
import torch_baselines  # noqa: E402
from torch_baselines import BOUND, SHAPES, mlp_eager, relative_error, swiglu_mlp_eager  # noqa: E402

import cusync  # noqa: E402
from cusync import _library, op, tuning  # noqa: E402


def host_us(fn, calls, batch):
    """Median over batches of the host microseconds per call of `fn`, the GPU drained between batches (untimed) so
    that a full launch queue never blocks the host inside a timed batch."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(max(1, calls // batch)):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        per_call.append((time.perf_counter() - start) * 1e6 / batch)
        torch.cuda.synchronize()
    return statistics.median(per_call)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--activation", choices=("gelu", "swiglu"), default="gelu")
    parser.add_argument("--m", default="1,12")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--batch", type=int, default=20)
    args = parser.parse_args()
    swiglu = args.activation == "swiglu"
    hidden, intermediate = SHAPES["llama" if swiglu else "gpt3"]
    eager = swiglu_mlp_eager if swiglu else mlp_eager
    torch_baselines.GELU_APPROXIMATE = _library.gelu_approximation()
    w1 = (torch.randn((2 if swiglu else 1) * intermediate, hidden, device="cuda") / hidden ** 0.5).half()
    w1_op = cusync.pair_gate_up(w1) if swiglu else w1
    w2 = (torch.randn(hidden, intermediate, device="cuda") / intermediate ** 0.5).half()
    act = args.activation
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {act}, H={hidden}, I={intermediate}; host "
          f"microseconds per call (median of batches of {args.batch})", flush=True)
    rows = []
    for m in [int(v) for v in args.m.split(",")]:
        x = torch.randn(m, hidden, device="cuda", dtype=torch.float16)
        error = relative_error(cusync.mlp(x, w1_op, w2, act).float(), eager(x.float(), w1.float(), w2.float()))
        shape = op.validate(x, w1_op, w2, act)
        inter = torch.empty((m, intermediate), dtype=torch.float16, device="cuda")
        out = torch.empty((m, hidden), dtype=torch.float16, device="cuda")
        device = torch.cuda.current_device()
        stream = torch.cuda.current_stream()
        entry = op._plan_for(device, stream.cuda_stream, shape, act, False)
        w1_run, w2_run = w1_op, w2
        if tuning.packs_weights(entry.choice.config):
            w1_run = op._packed(w1_op, 1, shape, act, stream, False).packed
            w2_run = op._packed(w2, 2, shape, act, stream, False).packed
        pointers = (x.data_ptr(), w1_run.data_ptr(), w2_run.data_ptr(), inter.data_ptr(), out.data_ptr(),
                    stream.cuda_stream)
        steps = [
            ("cusync.mlp (public)", lambda: cusync.mlp(x, w1_op, w2, act)),
            ("torch.ops.cusync.mlp", lambda: torch.ops.cusync.mlp(x, w1_op, w2, act)),
            ("op.run_into", lambda: op.run_into(x, w1_op, w2, inter, out, act)),
            ("op.validate", lambda: op.validate(x, w1_op, w2, act)),
            ("op._plan_for", lambda: op._plan_for(device, stream.cuda_stream, shape, act, False)),
            ("Plan.run (native launch)", lambda: entry.plan.run(*pointers)),
            ("two torch.empty", lambda: (torch.empty((m, hidden), dtype=torch.float16, device="cuda"),
                                         torch.empty((m, intermediate), dtype=torch.float16, device="cuda"))),
            ("torch eager MLP", lambda: eager(x, w1, w2)),
        ]
        for name, fn in steps:
            rows.append((m, name, host_us(fn, args.calls, args.batch)))
            print(f"M={m:3d} {name:28s} {rows[-1][2]:9.1f} us", flush=True)
        print(f"M={m:3d} config {entry.choice.config}; op output against torch: relative error {error:.2e}"
              f"{'' if error <= BOUND else '  FAILED'}", flush=True)
    print("\n     M  step                          host us")
    for m, name, us in rows:
        print(f"{m:6d}  {name:28s} {us:9.1f}")


if __name__ == "__main__":
    main()
