// With --werror a load that cannot move fails the run: exit status 1, nothing written.
// REWRITER-ARGS: --werror
// REWRITER-EXIT: 1
// REWRITER-DIAG: werror.cu:19:3: warning: #pragma tile: this load stays below the waiting load at line 13: it reads 'offset', which that waiting load writes
// REWRITER-DIAG: cusync-tile-rewriter: error: 1 warning(s) with --werror; nothing was written
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
