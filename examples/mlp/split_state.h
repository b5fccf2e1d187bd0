// The split-K buffers of one GEMM stage (split_k_reduction.hpp): fp32 partials and one zeroed arrival counter per
// tile, allocated when the stage's tiles are split. Shared by the fused chains (FusedMlpChain, fused_mlp.h, which the
// PyTorch op's plans wrap) and the hooked-GEMM stages of the stage-by-stage MLPs (GemmStage, mlp_harness.h). Host
// header; include from a .cu file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "cusync/error.h"
#include "cusync/stage.cuh"
#include "gemm_registry.h"

namespace cusync::examples {

struct SplitState {
  std::unique_ptr<DeviceBuffer<float>> partials;
  std::unique_ptr<DeviceBuffer<std::uint32_t>> arrivals;
  // Sets the stage's parts per tile; allocates only when it has more than one.
  SplitState(Stage& stage, const GemmTileShape& tile, std::uint32_t parts) {
    stage.setBlocksPerTile(parts);
    if (parts <= 1) return;
    partials = std::make_unique<DeviceBuffer<float>>(std::size_t(stage.grid().tileCount()) * parts * tile.m * tile.n);
    arrivals = std::make_unique<DeviceBuffer<std::uint32_t>>(stage.grid().tileCount());
    CUSYNC_CUDA_CHECK(cudaMemset(arrivals->get(), 0, arrivals->bytes()));
  }
  float* partialsPointer() const { return partials ? partials->get() : nullptr; }
  std::uint32_t* arrivalsPointer() const { return arrivals ? arrivals->get() : nullptr; }
};

}  // namespace cusync::examples
