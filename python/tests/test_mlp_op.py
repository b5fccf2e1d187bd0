"""torch.ops.cusync.mlp on an sm_90 GPU: results against a float32 reference, poisoned outputs, repeated calls, CUDA
graph capture and replay, torch.compile, the tuning table, and bad inputs. Skipped as a whole without torch, without
a CUDA device or on a device other than sm_90; a missing libcusync_mlp.so is a failure, not a skip.

Run: PYTHONPATH=python CUSYNC_MLP_LIBRARY=build/python/libcusync_mlp.so python3 -m pytest python/tests/test_mlp_op.py
"""
import json

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip(f"{torch.cuda.get_device_name()} is not sm_90; the kernels are built for sm_90a",
                allow_module_level=True)

import torch.nn.functional as F  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import cusync  # noqa: E402
from cusync import _library, op, tuning  # noqa: E402

GPT3 = (12288, 6144)
GELU = _library.gelu_approximation()  # "tanh" (GPT-3's, the default build) or "none"
BOUND = 2e-2  # mlp_fused_example's bound (fp16 operands and intermediate, K up to 12288)


@pytest.fixture(autouse=True, scope="module")
def float32_reference_is_float32():
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = previous


def weights(hidden, intermediate, gate_up=1, seed=0):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    w1 = torch.randn(gate_up * intermediate, hidden, device="cuda", generator=generator) / hidden ** 0.5
    w2 = torch.randn(hidden, intermediate, device="cuda", generator=generator) / intermediate ** 0.5
    return w1.half(), w2.half()


@pytest.fixture(scope="module")
def gpt3():
    return weights(*GPT3)


def reference(x, w1, w2):
    """The library's GELU form (tanh unless built with CUSYNC_GELU_ERF) in float32, with no fp16 rounding anywhere."""
    return F.linear(F.gelu(F.linear(x.float(), w1.float()), approximate=GELU), w2.float())


def relative_error(out, ref):
    """Relative L2 error; infinite when `out` holds a NaN or infinity, so that an unwritten (poisoned) element or an
    overflow always fails the bound."""
    if not torch.isfinite(out).all():
        return float("inf")
    return ((out.float() - ref).norm() / ref.norm()).item()


