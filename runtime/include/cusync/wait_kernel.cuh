// The cuSync paper's wait-kernel: a one-thread kernel launched on the consumer's stream just before the consumer.
// It returns only when every work unit of the producer's current launch is taken by a started block, so the
// consumer's blocks, which the stream starts after it, never occupy slots that producer blocks they wait on still
// need: every spin waits for a block that is running or finished (progress under in-order block dispatch).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cusync/error.h"
#include "cusync/semaphore.cuh"
#include "cusync/stage.cuh"

namespace cusync {

namespace detail {
// A template so that every translation unit including this header may define it: a plain __global__ function
// defined in a header is a duplicate symbol (its host stub) once two .cu files of one program include it.
template <int = 0>
__global__ void waitForProducerBlocks(const unsigned long long* producerTileCounter, std::uint32_t producerTickets,
                                      std::uint32_t producerTicketsOnceTaken,
                                      const unsigned long long* consumerTileCounter, std::uint32_t consumerTickets) {
  // The iteration comes from the consumer's own tile counter: the consumer's previous launch precedes this kernel
  // on the consumer's stream, so the counter holds exactly iteration * consumerTiles here. A counter private to the
  // consumer's wait-kernels would advance once per producer and break a consumer with several producers (each has
  // its wait-kernel); this is right for any number of producers, in every launch and graph replay.
  // Persistent stages draw more tickets per launch than they have work units (StageView::persistentBlocks), or one
  // per block (static units); the wait ends once every work unit of the launch is taken, i.e. owned by a running
  // block (StageView::ticketsOnceEveryUnitIsTaken).
  // The counters are 64-bit (stage.cuh), so the target never wraps and a plain comparison is exact.
  const unsigned long long iteration = detail::loadAcquire64(consumerTileCounter) / consumerTickets;
  spinUntilCountReached(producerTileCounter, iteration * producerTickets + producerTicketsOnceTaken);
}
}  // namespace detail

// Enqueues the wait-kernel for `consumer` (whose kernel comes next on `consumerStream`) on `producer`'s blocks.
inline void launchWaitKernel(const Stage& producer, const Stage& consumer, cudaStream_t consumerStream) {
  // Counters count tickets (work units, plus one stop ticket per block for persistent stages; one per block for
  // persistent stages with static units).
  detail::waitForProducerBlocks<><<<1, 1, 0, consumerStream>>>(producer.tileCounter(), producer.ticketsPerLaunch(),
                                                              producer.ticketsOnceEveryUnitIsTaken(),
                                                              consumer.tileCounter(),
                                                              consumer.ticketsPerLaunch());
  CUSYNC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cusync
