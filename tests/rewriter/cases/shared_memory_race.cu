// A load that writes a __shared__ tile and moves above a wait also moves above the wait's block barrier. Without a
// __syncthreads() after the multiply-accumulate, that barrier is what keeps the next iteration's load of Bs from
// racing with other threads still reading Bs: the load stays. With the barrier (second kernel), it moves.
// REWRITER-DIAG: shared_memory_race.cu:18:5: warning: #pragma tile: this load stays below the waiting load at line 13: it writes __shared__ 'Bs', which line 20 accesses with no __syncthreads() in between
#include "tile_support.cuh"

__global__ void noTrailingBarrier(Stage stage, const float* A, const float* B, float* C, int K) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  float accumulator = 0.0f;
  for (int k = 0; k < K; k += kTileK) {
#pragma tile
    {
      stage.wait(k / kTileK);
      loadTile(As, A, k, kTileK);
    }
#pragma tile
    loadTile(Bs, B, k, kTileK);
    __syncthreads();
    accumulator += As[(threadIdx.x + 1) % kTileK] * Bs[(threadIdx.x + 1) % kTileK];
  }
  C[threadIdx.x] = accumulator;
}

__global__ void trailingBarrier(Stage stage, const float* A, const float* B, float* C, int K) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  float accumulator = 0.0f;
  for (int k = 0; k < K; k += kTileK) {
#pragma tile
    {
      stage.wait(k / kTileK);
      loadTile(As, A, k, kTileK);
    }
#pragma tile
    loadTile(Bs, B, k, kTileK);
    __syncthreads();
    accumulator += As[(threadIdx.x + 1) % kTileK] * Bs[(threadIdx.x + 1) % kTileK];
    __syncthreads();
  }
  C[threadIdx.x] = accumulator;
}
