// Loads inside the mainloop over k. The group is the loop body's annotated statements; the B load is itself an
// unrolled loop, and its `#pragma unroll` travels with it. Statements that are not annotated stay in place.
#include "tile_support.cuh"

__global__ void consumer(Stage stage, const float* A, const float* B, float* C, int K) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  float accumulator = 0.0f;
  for (int k = 0; k < K; k += kTileK) {
    /* B tile: four floats per thread */
#pragma tile
#pragma unroll
    for (int i = 0; i < 4; ++i) Bs[threadIdx.x * 4 + i] = B[k + threadIdx.x * 4 + i];
#pragma tile
    {
      stage.wait(k / kTileK);
      loadTile(As, A, k, kTileK);
    }
    __syncthreads();
    accumulator += As[threadIdx.x] * Bs[threadIdx.x];
    __syncthreads();
  }
  C[threadIdx.x] = accumulator;
}
