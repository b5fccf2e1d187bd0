// A file without `#pragma tile` is never changed, even with a wait followed by a load the rewriter could move.
// REWRITER-EXPECT: unchanged
// REWRITER-ARGS: --line-directives
#include "tile_support.cuh"

__global__ void consumer(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
  loadTile(Bs, B, k, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}