def warm_up_on_a_side_stream(call):
    """The warm-up of torch.cuda.graph's documentation: call() on a side stream ordered after the current one, the
    current stream then ordered after it (the capture runs on the graph's own stream)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call()
    torch.cuda.current_stream().wait_stream(side)


def random_x(m, hidden, seed=None):
    generator = torch.Generator(device="cuda").manual_seed(seed if seed is not None else m)
    return torch.randn(m, hidden, device="cuda", generator=generator).half()


# --- results -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m", [1, 64, 256, 1000, 4096])
def test_gelu_matches_float32_reference_at_gpt3_shape(gpt3, m):
    w1, w2 = gpt3
    x = random_x(m, GPT3[0])
    y = cusync.mlp(x, w1, w2, "gelu")
    assert y.shape == (m, GPT3[0]) and y.dtype == torch.float16 and y.device == x.device
    assert relative_error(y, reference(x, w1, w2)) < BOUND, cusync.explain(x, w1, w2)


@pytest.mark.parametrize("m", [1, 100, 777])
def test_gelu_matches_reference_when_no_dimension_is_a_multiple_of_the_tiles(m):
    # H = 1032 and I = 2792 are multiples of 8 only: partial k-blocks, partial column tiles and, for GEMM 2, k-ranges
    # ending inside a GEMM-1 tile.
    w1, w2 = weights(1032, 2792, seed=1)
    x = random_x(m, 1032)
    assert relative_error(torch.ops.cusync.mlp(x, w1, w2, "gelu"), reference(x, w1, w2)) < BOUND


def swiglu_reference(x, w1, w2):
    """w1 is [gate; up] ([2I, H], gate rows first, unpaired): SiLU(x Wg^T) * (x Wu^T), then W2, in float32."""
    gate, up = F.linear(x.float(), w1.float()).chunk(2, dim=-1)
    return F.linear(F.silu(gate) * up, w2.float())


@pytest.mark.parametrize("m", [1, 64, 256, 1000, 4096])
def test_swiglu_matches_float32_reference_at_llama_shape(m):
    w1, w2 = weights(8192, 2752, gate_up=2, seed=2)  # the LLaMA slice of examples/mlp (H = 8192, I = 2752)
    x = random_x(m, 8192)
    out = cusync.mlp(x, cusync.pair_gate_up(w1), w2, "swiglu")
    assert relative_error(out, swiglu_reference(x, w1, w2)) < BOUND


def test_swiglu_with_unpaired_weights_is_wrong():
    # The layout matters (the check above would pass by accident if the kernel ignored it): [gate; up] as stored
    # gives another, wrong product.
    w1, w2 = weights(1024, 512, gate_up=2, seed=3)
    x = random_x(64, 1024)
    assert relative_error(cusync.mlp(x, w1, w2, "swiglu"), swiglu_reference(x, w1, w2)) > 10 * BOUND


def unpair_gate_up(paired):
    """[Wg; Wu] from the op's paired layout (pair_gate_up's inverse)."""
    rows, hidden = paired.shape
    groups = rows // (2 * op.PAIRED_ROWS)
    return paired.reshape(groups, 2, op.PAIRED_ROWS, hidden).transpose(0, 1).contiguous().reshape(rows, hidden)


def test_pair_gate_up_puts_each_group_of_gate_rows_before_its_up_rows():
    i, h = 128, 16
    w = torch.arange(2 * i * h, dtype=torch.float32).reshape(2 * i, h)
    paired = cusync.pair_gate_up(w)
    assert torch.equal(unpair_gate_up(paired), w)
    assert torch.equal(paired[0:64], w[0:64]) and torch.equal(paired[64:128], w[i:i + 64])
    assert torch.equal(paired[128:192], w[64:128]) and torch.equal(paired[192:256], w[i + 64:i + 128])


def test_every_output_and_intermediate_element_is_written(gpt3):
    w1, w2 = gpt3
    x = random_x(300, GPT3[0])
    out = torch.full((300, GPT3[0]), float("nan"), device="cuda", dtype=torch.float16)
    intermediate = torch.full((300, GPT3[1]), float("nan"), device="cuda", dtype=torch.float16)
    ran = cusync.run_into(x, w1, w2, intermediate, out, "gelu")
    assert ran["work_units"] > 0 and ran["persistent_blocks"] > 0
    assert relative_error(intermediate, F.gelu(F.linear(x.float(), w1.float()), approximate=GELU)) < BOUND
    assert relative_error(out, reference(x, w1, w2)) < BOUND


def test_the_check_itself_fails_on_nan_and_on_wrong_values():
    ref = torch.randn(64, 64, device="cuda")
    poisoned = ref.half().clone()
    poisoned[3, 5] = float("nan")
    assert relative_error(poisoned, ref) > BOUND
    assert relative_error((ref * 1.05).half(), ref) > BOUND
    assert relative_error(ref.half(), ref) < BOUND


def test_many_calls_in_a_row_stay_correct(gpt3):
    # Every call reuses the plan's semaphores, queue and split-K counters (zeroed by the run itself).
    w1, w2 = gpt3
    inputs = [random_x(8, GPT3[0], seed=100 + i) for i in range(24)]
    outputs = [cusync.mlp(x, w1, w2) for x in inputs]
    for x, y in zip(inputs, outputs):
        assert relative_error(y, reference(x, w1, w2)) < BOUND


def test_zero_rows_give_an_empty_result(gpt3):
    w1, w2 = gpt3
    y = cusync.mlp(torch.empty(0, GPT3[0], device="cuda", dtype=torch.float16), w1, w2)
    assert y.shape == (0, GPT3[0])


# --- CUDA graphs and torch.compile -------------------------------------------------------------------------------

def test_graph_capture_replays_with_fresh_inputs(gpt3):
    w1, w2 = gpt3
    m = 64
    static_x = random_x(m, GPT3[0])
    warm_up_on_a_side_stream(lambda: cusync.mlp(cusync.mlp(static_x, w1, w2), w1, w2))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = cusync.mlp(static_x, w1, w2)
        static_z = cusync.mlp(static_y, w1, w2)  # the same plan twice in one graph
    for replay in range(5):
        x = random_x(m, GPT3[0], seed=200 + replay)
        static_x.copy_(x)
        static_y.fill_(float("nan"))
        static_z.fill_(float("nan"))
        graph.replay()
        y_ref = reference(x, w1, w2)
        assert relative_error(static_y, y_ref) < BOUND, replay
        assert relative_error(static_z, reference(static_y, w1, w2)) < BOUND, replay
    # Eager calls of the same shape between replays, ordered on one stream, share nothing that breaks either.
    x = random_x(m, GPT3[0], seed=300)
    eager = cusync.mlp(x, w1, w2)
    static_x.copy_(x)
    graph.replay()
    assert relative_error(eager, reference(x, w1, w2)) < BOUND
    assert relative_error(static_y, reference(x, w1, w2)) < BOUND


def test_capturing_a_shape_never_run_before_raises_a_clear_error(gpt3):
    w1, w2 = gpt3
    x = random_x(3, GPT3[0])
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with pytest.raises(RuntimeError, match="warm-up"):
            cusync.mlp(x, w1, w2)
    y = cusync.mlp(x, w1, w2)  # outside the capture the same call works
    assert relative_error(y, reference(x, w1, w2)) < BOUND


def test_torch_compile_fullgraph_traces_the_op_through_its_fake_implementation(gpt3):
    w1, w2 = gpt3

    def block(x, w1, w2):
        return x + torch.ops.cusync.mlp(F.layer_norm(x, x.shape[-1:]), w1, w2, "gelu")

    compiled = torch.compile(block, fullgraph=True, dynamic=False)
    for m in (16, 200):
        x = random_x(m, GPT3[0])
        expected = x.float() + reference(F.layer_norm(x, x.shape[-1:]), w1, w2)
        assert relative_error(compiled(x, w1, w2), expected) < BOUND


def test_torch_compile_with_dynamic_m(gpt3):
    w1, w2 = gpt3
    compiled = torch.compile(lambda x: torch.ops.cusync.mlp(x, w1, w2, "gelu"), fullgraph=True, dynamic=True)
    for m in (5, 37, 130):
        x = random_x(m, GPT3[0])
        assert relative_error(compiled(x), reference(x, w1, w2)) < BOUND


class _OpNames(TorchDispatchMode):
    """Records the name of every op dispatched while it is active."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def test_eager_calls_skip_the_dispatcher_only_where_that_cannot_be_observed(gpt3):
    w1, w2 = gpt3
    x = random_x(12, GPT3[0])
    through_dispatcher = torch.ops.cusync.mlp(x, w1, w2, "gelu")
    assert op._dispatcher_adds_nothing(x, w1, w2)
    # The direct path runs the same plan: the same bits.
    assert torch.equal(cusync.mlp(x, w1, w2), through_dispatcher)
    assert relative_error(through_dispatcher, reference(x, w1, w2)) < BOUND
    # Weights held as parameters (as a module holds them) take the direct path under no_grad.
    p1, p2 = torch.nn.Parameter(w1), torch.nn.Parameter(w2)
    assert not op._dispatcher_adds_nothing(x, p1, p2)  # grad enabled and they require it
    with torch.no_grad():
        assert op._dispatcher_adds_nothing(x, p1, p2)
        assert torch.equal(cusync.mlp(x, p1, p2), through_dispatcher)
    with torch.inference_mode():
        assert op._dispatcher_adds_nothing(x, w1, w2)
    # A dispatch mode sees the op by name through the public entry point, as through torch.ops.
    with _OpNames() as seen:
        assert not op._dispatcher_adds_nothing(x, w1, w2)
        assert torch.equal(cusync.mlp(x, w1, w2), through_dispatcher)
    assert "cusync.mlp.default" in seen.names
    # With inputs that require grad both entry points go through the dispatcher's autograd kernel: an output that
    # requires grad (the same values) and refuses the backward, the op having no formula.
    x_grad = x.clone().requires_grad_()
    for call in (lambda: cusync.mlp(x_grad, w1, w2), lambda: torch.ops.cusync.mlp(x_grad, w1, w2, "gelu")):
        y = call()
        assert y.requires_grad and torch.equal(y.detach(), through_dispatcher)
        with pytest.raises(RuntimeError, match="autograd"):
            y.float().sum().backward()
    # Where the dispatcher rewrites the inputs or someone watches it, the call dispatches.
    with torch.device("cuda"):
        assert not op._dispatcher_adds_nothing(x, w1, w2)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        assert not op._dispatcher_adds_nothing(x, w1, w2)
    in_vmap = []

    def probe(row):
        in_vmap.append(op._dispatcher_adds_nothing(row, w1, w2))
        return row

    torch.vmap(probe)(x.reshape(3, 4, -1))
    assert in_vmap == [False]
    negated = torch._neg_view(x)  # a negative-bit view: its data is x's, its value -x
    assert not op._dispatcher_adds_nothing(negated, w1, w2)
    assert torch.equal(cusync.mlp(negated, w1, w2), cusync.mlp(-x, w1, w2))


