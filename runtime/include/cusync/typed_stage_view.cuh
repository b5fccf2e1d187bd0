// A stage's view whose type carries the policy the stage posts under, so that a kernel names its output policy
// nowhere: Stage::view<P>() checks P against the stage's setOutputPolicy<P>() on the host and refuses any other, and
// posting through the typed view takes no policy argument. Serves host (construction) and device (use).
//
// Warp-specialized kernels that post from one thread keep the untyped StageView and postThread<P> (stage_view.cuh).
#pragma once

#include "cusync/stage_view.cuh"

namespace cusync {

template <class Policy>
struct TypedStageView {
  using OutputPolicy = Policy;

  StageView untyped;  // what the one-thread functions and the block-level functions of block_sync.cuh take

  CUSYNC_HOST_DEVICE GridShape grid() const { return untyped.grid; }

  // One thread posts `tile` under the stage's own policy; the caller has ordered every store of the tile before it
  // (stage_view.cuh, StageView::postThread).
  __device__ void postThread(TileCoord tile) const { untyped.template postThread<Policy>(tile); }
};

}  // namespace cusync
