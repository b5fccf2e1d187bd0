// The GELU MLP, Y = GELU(X W1^T) W2^T, or the SwiGLU MLP, Y = (silu(X Wg^T) * X Wu^T) W2^T with W1's gate and up
// rows paired per tile (examples/mlp/swiglu_weight_pairing.h), as one persistent launch of a fused-chain kernel
// (fused_chain_registry.h) for
// operands the caller owns and passes at every run: what the PyTorch op runs. The chain is set up as FusedMlp's
// (examples/mlp/fused_mlp.h) synchronized variant, which owns its operands instead. Host code; include from one .cu
// file (it defines the counter-reset kernel).
//
// Why every run first zeroes the chain's counters. The runtime never resets them: a launch's iteration is
// ticket / ticketsPerLaunch of the queue's ticket counter, and consumers wait for value * (iteration + 1) in 32-bit
// semaphores; split-K arrivals count modulo the parts in 32 bits. The ticket counter is 64 bits (it used to be 32
// and wrapped after 2^32 / ticketsPerLaunch launches, 7 million for GPT-3 at M = 1), but the semaphores still wrap
// after 2^32 / value launches and the arrival counters after 2^32 / parts: days of back-to-back calls, which a
// serving process cannot rule out and cannot count (a captured CUDA graph replays without the host knowing). So
// each run enqueues one small kernel that zeroes the queue's ticket counter, GEMM 1's semaphores and the split-K
// arrival counters before the chain, and every launch is iteration 0. The kernel is stream-ordered after the plan's previous launch, which has
// then completed (a plan serves one launch at a time: cusync_mlp.h), and the chain kernel is launched without
// programmatic overlap, so it sees the zeroes. Cost: one extra kernel per call (a graph node inside graphs).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "counter_reset.cuh"
#include "cusync/error.h"
#include "cusync/fused_chain.cuh"
#include "cusync/stage.cuh"
#include "fused_chain_registry.h"
#include "fused_split.h"
#include "split_state.h"
#include "tile_orders.h"

namespace cusync::python {

using examples::FusedChainEntryFor;
using examples::FusedMlpPolicy;
using examples::FusedSplit;
using examples::SwiGluMlpPolicy;

// The caller's tensors of one run: fp16, row-major, contiguous.
struct MlpOperands {
  const __half* x = nullptr;     // [m, hidden]
  const __half* w1 = nullptr;    // [intermediate, hidden]; SwiGLU: [2 * intermediate, hidden], gate/up paired
  const __half* w2 = nullptr;    // [hidden, intermediate]
  __half* intermediate = nullptr;  // [m, intermediate], written: GELU(X W1^T), or S
  __half* out = nullptr;         // [m, hidden], written
};

// Tile orders as rows per group for each GEMM (tile_orders.h: 1 row-major, 0 column-major, N groups of N rows).
struct MlpTileOrders {
  std::uint32_t producerGroupRows = 8, consumerGroupRows = 8;
};

// What the C interface needs of a plan, whichever chain it runs.
class MlpPlan {
 public:
  virtual ~MlpPlan() = default;
  virtual std::uint32_t workUnits() const = 0;
  virtual std::uint32_t persistentBlocks() const = 0;
  virtual void enqueue(const MlpOperands& operands, cudaStream_t stream) const = 0;
};

// The plan of the chain of `Policy`: FusedMlpPolicy (GELU) or SwiGluMlpPolicy (paired SwiGLU, whose GEMM 1 has
// twice the intermediate size in columns).
template <class Policy>
class MlpPlanFor final : public MlpPlan {
 public:
  using Entry = FusedChainEntryFor<Policy>;
  static constexpr int kGemm1ColumnsPerIntermediate = std::is_same_v<Policy, SwiGluMlpPolicy> ? 2 : 1;