def test_fake_implementation_and_schema_agree_with_the_real_one(gpt3):
    w1, w2 = gpt3
    torch.library.opcheck(torch.ops.cusync.mlp.default, (random_x(32, GPT3[0]), w1, w2, "gelu"),
                          test_utils=("test_schema", "test_faketensor"))


# --- configuration -----------------------------------------------------------------------------------------------

def a_fused_configuration(activation="gelu"):
    """A fused chain compiled into the library: it runs at any M, where the GEMV chain runs only at M = 1."""
    return sorted(name for name in op._registry.available_on(0, activation) if not tuning.is_gemv_chain(name))[0]


def write_table(path, m, config, split, order=None, shape=GPT3, activation="gelu"):
    """A tuning table whose only entry, for this GPU, names `config` at M = m (no "order": the table's default)."""
    properties = torch.cuda.get_device_properties(0)
    entry = {"device": properties.name, "sms": properties.multi_processor_count, "hidden": shape[0],
             "intermediate": shape[1], "activation": activation, "m": m, "config": config, "split": split}
    if order is not None:
        entry["order"] = order
    path.write_text(json.dumps({"schema": tuning.SCHEMA, "entries": [entry]}))


def test_a_tuning_table_from_the_environment_decides_the_configuration(gpt3, tmp_path, monkeypatch):
    w1, w2 = gpt3
    config = op._registry.available_on(0, "gelu")
    name = "fused_256x128x64_s4_coop" if "fused_256x128x64_s4_coop" in config else a_fused_configuration()
    write_table(tmp_path / "table.json", 48, name, [1, 1], "row")
    monkeypatch.setenv(tuning.TABLE_ENVIRONMENT, str(tmp_path / "table.json"))
    x = random_x(40, GPT3[0])
    explained = cusync.explain(x, w1, w2)
    assert explained["config"] == name and str(tmp_path) in explained["source"]
    out = torch.empty(40, GPT3[0], device="cuda", dtype=torch.float16)
    ran = cusync.run_into(x, w1, w2, torch.empty(40, GPT3[1], device="cuda", dtype=torch.float16), out)
    assert ran["config"] == name
    assert relative_error(out, reference(x, w1, w2)) < BOUND


