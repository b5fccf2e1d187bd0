#!/usr/bin/env python3
"""What a PyTorch user already has for the GPT-3 MLP slice (fp16): eager, the cuBLASLt GELU epilogue through
torch._addmm_activation, torch.compile (default and max-autotune). With --model llama, the LLaMA-65B MLP slice
(H = 8192, F/8 = 2752, SwiGLU): eager as vLLM-style code writes it (one GEMM over [gate | up], silu * up, GEMM)
and torch.compile of the same. Each variant is checked against a float32
reference on fresh random inputs (NaN fails) and timed as CUDA-graph replays (10 calls per graph, warm-up, median
of several replays), so the numbers compare with mlp_fused_example's, taken in the same device call.

GELU is GPT-3's tanh approximation, as cusync computes it by default and cuBLASLt's epilogue (torch-addmm-gelu) always
does; --gelu none times eager and torch.compile with the exact (erf) GELU instead, under variant names ending in
"-exact-gelu" (the form of a CUSYNC_GELU_ERF build, and of the anchors before session 10).

Usage: torch_baselines.py --csv OUT.csv [--model gpt3|llama] [--m 1,8,...] [--autotune-m 1,256,...] [--budget-s S]
                          [--gelu tanh|none] [--warmup-ms N] [--interleave [--samples N]]
max-autotune compiles and benchmarks many Triton GEMMs per shape (about a minute each on the lent machine), so it
runs at --autotune-m only (default: every M) and stops starting new shapes once --budget-s is spent; the CSV is
rewritten after every result, so a run cut short keeps what it measured.
"""
import argparse
import csv
import sys
import time

import torch
import torch.nn.functional as F

