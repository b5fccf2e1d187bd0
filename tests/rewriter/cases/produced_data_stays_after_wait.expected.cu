// A load that reads memory the waiting load reads after its wait may be reading the producer's tile: it stays below
// the wait although it contains none (hoisted, it would race with the producer). The waiting load's own wait
// arguments are read before the wait, so reading them elsewhere needs no wait; thread-private values (parameters,
// locals) and __shared__ arrays are never produced data. Loads of other memory (the weights B) still move.
// REWRITER-DIAG: produced_data_stays_after_wait.cu:21:3: warning: #pragma tile: this load stays below the waiting load at line 16: it reads '*A', which that waiting load reads after its wait (memory the wait may guard)
// REWRITER-DIAG: produced_data_stays_after_wait.cu:60:3: warning: #pragma tile: this load stays below the waiting load at line 54: it reads 'producedScale', which that waiting load reads after its wait (memory the wait may guard)
#include "tile_support.cuh"

// Both loads read the produced tile of A; only the first waits. B moves above the wait, the second read of A does
// not.
__global__ void secondReadOfProducedTile(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  __shared__ float firstRowOfA[kTileK];
#pragma tile
  loadTile(Bs, B, k, kTileK);
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
#pragma tile
  loadTile(firstRowOfA, A, k, kTileK);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x] + firstRowOfA[threadIdx.x];
}

// The wait's argument comes from memory (a tile order in global memory), read before the wait: a load that reads
// the same order moves.
__global__ void waitArgumentReadBeforeWait(Stage stage, const int* tileOrder, const float* A, const float* B,
                                           float* C, int step) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  loadTile(Bs, B, tileOrder[step] * kTileK, kTileK);
#pragma tile
  {
    stage.wait(tileOrder[step]);
    loadTile(As, A, tileOrder[step] * kTileK, kTileK);
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

// A __device__ variable is global memory a producer kernel may write: reading it after the wait makes it guarded.
__device__ float producedScale;

__global__ void globalVariableAfterWait(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  float scale = 0.0f;
  float bias = 0.0f;
#pragma tile
  loadTile(Bs, B, k, kTileK);
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
    scale = producedScale;
  }
#pragma tile
  bias = producedScale * 0.5f;
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x] * scale + bias;
}
