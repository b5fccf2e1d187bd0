// The GEMMs a reference computes with (the MLP references: gelu_mlp_reference.cuh, swiglu_mlp_reference.cuh):
// cuBLASLt, fast at every size, or the direct kernel of direct_gemm.cuh, which launches no library kernel, so that a
// compute-sanitizer run of an example checks only cusync's kernels and the examples' own small ones. Both compute
// D[m, n] = A[m, k] W[n, k]^T, fp16 in and out, fp32 accumulation. Host code.
#pragma once

#include <cstddef>

#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/cublas_gemm.cuh"
#include "common/direct_gemm.cuh"
#include "cusync/error.h"

namespace cusync::examples {

class ReferenceGemm {
 public:
  // cuBLASLt on `lt` with its workspace.
  ReferenceGemm(cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes)
      : lt_(lt), workspace_(workspace), workspaceBytes_(workspaceBytes) {}
  // The direct kernel: no cuBLAS call at all.
  static ReferenceGemm direct() { return ReferenceGemm(nullptr, nullptr, 0); }

  bool usesCublas() const { return lt_ != nullptr; }

  // Enqueues D = A W^T on `stream`. cuBLASLt's plan is made for the call and kept until the GEMM is done (the call
  // waits for it), as the references made theirs and kept them until their last GEMM was done.
  void run(const __half* a, const __half* w, __half* d, int m, int n, int k, cudaStream_t stream) const {
    if (!usesCublas()) {
      directGemm(a, w, d, m, n, k, stream);
      return;
    }
    const CublasLtGemm gemm(lt_, m, n, k, false, workspace_, workspaceBytes_);
    gemm.run(a, w, d, stream);
    CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  cublasLtHandle_t lt_;
  void* workspace_;
  std::size_t workspaceBytes_;
};

}  // namespace cusync::examples
