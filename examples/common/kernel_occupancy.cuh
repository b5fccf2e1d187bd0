// A kernel's dynamic shared-memory opt-in (once per kernel) and its blocks per SM at that size, as every hooked-GEMM
// instance (sm90, sm80, fused chain) needs before its first launch and for sizing persistent grids. Host code.
#pragma once

#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync::examples {

template <auto KernelEntry>
struct KernelOccupancy {
  // More than 48 KiB of dynamic shared memory needs an opt-in per kernel. Asked once; a failure throws and is
  // asked again next time.
  static void allowSharedMemory(int sharedBytes) {
    static const bool allowed = [&] {
      CUSYNC_CUDA_CHECK(cudaFuncSetAttribute(KernelEntry, cudaFuncAttributeMaxDynamicSharedMemorySize, sharedBytes));
      return true;
    }();
    (void)allowed;
  }

  static int maxActiveBlocksPerSm(int threadsPerBlock, int sharedBytes) {
    allowSharedMemory(sharedBytes);
    int blocks = 0;
    CUSYNC_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, KernelEntry, threadsPerBlock, sharedBytes));
    return blocks;
  }
};

}  // namespace cusync::examples
