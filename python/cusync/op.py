"""torch.ops.cusync.mlp (cusync.mlp: the same, with the inputs checked before dispatch): an MLP block,
Y = act(X W1^T) W2^T, as one persistent launch of cusync's fused chain (both GEMMs' tiles drawn from one queue,
GEMM 2's tiles waiting only for the GEMM-1 tiles they read) or, where the tuning picks one at M = 1-4, as a GEMV
chain (a launch per GEMM, the second launched with PDL, waiting tile by tile or, unsplit, for the whole first grid).

    y = torch.ops.cusync.mlp(x, w1, w2, "gelu")   # x [M, H], w1 [I, H], w2 [H, I], fp16 CUDA -> y [M, H]

The op runs on the current stream, allocates its output and intermediate through torch's allocator, and only
enqueues kernels, so it can be captured into a CUDA graph; its fake implementation lets torch.compile trace it.
Per (device, stream, shape, configuration) it keeps a plan (semaphores, split-K buffers, a fused chain's queue) created
at the first call; creating one is refused inside a stream capture, so call each shape once before capturing. At 1-16
tokens the GEMV chain it picks reads W1 and W2 packed in mma fragment order: the op packs each weight tensor at its
first call with it (and again after an in-place change), keeps the copy while the tensor lives, and refuses to pack
inside a capture. cusync.mlp called eagerly runs the op's body without the dispatcher where that cannot be observed
(_dispatcher_adds_nothing). See docs/PYTORCH_OP.md.
"""

import collections
import os
import threading
import weakref
from dataclasses import dataclass, field

import torch

from . import _library, tuning

ACTIVATIONS = ("gelu", "swiglu")
_PLAN_LIMIT_ENVIRONMENT = "CUSYNC_MLP_MAX_PLANS"


@dataclass(frozen=True)
class MlpShape:
    m: int
    hidden: int
    intermediate: int


def _describe(t) -> str:
    return f"{tuple(t.shape)} {t.dtype} on {t.device}"


