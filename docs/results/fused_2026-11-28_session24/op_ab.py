"""Session 24, issue 12: the PyTorch op with and without its per-call counter reset, one library per process (the
package found through PYTHONPATH / CUSYNC_MLP_LIBRARY). Per M: fresh inputs, the op and torch eager (cuBLAS with
the GELU epilogue) captured as CUDA graphs of 10 calls and timed interleaved (torch_baselines.time_graphs_interleaved),
every output checked against a float32 reference. Writes one CSV row per (M, variant)."""
import csv
import sys

import torch

sys.path.insert(0, "bench/mlp")
import torch_baselines  # noqa: E402
from torch_baselines import BOUND, SHAPES, capture_graph, mlp_eager, relative_error, time_graphs_interleaved  # noqa: E402

import cusync  # noqa: E402
from cusync import _library  # noqa: E402

tree, path = sys.argv[1], sys.argv[2]
ms = [int(v) for v in sys.argv[3].split(",")]
torch_baselines.GELU_APPROXIMATE = _library.gelu_approximation()
torch.backends.cuda.matmul.allow_tf32 = False
hidden, intermediate = SHAPES["gpt3"]
w1 = (torch.randn(intermediate, hidden, device="cuda") / hidden ** 0.5).half()
w2 = (torch.randn(hidden, intermediate, device="cuda") / intermediate ** 0.5).half()
rows = []
for m in ms:
    x = torch.randn(m, hidden, device="cuda", dtype=torch.float16)
    ref = mlp_eager(x.float(), w1.float(), w2.float())
    config = cusync.explain(x, w1, w2, "gelu")["config"]
    fns = {"op": lambda: cusync.mlp(x, w1, w2, "gelu"), "torch-eager": lambda: mlp_eager(x, w1, w2)}
    graphs, outs = [], {}
    for name, fn in fns.items():
        graph, out = capture_graph(fn)
        graphs.append(graph)
        outs[name] = out
    times = time_graphs_interleaved(graphs)
    for (name, _), us in zip(fns.items(), times):
        err = relative_error(outs[name], ref)
        rows.append({"tree": tree, "M": m, "variant": name, "us": f"{us:.2f}", "relative_error": f"{err:.3g}",
                     "correct": int(err <= BOUND), "config": config if name == "op" else ""})
        print(tree, m, name, f"{us:.1f}", f"{err:.2e}", config if name == "op" else "", flush=True)
with open(path, "w", newline="") as handle:
    writer = csv.DictWriter(handle, fieldnames=list(rows[0].keys()))
    writer.writeheader()
    writer.writerows(rows)
