// An MLP as a fused chain of one configuration, split-K and tile order: one persistent launch (tile-synchronized)
// or the same kernel launched once per GEMM in stream order. GPT-3's GELU MLP (XW1 = GELU(X W1^T), Y = XW1 W2^T)
// or LLaMA's SwiGLU MLP (S = silu(X Wgate^T) * (X Wup^T) from one GEMM over paired gate/up weights, Y = S W2^T),
// by the chain's policy. The operands are passed at every run, so one chain serves any tensors of its shape: shared
// by mlp_fused_example, the fused-chain stress test and the PyTorch op's plans (python/csrc/mlp_plan.h). Host
// header.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "cusync/error.h"
#include "cusync/fused_chain.cuh"
#include "cusync/stage.cuh"
#include "fused_chain_registry.h"
#include "fused_split.h"
#include "mlp_operands.h"
#include "split_state.h"
#include "tile_orders.h"

namespace cusync::examples {

// The MLP as a fused chain of one configuration, split and tile order: one launch (synchronized) or two
// stream-ordered launches of the same kernel. `Policy`: FusedMlpPolicy (GELU) or SwiGluMlpPolicy (paired SwiGLU).
template <class Policy>
class FusedMlpChain {
 public:
  using Entry = FusedChainEntryFor<Policy>;
  // GEMM 1's columns per intermediate column: the paired SwiGLU computes gate and up in one GEMM.
  static constexpr int kGemm1ColumnsPerIntermediate = std::is_same_v<Policy, SwiGluMlpPolicy> ? 2 : 1;

  // Refuses (cusync::Error) a configuration the kernel cannot run at this shape, checked with placeholder operands
  // of the alignment real ones must have; each run's launch checks its own operands again.
  FusedMlpChain(const Entry& kernel, int m, int hidden, int intermediate, FusedSplit split, const TileOrders& orders,
                std::uint32_t slots, bool streamOrdered)
      : kernel_(kernel), m_(m), hidden_(hidden), intermediate_(intermediate),
        first_("gemm1", kernel.tileGrid(m, kGemm1ColumnsPerIntermediate * intermediate)),
        second_("gemm2", kernel.secondTileGrid(m, hidden)),
        firstSplit_(first_, kernel.tile, split.firstParts),
        secondSplit_(second_, kernel.secondTile, split.secondParts) {
    TileOrders::apply(first_, orders.producerGroupRows);
    TileOrders::apply(second_, orders.consumerGroupRows);
    // GEMM 1 posts every tile under the proven TileSync policy; GEMM 2 is the chain's end and posts nothing.
    if (!streamOrdered) {
      first_.setOutputPolicy<Policy>();
      gemm0Output_ = first_.inputFor<Policy>(second_);  // refuses a producer posting under another policy
    }
    // With 2x1 clusters the queue holds cluster units (two vertically adjacent tiles of one k-range), in the same
    // grouped order over the cluster grid with half the rows per group; the drawers are the resident clusters.
    const std::uint32_t rows = std::uint32_t(kernel.clusterRows);
    if (rows > 1) {
      firstClusterOrder_ = clusterOrderTable(first_.grid(), orders.producerGroupRows);
      secondClusterOrder_ = clusterOrderTable(second_.grid(), orders.consumerGroupRows);
      slots = std::uint32_t(kernel.maxActiveClusters());
    }
    const auto queueUnits = [&](const Stage& s) {
      return clusterGrid(s.grid(), rows).tileCount() * s.blocksPerTile();
    };
    const std::uint32_t units = queueUnits(first_) + queueUnits(second_);
    // GEMM 1 finishes a tile's parts together (its consumer needs whole tiles); GEMM 2 runs k-range by k-range, so
    // its first units read only the GEMM-1 columns that finish first.
    const ChainStage firstStage{&first_, PartOrder::PartsOfATileTogether, true, tableOf(firstClusterOrder_)};
    const ChainStage secondStage{&second_, PartOrder::KRangesInTurn, true, tableOf(secondClusterOrder_)};
    if (!streamOrdered) {
      launches_.push_back(std::make_unique<FusedChain>(std::vector<ChainStage>{firstStage, secondStage},
                                                       std::min(slots, units), rows));
    } else {
      // Two launches of the same kernel, each queueing one GEMM (the other listed, with no units).
      launches_.push_back(std::make_unique<FusedChain>(
          std::vector<ChainStage>{firstStage, {&second_, PartOrder::KRangesInTurn, false}},
          std::min(slots, queueUnits(first_)), rows));
      launches_.push_back(std::make_unique<FusedChain>(
          std::vector<ChainStage>{{&first_, PartOrder::PartsOfATileTogether, false}, secondStage},
          std::min(slots, queueUnits(second_)), rows));
    }
    for (const auto& launch : launches_) {
      const std::string why = kernel_.whyNotImplementable(arguments(*launch, placeholderOperands()));
      if (!why.empty())
        throw Error("fused MLP: configuration " + kernel_.name + " cannot run this shape: " + why);
    }
  }

  // GEMM 2's units wait for their whole k-range before loading A, instead of k-block by k-block (the kernel's
  // Arguments::waitForWholeUnit).
  void setWaitForWholeUnit(bool whole) { waitForWholeUnit_ = whole; }

  const Entry& kernel() const { return kernel_; }
  const Stage& first() const { return first_; }
  const Stage& second() const { return second_; }
  // The launches of one run: one when synchronized, one per GEMM when stream-ordered.
  std::size_t launchCount() const { return launches_.size(); }
  const FusedChain& launch(std::size_t index) const { return *launches_.at(index); }

