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
struct UniformCarveoutState {
  std::atomic<int> percent{int(cudaSharedmemCarveoutDefault)};
  std::atomic<bool> asked{false};  // set once a program asks for a preference: launches then apply `percent`
};
inline UniformCarveoutState& uniformCarveoutState() {
  static UniformCarveoutState state;
  return state;
}
}  // namespace detail

// From now on every kernel cusync launches prefers `percent` of the SM's configurable memory as shared memory
// (cudaFuncAttributePreferredSharedMemoryCarveout, 0-100), or, with cudaSharedmemCarveoutDefault (-1), no preference
// (the driver's choice per kernel: also what a program that never calls this gets, without a host call per launch).
inline void setUniformSharedCarveout(int percent) {
  if (percent != int(cudaSharedmemCarveoutDefault) && (percent < 0 || percent > 100))
    throw Error("cusync: a shared-memory carveout is a percent in [0, 100] or -1 (the driver's choice), not " +
                std::to_string(percent));
  detail::UniformCarveoutState& state = detail::uniformCarveoutState();
  state.percent.store(percent, std::memory_order_relaxed);
  if (percent != int(cudaSharedmemCarveoutDefault)) state.asked.store(true, std::memory_order_release);
}

// The preference launches apply (-1: none).
inline int uniformSharedCarveout() { return detail::uniformCarveoutState().percent.load(std::memory_order_relaxed); }

// Sets `kernel`'s preferred carveout to the uniform one, once a program has asked for one: a host call per launch (a
// launch captured in a CUDA graph pays it at capture only). After a preference, -1 is set explicitly, so that a
// kernel launched under one does not keep it.
template <class Kernel>
void applyUniformCarveout(Kernel kernel) {
  const detail::UniformCarveoutState& state = detail::uniformCarveoutState();
  if (!state.asked.load(std::memory_order_acquire)) return;
  CUSYNC_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                         cudaFuncAttributePreferredSharedMemoryCarveout,
                                         state.percent.load(std::memory_order_relaxed)));
}

}  // namespace cusync
