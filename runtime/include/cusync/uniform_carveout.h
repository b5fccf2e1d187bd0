// One shared-memory carveout for every kernel cusync launches (launch.cuh), when a program asks for it. Host code.
//
// Why: an SM runs blocks of several kernels at once only while they agree on its split of on-chip memory between L1
// and shared memory; the driver picks each kernel's split from its own needs unless told a preference, and a block
// of a kernel with another split waits until the SM has drained. A consumer launched early (programmatic launch,
// a side stream) then cannot start beside its producer's blocks, and its blocks pile onto the first SMs that empty
// (docs/GPU_NOTES.md). Asking every stage kernel for the same preference lets them share SMs.
#pragma once

#include <atomic>
#include <string>

#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync {

namespace detail {
inline std::atomic<int>& uniformCarveoutPercent() {
  static std::atomic<int> percent{int(cudaSharedmemCarveoutDefault)};
  return percent;
}
}  // namespace detail

// From now on every kernel cusync launches prefers `percent` of the SM's configurable memory as shared memory
// (0-100), or, with cudaSharedmemCarveoutDefault (-1, what a program that never calls this gets), no preference: the
// driver's choice per kernel. launch.cuh passes it as each launch's cudaLaunchAttributePreferredSharedMemoryCarveout,
// which a CUDA graph records in the kernel node and which leaves the kernel's own attribute alone.
inline void setUniformSharedCarveout(int percent) {
  if (percent != int(cudaSharedmemCarveoutDefault) && (percent < 0 || percent > 100))
    throw Error("cusync: a shared-memory carveout is a percent in [0, 100] or -1 (the driver's choice), not " +
                std::to_string(percent));
  detail::uniformCarveoutPercent().store(percent, std::memory_order_relaxed);
}

// The preference launches carry (-1: none).
inline int uniformSharedCarveout() { return detail::uniformCarveoutPercent().load(std::memory_order_relaxed); }

}  // namespace cusync
