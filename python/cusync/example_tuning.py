"""The tuning table of the MLP examples (mlp_example: GPT-3, mlp_llama_example: LLaMA), from their --search CSVs.

Schema "cusync-mlp-example-tuning/1" (docs/PYTORCH_OP.md, next to the op's "cusync-mlp-tuning/1"): one entry per
(device name, SM count, model, H, I, M) with the winning tile configuration, variant, split-K parts, tile order and,
for LLaMA, the gate/up order and the SwiGLU tile width; plus the best StreamSync row for comparison, the measured
times and the source CSV. The examples read it with examples/mlp/tuning_table.h.

The winner is the fastest *correct* row among the tile-synchronized variants (TileSync+... / RowSync+...): the
tuned choice is what cusync adds. StreamSync is never the tuned choice: the examples exist to compare the cusync
variants against StreamSync, so their default run runs StreamSync anyway, with the winner's kernels (same tiles,
split and order: the synchronization is the only difference) and with StreamSync's own best configuration from the
search ("stream_sync" below). cuBLAS, Stream-K and PDL-GridSync are baselines, not candidates.
"""
from __future__ import annotations

import csv
import json
import re

from . import tuning

SCHEMA = "cusync-mlp-example-tuning/1"
# The examples' fixed model slices: mlp_main.cu's MlpShape and llama_main.cu's LlamaShape.
MODELS = {"gpt3_mlp": (12288, 6144), "llama_mlp": (8192, 2752)}
EXAMPLES = {"mlp_example": "gpt3_mlp", "mlp_llama_example": "llama_mlp"}
_VARIANT = re.compile(r"(?:TileSync|RowSync)\+(?:WaitKernel|PDL)(?:\+R)?")
_CONFIG = re.compile(r"\d+x\d+x\d+_s\d+_(?:coop|ws)_b\d+(?:_p)?(?:_Rw)?")
_ORDER_WORD = r"(?:row|col|g[1-9]\d*)"
# Labels as mlp_main.cu / llama_main.cu form them: config name + split.label() + orders.label() [+ _paired]
# [+ _swN] (the last two: LLaMA only).
_LABEL = re.compile(r"^(?P<config>" + _CONFIG.pattern + r")(?:_sk(?P<a>[1-9]\d*)x(?P<b>[1-9]\d*))?"
                    r"(?:_(?P<order>" + _ORDER_WORD + r"(?::" + _ORDER_WORD + r")?))?"
                    r"(?P<paired>_paired)?(?:_sw(?P<columns>[1-9]\d*))?$")


def parse_label(label: str, model: str) -> dict:
    """The kernels of an example's config label, e.g. 128x256x64_s4_coop_b1_Rw_sk6x4_col_paired."""
    match = _LABEL.match(label)
    if not match or (model == "gpt3_mlp" and (match["paired"] or match["columns"])):
        raise ValueError(f"'{label}' is not a {model} configuration label "
                         "(MxNxK_sS_coop|ws_bB[_p][_Rw][_skAxB][_ORDER]" + ("[_paired][_swN])" if model == "llama_mlp"
                                                                          else ")"))
    kernels = {"config": match["config"],
               "split": [int(match["a"]), int(match["b"])] if match["a"] else [1, 1],
               "order": match["order"] or "row"}
    if model == "llama_mlp":
        kernels["gate_up_order"] = "paired" if match["paired"] else "plain"
        kernels["swiglu_columns"] = int(match["columns"] or 64)
    return kernels


