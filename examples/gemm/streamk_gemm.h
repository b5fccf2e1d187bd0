// The "CUTLASS Stream-K back to back" baseline: CUTLASS's stock sm90 cooperative GEMM with its Stream-K tile
// scheduler, unmodified, in the examples' layout (A row-major, B stored N x K, D row-major; fp16 in/out, fp32
// accumulation; GELU or identity fused in the epilogue). Host header; the kernels live in streamk_gemm.cu.
#pragma once

#include <memory>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemm_registry.h"
#include "stock_gemm_registry.h"  // StockGemm

namespace cusync::examples {

class StreamKGemm {
 public:
  StreamKGemm(int m, int n, int k, Activation activation);
  ~StreamKGemm();
  StreamKGemm(const StreamKGemm&) = delete;
  StreamKGemm& operator=(const StreamKGemm&) = delete;

  // Initializes the Stream-K workspace (its reduction barriers) on `stream` and launches: capturable into a CUDA
  // graph and right on every replay (a single initialization for many runs leaves stale barriers: docs/GPU_NOTES.md).
  void run(const __half* a, const __half* b, __half* d, cudaStream_t stream);

 private:
  std::unique_ptr<StockGemm> implementation_;  // stock_gemm_instance.cuh's, under the Stream-K scheduler
};

}  // namespace cusync::examples
