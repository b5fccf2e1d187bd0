// The stress tests' element check: counts elements of `out` that are not finite or differ from `ref` by more than
// 0.02 + 0.05 |ref| (fp16 operands, fp32 sums in another order than the reference's; an unposted read shows as the
// NaN the test poisoned the buffer with). Adds the count to *bad, so one graph can accumulate many executions.
// countMismatchesOverReplays is the loop every chain stress test runs around it. Device and host code; include from
// a .cu file.
#pragma once

#include <cstddef>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "cusync/error.h"

namespace cusync::examples {

// A template so that a header can define it (see wait_kernel.cuh).
template <int = 0>
__global__ void countMismatches(const __half* out, const __half* ref, std::size_t count, unsigned long long* bad) {
  unsigned long long mine = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float o = __half2float(out[i]), r = __half2float(ref[i]);
    if (!(fabsf(o - r) <= 0.02f + 0.05f * fabsf(r))) ++mine;
  }
  if (mine) atomicAdd(bad, mine);
}

// Captures `perGraph` calls of `executeAndCheck(stream)` (one poisoned chain execution and the countMismatches
// launches that check it, into `mismatches`) in a CUDA graph, replays it `replays` times without resetting any
// counter or semaphore between executions, and returns the mismatched elements over all of them (0: every execution
// correct). `mismatches` holds one counter, zeroed here.
template <class ExecuteAndCheck>
unsigned long long countMismatchesOverReplays(DeviceBuffer<unsigned long long>& mismatches, cudaStream_t stream,
                                              int perGraph, long long replays, ExecuteAndCheck&& executeAndCheck) {
  CUSYNC_CUDA_CHECK(cudaMemset(mismatches.get(), 0, mismatches.bytes()));
  timeWithGraph(
      [&](cudaStream_t s) {
        executeAndCheck(s);
        CUSYNC_CUDA_CHECK(cudaGetLastError());
      },
      stream, perGraph, 0, int(replays));
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  unsigned long long bad = 0;
  CUSYNC_CUDA_CHECK(cudaMemcpy(&bad, mismatches.get(), sizeof(bad), cudaMemcpyDeviceToHost));
  return bad;
}

}  // namespace cusync::examples