def best_rows(csv_path, model: str) -> dict:
    """M -> (tuned row, best StreamSync row or None): the fastest correct row of each kind."""
    tuned, stream = {}, {}
    with open(csv_path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = {"M", "config", "variant", "us", "correct"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{csv_path}: not an MLP example CSV (missing columns {sorted(missing)})")
        for row in reader:
            if row["correct"] != "1":
                continue
            kind = tuned if _VARIANT.fullmatch(row["variant"]) else stream if row["variant"] == "StreamSync" else None
            if kind is None:
                continue
            m, us = int(row["M"]), float(row["us"])
            if m not in kind or us < float(kind[m]["us"]):
                kind[m] = row
    return {m: (row, stream.get(m)) for m, row in tuned.items()}


def entries_from_csv(csv_path, model: str, device: str, sms: int, source: str | None = None) -> list:
    hidden, intermediate = MODELS[model]
    entries = []
    for m, (row, stream) in sorted(best_rows(csv_path, model).items()):
        entry = {"device": device, "sms": sms, "model": model, "hidden": hidden, "intermediate": intermediate, "m": m,
                 "variant": row["variant"], **parse_label(row["config"], model), "us": float(row["us"])}
        if stream is not None:
            entry["stream_sync"] = {**parse_label(stream["config"], model), "us": float(stream["us"])}
        entry["source"] = source or str(csv_path)
        entries.append(entry)
    return entries


def _key(entry: dict) -> tuple:
    return tuple(entry[k] for k in ("device", "sms", "model", "hidden", "intermediate", "m"))


def merge(old: list, new: list) -> list:
    """Old entries, with those of a (device, model, M) the new ones cover replaced."""
    replaced = {_key(e) for e in new}
    return [e for e in old if _key(e) not in replaced] + new


def _check_kernels(raw, where: str, model: str) -> None:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: must be an object")
    if not isinstance(raw.get("config"), str) or not _CONFIG.fullmatch(raw["config"]):
        raise ValueError(f"{where}: \"config\" must be a tile configuration name such as 128x256x64_s4_coop_b1")
    split = raw.get("split", [1, 1])
    if (not isinstance(split, list) or len(split) != 2
            or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 1 for p in split)):
        raise ValueError(f"{where}: \"split\" must be [first parts, second parts], each >= 1")
    try:
        tuning.parse_order(raw.get("order", "row"))
    except (ValueError, TypeError, AttributeError) as error:
        raise ValueError(f"{where}: \"order\": {error}") from None
    if model == "llama_mlp":
        if raw.get("gate_up_order", "plain") not in ("plain", "paired"):
            raise ValueError(f"{where}: \"gate_up_order\" must be plain or paired")
        columns = raw.get("swiglu_columns", 64)
        if not isinstance(columns, int) or isinstance(columns, bool) or columns <= 0 or columns % 8:
            raise ValueError(f"{where}: \"swiglu_columns\" must be a positive multiple of 8")
    elif "gate_up_order" in raw or "swiglu_columns" in raw:
        raise ValueError(f"{where}: \"gate_up_order\" and \"swiglu_columns\" are LLaMA's (model llama_mlp) only")


def parse_table(document, origin: str = "<table>") -> list:
    """The entries of a parsed example table, checked as examples/mlp/tuning_table.h checks them."""
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise ValueError(f"{origin}: not an MLP example tuning table (expected \"schema\": \"{SCHEMA}\")")
    entries = document.get("entries")
    if not isinstance(entries, list):
        raise ValueError(f"{origin}: \"entries\" must be a list")
    for index, raw in enumerate(entries):
        where = f"{origin}: entry {index}"
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: must be an object")
        for key, kind in (("device", str), ("sms", int), ("model", str), ("hidden", int), ("intermediate", int),
                          ("m", int), ("variant", str)):
            if not isinstance(raw.get(key), kind) or isinstance(raw.get(key), bool):
                raise ValueError(f"{where}: \"{key}\" must be a {kind.__name__}")
        if raw["model"] not in MODELS:
            raise ValueError(f"{where}: \"model\" must be one of {sorted(MODELS)}")
        for key in ("sms", "hidden", "intermediate", "m"):
            if raw[key] <= 0:
                raise ValueError(f"{where}: \"{key}\" must be positive")
        if not _VARIANT.fullmatch(raw["variant"]):
            raise ValueError(f"{where}: \"variant\" must be a tile-synchronized variant (TileSync|RowSync)+"
                             "(WaitKernel|PDL)[+R]")
        _check_kernels(raw, where, raw["model"])
        if "stream_sync" in raw:
            _check_kernels(raw["stream_sync"], where + ": \"stream_sync\"", raw["model"])
    return entries


def format_table(entries: list) -> str:
    """One entry per line, so that a table reads (and diffs) as one line per measured M."""
    lines = [json.dumps(entry) for entry in entries]
    return '{\n "schema": ' + json.dumps(SCHEMA) + ',\n "entries": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"


def load_entries(path) -> list:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as error:
        raise ValueError(f"{path}: cannot read the tuning table: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON: {error}") from None
    return parse_table(document, str(path))
