// The GELU MLP, Y = GELU(X W1^T) W2^T, or the SwiGLU MLP, Y = (silu(X Wg^T) * X Wu^T) W2^T with W1's gate and up
// rows paired per tile (examples/mlp/swiglu_weight_pairing.h), as one persistent launch of a fused-chain kernel
// (fused_chain_registry.h) for operands the caller owns and passes at every run: what the PyTorch op runs. The plan
// is the examples' synchronized FusedMlpChain (examples/mlp/fused_mlp.h) plus the reset of its counters. Host code;
// include from one .cu file (it defines the counter-reset kernel).
//
// Why every run first zeroes the chain's counters. The runtime never resets them: a launch's iteration is
// ticket / ticketsPerLaunch of the queue's ticket counter, and consumers wait for value * (iteration + 1) in 32-bit
// semaphores; split-K arrivals count modulo the parts in 32 bits. The ticket counter is 64 bits (it used to be 32
// and wrapped after 2^32 / ticketsPerLaunch launches, 7 million for GPT-3 at M = 1), but the semaphores still wrap
// after 2^32 / value launches and the arrival counters after 2^32 / parts: days of back-to-back calls, which a
// serving process cannot rule out and cannot count (a captured CUDA graph replays without the host knowing). So
// each run enqueues one small kernel that zeroes the counters the chain names (FusedMlpChain::counters: the queue's
// ticket counter, GEMM 1's semaphores and the split-K arrival counters) before the chain, and every launch is
// iteration 0. The kernel is stream-ordered after the plan's previous launch, which has then completed (a plan
// serves one launch at a time: cusync_mlp.h), and the chain kernel is launched without programmatic overlap, so it
// sees the zeroes. Cost: one extra kernel per call (a graph node inside graphs).
#pragma once

#include <cstdint>
#include <memory>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "counter_reset.cuh"
#include "fused_chain_registry.h"
#include "fused_mlp.h"
#include "fused_split.h"
#include "tile_orders.h"

namespace cusync::python {

using examples::FusedChainEntryFor;
using examples::FusedMlpPolicy;
using examples::FusedSplit;
using examples::SwiGluMlpPolicy;

// The caller's tensors of one run: fp16, row-major, contiguous (fused_mlp.h; SwiGLU: W1's gate/up rows paired).
using examples::MlpOperands;

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
  // GEMM 2's units wait for their whole k-range before loading A, else k-block by k-block (the fused kernel's
  // Arguments::waitForWholeUnit); both sound, the tuning table says which is faster.
  virtual void setWaitForWholeUnit(bool whole) = 0;
};

// The plan of the chain of `Policy`: FusedMlpPolicy (GELU) or SwiGluMlpPolicy (paired SwiGLU, whose GEMM 1 has
// twice the intermediate size in columns). Throws cusync::Error for a configuration the kernel cannot run at this
// shape (the chain's own check, once here rather than at every run).
template <class Policy>
class MlpPlanFor final : public MlpPlan {
 public:
  using Entry = FusedChainEntryFor<Policy>;

  MlpPlanFor(const Entry& kernel, int m, int hidden, int intermediate, FusedSplit split, MlpTileOrders orders,
             std::uint32_t slots)
      : chain_(kernel, m, hidden, intermediate, split, tileOrders(orders), slots, /*streamOrdered=*/false) {
    for (const examples::CounterWords& counter : chain_.counters()) counters_.add(counter.words, counter.count);
    loadCounterResetKernel();
  }

  std::uint32_t workUnits() const override { return chain_.launch(0).queue().workUnits(); }
  void setWaitForWholeUnit(bool whole) override { chain_.setWaitForWholeUnit(whole); }
  std::uint32_t persistentBlocks() const override { return chain_.launch(0).persistentBlocks(); }

  // Enqueues the counter reset and the chain on `stream`; no allocation, no synchronization.
  void enqueue(const MlpOperands& operands, cudaStream_t stream) const override {
    CUSYNC_CUDA_CHECK(enqueueCounterReset(counters_, stream));
    chain_.enqueue(operands, stream);
  }

 private:
  static examples::TileOrders tileOrders(const MlpTileOrders& orders) {
    examples::TileOrders converted;
    converted.producerGroupRows = orders.producerGroupRows;
    converted.consumerGroupRows = orders.consumerGroupRows;
    return converted;
  }

  examples::FusedMlpChain<Policy> chain_;
  CounterArrays counters_;
};

}  // namespace cusync::python
