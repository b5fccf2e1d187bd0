"""Which configuration the op runs: table lookup, the heuristic, the table format and cusync-tune. No torch, no GPU:
the library's answers about its kernels are given here as ConfigInfo values."""
import json
import re
from pathlib import Path

import pytest

from cusync import tune, tuning
from cusync.tuning import ConfigInfo

REPO = Path(__file__).resolve().parents[2]
RUN7_CSV = REPO / "docs/results/fused_2026-11-23/run7_mlp_fused.csv"
RUN7_LOG = REPO / "docs/results/fused_2026-11-23/run7_mlp_fused.log"
# The run the heuristics come from: docs/BENCHMARKS.md, session 3, call 7 (H100): every M, orders g8 and g4, GEMM 2's
# units waiting k-block by k-block and for their whole k-range.
SESSION3 = REPO / "docs/results/fused_2026-11-23_session3"
GPT3_CSV = SESSION3 / "call7_gpt3_mlp_fused.csv"
LLAMA_CSV = SESSION3 / "call7_llama_mlp_fused.csv"
# The shipped table is session 3's, with every M that a later interleaved standing measured replaced by its winner:
# session 20's call 5 (both models, every M, timed interleaved with cuBLASLt; at M = 1 only the GEMV chain, which
# session 3 did not run) and session 21's call 5 (GPT-3 at M = 128 and 256). LLaMA's later winners run on zero-padded
# intermediates, which the op does not, so most of its entries stay session 3's.
SESSION20 = REPO / "docs/results/fused_2026-11-27_session20"
SESSION21 = REPO / "docs/results/fused_2026-11-28_session21"
LATER_GPT3_CSVS = (SESSION20 / "call5_gpt3_fused.csv", SESSION21 / "call5_interleaved_gpt3_128.csv",
                   SESSION21 / "call5_interleaved_gpt3_256.csv")
LATER_LLAMA_CSVS = (SESSION20 / "call5_llama_fused.csv",)
H100 = ("NVIDIA H100 80GB HBM3", 132)
GPT3 = (12288, 6144)

# The one-token GEMV chain, as the library reports it on the H100: 1-token, 32-column tiles, 256-deep k-blocks,
# 4 blocks per SM. Built into the library for both activations whatever CUSYNC_FUSED_CONFIGS lists.
GEMV = "gemv_32_p4"
GEMV_INFO = ConfigInfo(1, 32, 32, 4)
# The configurations of examples/gemm/CMakeLists.txt's default CUSYNC_FUSED_CONFIGS, one block per SM each on the
# H100 (session 3's log: "(1/SM)"), and the GEMV chain.
ALL_CONFIGS = {
    GEMV: GEMV_INFO,
    "fused_64x128x128_s4_ws": ConfigInfo(64, 128, 128, 1),
    "fused_64x96x128_s4_ws": ConfigInfo(64, 96, 128, 1),
    "fused_128x96x64_s6_coop": ConfigInfo(128, 96, 64, 1),
    "fused_128x128x64_s6_coop": ConfigInfo(128, 128, 64, 1),
    "fused_128x192x64_s4_coop": ConfigInfo(128, 192, 64, 1),
    "fused_128x192x64_s5_coop": ConfigInfo(128, 192, 64, 1),
    "fused_128x256x64_s4_coop": ConfigInfo(128, 256, 64, 1),
    "fused_256x128x64_s4_coop": ConfigInfo(256, 128, 64, 1),
    "fused_64x96x64_s10_ws_c2_n192_gemm2s6": ConfigInfo(64, 96, 64, 1),
    "fused_128x96x64_s7_coop_c2_n192_gemm2s5": ConfigInfo(128, 96, 64, 1),
    "fused_128x192x64_s5_coop_c2": ConfigInfo(128, 192, 64, 1),
    "fused_256x192x64_s3_coop": ConfigInfo(256, 192, 64, 1),
}
# And CUSYNC_SWIGLU_FUSED_CONFIGS' 128-column ones, the only fused SwiGLU tiles the op uses (its paired layout groups
# 64 rows), and the GEMV chain.
SWIGLU_CONFIGS = {
    GEMV: GEMV_INFO,
    "fused_64x128x128_s4_ws": ConfigInfo(64, 128, 128, 1),
    "fused_128x128x64_s4_coop": ConfigInfo(128, 128, 64, 1),
    "fused_128x128x64_s6_coop": ConfigInfo(128, 128, 64, 1),
    "fused_256x128x64_s4_coop": ConfigInfo(256, 128, 64, 1),
    "fused_128x128x64_s6_coop_c2": ConfigInfo(128, 128, 64, 1),
}


def entry(m, config="fused_64x128x128_s4_ws", split=(1, 1), order="g8", device=H100, shape=GPT3, activation="gelu"):
    return {"device": device[0], "sms": device[1], "hidden": shape[0], "intermediate": shape[1],
            "activation": activation, "dtype": "float16", "m": m, "config": config, "split": list(split),
            "order": order}


def table(*entries):
    return tuning.parse_table({"schema": tuning.SCHEMA, "entries": list(entries)})


def choose(entries, m, available=ALL_CONFIGS, device=H100, shape=GPT3, activation="gelu"):
    return tuning.choose(entries, device[0], device[1], m, shape[0], shape[1], activation, available)


