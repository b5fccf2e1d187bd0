#!/usr/bin/env python3
"""What a PyTorch user already has for conv2d_chain_example's chains: two dependent 3x3 convolutions (stride 1,
padding 1, bias, ReLU after each), NHWC (channels_last) fp16, cuDNN through F.conv2d with cudnn.benchmark on. Each
chain is checked against a float32 reference on the same random inputs (NaN fails) and timed as CUDA-graph replays
(10 chains per graph, warm-up, median of 9 replays), like bench/mlp/torch_baselines.py, so the numbers compare with
conv2d_chain_example's taken in the same device call.

Usage: torch_conv_baselines.py --csv OUT.csv [--layers 56,28,14,7] [--batch 1,8,32]
"""
import argparse
import csv
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/mlp")
from torch_baselines import relative_error, time_graph  # noqa: E402

CHANNELS = {56: 64, 28: 128, 14: 256, 7: 512}  # conv2d_chain_example's layers (ResNet stages)
BOUND = 2e-2


def chain(x, w1, b1, w2, b2):
    return F.relu(F.conv2d(F.relu(F.conv2d(x, w1, b1, padding=1)), w2, b2, padding=1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", required=True)
    parser.add_argument("--layers", default="56,28,14,7")
    parser.add_argument("--batch", default="1,8,32")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False  # the float32 reference is float32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(int(time.time()))
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}",
          flush=True)
    rows = []
    for size in [int(v) for v in args.layers.split(",")]:
        c = CHANNELS[size]
        for batch in [int(v) for v in args.batch.split(",")]:
            x = torch.randn(batch, c, size, size, device="cuda").half().to(memory_format=torch.channels_last)
            w1, w2 = [(torch.randn(c, c, 3, 3, device="cuda") / (9 * c) ** 0.5).half()
                      .to(memory_format=torch.channels_last) for _ in range(2)]
            b1, b2 = [(torch.randn(c, device="cuda") * 0.1).half() for _ in range(2)]
            ref = chain(x.float(), w1.float(), b1.float(), w2.float(), b2.float())
            us, out = time_graph(lambda: chain(x, w1, b1, w2, b2))
            err = relative_error(out, ref)
            rows.append({"size": size, "channels": c, "batch": batch, "variant": "cuDNN (torch)", "us": f"{us:.2f}",
                         "relative_error": f"{err:.3g}", "correct": int(err <= BOUND)})
            print(f"{size}x{size}x{c} B={batch:3d} cuDNN chain {us:8.1f} us  rel.err {err:.2e}"
                  f"{'' if err <= BOUND else '  FAILED'}", flush=True)
    with open(args.csv, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
