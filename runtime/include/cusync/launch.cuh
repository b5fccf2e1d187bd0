// Launching stage kernels: plain, or with programmatic dependent launch (PDL, sm_90) so that the kernel may start
// while the previous kernel on the stream runs — once all of that kernel's blocks have called
// triggerDependentLaunch() or exited. Host code.
#pragma once

#include <cstddef>
#include <utility>

#include <cuda_runtime.h>

#include "cusync/error.h"
#include "cusync/uniform_carveout.h"

namespace cusync {

// When a launched kernel may start relative to the kernel before it on the stream.
enum class LaunchOrdering {
  StreamOrder,   // after the previous kernel on the stream has finished
  Programmatic,  // programmatic stream serialization: once every block of the previous kernel has triggered
                 // (triggerDependentLaunch) or exited; the consumer's waits then order the data (sm_90)
};

// `clusterBlocksX` > 1 launches thread block clusters of that many blocks along x (sm_90; the grid's x must be a
// multiple of it).
template <class... KernelParameters, class... Arguments>
void launchKernelInClusters(void (*kernel)(KernelParameters...), dim3 grid, dim3 block, std::size_t sharedBytes,
                            cudaStream_t stream, LaunchOrdering ordering, unsigned clusterBlocksX,
                            Arguments&&... arguments) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = sharedBytes;
  config.stream = stream;
  cudaLaunchAttribute attributes[3]{};
  unsigned count = 0;
  if (ordering == LaunchOrdering::Programmatic) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  if (clusterBlocksX > 1) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count].val.clusterDim.x = clusterBlocksX;
    attributes[count].val.clusterDim.y = 1;
    attributes[count].val.clusterDim.z = 1;
    ++count;
  }
  if (const int carveout = uniformSharedCarveout(); carveout >= 0) {  // uniform_carveout.h
    attributes[count].id = cudaLaunchAttributePreferredSharedMemoryCarveout;
    attributes[count].val.sharedMemCarveout = unsigned(carveout);
    ++count;
  }
  config.attrs = attributes;
  config.numAttrs = count;
  CUSYNC_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Arguments>(arguments)...));
}

template <class... KernelParameters, class... Arguments>
void launchKernel(void (*kernel)(KernelParameters...), dim3 grid, dim3 block, std::size_t sharedBytes,
                  cudaStream_t stream, LaunchOrdering ordering, Arguments&&... arguments) {
  launchKernelInClusters(kernel, grid, block, sharedBytes, stream, ordering, 1u,
                         std::forward<Arguments>(arguments)...);
}

}  // namespace cusync
