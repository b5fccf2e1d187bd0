"""Which configuration runs the MLP for a given device, model shape and M.

A configuration is a compiled kernel, the split-K parts of each GEMM and the tile order of each GEMM. The kernel is
a fused chain (tile shape, pipeline stages, cooperative or not: e.g. ``fused_64x128x128_s4_ws``), which runs at any
M, or a GEMV chain (``gemv_rows_p4``: a launch per GEMM with a few whole weight rows per block, unsplit, the
second launched with PDL and waiting for the whole first grid; ``gemv_rows_mma_p2``: the same on tensor cores;
``gemv_32_p4``: a block per 32-row tile, the second waiting tile by tile, or for the whole first grid when it is
unsplit), which runs only at M = 1 (``gemv_rows_mma_p2``: M = 1-8; ``gemv_packed_mma16_p*``: 1-16) and ignores
tile orders and unit waits. It comes from a tuning table (JSON, docs/PYTORCH_OP.md gives the format and how the
shipped one was made, from session 3's runs and the later standings over them) when the table has entries for this
device and model shape: among those whose kernel runs at this M, the entry whose M is nearest on a log scale (a tile
count and a wave count scale with M, so 1000 is nearer 1024 than 512 is to 700). Without such entries it comes from
a heuristic that encodes the winners measured on the H100 in docs/BENCHMARKS.md ("GPT-3 MLP as one launch",
2026-11-23, session 3: fused chains only) in a shape-independent form: the kernel per M, how many waves each GEMM's
split fills, converted to parts for the actual shape and SM count, and the tile orders.

No torch and no GPU here: the op (cusync/mlp.py) passes in what the library reports about its compiled kernels, so
this module is tested anywhere (tests/test_tuning.py).
"""
from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Sequence

SCHEMA = "cusync-mlp-tuning/1"
ACTIVATIONS = ("gelu", "swiglu")
DEFAULT_ORDER = "g8"  # grouped_order.h: mlp_fused_example's default; a table entry without "order" gets it
TABLE_ENVIRONMENT = "CUSYNC_TUNING_TABLE"


@dataclass(frozen=True)
class ConfigInfo:
    """What the library reports about one compiled configuration."""

    tile_m: int
    tile_n: int
    tile_k: int
    blocks_per_sm: int


@dataclass(frozen=True)
class Choice:
    """A configuration to run, and where it came from (for cusync.explain and error messages)."""

    config: str
    first_parts: int
    second_parts: int
    producer_group_rows: int
    consumer_group_rows: int
    source: str
    # GEMM 2's units wait for their whole k-range before loading A (mlp_fused_example's suffix _ww), else k-block by
    # k-block (the fused kernel's Arguments::waitForWholeUnit).
    whole_unit_wait: bool = False

    @property
    def label(self) -> str:
        """mlp_fused_example's label of the same configuration, e.g. fused_64x128x128_s4_ws_sk6x3_g8. The GEMV chain's
        has no order and no unit wait: its blocks run in hardware order and always wait for a whole k-range."""
        split = "" if (self.first_parts, self.second_parts) == (1, 1) else f"_sk{self.first_parts}x{self.second_parts}"
        if is_gemv_chain(self.config):
            return self.config + split
        order = format_order(self.producer_group_rows, self.consumer_group_rows)
        return (self.config + split + ("" if order == "row" else "_" + order)
                + ("_ww" if self.whole_unit_wait else ""))


@dataclass(frozen=True)
class TableEntry:
    device: str
    sms: int
    hidden: int
    intermediate: int
    activation: str
    dtype: str
    m: int
    config: str
    split: tuple
    order: str
    us: float | None
    source: str | None
    unit_wait: str = "kblock"  # UNIT_WAITS


# --- names -------------------------------------------------------------------------------------------------------

