"""cusync-tune: a tuning table (docs/PYTORCH_OP.md) from mlp_fused_example's measurements.

    mlp_fused_example --m 1,8,64,... --csv fused.csv > fused.log      # on the GPU, as scripts/device_fused.sh does
    cusync-tune fused.csv --log fused.log -o table.json [--merge old.json]
    CUSYNC_TUNING_TABLE=table.json python3 my_model.py

With --example mlp_example or mlp_llama_example it writes the MLP examples' table instead (schema
cusync-mlp-example-tuning/1, cusync/example_tuning.py) from their exhaustive search:

    mlp_example --search --csv gpt3.csv | tee gpt3.log                 # on the GPU
    cusync-tune --example mlp_example gpt3.csv --log gpt3.log -o examples/mlp/tuning_table.json \
        --merge examples/mlp/tuning_table.json

Per M, the entry is the fastest *correct* row of variant "Fused" (the tile-synchronized chain: what the op runs; one
launch, or at M = 1 the GEMV chain's two); the stream-ordered rows and the baselines are not candidates. The device
name and SM count come from the example's log (its first line) or from --device/--sms; the model shape from
--hidden/--intermediate (the example's fixed GPT-3 slice by default). Nothing is measured here: the table holds
what the CSV says, with the time and the source file in every entry.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys

from . import example_tuning, tuning

GPT3_HIDDEN, GPT3_INTERMEDIATE = 12288, 6144  # mlp_fused_example's MlpShape (fused_mlp_main.cu)
_DEVICE_LINE = re.compile(r"^device: (?P<name>.+), (?P<sms>\d+) SMs;")


def device_from_log(path) -> tuple:
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            match = _DEVICE_LINE.match(line)
            if match:
                return match["name"], int(match["sms"])
    raise ValueError(f"{path}: no 'device: NAME, N SMs;' line (mlp_fused_example's first line)")


def best_fused_rows(csv_path) -> dict:
    """M -> (microseconds, config label) of the fastest correct Fused row per M, among the configurations the op
    runs: the fused chains and the GEMV chains as a launch per GEMM (gemv_*_p*, any split; at M = 1, and
    gemv_rows_mma_p* at M = 1-8, gemv_packed_mma16_p* at 1-16).
    mlp_fused_example also reports other skinny chains (gemv_*_r*, gemv_*_s*, skinny_*, M <= 8) and chains on
    zero-padded SwiGLU intermediates (_pad*) under the Fused variant; the op runs none of them, so they are left out."""
    best = {}
    with open(csv_path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = {"M", "config", "variant", "us", "correct"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{csv_path}: not an mlp_fused_example CSV (missing columns {sorted(missing)})")
        for row in reader:
            if row["variant"] != "Fused" or row["correct"] != "1":
                continue
            try:
                tuning.parse_label(row["config"])
            except ValueError:
                continue  # not a configuration of the op (above)
            m, us = int(row["M"]), float(row["us"])
            if m not in best or us < best[m][0]:
                best[m] = (us, row["config"])
    return best


def entries_from_csv(csv_path, device: str, sms: int, hidden: int, intermediate: int, activation: str) -> list:
    entries = []
    for m, (us, label) in sorted(best_fused_rows(csv_path).items()):
        config, split, order, unit_wait = tuning.parse_label(label)
        entry = {"device": device, "sms": sms, "hidden": hidden, "intermediate": intermediate,
                 "activation": activation, "dtype": "float16", "m": m, "config": config, "split": list(split),
                 "order": order}
        if unit_wait != "kblock":
            entry["unit_wait"] = unit_wait
        entries.append(dict(entry, us=us, source=str(csv_path)))
    return entries


def _key(entry: dict) -> tuple:
    return tuple(entry[k] for k in ("device", "sms", "hidden", "intermediate", "activation", "m"))


def merge(old: list, new: list) -> list:
    """Old entries, with those of a (device, shape, M) the new ones cover replaced."""
    replaced = {_key(e) for e in new}
    return [e for e in old if _key(e) not in replaced] + new


def format_table(document: dict) -> str:
    """JSON with one entry per line, so that a table reads (and diffs) as one line per measured M."""
    lines = [json.dumps(entry) for entry in document["entries"]]
    return ('{\n "schema": ' + json.dumps(document["schema"]) + ',\n "entries": [\n  '
            + ",\n  ".join(lines) + "\n ]\n}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="cusync-tune", description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+", help="mlp_fused_example (or --example's) --csv output(s)")
    parser.add_argument("--example", choices=sorted(example_tuning.EXAMPLES),
                        help="write the MLP examples' table from this example's --search CSV (not the op's)")
    parser.add_argument("--log", help="the example's stdout, for the device name and SM count")
    parser.add_argument("--device", help="device name as torch.cuda.get_device_name reports it")
    parser.add_argument("--sms", type=int, help="SM count of the device")
    parser.add_argument("--hidden", type=int, default=GPT3_HIDDEN)
    parser.add_argument("--intermediate", type=int, default=GPT3_INTERMEDIATE)
    parser.add_argument("--activation", default="gelu", choices=tuning.ACTIVATIONS)
    parser.add_argument("--merge", help="an existing table whose other entries are kept")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    try:
        device, sms = (args.device, args.sms)
        if args.log:
            device, sms = device_from_log(args.log)
        if not device or not sms:
            parser.error("the device needs --log, or both --device and --sms")
        if args.example:
            return _write_example_table(args, device, sms)
        new = []
        for path in args.csv:
            new = merge(new, entries_from_csv(path, device, sms, args.hidden, args.intermediate, args.activation))
        old = []
        if args.merge:
            tuning.load_table(args.merge)  # refuses a malformed table before anything is written
            with open(args.merge, encoding="utf-8") as handle:
                old = json.load(handle)["entries"]
        document = {"schema": tuning.SCHEMA, "entries": merge(old, new)}
        tuning.parse_table(document, args.output)  # what is written must load
    except (OSError, ValueError) as error:
        print(f"cusync-tune: {error}", file=sys.stderr)
        return 1
    with open(args.output, "w", encoding="utf-8") as handle:
        handle.write(format_table(document))
    print(f"cusync-tune: {len(new)} entries for {device} ({sms} SMs), H={args.hidden}, I={args.intermediate}, "
          f"{args.activation} -> {args.output} ({len(document['entries'])} in all)")
    for entry in new:
        split = "x".join(map(str, entry["split"]))
        print(f"  M={entry['m']:6d}  {entry['config']:28s} split {split:5s} order {entry['order']:5s} "
              f"{entry.get('unit_wait', 'kblock'):6s} wait {entry['us']:9.1f} us")
    return 0


def _write_example_table(args, device: str, sms: int) -> int:
    model = example_tuning.EXAMPLES[args.example]
    try:
        new = []
        for path in args.csv:
            new = example_tuning.merge(new, example_tuning.entries_from_csv(path, model, device, sms))
        if not new:
            raise ValueError(f"no correct tile-synchronized row in {', '.join(args.csv)} "
                             "(run the example with --search)")
        old = example_tuning.load_entries(args.merge) if args.merge else []
        entries = example_tuning.merge(old, new)
        example_tuning.parse_table({"schema": example_tuning.SCHEMA, "entries": entries}, args.output)
    except (OSError, ValueError) as error:
        print(f"cusync-tune: {error}", file=sys.stderr)
        return 1
    with open(args.output, "w", encoding="utf-8") as handle:
        handle.write(example_tuning.format_table(entries))
    print(f"cusync-tune: {len(new)} entries for {device} ({sms} SMs), {model} -> {args.output} "
          f"({len(entries)} in all)")
    for entry in new:
        split = "x".join(map(str, entry["split"]))
        stream = entry.get("stream_sync", {}).get("us")
        print(f"  M={entry['m']:6d}  {entry['variant']:24s} {entry['config']:26s} split {split:5s} "
              f"order {entry['order']:6s} {entry['us']:9.1f} us"
              + (f"  (StreamSync {stream:.1f} us)" if stream else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
