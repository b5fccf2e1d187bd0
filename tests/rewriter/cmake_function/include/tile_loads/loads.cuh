// An annotated header: rewritten on its own, found before the original through the +R target's include path.
#pragma once

struct Stage {
  unsigned* semaphores;
  __device__ void wait(int tile) const {
    if (threadIdx.x == 0)
      while (atomicAdd(&semaphores[tile], 0u) < 1u) {
      }
    __syncthreads();
  }
};

__device__ inline void loadTile(float* shared, const float* global, int offset) {
  shared[threadIdx.x] = global[offset + threadIdx.x];
}

template <int TileK>
__device__ void loadOperands(const Stage& stage, float* As, float* Bs, const float* A, const float* B, int k) {
#pragma tile
  {
    stage.wait(k / TileK);
    loadTile(As, A, k);
  }
#pragma tile
  loadTile(Bs, B, k);  // header: B
}
