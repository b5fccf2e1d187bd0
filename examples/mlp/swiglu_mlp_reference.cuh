// The buffers of the LLaMA SwiGLU MLP as the fused chain runs it (S = silu(X Wgate^T) * (X Wup^T), Y = S W2^T),
// its reference (GEMM over [gate | up], the independent SwiGLU of swiglu_reference.cuh, GEMM; the GEMMs on cuBLASLt
// or on the direct kernel: common/reference_gemm.cuh) and the cuBLASLt baseline (the same two GEMMs with a
// vectorized SwiGLU kernel between them). Host and device code.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "check_then_time.h"
#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/reference_gemm.cuh"
#include "mlp_options.h"
#include "swiglu_reference.cuh"

namespace cusync::examples {

struct SwiGluMlpBuffers {
  // gateUp: [W1 | V] as a Linear layer stores it ([2I, H]); gateUpPaired: rows paired per tile for the fused chain
  // (swiglu_weight_pairing.h); gateUpOut: the baseline's GEMM-1 output [m, 2I].
  DeviceBuffer<__half> x, gateUp, gateUpPaired, w2, gateUpOut, s, y, gateUpReference, sReference, yReference;
  SwiGluMlpBuffers(int m, int hidden, int intermediate)
      : x(std::size_t(m) * hidden),
        gateUp(std::size_t(2) * intermediate * hidden),
        gateUpPaired(std::size_t(2) * intermediate * hidden),
        w2(std::size_t(hidden) * intermediate),
        gateUpOut(std::size_t(m) * 2 * intermediate),
        s(std::size_t(m) * intermediate),
        y(std::size_t(m) * hidden),
        gateUpReference(std::size_t(m) * 2 * intermediate),
        sReference(std::size_t(m) * intermediate),
        yReference(std::size_t(m) * hidden) {}
};

// The operands and references of one SwiGLU MLP, wherever its owner keeps them (the LLaMA stage-by-stage example
// holds them in buffers of its own).
struct SwiGluMlpReferenceBuffers {
  DeviceBuffer<__half>& x;                // [m, hidden], filled
  DeviceBuffer<__half>& gateUp;           // [2 * intermediate, hidden], [Wgate; Wup], filled
  DeviceBuffer<__half>& w2;               // [hidden, intermediate], filled
  DeviceBuffer<__half>& gateUpReference;  // [m, 2 * intermediate], computed
  DeviceBuffer<__half>& sReference;       // [m, intermediate], computed
  DeviceBuffer<__half>& yReference;       // [m, hidden], computed
};

// Fresh random inputs (weights scaled by 1/sqrt(K)) and the reference S and Y: GEMM (rounded to fp16), the
// independent SwiGLU of swiglu_reference.cuh (fp32 from those fp16 values, rounded to fp16), GEMM.
inline void prepareSwiGluMlpReference(const SwiGluMlpReferenceBuffers& buffers, int m, int hidden, int intermediate,
                                      std::uint64_t seed, const ReferenceGemm& gemm, cudaStream_t stream) {
  fillRandom(buffers.x, seed + 3 * m, 1.0f);
  fillRandom(buffers.gateUp, seed + 3 * m + 1, 1.0f / std::sqrt(float(hidden)));
  fillRandom(buffers.w2, seed + 3 * m + 2, 1.0f / std::sqrt(float(intermediate)));
  gemm.run(buffers.x.get(), buffers.gateUp.get(), buffers.gateUpReference.get(), m, 2 * intermediate, hidden, stream);
  swiGluReference<><<<1024, 256, 0, stream>>>(buffers.gateUpReference.get(), buffers.sReference.get(),
                                              std::size_t(m), std::size_t(intermediate));
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  gemm.run(buffers.sReference.get(), buffers.w2.get(), buffers.yReference.get(), m, hidden, intermediate, stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

inline void prepareSwiGluMlpReference(SwiGluMlpBuffers& buffers, int m, int hidden, int intermediate,
                                      std::uint64_t seed, const ReferenceGemm& gemm, cudaStream_t stream) {
  prepareSwiGluMlpReference({buffers.x, buffers.gateUp, buffers.w2, buffers.gateUpReference, buffers.sReference,
                             buffers.yReference},
                            m, hidden, intermediate, seed, gemm, stream);
}

namespace detail {
// S = silu(gate) * up over [m, 2I] -> [m, I], 8 halves (16 bytes) per thread and access: the baseline's middle
// kernel, memory-bound like any elementwise pass. `intermediate` must be a multiple of 8.
template <int = 0>
__global__ void swiGluVectorized(const __half* gateUp, __half* s, std::size_t m, std::size_t intermediate) {
  const std::size_t vectorsPerRow = intermediate / 8;
  for (std::size_t v = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; v < m * vectorsPerRow;
       v += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t row = v / vectorsPerRow, column = (v % vectorsPerRow) * 8;
    const uint4 gate = *reinterpret_cast<const uint4*>(gateUp + row * 2 * intermediate + column);
    const uint4 up = *reinterpret_cast<const uint4*>(gateUp + row * 2 * intermediate + intermediate + column);
    uint4 out;
    const __half2* g = reinterpret_cast<const __half2*>(&gate);
    const __half2* u = reinterpret_cast<const __half2*>(&up);
    __half2* o = reinterpret_cast<__half2*>(&out);
    for (int i = 0; i < 4; ++i) {
      const float2 gf = __half22float2(g[i]), uf = __half22float2(u[i]);
      o[i] = __float22half2_rn(float2{gf.x / (1.0f + __expf(-gf.x)) * uf.x, gf.y / (1.0f + __expf(-gf.y)) * uf.y});
    }
    *reinterpret_cast<uint4*>(s + row * intermediate + column) = out;
  }
}
}  // namespace detail

// cuBLASLt GEMM over [gate | up], the vectorized SwiGLU, cuBLASLt GEMM (cuBLASLt has no SwiGLU epilogue).
inline Measurement measureCublasSwiGluMlp(cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes,
                                          SwiGluMlpBuffers& buffers, int m, int hidden, int intermediate,
                                          int smCount, cudaStream_t stream, const MlpOptions& options,
                                          DeferredTimings* deferred = nullptr) {
  // Owned by the enqueue function, which a deferred timing keeps (the buffers must outlive it).
  auto gemm1 = std::make_shared<CublasLtGemm>(lt, m, 2 * intermediate, hidden, false, workspace, workspaceBytes);
  auto gemm2 = std::make_shared<CublasLtGemm>(lt, m, hidden, intermediate, false, workspace, workspaceBytes);
  const std::size_t vectors = std::size_t(m) * intermediate / 8;
  const int blocks = int(std::min<std::size_t>((vectors + 255) / 256, std::size_t(smCount) * 8));
  auto enqueue = [gemm1, gemm2, &buffers, blocks, m, intermediate](cudaStream_t s) {
    gemm1->run(buffers.x.get(), buffers.gateUp.get(), buffers.gateUpOut.get(), s);
    detail::swiGluVectorized<><<<blocks, 256, 0, s>>>(buffers.gateUpOut.get(), buffers.s.get(), std::size_t(m),
                                                      std::size_t(intermediate));
    gemm2->run(buffers.s.get(), buffers.w2.get(), buffers.y.get(), s);
  };
  return checkThenTime(enqueue, {&buffers.gateUpOut, &buffers.s}, buffers.y, buffers.yReference, stream, options,
                       deferred);
}

}  // namespace cusync::examples
