// The `#pragma tile` demo: a producer stage computes A = 2*X + 1 tile by tile and posts each tile; a consumer stage
// computes C = A * B with a tiled mainloop over k that waits for each A tile before loading it. B is a weight that no
// kernel produces, so its load needs no wait.
//
// The two annotated loads are written in the natural order (A, then B). cusync-tile-rewriter (run by
// cusync_add_tile_rewrite in CMakeLists.txt; it knows cusync::blockWait as a wait) turns this file into the "+R"
// variant, where the load of B is issued before the wait on A's producer, so the wait overlaps the B traffic. Both
// binaries check C against a CPU reference and print the mean time of a producer+consumer pair.
//
// Exit status: 0 when C is right, 1 when it is wrong, 77 when there is no GPU (ctest reports it as skipped).
#include <cstdint>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "cusync/cusync.cuh"

namespace {

using cusync::GridShape;
using cusync::InputView;
using cusync::StageView;
using cusync::TileCoord;
using cusync::TileSync;
using cusync::TileTicket;

// C[M,N] = A[M,K] * B[K,N]; A = 2*X + 1.
constexpr int kM = 512;
constexpr int kN = 512;
constexpr int kK = 1024;
constexpr int kTileM = 32;
constexpr int kTileN = 32;
constexpr int kTileK = 32;
constexpr int kThreads = 256;
constexpr int kOutputsPerThread = kTileM * kTileN / kThreads;

// Copies a rows x cols tile of a row-major matrix (leading dimension `ld`) at (row0, col0) into shared memory.
// The rewriter reads this body and infers that it accesses memory only through its pointer arguments.
__device__ void loadTile(float* shared, const float* global, int ld, int row0, int col0, int rows, int cols) {
  for (int i = threadIdx.x; i < rows * cols; i += blockDim.x)
    shared[i] = global[(row0 + i / cols) * ld + col0 + i % cols];
}

// Producer: tile (x = k-tile, y = m-tile) of A.
__global__ void produceA(StageView self, const float* X, float* A) {
  const TileTicket ticket = cusync::blockAcquireTile(self);
  const int row0 = int(ticket.tile.y) * kTileM;
  const int col0 = int(ticket.tile.x) * kTileK;
  for (int i = threadIdx.x; i < kTileM * kTileK; i += blockDim.x) {
    const int index = (row0 + i / kTileK) * kK + col0 + i % kTileK;
    A[index] = 2.0f * X[index] + 1.0f;
  }
  cusync::blockPost<TileSync>(self, ticket.tile);
}

// Consumer: tile (x = n-tile, y = m-tile) of C; waits for A tile (k-tile, m-tile) at every step over k.
__global__ void consumeA(StageView self, InputView<TileSync> inputA, const float* A, const float* B, float* C) {
  __shared__ float As[kTileM * kTileK];
  __shared__ float Bs[kTileK * kTileN];
  const TileTicket ticket = cusync::blockAcquireTile(self);
  const int row0 = int(ticket.tile.y) * kTileM;
  const int col0 = int(ticket.tile.x) * kTileN;
  float accumulator[kOutputsPerThread] = {};
  for (int k = 0; k < kK; k += kTileK) {
    const TileCoord tileOfA{std::uint32_t(k / kTileK), ticket.tile.y, 0};
#pragma tile
    {
      cusync::blockWait(inputA, tileOfA, ticket, self);  // A comes from the producer stage
      loadTile(As, A, kK, row0, k, kTileM, kTileK);
    }
#pragma tile
    loadTile(Bs, B, kN, k, col0, kTileK, kTileN);  // B is a weight: nobody produces it
    __syncthreads();
    for (int output = 0; output < kOutputsPerThread; ++output) {
      const int element = threadIdx.x + output * kThreads;
      const int row = element / kTileN, column = element % kTileN;
      for (int kk = 0; kk < kTileK; ++kk) accumulator[output] += As[row * kTileK + kk] * Bs[kk * kTileN + column];
    }
    __syncthreads();
  }
  for (int output = 0; output < kOutputsPerThread; ++output) {
    const int element = threadIdx.x + output * kThreads;
    C[(row0 + element / kTileN) * kN + col0 + element % kTileN] = accumulator[output];
  }
}

#ifdef CUSYNC_REORDERED_LOADS
constexpr const char* kVariant = "+R (loads reordered by cusync-tile-rewriter)";
#else
constexpr const char* kVariant = "plain";
#endif

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("rewriter_demo: no GPU, skipped\n");
    return 77;
  }
  // Small integers keep every product and sum exact in float, so the check is an equality.
  std::vector<float> x(std::size_t(kM) * kK), b(std::size_t(kK) * kN);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 7 % 5) - 2);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 3) - 1);
  float *deviceX, *deviceA, *deviceB, *deviceC;
  CUSYNC_CUDA_CHECK(cudaMalloc(&deviceX, x.size() * sizeof(float)));
  CUSYNC_CUDA_CHECK(cudaMalloc(&deviceA, x.size() * sizeof(float)));
  CUSYNC_CUDA_CHECK(cudaMalloc(&deviceB, b.size() * sizeof(float)));
  CUSYNC_CUDA_CHECK(cudaMalloc(&deviceC, std::size_t(kM) * kN * sizeof(float)));
  CUSYNC_CUDA_CHECK(cudaMemcpy(deviceX, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUSYNC_CUDA_CHECK(cudaMemcpy(deviceB, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));

  cusync::Stage producer("A", GridShape{kK / kTileK, kM / kTileM, 1});
  cusync::Stage consumer("C", GridShape{kN / kTileN, kM / kTileM, 1});
  producer.setOutputPolicy<TileSync>();
  const InputView<TileSync> inputA = producer.inputFor<TileSync>(consumer);
  cudaStream_t producerStream, consumerStream;
  CUSYNC_CUDA_CHECK(cudaStreamCreate(&producerStream));
  CUSYNC_CUDA_CHECK(cudaStreamCreate(&consumerStream));
  cudaEvent_t consumerDone;
  CUSYNC_CUDA_CHECK(cudaEventCreate(&consumerDone));

  // One producer+consumer pair on two streams; the wait-kernel keeps consumer blocks from running before producer
  // blocks are resident. The next pair's producer may not overwrite A while this consumer still reads it.
  auto runPair = [&] {
    CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(producerStream, consumerDone));
    produceA<<<dim3(kK / kTileK, kM / kTileM), kThreads, 0, producerStream>>>(producer.view(), deviceX, deviceA);
    CUSYNC_CUDA_CHECK(cudaGetLastError());
    cusync::launchWaitKernel(producer, consumer, consumerStream);
    consumeA<<<dim3(kN / kTileN, kM / kTileM), kThreads, 0, consumerStream>>>(consumer.view(), inputA, deviceA,
                                                                              deviceB, deviceC);
    CUSYNC_CUDA_CHECK(cudaGetLastError());
    CUSYNC_CUDA_CHECK(cudaEventRecord(consumerDone, consumerStream));
  };
  CUSYNC_CUDA_CHECK(cudaEventRecord(consumerDone, consumerStream));
  runPair();
  CUSYNC_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<float> c(std::size_t(kM) * kN);
  CUSYNC_CUDA_CHECK(cudaMemcpy(c.data(), deviceC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::size_t wrong = 0;
  for (int row = 0; row < kM; ++row)
    for (int column = 0; column < kN; ++column) {
      float expected = 0.0f;
      for (int k = 0; k < kK; ++k)
        expected += (2.0f * x[std::size_t(row) * kK + k] + 1.0f) * b[std::size_t(k) * kN + column];
      const float seen = c[std::size_t(row) * kN + column];
      if (seen != expected && wrong++ == 0)
        std::printf("rewriter_demo: C[%d,%d] = %g, expected %g\n", row, column, seen, expected);
    }
  if (wrong != 0) {
    std::printf("rewriter_demo (%s): %zu wrong elements of C\n", kVariant, wrong);
    return 1;
  }

  constexpr int kRepetitions = 50;
  cudaEvent_t start, stop;
  CUSYNC_CUDA_CHECK(cudaEventCreate(&start));
  CUSYNC_CUDA_CHECK(cudaEventCreate(&stop));
  CUSYNC_CUDA_CHECK(cudaEventRecord(start, consumerStream));
  for (int repetition = 0; repetition < kRepetitions; ++repetition) runPair();
  CUSYNC_CUDA_CHECK(cudaEventRecord(stop, consumerStream));
  CUSYNC_CUDA_CHECK(cudaEventSynchronize(stop));
  float milliseconds = 0.0f;
  CUSYNC_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
  std::printf("rewriter_demo (%s): C matches the CPU reference (M=%d N=%d K=%d); %.1f us per producer+consumer pair\n",
              kVariant, kM, kN, kK, 1000.0f * milliseconds / kRepetitions);
  return 0;
}
