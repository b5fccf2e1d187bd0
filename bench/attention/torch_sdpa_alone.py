#!/usr/bin/env python3
"""torch's causal scaled_dot_product_attention alone at the attention block's prompt shapes, per SDPA backend: the
attention stage the hooked attention kernels are compared with. Q, K and V are views of one QKV [B*S, 3*heads*128]
tensor, as the chain's QKV GEMM writes it and torch_attention_baselines.py reads it. CUDA graphs of --per-graph
calls, median of --samples replays after a warm-up (bench/mlp/torch_baselines.py's time_graph); each backend's
output is checked against the math backend in float32.

Usage: torch_sdpa_alone.py [--shapes gpt3:1x512,...] [--csv FILE]
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/mlp")
from torch_baselines import time_graph  # noqa: E402  (CUDA-graph timing shared with every torch baseline)

HEADS = {"gpt3": 12, "llama": 8}  # heads per GPU under 8-way tensor parallelism


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="gpt3:1x512,gpt3:1x1024,gpt3:2x1024,gpt3:1x2048,"
                                            "llama:1x512,llama:1x1024,llama:2x1024,llama:1x2048")
    parser.add_argument("--per-graph", type=int, default=10)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--csv", default="")
    args = parser.parse_args()
    rows = []
    for shape in args.shapes.split(","):
        model, bs = shape.split(":")
        batch, seq = (int(v) for v in bs.split("x"))
        heads = HEADS[model]
        qkv = torch.randn(batch * seq, 3 * heads * 128, device="cuda", dtype=torch.float16)
        q, k, v = (t.view(batch, seq, heads, 128).transpose(1, 2) for t in qkv.split(heads * 128, dim=1))
        reference = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
        flops = 4 * batch * heads * 128 * seq * (seq + 1) / 2  # causal: the kept half of QK^T and PV
        for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                              ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
            try:
                with sdpa_kernel(backend):
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    error = ((out.float() - reference).norm() / reference.norm()).item()
                    us, _ = time_graph(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                                       calls=args.per_graph, samples=args.samples)
            except RuntimeError as e:
                print(f"{model} {batch}x{seq} {name}: unavailable ({str(e).splitlines()[0][:80]})")
                continue
            rows.append((model, batch, seq, name, us, flops / us / 1e6, error))
            print(f"{model:5s} {batch}x{seq:<5d} {name:9s} {us:8.1f} us {flops / us / 1e6:6.1f} TFLOP/s "
                  f"rel.err {error:.2e} {'ok' if error < 1e-2 else 'FAIL'}")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("model,batch,seq,backend,us,tflops,relative_error\n")
            for r in rows:
                f.write(f"{r[0]},{r[1]},{r[2]},{r[3]},{r[4]:.2f},{r[5]:.1f},{r[6]:.2e}\n")


if __name__ == "__main__":
    main()
