// Launching stage kernels: plain, or with programmatic dependent launch (PDL, sm_90) so that the kernel may start
// while the previous kernel on the stream runs — once all of that kernel's blocks have called
// triggerDependentLaunch() or exited. Host code.
#pragma once

#include <cstddef>
#include <utility>

#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync {

template <class... KernelParameters, class... Arguments>
void launchKernel(void (*kernel)(KernelParameters...), dim3 grid, dim3 block, std::size_t sharedBytes,
                  cudaStream_t stream, bool programmaticDependency, Arguments&&... arguments) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = sharedBytes;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = programmaticDependency ? 1 : 0;
  CUSYNC_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Arguments>(arguments)...));
}

}  // namespace cusync
