// Without --wait-function the rewriter knows the cusync runtime's own waits by name: cusync::blockWait,
// InputView::waitThread, waitThreadCached and spinUntilReached (stand-ins with the runtime's signatures here; the
// demo test rewrites against the real runtime). In each kernel the load of B moves above the wait for A.
#include <cstdint>

#include "tile_support.cuh"

namespace cusync {
struct TileCoord {
  std::uint32_t x, y, z;
};
struct InputView {
  const std::uint32_t* producerSemaphores;
  __device__ void waitThread(TileCoord producerTile, std::uint32_t iteration) const {
    while (atomicAdd(const_cast<std::uint32_t*>(&producerSemaphores[producerTile.x]), 0u) < iteration + 1) {
    }
  }
};
struct SatisfiedSemaphoreCache {
  std::uint32_t last;
};
__device__ void waitThreadCached(const InputView& input, SatisfiedSemaphoreCache& cache, TileCoord producerTile,
                                 std::uint32_t iteration) {
  input.waitThread(producerTile, iteration);
  cache.last = producerTile.x;
}
__device__ void spinUntilReached(const std::uint32_t* semaphore, std::uint32_t target) {
  while (atomicAdd(const_cast<std::uint32_t*>(semaphore), 0u) < target) {
  }
}
__device__ void blockWait(const InputView& input, TileCoord producerTile, std::uint32_t iteration) {
  if (threadIdx.x == 0) input.waitThread(producerTile, iteration);
  __syncthreads();
}
}  // namespace cusync

__global__ void blockWaitConsumer(cusync::InputView input, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
#pragma tile
  loadTile(Bs, B, k, kTileK);
#pragma tile
  {
    cusync::blockWait(input, cusync::TileCoord{std::uint32_t(k / kTileK), 0, 0}, 0);
    loadTile(As, A, k, kTileK);
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

// The one-thread waits serve kernels in which one thread issues the loads (as a TMA producer warp does).
__device__ void copyTile(float* shared, const float* global, int offset) {
  for (int i = 0; i < kTileK; ++i) shared[i] = global[offset + i];
}

__global__ void waitThreadConsumer(cusync::InputView input, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  if (threadIdx.x == 0) {
#pragma tile
    copyTile(Bs, B, k);
#pragma tile
    {
      input.waitThread(cusync::TileCoord{std::uint32_t(k / kTileK), 0, 0}, 0);
      copyTile(As, A, k);
    }
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

__global__ void waitThreadCachedConsumer(cusync::InputView input, const float* A, const float* B, float* C, int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  cusync::SatisfiedSemaphoreCache seen{0};
  if (threadIdx.x == 0) {
#pragma tile
    copyTile(Bs, B, k);
#pragma tile
    {
      waitThreadCached(input, seen, cusync::TileCoord{std::uint32_t(k / kTileK), 0, 0}, 0);
      copyTile(As, A, k);
    }
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}

__global__ void spinUntilReachedConsumer(const std::uint32_t* semaphores, const float* A, const float* B, float* C,
                                         int k) {
  __shared__ float As[kTileK];
  __shared__ float Bs[kTileK];
  if (threadIdx.x == 0) {
#pragma tile
    copyTile(Bs, B, k);
#pragma tile
    {
      cusync::spinUntilReached(&semaphores[k / kTileK], 1);
      copyTile(As, A, k);
    }
  }
  __syncthreads();
  C[threadIdx.x] = As[threadIdx.x] * Bs[threadIdx.x];
}