# _c2: 2x1 clusters sharing B by multicast; _nW: GEMM 2's own tile width W; _kD: GEMM 2's own k-block depth D;
# _gemm2sS: GEMM 2's own stage count S, on a pipeline of its own (fused_chain_instance.cuh).
_FUSED_PATTERN = r"fused_\d+x\d+x\d+_s\d+_(?:ws|coop)(?:_c2)?(?:_n\d+)?(?:_k\d+)?(?:_gemm2s\d+)?"
# The GEMV chains as a launch per GEMM (examples/mlp/skinny_mlp.cuh's gemv_<tile width>_p<blocks per SM>,
# gemv_rows_p<blocks per SM>, gemv_rows_mma_p<blocks per SM> and gemv_packed_mma16_p<blocks per SM>).
# The example's other skinny chains (gemv_*_r*, gemv_*_s*, skinny_*) and padded SwiGLU chains (_pad*) are not in the
# op's library, so their names are refused.
_GEMV_PATTERN = r"gemv_(?:\d+|rows|rows_mma|packed_mma16)_p\d+"
_GEMV = re.compile(_GEMV_PATTERN)
# The tensor-core whole-rows GEMV runs 1 to GEMV_ROWS_MMA_MAX_TOKENS tokens (row_mma_gemv_stage_kernel.cuh), the
# packed one 1 to PACKED_GEMV_MAX_TOKENS (packed_mma16_gemv_stage_kernel.cuh: two token tiles of 8); the other GEMV
# chains one.
_GEMV_ROWS_MMA = re.compile(r"gemv_rows_mma_p\d+")
# The GEMV over weights packed in mma fragment order: the op passes it packed copies of W1 and W2 (op.py).
_PACKED = re.compile(r"gemv_packed_mma16_p\d+")
GEMV_ROWS_MMA_MAX_TOKENS = 8
PACKED_GEMV_MAX_TOKENS = 16
_CONFIG_PATTERN = f"(?:{_FUSED_PATTERN}|{_GEMV_PATTERN})"
_CONFIG = re.compile(_CONFIG_PATTERN)
_LABEL = re.compile(r"^(?P<config>" + _CONFIG_PATTERN + r")(?:_sk(?P<a>\d+)x(?P<b>\d+))?"
                    r"(?:_(?P<order>(?!ww$)[^_]+))?(?P<whole>_ww)?$")
UNIT_WAITS = ("kblock", "whole")


def parse_order_word(word: str) -> int:
    """Rows per group of one GEMM's tile order (tile_orders.h): row 1, col 0, gN N."""
    if word == "row":
        return 1
    if word == "col":
        return 0
    if re.fullmatch(r"g[1-9]\d*", word):
        return int(word[1:])
    raise ValueError(f"unknown tile order '{word}' (row, col, gN or P:C)")


def parse_order(text: str) -> tuple:
    """(producer, consumer) rows per group of an order text such as g8 or g8:row."""
    producer, _, consumer = text.partition(":")
    return parse_order_word(producer), parse_order_word(consumer or producer)


def format_order(producer: int, consumer: int) -> str:
    def word(rows):
        return "row" if rows == 1 else "col" if rows == 0 else f"g{rows}"

    return word(producer) if producer == consumer else f"{word(producer)}:{word(consumer)}"


def is_gemv_chain(config: str) -> bool:
    """Whether `config` names a GEMV chain (gemv_N_pB, gemv_rows_pB, gemv_rows_mma_pB, gemv_packed_mma16_pB) rather
    than a fused chain."""
    return _GEMV.fullmatch(config) is not None


def packs_weights(config: str) -> bool:
    """Whether `config` reads W1 and W2 packed (gemv_packed_mma16_pB): the op then passes packed copies."""
    return _PACKED.fullmatch(config) is not None


def _gemv_max_tokens(config: str) -> int:
    """The most tokens GEMV chain `config` runs: the packed one 16, the whole-rows tensor-core one 8, the others
    one."""
    if _PACKED.fullmatch(config):
        return PACKED_GEMV_MAX_TOKENS
    return GEMV_ROWS_MMA_MAX_TOKENS if _GEMV_ROWS_MMA.fullmatch(config) else 1


