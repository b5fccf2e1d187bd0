// Calls whose effects the rewriter cannot see are barriers: `prefetchOpaque` has no visible body, so the first
// kernel keeps its order and says why. Annotated `cusync_args_only` (second kernel) or `cusync_pure` (third), the
// same shapes are reordered.
// REWRITER-DIAG: unknown_calls.cu:21:3: warning: #pragma tile: this load stays below the waiting load at line 16: it calls 'prefetchOpaque', which has no visible definition
#include "tile_support.cuh"

__device__ void prefetchOpaque(float* shared, const float* global, int offset);
__device__ __attribute__((annotate("cusync_args_only"))) void prefetchAnnotated(float* shared, const float* global,
                                                                                  int offset);
__device__ __attribute__((annotate("cusync_pure"))) int swizzle(int k);

__global__ void opaque(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
#pragma tile
  prefetchOpaque(Bs, B, k);
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

__global__ void annotated(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  prefetchAnnotated(Bs, B, k);
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

__global__ void pure(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  loadTile(Bs, B, swizzle(k), kTileK);
#pragma tile
  {
    stage.wait(k / kTileK);
    loadTile(As, A, k, kTileK);
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}
