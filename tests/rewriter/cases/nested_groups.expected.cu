// Groups nest: the waiting load of the outer group is a block that contains its own group. Both are reordered; the
// outer move carries the inner block already reordered.
#include "tile_support.cuh"

__global__ void consumer(Stage stage, const float* A, const float* B, const float* D, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  __shared__ float Ds[kTileK];
#pragma tile
  loadTile(Bs, B, k, kTileK);
#pragma tile
  {
#pragma tile
    loadTile(Ds, D, k, kTileK);
#pragma tile
    {
      stage.wait(k / kTileK);
      loadTile(As, A, k, kTileK);
    }
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x] + Ds[threadIdx.x];
}
