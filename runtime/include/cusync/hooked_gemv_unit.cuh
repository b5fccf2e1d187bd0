// What the two hooked GEMV stages share around their multiply (hooked_gemv_kernel.cuh on the CUDA cores,
// hooked_mma_gemv_kernel.cuh on the tensor cores): the launch's parameters and the steps of one work unit that do not
// depend on how the rows are multiplied — taking the unit, waiting for A's producer tiles, staging the tokens'
// activations, and finishing the tile (split-K by last arrival, store, post). Device code.
//
// Progress: a unit waits only for tiles of an earlier stage, launched before it; its consumers start only once every
// block of it is resident or done (programmatic launch triggered at block start, or the wait-kernel), so every tile it
// waits for is computed by a block that runs.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/block_trace.cuh"
#include "cusync/gemv_stage_shape.h"
#include "cusync/producer_range_wait.cuh"
#include "cusync/producer_tile_range.hpp"
#include "cusync/split_k_range.h"
#include "cusync/stage_view.cuh"
#include "cusync/stress_delay.cuh"
#include "cusync/tile_arrival.cuh"

namespace cusync {

template <class InputPolicy>
struct HookedGemvParams {
  int m = 0, n = 0, k = 0;
  const __half* a = nullptr;  // [m, k], row-major
  const __half* w = nullptr;  // [n, k]: B of D = A x B stored N x K, K contiguous (the hooked GEMMs' layout)
  __half* d = nullptr;        // [m, n], row-major
  StageView stage;            // this stage: grid (x: N tiles, y: one row tile), counter, order, split, semaphores
  InputView<InputPolicy> input;  // A's producer; unsynchronized when A is not produced in the chain
  std::uint32_t producerTileRows = 0, producerTileColumns = 0;  // A's producer tiles, in elements of A
  float* splitPartials = nullptr;         // split-K: tiles x parts slots of kGemvMaxTokens x TileN fp32 sums
  std::uint32_t* splitArrivals = nullptr;  // split-K: one counter per tile, zero before the first run
  bool triggerDependentsAtStart = false;  // this stage is a programmatic-launch producer
  bool waitForPriorGrid = false;          // the PDL grid-sync baseline: the whole previous grid before A
  // The CUDA-core stage only: a waiting stage's blocks copy their unit's whole weight slab (TileN rows of the
  // k-range) into shared memory before they wait, behind the staged activations (`activationVectors` 16-byte vectors),
  // and multiply from there: the weights then stream while the producer still computes.
  bool stageWeights = false;
  int activationVectors = 0;  // 16-byte vectors of dynamic shared memory the staged activations take
  // Diagnostics: one record per block at trace[blockIdx.x] (block_trace.h), stage index `traceStage`; null: none.
  BlockTrace* trace = nullptr;
  std::uint32_t traceStage = 0;
};

// A unit's k-range, in k.
struct GemvKRange {
  int begin = 0, length = 0;
};

// What a block starts with: its work unit and, for the block trace, when it started.
struct GemvUnitStart {
  WorkUnit unit;
  std::uint64_t traceStart = 0;
};

namespace detail {

// The block's work unit; thread 0 decides, every thread returns it (one block barrier).
//
// Only a stage that waits needs a ticket: the iteration its semaphore targets count by. Its split-K arrivals count on
// across runs without one, and a post only adds. A stage that waits for nothing takes the unit its index names in the
// stage's order, and if it posts, counts itself as started for its consumers' wait-kernels without waiting for the
// atomic. Why: 250-400 blocks drawing tickets from one counter at once took about 2 us before their first loads
// (block traces, docs/BENCHMARKS.md session 12). Progress does not need the ticket's order here: a consumer starts
// only once every block of this stage has started (its wait-kernel, or the programmatic launch triggered at block
// start), or, without a wait-kernel, only where all the blocks fit at once (wait_kernel_decision.h).
//
// Before it, a programmatic-launch producer lets its consumers launch (at block start: they then wait on the GPU).
template <class InputPolicy>
__device__ __forceinline__ GemvUnitStart startGemvUnit(const HookedGemvParams<InputPolicy>& p) {
  alignas(WorkUnit) __shared__ unsigned char unitStorage[sizeof(WorkUnit)];  // WorkUnit has member initializers
  WorkUnit& sharedUnit = *reinterpret_cast<WorkUnit*>(unitStorage);
  if (p.triggerDependentsAtStart) triggerDependentLaunch();
  const std::uint64_t traceStart = p.trace != nullptr ? detail::globalTimerNs() : 0;
  if (threadIdx.x == 0) {
    if (p.input.synchronized()) {
      const WorkUnit hardware = p.stage.hardwareUnit(blockIdx.x);
      sharedUnit = p.stage.acquireWorkUnit(hardware.ticket.tile, hardware.part);
    } else {
      sharedUnit = p.stage.unsynchronizedWorkUnit(blockIdx.x);
      if (p.stage.semaphores != nullptr) p.stage.countBlock();
    }
  }
  __syncthreads();
  return GemvUnitStart{sharedUnit, traceStart};
}

template <class InputPolicy>
__device__ __forceinline__ GemvKRange kRangeOfGemvUnit(const HookedGemvParams<InputPolicy>& p, const WorkUnit& unit) {
  const KBlockRange kBlocks = kBlocksOfPart(unit.part, unit.parts, p.k / kGemvKBlock);
  return GemvKRange{kBlocks.begin * kGemvKBlock, kBlocks.count * kGemvKBlock};
}

// Warp 0 waits until the producer tiles covering A's rows [0, M) and the unit's k-range are posted
// (warpWaitPostedColumns: acquire in every lane), or every thread waits for the whole previous grid. The caller's next
// block barrier extends warp 0's acquire to the block.
template <class InputPolicy>
__device__ __forceinline__ void waitForGemvInput(const HookedGemvParams<InputPolicy>& p, const WorkUnit& unit,
                                                 GemvKRange range) {
  const TileCoord tile = unit.ticket.tile;
  if (threadIdx.x == 0) CUSYNC_CHAIN_DELAY(tile.x * 131u + unit.part);  // stress builds: a slow consumer
  if (threadIdx.x / 32 == 0 && p.input.synchronized()) {
    ProducerTileRange needed = producerTilesCovering(0, std::uint32_t(p.m), std::uint32_t(range.begin),
                                                     std::uint32_t(range.begin + range.length), p.producerTileRows,
                                                     p.producerTileColumns, p.input.producerGrid);
    while (!needed.empty())
      needed.xBegin = warpWaitPostedColumns(p.input, needed, 0, unit.ticket.iteration, p.stage, tile);
  }
  if (p.waitForPriorGrid) waitForPriorGrids();
}

// The tokens' k-range into shared memory, token t at activations[t * strideVectors] (16-byte vectors), read from L2:
// A was written by other SMs during this launch's lifetime. No barrier.
template <int kTokens>
__device__ __forceinline__ void stageGemvActivations(uint4* activations, int strideVectors, const __half* a,
                                                     std::size_t k, GemvKRange range, int threads) {
  const int vectorsPerToken = range.length / 8;
  for (int i = threadIdx.x; i < kTokens * vectorsPerToken; i += threads) {
    const int token = i / vectorsPerToken, j = i % vectorsPerToken;
    activations[token * strideVectors + j] =
        __ldcg(reinterpret_cast<const uint4*>(a + std::size_t(token) * k + range.begin) + j);
  }
}

// Steps after the multiply, from the block's fp32 sums tileSums[token][column of the tile] (every thread's entries
// written and a block barrier passed):
//   split-K: each part writes its sums to its own slot; the part that arrives last adds the slots in part order (the
//   result does not depend on the order of arrival), resets the tile's arrival counter and finishes the tile;
//   the tile is stored and, after a block barrier, posted by thread 0 (release).
template <class OutputPolicy, int kTokens, int kTileN, class InputPolicy>
__device__ __forceinline__ void finishGemvTile(const HookedGemvParams<InputPolicy>& p, const WorkUnit& unit,
                                               float* tileSums, int threads, std::uint64_t traceStart,
                                               std::uint64_t traceWaited) {
  __shared__ bool arrivedLast;
  const TileCoord tile = unit.ticket.tile;
  const std::uint32_t parts = unit.parts;
  const std::uint32_t linear = linearIndex(tile, p.stage.grid);
  constexpr int kSlot = kGemvMaxTokens * kTileN;  // floats per part's slot
  if (parts > 1) {
    float* mine = p.splitPartials + (std::size_t(linear) * parts + unit.part) * kSlot;
    for (int i = threadIdx.x; i < kTokens * kTileN; i += threads) __stcg(mine + i, tileSums[i]);
    __syncthreads();  // every thread's partials before thread 0's release below
    if (threadIdx.x == 0) arrivedLast = arriveAtTile(p.splitArrivals + linear, parts);
    __syncthreads();
    if (!arrivedLast) {  // a later part finishes the tile
      if (p.trace != nullptr && threadIdx.x == 0)
        recordBlockTrace(p.trace, p.traceStage, tile.x, traceStart, traceWaited);
      return;
    }
    const float* slots = p.splitPartials + std::size_t(linear) * parts * kSlot;
    for (int i = threadIdx.x; i < kTokens * kTileN; i += threads) {
      float sum = 0.0f;
      for (std::uint32_t q = 0; q < parts; ++q) sum += __ldcg(slots + std::size_t(q) * kSlot + i);
      tileSums[i] = sum;  // this thread's own entry: no barrier needed before the store below reads it
    }
  }

  for (int i = threadIdx.x; i < kTokens * kTileN; i += threads) {
    const int token = i / kTileN, column = i % kTileN;
    p.d[std::size_t(token) * p.n + std::size_t(tile.x) * kTileN + column] = __float2half(tileSums[i]);
  }
  if (threadIdx.x == 0) CUSYNC_CHAIN_DELAY(tile.x * 7u + 3u);  // stress builds: a slow producer, before its post
  __syncthreads();  // every thread's stores before thread 0's release
  if (threadIdx.x == 0) p.stage.template postThread<OutputPolicy>(tile);
  if (p.trace != nullptr && threadIdx.x == 0)
    recordBlockTrace(p.trace, p.traceStage, tile.x, traceStart, traceWaited);
}

// The whole-rows stages' last step (hooked_rows_mma_gemv_kernel.cuh, hooked_packed_gemv_kernel.cuh), from the warps'
// sums warpSums[warp][token][column] of the block's kRows columns from firstColumn on (every warp's entries written,
// no barrier passed since): a block barrier; thread i < kRows m adds column i % kRows of token i / kRows over the
// warps, in warp order, and stores it; a block barrier (every thread's stores before the release); thread 0 counts
// the block's arrival at its tile, and the tile's last arrival posts it.
template <class OutputPolicy, int kWarps, int kRows, class WarpSums, class InputPolicy>
__device__ __forceinline__ void storeColumnsAndArrive(const HookedGemvParams<InputPolicy>& p, const WorkUnit& unit,
                                                      const WarpSums& warpSums, std::size_t firstColumn,
                                                      std::uint64_t traceStart, std::uint64_t traceWaited) {
  __syncthreads();
  const int tid = threadIdx.x, token = tid / kRows, column = tid % kRows;
  if (token < p.m) {
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += warpSums[w][token][column];
    p.d[std::size_t(token) * p.n + firstColumn + column] = __float2half(sum);
  }
  const TileCoord tile = unit.ticket.tile;
  const std::uint32_t linear = linearIndex(tile, p.stage.grid);
  if (tid == 0) CUSYNC_CHAIN_DELAY(tile.x * 7u + 3u);  // stress builds: a slow producer, before its post
  __syncthreads();
  if (tid == 0) {
    if (arriveAtTile(p.splitArrivals + linear, unit.parts)) p.stage.template postThread<OutputPolicy>(tile);
    if (p.trace != nullptr) recordBlockTrace(p.trace, p.traceStage, tile.x, traceStart, traceWaited);
  }
}

}  // namespace detail
}  // namespace cusync
