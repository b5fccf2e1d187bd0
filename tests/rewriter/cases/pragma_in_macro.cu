// `_Pragma("tile")` produced by a macro is not supported: a warning at the macro use, and nothing moves.
// REWRITER-EXPECT: unchanged
// REWRITER-DIAG: pragma_in_macro.cu:16:3: warning: #pragma tile produced by a macro expansion (_Pragma) is not supported
#include "tile_support.cuh"

#define TILE_LOAD(statement) _Pragma("tile") statement

__global__ void consumer(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
  TILE_LOAD(loadTile(Bs, B, k, kTileK);)
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}