  typename Entry::LaunchArgs arguments(const FusedChain& launch, const MlpOperands& operands) const {
    typename Entry::LaunchArgs args;
    args.m = m_;
    args.k0 = hidden_;
    args.n0 = kGemm1ColumnsPerIntermediate * intermediate_;
    args.n1 = hidden_;
    args.a0 = operands.x;
    args.b0 = operands.w1;
    args.d0 = operands.intermediate;
    args.b1 = operands.w2;
    args.d1 = operands.y;
    args.stages[0] = first_.view();
    args.stages[1] = second_.view();
    args.queue = launch.queue();
    args.gemm0Output = gemm0Output_;
    args.splitPartials[0] = firstSplit_.partialsPointer();
    args.splitArrivals[0] = firstSplit_.arrivalsPointer();
    args.splitPartials[1] = secondSplit_.partialsPointer();
    args.splitArrivals[1] = secondSplit_.arrivalsPointer();
    args.waitForWholeUnit = waitForWholeUnit_;
    return args;
  }

  // Enqueues one run over `operands` on `stream`: no allocation, no synchronization.
  void enqueue(const MlpOperands& operands, cudaStream_t stream) const {
    for (const auto& launch : launches_) kernel_.launch(arguments(*launch, operands), stream);
  }

  // Runs the MLP once with a unit trace (chain_trace.h) per launch and returns every launch's records. With
  // `launchMicroseconds`, also each traced launch's time between CUDA events, the start event held back until the
  // launch is enqueued (holdStream): against the records' span from the first block's entry to the last unit's end,
  // what the launch costs outside its blocks.
  std::vector<std::vector<ChainUnitTrace>> traceOnce(const MlpOperands& operands, cudaStream_t stream,
                                                     std::vector<float>* launchMicroseconds = nullptr) const {
    std::vector<std::vector<ChainUnitTrace>> traces;
    cudaEvent_t start = nullptr, stop = nullptr;
    CUSYNC_CUDA_CHECK(cudaEventCreate(&start));
    CUSYNC_CUDA_CHECK(cudaEventCreate(&stop));
    for (const auto& launch : launches_) {
      const std::size_t records = launch->queue().ticketsPerLaunch();
      DeviceBuffer<ChainUnitTrace> buffer(records);
      CUSYNC_CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0, buffer.bytes(), stream));
      typename Entry::LaunchArgs args = arguments(*launch, operands);
      args.trace = buffer.get();
      holdStream(stream);
      CUSYNC_CUDA_CHECK(cudaEventRecord(start, stream));
      kernel_.launch(args, stream);
      CUSYNC_CUDA_CHECK(cudaEventRecord(stop, stream));
      CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
      float ms = 0;
      CUSYNC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (launchMicroseconds != nullptr) launchMicroseconds->push_back(1000.0f * ms);
      std::vector<ChainUnitTrace> host(records);
      CUSYNC_CUDA_CHECK(cudaMemcpy(host.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost));
      host.resize(launch->queue().workUnits());  // the stop tickets have no record
      traces.push_back(std::move(host));
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return traces;
  }

 private:
  // The inverse grouped order (TileOrders::apply) of a stage's cluster grid, `groupRows` halved (at least 1; 0 stays
  // column-major), on the device.
  static std::unique_ptr<DeviceBuffer<std::uint32_t>> clusterOrderTable(GridShape tiles, std::uint32_t groupRows) {
    const GridShape g = clusterGrid(tiles, 2);
    const std::uint32_t rows = groupRows == 0 ? g.y : std::max(1u, groupRows / 2);
    std::vector<std::uint32_t> tileOfOrderIndex(g.tileCount());
    for (std::uint32_t linear = 0; linear < g.tileCount(); ++linear)
      tileOfOrderIndex[groupedColumnMajorIndex(tileAtLinear(linear, g), g, rows)] = linear;
    auto table = std::make_unique<DeviceBuffer<std::uint32_t>>(tileOfOrderIndex.size());
    CUSYNC_CUDA_CHECK(cudaMemcpy(table->get(), tileOfOrderIndex.data(), table->bytes(), cudaMemcpyHostToDevice));
    return table;
  }
  static const std::uint32_t* tableOf(const std::unique_ptr<DeviceBuffer<std::uint32_t>>& table) {
    return table ? table->get() : nullptr;
  }

  // Aligned, never dereferenced: CUTLASS's can_implement looks at shapes, strides and alignment only.
  static MlpOperands placeholderOperands() {
    __half* aligned = reinterpret_cast<__half*>(std::uintptr_t(256));
    return MlpOperands{aligned, aligned, aligned, aligned, aligned};
  }

  const Entry& kernel_;
  int m_, hidden_, intermediate_;
  bool waitForWholeUnit_ = false;
  Stage first_, second_;
  SplitState firstSplit_, secondSplit_;
  InputView<Policy> gemm0Output_;  // null when stream-ordered
  std::unique_ptr<DeviceBuffer<std::uint32_t>> firstClusterOrder_, secondClusterOrder_;  // 2x1 clusters only
  std::vector<std::unique_ptr<FusedChain>> launches_;
};

using FusedMlp = FusedMlpChain<FusedMlpPolicy>;        // GPT-3: GELU
using FusedSwiGluMlp = FusedMlpChain<SwiGluMlpPolicy>;  // LLaMA: paired SwiGLU

}  // namespace cusync::examples
