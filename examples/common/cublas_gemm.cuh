// cuBLAS(Lt) GEMMs in the examples' layout: D[M,N] = act(A[M,K] * W^T), A row-major, W stored N x K row-major
// (a Linear layer's weight), D row-major. Used both as the reference and as the "cuBLAS back-to-back" baseline.
// Host code.
#pragma once

#include <stdexcept>
#include <string>

#include <cublasLt.h>
#include <cuda_fp16.h>

#include "cusync/error.h"

namespace cusync::examples {

inline void checkCublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw cusync::Error(std::string("cuBLASLt: ") + what + " failed with status " + std::to_string(int(status)));
}

// One cuBLASLt matmul (fp16 in/out, fp32 accumulate) with an optional fused GELU, planned once and run many times.
class CublasLtGemm {
 public:
  CublasLtGemm(cublasLtHandle_t handle, int m, int n, int k, bool gelu, void* workspace, std::size_t workspaceBytes)
      : handle_(handle), workspace_(workspace), workspaceBytes_(workspaceBytes) {
    // Column-major view: D^T (N x M) = W (N x K, i.e. the K x N column-major buffer transposed) * A^T (K x M).
    checkCublas(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate");
    const cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
    checkCublas(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transposed, sizeof(transposed)),
                "TRANSA");
    checkCublas(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof(plain)), "TRANSB");
    if (gelu) {
      const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU;
      checkCublas(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)),
                  "EPILOGUE");
    }
    checkCublas(cublasLtMatrixLayoutCreate(&layoutW_, CUDA_R_16F, k, n, k), "layout W");
    checkCublas(cublasLtMatrixLayoutCreate(&layoutA_, CUDA_R_16F, k, m, k), "layout A");
    checkCublas(cublasLtMatrixLayoutCreate(&layoutD_, CUDA_R_16F, n, m, n), "layout D");
    cublasLtMatmulPreference_t preference;
    checkCublas(cublasLtMatmulPreferenceCreate(&preference), "PreferenceCreate");
    checkCublas(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                     &workspaceBytes_, sizeof(workspaceBytes_)),
                "workspace preference");
    int found = 0;
    checkCublas(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, layoutW_, layoutA_, layoutD_, layoutD_, preference, 1,
                                               &heuristic_, &found),
                "AlgoGetHeuristic");
    cublasLtMatmulPreferenceDestroy(preference);
    if (found == 0) throw cusync::Error("cuBLASLt: no algorithm for this GEMM");
  }
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;
  ~CublasLtGemm() {
    cublasLtMatrixLayoutDestroy(layoutW_);
    cublasLtMatrixLayoutDestroy(layoutA_);
    cublasLtMatrixLayoutDestroy(layoutD_);
    cublasLtMatmulDescDestroy(desc_);
  }

  void run(const __half* a, const __half* w, __half* d, cudaStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;
    checkCublas(cublasLtMatmul(handle_, desc_, &alpha, w, layoutW_, a, layoutA_, &beta, d, layoutD_, d, layoutD_,
                               &heuristic_.algo, workspace_, workspaceBytes_, stream),
                "Matmul");
  }

 private:
  cublasLtHandle_t handle_;
  void* workspace_;
  std::size_t workspaceBytes_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layoutW_ = nullptr, layoutA_ = nullptr, layoutD_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

}  // namespace cusync::examples
