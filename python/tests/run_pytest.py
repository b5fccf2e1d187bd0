#!/usr/bin/env python3
"""Runs one pytest file for ctest and maps its outcome to exit codes ctest understands: 77 (SKIP_RETURN_CODE) when
pytest is not installed or when no test ran (every test skipped itself: no torch, no GPU, no library), so that a
suite that tested nothing is reported as skipped and never as passed; otherwise pytest's own code (0 passed,
1 failed, ...).

Usage: run_pytest.py TEST_FILE [pytest arguments...]
"""
import sys

SKIPPED = 77


class OutcomeCounter:
    """pytest plugin: counts the outcomes of the test calls (not of set-up and tear-down)."""

    def __init__(self):
        self.ran = 0
        self.skipped = 0

    def pytest_runtest_logreport(self, report):
        if report.skipped:
            self.skipped += 1
        elif report.when == "call":
            self.ran += 1


def main(argv):
    try:
        import pytest
    except ImportError:
        print("pytest is not installed: skipped")
        return SKIPPED
    counter = OutcomeCounter()
    code = int(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", *argv], plugins=[counter]))
    if code not in (int(pytest.ExitCode.OK), int(pytest.ExitCode.NO_TESTS_COLLECTED)):
        return code
    if counter.ran == 0:
        print(f"no test ran ({counter.skipped} skipped): reported as skipped")
        return SKIPPED
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
