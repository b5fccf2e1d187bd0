#!/usr/bin/env python3
"""summarize_conv.py --partial: a CSV cut by a time limit (two layer-and-batch groups, the second missing variants)
is summarized without its last group, and says so; without --partial both groups are summarized. Writes only to a
temporary folder, removed at the end. Exit 0 when every check passes."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "conv2d", "summarize_conv.py")
HEADER = ("model,layer,size,channels,stages,batch,config,variant,passed,skipped,max_rel_err,nonfinite,median_us,"
          "tiles,waves,blocks_per_sm,sms,flops,bytes,floor_us,gemm_tflops,read_gbs")


def row(layer, batch, variant, us):
    return (f"resnet,{layer},14,256,2,{batch},64x64x64_s6_b2,{variant},1,\"\",1e-4,0,{us},100+100,0.38+0.38,2,132,"
            f"1e9,1e7,5.0,700,3000")


def run(path, *extra):
    result = subprocess.run([sys.executable, SCRIPT, path, *extra], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def main():
    complete = [row("14x14x256", 1, v, us) for v, us in
                [("StreamSync", 15.0), ("RowSync-PDL", 14.0), ("CUTLASS-stock", 15.2)]]
    cut = [row("14x14x256", 8, "StreamSync", 18.1)]  # the run stopped before the group's other variants
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "conv_time.csv")
        with open(path, "w") as handle:
            handle.write("\n".join([HEADER] + complete + cut) + "\n")
        status, text = run(path, "--partial")
        if status != 0:
            failures.append(f"--partial exited {status}: {text}")
        if "partial run: resnet 14x14x256 B = 8 left out (1 rows" not in text:
            failures.append("--partial does not say which group it left out:\n" + text)
        if "| 14x14x256 | 2 | 8 |" in text:
            failures.append("--partial kept the cut group:\n" + text)
        if "| 14x14x256 | 2 | 1 |" not in text:
            failures.append("--partial lost the complete group:\n" + text)
        status, text = run(path)
        if status != 0 or "| 14x14x256 | 2 | 8 |" not in text or "partial run" in text:
            failures.append("without --partial every group is summarized, silently:\n" + text)
        # A CSV holding only a cut group has nothing complete to show: a clear error, not an empty table.
        with open(path, "w") as handle:
            handle.write("\n".join([HEADER] + cut) + "\n")
        status, text = run(path, "--partial")
        if status == 0 or "no complete layer-and-batch group" not in text:
            failures.append(f"--partial on a CSV of one cut group: exit {status}:\n{text}")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
