#!/usr/bin/env python3
"""What a PyTorch user already has for attention_example's attention block (one GPU of 8-way tensor parallelism):
QKV = F.linear(X, Wqkv), the new K and V written into the caches in place, F.scaled_dot_product_attention (causal
in prompt processing; over the S' cached keys and the new one in token generation), Y = F.linear(T, Wo); fp16,
cuBLAS GEMMs and torch's SDPA kernels (flash / memory-efficient). Eager and torch.compile (default mode), each
checked against the same block in float32 on the same inputs and caches (NaN fails) and timed as CUDA-graph replays
(10 blocks per graph, warm-up, median of 9 replays) like bench/mlp/torch_baselines.py, so the numbers compare with
attention_example's taken in the same device call.

Shapes: token generation (--decode BxS',...: B sequences, one new token each, S' cached) and prompt processing
(--prompt BxS,...: B sequences of S tokens, S' = 0), for --model gpt3,llama. torch.compile compiles once per shape
(constants), some seconds each; the recompile limit is raised to the number of shapes so none falls back to eager.

Usage: torch_attention_baselines.py --csv OUT.csv [--model gpt3,llama] [--decode 1x512,1x1024,...]
                                    [--prompt 1x512,2x512,4x512] [--no-compile]
"""
import argparse
import csv
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/mlp")
import torch_baselines  # noqa: E402
from torch_baselines import relative_error, time_graph  # noqa: E402

MODELS = {"gpt3": (12288, 12), "llama": (8192, 8)}  # hidden size, heads of 128 per GPU
HEAD_DIM = 128
BOUND = 2e-2


def attention_block(x, wqkv, wo, k_cache, v_cache, batch, seq, cached, heads):
    """One attention block; appends the new K and V to the caches at positions [cached, cached + seq)."""
    qkv = F.linear(x, wqkv).view(batch, seq, 3, heads, HEAD_DIM)
    q, k, v = (part.transpose(1, 2) for part in qkv.unbind(2))  # [batch, heads, seq, 128]
    k_cache[:, :, cached:cached + seq] = k
    v_cache[:, :, cached:cached + seq] = v
    keys, values = k_cache[:, :, :cached + seq], v_cache[:, :, :cached + seq]
    # Prompt processing (cached = 0) is causal; token generation has one query that sees every key.
    t = F.scaled_dot_product_attention(q, keys, values, is_causal=cached == 0 and seq > 1)
    return F.linear(t.transpose(1, 2).reshape(batch * seq, heads * HEAD_DIM), wo)


def run_shape(model, phase, batch, seq, cached, compile_too):
    hidden, heads = MODELS[model]
    tokens = batch * seq
    # The spreads attention_example uses: QKV entries near 1.3, scores near 1.8, caches alike.
    x = (torch.rand(tokens, hidden, device="cuda") * 2 - 1).half()
    wqkv = ((torch.rand(3 * heads * HEAD_DIM, hidden, device="cuda") * 2 - 1) * 4 / hidden ** 0.5).half()
    wo = ((torch.rand(hidden, heads * HEAD_DIM, device="cuda") * 2 - 1) / (heads * HEAD_DIM) ** 0.5).half()
    capacity = cached + seq
    k_cache, v_cache = [((torch.rand(batch, heads, capacity, HEAD_DIM, device="cuda") * 2 - 1) * 2.3).half()
                        for _ in range(2)]
    ref = attention_block(x.float(), wqkv.float(), wo.float(), k_cache.float(), v_cache.float(), batch, seq, cached,
                          heads)
    eager = lambda: attention_block(x, wqkv, wo, k_cache, v_cache, batch, seq, cached, heads)  # noqa: E731
    variants = {"torch-eager": eager}
    if compile_too:
        compiled = torch.compile(attention_block, dynamic=False)
        variants["torch-compile"] = lambda: compiled(x, wqkv, wo, k_cache, v_cache, batch, seq, cached, heads)
    rows = []
    for name, fn in variants.items():
        k_cache[:, :, cached:] = float("nan")  # the append must happen: a missing one poisons the keys read
        v_cache[:, :, cached:] = float("nan")
        us, out = time_graph(fn)
        err = relative_error(out, ref)
        rows.append({"model": model, "phase": phase, "batch": batch, "seq": seq, "cache": cached, "tokens": tokens,
                     "variant": name, "us": f"{us:.2f}", "relative_error": f"{err:.3g}", "correct": int(err <= BOUND)})
        print(f"{model} {phase} B={batch} S={seq} S'={cached}: {name:14s} {us:9.1f} us  rel.err {err:.2e}"
              f"{'' if err <= BOUND else '  FAILED'}", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", required=True)
    parser.add_argument("--model", default="gpt3,llama")
    parser.add_argument("--decode", default="1x512,1x1024,1x2048,2x1024,4x1024,4x2048")
    parser.add_argument("--prompt", default="1x512,2x512,4x512")
    parser.add_argument("--no-compile", action="store_true")
    torch_baselines.add_warmup_argument(parser)
    args = parser.parse_args()
    torch_baselines.WARMUP_MS = args.warmup_ms
    torch.backends.cuda.matmul.allow_tf32 = False  # the float32 reference is float32
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(int(time.time()))
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    pairs = lambda text: [tuple(int(v) for v in item.split("x")) for item in text.split(",") if item]  # noqa: E731
    # One static graph per shape and model: past dynamo's recompile limit (8 by default) torch.compile silently
    # runs eager, which made the last two shapes of the 2026-11-23 run (LLaMA prompt) eager under the compile label.
    shapes = len(args.model.split(",")) * (len(pairs(args.decode)) + len(pairs(args.prompt)))
    for limit in ("recompile_limit", "cache_size_limit"):  # the name of torch >= 2.6, and its older alias
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, max(64, 2 * shapes))
    rows = []
    for model in args.model.split(","):
        for batch, cached in pairs(args.decode):
            rows += run_shape(model, "decode", batch, 1, cached, not args.no_compile)
        for batch, seq in pairs(args.prompt):
            rows += run_shape(model, "prompt", batch, seq, 0, not args.no_compile)
    with open(args.csv, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
