// A group in which no load calls a known wait function (here the wait is `acquireTile`, and no --wait-function names
// it) has nothing to reorder: the file comes back unchanged, with a warning at the group's first pragma instead of
// silence.
// REWRITER-EXPECT: unchanged
// REWRITER-DIAG: group_without_wait.cu:18:1: warning: #pragma tile: no load of this group waits, so nothing is reordered: none calls a wait function ('blockWait', 'spinUntilReached', 'wait', 'waitThread', 'waitThreadCached'), directly or through a function whose body does; name yours with --wait-function
#include "tile_support.cuh"

__device__ void acquireTile(unsigned* semaphores, int tile) {
  if (threadIdx.x == 0)
    while (atomicAdd(&semaphores[tile], 0u) < 1u) {
    }
  __syncthreads();
}

__global__ void consumer(unsigned* semaphores, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  {
    acquireTile(semaphores, k / kTileK);
    loadTile(As, A, k, kTileK);
  }
#pragma tile
  loadTile(Bs, B, k, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}
