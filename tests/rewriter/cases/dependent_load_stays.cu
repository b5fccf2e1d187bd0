// The load of B uses an offset that the waiting block computes, so it must not move above it: the file is left
// unchanged and the warning says which variable and where it is written.
// REWRITER-EXPECT: unchanged
// REWRITER-DIAG: dependent_load_stays.cu:18:3: warning: #pragma tile: this load stays below the waiting load at line 12: it reads 'offset', which that waiting load writes
#include "tile_support.cuh"

__global__ void consumer(Stage stage, const float* A, const float* B, const int* rowOffsets, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  int offset = 0;
#pragma tile
  {
    stage.wait(k / kTileK);
    offset = rowOffsets[k / kTileK];
    loadTile(As, A, k, kTileK);
  }
#pragma tile
  loadTile(Bs, B, offset, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}