# --- names and formulas ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("label, parsed", [
    ("fused_64x128x128_s4_ws_sk6x3_g8", ("fused_64x128x128_s4_ws", (6, 3), "g8", "kblock")),
    ("fused_256x128x64_s4_coop_g8", ("fused_256x128x64_s4_coop", (1, 1), "g8", "kblock")),
    ("fused_128x256x64_s3_coop", ("fused_128x256x64_s3_coop", (1, 1), "row", "kblock")),
    ("fused_128x128x64_s4_coop_sk2x1_g8:row", ("fused_128x128x64_s4_coop", (2, 1), "g8:row", "kblock")),
    ("fused_128x96x64_s6_coop_g8_ww", ("fused_128x96x64_s6_coop", (1, 1), "g8", "whole")),
    ("fused_128x96x64_s6_coop_ww", ("fused_128x96x64_s6_coop", (1, 1), "row", "whole")),
    ("fused_64x128x128_s4_ws_sk4x3_g4:g8_ww", ("fused_64x128x128_s4_ws", (4, 3), "g4:g8", "whole")),
    # 2x1 clusters (fused_chain_instance.cuh's _c2 suffix) belong to the configuration, not to the order.
    ("fused_128x128x64_s6_coop_c2_sk2x1_g4", ("fused_128x128x64_s6_coop_c2", (2, 1), "g4", "kblock")),
    ("fused_128x192x64_s4_coop_c2_ww", ("fused_128x192x64_s4_coop_c2", (1, 1), "row", "whole")),
    # GEMM 2's own tile width (_n256) belongs to the configuration too.
    ("fused_128x176x64_s4_coop_c2_n256_sk2x1_g4_ww", ("fused_128x176x64_s4_coop_c2_n256", (2, 1), "g4", "whole")),
    # ... and so do GEMM 2's own k-block depth (_k32) and stage count (_gemm2s5), not tile orders.
    ("fused_128x96x64_s7_coop_c2_n192_gemm2s5_g8_ww",
     ("fused_128x96x64_s7_coop_c2_n192_gemm2s5", (1, 1), "g8", "whole")),
    ("fused_128x96x64_s7_coop_c2_n192_k32_sk2x1_g4", ("fused_128x96x64_s7_coop_c2_n192_k32", (2, 1), "g4", "kblock")),
    # The GEMV chain as a launch per GEMM, unsplit and split (the example writes no order for it).
    ("gemv_32_p4", ("gemv_32_p4", (1, 1), "row", "kblock")),
    ("gemv_32_p4_sk8x4", ("gemv_32_p4", (8, 4), "row", "kblock")),
])
def test_example_labels_parse_into_config_split_order_and_unit_wait(label, parsed):
    assert tuning.parse_label(label) == parsed


@pytest.mark.parametrize("label", ["cuBLAS", "fused_64x128x128_s4", "fused_64x128x128_s4_ws_g0", "fused_64x128_s4_ws",
                                   "fused_64x128x128_s4_ws_g8_wait", "fused_64x128x128_s4_ws_g8_ww_ww",
                                   "fused_128x128x64_s6_coop_c3",
                                   # the example's skinny chains the op's library does not build
                                   "gemv_32_r4", "gemv_32_s4", "skinny_32_r4", "skinny_32_r4_sk2x2", "gemv_32_p4d",
                                   # ... and its chains on zero-padded SwiGLU intermediates
                                   "fused_128x176x64_s4_coop_c2_n256_pad2816_g4_ww"])
def test_labels_of_configurations_the_op_does_not_run_are_refused(label):
    with pytest.raises(ValueError):
        tuning.parse_label(label)


def test_choice_label_round_trips_through_the_example_format():
    choice = tuning.Choice("fused_64x128x128_s4_ws", 6, 3, 8, 8, "test")
    assert choice.label == "fused_64x128x128_s4_ws_sk6x3_g8"
    assert tuning.parse_label(choice.label) == ("fused_64x128x128_s4_ws", (6, 3), "g8", "kblock")
    whole = tuning.Choice("fused_128x96x64_s6_coop", 1, 1, 4, 4, "test", whole_unit_wait=True)
    assert whole.label == "fused_128x96x64_s6_coop_g4_ww"
    assert tuning.parse_label(whole.label) == ("fused_128x96x64_s6_coop", (1, 1), "g4", "whole")


def test_parts_for_waves_matches_fused_split_h():
    # partsForWaves(tiles, kBlocks, slots, waves): ceil(waves * slots / tiles), at most kBlocks / 4, at least 1.
    assert tuning.parts_for_waves(48, 96, 132, 2) == 6
    assert tuning.parts_for_waves(96, 48, 132, 2) == 3
    assert tuning.parts_for_waves(48, 96, 132, 1) == 3
    assert tuning.parts_for_waves(2000, 96, 132, 1) == 1
    assert tuning.parts_for_waves(1, 8, 132, 4) == 2  # capped: at least 4 k-blocks per part


def test_nearest_is_on_a_log_scale_and_ties_go_up():
    points = [1, 8, 64, 128, 256, 512, 1024, 2048, 4096]
    assert tuning.nearest(1000, points) == 1024
    assert tuning.nearest(700, points) == 512   # ln(700/512) = 0.31 < ln(1024/700) = 0.38
    assert tuning.nearest(40, points) == 64     # linear distance would pick 64 too; 23 would not:
    assert tuning.nearest(23, points) == 64     # ln(23/8) = 1.06 > ln(64/23) = 1.02
    assert tuning.nearest(16, [8, 32]) == 32    # exact tie on a log scale
    assert tuning.nearest(100000, points) == 4096


