// cp.async (sm_80+): 16-byte copies from global to shared memory that hold no registers while in flight, in commit
// groups. Used by the hooked GEMV stages to stream weights (hooked_gemv_kernel.cuh: a unit's slab staged while it
// waits; hooked_mma_gemv_kernel.cuh: a per-warp ring). Device code.
#pragma once

namespace cusync::detail {

__device__ __forceinline__ unsigned sharedAddress(const void* shared) {
  return static_cast<unsigned>(__cvta_generic_to_shared(shared));
}

// Bypasses L1 (.cg): the weights are read once.
__device__ __forceinline__ void copyAsync16(void* shared, const void* global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sharedAddress(shared)), "l"(global) : "memory");
}

// As copyAsync16 where `valid`; otherwise reads nothing and writes 16 zero bytes (`global` must still be a valid
// address).
__device__ __forceinline__ void copyAsync16OrZero(void* shared, const void* global, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(sharedAddress(shared)), "l"(global),
               "r"(valid ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void commitAsyncCopies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void waitAsyncCopies() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// Until at most `Pending` of this thread's most recent commit groups are still in flight.
template <int Pending>
__device__ __forceinline__ void waitAsyncCopiesPending() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

}  // namespace cusync::detail
