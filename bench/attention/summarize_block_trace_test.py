#!/usr/bin/env python3
"""summarize_block_trace.py on a small made-up trace: blocks split into whole tiles and split-K parts, their start,
MMA and finish times, the SMs busy over time, one section per variant and stage, and the usage error without
arguments. Files live in a temporary directory that is removed afterwards."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "summarize_block_trace.py")
COLUMNS = ["variant", "configuration", "stage", "block", "sm", "tile_x", "tile_y", "part", "start_us", "waited_us",
           "done_us"]


def block(stage, number, sm, x, y, part, start, mma, done, variant="StreamSync"):
    return {"variant": variant, "configuration": "qkv 128x128", "stage": stage, "block": number, "sm": sm,
            "tile_x": x, "tile_y": y, "part": part, "start_us": start, "waited_us": mma, "done_us": done}


class SummarizeBlockTraceTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)

    def run_script(self, rows):
        path = os.path.join(self.directory.name, "trace.csv")
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        return subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True)

    def test_whole_tiles_and_split_parts(self):
        # Two whole tiles on SMs 0 and 1 (0-20 us); tile (2, 0) split in two parts after them, its last part slow to
        # post (the reduction); an output GEMM block of another stage.
        result = self.run_script([
            block("qkv", 0, 0, 0, 0, 0, 0.0, 19.0, 20.0),
            block("qkv", 1, 1, 1, 0, 0, 0.0, 19.0, 20.0),
            block("qkv", 2, 0, 2, 0, 0, 20.0, 30.0, 31.0),
            block("qkv", 3, 1, 2, 0, 1, 20.0, 30.0, 45.0),
            block("out", 4, 0, 0, 0, 0, 50.0, 55.0, 56.0),
        ])
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        qkv = next(i for i, line in enumerate(lines) if "stage qkv" in line)
        self.assertIn("4 blocks on 2 SMs", lines[qkv])
        whole = next(line for line in lines[qkv:] if line.strip().startswith("whole"))
        split = next(line for line in lines[qkv:] if line.strip().startswith("split "))
        self.assertIn("2 blocks: start     0.0 /     0.0 /     0.0 us", whole)
        self.assertIn("to last MMA   19.0 us", whole)
        self.assertIn("MMA to done   1.0 us", whole)
        # The parts: median MMA-to-post of 1 and 15 us is 8; finished at 31 and 45.
        self.assertIn("to last MMA   10.0 us", split)
        self.assertIn("MMA to done   8.0 us", split)
        self.assertIn("done    31.0 /    38.0 /    45.0 us", split)
        self.assertTrue(any("up to 2 parts a tile" in line for line in lines[qkv:]))
        # SMs busy, sampled at 0, 10, 20, 30 and 40 us: both until the first part ends at 31, then the slow last
        # part alone.
        busy = next(line for line in lines[qkv:] if "SMs busy" in line)
        self.assertTrue(busy.endswith(": 2 2 2 2 1"), busy)
        out = next(i for i, line in enumerate(lines) if "stage out" in line)
        self.assertIn("1 blocks on 1 SMs", lines[out])

    def test_variants_are_summarized_apart(self):
        result = self.run_script([
            block("qkv", 0, 0, 0, 0, 0, 0.0, 9.0, 10.0),
            block("qkv", 0, 3, 0, 0, 0, 0.0, 19.0, 20.0, variant="Strided+TileSync+PDL"),
        ])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.count("stage qkv"), 2)
        self.assertIn("StreamSync [qkv 128x128] stage qkv", result.stdout)
        self.assertIn("Strided+TileSync+PDL [qkv 128x128] stage qkv", result.stdout)

    def test_no_arguments_is_a_usage_error(self):
        result = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("Usage", result.stdout)


if __name__ == "__main__":
    unittest.main()