@pytest.mark.parametrize("m", [1, 200])
def test_a_table_entry_with_the_whole_unit_wait_runs_it_and_stays_correct(gpt3, tmp_path, monkeypatch, m):
    w1, w2 = gpt3
    name = a_fused_configuration()
    write_table(tmp_path / "table.json", m, name, [1, 1], "g8")
    table = json.loads((tmp_path / "table.json").read_text())
    table["entries"][0]["unit_wait"] = "whole"
    (tmp_path / "table.json").write_text(json.dumps(table))
    monkeypatch.setenv(tuning.TABLE_ENVIRONMENT, str(tmp_path / "table.json"))
    x = random_x(m, GPT3[0])
    out = torch.empty(m, GPT3[0], device="cuda", dtype=torch.float16)
    for _ in range(3):  # the chain's counters advance between runs; every run must stay correct
        out.fill_(float("nan"))
        ran = cusync.run_into(x, w1, w2, torch.empty(m, GPT3[1], device="cuda", dtype=torch.float16), out)
        assert ran["config"] == name + "_g8_ww"
        assert relative_error(out, reference(x, w1, w2)) < BOUND


def test_the_c_interface_refuses_an_unknown_unit_wait_and_a_null_plan():
    from cusync import _library
    lib = _library.library()
    name = a_fused_configuration()
    plan = _library.Plan(0, 64, GPT3[0], GPT3[1], "gelu", tuning.Choice(name, 1, 1, 8, 8, "test"),
                         torch.cuda.current_stream().cuda_stream)
    try:
        with pytest.raises(ValueError, match="whole_unit must be 0"):
            _library.check(lib.cusync_mlp_plan_set_unit_wait(plan.handle, 2))
        with pytest.raises(ValueError, match="null plan"):
            _library.check(lib.cusync_mlp_plan_set_unit_wait(None, 1))
        _library.check(lib.cusync_mlp_plan_set_unit_wait(plan.handle, 1))  # the valid values stay accepted
    finally:
        plan.destroy()


def test_swiglu_offers_only_tiles_that_read_the_paired_layout_and_refuses_a_wider_one_by_name():
    # The fused tiles only: the GEMV chain's 32-column tiles read the paired layout too (test_the_gemv_chain_...).
    from cusync import _library
    offered = {name: info for name, info in op._registry.available_on(0, "swiglu").items()
               if not tuning.is_gemv_chain(name)}
    assert offered and all(info.tile_n == 2 * op.PAIRED_ROWS for info in offered.values())
    wider = [name for name in _library.configs("swiglu") if not tuning.is_gemv_chain(name)
             and _library.config_info(name, 0, "swiglu").tile_n != 2 * op.PAIRED_ROWS]
    if not wider:
        pytest.skip("this build has no SwiGLU tile wider than the op's paired layout")
    with pytest.raises(ValueError, match="paired weight layout"):
        _library.Plan(0, 64, 8192, 2752, "swiglu", tuning.Choice(wider[0], 1, 1, 8, 8, "test"),
                      torch.cuda.current_stream().cuda_stream)


