// The post of a tile stored by TMA, as every hooked sm90 kernel ends a unit (one tile per block, persistent, fused
// chain, convolution). Device code; needs CUTLASS.
#pragma once

#include <cutlass/arch/barrier.h>

#include "cusync/stage_view.cuh"

namespace cusync::cutlass_sm90 {

// Called by all `NumMmaThreads` math threads after the epilogue's stores of `tile`. A consumer's TMA may read the
// tile as soon as it sees the post, so the storing threads first complete their bulk stores (their global writes,
// not only the shared-memory reads) and order them for the async proxy; the math threads then meet, and one
// thread releases the tile's semaphore under `Policy`. Nothing when the stage has no semaphores (nobody waits).
template <class Policy, int NumMmaThreads>
CUTLASS_DEVICE void postStoredTile(StageView const& stage, TileCoord tile, int mmaThreadIndex) {
  if (stage.semaphores == nullptr) return;
  completeBulkStores();
  asm volatile("fence.proxy.async.global;" ::: "memory");
  cutlass::arch::NamedBarrier::sync(NumMmaThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
  if (mmaThreadIndex == 0) stage.template postThread<Policy>(tile);
}

}  // namespace cusync::cutlass_sm90
