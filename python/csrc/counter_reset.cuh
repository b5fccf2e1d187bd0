// Zeroes a few arrays of 32-bit counters in one small kernel: what the MLP op's plan runs before each fused-chain
// launch (mlp_plan.h says why). Device code with a host launcher; include from one .cu file.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync::python {

inline constexpr int kMaxCounterArrays = 4;

struct CounterArrays {
  std::uint32_t* words[kMaxCounterArrays] = {};
  std::uint32_t counts[kMaxCounterArrays] = {};
  int arrays = 0;

  void add(std::uint32_t* pointer, std::uint32_t count) {
    if (pointer == nullptr || count == 0) return;
    if (arrays == kMaxCounterArrays) throw Error("cusync mlp: more counter arrays to reset than the kernel takes");
    words[arrays] = pointer;
    counts[arrays] = count;
    ++arrays;
  }
};

// One block: the arrays are a few thousand words at most (a semaphore per GEMM-1 tile, an arrival counter per
// split tile, one ticket counter), so launch latency, not bandwidth, is the cost.
__global__ void zeroCounters(CounterArrays arrays) {
  for (int a = 0; a < arrays.arrays; ++a)
    for (std::uint32_t i = threadIdx.x; i < arrays.counts[a]; i += blockDim.x) arrays.words[a][i] = 0;
}

inline constexpr int kCounterResetThreads = 256;

// Returns the launch's status rather than reading cudaGetLastError, which would also report (and clear) an error
// some other library left behind.
inline cudaError_t enqueueCounterReset(const CounterArrays& arrays, cudaStream_t stream) {
  CounterArrays copy = arrays;
  void* parameters[] = {&copy};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&zeroCounters), dim3(1), dim3(kCounterResetThreads),
                          parameters, 0, stream);
}

// Loads the kernel now (lazy module loading would otherwise load it at the first launch, which may be inside a
// stream capture).
inline void loadCounterResetKernel() {
  cudaFuncAttributes attributes{};
  CUSYNC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&zeroCounters)));
}

}  // namespace cusync::python