def gemv_chain_case(tmp_path, monkeypatch, activation, config, table_m, split, seed):
    """(shape, w1, w2, the op's w1, reference) for `activation`'s model slice, with a tuning table in the environment
    whose only entry names `config` at M = table_m; skips where the library has no `config`."""
    if config not in op._registry.available_on(0, activation):
        pytest.skip(f"this build has no {config}")
    shape, gate_up, ref = ((GPT3, 1, reference) if activation == "gelu"
                           else ((8192, 2752), 2, swiglu_reference))
    w1, w2 = weights(*shape, gate_up=gate_up, seed=seed)
    op_w1 = w1 if activation == "gelu" else cusync.pair_gate_up(w1)
    write_table(tmp_path / "table.json", table_m, config, split, shape=shape, activation=activation)
    monkeypatch.setenv(tuning.TABLE_ENVIRONMENT, str(tmp_path / "table.json"))
    return shape, w1, w2, op_w1, ref


# gemv_32_p4 unsplit: GEMM 2 waits for the whole first grid (PDL grid sync); split along K, tile by tile
# (gemv_mlp_plan.h). gemv_rows_p4: unsplit, always the whole first grid.
@pytest.mark.parametrize("config,split", [("gemv_32_p4", [1, 1]), ("gemv_32_p4", [2, 2]), ("gemv_rows_p4", [1, 1])])
@pytest.mark.parametrize("activation", ["gelu", "swiglu"])
def test_the_gemv_chain_runs_one_token_correctly_and_is_refused_at_two(tmp_path, monkeypatch, activation, config,
                                                                       split):
    shape, w1, w2, op_w1, ref = gemv_chain_case(tmp_path, monkeypatch, activation, config, 1, split, seed=4)
    x = random_x(1, shape[0])
    assert cusync.explain(x, op_w1, w2, activation)["config"] == (
        config if split == [1, 1] else config + "_sk2x2")
    for _ in range(3):  # the tile semaphores advance between runs; every run must stay correct
        assert relative_error(cusync.mlp(x, op_w1, w2, activation), ref(x, w1, w2)) < BOUND
    # At M = 2 the table's only entry cannot run: the op falls back to the heuristic (which answers 2-4 tokens with
    # the tensor-core GEMV chain where it is compiled in), and the library refuses this chain by name.
    x2 = random_x(2, shape[0])
    assert cusync.explain(x2, op_w1, w2, activation)["config"] != config
    with pytest.raises(ValueError):
        _library.Plan(0, 2, *shape, activation, tuning.Choice(config, 1, 1, 1, 1, "test"),
                      torch.cuda.current_stream().cuda_stream)


# gemv_rows_mma_p2: 1-8 tokens on tensor cores, an instance per token bound (1, 2, 4, 8), so each M below runs a
# different instance or a bound's partly empty token rows (3, 5). gemv_packed_mma16_p3 / _p4: 1-16 tokens over copies
# of W1 and W2 packed by the op (op._packed), one token tile up to 8 and two up to 16 (partly empty at 9 and 13).
PACKED_CONFIGS = ["gemv_packed_mma16_p3", "gemv_packed_mma16_p4"]


@pytest.mark.parametrize("config,most", [("gemv_rows_mma_p2", 8)] + [(config, 16) for config in PACKED_CONFIGS])
@pytest.mark.parametrize("activation", ["gelu", "swiglu"])
def test_the_tensor_core_gemv_chains_run_up_to_their_token_bound_correctly_and_are_refused_past_it(
        tmp_path, monkeypatch, activation, config, most):
    shape, w1, w2, op_w1, ref = gemv_chain_case(tmp_path, monkeypatch, activation, config, 4, [1, 1], seed=5)
    assert _library.config_packs_weights(config, activation) == (config in PACKED_CONFIGS)
    assert _library.config_info(config, 0, activation).tile_m == most
    for m in [m for m in (1, 2, 3, 4, 5, 8, 9, 13, 16) if m <= most]:
        x = random_x(m, shape[0])
        assert cusync.explain(x, op_w1, w2, activation)["config"] == config
        for _ in range(2):
            assert relative_error(cusync.mlp(x, op_w1, w2, activation), ref(x, w1, w2)) < BOUND, m
    # Past the bound the table's only entry cannot run: the op falls back to a chain that runs there (the packed GEMV
    # chain's heuristic answer at 9-16 tokens, a fused chain past 16), and the library refuses the GEMV chain by name.
    past = random_x(most + 1, shape[0])
    fallback = cusync.explain(past, op_w1, w2, activation)["config"]
    assert fallback != config and tuning.runs_at(fallback, most + 1)
    if most + 1 > 16:
        assert not tuning.is_gemv_chain(fallback)
    with pytest.raises(ValueError, match=f"outside 1..{most}"):
        _library.Plan(0, most + 1, *shape, activation, tuning.Choice(config, 1, 1, 1, 1, "test"),
                      torch.cuda.current_stream().cuda_stream)
    with pytest.raises(ValueError, match="does not split K"):
        _library.Plan(0, 2, *shape, activation, tuning.Choice(config, 2, 1, 1, 1, "test"),
                      torch.cuda.current_stream().cuda_stream)


