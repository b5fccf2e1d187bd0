#!/usr/bin/env python3
"""torch.ops.cusync.mlp side by side with torch eager and torch.compile in one process, on the same inputs, with
the method of bench/mlp/torch_baselines.py (CUDA graphs of 10 calls, warm-up, median of 9 replays; every variant
checked against a float32 reference with the GELU the library computes, NaN fails). Its numbers compare with
mlp_fused_example's only with the same --warmup-ms on both sides (sustained clocks). Also each variant's per-call
time without a graph (launch and Python overhead included), which is what eager code gets. Prints a table last,
writes a CSV; asserts nothing about time.

Usage: bench_mlp_op.py [--m 1,8,...] [--hidden 12288] [--intermediate 6144] [--csv mlp_op_bench.csv]
                       [--autotune-m 1,256,...] [--warmup-ms N]
Needs torch, an sm_90 GPU and libcusync_mlp.so (PYTHONPATH=python CUSYNC_MLP_LIBRARY=..., or the installed package).
"""
import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench" / "mlp"))
import torch_baselines  # noqa: E402
from torch_baselines import BOUND, SHAPES, mlp_eager, relative_error, swiglu_mlp_eager, time_graph  # noqa: E402

import cusync  # noqa: E402
from cusync import _library  # noqa: E402


