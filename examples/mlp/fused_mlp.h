// An MLP as a fused chain of one configuration, split-K and tile order: one persistent launch (tile-synchronized)
// or the same kernel launched once per GEMM in stream order. GPT-3's GELU MLP (XW1 = GELU(X W1^T), Y = XW1 W2^T)
// or LLaMA's SwiGLU MLP (S = silu(X Wgate^T) * (X Wup^T) from one GEMM over paired gate/up weights, Y = S W2^T),
// by the chain's policy. Shared by mlp_fused_example and the fused-chain stress test. Host header.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "common/gelu_mlp_reference.cuh"
#include "cusync/error.h"
#include "cusync/fused_chain.cuh"
#include "cusync/stage.cuh"
#include "fused_chain_registry.h"
#include "fused_split.h"
#include "split_state.h"
#include "tile_orders.h"

namespace cusync::examples {

// What an MLP chain reads and writes: X [m, hidden]; W1 [GEMM 1's columns, hidden] (GELU: [intermediate, hidden];
// SwiGLU: gate and up rows paired per tile, [2 * intermediate, hidden]); the intermediate [m, intermediate]
// (GELU(X W1^T) or S); W2 [hidden, intermediate]; Y [m, hidden].
struct MlpOperands {
  const __half* x = nullptr;
  const __half* w1 = nullptr;
  __half* intermediate = nullptr;
  const __half* w2 = nullptr;
  __half* y = nullptr;
};

// The MLP as a fused chain of one configuration, split and tile order: one launch (synchronized) or two
// stream-ordered launches of the same kernel. `Policy`: FusedMlpPolicy (GELU) or SwiGluMlpPolicy (paired SwiGLU).
template <class Policy>
class FusedMlpChain {
 public:
  using Entry = FusedChainEntryFor<Policy>;
  // GEMM 1's columns per intermediate column: the paired SwiGLU computes gate and up in one GEMM.
  static constexpr int kGemm1ColumnsPerIntermediate = std::is_same_v<Policy, SwiGluMlpPolicy> ? 2 : 1;

  FusedMlpChain(const Entry& kernel, int m, int hidden, int intermediate, MlpOperands operands, FusedSplit split,
                const TileOrders& orders, std::uint32_t slots, bool streamOrdered)
      : kernel_(kernel), m_(m), hidden_(hidden), intermediate_(intermediate), operands_(operands),
        streamOrdered_(streamOrdered),
        first_("gemm1", kernel.tileGrid(m, kGemm1ColumnsPerIntermediate * intermediate)),
        second_("gemm2", kernel.tileGrid(m, hidden)),
        firstSplit_(first_, kernel.tile, split.firstParts),
        secondSplit_(second_, kernel.tile, split.secondParts) {
    TileOrders::apply(first_, orders.producerGroupRows);
    TileOrders::apply(second_, orders.consumerGroupRows);
    // GEMM 1 posts every tile under the proven TileSync policy; GEMM 2 is the chain's end and posts nothing.
    if (!streamOrdered) {
      first_.setOutputPolicy<Policy>();
      gemm0Output_ = first_.inputFor<Policy>(second_);  // refuses a producer posting under another policy
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

  // The GELU MLP on a GeluMlpBuffers' operands.
  FusedMlpChain(const Entry& kernel, int m, int hidden, int intermediate, GeluMlpBuffers& buffers, FusedSplit split,
                const TileOrders& orders, std::uint32_t slots, bool streamOrdered)
      : FusedMlpChain(kernel, m, hidden, intermediate,
                      MlpOperands{buffers.x.get(), buffers.w1.get(), buffers.xw1.get(), buffers.w2.get(),
                                  buffers.y.get()},
                      split, orders, slots, streamOrdered) {
    static_assert(kGemm1ColumnsPerIntermediate == 1, "GeluMlpBuffers hold a GELU MLP");
  }

  // GEMM 2's units wait for their whole k-range before loading A, instead of k-block by k-block (the kernel's
  // Arguments::waitForWholeUnit).
  void setWaitForWholeUnit(bool whole) { waitForWholeUnit_ = whole; }

  const Stage& first() const { return first_; }
  const Stage& second() const { return second_; }

  typename Entry::LaunchArgs arguments(const FusedChain& chain) const {
    typename Entry::LaunchArgs args;
    args.m = m_;
    args.k0 = hidden_;
    args.n0 = kGemm1ColumnsPerIntermediate * intermediate_;
    args.n1 = hidden_;
    args.a0 = operands_.x;
    args.b0 = operands_.w1;
    args.d0 = operands_.intermediate;
    args.b1 = operands_.w2;
    args.d1 = operands_.y;
    args.stages[0] = first_.view();
    args.stages[1] = second_.view();
    args.queue = chain.queue();
    args.gemm0Output = gemm0Output_;
    args.splitPartials[0] = firstSplit_.partialsPointer();
    args.splitArrivals[0] = firstSplit_.arrivalsPointer();
    args.splitPartials[1] = secondSplit_.partialsPointer();
    args.splitArrivals[1] = secondSplit_.arrivalsPointer();
    args.waitForWholeUnit = waitForWholeUnit_;
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
      typename Entry::LaunchArgs args = arguments(*chain);
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
  const Entry& kernel_;
  int m_, hidden_, intermediate_;
  MlpOperands operands_;
  bool streamOrdered_;
  bool waitForWholeUnit_ = false;
  Stage first_, second_;
  SplitState firstSplit_, secondSplit_;
  InputView<Policy> gemm0Output_;  // null when stream-ordered
  std::vector<std::unique_ptr<FusedChain>> chains_;
};

using FusedMlp = FusedMlpChain<FusedMlpPolicy>;        // GPT-3: GELU
using FusedSwiGluMlp = FusedMlpChain<SwiGluMlpPolicy>;  // LLaMA: paired SwiGLU

}  // namespace cusync::examples
