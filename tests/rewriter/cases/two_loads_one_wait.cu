// Two tile loads, one wait: the load of B (no wait) is issued before the wait on A's producer tile.
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
  loadTile(Bs, B, k, kTileK);  // B is a weight: nobody produces it
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}
