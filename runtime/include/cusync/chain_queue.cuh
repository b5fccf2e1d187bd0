// The device draw from a fused chain's queue (chain_queue.h). Device code.
#pragma once

#include <cstdint>

#include "cusync/chain_queue.h"
#include "cusync/stage_view.cuh"

namespace cusync {

// A work unit of the chain: which stage, and the unit within it (in clusterGrid coordinates when the queue is drawn
// by clusters: see blockTileOfClusterUnit).
struct ChainUnit {
  std::uint32_t stage;  // index into the chain; meaningless when !unit.hasWork()
  WorkUnit unit;
  std::uint32_t queueIndex;  // position in the launch's queue, [0, ticketsPerLaunch())
  __host__ __device__ bool hasWork() const { return unit.hasWork(); }
};

// The unit a ticket of the chain's counter names. ticket / ticketsPerLaunch() is the launch's iteration, which every
// stage's semaphore targets count with, so neither the counter nor the semaphores are ever reset. `stages[s]` is
// stage s's view (its own tile counter is not used: the queue's is).
template <int StageCount>
__device__ ChainUnit chainUnitOfTicket(const ChainQueueView& queue, const StageView (&stages)[StageCount],
                                       unsigned long long ticket) {
  static_assert(StageCount <= kMaxChainStages, "a chain has at most kMaxChainStages stages");
  ChainStageUnits units[StageCount];
  for (int s = 0; s < StageCount; ++s)
    units[s] = queue.clusterRows == 1
                   ? ChainStageUnits{stages[s].grid, stages[s].tileOfOrderIndex, stages[s].blocksPerTile}
                   : ChainStageUnits{clusterGrid(stages[s].grid, queue.clusterRows), queue.clusterTileOfOrderIndex[s],
                                     stages[s].blocksPerTile};
  // The semaphores count posts in 32 bits (value * (iteration + 1)), so the iteration is taken modulo 2^32 too.
  const std::uint32_t iteration = std::uint32_t(ticket / queue.ticketsPerLaunch());
  const std::uint32_t index = std::uint32_t(ticket % queue.ticketsPerLaunch());
  const QueuedUnit q = queue.unitAt(index, units);
  return ChainUnit{q.stage, WorkUnit{TileTicket{q.tile, iteration}, q.stop ? kNoWorkLeft : q.part}, index};
}

// Draws the next ticket of the chain (one thread). Split from chainUnitOfTicket so that a block can draw its next
// ticket while it works on its current unit and hide the atomic's round trip: the progress argument of
// chain_queue.h holds with one ticket drawn ahead, since the unit held ahead has a larger ticket than the one being
// worked on, which waits only for smaller ones.
__device__ inline unsigned long long drawChainTicket(const ChainQueueView& queue) {
  return atomicAdd(queue.ticketCounter, 1ull);
}

// Takes the next unit of the chain (one thread).
template <int StageCount>
__device__ ChainUnit acquireChainUnit(const ChainQueueView& queue, const StageView (&stages)[StageCount]) {
  return chainUnitOfTicket(queue, stages, drawChainTicket(queue));
}

}  // namespace cusync
