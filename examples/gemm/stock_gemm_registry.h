// CUTLASS's stock sm90 persistent GEMMs, unmodified, as a baseline for the hooked kernels: what CUTLASS itself
// reaches with a tile shape, cluster and schedule, so that a gap between a hooked kernel and cuBLAS can be split into
// "CUTLASS's kernel design" and "what the hooks cost". Same layouts as the examples (A row-major M x K, B stored
// N x K, D row-major; fp16 in and out, fp32 accumulation; GELU or identity fused in the epilogue). Each configuration
// lives in its own translation unit (stock_gemm_instance.cuh) and registers itself here; host programs do not
// include CUTLASS. Host header.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemm_registry.h"  // Activation

namespace cusync::examples {

// One GEMM of fixed problem: d = act(a * b^T). Its arguments are checked (CUTLASS's can_implement) when built.
class StockGemm {
 public:
  virtual ~StockGemm() = default;
  virtual void run(const __half* a, const __half* b, __half* d, cudaStream_t stream) = 0;
};

struct StockGemmEntry {
  std::string name;  // e.g. cutlass_128x256x64_c2x1_coop
  // Throws cusync::Error (naming the configuration and CUTLASS's status) when CUTLASS cannot implement the problem.
  std::function<std::unique_ptr<StockGemm>(int m, int n, int k, Activation activation)> make;
  // Swapped: D is column-major, so the caller computes a layer's y = act(x w^T) transposed, y^T = act(w x^T):
  // make(features, tokens, k) and run(w, x, y) leave y row-major [tokens, features]. The weights' rows are then the
  // tile's long side and the tokens its short one, as cuBLAS's GEMMs at M = 1 have them (docs/BENCHMARKS.md).
  bool swapped = false;
};

std::vector<StockGemmEntry>& stockGemmRegistry();

struct StockGemmRegistration {
  explicit StockGemmRegistration(StockGemmEntry entry) { stockGemmRegistry().push_back(std::move(entry)); }
};

}  // namespace cusync::examples
