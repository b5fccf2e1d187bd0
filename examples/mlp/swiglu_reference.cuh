// The reference SwiGLU the LLaMA example checks against: S = silu(gate) * up, one element per thread, exact expf,
// deliberately independent of the SwiGLU stage kernel (swiglu_stage.cuh): no tiles, no vectors, no semaphores.
// Device code; include from a .cu file.
#pragma once

#include <cstddef>

#include <cuda_fp16.h>

namespace cusync::examples {

// gateUp: [m, 2 * intermediate] (gate, then up), s: [m, intermediate]; both row-major.
template <int = 0>
__global__ void swiGluReference(const __half* gateUp, __half* s, std::size_t m, std::size_t intermediate) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < m * intermediate;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t row = i / intermediate, column = i % intermediate;
    const float gate = __half2float(gateUp[row * 2 * intermediate + column]);
    const float up = __half2float(gateUp[row * 2 * intermediate + intermediate + column]);
    s[i] = __float2half(gate / (1.0f + expf(-gate)) * up);
  }
}

}  // namespace cusync::examples
