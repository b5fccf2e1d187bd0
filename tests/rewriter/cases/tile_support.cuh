// Stand-ins for the cusync runtime used by the golden cases. The rewriter recognizes waits by name (`wait`) and
// infers from loadTile's body that it accesses memory only through its arguments.
#pragma once

struct Stage {
  unsigned* semaphores;

  // Spins until producer tile `tile` has been posted once, then releases the block.
  __device__ void wait(int tile) const {
    if (threadIdx.x == 0)
      while (atomicAdd(&semaphores[tile], 0u) < 1u) {
      }
    __syncthreads();
  }
};

// Copies `count` floats from global memory at `offset` into shared memory, one per thread per step.
__device__ inline void loadTile(float* shared, const float* global, int offset, int count) {
  for (int i = threadIdx.x; i < count; i += blockDim.x) shared[i] = global[offset + i];
}

constexpr int kTileK = 128;
