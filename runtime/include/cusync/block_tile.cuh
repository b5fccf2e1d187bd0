// The paper's tile / wait / post, scoped to one block: every thread of the block constructs the handle, which
// takes the block's tile, then waits for the producer tiles it reads and posts its tile when done.
//
//   __global__ void gemm2(cusync::TypedStageView<Policy2> stage, cusync::InputView<Policy1> input, ...) {
//     cusync::BlockTile t(stage);                   // the tile this block computes, in the stage's tile order
//     t.wait(input, producerTileRead);              // before reading it
//     ... compute and store t.tile ...
//     t.post();                                     // under Policy2, named only by the view's type
//   }
//
// A stage nobody waits on passes its untyped StageView: BlockTile(StageView) has no post(). Device-only header;
// built on block_sync.cuh, whose free functions stay for kernels that need them separately. Warp-specialized
// kernels, where one thread waits or posts for the block, use the one-thread forms (stage_view.cuh).
//
// Memory ordering (the argument is semaphore.cuh's; here is where its barriers come from):
//  * construction: thread 0 draws the ticket, a barrier publishes it to the block (blockAcquireTile).
//  * wait: thread 0's acquire load synchronizes with the producer's release; the barrier after it orders that
//    acquire before every thread's later loads of the producer tile.
//  * post: the barrier orders every thread's stores of the tile before thread 0's fence + atomic add (the release).
//    Stores issued by TMA are not covered by the barrier: such kernels complete their bulk group first
//    (completeBulkStores) — or post from the issuing thread with postThread.
#pragma once

#include <type_traits>

#include "cusync/block_sync.cuh"
#include "cusync/typed_stage_view.cuh"

namespace cusync {

// The output policy of a stage that posts nothing (the last stage of a chain).
struct NoOutputPolicy {};

template <class OutputPolicy>
class BlockTile {
 public:
  // Every thread of the block: contains a barrier.
  __device__ explicit BlockTile(const TypedStageView<OutputPolicy>& stage)
      : stage_(stage.untyped), ticket_(blockAcquireTile(stage_)), tile(ticket_.tile), iteration(ticket_.iteration) {}
  __device__ explicit BlockTile(const StageView& stage)
      : stage_(stage), ticket_(blockAcquireTile(stage_)), tile(ticket_.tile), iteration(ticket_.iteration) {
    static_assert(std::is_same_v<OutputPolicy, NoOutputPolicy>,
                  "an untyped StageView gives a BlockTile that cannot post");
  }

 private:
  // Declared before the public members they initialize. A copy, not a reference, so that a handle made from a
  // temporary view never reads a dead one.
  StageView stage_;
  TileTicket ticket_;

 public:
  const TileCoord tile;            // the tile this block computes
  const std::uint32_t iteration;   // the launch of the stage it belongs to (0, 1, ...)

  __device__ const TileTicket& ticket() const { return ticket_; }

  // Every thread of the block: returns once `producerTile` of `input`'s producer has been posted in this
  // iteration (immediately for an unsynchronized input).
  template <class InputPolicy>
  __device__ void wait(const InputView<InputPolicy>& input, TileCoord producerTile) const {
    blockWait(input, producerTile, ticket_, stage_);
  }

  // Every thread of the block, after its last store of the tile: posts the tile under the stage's output policy.
  __device__ void post() const {
    static_assert(!std::is_same_v<OutputPolicy, NoOutputPolicy>,
                  "this stage posts nothing: construct the BlockTile from Stage::view<Policy>()");
    blockPost<OutputPolicy>(stage_, tile);
  }
};

template <class Policy>
BlockTile(const TypedStageView<Policy>&) -> BlockTile<Policy>;
BlockTile(const StageView&) -> BlockTile<NoOutputPolicy>;

}  // namespace cusync
