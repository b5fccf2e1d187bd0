// The uniform carveout (uniform_carveout.h): once a program asks for one, every kernel cusync's launchKernel starts
// carries it as its preferred shared-memory carveout, and asking for none afterwards resets what a launch sets; a
// percent outside [0, 100] is refused.
#include <catch2/catch.hpp>

#include "cusync/cusync.cuh"
#include "cusync/uniform_carveout.h"

using namespace cusync;

namespace {

template <int kWhich>
__global__ void carveoutProbe(int* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = kWhich;
}

template <int kWhich>
int preferredCarveoutOf() {
  cudaFuncAttributes attributes{};
  CUSYNC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, carveoutProbe<kWhich>));
  return attributes.preferredShmemCarveout;
}

template <int kWhich>
void launchProbe(int* out) {
  launchKernel(carveoutProbe<kWhich>, dim3(1), dim3(32), 0, cudaStreamDefault, LaunchOrdering::StreamOrder, out);
  CUSYNC_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

TEST_CASE("a uniform carveout reaches every kernel cusync launches while it is asked for", "[carveout]") {
  int* out = nullptr;
  CUSYNC_CUDA_CHECK(cudaMalloc(&out, sizeof(int)));
  const int untouched = preferredCarveoutOf<2>();
  setUniformSharedCarveout(28);
  launchProbe<1>(out);
  CHECK(preferredCarveoutOf<1>() == 28);
  CHECK(preferredCarveoutOf<2>() == untouched);  // not launched: not touched
  setUniformSharedCarveout(60);
  launchProbe<1>(out);
  launchProbe<2>(out);
  CHECK(preferredCarveoutOf<1>() == 60);
  CHECK(preferredCarveoutOf<2>() == 60);
  // Asking for none after a preference sets none explicitly, so that a kernel does not keep the last one.
  setUniformSharedCarveout(int(cudaSharedmemCarveoutDefault));
  launchProbe<1>(out);
  CHECK(preferredCarveoutOf<1>() == int(cudaSharedmemCarveoutDefault));
  CHECK(uniformSharedCarveout() == int(cudaSharedmemCarveoutDefault));
  CUSYNC_CUDA_CHECK(cudaFree(out));
}

TEST_CASE("a uniform carveout outside [0, 100] is refused, naming the value", "[carveout]") {
  using Catch::Matchers::Contains;
  REQUIRE_THROWS_WITH(setUniformSharedCarveout(101), Contains("not 101"));
  REQUIRE_THROWS_WITH(setUniformSharedCarveout(-2), Contains("not -2"));
  CHECK_NOTHROW(setUniformSharedCarveout(int(cudaSharedmemCarveoutDefault)));
}
