#!/usr/bin/env python3
"""torch_conv_baselines.py's logic that needs no GPU: which batches of a layer are timed together (--interleave: all
of them, in the order given; else each alone, so the rows come in the same order either way), that poisoning fills
every output with NaN, that an interleaved timing checks each chain from a replay of its own graph after poisoning
its outputs (and gives each chain its own time), and that the command line refuses --samples 0. torch is not
needed: the script is imported over empty stand-in modules and the timing functions are replaced by fakes, so this
runs on the CPU-only CI."""
import contextlib
import io
import math
import os
import sys
import types
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))


def import_without_torch():
    """torch_conv_baselines with empty modules standing in for torch (and torch_baselines' imports of it)."""
    torch = types.ModuleType("torch")
    torch.nn = types.ModuleType("torch.nn")
    torch.nn.functional = types.ModuleType("torch.nn.functional")
    stand_ins = {"torch": torch, "torch.nn": torch.nn, "torch.nn.functional": torch.nn.functional}
    with mock.patch.dict(sys.modules, stand_ins):
        sys.path.insert(0, HERE)
        try:
            sys.modules.pop("torch_conv_baselines", None)
            sys.modules.pop("torch_baselines", None)
            import torch_conv_baselines
        finally:
            sys.path.remove(HERE)
    return torch_conv_baselines


baselines = import_without_torch()


class FakeTensor:
    def __init__(self, values):
        self.values = list(values)

    def fill_(self, value):
        self.values = [value] * len(self.values)


class BatchGroupsTest(unittest.TestCase):
    def test_interleave_times_every_batch_of_a_layer_together(self):
        self.assertEqual(baselines.batch_groups([1, 2, 4, 32], interleave=True), [[1, 2, 4, 32]])

    def test_without_interleave_each_batch_is_timed_alone_in_order(self):
        self.assertEqual(baselines.batch_groups([1, 2, 4, 32], interleave=False), [[1], [2], [4], [32]])

    def test_rows_come_in_the_same_order_either_way(self):
        batches = [8, 1, 16]
        for interleave in (True, False):
            flat = [b for group in baselines.batch_groups(batches, interleave) for b in group]
            self.assertEqual(flat, batches)

    def test_groups_are_copies(self):
        batches = [1, 2]
        baselines.batch_groups(batches, interleave=True)[0].append(3)
        self.assertEqual(batches, [1, 2])


class PoisonTest(unittest.TestCase):
    def test_every_output_every_element_is_nan(self):
        outs = (FakeTensor([1.0, 2.0]), FakeTensor([3.0]))
        baselines.poison(outs)
        self.assertTrue(all(math.isnan(v) for out in outs for v in out.values))


class FakeGraph:
    """Writes `value` into its outputs when replayed."""
    def __init__(self, outs, value, log):
        self.outs, self.value, self.log = outs, value, log

    def replay(self):
        self.log.append(("replay", self.value, [list(out.values) for out in self.outs]))
        for out in self.outs:
            out.values = [self.value] * len(out.values)


class TimeAndCheckTest(unittest.TestCase):
    def setUp(self):
        self.log = []
        self.graphs = {}
        baselines.torch.cuda = types.SimpleNamespace(synchronize=lambda: self.log.append(("synchronize",)))
        self.addCleanup(delattr, baselines.torch, "cuda")

    def capture(self, fn):
        value = fn()
        outs = (FakeTensor([0.0, 0.0]),)
        graph = FakeGraph(outs, value, self.log)
        self.graphs[value] = graph
        return graph, outs

    def time_interleaved(self, graphs, samples):
        self.log.append(("timed", [g.value for g in graphs], samples))
        return [10.0 * g.value for g in graphs]

    @staticmethod
    def error(out, ref):
        return 0.0 if all(v == ref for v in out.values) else float("inf")

    def test_interleaved_chains_are_checked_from_their_own_replay_after_poison(self):
        chains = [(lambda: 1.0, (1.0,)), (lambda: 2.0, (2.0,)), (lambda: 3.0, (7.0,))]
        with mock.patch.object(baselines, "capture_graph", self.capture), \
                mock.patch.object(baselines, "time_graphs_interleaved", self.time_interleaved), \
                mock.patch.object(baselines, "relative_error", self.error):
            measured = baselines.time_and_check(chains, interleave=True, samples=5)
        self.assertEqual(measured, [(10.0, 0.0), (20.0, 0.0), (30.0, float("inf"))])
        self.assertEqual(self.log[0], ("timed", [1.0, 2.0, 3.0], 5))
        replays = [entry for entry in self.log if entry[0] == "replay"]
        self.assertEqual([entry[1] for entry in replays], [1.0, 2.0, 3.0])
        for entry in replays:  # every output NaN just before the replay the check reads
            self.assertTrue(all(math.isnan(v) for out in entry[2] for v in out))

    def test_without_interleave_each_chain_is_timed_alone(self):
        timed = []

        def time_graph(fn):
            timed.append(fn())
            return 5.0 * timed[-1], (FakeTensor([timed[-1]]),)

        chains = [(lambda: 1.0, (1.0,)), (lambda: 2.0, (3.0,))]
        with mock.patch.object(baselines, "time_graph", time_graph), \
                mock.patch.object(baselines, "relative_error", self.error):
            measured = baselines.time_and_check(chains, interleave=False, samples=5)
        self.assertEqual(timed, [1.0, 2.0])
        self.assertEqual(measured, [(5.0, 0.0), (10.0, float("inf"))])


class CommandLineTest(unittest.TestCase):
    def test_samples_must_be_positive(self):
        for bad in ("0", "-1"):
            with self.assertRaises(Exception):
                baselines.positive_int(bad)
        self.assertEqual(baselines.positive_int("3"), 3)

    def test_interleave_and_samples_are_options(self):
        stderr = io.StringIO()
        argv = ["torch_conv_baselines.py", "--csv", "x.csv", "--interleave", "--samples", "0"]
        with mock.patch.object(sys, "argv", argv), contextlib.redirect_stderr(stderr):
            with self.assertRaises(SystemExit) as exit_:
                baselines.main()
        self.assertEqual(exit_.exception.code, 2)
        self.assertIn("--samples", stderr.getvalue())


if __name__ == "__main__":
    unittest.main()
