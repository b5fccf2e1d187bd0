// Loads through views: a pointer or tensor view returned by a call on an object (`sharedA(0)`) designates what that
// object reaches. Copies through distinct views move; a load of B into A's view stays, with a warning.
// REWRITER-DIAG: views_through_calls.cu:36:3: warning: #pragma tile: this load stays below the waiting load at line 31: it reads 'sharedA', which that waiting load writes
#include "tile_support.cuh"

struct TileView {
  float* base;
  int stride;
  __device__ float* operator()(int tile) const { return base + tile * stride; }
};

__device__ void copyTile(const float* source, float* destination) {
  destination[threadIdx.x] = source[threadIdx.x];
}

__global__ void distinctViews(Stage stage, TileView globalA, TileView globalB, TileView sharedA, TileView sharedB,
                              float* C, int k) {
#pragma tile
  copyTile(globalB(k), sharedB(0));
#pragma tile
  {
    stage.wait(k);
    copyTile(globalA(k), sharedA(0));
  }
  __syncthreads();
  C[threadIdx.x] = sharedA(0)[threadIdx.x] * sharedB(0)[threadIdx.x];
}

__global__ void sameView(Stage stage, TileView globalA, TileView globalB, TileView sharedA, float* C, int k) {
#pragma tile
  {
    stage.wait(k);
    copyTile(globalA(k), sharedA(0));
  }
#pragma tile
  copyTile(globalB(k), sharedA(1));
  __syncthreads();
  C[threadIdx.x] = sharedA(0)[threadIdx.x] * sharedA(1)[threadIdx.x];
}
