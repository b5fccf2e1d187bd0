#!/usr/bin/env python3
"""Which kernels cuBLAS (through torch's F.linear) runs for the attention block's two GEMMs, and how long each
takes, read off torch.profiler: the strategy the hooked GEMMs are compared with (tile shape, split-K, cluster are
in the kernel names). One profiled call after warm-up per shape.

Usage: torch_gemm_kernels.py [--model gpt3|llama] [--tokens 512,2048]
"""
import argparse

import torch
from torch.profiler import ProfilerActivity, profile

# H and heads per GPU under 8-way tensor parallelism (examples/attention/attention_problem.h).
MODELS = {"gpt3": (12288, 12), "llama": (8192, 8)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(MODELS), default="gpt3")
    parser.add_argument("--tokens", default="512,2048")
    args = parser.parse_args()
    hidden, heads = MODELS[args.model]
    columns = heads * 128
    wqkv = (torch.randn(3 * columns, hidden, device="cuda") / hidden ** 0.5).half()
    wo = (torch.randn(hidden, columns, device="cuda") / columns ** 0.5).half()
    for tokens in (int(t) for t in args.tokens.split(",")):
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.float16)
        t = torch.randn(tokens, columns, device="cuda", dtype=torch.float16)
        for name, fn in (("qkv", lambda: torch.nn.functional.linear(x, wqkv)),
                         ("out", lambda: torch.nn.functional.linear(t, wo))):
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            for event in prof.events():
                if event.device_type == torch.autograd.DeviceType.CUDA:
                    print(f"{args.model} tokens={tokens} {name}: {event.device_time:8.1f} us  {event.name[:150]}")


if __name__ == "__main__":
    main()
