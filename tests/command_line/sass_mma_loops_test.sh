#!/usr/bin/env bash
# scripts/sass_mma_loops.py on a fixture of two kernels in cuobjdump -sass form: one whose wgmma loop runs on the
# uniform datapath, one whose loop moves its descriptors through R2UR and whose barrier wait retries out of line
# (a backward branch from past the loop into it, which is not a loop). Needs only python3.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tool="$root/scripts/sass_mma_loops.py"
fixture="$root/tests/command_line/sass_mma_loops_fixture.sass"
fail() { echo "FAIL: $*"; exit 1; }
out=$(python3 "$tool" --sass "$fixture" --require-uniform); rc=$?
[ $rc -eq 1 ] || fail "--require-uniform with an R2UR loop exited $rc, not 1"
grep -q "loop at instruction 1: 6 instructions, 2 HGMMA, 0 R2UR, 2 uniform$" <<<"$out" ||
  fail "the uniform loop was not reported as such: $out"
grep -q "loop at instruction 1: 8 instructions, 1 HGMMA, 2 R2UR, 0 uniform  <- off the uniform datapath" <<<"$out" ||
  fail "the R2UR loop was not reported as off the uniform datapath: $out"
[ "$(grep -c "loop at" <<<"$out")" -eq 2 ] || fail "the out-of-line wait retry was counted as a loop: $out"
python3 "$tool" --sass "$fixture" --kernel uniform_loop --require-uniform >/dev/null ||
  fail "--require-uniform failed on a kernel whose loop is uniform"
python3 "$tool" --sass "$fixture" --kernel no_such_kernel >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "a --kernel matching nothing exited $rc, not 2"
err=$(python3 "$tool" --sass "$fixture" --kernel "(" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "a --kernel that is no regular expression exited $rc, not 2"
grep -q "is not a regular expression" <<<"$err" || fail "a bad --kernel gave no clear error: $err"
python=$(python3 -c "import sys; print(sys.executable)")  # the interpreter itself, not a PATH shim
err=$(env PATH=/nonexistent "$python" "$tool" "$fixture" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "cuobjdump is not on PATH" <<<"$err" || fail "no cuobjdump: exit $rc, '$err'"
python3 "$tool" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no input exited $rc, not 2"
python3 "$tool" --sass "$root/no/such/file.sass" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "an unreadable input exited $rc, not 2"
echo "sass_mma_loops: uniform and R2UR loops told apart, wait retries not counted, bad input exit 2"