# --- the heuristic -----------------------------------------------------------------------------------------------

def measured_winners(*csv_paths):
    """M -> the label of the fastest correct Fused row at that M over all the CSVs."""
    best = {}
    for path in csv_paths:
        for m, (us, label) in tune.best_fused_rows(path).items():
            if m not in best or us < best[m][0]:
                best[m] = (us, label)
    return {m: label for m, (_, label) in best.items()}


def without_gemv(configs):
    return {name: info for name, info in configs.items() if name != GEMV}


def test_heuristic_reproduces_the_measured_winners_on_the_h100():
    # docs/BENCHMARKS.md session 3: the heuristic stores kernels, wave counts and orders, not parts; converted back
    # for the GPT-3 slice on 132 SMs it must give exactly the configurations that won.
    winners = measured_winners(GPT3_CSV)
    assert sorted(winners) == [1, 8, 64, 128, 256, 512, 1024, 2048, 4096]
    assert winners[256] == "fused_128x96x64_s6_coop_g8_ww" and winners[4096].endswith("_g8")
    # The fused winners' table, without the GEMV chain that answers M = 1 first (session 3 did not run it).
    for m, label in winners.items():
        assert tuning.heuristic_choice(m, *GPT3, 132, without_gemv(ALL_CONFIGS)).label == label, m


def test_heuristic_answers_one_token_with_the_gemv_chain_where_it_runs_the_shape():
    for shape, configs, activation in ((GPT3, ALL_CONFIGS, "gelu"), ((8192, 2752), SWIGLU_CONFIGS, "swiglu")):
        # GEMM 1 in two k-parts, GEMM 2 unsplit (session 25, call 9).
        assert tuning.heuristic_choice(1, *shape, 132, configs, activation).label == GEMV + "_sk2x1"
        # Not compiled in, or at two tokens: session 3's fused winner.
        assert tuning.heuristic_choice(1, *shape, 132, without_gemv(configs), activation).config == (
            "fused_64x128x128_s4_ws")
        assert tuning.heuristic_choice(2, *shape, 132, configs, activation).config == "fused_64x128x128_s4_ws"
    # One 32-deep k-block of GEMM 1 (H = 32) takes one part only.
    assert tuning.heuristic_choice(1, 32, 64, 132, ALL_CONFIGS).label == GEMV
    # H = 1032 is a multiple of 8, which the op takes, but not of the GEMV's 32-row tiles.
    assert tuning.heuristic_choice(1, 1032, 4128, 132, ALL_CONFIGS).config == "fused_64x128x128_s4_ws"


def test_heuristic_fallback_never_picks_a_configuration_that_cannot_run_at_m():
    available = {GEMV: GEMV_INFO, "fused_192x128x64_s4_coop": ConfigInfo(192, 128, 64, 1)}
    assert tuning.heuristic_choice(64, *GPT3, 132, available).config == "fused_192x128x64_s4_coop"
    with pytest.raises(RuntimeError, match="M=64"):
        tuning.heuristic_choice(64, *GPT3, 132, {GEMV: GEMV_INFO, "gemv_32_p8": ConfigInfo(1, 32, 32, 8)})


def test_heuristic_takes_the_nearest_measured_m_that_is_compiled_in():
    only_two = {k: ALL_CONFIGS[k] for k in ("fused_64x128x128_s4_ws", "fused_256x128x64_s4_coop")}
    # With only these two compiled in, the usable measured points are M = 1, 8 (64x128x128, two-wave splits, g4,
    # k-block waits) and 2048 (256x128, no split, g8, whole-unit wait). M = 256 is nearer 2048 than 8 on a log scale.
    assert tuning.heuristic_choice(256, *GPT3, 132, only_two).label == "fused_256x128x64_s4_coop_g8_ww"
    # M = 128 is as far from 8 as from 2048; the tie goes to the larger M.
    assert tuning.heuristic_choice(128, *GPT3, 132, only_two).label == "fused_256x128x64_s4_coop_g8_ww"
    # M = 100 is nearer 8: two waves of 2 tile rows are 3 x 2 parts (96 and 192 tiles on 132 SMs).
    assert tuning.heuristic_choice(100, *GPT3, 132, only_two).label == "fused_64x128x128_s4_ws_sk3x2_g4"
    # M = 3 is nearer 8: two waves of one tile row are 6 x 3 parts (48 and 96 tiles).
    assert tuning.heuristic_choice(3, *GPT3, 132, only_two).label == "fused_64x128x128_s4_ws_sk6x3_g4"


def test_heuristic_converts_waves_for_another_shape_and_sm_count():
    # LLaMA-like slice H = 4096, I = 1376 on a 114-SM part: one 64-row tile row; GEMM 1 has 11 column tiles,
    # GEMM 2 32; 2 waves = 228 slots -> ceil(228/11) = 21 parts but at most 4096/128/4 = 8; ceil(228/32) = 8 but at
    # most 1376 // 128 // 4 = 2.
    choice = tuning.heuristic_choice(1, 4096, 1376, 114, without_gemv(ALL_CONFIGS))
    assert (choice.config, choice.first_parts, choice.second_parts) == ("fused_64x128x128_s4_ws", 8, 2)


