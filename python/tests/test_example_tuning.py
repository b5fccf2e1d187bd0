"""The MLP examples' tuning table (examples/mlp/tuning_table.json): labels, winner choice, format checks and
cusync-tune --example. No torch, no GPU."""
import json
import tempfile
from pathlib import Path

import pytest

from cusync import example_tuning, tune

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "examples/mlp/tuning_table.json"
GPT3_CSV = REPO / "docs/results/mlp_gpt3_h100_final.csv"
GPT3_LOG = REPO / "docs/results/mlp_gpt3_h100_final.log"
LLAMA_CSV = REPO / "docs/results/mlp_llama_h100.csv"
LLAMA_LOG = REPO / "docs/results/mlp_llama_h100.log"
@pytest.fixture
def tmp_path():
    """A scratch folder removed after the test (pytest's own tmp_path keeps the last runs' folders)."""
    with tempfile.TemporaryDirectory(prefix="cusync-example-tuning-") as folder:
        yield Path(folder)


HEADER = "M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel\n"


@pytest.mark.parametrize("label, model, kernels", [
    ("128x256x64_s4_coop_b1_g4", "gpt3_mlp", {"config": "128x256x64_s4_coop_b1", "split": [1, 1], "order": "g4"}),
    ("64x128x64_s4_ws_b2_p_Rw_sk5x2_col", "gpt3_mlp",
     {"config": "64x128x64_s4_ws_b2_p_Rw", "split": [5, 2], "order": "col"}),
    ("128x128x64_s4_coop_b1", "gpt3_mlp", {"config": "128x128x64_s4_coop_b1", "split": [1, 1], "order": "row"}),
    ("128x128x64_s4_coop_b1_sk2x1_g8:row", "gpt3_mlp",
     {"config": "128x128x64_s4_coop_b1", "split": [2, 1], "order": "g8:row"}),
    ("128x256x64_s4_coop_b1_Rw_sk6x4_col_paired", "llama_mlp",
     {"config": "128x256x64_s4_coop_b1_Rw", "split": [6, 4], "order": "col", "gate_up_order": "paired",
      "swiglu_columns": 64}),
    ("64x64x64_s6_ws_b2_p_sw128", "llama_mlp",
     {"config": "64x64x64_s6_ws_b2_p", "split": [1, 1], "order": "row", "gate_up_order": "plain",
      "swiglu_columns": 128}),
])
def test_example_labels_parse_into_the_kernels_that_ran(label, model, kernels):
    assert example_tuning.parse_label(label, model) == kernels


@pytest.mark.parametrize("label, model", [
    ("cuBLASLt", "gpt3_mlp"), ("128x256x64_s4_coop_b1_g0", "gpt3_mlp"), ("fused_64x128x128_s4_ws", "gpt3_mlp"),
    ("128x256x64_s4_coop_b1_col_paired", "gpt3_mlp"), ("128x256x64_s4_coop_b1_sk0x1", "llama_mlp")])
def test_labels_of_other_kinds_or_models_are_refused(label, model):
    with pytest.raises(ValueError):
        example_tuning.parse_label(label, model)


def test_the_winner_is_the_fastest_correct_tile_synchronized_row(tmp_path):
    csv_path = tmp_path / "gpt3.csv"
    csv_path.write_text(
        HEADER +
        "1,cuBLASLt,cuBLAS,50,0,1,0,0,0\n"                                   # baseline: never a candidate
        "1,128x128x64_s4_coop_b1,PDL-GridSync+R,60,0,1,0,0,0\n"              # baseline too
        "1,128x128x64_s4_coop_b1_g8,StreamSync,70,0,1,0,0,0\n"               # compared against, not tuned
        "1,128x128x64_s4_coop_b1_sk2x1_g8,TileSync+PDL,80,0,0,0,0,0\n"       # fastest cusync row, but wrong
        "1,128x128x64_s4_coop_b1_col,RowSync+WaitKernel+R,90,0,1,0,0,0\n"
        "1,128x128x64_s4_coop_b1,TileSync+WaitKernel,95,0,1,0,0,0\n"
        "8,128x128x64_s4_coop_b1,StreamSync,100,0,1,0,0,0\n")                # no cusync row at M=8: no entry
    entries = example_tuning.entries_from_csv(csv_path, "gpt3_mlp", "GPU X", 100)
    assert entries == [{
        "device": "GPU X", "sms": 100, "model": "gpt3_mlp", "hidden": 12288, "intermediate": 6144, "m": 1,
        "variant": "RowSync+WaitKernel+R", "config": "128x128x64_s4_coop_b1", "split": [1, 1], "order": "col",
        "us": 90.0, "stream_sync": {"config": "128x128x64_s4_coop_b1", "split": [1, 1], "order": "g8", "us": 70.0},
        "source": str(csv_path)}]


