// A wait written as a lambda is named by its variable: --wait-function=waitForA matches `waitForA(k)`. Loads
// written as lambdas are opaque callables (a barrier) unless the command line names them.
// REWRITER-ARGS: --wait-function=waitForA --args-only-function=loadB
#include "tile_support.cuh"

__global__ void consumer(Stage stage, const float* A, const float* B, float* C, int K) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  auto waitForA = [&](int k) { stage.wait(k / kTileK); };
  auto loadB = [](float* shared, const float* global, int k) { loadTile(shared, global, k, kTileK); };
  float accumulator = 0.0f;
  for (int k = 0; k < K; k += kTileK) {
#pragma tile
    {
      waitForA(k);
      loadTile(As, A, k, kTileK);
    }
#pragma tile
    loadB(Bs, B, k);
    __syncthreads();
    accumulator += As[threadIdx.x] * Bs[threadIdx.x];
    __syncthreads();
  }
  C[threadIdx.x] = accumulator;
}
