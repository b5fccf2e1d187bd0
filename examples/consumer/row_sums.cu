// A user's kernels on cusync, as built from an installed package (see CMakeLists.txt): a producer stage scales a
// matrix tile by tile and posts each tile; a consumer stage sums each row, waiting only for the row of producer tiles
// it reads (row_sums.dep, proven RowSync policy) instead of for the whole producer kernel. The consumer is launched
// with programmatic dependent launch, so it starts while the producer's last tiles are computed.
// Exit: 0 correct, 1 wrong sums, 77 no CUDA device.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include <cusync/cusync.cuh>

#include "row_sums.h"  // generated at build time by cusyncgen from row_sums.dep

namespace spec = cusync::generated::row_sums;
using Policy = spec::Dep_rows_scale_RowSync;

constexpr int kRows = int(spec::parameters::Rows), kColumns = int(spec::parameters::Columns);
constexpr int kTileRows = int(spec::parameters::TileRows), kTileColumns = int(spec::parameters::TileColumns);
constexpr int kThreads = 256;

__global__ void scaleTiles(cusync::StageView stage, const float* in, float* out, float factor) {
  cusync::triggerDependentLaunch();  // every producer block runs: the consumer may start
  const cusync::TileTicket ticket = cusync::blockAcquireTile(stage);
  const int row0 = int(ticket.tile.y) * kTileRows, column0 = int(ticket.tile.x) * kTileColumns;
  for (int i = threadIdx.x; i < kTileRows * kTileColumns; i += blockDim.x) {
    const int index = (row0 + i / kTileColumns) * kColumns + column0 + i % kTileColumns;
    out[index] = factor * in[index];
  }
  cusync::blockPost<Policy>(stage, ticket.tile);
}

__global__ void sumRows(cusync::StageView stage, cusync::InputView<Policy> input, const float* scaled, float* sums) {
  const cusync::TileTicket ticket = cusync::blockAcquireTile(stage);
  // One wait covers the row: RowSync posts a row of producer tiles on one semaphore.
  cusync::blockWait(input, cusync::TileCoord{0, ticket.tile.y, 0}, ticket, stage);
  const int row0 = int(ticket.tile.y) * kTileRows;
  for (int row = row0 + int(threadIdx.x); row < row0 + kTileRows; row += blockDim.x) {
    float sum = 0;
    for (int column = 0; column < kColumns; ++column) sum += scaled[row * kColumns + column];
    sums[row] = sum;
  }
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("row_sums: no CUDA device\n");
    return 77;
  }
  const cusync::GridShape scaleGrid{kColumns / kTileColumns, kRows / kTileRows, 1};
  const cusync::GridShape sumGrid{1, kRows / kTileRows, 1};
  cusync::Stage producer("scale", scaleGrid), consumer("sum", sumGrid);
  producer.setOutputPolicy<Policy>();
  const cusync::InputView<Policy> input = producer.inputFor<Policy>(consumer);  // checks the pairing

  const std::vector<float> ones(std::size_t(kRows) * kColumns, 1.0f);
  float *in = nullptr, *scaled = nullptr, *sums = nullptr;
  CUSYNC_CUDA_CHECK(cudaMalloc(&in, ones.size() * sizeof(float)));
  CUSYNC_CUDA_CHECK(cudaMalloc(&scaled, ones.size() * sizeof(float)));
  CUSYNC_CUDA_CHECK(cudaMalloc(&sums, kRows * sizeof(float)));
  CUSYNC_CUDA_CHECK(cudaMemcpy(in, ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice));

  cudaStream_t stream;
  CUSYNC_CUDA_CHECK(cudaStreamCreate(&stream));
  cusync::launchKernel(scaleTiles, dim3(scaleGrid.tileCount()), dim3(kThreads), 0, stream,
                       cusync::LaunchOrdering::StreamOrder, producer.view(),
                       static_cast<const float*>(in), scaled, 2.0f);
  cusync::launchKernel(sumRows, dim3(sumGrid.tileCount()), dim3(kThreads), 0, stream,
                       cusync::LaunchOrdering::Programmatic, consumer.view(), input,
                       static_cast<const float*>(scaled), sums);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<float> result(kRows);
  CUSYNC_CUDA_CHECK(cudaMemcpy(result.data(), sums, kRows * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (float sum : result) wrong += sum != 2.0f * kColumns;
  std::printf("row_sums: %d of %d row sums wrong\n", wrong, kRows);
  cudaStreamDestroy(stream);
  cudaFree(in);
  cudaFree(scaled);
  cudaFree(sums);
  return wrong == 0 ? 0 : 1;
}
