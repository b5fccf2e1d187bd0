// With --line-directives, moved chunks carry `#line` directives with their original line numbers, the group is
// followed by the next original line, and the file starts with `#line 1`: diagnostics point at this file.
// REWRITER-ARGS: --line-directives
#include "tile_support.cuh"

__global__ void consumer(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
#pragma tile
  loadTile(Bs, B, k, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}