def test_heuristic_without_any_measured_kernel_falls_back_to_an_unsplit_one_that_fits():
    available = {"fused_192x128x64_s4_coop": ConfigInfo(192, 128, 64, 1),
                 "fused_64x64x64_s4_ws": ConfigInfo(64, 64, 64, 0)}
    choice = tuning.heuristic_choice(64, *GPT3, 132, available)
    assert (choice.config, choice.first_parts, choice.second_parts) == ("fused_192x128x64_s4_coop", 1, 1)
    with pytest.raises(RuntimeError):
        tuning.heuristic_choice(64, *GPT3, 132, {"fused_64x64x64_s4_ws": ConfigInfo(64, 64, 64, 0)})


# --- the table ---------------------------------------------------------------------------------------------------

def test_table_entry_nearest_to_m_wins_over_the_heuristic():
    entries = table(entry(1, split=(2, 2), order="row"), entry(1024, "fused_128x256x64_s4_coop", order="col"))
    first = choose(entries, 3)
    assert (first.config, first.first_parts, first.second_parts, first.producer_group_rows) == (
        "fused_64x128x128_s4_ws", 2, 2, 1)
    assert "entry for M=1" in first.source
    last = choose(entries, 700)
    assert (last.config, last.producer_group_rows) == ("fused_128x256x64_s4_coop", 0)


def test_a_gemv_entry_at_one_token_is_chosen_at_m_1_and_never_at_m_2():
    entries = table(entry(1, GEMV, order="row"), entry(8, split=(5, 3)), entry(64, "fused_64x96x128_s4_ws"))
    one = choose(entries, 1)
    assert (one.label, one.source) == (GEMV, "table: entry for M=1")
    # M = 2 is nearer 1 than 8 on a log scale, but the GEMV chain runs only at M = 1: the next entry answers.
    two = choose(entries, 2)
    assert (two.label, two.source) == ("fused_64x128x128_s4_ws_sk5x3_g8", "table: entry for M=8")
    # Without the GEMV chain compiled in, M = 1 falls to the next entry too.
    assert choose(entries, 1, available=without_gemv(ALL_CONFIGS)).source == "table: entry for M=8"


def test_a_table_with_only_a_gemv_entry_leaves_other_m_to_the_heuristic():
    entries = table(entry(1, GEMV, order="row"))
    assert choose(entries, 1).label == GEMV
    assert choose(entries, 3).source.startswith("heuristic")


def test_a_table_entry_with_a_whole_unit_wait_chooses_it():
    entries = table(entry(256, "fused_128x96x64_s6_coop", order="g8") | {"unit_wait": "whole"}, entry(1))
    assert choose(entries, 256).label == "fused_128x96x64_s6_coop_g8_ww"
    assert not choose(entries, 1).whole_unit_wait


def test_table_entries_of_another_device_shape_or_activation_are_ignored():
    entries = table(entry(64, "fused_128x256x64_s4_coop", device=("NVIDIA H200", 132)),
                    entry(64, "fused_128x256x64_s4_coop", device=(H100[0], 114)),
                    entry(64, "fused_128x256x64_s4_coop", shape=(8192, 2752)),
                    entry(64, "fused_128x256x64_s4_coop", activation="swiglu"))
    choice = choose(entries, 64)
    assert choice.source.startswith("heuristic")
    assert choice.label == "fused_64x96x128_s4_ws_g4_ww"


def test_table_entries_whose_kernel_is_not_compiled_in_are_skipped():
    entries = table(entry(64, "fused_128x256x64_s4_coop"), entry(512, "fused_256x128x64_s4_coop"))
    without = {k: v for k, v in ALL_CONFIGS.items() if k != "fused_128x256x64_s4_coop"}
    choice = choose(entries, 64, available=without)
    assert (choice.config, choice.source.endswith("entry for M=512")) == ("fused_256x128x64_s4_coop", True)


def default_fused_configuration_names(list_name):
    """The configuration names examples/gemm/CMakeLists.txt's default list `list_name` builds (its naming:
    fused_MxNxK_sS_ws|coop, then _c<rows>, _n<width>, _k<depth>, _gemm2s<stages>, _st where they differ)."""
    text = (REPO / "examples/gemm/CMakeLists.txt").read_text()
    body = text[text.index(f"set({list_name}\n"):]
    body = body[:body.index("CACHE STRING")]
    names = set()
    for config in re.findall(r'"([^"]+)"', body):
        fields = config.split(",") + [None] * 5
        m, n, k, stages, cooperative, rows, n2, epilogue, k2, stages2 = fields[:10]
        name = f"fused_{m}x{n}x{k}_s{stages}_{'coop' if cooperative == 'true' else 'ws'}"
        name += f"_c{rows}" if rows not in (None, "1") else ""
        name += f"_n{n2}" if n2 not in (None, n) else ""
        name += f"_k{k2}" if k2 not in (None, k) else ""
        name += f"_gemm2s{stages2}" if stages2 not in (None, stages) else ""
        name += "_st" if epilogue == "staged" else ""
        names.add(name)
    return names


def test_every_shipped_entry_names_a_configuration_the_library_builds_by_default():
    # An entry whose kernel is not compiled in is skipped at run time (the heuristic answers instead), so a table
    # naming a configuration the default build lacks would silently not be used. The GEMV chain is not in the
    # CUSYNC_*FUSED_CONFIGS lists: the library compiles it for both activations unconditionally.
    built = {"gelu": default_fused_configuration_names("CUSYNC_FUSED_CONFIGS") | {GEMV},
             "swiglu": default_fused_configuration_names("CUSYNC_SWIGLU_FUSED_CONFIGS") | {GEMV}}
    assert "fused_64x96x64_s10_ws_c2_n192_gemm2s6" in built["gelu"]  # the naming above, on a known default
    for e in tuning.load_table(tuning.default_table_path()):
        assert e.config in built[e.activation], (e.activation, e.m, e.config)


