#!/usr/bin/env python3
"""summarize_conv.py on small made-up CSVs: the best configuration per variant, the speed-ups over StreamSync, the
CUTLASS stock kernels and cuDNN, the floor from the measured or the given ceilings, failed rows marked and reported
in the exit status, old CSVs (torch without a model column joined as ResNet; conv without stock rows), a run cut by
its time limit (--partial), and bad input refused. Files live in a temporary directory that is
removed afterwards."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "summarize_conv.py")
CONV_COLUMNS = ["model", "layer", "size", "channels", "stages", "batch", "config", "variant", "passed", "skipped",
                "max_rel_err", "nonfinite", "median_us", "tiles", "waves", "blocks_per_sm", "sms", "flops", "bytes",
                "floor_us", "gemm_tflops", "read_gbs"]


def conv_row(variant, config, us, model="resnet", batch=1, passed=1, skipped=""):
    return {"model": model, "layer": "56x56x64", "size": 56, "channels": 64, "stages": 2, "batch": batch,
            "config": config, "variant": variant, "passed": passed, "skipped": skipped, "max_rel_err": 1e-3,
            "nonfinite": 0, "median_us": us, "tiles": "49+49", "waves": "0.37+0.37" if config[0] == "6" else "0.19+0.19",
            "blocks_per_sm": 1, "sms": 132, "flops": 1e9, "bytes": 4e6, "floor_us": 2.5, "gemm_tflops": 700,
            "read_gbs": 3000}


def write(path, rows, columns):
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


class SummarizeConvTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)

    def path(self, name):
        return os.path.join(self.directory.name, name)

    def run_script(self, rows, torch_rows=None, extra=()):
        write(self.path("conv.csv"), rows, CONV_COLUMNS)
        command = [sys.executable, SCRIPT, self.path("conv.csv"), "--csv", self.path("summary.csv"), *extra]
        if torch_rows is not None:
            write(self.path("torch.csv"), torch_rows, list(torch_rows[0].keys()))
            command += ["--torch", self.path("torch.csv")]
        result = subprocess.run(command, capture_output=True, text=True)
        summary = []
        if os.path.exists(self.path("summary.csv")):
            with open(self.path("summary.csv"), newline="") as handle:
                summary = list(csv.DictReader(handle))
        return result, summary

    def test_best_configuration_per_variant_and_speedups(self):
        rows = [conv_row("StreamSync", "64x64x64_s4_b1", 12.0), conv_row("StreamSync", "128x64x64_s6_b1", 10.0),
                conv_row("RowSync-PDL", "64x64x64_s4_b1", 8.0), conv_row("RowSync-PDL", "128x64x64_s6_b1", 9.0),
                conv_row("TileSync", "64x64x64_s4_b1", 11.0)]
        torch_rows = [{"model": "resnet", "layer": "56x56x64", "size": 56, "channels": 64, "stages": 2, "batch": 1,
                       "variant": "cuDNN (torch)", "us": 16.0, "relative_error": 1e-3, "correct": 1}]
        result, summary = self.run_script(rows, torch_rows)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(summary), 1)
        row = summary[0]
        self.assertEqual(float(row["StreamSync_us"]), 10.0)
        self.assertEqual(row["StreamSync_config"], "128x64x64_s6_b1")
        self.assertEqual(row["best_cusync"], "RowSync-PDL")
        self.assertEqual(row["RowSync-PDL_config"], "64x64x64_s4_b1")
        self.assertAlmostEqual(float(row["speedup_vs_streamsync"]), 1.25)
        self.assertAlmostEqual(float(row["speedup_vs_cudnn"]), 2.0)
        self.assertEqual(row["waves_streamsync"], "0.19+0.19")
        self.assertEqual(row["waves_cusync"], "0.37+0.37")
        self.assertEqual(float(row["floor_us"]), 2.5)  # the example's measured floor
        self.assertIn("### resnet", result.stdout)
        self.assertIn("**8.0 (64x64x64_s4_b1)**", result.stdout)  # the fastest cell is bold

    def test_cutlass_stock_is_a_baseline_not_a_cusync_variant(self):
        rows = [conv_row("StreamSync", "64x64x64_s4_b1", 12.0), conv_row("RowSync-PDL", "64x64x64_s4_b1", 10.0),
                conv_row("CUTLASS-stock", "64x64x64_s4_b1", 9.0), conv_row("CUTLASS-stock", "128x64x64_s6_b1", 8.0),
                conv_row("CUTLASS-stock-PDL", "64x64x64_s4_b1", 8.5)]
        result, summary = self.run_script(rows)
        self.assertEqual(result.returncode, 0, result.stderr)
        row = summary[0]
        self.assertEqual(row["best_cusync"], "RowSync-PDL")  # a faster stock kernel does not win as cusync
        self.assertAlmostEqual(float(row["speedup_vs_streamsync"]), 1.2)
        self.assertEqual(float(row["CUTLASS-stock_us"]), 8.0)
        self.assertEqual(row["CUTLASS-stock_config"], "128x64x64_s6_b1")
        self.assertEqual(float(row["CUTLASS-stock-PDL_us"]), 8.5)
        self.assertEqual(row["best_stock"], "CUTLASS-stock")
        self.assertAlmostEqual(float(row["speedup_vs_stock"]), 0.8)  # best stock 8.0 over best cusync 10.0
        self.assertIn("CUTLASS stock / best cusync", result.stdout)
        self.assertIn("**8.0 (128x64x64_s6_b1)**", result.stdout)  # the fastest cell, a baseline's, is bold

    def test_csv_without_stock_rows_leaves_its_columns_empty(self):
        result, summary = self.run_script([conv_row("StreamSync", "64x64x64_s4_b1", 12.0),
                                           conv_row("TileSync", "64x64x64_s4_b1", 10.0)])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(summary[0]["CUTLASS-stock_us"], "")
        self.assertEqual(summary[0]["best_stock"], "")
        self.assertEqual(summary[0]["speedup_vs_stock"], "")

    def test_failed_stock_row_fails_like_any_other(self):
        rows = [conv_row("StreamSync", "64x64x64_s4_b1", 12.0),
                conv_row("CUTLASS-stock-PDL", "64x64x64_s4_b1", 0, passed=0)]
        result, summary = self.run_script(rows)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(summary[0]["CUTLASS-stock-PDL_us"], "FAILED")

    def test_floor_from_given_ceilings(self):
        result, summary = self.run_script([conv_row("StreamSync", "64x64x64_s4_b1", 12.0)],
                                          extra=["--tflops", "100", "--gbps", "1000"])
        self.assertEqual(result.returncode, 0, result.stderr)
        # max(1e9 / 100e12, 4e6 / 1000e9) s = max(10, 4) us
        self.assertAlmostEqual(float(summary[0]["floor_us"]), 10.0)

    def test_failed_row_is_marked_and_fails_the_exit_status(self):
        rows = [conv_row("StreamSync", "64x64x64_s4_b1", 12.0),
                conv_row("TileSync", "64x64x64_s4_b1", 0, passed=0)]
        result, summary = self.run_script(rows)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(summary[0]["TileSync_us"], "FAILED")
        self.assertIn("SOME ROWS FAILED", result.stdout)

    def test_refused_row_is_marked_but_a_timed_configuration_wins(self):
        rows = [conv_row("StreamSync", "64x64x64_s4_b1", 12.0),
                conv_row("StreamSync", "128x128x64_s5_b1", 0, passed=0, skipped="CUTLASS cannot implement")]
        result, summary = self.run_script(rows)
        self.assertEqual(result.returncode, 1)  # a refused chain is a failure of the example too
        self.assertEqual(float(summary[0]["StreamSync_us"]), 12.0)

    def test_old_torch_csv_without_model_joins_as_resnet(self):
        torch_rows = [{"size": 56, "channels": 64, "batch": 1, "variant": "cuDNN (torch)", "us": 24.0,
                       "relative_error": 1e-3, "correct": 1}]
        result, summary = self.run_script([conv_row("RowSync", "64x64x64_s4_b1", 12.0)], torch_rows)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertAlmostEqual(float(summary[0]["speedup_vs_cudnn"]), 2.0)

    def test_w_variant_and_split_configurations(self):
        rows = [conv_row("StreamSync", "64x64x64_s4_b1", 12.0), conv_row("StreamSync", "64x64x64_s4_b1_k8+8", 9.0),
                conv_row("TileSync-W", "64x64x64_s4_b1", 8.0), conv_row("RowSync-W", "64x64x64_s4_b1_k8+8", 6.0),
                conv_row("TileSync-W", "64x64x64_s4_b1_k16+16", 0, skipped="not applicable: 600 blocks, 132 slots")]
        result, summary = self.run_script(rows)
        self.assertEqual(result.returncode, 0, result.stderr)  # a W chain that does not apply is not a failure
        row = summary[0]
        self.assertEqual(row["StreamSync_config"], "64x64x64_s4_b1_k8+8")  # a split is searched as a configuration
        self.assertEqual(row["best_cusync"], "RowSync-W")
        self.assertAlmostEqual(float(row["speedup_vs_streamsync"]), 1.5)
        self.assertEqual(float(row["TileSync-W_us"]), 8.0)
        self.assertIn("**6.0 (64x64x64_s4_b1_k8+8)**", result.stdout)

    def test_w_variant_that_never_applies_is_marked_n_a(self):
        rows = [conv_row("StreamSync", "64x64x64_s4_b1", 12.0),
                conv_row("RowSync-W", "64x64x64_s4_b1", 0, skipped="not applicable: 300 blocks, 132 slots")]
        result, summary = self.run_script(rows)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(summary[0]["RowSync-W_us"], "n/a")
        self.assertEqual(summary[0]["best_cusync"], "")

    def test_partial_run_leaves_out_its_last_group_and_says_so(self):
        # A timing run cut by its step limit: the B = 8 group lacks the variants the run did not reach.
        rows = [conv_row("StreamSync", "64x64x64_s4_b1", 12.0), conv_row("RowSync-PDL", "64x64x64_s4_b1", 10.0),
                conv_row("StreamSync", "64x64x64_s4_b1", 20.0, batch=8)]
        result, summary = self.run_script(rows, extra=("--partial",))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("partial run: resnet 56x56x64 B = 8 left out (1 rows", result.stdout)
        self.assertEqual([int(row["batch"]) for row in summary], [1])
        # Without --partial every group is summarized, and nothing is said.
        result, summary = self.run_script(rows)
        self.assertEqual([int(row["batch"]) for row in summary], [1, 8])
        self.assertNotIn("partial run", result.stdout)

    def test_partial_run_without_a_complete_group_is_refused(self):
        result, _ = self.run_script([conv_row("StreamSync", "64x64x64_s4_b1", 20.0, batch=8)], extra=("--partial",))
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no complete layer-and-batch group", result.stderr)

    def test_missing_columns_and_files_are_refused(self):
        write(self.path("bad.csv"), [{"model": "resnet"}], ["model"])
        result = subprocess.run([sys.executable, SCRIPT, self.path("bad.csv")], capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("lacks the column(s)", result.stderr)
        result = subprocess.run([sys.executable, SCRIPT, self.path("none.csv")], capture_output=True, text=True)
        self.assertIn("cannot read", result.stderr)
        result = subprocess.run([sys.executable, SCRIPT, self.path("bad.csv"), "--tflops", "1"], capture_output=True,
                                text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--tflops and --gbps go together", result.stderr)


if __name__ == "__main__":
    unittest.main()
