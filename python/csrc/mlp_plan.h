// The GELU MLP, Y = GELU(X W1^T) W2^T, or the SwiGLU MLP, Y = (silu(X Wg^T) * X Wu^T) W2^T with W1's gate and up
// rows paired per tile (examples/mlp/swiglu_weight_pairing.h), as one persistent launch of a fused-chain kernel
// (fused_chain_registry.h) for operands the caller owns and passes at every run: what the PyTorch op runs. The plan
// is the examples' synchronized FusedMlpChain (examples/mlp/fused_mlp.h). Host code.
//
// Why a run needs no reset of the chain's counters (until session 23 each run first enqueued a kernel zeroing them;
// dropping it gained 0-1.6%, docs/BENCHMARKS.md, issue 12, session 24). A launch's iteration is ticket /
// ticketsPerLaunch of the queue's 64-bit ticket counter, read on the device, so eager calls, graph replays and the
// same plan twice in one graph all count the same runs; 2^64 tickets do not wrap in any process's life. Consumers
// wait until a 32-bit semaphore reaches value * (iteration + 1) mod 2^32 in wrap-safe arithmetic
// (semaphore.cuh, detail::reached): a semaphore and its target never lie 2^31 apart, so the wrap after 2^32 / value
// runs is harmless. Each split-K tile's last arrival of a run takes the parts back off its arrival counter
// (split_k_reduction.hpp), so it is 0 between runs. A run that does not complete leaves counts behind, but only a
// trap or a killed context stops a kernel half-way, and neither leaves the plan usable. The plan's counters are
// zeroed once, at creation.
#pragma once

#include <cstdint>
#include <memory>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

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
  // The fused chain's persistent grid; a chain of a launch per GEMM reports its larger grid (cusync_mlp_plan_info).
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
      : chain_(kernel, m, hidden, intermediate, split, tileOrders(orders), slots, /*streamOrdered=*/false) {}

  std::uint32_t workUnits() const override { return chain_.launch(0).queue().workUnits(); }
  void setWaitForWholeUnit(bool whole) override { chain_.setWaitForWholeUnit(whole); }
  std::uint32_t persistentBlocks() const override { return chain_.launch(0).persistentBlocks(); }

  // Enqueues the chain on `stream`; no allocation, no synchronization.
  void enqueue(const MlpOperands& operands, cudaStream_t stream) const override { chain_.enqueue(operands, stream); }

 private:
  static examples::TileOrders tileOrders(const MlpTileOrders& orders) {
    examples::TileOrders converted;
    converted.producerGroupRows = orders.producerGroupRows;
    converted.consumerGroupRows = orders.consumerGroupRows;
    return converted;
  }

  examples::FusedMlpChain<Policy> chain_;
};

}  // namespace cusync::python