def test_the_shipped_table_runs_its_own_entry_at_every_measured_m():
    entries = tuning.load_table(tuning.default_table_path())
    assert {e.m for e in entries if e.activation == "gelu"} == {1, 8, 64, 128, 256, 512, 1024, 2048, 4096}
    assert {e.m for e in entries if e.activation == "swiglu"} == {1, 8, 64, 128, 256, 512, 1024, 2048, 4096}
    for e in entries:
        shape, available = ((GPT3, ALL_CONFIGS) if e.activation == "gelu"
                            else ((8192, 2752), SWIGLU_CONFIGS))
        chosen = choose(entries, e.m, available=available, shape=shape, activation=e.activation)
        assert (chosen.config, (chosen.first_parts, chosen.second_parts)) == (e.config, e.split)
        assert chosen.whole_unit_wait == (e.unit_wait == "whole")
        assert chosen.source.endswith(f"entry for M={e.m}")
    # The later standings' winners replaced session 3's where they measured the op's configurations: GPT-3 at
    # M = 128 on cuBLAS's 64-row tiles with a pipeline per GEMM (session 21).
    gpt3_128 = next(e for e in entries if e.activation == "gelu" and e.m == 128)
    assert gpt3_128.config == "fused_64x96x64_s10_ws_c2_n192_gemm2s6"
    # ... and at M = 1 the GEMV chain, unsplit, for both models (session 20).
    assert {(e.activation, e.config, e.split) for e in entries if e.m == 1} == {("gelu", GEMV, (1, 1)),
                                                                               ("swiglu", GEMV, (1, 1))}


def test_table_path_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(tuning.TABLE_ENVIRONMENT, raising=False)
    assert tuning.table_path() == tuning.default_table_path()
    monkeypatch.setenv(tuning.TABLE_ENVIRONMENT, str(tmp_path / "mine.json"))
    assert tuning.table_path() == tmp_path / "mine.json"


@pytest.mark.parametrize("document, complaint", [
    ({"entries": []}, "not a cusync tuning table"),
    ({"schema": "cusync-mlp-tuning/0", "entries": []}, "not a cusync tuning table"),
    ({"schema": tuning.SCHEMA, "entries": {}}, "must be a list"),
    ({"schema": tuning.SCHEMA, "entries": [dict(entry(1), m=0)]}, "entry 0: \"m\" must be positive"),
    ({"schema": tuning.SCHEMA, "entries": [dict(entry(1), m="1")]}, "\"m\" must be a int"),
    ({"schema": tuning.SCHEMA, "entries": [dict(entry(1), config="cuBLAS")]}, "not the name of a configuration"),
    ({"schema": tuning.SCHEMA, "entries": [dict(entry(1), config="gemv_32_r4")]}, "not the name of a configuration"),
    ({"schema": tuning.SCHEMA, "entries": [entry(1, GEMV), entry(8, GEMV)]}, "entry 1: .* runs only at M = 1"),
    ({"schema": tuning.SCHEMA, "entries": [entry(1), dict(entry(8), split=[0, 1])]}, "entry 1: \"split\""),
    ({"schema": tuning.SCHEMA, "entries": [dict(entry(1), order="zigzag")]}, "unknown tile order 'zigzag'"),
    ({"schema": tuning.SCHEMA, "entries": [dict(entry(1), activation="relu")]}, "\"activation\""),
    ({"schema": tuning.SCHEMA, "entries": [dict(entry(1), dtype="bfloat16")]}, "\"dtype\""),
    ({"schema": tuning.SCHEMA, "entries": [dict(entry(1), unit_wait="sometimes")]}, "\"unit_wait\""),
])
def test_malformed_tables_are_refused_with_the_entry_named(document, complaint):
    with pytest.raises(ValueError, match=complaint.replace("(", r"\(")):
        tuning.parse_table(document, "t.json")