  MlpPlanFor(const Entry& kernel, int m, int hidden, int intermediate, FusedSplit split, MlpTileOrders orders,
             std::uint32_t slots)
      : kernel_(kernel), m_(m), hidden_(hidden), intermediate_(intermediate),
        first_("gemm1", kernel.tileGrid(m, kGemm1ColumnsPerIntermediate * intermediate)),
        second_("gemm2", kernel.tileGrid(m, hidden)),
        firstSplit_(first_, kernel.tile, split.firstParts),
        secondSplit_(second_, kernel.tile, split.secondParts) {
    examples::TileOrders::apply(first_, orders.producerGroupRows);
    examples::TileOrders::apply(second_, orders.consumerGroupRows);
    // GEMM 1 posts every tile under the proven TileSync policy; GEMM 2 is the chain's end and posts nothing.
    first_.setOutputPolicy<Policy>();
    gemm0Output_ = first_.inputFor<Policy>(second_);
    const std::uint32_t units = first_.workUnitsPerLaunch() + second_.workUnitsPerLaunch();
    // GEMM 1's parts of a tile together (its consumer needs whole tiles); GEMM 2 k-range by k-range, so that its
    // first units read only the GEMM-1 columns that finish first (as FusedMlp).
    chain_ = std::make_unique<FusedChain>(
        std::vector<ChainStage>{{&first_, PartOrder::PartsOfATileTogether}, {&second_, PartOrder::KRangesInTurn}},
        std::min(slots, units));
    // The ticket counter is 64 bits (chain_queue.h): two words.
    counters_.add(reinterpret_cast<std::uint32_t*>(chain_->queue().ticketCounter), 2);
    counters_.add(first_.view().semaphores, Policy::semaphoreCount(first_.grid()));
    counters_.add(firstSplit_.arrivalsPointer(), firstSplit_.arrivalCount());
    counters_.add(secondSplit_.arrivalsPointer(), secondSplit_.arrivalCount());
    loadCounterResetKernel();
    // The kernel's own checks (CUTLASS's alignment and shape limits, split parts against k-blocks), with
    // placeholder operands of the alignment real ones must have: refused here, once, rather than at every run.
    const std::string why = kernel_.whyNotImplementable(arguments(placeholderOperands()));
    if (!why.empty()) throw Error("cusync mlp: configuration " + kernel_.name + " cannot run this shape: " + why);
  }

  std::uint32_t workUnits() const override { return chain_->queue().workUnits(); }
  std::uint32_t persistentBlocks() const override { return chain_->persistentBlocks(); }

  // Enqueues the counter reset and the chain on `stream`; no allocation, no synchronization.
  void enqueue(const MlpOperands& operands, cudaStream_t stream) const override {
    CUSYNC_CUDA_CHECK(enqueueCounterReset(counters_, stream));
    kernel_.launch(arguments(operands), stream);
  }

 private:
  typename Entry::LaunchArgs arguments(const MlpOperands& operands) const {
    typename Entry::LaunchArgs args;
    args.m = m_;
    args.k0 = hidden_;
    args.n0 = kGemm1ColumnsPerIntermediate * intermediate_;
    args.n1 = hidden_;
    args.a0 = operands.x;
    args.b0 = operands.w1;
    args.d0 = operands.intermediate;
    args.b1 = operands.w2;
    args.d1 = operands.out;
    args.stages[0] = first_.view();
    args.stages[1] = second_.view();
    args.queue = chain_->queue();
    args.gemm0Output = gemm0Output_;
    args.splitPartials[0] = firstSplit_.partialsPointer();
    args.splitArrivals[0] = firstSplit_.arrivalsPointer();
    args.splitPartials[1] = secondSplit_.partialsPointer();
    args.splitArrivals[1] = secondSplit_.arrivalsPointer();
    return args;
  }

  // Aligned, never dereferenced: CUTLASS's can_implement looks at shapes and strides only.
  static MlpOperands placeholderOperands() {
    __half* aligned = reinterpret_cast<__half*>(std::uintptr_t(256));
    return MlpOperands{aligned, aligned, aligned, aligned, aligned};
  }

  const Entry& kernel_;
  int m_, hidden_, intermediate_;
  Stage first_, second_;
  examples::SplitState firstSplit_, secondSplit_;
  InputView<Policy> gemm0Output_;
  std::unique_ptr<FusedChain> chain_;
  CounterArrays counters_;
};

}  // namespace cusync::python