def runs_at(config: str, m: int) -> bool:
    """Whether the kernel of `config` runs M = m tokens: a GEMV chain 1 to _gemv_max_tokens (the library refuses it
    at any other M), a fused chain any M."""
    return 1 <= m <= _gemv_max_tokens(config) if is_gemv_chain(config) else True


def parse_label(label: str) -> tuple:
    """(config, (first parts, second parts), order, unit wait) of an mlp_fused_example config label."""
    match = _LABEL.match(label)
    if not match:
        raise ValueError(f"'{label}' is not a label of a configuration the op runs "
                         "(fused_MxNxK_sS_ws|coop[_c2][_nW][_kD][_gemm2sS] or "
                         "gemv_N_pB|gemv_rows_pB|gemv_rows_mma_pB|gemv_packed_mma16_pB, then "
                         "[_skAxB][_ORDER][_ww])")
    split = (int(match["a"]), int(match["b"])) if match["a"] else (1, 1)
    order = match["order"] or "row"
    parse_order(order)
    return match["config"], split, order, "whole" if match["whole"] else "kblock"


# --- split-K ----------------------------------------------------------------------------------------------------


def parts_for_waves(tiles: int, k_blocks: int, slots: int, waves: int, min_blocks_per_part: int = 4) -> int:
    """Split-K parts so that one GEMM alone fills `waves` waves of `slots` slots, keeping at least
    `min_blocks_per_part` k-blocks per part. The same formula as partsForWaves in examples/mlp/fused_split.h, which
    generated the split candidates the heuristic's table was measured with."""
    wanted = (waves * slots + tiles - 1) // tiles
    most = max(1, k_blocks // min_blocks_per_part)
    return max(1, min(wanted, most))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def split_for_waves(info: ConfigInfo, sms: int, m: int, hidden: int, intermediate: int, waves: int,
                    activation: str = "gelu") -> tuple:
    """Parts of (GEMM 1, GEMM 2) for `waves` waves each (0: no split), as fused_split.h's candidates, with
    sms * blocks per SM slots (the persistent launch's blocks). SwiGLU's GEMM 1 has 2 * I columns (gate and up)."""
    if waves == 0:
        return 1, 1
    slots = sms * info.blocks_per_sm
    gemm1_columns = (2 if activation == "swiglu" else 1) * intermediate
    tiles_first = _ceil_div(m, info.tile_m) * _ceil_div(gemm1_columns, info.tile_n)
    tiles_second = _ceil_div(m, info.tile_m) * _ceil_div(hidden, info.tile_n)
    # The example counts k-blocks with an integer division (fused_mlp_main.cu), the kernel with a ceiling; they
    # differ only when K is not a multiple of the k-block, where the floor keeps the parts the kernel accepts.
    return (parts_for_waves(tiles_first, hidden // info.tile_k, slots, waves),
            parts_for_waves(tiles_second, intermediate // info.tile_k, slots, waves))


# --- the heuristic -----------------------------------------------------------------------------------------------

# The best fused configuration per M on the H100 (132 SMs), written as the kernel, the waves each GEMM's split fills
# (fused_split.h's candidates: 1, 2 or 4 waves, or 0 for none), the tile orders (tile_orders.h: producer:consumer
# groups of rows) and how GEMM 2's units wait (UNIT_WAITS). GELU: the GPT-3 slice (H = 12288, I = 6144);
# docs/BENCHMARKS.md, "session 3", call 7 (docs/results/fused_2026-11-23_session3/call7_gpt3_mlp_fused.csv: every M,
# orders g8 and g4, both unit waits). Where several wave counts give the winner's split, the smallest is written.
# At M = 1-16 the tensor-core GEMV over packed weights answers first (FEW_TOKEN_PACKED); where it is not compiled in,
# at M = 1 another GEMV chain (ONE_TOKEN_ROWS, else ONE_TOKEN_GEMV) where it can run the shape, and at M = 2-4 the
# whole-rows tensor-core one (FEW_TOKEN_ROWS_MMA).
HEURISTIC = (
    (1, "fused_64x128x128_s4_ws", 2, "g4", "kblock"),
    (8, "fused_64x128x128_s4_ws", 2, "g4", "kblock"),
    (64, "fused_64x96x128_s4_ws", 0, "g4", "whole"),
    (128, "fused_128x96x64_s6_coop", 0, "g4", "whole"),
    (256, "fused_128x96x64_s6_coop", 0, "g8", "whole"),
    (512, "fused_128x192x64_s5_coop", 0, "g8", "whole"),
    (1024, "fused_128x192x64_s4_coop", 0, "g8", "whole"),
    (2048, "fused_256x128x64_s4_coop", 0, "g8", "whole"),
    (4096, "fused_128x256x64_s4_coop", 0, "g8", "kblock"),
)


def _ratio(m: int, other: int) -> Fraction:
    """exp of the log-scale distance between m and other, exactly: the larger over the smaller."""
    return Fraction(max(m, other), min(m, other))


def nearest(m: int, points: Sequence[int]) -> int:
    """The point nearest to m on a log scale; a tie goes to the larger point. Compared as exact ratios: with
    floating-point logarithms, 128 would not be exactly as far from 8 as from 2048."""
    return min(points, key=lambda p: (_ratio(m, p), -p))


# The same for the LLaMA chain (paired SwiGLU; H = 8192, I = 2752), same call (call7_llama_mlp_fused.csv).
SWIGLU_HEURISTIC = (
    (1, "fused_64x128x128_s4_ws", 1, "g4", "whole"),
    (8, "fused_64x128x128_s4_ws", 1, "g4", "kblock"),
    (64, "fused_64x128x128_s4_ws", 0, "g4", "whole"),
    (128, "fused_64x128x128_s4_ws", 0, "g4", "whole"),
    (256, "fused_128x128x64_s6_coop", 0, "g4", "whole"),
    (512, "fused_256x128x64_s4_coop", 0, "g4", "whole"),
    (1024, "fused_128x128x64_s6_coop", 0, "g4", "kblock"),
    (2048, "fused_256x128x64_s4_coop", 0, "g4", "kblock"),
    (4096, "fused_256x128x64_s4_coop", 0, "g4", "kblock"),
)


# One token: the whole-rows GEMV chain where it is compiled in: 70.9 against 79.9 us (GPT-3) and 37.5 against 41.9
# (LLaMA) for gemv_32_p4 split 2x1 below, the same process, H200 (session 26, call 5; the H100 has not run it). It
# takes every shape the op takes (H and I multiples of 8; its blocks hold 4 GELU or 2 paired SwiGLU outputs).
ONE_TOKEN_ROWS = "gemv_rows_p4"
# Else the 32-row GEMV chain for both activations. In the same call it beat the fused chain at M = 1 on both devices:
# H100, session 8's call 13 (110.2 against 116.9 us GPT-3, 54.4 against 62.8 LLaMA); H200, session 25's calls 2 and 7
# (the op: 80.2-81.7 against 96.6-97.4 GELU, 41.5 against 56.2 SwiGLU). GEMM 1 split in two k-parts, GEMM 2 unsplit
# (so it waits for the whole first grid: gemv_mlp_plan.h): 78.1 against 80.5 us (GPT-3) and 40.9 against 41.7
# (LLaMA) unsplit, 4 parts slower (H200, session 25 call 9; the H100 has not run this split). It takes H and I only in
# multiples of its 32-row tiles (examples/mlp/skinny_mlp.cuh's whyNot); the op and the fused chains take any multiple
# of 8, so other shapes keep the fused winner.
ONE_TOKEN_GEMV = "gemv_32_p4"
GEMV_TILE_ROWS = 32
ONE_TOKEN_GEMV_FIRST_PARTS = 2


# Two to four tokens: the tensor-core whole-rows GEMV chain where it is compiled in, for both activations. In one
# process on the H200 (session 27, call 4): GPT-3 75.9-78.2 us against 94.7-100.3 for the fused chain split at small M
# and 84.8-86.0 for cuBLASLt; LLaMA 42.8-45.3 against 51.4-51.9 and 42.8-43.2. At M = 8 it tied the fused chain
# (GPT-3, 92.1 against 92.3) or lost to it (LLaMA, 54.6 against 50.2), so M = 5-8 keep the fused winner. It takes
# every shape the op takes (H and I multiples of 8; its blocks hold 8 GELU or 4 paired SwiGLU outputs).
FEW_TOKEN_ROWS_MMA = "gemv_rows_mma_p2"
FEW_TOKEN_ROWS_MMA_TOKENS = range(2, 5)


# One to sixteen tokens, first: the tensor-core GEMV over packed weights, 16 rows per block, at the blocks per SM
# measured fastest for each activation's model slice. In one process on the H200 (session 30, call 6): GPT-3 (GELU) on
# 3 blocks per SM 70.0-71.3 us at M = 1-8 (4 per SM: 71.7-73.2) against 70.5 for gemv_rows_p4 at M = 1 and 85.0-85.8
# for cuBLASLt; LLaMA (SwiGLU) on 4 per SM 33.6-34.6 (3 per SM: 34.7-36.0) against 35.6 and 42.5-43.2. At 9-16 tokens
# (two token tiles; session 32, call 5) the same: GPT-3 on 3 per SM 72.9-73.6 (4 per SM: 74.1-75.8; cuBLASLt
# 86.4-87.2), LLaMA on 4 per SM 35.0-35.7 (37.3-38.0; cuBLASLt 43.0-43.9); the fused chain took 92-98 and 50-53
# (call 1). Its blocks hold 16 outputs (8 paired SwiGLU outputs), so it takes H in multiples of 16 and I in multiples
# of 16 (GELU; SwiGLU's I is a multiple of 64 anyway); the op packs each weight tensor once (op.py).
FEW_TOKEN_PACKED = {"gelu": "gemv_packed_mma16_p3", "swiglu": "gemv_packed_mma16_p4"}
FEW_TOKEN_PACKED_TOKENS = range(1, PACKED_GEMV_MAX_TOKENS + 1)  # every M the chain runs at
PACKED_BLOCK_ROWS = 16


def _packed_gemv_runs(hidden: int, intermediate: int, activation: str) -> bool:
    """Whether the packed GEMV chain takes these sizes (examples/mlp/skinny_mlp.cuh's whyNot: whole blocks)."""
    first_outputs = PACKED_BLOCK_ROWS // 2 if activation == "swiglu" else PACKED_BLOCK_ROWS
    return hidden % PACKED_BLOCK_ROWS == 0 and intermediate % first_outputs == 0


def _one_token_gemv_runs(hidden: int, intermediate: int) -> bool:
    return hidden % GEMV_TILE_ROWS == 0 and intermediate % GEMV_TILE_ROWS == 0


def heuristic_choice(m: int, hidden: int, intermediate: int, sms: int, available: Mapping[str, ConfigInfo],
                     activation: str = "gelu") -> Choice:
    packed = FEW_TOKEN_PACKED[activation]
    if (m in FEW_TOKEN_PACKED_TOKENS and packed in available and available[packed].blocks_per_sm > 0
            and _packed_gemv_runs(hidden, intermediate, activation)):
        return Choice(packed, 1, 1, 1, 1, "heuristic (the tensor-core GEMV chain over packed weights at 1-16 tokens: "
                      "docs/BENCHMARKS.md session 30 call 6 and session 32 call 5, H200)")
    if m == 1 and ONE_TOKEN_ROWS in available and available[ONE_TOKEN_ROWS].blocks_per_sm > 0:
        return Choice(ONE_TOKEN_ROWS, 1, 1, 1, 1, "heuristic (the whole-rows GEMV chain at one token: "
                      "docs/BENCHMARKS.md session 26 call 5, H200)")
    if (m in FEW_TOKEN_ROWS_MMA_TOKENS and FEW_TOKEN_ROWS_MMA in available
            and available[FEW_TOKEN_ROWS_MMA].blocks_per_sm > 0):
        return Choice(FEW_TOKEN_ROWS_MMA, 1, 1, 1, 1, "heuristic (the tensor-core whole-rows GEMV chain at 2-4 tokens: "
                      "docs/BENCHMARKS.md session 27 call 4, H200)")
    if (m == 1 and ONE_TOKEN_GEMV in available and available[ONE_TOKEN_GEMV].blocks_per_sm > 0
            and _one_token_gemv_runs(hidden, intermediate)):
        # At most one part per 32-deep k-block of GEMM 1.
        first_parts = max(1, min(ONE_TOKEN_GEMV_FIRST_PARTS, hidden // GEMV_TILE_ROWS))
        return Choice(ONE_TOKEN_GEMV, first_parts, 1, 1, 1, "heuristic (the GEMV chain at one token: "
                      "docs/BENCHMARKS.md session 8 call 13, H100; session 25 calls 2, 7 and 9, H200)")
    table = SWIGLU_HEURISTIC if activation == "swiglu" else HEURISTIC
    usable = [(point, config, waves, order, wait) for point, config, waves, order, wait in table
              if config in available and available[config].blocks_per_sm > 0 and runs_at(config, m)]
    if not usable:
        # None of the measured kernels is compiled in: any that fits and runs at this M, unsplit.
        fitting = sorted(name for name, info in available.items() if info.blocks_per_sm > 0 and runs_at(name, m))
        if not fitting:
            raise RuntimeError(f"cusync: no configuration compiled into the library fits this device at M={m}")
        producer, consumer = parse_order(DEFAULT_ORDER)
        return Choice(fitting[0], 1, 1, producer, consumer, "heuristic fallback (no measured kernel compiled in)")
    point = nearest(m, [p for p, _, _, _, _ in usable])
    config, waves, order, wait = next((c, w, o, u) for p, c, w, o, u in usable if p == point)
    first, second = split_for_waves(available[config], sms, m, hidden, intermediate, waves, activation)
    producer, consumer = parse_order(order)
    model = "LLaMA" if activation == "swiglu" else "GPT-3"
    return Choice(config, first, second, producer, consumer,
                  f"heuristic (docs/BENCHMARKS.md session 3 {model} winner at M={point}: "
                  f"{waves or 'no'} wave split, order {order}, {wait} wait)", wait == "whole")


# --- the table ---------------------------------------------------------------------------------------------------

_REQUIRED = {"device": str, "sms": int, "hidden": int, "intermediate": int, "activation": str, "m": int,
             "config": str}


def parse_table(document, origin: str = "<table>") -> list:
    """The entries of a parsed tuning-table document; ValueError naming `origin` and the entry when malformed."""
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise ValueError(f"{origin}: not a cusync tuning table (expected an object with \"schema\": \"{SCHEMA}\")")
    entries = document.get("entries")
    if not isinstance(entries, list):
        raise ValueError(f"{origin}: \"entries\" must be a list")
    parsed = []
    for index, raw in enumerate(entries):
        where = f"{origin}: entry {index}"
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: must be an object")
        for key, kind in _REQUIRED.items():
            if not isinstance(raw.get(key), kind) or isinstance(raw.get(key), bool):
                raise ValueError(f"{where}: \"{key}\" must be a {kind.__name__}")
        for key in ("sms", "hidden", "intermediate", "m"):
            if raw[key] <= 0:
                raise ValueError(f"{where}: \"{key}\" must be positive")
        if raw["activation"] not in ACTIVATIONS:
            raise ValueError(f"{where}: \"activation\" must be one of {ACTIVATIONS}")
        if not _CONFIG.fullmatch(raw["config"]):
            raise ValueError(f"{where}: \"config\" '{raw['config']}' is not the name of a configuration the op runs "
                             "(fused_MxNxK_sS_ws|coop[_c2][_nW][_kD][_gemm2sS] or gemv_N_pB|gemv_rows_pB|"
                             "gemv_rows_mma_pB|gemv_packed_mma16_pB)")
        if not runs_at(raw["config"], raw["m"]):
            most = _gemv_max_tokens(raw["config"])
            tokens = f"1-{most}" if most > 1 else "1"
            raise ValueError(f"{where}: \"config\" '{raw['config']}' runs only at M = {tokens}, not at M = {raw['m']}")
        split = raw.get("split", [1, 1])
        if (not isinstance(split, list) or len(split) != 2
                or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 1 for p in split)):
            raise ValueError(f"{where}: \"split\" must be [first parts, second parts], each >= 1")
        order = raw.get("order", DEFAULT_ORDER)
        try:
            parse_order(order)
        except (ValueError, TypeError, AttributeError) as error:
            raise ValueError(f"{where}: \"order\": {error}") from None
        unit_wait = raw.get("unit_wait", "kblock")
        if unit_wait not in UNIT_WAITS:
            raise ValueError(f"{where}: \"unit_wait\" must be one of {UNIT_WAITS}")
        dtype = raw.get("dtype", "float16")
        if dtype != "float16":
            raise ValueError(f"{where}: \"dtype\" must be float16 (the only one the kernels take)")
        us = raw.get("us")
        if us is not None and not isinstance(us, (int, float)):
            raise ValueError(f"{where}: \"us\" must be a number")
        parsed.append(TableEntry(raw["device"], raw["sms"], raw["hidden"], raw["intermediate"], raw["activation"],
                                 dtype, raw["m"], raw["config"], tuple(split), order,
                                 None if us is None else float(us), raw.get("source"), unit_wait))
    return parsed


def load_table(path) -> list:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as error:
        raise ValueError(f"{path}: cannot read the tuning table: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON: {error}") from None
    return parse_table(document, str(path))


@functools.lru_cache(maxsize=1)
def default_table_path() -> Path:
    # Cached: resolving the path walks the file system (tens of microseconds), and the op asks on every call.
    return Path(__file__).resolve().parent / "data" / "tuning_table.json"


def table_path() -> Path:
    """CUSYNC_TUNING_TABLE when set, else the table shipped with the package."""
    configured = os.environ.get(TABLE_ENVIRONMENT)
    return Path(configured) if configured else default_table_path()


def choose(entries: Sequence[TableEntry], device: str, sms: int, m: int, hidden: int, intermediate: int,
           activation: str, available: Mapping[str, ConfigInfo], origin: str = "table") -> Choice:
    """The configuration for this call: the table entry for this device and model shape nearest to m (on a log
    scale) among those whose kernel is compiled in, fits and runs at m (an M = 1 GEMV entry is not one for m = 2),
    else the heuristic."""
    matching = [e for e in entries
                if (e.device, e.sms, e.hidden, e.intermediate, e.activation) == (device, sms, hidden, intermediate,
                                                                                  activation)
                and e.config in available and available[e.config].blocks_per_sm > 0 and runs_at(e.config, m)]
    if matching:
        point = nearest(m, sorted({e.m for e in matching}))
        entry = next(e for e in matching if e.m == point)
        producer, consumer = parse_order(entry.order)
        return Choice(entry.config, entry.split[0], entry.split[1], producer, consumer,
                      f"{origin}: entry for M={entry.m}", entry.unit_wait == "whole")
    return heuristic_choice(m, hidden, intermediate, sms, available, activation)
