// main() of every GPU test binary: without a usable CUDA device the binary exits with 77, which ctest's
// SKIP_RETURN_CODE reports as skipped — never as passed. Otherwise Catch2 runs the tests named on the command line.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include <cuda_runtime_api.h>

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no usable CUDA device (%s)\n",
                status != cudaSuccess ? cudaGetErrorString(status) : "the driver reports 0 devices");
    return 77;
  }
  const int failed = Catch::Session().run(argc, argv);
  // Destroys the context while the process still runs, so that compute-sanitizer's leak check sees what was left.
  cudaDeviceReset();
  return failed;
}
