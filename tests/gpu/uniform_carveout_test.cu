// The uniform carveout (uniform_carveout.h): once a program asks for one, every kernel cusync's launchKernel starts
// carries it as its launch's preferred shared-memory carveout (read back from the kernel node a CUDA graph records),
// asking for none afterwards drops it, and a percent outside [0, 100] is refused.
#include <catch2/catch.hpp>

#include "cusync/cusync.cuh"
#include "cusync/uniform_carveout.h"

using namespace cusync;

namespace {

__global__ void carveoutProbe(int* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = 1;
}

// The carveout the kernel node of one captured launch carries (what the runtime reports for a node launched without
// one is compared, not assumed: the cases below avoid it).
int capturedCarveout(int* out) {
  cudaStream_t stream;
  CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CUSYNC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  launchKernel(carveoutProbe, dim3(1), dim3(32), 0, stream, LaunchOrdering::StreamOrder, out);
  CUSYNC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  std::size_t count = 0;
  CUSYNC_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  REQUIRE(count == 1);
  cudaGraphNode_t node;
  CUSYNC_CUDA_CHECK(cudaGraphGetNodes(graph, &node, &count));
  cudaLaunchAttributeValue value{};
  CUSYNC_CUDA_CHECK(
      cudaGraphKernelNodeGetAttribute(node, cudaKernelNodeAttributePreferredSharedMemoryCarveout, &value));
  // The graph runs too: a launch carrying the attribute is accepted.
  cudaGraphExec_t exec;
  CUSYNC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUSYNC_CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUSYNC_CUDA_CHECK(cudaGraphDestroy(graph));
  CUSYNC_CUDA_CHECK(cudaStreamDestroy(stream));
  return int(value.sharedMemCarveout);
}

}  // namespace

TEST_CASE("a uniform carveout reaches every kernel cusync launches while it is asked for", "[carveout]") {
  int* out = nullptr;
  CUSYNC_CUDA_CHECK(cudaMalloc(&out, sizeof(int)));
  const int none = capturedCarveout(out);  // never asked for: the launch carries no preference
  setUniformSharedCarveout(28);
  CHECK(capturedCarveout(out) == 28);
  setUniformSharedCarveout(60);
  CHECK(capturedCarveout(out) == 60);
  setUniformSharedCarveout(int(cudaSharedmemCarveoutDefault));
  CHECK(capturedCarveout(out) == none);
  CHECK(none != 28);
  CHECK(none != 60);
  // A direct launch with a preference is accepted too.
  setUniformSharedCarveout(28);
  launchKernel(carveoutProbe, dim3(1), dim3(32), 0, cudaStreamDefault, LaunchOrdering::StreamOrder, out);
  CUSYNC_CUDA_CHECK(cudaDeviceSynchronize());
  setUniformSharedCarveout(int(cudaSharedmemCarveoutDefault));
  CUSYNC_CUDA_CHECK(cudaFree(out));
}

TEST_CASE("a uniform carveout outside [0, 100] is refused, naming the value", "[carveout]") {
  using Catch::Matchers::Contains;
  REQUIRE_THROWS_WITH(setUniformSharedCarveout(101), Contains("not 101"));
  REQUIRE_THROWS_WITH(setUniformSharedCarveout(-2), Contains("not -2"));
  CHECK_NOTHROW(setUniformSharedCarveout(int(cudaSharedmemCarveoutDefault)));
  CHECK(uniformSharedCarveout() == int(cudaSharedmemCarveoutDefault));
}
