"""Session 25, issue 12: the PyTorch op at M = 1 on its fused chain (the table entry it had: fused_64x128x128_s4_ws,
split 6x3 g4 for GELU, 4x3 g4 whole-unit wait for SwiGLU) against the one-token GEMV chain (gemv_32_p4, unsplit),
in one process: two tuning tables (CUSYNC_TUNING_TABLE set before each variant's first call; the op keys its choice
by table path), each variant and torch eager captured as CUDA graphs of 10 calls and timed interleaved with a
sustained warm-up, every output checked against a float32 reference. Argument: activation, CSV path, warm-up ms."""
import csv
import json
import os
import sys

import torch

sys.path.insert(0, "bench/mlp")
import torch_baselines  # noqa: E402
from torch_baselines import (BOUND, SHAPES, capture_graph, mlp_eager, relative_error, swiglu_mlp_eager,  # noqa: E402
                             time_graphs_interleaved)

import cusync  # noqa: E402
from cusync import _library  # noqa: E402

activation, path = sys.argv[1], sys.argv[2]
torch_baselines.WARMUP_MS = int(sys.argv[3])
swiglu = activation == "swiglu"
torch_baselines.GELU_APPROXIMATE = _library.gelu_approximation()
torch.backends.cuda.matmul.allow_tf32 = False
hidden, intermediate = SHAPES["llama" if swiglu else "gpt3"]
props = torch.cuda.get_device_properties(0)
base = {"device": props.name, "sms": props.multi_processor_count, "hidden": hidden, "intermediate": intermediate,
        "activation": activation, "dtype": "float16", "m": 1}
fused = dict(base, config="fused_64x128x128_s4_ws", split=[4, 3] if swiglu else [6, 3], order="g4",
             **({"unit_wait": "whole"} if swiglu else {}))
gemv = dict(base, config="gemv_32_p4", split=[1, 1], order="g4")
tables = {}
for name, entry in (("op-fused", fused), ("op-gemv", gemv)):
    tables[name] = f"/tmp/table_{name}_{activation}.json"
    json.dump({"schema": "cusync-mlp-tuning/1", "entries": [entry]}, open(tables[name], "w"))

w1 = (torch.randn((2 if swiglu else 1) * intermediate, hidden, device="cuda") / hidden ** 0.5).half()
w1_op = cusync.pair_gate_up(w1) if swiglu else w1
w2 = (torch.randn(hidden, intermediate, device="cuda") / intermediate ** 0.5).half()
eager = swiglu_mlp_eager if swiglu else mlp_eager
x = torch.randn(1, hidden, device="cuda", dtype=torch.float16)
ref = eager(x.float(), w1.float(), w2.float())
graphs, outs, configs = [], {}, {}
for name in ("op-fused", "op-gemv", "torch-eager"):
    if name in tables:
        os.environ["CUSYNC_TUNING_TABLE"] = tables[name]
        configs[name] = cusync.explain(x, w1_op, w2, activation)["config"]
        fn = lambda: cusync.mlp(x, w1_op, w2, activation)  # noqa: E731
    else:
        fn = lambda: eager(x, w1, w2)  # noqa: E731
    graph, out = capture_graph(fn)
    graphs.append(graph)
    outs[name] = out
rows = []
for repeat in range(3):
    times = time_graphs_interleaved(graphs)
    for name, us in zip(outs, times):
        err = relative_error(outs[name], ref)
        rows.append({"activation": activation, "repeat": repeat, "variant": name, "config": configs.get(name, ""),
                     "us": f"{us:.2f}", "relative_error": f"{err:.3g}", "correct": int(err <= BOUND)})
        print(activation, repeat, name, f"{us:.1f}", f"{err:.2e}", configs.get(name, ""), flush=True)
with open(path, "w", newline="") as handle:
    writer = csv.DictWriter(handle, fieldnames=list(rows[0].keys()))
    writer.writeheader()
    writer.writerows(rows)
sys.exit(0 if all(r["correct"] for r in rows) else 1)