def time_without_graph(fn, calls=20, samples=5):
    """Median microseconds per call of `fn` called back to back on the current stream (no graph)."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(samples):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            out = fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / calls)
    return statistics.median(times), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--m", default="1,8,64,128,256,512,1024,2048,4096")
    parser.add_argument("--activation", choices=("gelu", "swiglu"), default="gelu",
                        help="gelu: the GPT-3 slice; swiglu: the LLaMA-65B slice (shapes from torch_baselines.py)")
    parser.add_argument("--hidden", type=int, default=None)
    parser.add_argument("--intermediate", type=int, default=None)
    parser.add_argument("--csv", default="mlp_op_bench.csv")
    parser.add_argument("--autotune-m", default="", help="also torch.compile max-autotune at these M (slow)")
    # Without it the graphs are timed on a GPU fresh from idle, at clocks the examples' --warmup-ms runs never see:
    # the op's times are then comparable only within this script's run, not to mlp_fused_example's.
    torch_baselines.add_warmup_argument(parser)
    args = parser.parse_args()
    torch_baselines.WARMUP_MS = args.warmup_ms
    ms = [int(v) for v in args.m.split(",")]
    autotune_ms = {int(v) for v in args.autotune_m.split(",") if v}
    swiglu = args.activation == "swiglu"
    default_hidden, default_intermediate = SHAPES["llama" if swiglu else "gpt3"]
    hidden = args.hidden or default_hidden
    intermediate = args.intermediate or default_intermediate
    eager = swiglu_mlp_eager if swiglu else mlp_eager
    # torch's variants and the reference compute the GELU the library does ("tanh" unless built with CUSYNC_GELU_ERF).
    torch_baselines.GELU_APPROXIMATE = _library.gelu_approximation()
    torch.backends.cuda.matmul.allow_tf32 = False  # the float32 reference is float32
    torch.manual_seed(int(time.time()))
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {args.activation}, H={hidden}, "
          f"I={intermediate}", flush=True)
    torch._dynamo.config.cache_size_limit = max(64, 4 * len(ms))  # one static graph per M and compiled variant
    compiled = torch.compile(eager, dynamic=False)
    compiled_autotune = torch.compile(eager, mode="max-autotune-no-cudagraphs", dynamic=False)
    compiled_op = torch.compile(lambda x, w1, w2: torch.ops.cusync.mlp(x, w1, w2, args.activation), fullgraph=True,
                                dynamic=False)
    # torch reads [gate; up] as stored; the op reads the same weights paired once (cusync.pair_gate_up).
    w1 = (torch.randn((2 if swiglu else 1) * intermediate, hidden, device="cuda") / hidden ** 0.5).half()
    w1_op = cusync.pair_gate_up(w1) if swiglu else w1
    w2 = (torch.randn(hidden, intermediate, device="cuda") / intermediate ** 0.5).half()
    rows, table = [], {}

    def record(m, variant, graph, us, err, config=""):
        correct = err <= BOUND
        rows.append({"M": m, "variant": variant, "graph": int(graph), "us": f"{us:.2f}", "relative_error": f"{err:.3g}",
                     "correct": int(correct), "config": config})
        table[(m, variant, graph)] = (us, correct)
        with open(args.csv, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            writer.writerows(rows)
        print(f"M={m:5d} {variant:26s} {'graph' if graph else 'eager':5s} {us:9.1f} us  rel.err {err:.2e}"
              f"{'' if correct else '  FAILED'} {config}", flush=True)

    for m in ms:
        x = torch.randn(m, hidden, device="cuda", dtype=torch.float16)
        ref = eager(x.float(), w1.float(), w2.float())
        config = cusync.explain(x, w1_op, w2, args.activation)["config"]
        variants = {
            "cusync-op": (lambda: cusync.mlp(x, w1_op, w2, args.activation), config),
            # Through the dispatcher always (cusync.mlp skips it in eager calls where that cannot be observed): the
            # host time that skipping saves, without graphs only (in a graph both run the same kernels).
            "cusync-op-dispatched": (lambda: torch.ops.cusync.mlp(x, w1_op, w2, args.activation), config),
            "cusync-op-in-compile": (lambda: compiled_op(x, w1_op, w2), config),
            "torch-eager": (lambda: eager(x, w1, w2), ""),
            "torch-compile": (lambda: compiled(x, w1, w2), ""),
        }
        if m in autotune_ms:
            variants["torch-compile-max-autotune"] = (lambda: compiled_autotune(x, w1, w2), "")
        for name, (fn, label) in variants.items():
            for graph in ((False,) if name == "cusync-op-dispatched" else (True, False)):
                try:
                    us, out = time_graph(fn) if graph else time_without_graph(fn)
                    record(m, name, graph, us, relative_error(out, ref), label)
                except Exception as error:  # a variant that fails must not stop the others
                    print(f"M={m} {name}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        del x, ref
        torch.cuda.empty_cache()

    def cell(m, variant, graph=True):
        us, correct = table.get((m, variant, graph), (float("nan"), False))
        return f"{us:9.1f}{'' if correct else '!'}"

    def ratio(m, other, graph=True):
        mine, theirs = table.get((m, "cusync-op", graph)), table.get((m, other, graph))
        return f"{theirs[0] / mine[0]:7.3f}" if mine and theirs and mine[1] and theirs[1] else "      -"

    print("\nmicroseconds per call; graph: CUDA-graph replays, eager: back-to-back calls; op disp.: the op through"
          " torch.ops (the dispatcher), eager; ! = failed the check; x/op > 1: the op is faster")
    # max-autotune's columns only when it ran (--autotune-m): it is the best anchor at M = 1 (docs/BENCHMARKS.md).
    autotune = "torch-compile-max-autotune"
    tuned = bool(autotune_ms)
    print(f"{'M':>6} {'op graph':>9} {'eager':>9} {'compile':>9}" + (f" {'max-auto':>9}" if tuned else "") +
          f" {'op eager':>9} {'op disp.':>9} {'eager':>9} | {'eager/op':>8} {'compile/op':>10}" +
          (f" {'max-auto/op':>11}" if tuned else "") + f" {'eager/op (no graph)':>19} | config")
    for m in ms:
        print(f"{m:6d} {cell(m, 'cusync-op')} {cell(m, 'torch-eager')} {cell(m, 'torch-compile')}" +
              (f" {cell(m, autotune)}" if tuned else "") +
              f" {cell(m, 'cusync-op', False)} {cell(m, 'cusync-op-dispatched', False)} {cell(m, 'torch-eager', False)}"
              f" | {ratio(m, 'torch-eager'):>8} "
              f"{ratio(m, 'torch-compile'):>10}" + (f" {ratio(m, autotune):>11}" if tuned else "") +
              f" {ratio(m, 'torch-eager', False):>19} | "
              f"{next((r['config'] for r in rows if r['M'] == m and r['config']), '-')}")
    failed = [r for r in rows if not r["correct"]]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} results correct (bound {BOUND}); CSV: {args.csv}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
