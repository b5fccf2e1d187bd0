// Semaphores in global memory: the release/acquire pair every cusync wait and post is built on.
// Device-only header.
//
// Memory-ordering argument (PTX memory model):
//  * post: every thread of the producer block finished its stores before a block barrier; the barrier orders them
//    before the posting thread's `fence.acq_rel.gpu`, and the fence orders them before the relaxed `red.add`
//    (fence + relaxed atomic = release pattern). Fences are cumulative, so stores of the whole block are covered.
//  * wait: one thread spins with `ld.acquire.gpu` until the count reaches its target. The acquire synchronizes with
//    the producer's release, so the producer's stores happen-before everything that thread (and, after a barrier,
//    its block) does next.
//  * Tensor-memory-accelerator traffic lives in the async proxy: a producer whose tile was stored by TMA must
//    complete the bulk group (`cp.async.bulk.wait_group 0`, not `.read`) before the release, and a consumer that
//    reads producer data with TMA issues `fence.proxy.async.global` after the acquire.
//
// Semaphores only ever count up. A consumer in iteration i (0-based) waits for `value * (i + 1)`, so repeated
// launches and CUDA graph replays need no reset. Comparisons are wrap-safe.
#pragma once

#include <cstdint>
#include <cstdio>

#include "cusync/tile.h"

// Debug watchdog: when CUSYNC_WAIT_TIMEOUT_NS is set (or in a build without NDEBUG, with a 10 s default), a spin
// that exceeds it prints what it was waiting for and traps, instead of hanging the GPU.
// Back-off between polls of a spinning wait: fewer L2 requests from waiting blocks against a later wake-up.
#ifndef CUSYNC_SPIN_SLEEP_NS
#define CUSYNC_SPIN_SLEEP_NS 32
#endif

#if !defined(CUSYNC_WAIT_TIMEOUT_NS) && !defined(NDEBUG)
#define CUSYNC_WAIT_TIMEOUT_NS 10000000000ull
#endif

namespace cusync {

// What a spinning thread reports when the watchdog fires.
struct WaitReport {
  const char* stageName;   // the waiting (consumer) stage
  TileCoord consumerTile;  // the tile the waiting block is computing
  TileCoord producerTile;  // the producer tile it needs
  std::uint32_t semaphore; // index into the producer's semaphores
};

namespace detail {

__device__ __forceinline__ std::uint32_t loadAcquire(const std::uint32_t* address) {
  std::uint32_t value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}

__device__ __forceinline__ unsigned long long loadAcquire64(const unsigned long long* address) {
  unsigned long long value;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

__device__ __forceinline__ void releaseAdd(std::uint32_t* address, std::uint32_t increment) {
  asm volatile("fence.acq_rel.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(address), "r"(increment)
               : "memory");
}

__device__ __forceinline__ std::uint64_t globalTimerNs() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));  // %% : inline asm with operands
  return t;
}

// True when `seen` has reached `target` in modular (wrap-safe) arithmetic.
__host__ __device__ constexpr bool reached(std::uint32_t seen, std::uint32_t target) {
  return static_cast<std::int32_t>(seen - target) >= 0;
}

}  // namespace detail

// Spins (one thread) until *semaphore reaches target, with acquire semantics.
__device__ __forceinline__ void spinUntilReached(const std::uint32_t* semaphore, std::uint32_t target,
                                                 const WaitReport& report) {
  std::uint32_t seen = detail::loadAcquire(semaphore);
  if (detail::reached(seen, target)) return;
#if defined(CUSYNC_WAIT_TIMEOUT_NS)
  const std::uint64_t start = detail::globalTimerNs();
#endif
  while (!detail::reached(seen, target)) {
    if (CUSYNC_SPIN_SLEEP_NS > 0) __nanosleep(CUSYNC_SPIN_SLEEP_NS);
    seen = detail::loadAcquire(semaphore);
#if defined(CUSYNC_WAIT_TIMEOUT_NS)
    if (detail::globalTimerNs() - start > CUSYNC_WAIT_TIMEOUT_NS) {
      printf("cusync watchdog: stage '%s' tile (%u,%u,%u) block (%u,%u,%u) waited %llu ns for producer tile "
             "(%u,%u,%u): semaphore %u is %u, expected %u\n",
             report.stageName, report.consumerTile.x, report.consumerTile.y, report.consumerTile.z, blockIdx.x,
             blockIdx.y, blockIdx.z, static_cast<unsigned long long>(CUSYNC_WAIT_TIMEOUT_NS),
             report.producerTile.x, report.producerTile.y, report.producerTile.z, report.semaphore, seen, target);
      __trap();
    }
#endif
  }
}

// Spins until a 64-bit ticket counter (a stage's tile counter) reaches `target`: the wait-kernel's wait for the
// producer's blocks. The counters never wrap, so the comparison is a plain one; the watchdog as above.
__device__ __forceinline__ void spinUntilCountReached(const unsigned long long* counter, unsigned long long target) {
  unsigned long long seen = detail::loadAcquire64(counter);
  if (seen >= target) return;
#if defined(CUSYNC_WAIT_TIMEOUT_NS)
  const std::uint64_t start = detail::globalTimerNs();
#endif
  while (seen < target) {
    if (CUSYNC_SPIN_SLEEP_NS > 0) __nanosleep(CUSYNC_SPIN_SLEEP_NS);
    seen = detail::loadAcquire64(counter);
#if defined(CUSYNC_WAIT_TIMEOUT_NS)
    if (detail::globalTimerNs() - start > CUSYNC_WAIT_TIMEOUT_NS) {
      printf("cusync watchdog: block (%u,%u,%u) waited %llu ns for the producer's blocks: tile counter is %llu, "
             "expected %llu\n",
             blockIdx.x, blockIdx.y, blockIdx.z, static_cast<unsigned long long>(CUSYNC_WAIT_TIMEOUT_NS), seen,
             target);
      __trap();
    }
#endif
  }
}

}  // namespace cusync
