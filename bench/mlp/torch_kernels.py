#!/usr/bin/env python3
"""Which CUDA kernels a torch variant of the MLP launches at one M, and how long each takes: the anchors'
strategy, read off the profiler (names and times), next to the fused chain's own traces. One warm call
under torch.profiler per variant, after warm-up (and, for max-autotune, its autotuning).

Usage: torch_kernels.py [--model gpt3|llama] [--m 1] [--variants eager,compile,max-autotune]
"""
import argparse

import torch
from torch.profiler import ProfilerActivity, profile

from torch_baselines import SHAPES, mlp_eager, swiglu_mlp_eager


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(SHAPES), default="gpt3")
    parser.add_argument("--m", type=int, default=1)
    parser.add_argument("--variants", default="eager,compile,max-autotune")
    args = parser.parse_args()
    hidden, intermediate = SHAPES[args.model]
    llama = args.model == "llama"
    eager = swiglu_mlp_eager if llama else mlp_eager
    variants = {"eager": eager, "compile": torch.compile(eager, dynamic=False),
                "max-autotune": torch.compile(eager, mode="max-autotune-no-cudagraphs", dynamic=False)}
    x = torch.randn(args.m, hidden, device="cuda", dtype=torch.float16)
    w1 = (torch.randn((2 if llama else 1) * intermediate, hidden, device="cuda") / hidden ** 0.5).half()
    w2 = (torch.randn(hidden, intermediate, device="cuda") / intermediate ** 0.5).half()
    for name in args.variants.split(","):
        fn = variants[name]
        for _ in range(5):
            fn(x, w1, w2)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA], record_shapes=False) as prof:
            fn(x, w1, w2)
            torch.cuda.synchronize()
        print(f"== {args.model} M={args.m} {name}")
        total = 0.0
        for event in prof.events():
            if event.device_type == torch.autograd.DeviceType.CUDA:
                us = event.device_time if hasattr(event, "device_time") else event.cuda_time
                total += us
                print(f"  {us:8.1f} us  {event.name[:150]}")
        print(f"  {total:8.1f} us  in all (kernel time, launch gaps excluded)")


if __name__ == "__main__":
    main()
