// What an MLP chain reads and writes, shared by the fused chains (fused_mlp.h) and the skinny chains
// (skinny_mlp.cuh). Host header.
#pragma once

#include <cuda_fp16.h>

namespace cusync::examples {

// What an MLP chain reads and writes: X [m, hidden]; W1 [GEMM 1's columns, hidden] (GELU: [intermediate, hidden];
// SwiGLU: gate and up rows paired per tile, [2 * intermediate, hidden]); the intermediate [m, intermediate]
// (GELU(X W1^T) or S); W2 [hidden, intermediate]; Y [m, hidden].
struct MlpOperands {
  const __half* x = nullptr;
  const __half* w1 = nullptr;
  __half* intermediate = nullptr;
  const __half* w2 = nullptr;
  __half* y = nullptr;
};

}  // namespace cusync::examples