def test_unreadable_or_non_json_tables_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        tuning.load_table(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        tuning.load_table(tmp_path / "bad.json")


# --- cusync-tune -------------------------------------------------------------------------------------------------

def test_tune_writes_the_fastest_correct_fused_row_per_m(tmp_path):
    csv_path = tmp_path / "fused.csv"
    csv_path.write_text(
        "M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel\n"
        "1,cuBLASLt,cuBLAS,90,0,1,0,0,0\n"                                  # a baseline: never a candidate
        "1,fused_64x128x128_s4_ws_sk6x3_g8,Fused,120,0,1,0,0,0\n"
        "1,fused_64x128x128_s4_ws_sk3x2_g8,Fused,110,0,0,0,0,0\n"           # fastest, but incorrect
        "1,fused_64x128x128_s4_ws_g8,Fused-StreamSync,100,0,1,0,0,0\n"     # not the synchronized chain
        "64,fused_256x128x64_s4_coop_sk2x1_g8,Fused,300,0,1,0,0,0\n"
        "64,fused_128x256x64_s3_coop,Fused,200,0,1,0,0,0\n")
    output = tmp_path / "table.json"
    assert tune.main([str(csv_path), "--device", "GPU X", "--sms", "100", "-o", str(output)]) == 0
    entries = tuning.load_table(output)
    assert [(e.m, e.config, e.split, e.order, e.us) for e in entries] == [
        (1, "fused_64x128x128_s4_ws", (6, 3), "g8", 120.0), (64, "fused_128x256x64_s3_coop", (1, 1), "row", 200.0)]
    assert {(e.device, e.sms, e.hidden, e.intermediate) for e in entries} == {("GPU X", 100, *GPT3)}


def test_tune_leaves_out_rows_the_op_does_not_run(tmp_path):
    # Since session 8 the example's CSV also holds skinny chains and padded SwiGLU chains as Fused rows.
    csv_path = tmp_path / "fused.csv"
    csv_path.write_text(
        "M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel\n"
        "1,gemv_32_r4,Fused,100,0,1,0,0,0\n"                                         # skinny ring: not the op's
        "1,skinny_32_r4_sk2x2,Fused,101,0,1,0,0,0\n"                                 # nor is the mma one
        "1,fused_64x128x128_s4_ws_sk5x3_g4,Fused,115,0,1,0,0,0\n"
        "512,fused_128x176x64_s4_coop_c2_n256_pad2816_g4_ww,Fused,113,0,1,0,0,0\n"  # padded: not the op's
        "512,fused_128x128x64_s6_coop_c2_g8_ww,Fused,137,0,1,0,0,0\n")
    assert tune.best_fused_rows(csv_path) == {1: (115.0, "fused_64x128x128_s4_ws_sk5x3_g4"),
                                              512: (137.0, "fused_128x128x64_s6_coop_c2_g8_ww")}


def test_tune_picks_the_gemv_chain_at_one_token_from_session_20():
    # Session 20's call 5 timed only the GEMV chain at M = 1 (unsplit and, for GPT-3, split 8 x 4): the unsplit one won.
    gpt3 = tune.best_fused_rows(LATER_GPT3_CSVS[0])
    assert gpt3[1] == (112.989, GEMV)
    assert tune.best_fused_rows(LATER_LLAMA_CSVS[0])[1] == (56.7616, GEMV)
    assert not any(label.startswith("gemv_") for m, (_, label) in gpt3.items() if m != 1)


def test_tune_takes_a_split_gemv_row_when_it_is_the_fastest(tmp_path):
    csv_path = tmp_path / "fused.csv"
    csv_path.write_text(
        "M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel\n"
        "1,gemv_32_p4,Fused,113,0,1,0,0,0\n"
        "1,gemv_32_p4_sk8x4,Fused,110,0,1,0,0,0\n"
        "1,fused_64x128x128_s4_ws_sk6x3_g4,Fused,117,0,1,0,0,0\n")
    output = tmp_path / "table.json"
    assert tune.main([str(csv_path), "--device", "GPU X", "--sms", "100", "-o", str(output)]) == 0
    assert [(e.m, e.config, e.split) for e in tuning.load_table(output)] == [(1, GEMV, (8, 4))]


def test_tune_merges_into_an_existing_table_replacing_only_what_it_measured(tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema": tuning.SCHEMA, "entries": [
        entry(1, split=(9, 9)), entry(2, split=(7, 7)), entry(1, device=("GPU X", 100))]}))
    output = tmp_path / "new.json"
    assert tune.main([str(RUN7_CSV), "--log", str(RUN7_LOG), "--merge", str(old), "-o", str(output)]) == 0
    entries = tuning.load_table(output)
    h100 = {e.m: e.split for e in entries if e.device == H100[0]}
    assert h100[1] == (6, 3) and h100[2] == (7, 7)   # M = 1 remeasured, M = 2 kept
    assert any(e.device == "GPU X" for e in entries)



def test_tune_regenerates_the_shipped_table_from_the_recorded_runs(tmp_path):
    # Session 3's call 7 for both models, then the later standings merged over it, as the shipped table was made
    # (M = 1 of both models: session 20's GEMV chain over session 3's fused chain).
    output = tmp_path / "table.json"
    device = ["--device", "NVIDIA H100 80GB HBM3", "--sms", "132"]
    llama = ["--hidden", "8192", "--intermediate", "2752", "--activation", "swiglu"]
    for csv_paths, shape in (((GPT3_CSV,), []), ((LLAMA_CSV,), llama), (LATER_GPT3_CSVS, []),
                             (LATER_LLAMA_CSVS, llama)):
        merge = ["--merge", str(output)] if output.exists() else []
        assert tune.main([*map(str, csv_paths), *device, *shape, *merge, "-o", str(output)]) == 0
    shipped = json.loads(tuning.default_table_path().read_text())
    regenerated = json.loads(output.read_text())
    for e in shipped["entries"] + regenerated["entries"]:
        e.pop("source")
    assert regenerated == shipped


def test_tune_refuses_input_without_device_or_with_a_foreign_csv(tmp_path, capsys):
    with pytest.raises(SystemExit):
        tune.main([str(RUN7_CSV), "-o", str(tmp_path / "t.json")])
    foreign = tmp_path / "torch.csv"
    foreign.write_text("M,variant,us\n1,torch-eager,100\n")
    assert tune.main([str(foreign), "--device", "X", "--sms", "1", "-o", str(tmp_path / "t.json")]) == 1
    assert "missing columns" in capsys.readouterr().err


