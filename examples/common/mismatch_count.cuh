// The stress tests' element check: counts elements of `out` that are not finite or differ from `ref` by more than
// 0.02 + 0.05 |ref| (fp16 operands, fp32 sums in another order than the reference's; an unposted read shows as the
// NaN the test poisoned the buffer with). Adds the count to *bad, so one graph can accumulate many executions.
// Device code; include from a .cu file.
#pragma once

#include <cstddef>

#include <cuda_fp16.h>

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

}  // namespace cusync::examples