@pytest.mark.parametrize("activation", ["gelu", "swiglu"])
def test_the_packed_copy_follows_in_place_changes_of_the_weights_and_dies_with_them(tmp_path, monkeypatch,
                                                                                   activation):
    config = PACKED_CONFIGS[0]
    shape, w1, w2, op_w1, ref = gemv_chain_case(tmp_path, monkeypatch, activation, config, 4, [1, 1], seed=7)
    x = random_x(4, shape[0])
    assert relative_error(cusync.mlp(x, op_w1, w2, activation), ref(x, w1, w2)) < BOUND
    # In place: same tensors, same addresses, new values (torch's version counter moves). A stale copy would give the
    # old result, which differs from the new reference by far more than the bound.
    w2.mul_(-0.5)
    assert relative_error(cusync.mlp(x, op_w1, w2, activation), ref(x, w1, w2)) < BOUND
    op_w1.mul_(-1.5)
    w1_now = op_w1 if activation == "gelu" else unpair_gate_up(op_w1)
    assert relative_error(cusync.mlp(x, op_w1, w2, activation), ref(x, w1_now, w2)) < BOUND
    # The copies live as long as the weights.
    held = len(op._packed_copies)
    del op_w1, w2, w1, w1_now
    import gc
    gc.collect()
    assert len(op._packed_copies) <= held - 2


def packed_gelu_case(tmp_path, monkeypatch, hidden, intermediate, seed):
    """GELU weights of [intermediate, hidden] and [hidden, intermediate] with a tuning table that names the packed
    chain at every M of this shape; skips where the library has no packed chain."""
    config = PACKED_CONFIGS[0]
    if config not in op._registry.available_on(0, "gelu"):
        pytest.skip(f"this build has no {config}")
    write_table(tmp_path / "table.json", 4, config, [1, 1], shape=(hidden, intermediate))
    monkeypatch.setenv(tuning.TABLE_ENVIRONMENT, str(tmp_path / "table.json"))
    return weights(hidden, intermediate, seed=seed)


def test_one_tensor_as_both_weights_keeps_a_copy_per_role_and_captures_after_a_warm_up(tmp_path, monkeypatch):
    # Tied weights (H = I): before session 31 the op kept one copy per tensor and repacked it for each role on every
    # call, so a capture was always refused.
    w, _ = packed_gelu_case(tmp_path, monkeypatch, 1024, 1024, seed=11)
    x = random_x(4, 1024, seed=12)
    def twice():
        for _ in range(2):
            assert relative_error(cusync.mlp(x, w, w), reference(x, w, w)) < BOUND
    warm_up_on_a_side_stream(twice)
    assert len([key for key in op._packed_copies if key[0] == id(w)]) == 2
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = cusync.mlp(x, w, w)
    static_y.fill_(float("nan"))
    graph.replay()
    assert relative_error(static_y, reference(x, w, w)) < BOUND


def test_a_copy_read_on_a_side_stream_outlives_the_weights_until_that_stream_is_done(tmp_path, monkeypatch):
    # The copy is allocated on the stream of the first call and read on another; when the weights die, torch's
    # allocator must not hand the copy's memory to the first stream before the side stream's run has read it.
    w1, w2 = packed_gelu_case(tmp_path, monkeypatch, 1024, 2048, seed=13)
    x = random_x(2, 1024, seed=14)
    expected = reference(x, w1, w2)
    cusync.mlp(x, w1, w2)  # packs on the current stream
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # the side stream's run starts well after the weights are gone
        y = cusync.mlp(x, w1, w2)
    copies = [key for key in op._packed_copies if key[0] in (id(w1), id(w2))]
    assert len(copies) == 2 and all(side.cuda_stream in op._packed_copies[key].read_on for key in copies)
    sizes = [op._packed_copies[key].packed.numel() for key in copies]
    del w1, w2
    import gc
    gc.collect()
    assert not any(key in op._packed_copies for key in copies)
    # Allocations of the copies' sizes on the first stream, which would get the copies' blocks were they free now,
    # overwritten at once with 0xFF bytes (fp16 NaNs).
    scratch = [torch.full((size,), 255, dtype=torch.uint8, device="cuda") for size in sizes]
    torch.cuda.synchronize()
    assert relative_error(y, expected) < BOUND
    del scratch


