// Three tile loads, two of them waiting (A and D come from producers): the load of B moves before both waits, and
// the two waiting loads keep their order, each wait staying immediately before its own load.
#include "tile_support.cuh"

__global__ void consumer(Stage producerOfA, Stage producerOfD, const float* A, const float* B, const float* D,
                         float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  __shared__ float Ds[kTileK];
  // B needs no wait
#pragma tile
  loadTile(Bs, B, k, kTileK);
#pragma tile
  {
    producerOfA.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
#pragma tile
  {
    producerOfD.wait(k / kTileK);
    loadTile(Ds, D, k, kTileK);
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x] + Ds[threadIdx.x];
}