def validate(x, w1, w2, activation) -> MlpShape:
    """Checks what can be checked from metadata alone (also on fake tensors, while torch.compile traces) and returns
    the shape. TypeError: not tensors, not float16. ValueError: unknown activation, not CUDA, different devices,
    not 2-D, mismatched shapes, not contiguous, sizes the kernels cannot take."""
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"cusync.mlp: activation must be one of {ACTIVATIONS}, got {activation!r}")
    for name, t in (("x", x), ("w1", w1), ("w2", w2)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"cusync.mlp: {name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype != torch.float16:
            raise TypeError(f"cusync.mlp: {name} must be torch.float16 (the chains' kernels are fp16 with fp32 "
                            f"accumulation), got {t.dtype}")
        if t.device.type != "cuda":
            raise ValueError(f"cusync.mlp: {name} must be a CUDA tensor, got one on {t.device}")
        if t.dim() != 2:
            raise ValueError(f"cusync.mlp: {name} must be 2-D, got {t.dim()}-D shape {tuple(t.shape)}"
                             + (" (flatten the leading dimensions: x.reshape(-1, x.shape[-1]))" if name == "x" else ""))
    if not (x.device == w1.device == w2.device):
        raise ValueError(f"cusync.mlp: x, w1 and w2 must be on one device, got {x.device}, {w1.device}, {w2.device}")
    m, hidden = x.shape
    gate_up = 2 if activation == "swiglu" else 1
    intermediate = w2.shape[1]
    expected_w1 = (gate_up * intermediate, hidden)
    if tuple(w1.shape) != expected_w1 or w2.shape[0] != hidden:
        layout = ("w1 [2*I, H] (gate rows and up rows paired: cusync.pair_gate_up), w2 [H, I]" if gate_up == 2
                  else "w1 [I, H], w2 [H, I]")
        raise ValueError(f"cusync.mlp: for x [M, H] = {tuple(x.shape)} and activation '{activation}' the weights "
                         f"must be {layout} (a Linear layer's weight layout); got w1 {tuple(w1.shape)}, "
                         f"w2 {tuple(w2.shape)}")
    if hidden == 0 or intermediate == 0:
        raise ValueError(f"cusync.mlp: hidden and intermediate sizes must be nonzero, got H={hidden}, I={intermediate}")
    if hidden % 8 or intermediate % 8:
        raise ValueError(f"cusync.mlp: H and I must be multiples of 8 (16-byte rows for the TMA loads), "
                         f"got H={hidden}, I={intermediate}")
    if gate_up == 2 and intermediate % PAIRED_ROWS:
        raise ValueError(f"cusync.mlp: SwiGLU needs I to be a multiple of {PAIRED_ROWS} (w1's gate and up rows are "
                         f"paired in groups of {PAIRED_ROWS}: cusync.pair_gate_up), got I={intermediate}")
    for name, t in (("x", x), ("w1", w1), ("w2", w2)):
        if not t.is_contiguous():
            raise ValueError(f"cusync.mlp: {name} must be contiguous (row-major), got strides {t.stride()}; "
                             f"pass {name}.contiguous()")
    if m * max(hidden, intermediate) >= 2 ** 31:
        raise ValueError(f"cusync.mlp: M * max(H, I) must be below 2^31 (32-bit strides), got M={m}, H={hidden}, "
                         f"I={intermediate}")
    return MlpShape(m, hidden, intermediate)


def _check_runnable(x, w1, w2) -> None:
    """What only a real tensor on a real device can tell."""
    for name, t in (("x", x), ("w1", w1), ("w2", w2)):
        if t.data_ptr() % 16:
            raise ValueError(f"cusync.mlp: {name}'s data must be 16-byte aligned (TMA), got address "
                             f"{t.data_ptr():#x} (a view at an odd offset? pass {name}.clone())")
    _registry.require_hopper(_device_index(x))


def _device_index(t) -> int:
    return t.device.index if t.device.index is not None else torch.cuda.current_device()


# --- configurations and plans ------------------------------------------------------------------------------------


class _Registry:
    """The library's configurations, the tuning table, the choices made and the plans made, per process."""

    def __init__(self):
        self.lock = threading.Lock()
        self.available = {}     # (device, activation) -> {config name: ConfigInfo}
        self.tables = {}        # path -> entries
        self.choices = {}       # (device, shape, activation, table path) -> Choice
        self.plans = collections.OrderedDict()  # key -> _PlanEntry, least recently used first
        self.hopper = {}        # device -> None when sm_90, else why not

    def require_hopper(self, device: int) -> None:
        if device not in self.hopper:
            capability = torch.cuda.get_device_capability(device)
            self.hopper[device] = None if capability == (9, 0) else (
                f"cusync.mlp: {torch.cuda.get_device_name(device)} is sm_{capability[0]}{capability[1]}; the "
                "chains' kernels are built for sm_90a (H100/H200) only")
        if self.hopper[device] is not None:
            raise RuntimeError(self.hopper[device])

    def available_on(self, device: int, activation: str) -> dict:
        key = (device, activation)
        if key not in self.available:
            infos = {name: _library.config_info(name, device, activation) for name in _library.configs(activation)}
            # The op's paired SwiGLU layout has groups of PAIRED_ROWS rows: only fused tiles of twice that many
            # columns read it (the examples also build wider tiles, on weights padded per tile:
            # swiglu_weight_pairing.h). The GEMV chain reads the same layout in place through its 32-column tiles
            # (runtime/include/cusync/paired_weight_rows.h).
            if activation == "swiglu":
                infos = {name: info for name, info in infos.items()
                         if info.tile_n == 2 * PAIRED_ROWS or tuning.is_gemv_chain(name)}
            self.available[key] = infos
        return self.available[key]

    def table(self):
        path = tuning.table_path()
        if path not in self.tables:
            if path == tuning.default_table_path() and not path.is_file():
                self.tables[path] = []
            else:
                self.tables[path] = tuning.load_table(path)
        return path, self.tables[path]

    def choice(self, device: int, shape: MlpShape, activation: str) -> tuning.Choice:
        key = (device, shape, activation, str(tuning.table_path()))
        if key not in self.choices:
            properties = torch.cuda.get_device_properties(device)
            path, entries = self.table()
            self.choices[key] = tuning.choose(entries, properties.name, properties.multi_processor_count, shape.m,
                                              shape.hidden, shape.intermediate, activation,
                                              self.available_on(device, activation), origin=str(path))
        return self.choices[key]


@dataclass
class _PlanEntry:
    key: tuple  # (device, stream, shape, activation, choice)
    plan: _library.Plan
    choice: tuning.Choice
    description: dict
    captured: bool = False  # used inside a stream capture: a graph may replay it at any time, so never freed


_registry = _Registry()


def _plan_limit() -> int:
    return max(1, int(os.environ.get(_PLAN_LIMIT_ENVIRONMENT, "64")))


def _plan_for(device: int, stream: int, shape: MlpShape, activation: str, capturing: bool) -> _PlanEntry:
    """The plan of this stream for this shape, created on first use. Inside a stream capture nothing can be created
    (a plan allocates and zeroes device memory); the usual warm-up runs on another stream than the capture
    (torch.cuda.graph captures on a stream of its own), so a capture borrows that stream's plan, and the graph must
    then be replayed in order with the other uses of that plan (docs/PYTORCH_OP.md). The caller marks the plan
    captured once nothing can refuse the capture any more (run_into: after the packed copies)."""
    with _registry.lock:
        choice = _registry.choices.get((device, shape, activation, str(tuning.table_path())))
        entry = None
        if choice is not None:
            entry = _registry.plans.get((device, stream, shape, activation, choice))
            if entry is None and capturing:
                entry = next((e for k, e in reversed(_registry.plans.items())
                              if k[0] == device and k[2:] == (shape, activation, choice)), None)
        if entry is None and capturing:
            raise RuntimeError(
                f"cusync.mlp: no plan yet for M={shape.m}, H={shape.hidden}, I={shape.intermediate}, and creating one "
                "(allocating and zeroing device memory) is not allowed while a CUDA graph is being captured; call the "
                "op once with this shape before capturing (a warm-up, as torch.cuda.graph's documentation advises)")
        if entry is None:
            choice = choice or _registry.choice(device, shape, activation)
            plan = _library.Plan(device, shape.m, shape.hidden, shape.intermediate, activation, choice, stream)
            units, blocks = plan.info()
            key = (device, stream, shape, activation, choice)
            entry = _PlanEntry(key, plan, choice, {"config": choice.label, "source": choice.source,
                                                   "work_units": units, "persistent_blocks": blocks})
            _evict(_plan_limit() - 1)
            _registry.plans[key] = entry
        else:
            _registry.plans.move_to_end(entry.key)
        return entry


def _evict(limit: int) -> None:
    """Frees least recently used plans beyond `limit`, never one a captured graph may still use."""
    evictable = [k for k, e in _registry.plans.items() if not e.captured]
    for key in evictable[:max(0, len(_registry.plans) - limit)]:
        _registry.plans.pop(key).plan.destroy()


def clear_plans(include_captured: bool = False) -> None:
    """Frees the cached plans (waiting for the device first). Plans used inside a stream capture are kept unless
    include_captured=True, which is safe only once every graph that captured the op has been destroyed."""
    with _registry.lock:
        for key in [k for k, e in _registry.plans.items() if include_captured or not e.captured]:
            _registry.plans.pop(key).plan.destroy()
        _registry.choices.clear()
        _registry.tables.clear()


# --- packed weights ----------------------------------------------------------------------------------------------


@dataclass
class _PackedCopy:
    owner: weakref.ref   # the weight tensor it was packed from
    data_ptr: int        # its address and version counter then: a change to either means a stale copy
    version: object      # None for an inference tensor (torch tracks no version for it)
    packed: torch.Tensor  # uint8, cusync_mlp_packed_weight_bytes long
    stream: int          # the stream it was allocated on: torch frees it in that stream's order
    # Other streams that read it, recorded with torch's allocator (record_stream): the copy is freed when its weight
    # tensor dies, perhaps while a run on one of them still reads it, and the allocator then waits for their work.
    read_on: set = field(default_factory=set)
    captured: bool = False  # read inside a stream capture: a graph may replay it, so never freed


# Reentrant: a weight tensor's finalizer (_forget_packed) may run in this thread while _packed holds the lock, when an
# allocation there triggers a garbage collection that frees another weight tensor.
_packed_lock = threading.RLock()
# (id(weight tensor), (activation, hidden, intermediate, which)) -> _PackedCopy, dropped when the tensor dies. Keyed
# by the role too: one tensor passed as both W1 and W2 (tied weights) keeps a copy for each instead of repacking on
# every call.
_packed_copies = {}
_captured_retired = []  # replaced copies that a captured graph may still read


def _forget_packed(key: tuple) -> None:
    with _packed_lock:
        copy = _packed_copies.pop(key, None)
        if copy is not None and copy.captured:
            _captured_retired.append(copy.packed)


def _version(w):
    """torch's version counter of `w`, which moves with every in-place change; None for an inference tensor
    (torch.inference_mode), which has none: an in-place change of one is not seen (documented)."""
    return None if w.is_inference() else w._version


def _packed(w, which: int, shape: MlpShape, activation: str, stream, capturing: bool) -> _PackedCopy:
    """The packed copy of W1 (which 1) or W2 (which 2) that a packing configuration reads in w's place. Made at the
    first call with this tensor and again whenever torch's version counter says it changed in place; refused inside
    a stream capture (it allocates and launches a kernel that a graph would otherwise replay every time). Packing
    reads W and writes the copy once: about twice the time of one call at these M. The caller marks the copy
    captured once both copies are resolved (a refused capture marks nothing)."""
    key = (id(w), (activation, shape.hidden, shape.intermediate, which))
    with _packed_lock:
        copy = _packed_copies.get(key)
        if copy is not None and copy.owner() is w and copy.data_ptr == w.data_ptr() and copy.version == _version(w):
            if not capturing and stream.cuda_stream != copy.stream and stream.cuda_stream not in copy.read_on:
                copy.packed.record_stream(stream)
                copy.read_on.add(stream.cuda_stream)
            return copy
        if capturing:
            raise RuntimeError(
                f"cusync.mlp: w{which} has no packed copy yet (or changed since it was packed), and packing it is not "
                "allowed while a CUDA graph is being captured; call the op once with these weights before capturing "
                "(the same warm-up that creates the plan)")
        if copy is not None:
            # A run of the old copy may still be in flight on any stream: let it finish before the copy is freed.
            torch.cuda.synchronize(w.device)
            if copy.captured:
                _captured_retired.append(copy.packed)
        packed = torch.empty(_library.packed_weight_bytes(activation, shape.hidden, shape.intermediate, which),
                             dtype=torch.uint8, device=w.device)
        _library.pack_weights(activation, shape.hidden, shape.intermediate, which, w.data_ptr(), packed.data_ptr(),
                              stream.cuda_stream)
        # Later calls may run on other streams: the copy is complete before any of them reads it.
        stream.synchronize()
        if copy is None or copy.owner() is not w:
            weakref.finalize(w, _forget_packed, key)
        copy = _PackedCopy(weakref.ref(w), w.data_ptr(), _version(w), packed, stream.cuda_stream)
        _packed_copies[key] = copy
        return copy


# --- the op ------------------------------------------------------------------------------------------------------


def run_into(x, w1, w2, intermediate, out, activation: str = "gelu") -> dict:
    """Enqueues the op on the current stream into caller-given `intermediate` [M, I] and `out` [M, H] (fp16,
    contiguous). What the op calls; exposed for tests that poison the outputs and for explain(). Returns what ran."""
    shape = validate(x, w1, w2, activation)
    expected = {"intermediate": (shape.m, shape.intermediate), "out": (shape.m, shape.hidden)}
    for name, t in (("intermediate", intermediate), ("out", out)):
        if (not isinstance(t, torch.Tensor) or t.dtype != torch.float16 or t.device != x.device
                or tuple(t.shape) != expected[name] or not t.is_contiguous()):
            raise ValueError(f"cusync.mlp: {name} must be a contiguous float16 tensor {expected[name]} on {x.device}, "
                             f"got {_describe(t) if isinstance(t, torch.Tensor) else type(t).__name__}")
    if shape.m == 0:
        return {}
    for name, t in (("intermediate", intermediate), ("out", out)):
        if t.data_ptr() % 16:
            raise ValueError(f"cusync.mlp: {name}'s data must be 16-byte aligned (TMA)")
    return _run_checked(shape, x, w1, w2, intermediate, out, activation)


def _run_checked(shape: MlpShape, x, w1, w2, intermediate, out, activation: str) -> dict:
    """run_into once its arguments are checked (validate for x, w1 and w2; the outputs as run_into checks them or
    as _allocate_and_run allocates them) and M > 0."""
    _check_runnable(x, w1, w2)
    device = _device_index(x)
    with torch.cuda.device(device):
        stream = torch.cuda.current_stream(device)
        capturing = torch.cuda.is_current_stream_capturing()
        entry = _plan_for(device, stream.cuda_stream, shape, activation, capturing)
        copies = ()
        if tuning.packs_weights(entry.choice.config):
            copies = (_packed(w1, 1, shape, activation, stream, capturing),
                      _packed(w2, 2, shape, activation, stream, capturing))
            w1, w2 = (copy.packed for copy in copies)
        if capturing:  # only now that nothing can refuse the capture: a graph may replay these, so never free them
            with _registry.lock:
                entry.captured = True
            with _packed_lock:
                for copy in copies:
                    copy.captured = True
        entry.plan.run(x.data_ptr(), w1.data_ptr(), w2.data_ptr(), intermediate.data_ptr(), out.data_ptr(),
                       stream.cuda_stream)
    return entry.description


def _allocate_and_run(shape: MlpShape, x, w1, w2, activation: str) -> torch.Tensor:
    """The op's body once validate has passed: its output and intermediate from torch's allocator (16-byte aligned),
    then the run."""
    out = torch.empty((shape.m, shape.hidden), dtype=x.dtype, device=x.device)
    intermediate = torch.empty((shape.m, shape.intermediate), dtype=x.dtype, device=x.device)
    if shape.m:
        _run_checked(shape, x, w1, w2, intermediate, out, activation)
    return out


@torch.library.custom_op("cusync::mlp", mutates_args=())
def _mlp(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, activation: str = "gelu") -> torch.Tensor:
    return _allocate_and_run(validate(x, w1, w2, activation), x, w1, w2, activation)


@_mlp.register_fake
def _mlp_fake(x, w1, w2, activation="gelu"):
    validate(x, w1, w2, activation)
    return x.new_empty((x.shape[0], w2.shape[0]))


def _tensor_is_plain(t) -> bool:
    """A tensor whose data pointer is what it holds: not a subclass, and neither a negative-bit view (torch._neg_view)
    nor an efficient zero tensor (data pointer 0), which the dispatcher materializes before the body runs."""
    return (type(t) is torch.Tensor or type(t) is torch.nn.Parameter) and not t.is_neg() and not t._is_zerotensor()


def _dispatcher_adds_nothing(x, w1, w2) -> bool:
    """Whether an eager call may run the op's body directly instead of through torch.ops.cusync.mlp: the dispatcher's
    custom-op machinery costs 75-120 us of host time per call (python/op_host_overhead.py, session 32, call 7: the
    public entry point took 170-300 us against 98-155 for the body), which a GPU time of 33-77 us cannot hide. It adds
    something only where a caller can observe dispatch, so those cases keep it: torch.compile and torch.jit tracing
    (they record the op); inputs that require grad with grad enabled (the dispatcher's autograd kernel gives an
    output that requires grad and refuses the backward, as no formula is registered); tensors the dispatcher
    rewrites first (_tensor_is_plain: subclasses such as FakeTensor, DTensor and FunctionalTensor, negative-bit
    views, zero tensors; nn.Parameter is plain); active torch function or dispatch modes (torch.device("cuda") and
    torch.set_default_device are such a mode) and functorch transforms (vmap, grad); and the profiler (which names the
    op). Not seen by the direct path: kernels registered on cusync::mlp after import (register_kernel,
    torch.library.impl, register_autocast) and a standalone ExecutionTraceObserver. A torch without the private
    probes used here always dispatches."""
    if torch.compiler.is_compiling() or torch.jit.is_tracing():
        return False
    if not (_tensor_is_plain(x) and _tensor_is_plain(w1) and _tensor_is_plain(w2)):
        return False
    if torch.is_grad_enabled() and (x.requires_grad or w1.requires_grad or w2.requires_grad):
        return False
    try:
        if (torch._C._len_torch_dispatch_stack() or torch._C._len_torch_function_stack()
                or torch._C._functorch.peek_interpreter_stack() is not None
                or torch.autograd.profiler._is_profiler_enabled or torch.autograd._profiler_enabled()):
            return False
    except AttributeError:
        return False
    return True


def mlp(x, w1, w2, activation: str = "gelu"):
    """torch.ops.cusync.mlp, with the inputs checked here first so that a bad input raises the documented exception
    type wherever the call comes from. An eager call where the dispatcher would add nothing observable runs the op's
    body directly (_dispatcher_adds_nothing says when), which saves most of the op's host time."""
    shape = validate(x, w1, w2, activation)
    if _dispatcher_adds_nothing(x, w1, w2):
        return _allocate_and_run(shape, x, w1, w2, activation)
    return torch.ops.cusync.mlp(x, w1, w2, activation)


def explain(x, w1, w2, activation: str = "gelu") -> dict:
    """Which configuration the op runs for these inputs and why (table entry or heuristic), without running it."""
    shape = validate(x, w1, w2, activation)
    _check_runnable(x, w1, w2)
    device = _device_index(x)
    with _registry.lock:
        choice = _registry.choice(device, shape, activation)
    return {"config": choice.label, "source": choice.source, "table": str(tuning.table_path())}



# --- the SwiGLU weight layout ---------------------------------------------------------------------------------------

# Rows per group of w1's paired layout: half the fused SwiGLU kernels' tile width (TileN = 128 in every fused
# configuration the op runs; runtime/include/cusync/cutlass/paired_glu_epilogue.hpp), fixed so that the layout does
# not depend on the configuration the op picks (the GEMV chain reads it too).
PAIRED_ROWS = 64


def pair_gate_up(w_gate_up):
    """The paired layout the 'swiglu' op reads, from [Wg; Wu] ([2I, H], gate rows then up rows, as a fused
    gate_up_proj stores them): groups of 64 gate rows each followed by the 64 up rows of the same outputs. Do it once
    when the weights are loaded (it copies them), not per call."""
    if w_gate_up.dim() != 2 or w_gate_up.shape[0] % (2 * PAIRED_ROWS):
        raise ValueError(f"cusync.pair_gate_up: expected [2*I, H] with I a multiple of {PAIRED_ROWS}, got "
                         f"{tuple(w_gate_up.shape)}")
    rows, hidden = w_gate_up.shape
    groups = rows // (2 * PAIRED_ROWS)
    # [2, groups, 64, H] (gate / up, group, row) -> [groups, 2, 64, H]
    return w_gate_up.reshape(2, groups, PAIRED_ROWS, hidden).transpose(0, 1).contiguous().reshape(rows, hidden)