def test_a_refused_capture_marks_neither_the_plan_nor_a_copy_captured(tmp_path, monkeypatch):
    w1, w2 = packed_gelu_case(tmp_path, monkeypatch, 1024, 3072, seed=15)
    x = random_x(3, 1024, seed=16)
    warm_up_on_a_side_stream(lambda: cusync.mlp(x, w1, w2))  # the plan and both copies
    other_w2 = w2.clone()  # never packed: the capture is refused at W2, after W1's copy was found
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with pytest.raises(RuntimeError, match="packed copy"):
            cusync.mlp(x, w1, other_w2)
    shape_plans = [e for e in op._registry.plans.values() if e.key[2] == op.MlpShape(3, 1024, 3072)]
    assert shape_plans and not any(e.captured for e in shape_plans)
    assert not any(copy.captured for key, copy in op._packed_copies.items() if key[0] == id(w1))


def test_the_packed_chain_runs_on_inference_tensors(tmp_path, monkeypatch):
    # Weights made under torch.inference_mode have no version counter (w._version raises); the op packs them once.
    config = PACKED_CONFIGS[0]
    shape, w1, w2, op_w1, ref = gemv_chain_case(tmp_path, monkeypatch, "gelu", config, 4, [1, 1], seed=9)
    with torch.inference_mode():
        iw1, iw2 = w1.clone(), w2.clone()
        x = random_x(4, shape[0])
        for _ in range(2):
            assert relative_error(cusync.mlp(x, iw1, iw2), ref(x, w1, w2)) < BOUND


@pytest.mark.parametrize("activation", ["gelu", "swiglu"])
def test_capturing_with_weights_never_packed_raises_and_a_warmed_up_capture_replays(tmp_path, monkeypatch,
                                                                                  activation):
    config = PACKED_CONFIGS[1]
    shape, w1, w2, op_w1, ref = gemv_chain_case(tmp_path, monkeypatch, activation, config, 4, [1, 1], seed=8)
    static_x = random_x(4, shape[0])
    warm_up_on_a_side_stream(lambda: cusync.mlp(static_x, op_w1, w2, activation))  # the plan and both packed copies
    other_w2 = w2.clone()  # never seen by the op: no packed copy
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with pytest.raises(RuntimeError, match="packed copy"):
            cusync.mlp(static_x, op_w1, other_w2, activation)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = cusync.mlp(static_x, op_w1, w2, activation)
    for replay in range(3):
        x = random_x(4, shape[0], seed=400 + replay)
        static_x.copy_(x)
        static_y.fill_(float("nan"))
        graph.replay()
        assert relative_error(static_y, ref(x, w1, w2)) < BOUND, replay


