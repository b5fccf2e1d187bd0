// Includes every runtime header and instantiates the device API once, so that a header that stops compiling for
// an architecture (sm_80, sm_90a) fails a test. Compiled by tests/runtime/CMakeLists.txt; never run.
#include <cusync/cusync.cuh>
#include <cusync/block_trace.cuh>
#include <cusync/hooked_gemv_kernel.cuh>
#include <cusync/hooked_mma_gemv_kernel.cuh>
#include <cusync/hooked_packed_gemv_kernel.cuh>
#include <cusync/packed_gemv_pack.cuh>
#include <cusync/packed_mma16_gemv_stage_kernel.cuh>
#include <cusync/row_mma_gemv_stage_kernel.cuh>
#include <cusync/uniform_carveout.h>

namespace {
// The block-level free functions (block_sync.cuh).
__global__ void producer(cusync::StageView stage, float* out) {
  cusync::triggerDependentLaunch();
  const cusync::TileTicket ticket = cusync::blockAcquireTile(stage);
  out[cusync::linearIndex(ticket.tile, stage.grid) * blockDim.x + threadIdx.x] = 1.0f;
  cusync::blockPost<cusync::RowSync>(stage, ticket.tile);
}
__global__ void consumer(cusync::StageView stage, cusync::InputView<cusync::RowSync> input, const float* in,
                         float* out) {
  const cusync::TileTicket ticket = cusync::blockAcquireTile(stage);
  cusync::blockWait(input, cusync::TileCoord{0, ticket.tile.y, 0}, ticket, stage);
  cusync::fenceProxyAsyncGlobal();
  out[threadIdx.x] = in[threadIdx.x];
}

// The same pair through the typed view and the block-scoped handle (block_tile.cuh): a middle stage that waits and
// posts, and a last stage with the untyped view, which waits only.
__global__ void relay(cusync::TypedStageView<cusync::TileSync> stage, cusync::InputView<cusync::RowSync> input,
                      const float* in, float* out) {
  cusync::BlockTile t(stage);
  t.wait(input, cusync::TileCoord{0, t.tile.y, 0});
  out[cusync::linearIndex(t.tile, stage.grid()) * blockDim.x + threadIdx.x] = in[threadIdx.x] + float(t.iteration);
  t.post();
}
__global__ void last(cusync::StageView stage, cusync::InputView<cusync::TileSync> input, const float* in,
                     float* out) {
  cusync::BlockTile t(stage);
  t.wait(input, t.tile);
  out[threadIdx.x] = in[threadIdx.x];
}
// One thread posting through the typed view, as a warp-specialized kernel's storing thread would.
__global__ void postFromOneThread(cusync::TypedStageView<cusync::TileSync> stage) {
  if (threadIdx.x == 0) stage.postThread(cusync::TileCoord{blockIdx.x, 0, 0});
}

__global__ void chainBlock(cusync::ChainQueueView queue, cusync::StageView first, cusync::StageView second,
                           unsigned* out) {
  const cusync::StageView stages[2] = {first, second};
  const cusync::ChainUnit unit = cusync::acquireChainUnit(queue, stages);
  if (unit.hasWork()) out[unit.stage] = unit.unit.part;
}
}  // namespace

void launchPair(cusync::Stage& p, cusync::Stage& c, float* a, float* b, cudaStream_t stream) {
  using cusync::LaunchOrdering;
  cusync::launchKernel(producer, dim3(p.grid().tileCount()), dim3(32), 0, stream, LaunchOrdering::StreamOrder,
                       p.view(), a);
  cusync::launchWaitKernel(p, c, stream);
  cusync::launchKernel(consumer, dim3(c.grid().tileCount()), dim3(32), 0, stream, LaunchOrdering::Programmatic,
                       c.view(), p.inputFor<cusync::RowSync>(c), static_cast<const float*>(a), b);
}

void launchChain(cusync::Stage& first, cusync::Stage& middle, cusync::Stage& final, float* a, float* b, float* c,
                 cudaStream_t stream) {
  using cusync::LaunchOrdering;
  cusync::launchKernel(relay, dim3(middle.grid().tileCount()), dim3(32), 0, stream, LaunchOrdering::Programmatic,
                       middle.view<cusync::TileSync>(), first.inputFor<cusync::RowSync>(middle),
                       static_cast<const float*>(a), b);
  cusync::launchKernel(last, dim3(final.grid().tileCount()), dim3(32), 0, stream, LaunchOrdering::Programmatic,
                       final.view(), middle.inputFor<cusync::TileSync>(final), static_cast<const float*>(b), c);
  cusync::launchKernel(postFromOneThread, dim3(middle.grid().tileCount()), dim3(32), 0, stream,
                       LaunchOrdering::StreamOrder, middle.view<cusync::TileSync>());
}

// The hooked GEMV stage (hooked_gemv_kernel.cuh): one launch, which instantiates the kernel.
void launchGemv(const cusync::HookedGemvParams<cusync::TileSync>& params, cudaStream_t stream) {
  cusync::launchKernel(cusync::hookedGemvKernel<cusync::TileSync, cusync::RowSync, 2, 128, 4>,
                       dim3(params.stage.workUnits()), dim3(cusync::kGemvThreads), 4096, stream,
                       cusync::LaunchOrdering::Programmatic, params);
}
