// Names declared in a statement's own inner scope (a for-init, a block, a lambda) end with that statement: two
// copy loops that each declare their own `i` change places freely, and so does a load whose top-level `i` the
// crossed loop shadows with its own. A top-level declaration that would hide a name the crossed statement takes from
// outside (here through a lambda's capture) still stays, with a warning.
// REWRITER-DIAG: loop_scoped_declarations.cu:50:5: warning: #pragma tile: this load stays below the waiting load at line 44: it declares 'bias', which would hide the 'bias' used by that waiting load
#include "tile_support.cuh"

__global__ void ownLoopCounters(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  for (int i = threadIdx.x; i < kTileK; i += blockDim.x) Bs[i] = B[k + i];
#pragma tile
  {
    stage.wait(k / kTileK);
    for (int i = threadIdx.x; i < kTileK; i += blockDim.x) As[i] = A[k + i];
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

__global__ void crossedLoopShadowsDeclaration(Stage stage, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
#pragma tile
  const int i = int(B[k + threadIdx.x]);
#pragma tile
  {
    stage.wait(k / kTileK);
    for (int i = threadIdx.x; i < kTileK; i += blockDim.x) {
      const float value = A[k + i];
      As[i] = value;
    }
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * float(i);
}

__global__ void lambdaCapturesHiddenName(Stage stage, const float* A, const float* B, float* C, int K) {
  __shared__ float As[kTileK];
  const float bias = C[0];
  float accumulator = 0.0f;
  for (int k = 0; k < K; k += kTileK) {
#pragma tile
    {
      stage.wait(k / kTileK);
      auto biased = [=](int i) { return A[k + i] + bias; };
      for (int i = threadIdx.x; i < kTileK; i += blockDim.x) As[i] = biased(i);
    }
#pragma tile
    const float bias = B[k + threadIdx.x];
    __syncthreads();
    accumulator += As[threadIdx.x] * bias;
    __syncthreads();
  }
  C[threadIdx.x] = accumulator;
}