def test_the_c_interface_refuses_bad_packing_requests_by_name_before_any_launch():
    stream = torch.cuda.current_stream().cuda_stream
    hidden, intermediate = 1024, 512
    w = torch.zeros(intermediate, hidden, device="cuda", dtype=torch.float16)
    packed = torch.full((_library.packed_weight_bytes("gelu", hidden, intermediate, 1) // 2,), 7.0,
                        device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="`which` must be 1 .W1. or 2 .W2., got 3"):
        _library.packed_weight_bytes("gelu", hidden, intermediate, 3)
    with pytest.raises(ValueError, match="`which` must be 1 .W1. or 2 .W2., got 0"):
        _library.pack_weights("gelu", hidden, intermediate, 0, w.data_ptr(), packed.data_ptr(), stream)
    with pytest.raises(ValueError, match="non-null, 16-byte aligned"):
        _library.pack_weights("gelu", hidden, intermediate, 1, 0, packed.data_ptr(), stream)
    with pytest.raises(ValueError, match="non-null, 16-byte aligned"):
        _library.pack_weights("gelu", hidden, intermediate, 1, w.data_ptr(), packed.data_ptr() + 2, stream)
    with pytest.raises(ValueError, match="positive multiples of 8"):
        _library.pack_weights("gelu", hidden + 4, intermediate, 1, w.data_ptr(), packed.data_ptr(), stream)
    # 1032 rows are no whole number of 16-row blocks: packGemvWeights' own refusal, passed on as a ValueError.
    with pytest.raises(ValueError, match="blocks of 16 rows"):
        _library.pack_weights("gelu", 1024, 1032, 1, w.data_ptr(), packed.data_ptr(), stream)
    torch.cuda.synchronize()
    assert bool((packed == 7.0).all()), "a refused request wrote into the packed copy"
    _library.pack_weights("gelu", hidden, intermediate, 1, w.data_ptr(), packed.data_ptr(), stream)
    torch.cuda.synchronize()
    assert bool((packed == 0.0).all()), "the valid request did not pack the (zero) weights"


def test_the_whole_rows_gemv_chain_refuses_a_split_by_name():
    if "gemv_rows_p4" not in op._registry.available_on(0, "gelu"):
        pytest.skip("this build has no gemv_rows_p4")
    with pytest.raises(ValueError, match="does not split K"):
        _library.Plan(0, 1, *GPT3, "gelu", tuning.Choice("gemv_rows_p4", 2, 1, 1, 1, "test"),
                      torch.cuda.current_stream().cuda_stream)


def test_a_configuration_the_kernel_refuses_is_a_value_error_not_a_crash(gpt3, tmp_path, monkeypatch):
    w1, w2 = gpt3
    name = a_fused_configuration()
    write_table(tmp_path / "table.json", 24, name, [100000, 1], "g8")  # more parts than k-blocks
    monkeypatch.setenv(tuning.TABLE_ENVIRONMENT, str(tmp_path / "table.json"))
    with pytest.raises(ValueError, match="split-K|k-blocks"):
        cusync.mlp(random_x(24, GPT3[0]), w1, w2)


def test_plans_beyond_the_limit_are_freed_and_recreated(gpt3, monkeypatch):
    w1, w2 = gpt3
    cusync.clear_plans()
    monkeypatch.setenv("CUSYNC_MLP_MAX_PLANS", "2")
    for m in (9, 10, 11, 9):
        x = random_x(m, GPT3[0])
        assert relative_error(cusync.mlp(x, w1, w2), reference(x, w1, w2)) < BOUND
    assert sum(not e.captured for e in op._registry.plans.values()) <= 2


# --- bad inputs --------------------------------------------------------------------------------------------------

def bad_inputs():
    """(label, builder -> (x, w1, w2, activation), exception type, message fragment)."""
    h, i, m = 64, 128, 4

    def half(*shape):
        return torch.randn(*shape, device="cuda").half()

    def good():
        return half(m, h), half(i, h), half(h, i)

    def misaligned():
        return torch.randn(m * h + 4, device="cuda").half()[4:].view(m, h)

    return [
        ("x float32", lambda: (good()[0].float(), *good()[1:], "gelu"), TypeError, "torch.float16"),
        ("w1 bfloat16", lambda: (good()[0], good()[1].bfloat16(), good()[2], "gelu"), TypeError, "torch.float16"),
        ("x not a tensor", lambda: ([[1.0]], *good()[1:], "gelu"), TypeError, "torch.Tensor"),
        ("x on the CPU", lambda: (good()[0].cpu(), *good()[1:], "gelu"), ValueError, "CUDA tensor"),
        ("x 1-D", lambda: (half(h), *good()[1:], "gelu"), ValueError, "2-D"),
        ("x 3-D", lambda: (half(2, m, h), *good()[1:], "gelu"), ValueError, "reshape"),
        ("w1 wrong K", lambda: (good()[0], half(i, h + 8), good()[2], "gelu"), ValueError, "weights must be"),
        ("w2 wrong N", lambda: (*good()[:2], half(h + 8, i), "gelu"), ValueError, "weights must be"),
        ("w1 transposed", lambda: (good()[0], half(h, i), half(h, i), "gelu"), ValueError, "weights must be"),
        ("x not contiguous", lambda: (half(h, m).t(), *good()[1:], "gelu"), ValueError, "contiguous"),
        ("w2 not contiguous", lambda: (*good()[:2], half(i, h).t(), "gelu"), ValueError, "contiguous"),
        ("x misaligned", lambda: (misaligned(), *good()[1:], "gelu"), ValueError, "16-byte aligned"),
        ("H not a multiple of 8", lambda: (half(m, 12), half(16, 12), half(12, 16), "gelu"), ValueError,
         "multiples of 8"),
        ("unknown activation", lambda: (*good(), "relu"), ValueError, "activation must be"),
        ("swiglu with unpaired w1", lambda: (*good(), "swiglu"), ValueError, "gate rows"),
    ]


@pytest.mark.parametrize("entry_point", ["cusync.mlp", "torch.ops.cusync.mlp"])
@pytest.mark.parametrize("label, build, error, fragment", bad_inputs(), ids=[b[0] for b in bad_inputs()])
def test_bad_inputs_raise_the_documented_exception(entry_point, label, build, error, fragment):
    if entry_point == "torch.ops.cusync.mlp" and label == "x not a tensor":
        pytest.skip("torch's dispatcher checks argument types against the schema before the op runs")
    function = cusync.mlp if entry_point == "cusync.mlp" else torch.ops.cusync.mlp
    arguments = build()
    with pytest.raises(error, match=fragment):
        function(*arguments)
    torch.cuda.synchronize()  # nothing was launched that could fail later


def test_swiglu_with_an_intermediate_size_not_a_multiple_of_64_is_refused():
    h, i = 64, 96
    w1, w2 = weights(h, i, gate_up=2)
    with pytest.raises(ValueError, match="multiple of 64"):
        cusync.mlp(random_x(4, h), w1, w2, "swiglu")


def test_inputs_on_two_devices_are_refused():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    w1, w2 = weights(64, 128)
    with pytest.raises(ValueError, match="one device"):
        cusync.mlp(random_x(4, 64).to("cuda:1"), w1, w2)
