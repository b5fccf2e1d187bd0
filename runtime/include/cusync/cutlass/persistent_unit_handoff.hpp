// How the persistent hooked GEMMs (cooperative: tile_sync_persistent_gemm_kernel.hpp; pingpong:
// tile_sync_pingpong_gemm_kernel.hpp) hand work units from their TMA producer warp to their math warp groups.
// Device code; needs CUTLASS.
//
// The warp draws each work unit from the stage's tickets (it is the first to need the unit), or with static units
// takes its block's next one (StageView::staticUnits), hands it to the math warp groups through a small
// shared-memory pipeline of units (CUTLASS's PipelineAsync), and loads the unit's operands, waiting before each A
// k-block another stage produces (TileSyncMainloop). The ticket past the launch's last unit
// (StageView::persistentBlocks), or the block's first static unit past it, is handed on too, and stops everyone;
// the operand pipeline's tail follows.
// A ticket that draws a stream-K chunk (stream_k_split.h) is handed on as the chunk's fragments, one unit each, so
// the math warp groups see only tiles and k-ranges.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/pipeline/pipeline.hpp>

#include "cusync/cutlass/load_order_namespace.hpp"
#include "cusync/cutlass/tile_sync_gemm_kernel.hpp"
#include "cusync/split_k_range.h"
#include "cusync/stage_view.cuh"

namespace cusync::cutlass_sm90 {
inline namespace CUSYNC_LOAD_ORDER_NAMESPACE {

// The unit pipeline: one elected producer thread commits each unit, and each of `consumerThreads` math threads
// releases it after reading. Constructed by every thread; a block barrier must follow before first use.
template <class WorkUnitPipeline, class Storage>
CUTLASS_DEVICE WorkUnitPipeline makeWorkUnitPipeline(Storage& storage, bool isProducer, bool isConsumer,
                                                     std::uint32_t consumerThreads) {
  typename WorkUnitPipeline::Params params;
  if (isProducer) params.role = WorkUnitPipeline::ThreadCategory::Producer;
  if (isConsumer) params.role = WorkUnitPipeline::ThreadCategory::Consumer;
  params.producer_arv_count = 1;
  params.consumer_arv_count = consumerThreads;
  params.dst_blockid = 0;
  return WorkUnitPipeline(storage, params);
}

// A math thread's next unit (the stop ticket's included): waits until it is committed, reads it, releases its slot.
template <class WorkUnitPipeline>
CUTLASS_DEVICE WorkUnit takeWorkUnit(WorkUnitPipeline& pipeline, typename WorkUnitPipeline::PipelineState& read,
                                     WorkUnit const* units) {
  pipeline.consumer_wait(read);
  const WorkUnit unit = units[read.index()];
  pipeline.consumer_release(read);
  ++read;
  return unit;
}

// Called by the whole producer warp. `units`: the unit pipeline's slots; `kRangeOf(unit)`: the unit's k-blocks.
template <class CollectiveMainloop, class WorkUnitPipeline, class InputPolicy, class LoadInputs, class KRangeOf>
CUTLASS_DEVICE void produceDrawnUnits(CollectiveMainloop& mainloop,
                                      typename CollectiveMainloop::Params const& mainloopParams,
                                      typename CollectiveMainloop::MainloopPipeline& mainloopPipeline,
                                      WorkUnitPipeline& unitPipeline, WorkUnit* units, LoadInputs const& loadInputs,
                                      typename CollectiveMainloop::TensorStorage& tensors,
                                      GemmStageSync<InputPolicy> const& sync, KRangeOf kRangeOf) {
  using namespace cute;
  using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
  auto mainloop_pipe_producer_state = cutlass::make_producer_start_state<MainloopPipeline>();
  auto unit_write = cutlass::make_producer_start_state<WorkUnitPipeline>();
  // A stream-K fragment (stream_k_split.h) is followed by its chunk's next fragment, with no new ticket, while the
  // chunk has one. The fragment is read back from its slot, not kept in registers across its loads (this warp runs
  // on few registers): only this warp writes the slots, and it reuses that one only kWorkUnitStages units later.
  bool afterStreamKFragment = false;
  int previousSlot = 0;
  // Lane 0 hands the units on; with static units (StageView::staticUnits) it keeps the block's place in its sequence
  // and the launch's iteration. The block's one ticket: awaited for the iteration only where the input is
  // synchronized (its waits need it; the math warps never read it), only counted where the stage posts or splits
  // (consumers' wait-kernels count started blocks), not drawn at all otherwise, as the one-tile kernel decides.
  const bool ticketLane = cutlass::canonical_lane_idx() == 0;
  const bool staticUnits = sync.stage.takesStaticUnits();
  std::uint32_t staticPosition = 0, staticIteration = 0;
  if (staticUnits && ticketLane) {
    if (sync.a.input.synchronized())
      staticIteration = sync.stage.acquireIteration();
    else if (sync.stage.semaphores != nullptr || sync.stage.blocksPerTile > 1)
      sync.stage.countBlock();
  }
  while (true) {
    if (ticketLane) {
      unitPipeline.producer_acquire(unit_write);
      WorkUnit next{TileTicket{TileCoord{}, 0u}, kNoWorkLeft};
      if (afterStreamKFragment) next = sync.stage.nextStreamKFragment(units[previousSlot]);
      if (!next.hasWork()) {
        next = staticUnits ? sync.stage.staticUnit(blockIdx.x, staticPosition++, staticIteration)
                           : sync.stage.acquireWorkUnit(TileCoord{}, 0);
        if (next.isStreamK()) next = sync.stage.nextStreamKFragment(next);  // the chunk's first fragment
      }
      units[unit_write.index()] = next;
      unitPipeline.producer_commit(unit_write);
    }
    __syncwarp();
    const WorkUnit unit = units[unit_write.index()];
    afterStreamKFragment = unit.isStreamK();
    previousSlot = int(unit_write.index());
    ++unit_write;
    if (!unit.hasWork()) break;
    Tensor gA_mkl = get<0>(loadInputs);
    const KBlockRange kRange = kRangeOf(unit);
    auto k_tile_iter = cute::make_coord_iterator(idx2crd(kRange.begin, shape<3>(gA_mkl)), shape<3>(gA_mkl));
    auto blk_coord = make_coord(int(unit.ticket.tile.y), int(unit.ticket.tile.x), _, int(unit.ticket.tile.z));
    mainloop.loadSynchronized(mainloopParams, mainloopPipeline, mainloop_pipe_producer_state, loadInputs, blk_coord,
                              k_tile_iter, kRange.count, tensors, sync.a, sync.loadOrder, unit.ticket, sync.stage);
    mainloop_pipe_producer_state.advance(kRange.count);
  }
  mainloop.load_tail(mainloopPipeline, mainloop_pipe_producer_state);
}

}  // namespace CUSYNC_LOAD_ORDER_NAMESPACE
}  // namespace cusync::cutlass_sm90
