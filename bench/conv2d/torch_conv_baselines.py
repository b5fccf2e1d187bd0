#!/usr/bin/env python3
"""What a PyTorch user already has for conv2d_chain_example's chains (examples/conv2d/conv_models.h, mirrored in
MODELS below): per model and layer, the dependent convolutions of one layer (bias, ReLU after each), NHWC
(channels_last) fp16, cuDNN through F.conv2d with cudnn.benchmark on. Each chain is checked against a float32
reference on the same random inputs (every output the chain ends in; NaN fails) and timed as CUDA-graph replays
(10 chains per graph, warm-up, median of 9 replays), like bench/mlp/torch_baselines.py, so the numbers compare with
conv2d_chain_example's taken in the same device call. bench/conv2d/summarize_conv.py joins the two CSVs.

With --interleave, the chains of one layer at every batch, each captured into its own graph, are timed together:
rounds that replay every graph once in an order rotated per round, after one --warmup-ms warm-up over all of them
(torch_baselines.time_graphs_interleaved, which holds the stream before each start event), --samples rounds; then
each chain's outputs are poisoned with NaN and its graph replayed once more for the check. Timed one after another,
each chain meets the clocks the previous ones left (examples/common/interleaved_graph_timer.cuh says how much);
conv2d_chain_example --interleave does the same for a layer and batch's variants.

Usage: torch_conv_baselines.py --csv OUT.csv [--model resnet,vgg,bottleneck,stride2] [--layers 56,28,14,7]
                               [--batch 1,2,4,8,16,32] [--warmup-ms N] [--interleave [--samples N]]
"""
import argparse
import csv
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/mlp")
import torch_baselines  # noqa: E402
from torch_baselines import capture_graph, relative_error, time_graph, time_graphs_interleaved  # noqa: E402

BOUND = 2e-2
LAYERS = [(56, 64), (28, 128), (14, 256), (7, 512)]  # Table II: output width and channels of each layer


def stage(name, size, cin, cout, filt, stride, producer):
    return {"name": name, "size": size, "in": cin, "out": cout, "filter": filt, "stride": stride,
            "producer": producer}


