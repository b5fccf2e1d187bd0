#!/usr/bin/env python3
"""How long must a variant be replayed before it is timed in the power state of sustained work? torch eager (cuBLAS)
GPT-3 MLP (tanh GELU) at --m, timed as torch_baselines.py times it (CUDA graph of 10 MLPs, median of 9 replays)
after warm-ups of increasing length, each after an idle second, in interleaved rounds.

Usage: warmup_length_probe.py [--m 1024] [--warmups 0,50,100,200,500,1000,2000] [--rounds 2]
"""
import argparse
import time

import torch
import torch.nn.functional as F

import torch_baselines

HIDDEN, INTERMEDIATE = 12288, 6144


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--warmups", default="0,50,100,200,500,1000,2000")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    x = torch.randn(args.m, HIDDEN, device="cuda").half()
    w1 = (torch.randn(INTERMEDIATE, HIDDEN, device="cuda") / HIDDEN ** 0.5).half()
    w2 = (torch.randn(HIDDEN, INTERMEDIATE, device="cuda") / INTERMEDIATE ** 0.5).half()
    mlp = lambda: F.linear(F.gelu(F.linear(x, w1), approximate="tanh"), w2)  # noqa: E731
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, M = {args.m}")
    for round_index in range(args.rounds):
        for warmup in (int(v) for v in args.warmups.split(",")):
            time.sleep(1.0)  # idle: the state a burst after other work or a host-side pause starts from
            torch_baselines.WARMUP_MS = warmup
            us, _ = torch_baselines.time_graph(mlp)
            print(f"round {round_index + 1} warm-up {warmup:5d} ms: {us:8.1f} us per MLP", flush=True)


if __name__ == "__main__":
    main()
