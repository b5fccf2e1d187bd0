// --wait-function names the calls that wait (replacing the default `wait`): here a free function
// `acquireProducerTile`, called inside a helper: a statement that calls a function whose body waits is a waiting
// load too.
// REWRITER-ARGS: --wait-function=acquireProducerTile
#include "tile_support.cuh"

__device__ void acquireProducerTile(const unsigned* semaphores, int tile) {
  if (threadIdx.x == 0)
    while (atomicAdd(const_cast<unsigned*>(&semaphores[tile]), 0u) < 1u) {
    }
  __syncthreads();
}

__device__ void waitAndLoad(const unsigned* semaphores, float* shared, const float* global, int k) {
  acquireProducerTile(semaphores, k / kTileK);
  loadTile(shared, global, k, kTileK);
}

__global__ void consumer(const unsigned* semaphores, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  waitAndLoad(semaphores, As, A, k);
#pragma tile
  loadTile(Bs, B, k, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}
