// Loads that declare their results. A declaration moves up when the statements it crosses do not use its name; a
// declaration that would hide a variable the waiting load uses stays, with a warning.
// REWRITER-DIAG: declarations.cu:30:3: warning: #pragma tile: this load stays below the waiting load at line 24: it declares 'scale', which would hide the 'scale' used by that waiting load
#include "tile_support.cuh"

__global__ void moves(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
#pragma tile
  const float b = B[k + threadIdx.x];
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * b;
}

__device__ float scale;

__global__ void hides(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
    As[threadIdx.x] *= scale;
  }
#pragma tile
  const float scale = B[k + threadIdx.x];
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * scale;
}