def test_tune_writes_a_table_the_parser_accepts_and_merges_by_device_model_and_m(tmp_path):
    output = tmp_path / "table.json"
    assert tune.main(["--example", "mlp_example", str(GPT3_CSV), "--log", str(GPT3_LOG), "-o", str(output)]) == 0
    first = example_tuning.load_entries(output)
    assert sorted(e["m"] for e in first) == [1, 8, 64, 128, 256, 512, 1024, 2048, 4096]
    assert all(e["model"] == "gpt3_mlp" and e["sms"] == 132 for e in first)
    # Another device's run of the same model adds entries; a rerun on the same device replaces them.
    assert tune.main(["--example", "mlp_example", str(GPT3_CSV), "--device", "GPU X", "--sms", "100",
                      "--merge", str(output), "-o", str(output)]) == 0
    assert tune.main(["--example", "mlp_example", str(GPT3_CSV), "--log", str(GPT3_LOG), "--merge", str(output),
                      "-o", str(output)]) == 0
    assert len(example_tuning.load_entries(output)) == 18


def test_tune_regenerates_the_shipped_example_table_from_the_recorded_h100_searches(tmp_path):
    output = tmp_path / "table.json"
    assert tune.main(["--example", "mlp_example", str(GPT3_CSV), "--log", str(GPT3_LOG), "-o", str(output)]) == 0
    assert tune.main(["--example", "mlp_llama_example", str(LLAMA_CSV), "--log", str(LLAMA_LOG),
                      "--merge", str(output), "-o", str(output)]) == 0
    shipped = json.loads(SHIPPED.read_text())
    regenerated = json.loads(output.read_text())
    assert {e["source"] for e in shipped["entries"]} == {"docs/results/mlp_gpt3_h100_final.csv",
                                                         "docs/results/mlp_llama_h100.csv"}
    for e in shipped["entries"] + regenerated["entries"]:
        e.pop("source")
    assert regenerated == shipped


def test_tune_refuses_a_csv_without_tile_synchronized_rows(tmp_path, capsys):
    csv_path = tmp_path / "baselines.csv"
    csv_path.write_text(HEADER + "1,cuBLASLt,cuBLAS,50,0,1,0,0,0\n")
    assert tune.main(["--example", "mlp_example", str(csv_path), "--device", "X", "--sms", "1",
                      "-o", str(tmp_path / "t.json")]) == 1
    assert "no correct tile-synchronized row" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()


def shipped_entry(**changes):
    entry = json.loads(SHIPPED.read_text())["entries"][0]
    entry.update(changes)
    return entry


@pytest.mark.parametrize("entry, complaint", [
    (shipped_entry(model="bert_mlp"), "\"model\" must be one of"),
    (shipped_entry(m=0), "\"m\" must be positive"),
    (shipped_entry(variant="StreamSync"), "\"variant\" must be a tile-synchronized variant"),
    (shipped_entry(config="fused_64x128x128_s4_ws"), "\"config\" must be a tile configuration"),
    (shipped_entry(split=[0, 1]), "\"split\""),
    (shipped_entry(order="zigzag"), "unknown tile order 'zigzag'"),
    (shipped_entry(swiglu_columns=64), "LLaMA's (model llama_mlp) only"),
    (shipped_entry(stream_sync={"config": "x"}), "\"stream_sync\": \"config\""),
])
def test_malformed_example_tables_are_refused_with_the_entry_named(entry, complaint):
    with pytest.raises(ValueError, match="t.json: entry 0: .*" + complaint.replace("(", r"\(").replace(")", r"\)")):
        example_tuning.parse_table({"schema": example_tuning.SCHEMA, "entries": [entry]}, "t.json")


def test_the_op_and_the_examples_refuse_each_others_tables():
    with pytest.raises(ValueError, match="not an MLP example tuning table"):
        example_tuning.parse_table({"schema": "cusync-mlp-tuning/1", "entries": []})
