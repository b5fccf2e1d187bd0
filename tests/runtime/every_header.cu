// Includes every runtime header and instantiates the device API once, so that a header that stops compiling for
// an architecture (sm_80, sm_90a) fails a test. Compiled by tests/runtime/CMakeLists.txt; never run.
#include <cusync/cusync.cuh>

namespace {
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
__global__ void chainBlock(cusync::ChainQueueView queue, cusync::StageView first, cusync::StageView second,
                           unsigned* out) {
  const cusync::StageView stages[2] = {first, second};
  const cusync::ChainUnit unit = cusync::acquireChainUnit(queue, stages);
  if (unit.hasWork()) out[unit.stage] = unit.unit.part;
}
}  // namespace

void launchPair(cusync::Stage& p, cusync::Stage& c, float* a, float* b, cudaStream_t stream) {
  cusync::launchKernel(producer, dim3(p.grid().tileCount()), dim3(32), 0, stream, false, p.view(), a);
  cusync::launchWaitKernel(p, c, stream);
  cusync::launchKernel(consumer, dim3(c.grid().tileCount()), dim3(32), 0, stream, true, c.view(),
                       p.inputFor<cusync::RowSync>(c), static_cast<const float*>(a), b);
}
