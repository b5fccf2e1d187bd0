// Annotated statements inside a kernel template and written through macros. The template is rewritten once, in
// its pattern (dependent calls are resolved through their candidates); a macro that expands to a whole statement
// moves as its invocation; the wait itself may come from a macro.
#include "tile_support.cuh"

#define WAIT_AND_LOAD(stage, shared, global, k) \
  {                                             \
    (stage).wait((k) / TileK);                  \
    loadTile(shared, global, k, TileK);         \
  }
#define LOAD_TILE(shared, global, k) loadTile(shared, global, k, TileK)

template <int TileK, class StageType>
__global__ void consumer(StageType stage, const float* A, const float* B, float* C, int K) {
  __shared__ float As[TileK];
  __shared__ float Bs[TileK];
  float accumulator = 0.0f;
  for (int k = 0; k < K; k += TileK) {
#pragma tile
    LOAD_TILE(Bs, B, k);
#pragma tile
    WAIT_AND_LOAD(stage, As, A, k)
    __syncthreads();
    accumulator += As[threadIdx.x] * Bs[threadIdx.x];
    __syncthreads();
  }
  C[threadIdx.x] = accumulator;
}

template __global__ void consumer<kTileK, Stage>(Stage, const float*, const float*, float*, int);
