// The buffers of a GELU MLP pair (GPT-3's: XW1 = GELU(X W1^T), Y = XW1 W2^T) and its reference: fresh random
// inputs, then GEMM, GELU (cusync/gelu.cuh: GPT-3's tanh form, or erf in a CUSYNC_GELU_ERF build), GEMM, the GEMMs
// on cuBLASLt or on the direct kernel (reference_gemm.cuh). Shared by the GPT-3 MLP examples and the sm_80 GEMM
// check. Host and device code.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "common/reference_gemm.cuh"
#include "cusync/error.h"
#include "cusync/gelu.cuh"

namespace cusync::examples {

struct GeluMlpBuffers {
  DeviceBuffer<__half> x, w1, w2, xw1, y, xw1Reference, yReference;
  GeluMlpBuffers(int m, int hidden, int intermediate)
      : x(std::size_t(m) * hidden),
        w1(std::size_t(intermediate) * hidden),
        w2(std::size_t(hidden) * intermediate),
        xw1(std::size_t(m) * intermediate),
        y(std::size_t(m) * hidden),
        xw1Reference(std::size_t(m) * intermediate),
        yReference(std::size_t(m) * hidden) {}
};

namespace detail {
// A template so that a header can define it (see wait_kernel.cuh).
template <int = 0>
__global__ void geluInPlace(__half* data, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = __half2float(data[i]);
    data[i] = __float2half(geluReference(v));  // gelu.cuh: the form every kernel here computes
  }
}
}  // namespace detail

// Fills X, W1 and W2 with fresh random values (weights scaled by 1/sqrt(K)) and computes XW1 and Y's references:
// the GEMM rounds X W1^T to fp16, GELU reads that, computes in fp32 and rounds to fp16 again (whichever GEMM runs).
inline void prepareGeluMlpReference(GeluMlpBuffers& buffers, int m, int hidden, int intermediate, std::uint64_t seed,
                                    const ReferenceGemm& gemm, cudaStream_t stream) {
  fillRandom(buffers.x, seed + 3 * m, 1.0f);
  fillRandom(buffers.w1, seed + 3 * m + 1, 1.0f / std::sqrt(float(hidden)));
  fillRandom(buffers.w2, seed + 3 * m + 2, 1.0f / std::sqrt(float(intermediate)));
  gemm.run(buffers.x.get(), buffers.w1.get(), buffers.xw1Reference.get(), m, intermediate, hidden, stream);
  detail::geluInPlace<><<<1024, 256, 0, stream>>>(buffers.xw1Reference.get(), buffers.xw1Reference.size());
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  gemm.run(buffers.xw1Reference.get(), buffers.w2.get(), buffers.yReference.get(), m, hidden, intermediate, stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace cusync::examples
