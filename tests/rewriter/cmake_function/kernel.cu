// A kernel source with its own group, and a call into the annotated header.
#include <cstdio>

#include "tile_loads/loads.cuh"

__global__ void consumer(Stage stage, const float* A, const float* B, const float* D, float* C, int K) {
  __shared__ float As[128], Bs[128], Ds[128], Es[128];
  float accumulator = 0.0f;
  for (int k = 0; k < K; k += 128) {
    loadOperands<128>(stage, As, Bs, A, B, k);
#pragma tile
    {
      stage.wait(k / 128);
      loadTile(Ds, A, k);
    }
#pragma tile
    loadTile(Es, D, k);  // source: D
    __syncthreads();
    accumulator += As[threadIdx.x] * Bs[threadIdx.x] + Ds[threadIdx.x] * Es[threadIdx.x];
    __syncthreads();
  }
  C[threadIdx.x] = accumulator;
}

int main() {
  std::printf("built\n");
  return 0;
}
