// Block-level wait and post for ordinary (non-warp-specialized) kernels: every thread of the block calls them.
// Device-only header. Warp-specialized kernels call the one-thread forms in stage_view.cuh from the thread that
// issues the loads (wait) or that completed the stores (post) instead.
#pragma once

#include "cusync/stage_view.cuh"

namespace cusync {

// Takes the block's work unit (its tile and, under split-K, its part): thread 0 draws the ticket, the block reads it
// after a barrier. In hardware order the unit is the tile blockIdx names, part 0.
__device__ inline WorkUnit blockAcquireWorkUnit(const StageView& stage) {
  // Raw storage: a __shared__ variable may not have a constructor (WorkUnit's members have initializers).
  alignas(WorkUnit) __shared__ unsigned char storage[sizeof(WorkUnit)];
  WorkUnit* unit = reinterpret_cast<WorkUnit*>(storage);
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    *unit = stage.acquireWorkUnit(TileCoord{blockIdx.x, blockIdx.y, blockIdx.z}, 0);
  __syncthreads();
  return *unit;
}

// Takes the block's tile: the ticket of its work unit.
__device__ inline TileTicket blockAcquireTile(const StageView& stage) { return blockAcquireWorkUnit(stage).ticket; }

// Thread 0 waits (acquire), then the barrier extends the acquire to every thread of the block.
template <class Policy>
__device__ void blockWait(const InputView<Policy>& input, TileCoord producerTile, const TileTicket& self,
                          const StageView& consumer) {
  if (!input.synchronized()) return;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    input.waitThread(producerTile, self.iteration, consumer, self.tile);
  __syncthreads();
}

// The barrier orders every thread's stores of the tile before thread 0's release.
template <class Policy>
__device__ void blockPost(const StageView& stage, TileCoord tile) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) stage.template postThread<Policy>(tile);
}

}  // namespace cusync