def model_layers(model):
    """The chains of conv_models.h: (width, channels, stages) per layer."""
    layers = []
    for i, (p, c) in enumerate(LAYERS):
        if model in ("resnet", "vgg"):
            convs = 4 if model == "vgg" and p <= 14 else 2
            stages = [stage("3x3", p, c, c, 3, 1, k - 1) for k in range(convs)]
        elif model == "bottleneck":
            stages = [stage("1x1", p, 4 * c, c, 1, 1, -1), stage("3x3", p, c, c, 3, 1, 0),
                      stage("1x1", p, c, 4 * c, 1, 1, 1)]
        elif model == "stride2":
            if i == 0:
                continue
            stages = [stage("3x3", 2 * p, c // 2, c // 2, 3, 1, -1), stage("3x3/2", 2 * p, c // 2, c, 3, 2, 0),
                      stage("1x1/2", 2 * p, c // 2, c, 1, 2, 0), stage("3x3", p, c, c, 3, 1, 1)]
        else:
            raise SystemExit(f"torch_conv_baselines.py: unknown model '{model}'")
        layers.append((p, c, stages))
    return layers


def run_chain(stages, x, weights, biases):
    """Every stage in order; returns the outputs no stage reads (what the chain ends in)."""
    outputs = []
    for s, st in enumerate(stages):
        source = x if st["producer"] < 0 else outputs[st["producer"]]
        outputs.append(F.relu(F.conv2d(source, weights[s], biases[s], stride=st["stride"],
                                       padding=st["filter"] // 2)))
    read = {st["producer"] for st in stages}
    return tuple(out for s, out in enumerate(outputs) if s not in read)


def batch_groups(batches, interleave):
    """The batches of one layer whose chains are timed together: all of them with --interleave, else each alone;
    in the order given either way, so the CSV's rows come in the same order."""
    return [list(batches)] if interleave else [[batch] for batch in batches]


def poison(tensors):
    """NaN in every element, so that a check after a replay reads only what that replay wrote."""
    for tensor in tensors:
        tensor.fill_(float("nan"))


def time_and_check(chains, interleave, samples):
    """(median us per chain, largest relative error of its outputs) for each (fn, refs) of `chains`: timed alone
    (time_graph; the outputs of its last replay checked), or, interleaved, each captured into a graph of its own,
    timed together, then checked after a replay of its own graph, its outputs poisoned first."""
    if not interleave:
        measured = []
        for fn, refs in chains:
            us, outs = time_graph(fn)
            measured.append((us, max(relative_error(out, ref) for out, ref in zip(outs, refs))))
        return measured
    captured = [capture_graph(fn) for fn, _ in chains]
    times = time_graphs_interleaved([graph for graph, _ in captured], samples=samples)
    measured = []
    for (graph, outs), (_, refs), us in zip(captured, chains, times):
        poison(outs)
        graph.replay()
        torch.cuda.synchronize()
        measured.append((us, max(relative_error(out, ref) for out, ref in zip(outs, refs))))
    return measured


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not positive")
    return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", required=True)
    parser.add_argument("--model", default="resnet,vgg")
    parser.add_argument("--layers", default="56,28,14,7")
    parser.add_argument("--batch", default="1,2,4,8,16,32")
    torch_baselines.add_warmup_argument(parser)
    parser.add_argument("--interleave", action="store_true",
                        help="time the chains of a layer at every batch together, in interleaved rounds after one "
                             "--warmup-ms warm-up over all of them (conv2d_chain_example --interleave does the same "
                             "for a layer and batch's variants)")
    parser.add_argument("--samples", type=positive_int, default=9, help="timed rounds with --interleave (default 9)")
    args = parser.parse_args()
    torch_baselines.WARMUP_MS = args.warmup_ms
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False  # the float32 reference is float32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(int(time.time()))
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}",
          flush=True)
    widths = [int(v) for v in args.layers.split(",")]
    batches = [int(v) for v in args.batch.split(",")]
    rows = []
    for model in args.model.split(","):
        for size, channels, stages in model_layers(model):
            if size not in widths:
                continue
            first = stages[0]
            weights = [(torch.randn(st["out"], st["in"], st["filter"], st["filter"], device="cuda")
                        / (st["filter"] ** 2 * st["in"]) ** 0.5).half().to(memory_format=torch.channels_last)
                       for st in stages]
            biases = [(torch.randn(st["out"], device="cuda") * 0.1).half() for st in stages]
            for group in batch_groups(batches, args.interleave):
                chains = []
                for batch in group:
                    x = torch.randn(batch, first["in"], first["size"], first["size"], device="cuda").half() \
                        .to(memory_format=torch.channels_last)
                    refs = run_chain(stages, x.float(), [w.float() for w in weights], [b.float() for b in biases])
                    chains.append((lambda x=x: run_chain(stages, x, weights, biases), refs))
                for batch, (us, err) in zip(group, time_and_check(chains, args.interleave, args.samples)):
                    label = f"{size}x{size}x{channels}"
                    rows.append({"model": model, "layer": label, "size": size, "channels": channels,
                                 "stages": len(stages), "batch": batch, "variant": "cuDNN (torch)",
                                 "us": f"{us:.2f}", "relative_error": f"{err:.3g}", "correct": int(err <= BOUND)})
                    print(f"{model:10s} {label:10s} B={batch:3d} cuDNN chain of {len(stages)} {us:8.1f} us  "
                          f"rel.err {err:.2e}{'' if err <= BOUND else '  FAILED'}", flush=True)
                del chains
    if not rows:
        raise SystemExit("torch_conv_baselines.py: no layer selected")
    with open(args.csv, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
