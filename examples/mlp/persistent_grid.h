// The grid of a persistent GEMM stage: one wave of blocks at the kernel's occupancy, never more blocks than work
// units (more would only draw stop tickets). Host code.
#pragma once

#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

#include "cusync/error.h"
#include "cusync/stage.cuh"
#include "gemm_registry.h"

namespace cusync::examples {

// Sets `stage` up for `kernel`: persistent kernels get min(work units, SMs x occupancy) blocks; others none.
inline void setPersistentGrid(Stage& stage, const GemmKernelEntry& kernel) {
  if (!kernel.persistent) {
    stage.setPersistentBlocks(0);
    return;
  }
  int device = 0, multiprocessors = 0;
  CUSYNC_CUDA_CHECK(cudaGetDevice(&device));
  CUSYNC_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  const std::uint32_t slots = std::uint32_t(multiprocessors) * std::uint32_t(kernel.maxActiveBlocksPerSm());
  stage.setPersistentBlocks(std::min(slots, stage.workUnitsPerLaunch()));
}

}  // namespace cusync::examples
