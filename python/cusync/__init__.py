"""cusync from Python.

    import torch, cusync
    y = cusync.mlp(x, w1, w2, "gelu")          # or torch.ops.cusync.mlp(x, w1, w2, "gelu")
    w1p = cusync.pair_gate_up(w_gate_up)       # SwiGLU: once, at load time
    y = cusync.mlp(x, w1p, w2, "swiglu")

cusync.mlp / torch.ops.cusync.mlp need torch (>= 2.4, for torch.library.custom_op) and, to run, an sm_90 GPU and
libcusync_mlp.so (docs/PYTORCH_OP.md). Without torch the package still imports: the tuning table (cusync.tuning)
and cusync-tune (cusync.tune) need neither torch nor a GPU.
"""
from . import tuning

try:
    import torch as _torch
except ImportError:  # the op needs torch; the tuning tools do not
    _torch = None

if _torch is not None:
    from .op import clear_plans, explain, mlp, pair_gate_up, run_into  # registers torch.ops.cusync.mlp
else:
    def _needs_torch(*_args, **_kwargs):
        raise ImportError("cusync.mlp needs torch (pip install torch); the tuning tools work without it")

    mlp = explain = run_into = clear_plans = pair_gate_up = _needs_torch

__all__ = ["mlp", "explain", "run_into", "clear_plans", "pair_gate_up", "tuning"]
