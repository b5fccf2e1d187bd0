// A ring of shared-memory slots filled by bulk copies (TMA's 1-D cp.async.bulk, sm_90) and emptied by consumer
// warps, synchronized by mbarriers: the primitives, one thread each. Device code, sm_90 only (the callers are
// compiled for sm_90a; below sm_90 the bodies are empty and the kernels that use them refuse to launch).
//
// Why bulk copies: a load into registers keeps its 16 bytes of registers busy until the data arrives, so the bytes a
// warp can keep in flight are bounded by its registers. A bulk copy's bytes are in flight without any register: one
// thread keeps a whole ring of slots loading (session 8: the register-streaming skinny chain stalled on loads with
// 16 warps per SM and reached 2.2-2.4 TB/s; ncu, call 5). Whole 2-D boxes (TMA tensor copies), one instruction per
// slot: with one 1-D bulk copy per weight row (33 per 16 KB slot) the chain got slower still (call 6).
//
// Phases: a slot's `full` barrier (count 1) completes when the producer has arrived with the slot's byte count and
// the copies have delivered that many bytes; its `empty` barrier (count = consumer warps) completes when every
// consumer warp has released the slot. Waiting on parity p returns once the phase of parity p has completed; a
// fresh barrier counts its phase "before 0" (parity 1) as completed, so the producer's first wait on `empty` passes.
#pragma once

#include <cstdint>

namespace cusync::ring {

__device__ __forceinline__ std::uint32_t sharedAddress(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

__device__ __forceinline__ void init(std::uint64_t* barrier, std::uint32_t count) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sharedAddress(barrier)), "r"(count) : "memory");
#endif
}

// Makes the initialized barriers visible to the async proxy (the bulk copies' completions) before first use.
__device__ __forceinline__ void fenceInit() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait(std::uint64_t* barrier, std::uint32_t parity) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "RING_WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra RING_WAIT_%=;\n"
      "}\n" ::"r"(sharedAddress(barrier)),
      "r"(parity)
      : "memory");
#endif
}

// Arrives (release) and, for a `full` barrier, announces the bytes the slot's copies will deliver.
__device__ __forceinline__ void arriveExpectingBytes(std::uint64_t* barrier, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sharedAddress(barrier)), "r"(bytes)
               : "memory");
#endif
}

__device__ __forceinline__ void arrive(std::uint64_t* barrier) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sharedAddress(barrier)) : "memory");
#endif
}

// Copies the box of `map` whose first element is (column, row) into shared memory (dense, row-major, 128-byte
// aligned), completing its bytes on `barrier`. `map` lives in kernel parameters (__grid_constant__) or global memory.
__device__ __forceinline__ void copyBox(void* sharedDestination, const void* map, int column, int row,
                                        std::uint64_t* barrier) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
          "r"(sharedAddress(sharedDestination)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(column), "r"(row), "r"(sharedAddress(barrier))
      : "memory");
#endif
}

}  // namespace cusync::ring