def test_swiglu_heuristic_reproduces_the_measured_llama_winners():
    # docs/BENCHMARKS.md session 3: converted back for the LLaMA slice on 132 SMs, the SwiGLU heuristic gives exactly
    # the configurations that won (e.g. M = 1: 4x3 parts, GEMM 1's 43 tiles of [gate | up] filling one wave).
    llama = (8192, 2752)
    winners = measured_winners(LLAMA_CSV)
    assert winners[1] == "fused_64x128x128_s4_ws_sk4x3_g4_ww"
    assert winners[256] == "fused_128x128x64_s6_coop_g4_ww"
    for m, label in winners.items():  # the fused winners' table (the GEMV chain answers M = 1 first)
        assert tuning.heuristic_choice(m, *llama, 132, without_gemv(SWIGLU_CONFIGS), "swiglu").label == label, m
    # The GELU table would have split GEMM 1 as if it had I columns, not 2 I.
    assert tuning.heuristic_choice(1, *llama, 132, without_gemv(SWIGLU_CONFIGS), "gelu").label != winners[1]


def test_a_gemv_choice_is_labelled_as_the_example_labels_it_without_order_or_unit_wait():
    # The GEMV chain runs in hardware order and waits for whole k-ranges: mlp_fused_example's gemv labels carry
    # only the split, and the op's label (cusync.explain) must name the same run.
    assert tuning.Choice("gemv_32_p4", 1, 1, 8, 8, "t", True).label == "gemv_32_p4"
    assert tuning.Choice("gemv_32_p4", 8, 4, 4, 4, "t").label == "gemv_32_p4_sk8x4"
    assert tuning.parse_label(tuning.Choice("gemv_32_p4", 8, 4, 4, 4, "t").label)[:2] == ("gemv_32_p4", (8, 4))
    assert tuning.Choice("fused_64x128x128_s4_ws", 1, 1, 8, 8, "t").label == "fused_64x128x128_s4_ws_g8"


ROWS = "gemv_rows_p4"
ROWS_INFO = ConfigInfo(1, 4, 2048, 4)


def test_heuristic_answers_one_token_with_the_whole_rows_gemv_chain_where_it_is_compiled_in():
    for shape, configs, activation in ((GPT3, ALL_CONFIGS, "gelu"), ((8192, 2752), SWIGLU_CONFIGS, "swiglu")):
        with_rows = dict(configs, **{ROWS: ROWS_INFO})
        assert tuning.heuristic_choice(1, *shape, 132, with_rows, activation).label == ROWS
        # Never at two tokens; without it the 32-row GEMV chain answers as before.
        assert tuning.heuristic_choice(2, *shape, 132, with_rows, activation).config == "fused_64x128x128_s4_ws"
        assert tuning.heuristic_choice(1, *shape, 132, configs, activation).label == GEMV + "_sk2x1"
    # It takes shapes the 32-row tiles do not (H = 1032: a multiple of 8, which the op takes, not of 32).
    assert tuning.heuristic_choice(1, 1032, 4128, 132, dict(ALL_CONFIGS, **{ROWS: ROWS_INFO})).label == ROWS
    # A build where it fits no SM (blocks_per_sm 0) falls to the 32-row chain.
    assert tuning.heuristic_choice(1, *GPT3, 132, dict(ALL_CONFIGS, **{ROWS: ConfigInfo(1, 4, 2048, 0)})).label == (
        GEMV + "_sk2x1")


def test_the_whole_rows_gemv_chain_is_a_one_token_configuration_with_a_plain_label():
    assert tuning.is_gemv_chain(ROWS) and tuning.runs_at(ROWS, 1) and not tuning.runs_at(ROWS, 2)
    assert tuning.parse_label(ROWS) == (ROWS, (1, 1), "row", "kblock")
    assert tuning.Choice(ROWS, 1, 1, 8, 8, "t", True).label == ROWS
    # A table may name it at M = 1 only.
    entries = table(entry(1, ROWS, order="row"))
    assert choose(entries, 1, available=dict(ALL_CONFIGS, **{ROWS: ROWS_INFO})).label == ROWS
    with pytest.raises(ValueError, match="runs only at M = 1"):
        tuning.parse_table({"schema": tuning.SCHEMA, "entries": [dict(entry(8), config=ROWS)]}, "t.json")


ROWS_MMA = "gemv_rows_mma_p2"
# As the library reports it: 8-token, 8-row blocks, 2048-deep pieces, 2 blocks per SM (its 8-token instance).
ROWS_MMA_INFO = ConfigInfo(8, 8, 2048, 2)


def test_heuristic_answers_two_to_four_tokens_with_the_tensor_core_whole_rows_gemv_chain():
    for shape, configs, activation in ((GPT3, ALL_CONFIGS, "gelu"), ((8192, 2752), SWIGLU_CONFIGS, "swiglu")):
        available = dict(configs, **{ROWS: ROWS_INFO, ROWS_MMA: ROWS_MMA_INFO})
        for m in (2, 3, 4):
            assert tuning.heuristic_choice(m, *shape, 132, available, activation).label == ROWS_MMA
        # One token keeps the CUDA-core whole-rows chain (faster there: session 27, call 4); 5-8 the fused winner.
        assert tuning.heuristic_choice(1, *shape, 132, available, activation).label == ROWS
        for m in (5, 8, 64):
            assert not tuning.is_gemv_chain(tuning.heuristic_choice(m, *shape, 132, available, activation).config)
        # Not compiled in, or fitting no SM: the fused winner answers at 2-4 tokens as before.
        assert tuning.heuristic_choice(2, *shape, 132, configs, activation).config == "fused_64x128x128_s4_ws"
        assert tuning.heuristic_choice(2, *shape, 132, dict(configs, **{ROWS_MMA: ConfigInfo(8, 8, 2048, 0)}),
                                       activation).config == "fused_64x128x128_s4_ws"


