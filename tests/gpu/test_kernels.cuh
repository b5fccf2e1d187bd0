// The kernels of the GPU tests: a producer that writes hashed tiles after a per-tile delay, a consumer that waits
// for the producer tiles it reads and checks every element, and a consumer of two producers. Device code.
#pragma once

#include <cstdint>

#include "cusync/cusync.cuh"
#include "tile_values.h"

namespace cusync::gpu_test {

// The first wrong element a consumer read, for the test's failure message.
struct Mismatch {
  std::uint32_t stage;      // which stage read it (the test's numbering)
  std::uint32_t iteration;
  std::uint32_t producerTile;  // linear index in the producer's grid
  std::uint32_t element;
  std::uint32_t seen;
  std::uint32_t expected;
};

// Where consumers count the wrong elements they read (over all iterations and graph replays of a test).
struct MismatchLog {
  unsigned int* count = nullptr;
  Mismatch* first = nullptr;

  __device__ void report(Mismatch m) const {
    if (atomicAdd(count, 1u) == 0) *first = m;
  }
};

// Spins for `nanoseconds` of wall time: random per-tile delays make producer tiles finish out of order and late,
// which is what turns a missing or too-weak wait into a wrong element.
__device__ inline void delayFor(std::uint32_t nanoseconds) {
  if (nanoseconds == 0) return;
  std::uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(256);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

// A producer stage: takes the next tile of its order, waits its tile's delay, writes the tile's hashed values and
// posts the tile under its stage's output policy (the typed view's, checked against the stage on the host).
// Triggers dependent launch first (a no-op unless the next kernel was launched with programmatic stream
// serialization). Written with the block-scoped handle, so every scenario exercises BlockTile.
template <class OutputPolicy>
__global__ void produceTiles(TypedStageView<OutputPolicy> self, std::uint32_t* output, std::uint32_t elementsPerTile,
                             std::uint32_t salt, const std::uint32_t* delayNanoseconds) {
  triggerDependentLaunch();
  BlockTile t(self);
  const std::uint32_t tile = linearIndex(t.tile, self.grid());
  if (delayNanoseconds != nullptr) delayFor(delayNanoseconds[tile]);
  for (std::uint32_t element = threadIdx.x; element < elementsPerTile; element += blockDim.x)
    output[std::size_t(tile) * elementsPerTile + element] = producedValue(salt, t.iteration, tile, element);
  t.post();
}

// A consumer stage: for each producer tile its tile reads (`Dependency`), waits for it under `InputPolicy` (once
// per semaphore, through the satisfied-semaphore cache), checks every element against `Expectation`, and sums what
// it read. Writes relayedValue(sum) and posts its own tile under `OutputPolicy`, so it can be the middle of a chain
// (posting is a no-op for a stage without output semaphores). With an unsynchronized InputView it does not wait.
template <class InputPolicy, class Dependency, class Expectation, class OutputPolicy = TileSync>
__global__ void consumeTiles(StageView self, InputView<InputPolicy> input, GridShape producerGrid,
                             const std::uint32_t* producerData, std::uint32_t* output, std::uint32_t elementsPerTile,
                             Expectation expected, MismatchLog log, std::uint32_t stageNumber,
                             const std::uint32_t* delayNanoseconds) {
  triggerDependentLaunch();
  const TileTicket ticket = blockAcquireTile(self);
  const std::uint32_t tile = linearIndex(ticket.tile, self.grid);
  if (delayNanoseconds != nullptr) delayFor(delayNanoseconds[tile]);
  std::uint32_t* tileOutput = output + std::size_t(tile) * elementsPerTile;
  SatisfiedSemaphoreCache<> satisfied;  // thread 0's
  const std::uint32_t reads = Dependency::count(producerGrid);
  for (std::uint32_t k = 0; k < reads; ++k) {
    const TileCoord producerTile = Dependency::producerTile(ticket.tile, k, producerGrid);
    if (threadIdx.x == 0) waitThreadCached(input, satisfied, producerTile, ticket.iteration, self, ticket.tile);
    __syncthreads();  // extends thread 0's acquire to the block
    const std::uint32_t producerLinear = linearIndex(producerTile, producerGrid);
    const std::uint32_t* source = producerData + std::size_t(producerLinear) * elementsPerTile;
    for (std::uint32_t element = threadIdx.x; element < elementsPerTile; element += blockDim.x) {
      const std::uint32_t seen = source[element];
      const std::uint32_t want = expected(ticket.iteration, producerLinear, element);
      if (seen != want) log.report(Mismatch{stageNumber, ticket.iteration, producerLinear, element, seen, want});
      tileOutput[element] = (k == 0 ? 0u : tileOutput[element]) + seen;  // each thread owns its elements
    }
  }
  for (std::uint32_t element = threadIdx.x; element < elementsPerTile; element += blockDim.x)
    tileOutput[element] = relayedValue(tileOutput[element]);
  blockPost<OutputPolicy>(self, ticket.tile);
}

// A consumer of two producers with the same grid: tile t reads tile t of each, waits on each under its own policy.
template <class PolicyA, class PolicyB>
__global__ void sumTwoProducers(StageView self, InputView<PolicyA> inputA, InputView<PolicyB> inputB,
                                const std::uint32_t* dataA, const std::uint32_t* dataB, std::uint32_t* output,
                                std::uint32_t elementsPerTile, ProducedValue expectedA, ProducedValue expectedB,
                                MismatchLog log, std::uint32_t stageNumber) {
  triggerDependentLaunch();
  const TileTicket ticket = blockAcquireTile(self);
  const std::uint32_t tile = linearIndex(ticket.tile, self.grid);
  blockWait(inputA, ticket.tile, ticket, self);
  blockWait(inputB, ticket.tile, ticket, self);
  const std::size_t base = std::size_t(tile) * elementsPerTile;
  for (std::uint32_t element = threadIdx.x; element < elementsPerTile; element += blockDim.x) {
    const std::uint32_t a = dataA[base + element], b = dataB[base + element];
    const std::uint32_t wantA = expectedA(ticket.iteration, tile, element);
    const std::uint32_t wantB = expectedB(ticket.iteration, tile, element);
    if (a != wantA) log.report(Mismatch{stageNumber, ticket.iteration, tile, element, a, wantA});
    if (b != wantB) log.report(Mismatch{stageNumber + 1, ticket.iteration, tile, element, b, wantB});
    output[base + element] = relayedValue(a + b);
  }
}

}  // namespace cusync::gpu_test
