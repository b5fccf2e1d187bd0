// One shared-memory carveout for every kernel cusync launches (launch.cuh), when a program asks for it. Host code.
//
// Why: an SM runs blocks of several kernels at once only while they agree on its split of on-chip memory between L1
// and shared memory; the driver picks each kernel's split from its own needs unless told a preference, and a block
// of a kernel with another split waits until the SM has drained. A consumer launched early (programmatic launch,
// a side stream) then cannot start beside its producer's blocks, and its blocks pile onto the first SMs that empty.
// Asking every stage kernel for the same preference (the largest shared memory) lets them share SMs.
#pragma once

#include <atomic>

#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync {

// Percent of the SM's configurable memory preferred as shared memory, cudaFuncAttributePreferredSharedMemoryCarveout;
// negative: leave each kernel's own choice (the default).
inline std::atomic<int>& uniformSharedCarveout() {
  static std::atomic<int> percent{-1};
  return percent;
}

// Sets `kernel`'s preferred carveout to the uniform one, if the program asked for one: a host call per launch (a
// launch captured in a CUDA graph pays it at capture only).
template <class Kernel>
void applyUniformCarveout(Kernel kernel) {
  const int percent = uniformSharedCarveout().load(std::memory_order_relaxed);
  if (percent < 0) return;
  CUSYNC_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                         cudaFuncAttributePreferredSharedMemoryCarveout, percent));
}

}  // namespace cusync
