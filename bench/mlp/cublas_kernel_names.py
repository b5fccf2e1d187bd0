#!/usr/bin/env python3
"""Which kernels cuBLAS runs for the MLP slices' GEMMs, and how long each takes: torch eager's GPT-3 and LLaMA MLP
(bench/mlp/torch_baselines.py's shapes) under torch.profiler, after a warm-up, per M. The kernel names of cuBLAS's
sm90 kernels (nvjet_*, sm90_xmma_*) carry their tile shape, stages, cluster and scheduling, so the table says which
tiles cuBLAS chose where the fused chain loses to it, and each GEMM's own time to set against the chain's traced
units. Prints one line per (model, M, kernel): calls per MLP, median us per call. No assertion; needs torch and a GPU.

Usage: cublas_kernel_names.py [--m 1,8,...] [--models gpt3,llama] [--warmup-ms N]
"""
import argparse
import statistics
import time
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

from torch_baselines import SHAPES, mlp_eager, swiglu_mlp_eager


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", default="1,8,64,128,256,512,1024,2048,4096")
    parser.add_argument("--models", default="gpt3,llama")
    parser.add_argument("--warmup-ms", type=int, default=500)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    for model in args.models.split(","):
        hidden, intermediate = SHAPES[model]
        llama = model == "llama"
        eager = swiglu_mlp_eager if llama else mlp_eager
        w1 = (torch.randn((2 if llama else 1) * intermediate, hidden, device="cuda") / hidden ** 0.5).half()
        w2 = (torch.randn(hidden, intermediate, device="cuda") / intermediate ** 0.5).half()
        for m in (int(v) for v in args.m.split(",")):
            x = torch.randn(m, hidden, device="cuda", dtype=torch.float16)
            end = time.time() + args.warmup_ms / 1000
            while time.time() < end:
                eager(x, w1, w2)
                torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(args.calls):
                    eager(x, w1, w2)
                torch.cuda.synchronize()
            durations = defaultdict(list)
            for event in prof.events():
                if event.device_type == torch.autograd.DeviceType.CUDA:
                    durations[event.name].append(event.device_time)
            total = sum(sum(d) for d in durations.values()) / args.calls
            print(f"== {model} M={m}: {total:.1f} us of kernels per MLP")
            for name, d in sorted(durations.items(), key=lambda kv: -sum(kv[1])):
                print(f"  {len(d) / args.calls:4.1f} x {statistics.median(d):8.1f} us  {name[:150]}")


if __name__ == "__main__":
    main()
