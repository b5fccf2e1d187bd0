// The cuBLASLt baseline of the GELU MLP (GEMM with cuBLASLt's GELU epilogue, then GEMM, back to back), measured
// like every other variant (checkThenTime). Shared by mlp_example and mlp_fused_example. Host header.
#pragma once

#include <cstddef>
#include <memory>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "check_then_time.h"
#include "common/cublas_gemm.cuh"
#include "common/gelu_mlp_reference.cuh"
#include "mlp_options.h"

namespace cusync::examples {

// cuBLASLt's GELU epilogue computes the tanh approximation (as torch._addmm_activation, which calls it, documents),
// the reference's form by default (cusync/gelu.cuh); in a CUSYNC_GELU_ERF build the checked bound covers the
// difference from the reference's exact GELU.
inline Measurement measureCublasGeluMlp(cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes,
                                        GeluMlpBuffers& buffers, int m, int hidden, int intermediate,
                                        cudaStream_t stream, const MlpOptions& options,
                                        DeferredTimings* deferred = nullptr) {
  // Owned by the enqueue function, which a deferred timing keeps (the buffers must outlive it).
  auto gemm1 = std::make_shared<CublasLtGemm>(lt, m, intermediate, hidden, true, workspace, workspaceBytes);
  auto gemm2 = std::make_shared<CublasLtGemm>(lt, m, hidden, intermediate, false, workspace, workspaceBytes);
  auto enqueue = [gemm1, gemm2, &buffers](cudaStream_t s) {
    gemm1->run(buffers.x.get(), buffers.w1.get(), buffers.xw1.get(), s);
    gemm2->run(buffers.xw1.get(), buffers.w2.get(), buffers.y.get(), s);
  };
  return checkThenTime(enqueue, {&buffers.xw1}, buffers.y, buffers.yReference, stream, options, deferred);
}

}  // namespace cusync::examples