def test_the_tensor_core_whole_rows_gemv_chain_runs_one_to_eight_tokens_and_a_table_may_name_it_there():
    assert tuning.is_gemv_chain(ROWS_MMA)
    assert [m for m in range(0, 11) if tuning.runs_at(ROWS_MMA, m)] == list(range(1, 9))
    assert tuning.parse_label(ROWS_MMA) == (ROWS_MMA, (1, 1), "row", "kblock")
    assert tuning.Choice(ROWS_MMA, 1, 1, 8, 8, "t", True).label == ROWS_MMA
    available = dict(ALL_CONFIGS, **{ROWS_MMA: ROWS_MMA_INFO})
    entries = table(entry(4, ROWS_MMA, order="row"), entry(64))
    assert choose(entries, 4, available=available).label == ROWS_MMA
    assert choose(entries, 8, available=available).label == ROWS_MMA  # nearer 4 than 64, and it runs 8 tokens
    assert choose(entries, 16, available=available).config != ROWS_MMA  # it does not run 16
    with pytest.raises(ValueError, match="runs only at M = 1-8, not at M = 16"):
        tuning.parse_table({"schema": tuning.SCHEMA, "entries": [dict(entry(16), config=ROWS_MMA)]}, "t.json")


PACKED = {"gelu": "gemv_packed_mma16_p3", "swiglu": "gemv_packed_mma16_p4"}
# As the library reports them: 16-token, 16-row blocks, 1024-deep block rounds (8 warps x 128), and the blocks per SM
# each is compiled for.
PACKED_INFO = {"gemv_packed_mma16_p3": ConfigInfo(16, 16, 1024, 3), "gemv_packed_mma16_p4": ConfigInfo(16, 16, 1024, 4)}


def test_heuristic_answers_one_to_sixteen_tokens_with_the_packed_gemv_chain_where_it_is_compiled_in():
    for shape, configs, activation in ((GPT3, ALL_CONFIGS, "gelu"), ((8192, 2752), SWIGLU_CONFIGS, "swiglu")):
        available = dict(configs, **{ROWS: ROWS_INFO, ROWS_MMA: ROWS_MMA_INFO}, **PACKED_INFO)
        # Each activation's blocks per SM: GPT-3's slice measured fastest on 3, LLaMA's on 4 (session 30, call 6;
        # session 32, call 5).
        for m in range(1, 17):
            assert tuning.heuristic_choice(m, *shape, 132, available, activation).label == PACKED[activation]
        for m in (17, 64):
            assert not tuning.is_gemv_chain(tuning.heuristic_choice(m, *shape, 132, available, activation).config)
        # Fitting no SM: the CUDA-core whole-rows chain at one token, the row-major tensor-core one at 2-4, the fused
        # winner at 5-8, as before.
        # Sizes that are not whole 16-row blocks (H = 1032 = 64 * 16 + 8): the others, as where it is not built.
        assert tuning.heuristic_choice(1, 1032, shape[1], 132, available, activation).label == ROWS
        assert tuning.heuristic_choice(3, 1032, shape[1], 132, available, activation).label == ROWS_MMA
        if activation == "gelu":
            assert tuning.heuristic_choice(3, shape[0], 2792, 132, available, activation).label == ROWS_MMA
        unfit = dict(available, **{PACKED[activation]: ConfigInfo(8, 16, 1024, 0)})
        assert tuning.heuristic_choice(1, *shape, 132, unfit, activation).label == ROWS
        assert tuning.heuristic_choice(3, *shape, 132, unfit, activation).label == ROWS_MMA
        assert not tuning.is_gemv_chain(tuning.heuristic_choice(6, *shape, 132, unfit, activation).config)


def test_only_the_packed_gemv_chains_pack_their_weights_and_they_run_one_to_sixteen_tokens():
    for packed in PACKED_INFO:
        assert tuning.packs_weights(packed) and tuning.is_gemv_chain(packed)
        assert [m for m in range(0, 20) if tuning.runs_at(packed, m)] == list(range(1, 17))
        assert tuning.parse_label(packed) == (packed, (1, 1), "row", "kblock")
        entries = table(entry(8, packed, order="row"), entry(64))
        assert choose(entries, 8, available=dict(ALL_CONFIGS, **PACKED_INFO)).label == packed
        # A table may name it at 9-16 tokens (two token tiles), not past them.
        entries = table(entry(16, packed, order="row"), entry(64))
        assert choose(entries, 12, available=dict(ALL_CONFIGS, **PACKED_INFO)).label == packed
        assert choose(entries, 17, available=dict(ALL_CONFIGS, **PACKED_INFO)).config != packed
        with pytest.raises(ValueError, match="runs only at M = 1-16, not at M = 32"):
            tuning.parse_table({"schema": tuning.SCHEMA, "entries": [dict(entry(32), config=packed)]}, "t.json")
    for other in (ROWS, ROWS_MMA, GEMV, "fused_64x128x128_s4_ws", "gemv_packed_mma_p3", "gemv_packed_mma16"):
        assert not tuning.packs_weights(other)