SHAPES = {"gpt3": (12288, 4 * 12288 // 8), "llama": (8192, 22016 // 8)}  # (hidden, intermediate) per GPU
BOUND = 2e-2  # the bound mlp_fused_example checks with (fp16 operands and intermediate, K up to 12288)


GELU_APPROXIMATE = "tanh"  # --gelu: GPT-3's GELU, the form cusync computes by default (runtime/include/cusync/gelu.cuh)


def mlp_eager(x, w1, w2):
    return F.linear(F.gelu(F.linear(x, w1), approximate=GELU_APPROXIMATE), w2)


def swiglu_mlp_eager(x, w1, w2):
    """w1: [gate | up] as one [2I, H] weight."""
    gate, up = F.linear(x, w1).chunk(2, dim=-1)
    return F.linear(F.silu(gate) * up, w2)


WARMUP_MS = 0  # --warmup-ms: sustained warm-up before timing, as mlp_fused_example's --warmup-ms


def add_warmup_argument(parser):
    """--warmup-ms N (milliseconds, 0 or more), for this script and the ones that time with time_graph."""
    def milliseconds(text):
        value = int(text)
        if value < 0:
            raise argparse.ArgumentTypeError(f"'{text}' is negative")
        return value
    parser.add_argument("--warmup-ms", type=milliseconds, default=0,
                        help="replay each variant this long before timing it (the power state of sustained work)")


def hold_stream(cycles=100_000):
    """Keeps the GPU busy about 50 us before a timing's start event, so that the event fires only after the host has
    enqueued the timed graph too; a slow host (a build on every core) otherwise adds the GPU's wait for the launch to
    the time (examples/common/graph_timer.cuh's holdStream says what it cost: 165 against 133 us)."""
    torch.cuda._sleep(cycles)


def capture_graph(fn, calls=10):
    """`fn` called `calls` times, captured into one CUDA graph after three calls outside it (allocator, lazy init);
    returns the graph and the output of its last call, which each replay rewrites."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            out = fn()
    return graph, out


def time_graph(fn, calls=10, warmups=3, samples=9):
    """Median microseconds per call of `fn` captured `calls` times into one CUDA graph, after `warmups` replays and
    then replays for at least WARMUP_MS milliseconds (the power state of sustained work; graph_timer.cuh says why)."""
    graph, out = capture_graph(fn, calls)
    for _ in range(warmups):
        graph.replay()
    warm_end = time.time() + WARMUP_MS / 1000.0
    while time.time() < warm_end:
        graph.replay()
        graph.replay()
        torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        hold_stream()
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / calls)
    times.sort()
    return times[len(times) // 2], out


def time_graphs_interleaved(graphs, calls=10, warmup_rounds=3, samples=9):
    """Median microseconds per call of each graph (each holding `calls` calls), timed in rounds that replay every
    graph once in an order rotated each round, after warm-up rounds continued for at least WARMUP_MS milliseconds, so
    that clock and thermal drift fall on all of them alike (examples/common/interleaved_graph_timer.cuh says why)."""
    warm_end = time.time() + WARMUP_MS / 1000.0
    rounds = 0
    while rounds < warmup_rounds or time.time() < warm_end:
        for graph in graphs:
            graph.replay()
        torch.cuda.synchronize()
        rounds += 1
    times = [[] for _ in graphs]
    for sample in range(samples):
        for i in range(len(graphs)):
            v = (i + sample) % len(graphs)
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            hold_stream()
            start.record()
            graphs[v].replay()
            stop.record()
            stop.synchronize()
            times[v].append(start.elapsed_time(stop) * 1000.0 / calls)
    return [sorted(t)[len(t) // 2] for t in times]


def relative_error(out, ref):
    if not torch.isfinite(out).all():
        return float("inf")
    return ((out.float() - ref).norm() / ref.norm()).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", required=True)
    parser.add_argument("--model", choices=sorted(SHAPES), default="gpt3")
    parser.add_argument("--m", default="1,8,64,128,256,512,1024,2048,4096")
    parser.add_argument("--autotune-m", default=None)
    parser.add_argument("--budget-s", type=float, default=480.0)
    parser.add_argument("--gelu", choices=("tanh", "none"), default="tanh")
    add_warmup_argument(parser)
    parser.add_argument("--interleave", action="store_true",
                        help="time the variants of an M together, in interleaved rounds after one --warmup-ms warm-up "
                             "over all of them (mlp_fused_example --interleave does the same)")
    parser.add_argument("--samples", type=int, default=9, help="timed rounds with --interleave (default 9)")
    args = parser.parse_args()
    global GELU_APPROXIMATE, WARMUP_MS
    GELU_APPROXIMATE = args.gelu
    WARMUP_MS = args.warmup_ms
    suffix = "" if args.gelu == "tanh" or args.model == "llama" else "-exact-gelu"
    ms = [int(v) for v in args.m.split(",")]
    autotune_ms = set(ms if args.autotune_m is None else [int(v) for v in args.autotune_m.split(",")])
    torch.backends.cuda.matmul.allow_tf32 = False  # the float32 reference is float32
    torch.manual_seed(int(time.time()))
    began = time.time()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)

    # One static graph per M, as a user serving fixed shapes would have: without dynamic=False, the second shape
    # makes dynamo recompile with symbolic sizes, and max-autotune's GEMMs then ran 6x slower than at the first
    # shape (measured: 11984 us at M = 4096); the cache must hold one entry per M.
    torch._dynamo.config.cache_size_limit = max(64, 2 * len(ms))
    llama = args.model == "llama"
    hidden, intermediate = SHAPES[args.model]
    eager = swiglu_mlp_eager if llama else mlp_eager
    compiled_default = torch.compile(eager, dynamic=False)
    compiled_autotune = torch.compile(eager, mode="max-autotune-no-cudagraphs", dynamic=False)
    rows = []

    def record(m, variant, us, err):
        correct = err <= BOUND
        rows.append({"M": m, "variant": variant, "us": f"{us:.2f}", "relative_error": f"{err:.3g}",
                     "correct": int(correct)})
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            writer.writerows(rows)
        print(f"M={m:5d} {variant:28s} {us:9.1f} us  rel.err {err:.2e}{'' if correct else '  FAILED'}", flush=True)

    for m in ms:
        x = torch.randn(m, hidden, device="cuda", dtype=torch.float16)
        w1 = (torch.randn((2 if llama else 1) * intermediate, hidden, device="cuda") / hidden ** 0.5).half()
        w2 = (torch.randn(hidden, intermediate, device="cuda") / intermediate ** 0.5).half()
        ref = eager(x.float(), w1.float(), w2.float())
        variants = {
            "torch-eager" + suffix: lambda: eager(x, w1, w2),
            "torch-compile" + suffix: lambda: compiled_default(x, w1, w2),
        }
        if not llama and not suffix:
            zero_bias = torch.zeros(intermediate, device="cuda", dtype=torch.float16)
            variants["torch-addmm-gelu"] = lambda: F.linear(
                torch._addmm_activation(zero_bias, x, w1.t(), use_gelu=True), w2)
        if m in autotune_ms and time.time() - began < args.budget_s:
            variants["torch-compile-max-autotune" + suffix] = lambda: compiled_autotune(x, w1, w2)
        if args.interleave:
            captured = {}
            for name, fn in variants.items():
                try:
                    captured[name] = capture_graph(fn)
                except Exception as error:  # a baseline that fails must not stop the others
                    print(f"M={m} {name}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
            times = time_graphs_interleaved([graph for graph, _ in captured.values()], samples=args.samples)
            for (name, (graph, out)), us in zip(captured.items(), times):
                out.fill_(float("nan"))  # the check reads what this graph's replay wrote, not an earlier result
                graph.replay()
                torch.cuda.synchronize()
                record(m, name, us, relative_error(out, ref))
            del captured
        else:
            for name, fn in variants.items():
                try:
                    us, out = time_graph(fn)
                    record(m, name, us, relative_error(out, ref))
                except Exception as error:  # a baseline that fails must not stop the others
                    print(f"M={m} {name}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        del x, w1, w2, ref, variants
        torch.cuda.empty_cache()
    print(f"torch baselines done in {time.time() - began:.0f} s", flush=True)


if __name__ == "__main__":
    main()
