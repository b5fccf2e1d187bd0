// The GELU MLP (XW1 = GELU(X W1^T), Y = XW1 W2^T) as a fused chain of one configuration, split-K and tile order:
// one persistent launch (tile-synchronized) or the same kernel launched once per GEMM in stream order. Shared by
// mlp_fused_example and the fused-chain stress test. Host header.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "common/gelu_mlp_reference.cuh"
#include "cusync/error.h"
#include "cusync/fused_chain.cuh"
#include "cusync/stage.cuh"
#include "fused_chain_registry.h"
#include "fused_split.h"
#include "tile_orders.h"

namespace cusync::examples {

// Split-K state of one GEMM of the chain.
struct SplitState {
  std::unique_ptr<DeviceBuffer<float>> partials;
  std::unique_ptr<DeviceBuffer<std::uint32_t>> arrivals;
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

// The MLP as a fused chain of one configuration, split and tile order: one launch (synchronized) or two
// stream-ordered launches of the same kernel.
class FusedMlp {
 public:
  FusedMlp(const FusedChainEntry& kernel, int m, int hidden, int intermediate, GeluMlpBuffers& buffers,
           FusedSplit split, const TileOrders& orders, std::uint32_t slots, bool streamOrdered)
      : kernel_(kernel), m_(m), hidden_(hidden), intermediate_(intermediate), buffers_(buffers),
        streamOrdered_(streamOrdered),
        first_("gemm1", kernel.tileGrid(m, intermediate)),
        second_("gemm2", kernel.tileGrid(m, hidden)),
        firstSplit_(first_, kernel.tile, split.firstParts),
        secondSplit_(second_, kernel.tile, split.secondParts) {
    TileOrders::apply(first_, orders.producerGroupRows);
    TileOrders::apply(second_, orders.consumerGroupRows);
    // GEMM 1 posts every tile under the proven TileSync policy; GEMM 2 is the chain's end and posts nothing.
    if (!streamOrdered) {
      first_.setOutputPolicy<FusedMlpPolicy>();
      gemm0Output_ = first_.inputFor<FusedMlpPolicy>(second_);  // refuses a producer posting under another policy
    }
    const std::uint32_t units = first_.workUnitsPerLaunch() + second_.workUnitsPerLaunch();
    // GEMM 1 finishes a tile's parts together (its consumer needs whole tiles); GEMM 2 runs k-range by k-range, so
    // its first units read only the GEMM-1 columns that finish first.
    const ChainStage firstStage{&first_, PartOrder::PartsOfATileTogether};
    const ChainStage secondStage{&second_, PartOrder::KRangesInTurn};
    if (!streamOrdered) {
      chains_.push_back(std::make_unique<FusedChain>(std::vector<ChainStage>{firstStage, secondStage},
                                                     std::min(slots, units)));
    } else {
      // Two launches of the same kernel, each queueing one GEMM (the other listed, with no units).
      chains_.push_back(std::make_unique<FusedChain>(
          std::vector<ChainStage>{firstStage, {&second_, PartOrder::KRangesInTurn, false}},
          std::min(slots, first_.workUnitsPerLaunch())));
      chains_.push_back(std::make_unique<FusedChain>(
          std::vector<ChainStage>{{&first_, PartOrder::PartsOfATileTogether, false}, secondStage},
          std::min(slots, second_.workUnitsPerLaunch())));
    }
    for (const auto& chain : chains_) {
      const std::string why = kernel_.whyNotImplementable(arguments(*chain));
      if (!why.empty()) throw Error("fused MLP: " + why);
    }
  }

  const Stage& first() const { return first_; }
  const Stage& second() const { return second_; }

  FusedChainLaunchArgs arguments(const FusedChain& chain) const {
    FusedChainLaunchArgs args;
    args.m = m_;
    args.k0 = hidden_;
    args.n0 = intermediate_;
    args.n1 = hidden_;
    args.a0 = buffers_.x.get();
    args.b0 = buffers_.w1.get();
    args.d0 = buffers_.xw1.get();
    args.b1 = buffers_.w2.get();
    args.d1 = buffers_.y.get();
    args.stages[0] = first_.view();
    args.stages[1] = second_.view();
    args.queue = chain.queue();
    args.gemm0Output = gemm0Output_;
    args.splitPartials[0] = firstSplit_.partialsPointer();
    args.splitArrivals[0] = firstSplit_.arrivalsPointer();
    args.splitPartials[1] = secondSplit_.partialsPointer();
    args.splitArrivals[1] = secondSplit_.arrivalsPointer();
    return args;
  }

  void enqueue(cudaStream_t stream) const {
    for (const auto& chain : chains_) kernel_.launch(arguments(*chain), stream);
  }

  // Runs the MLP once with a unit trace (chain_trace.h) per launch and returns every launch's records.
  std::vector<std::vector<ChainUnitTrace>> traceOnce(cudaStream_t stream) const {
    std::vector<std::vector<ChainUnitTrace>> traces;
    for (const auto& chain : chains_) {
      const std::size_t records = chain->queue().ticketsPerLaunch();
      DeviceBuffer<ChainUnitTrace> buffer(records);
      CUSYNC_CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0, buffer.bytes(), stream));
      FusedChainLaunchArgs args = arguments(*chain);
      args.trace = buffer.get();
      kernel_.launch(args, stream);
      CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<ChainUnitTrace> host(records);
      CUSYNC_CUDA_CHECK(cudaMemcpy(host.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost));
      host.resize(chain->queue().workUnits());  // the stop tickets have no record
      traces.push_back(std::move(host));
    }
    return traces;
  }

 private:
  const FusedChainEntry& kernel_;
  int m_, hidden_, intermediate_;
  GeluMlpBuffers& buffers_;
  bool streamOrdered_;
  Stage first_, second_;
  SplitState firstSplit_, secondSplit_;
  InputView<FusedMlpPolicy> gemm0Output_;  // null when stream-ordered
  std::vector<std::unique_ptr<FusedChain>> chains_;
};

}  // namespace cusync::examples
