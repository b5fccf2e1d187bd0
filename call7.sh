#!/usr/bin/env bash
# Session 30, call 7 (issue 12): (1) the MLP example, M = 1, 2, 3, 4, 8, both models: the 16-row packed GEMV chains
# (gemv_packed_mma16_p3 / _p4) beside gemv_rows_mma_p2 and gemv_rows_p4 and cuBLASLt, interleaved in one process;
# (2) the PyTorch op on them: build, the op's tests, python/bench_mlp_op.py at M = 1, 2, 3, 4, 8 beside torch eager,
# torch.compile and (M = 1, 8) max-autotune in the same process; (3) the MLP stress.
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; mkdir -p "$out"; work=/tmp/w7; rm -rf $work; mkdir -p $work
export CUSYNC_FUSED_CONFIGS="64,128,128,4,false" CUSYNC_SWIGLU_FUSED_CONFIGS="64,128,128,4,false"
start=$(date +%s)
mv .cutlass/examples /tmp/cutlass_examples_hidden 2>/dev/null
source scripts/device_configure.sh
device_gpu_line
{ device_configure build-gpu >/dev/null &&
  cmake --build build-gpu --target mlp_fused_example mlp_skinny_stress -j 16; } \
  >$work/build.log 2>&1 || { grep -E "error" $work/build.log | head -8 | cut -c1-400; }
mv /tmp/cutlass_examples_hidden .cutlass/examples 2>/dev/null
echo "example build: $(( $(date +%s) - start )) s"
mlp=build-gpu/examples/mlp/mlp_fused_example
for model in gpt3 llama; do
  timeout 100 $mlp --model $model --m 1,2,3,4,8 --configs gemv_rows_mma_p2,gemv_packed_mma16_p3,gemv_packed_mma16_p4,gemv_rows_p4 \
    --skinny-splits 1x1 --variants cuBLAS,Fused,Fused-StreamSync --interleave --warmup-ms 500 --samples 11 \
    --csv $work/${model}_small_m.csv >$work/${model}_small_m.log 2>&1
  echo "mlp $model: rc $? at $(( $(date +%s) - start )) s; $(grep -cE 'FAILED|incorrect' $work/${model}_small_m.log) failed"
done
STEPS=build OUT=$work/op bash scripts/device_torch_op.sh 2>&1 | grep -E "library build|package|error" | head -4
STEPS=test TEST_TIMEOUT_S=150 OUT=$work/op bash scripts/device_torch_op.sh 2>&1 | grep -E "pytest|FAILED|ERROR" | head -12
echo "op tests done at $(( $(date +%s) - start )) s"
STEPS=bench BENCH_M=1,2,3,4,8 BENCH_ARGS="--autotune-m 1,8" BENCH_TIMEOUT_S=170 OUT=$work/op bash scripts/device_torch_op.sh 2>&1 | tail -22
left=$(( 560 - ($(date +%s) - start) ))
timeout $(( left > 30 ? left : 30 )) build-gpu/examples/mlp/mlp_skinny_stress --executions 30000 >$work/mlp_stress.txt 2>&1
echo "mlp stress: rc $? ($(grep -c ' 0 mismatched' $work/mlp_stress.txt) runs clean, $(grep -c FAILED $work/mlp_stress.txt) failed, $(grep -c 'gemv_packed_mma16.*executions' $work/mlp_stress.txt) packed runs)"
tar czf "$out/raw.tgz" -C $work --exclude=build.log --exclude=op/build.log .
for model in gpt3 llama; do
  echo "== mlp $model (M config variant us)"
  grep -v "^M," $work/${model}_small_m.csv | sort -t, -k1,1n -k4,4n | cut -d, -f1-4 | awk -F, '{printf "%s %-26s %-17s %7.1f\n",$1,$2,$3,$4}' | grep -v StreamSync
done
echo "total $(( $(date +%s) - start )) s"
