// A kernel's dynamic shared-memory opt-in (raised to the largest size asked for) and its blocks per SM at a size,
// as every hooked-GEMM instance (sm90, sm80, fused chain) needs before its first launch and for sizing persistent
// grids. Host code.
#pragma once

#include <atomic>
#include <mutex>

#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync::examples {

template <auto KernelEntry>
struct KernelOccupancy {
  // More than 48 KiB of dynamic shared memory needs an opt-in per kernel. The attribute is a maximum, so it is set
  // again whenever a caller needs more than it was last set to (a kernel launched with several sizes would
  // otherwise be refused every size above its first: the reference attention kernel was, session 12); a failure
  // throws and leaves the last maximum. Callers may be on several host threads (the PyTorch op).
  static void allowSharedMemory(int sharedBytes) {
    static std::atomic<int> allowed{0};
    if (sharedBytes <= allowed.load(std::memory_order_acquire)) return;  // every launch but the first few
    static std::mutex raising;
    const std::lock_guard<std::mutex> lock(raising);
    if (sharedBytes <= allowed.load(std::memory_order_relaxed)) return;
    CUSYNC_CUDA_CHECK(cudaFuncSetAttribute(KernelEntry, cudaFuncAttributeMaxDynamicSharedMemorySize, sharedBytes));
    allowed.store(sharedBytes, std::memory_order_release);
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
