// A tile-synchronized GEMM stage for a few tokens (M <= kGemvMaxTokens): D = A x W^T with the weights W [N, K]
// streamed through registers on the CUDA cores, one block per work unit (a TileN-column tile, or a split-K part of
// one). It is the hooked CUTLASS GEMM's counterpart where wgmma would pad M to 64 rows: it takes its unit from the
// stage's counter, waits for the producer tiles its k-range of A reads, and posts its tile under the stage's
// policy, so a chain can swap it in for the CUTLASS GEMM without changing a policy or a wait.
//
// Why its own kernel: in token generation the attention chain's GEMMs are weight streams (GPT-3's QKV GEMM reads
// 113 MB of weights for one token), where the hooked 64-row CUTLASS tiles lost 4-5 us each to cuBLAS's 8-token-wide
// tiles (docs/BENCHMARKS.md, issue 14, session 7 call 4), and the MLP's one-token GEMV of this shape streamed at
// 0.93-0.98 of a one-pass read (session 8). Its inner loop is that GEMV's: each warp owns kGemvRowsPerLoad whole
// rows at a time and loads 512 contiguous bytes of a row per instruction, kGemvUnroll loads per row in flight; the
// unit's slice of the tokens' activations is staged once in shared memory.
//
// Per unit:
//   1. every warp issues its first weight loads, which need nothing from the producer (weights before the wait);
//      a waiting stage may instead copy the unit's whole weight slab into shared memory (stageWeights), so that its
//      weights stream while the producer computes: in token generation the output GEMM's blocks are resident
//      during the attention stage, which reads little from memory;
//   2. warp 0 waits until the producer tiles covering A's rows [0, M) and the unit's k-range are posted
//      (warpWaitPostedColumns: acquire in every lane, the barrier extends it to the block);
//   3. the block stages the activations, streams its rows, and sums each row over its lanes;
//   4. split-K: each part writes its fp32 sums to its own slot; the part that arrives last adds the slots in part
//      order (the result does not depend on the order of arrival), resets the tile's arrival counter and finishes
//      the tile;
//   5. the tile is stored and, after a block barrier, posted by thread 0 (release).
// Progress: a unit waits only for tiles of an earlier stage, launched before it; its consumers start only once
// every block of it is resident or done (programmatic launch triggered at block start, or the wait-kernel), so
// every tile it waits for is computed by a block that runs. Device code; the host side is examples/gemm/
// hooked_gemv.cuh.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/block_trace.cuh"
#include "cusync/gemv_stage_shape.h"
#include "cusync/half_dot.cuh"
#include "cusync/producer_range_wait.cuh"
#include "cusync/producer_tile_range.hpp"
#include "cusync/split_k_range.h"
#include "cusync/stage_view.cuh"
#include "cusync/stress_delay.cuh"

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
  // A waiting stage's blocks copy their unit's whole weight slab (TileN rows of the k-range) into shared memory
  // before they wait, behind the staged activations (`activationVectors` 16-byte vectors: kTokens x the longest
  // part), and multiply from there: the weights then stream while the producer still computes.
  bool stageWeights = false;
  int activationVectors = 0;
  // Diagnostics: one record per block at trace[blockIdx.x] (block_trace.h), stage index `traceStage`; null: none.
  BlockTrace* trace = nullptr;
  std::uint32_t traceStage = 0;
};

namespace detail {

// Rows [row0, row0 + kGemvRowsPerLoad) of W, steps [step, step + kGemvUnroll) of the unit's k-range, this lane's
// 16 bytes of each; zeros past the k-range (a short last step).
template <int kRows, int kUnroll>
__device__ __forceinline__ void loadGemvWeights(uint4 (&w)[kUnroll][kRows], const __half* rows, std::size_t k,
                                                int step, int kLength, int lane) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const bool valid = (step + u) * kGemvStep + 8 * lane < kLength;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      w[u][r] = valid ? __ldcs(reinterpret_cast<const uint4*>(rows + std::size_t(r) * k + (step + u) * kGemvStep))
                      : make_uint4(0u, 0u, 0u, 0u);
  }
}

// The same batch from a unit's weight slab staged in shared memory ([row of the tile][k-range / 8] vectors).
template <int kRows, int kUnroll>
__device__ __forceinline__ void loadStagedGemvWeights(uint4 (&w)[kUnroll][kRows], const uint4* slab, int row0,
                                                      int vectorsPerRow, int step, int kLength, int lane) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const bool valid = (step + u) * kGemvStep + 8 * lane < kLength;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      w[u][r] = valid ? slab[(row0 + r) * vectorsPerRow + (step + u) * 32 + lane] : make_uint4(0u, 0u, 0u, 0u);
  }
}

__device__ __forceinline__ void copyAsync16(void* shared, const void* global) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(global) : "memory");
}
__device__ __forceinline__ void commitAsyncCopies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void waitAsyncCopies() { asm volatile("cp.async.wait_all;" ::: "memory"); }

}  // namespace detail

// Blocks per SM the registers are budgeted for: kBlocksPerSm, or three quarters of it from three tokens on, where
// 4 x 3-4 fp32 accumulators and the loads in flight spill at 64 registers (4 blocks of 256 threads).
constexpr int gemvBlocksPerSmAt(int tokens, int blocksPerSm) {
  return tokens <= 2 || blocksPerSm < 4 ? blocksPerSm : (blocksPerSm * 3 + 3) / 4;
}

template <class InputPolicy, class OutputPolicy, int kTokens, int kTileN, int kBlocksPerSm>
__global__ void __launch_bounds__(kGemvThreads, gemvBlocksPerSmAt(kTokens, kBlocksPerSm))
    hookedGemvKernel(const __grid_constant__ HookedGemvParams<InputPolicy> p) {
  static_assert(kTokens >= 1 && kTokens <= kGemvMaxTokens, "the GEMV's token counts");
  static_assert(kTileN % (kGemvWarps * kGemvRowsPerLoad) == 0, "whole row groups per tile");
  constexpr int kRows = kGemvRowsPerLoad, kUnroll = kGemvUnroll;
  constexpr int kGroupRows = kGemvWarps * kRows;  // rows the block streams at once
  constexpr int kGroups = kTileN / kGroupRows;
  extern __shared__ uint4 dynamicShared[];  // activations [token][the unit's k-range / 8], then the staged slab
  uint4* const activations = dynamicShared;
  uint4* const slab = dynamicShared + p.activationVectors;  // [row of the tile][the unit's k-range / 8]
  __shared__ float tileSums[kTokens * kTileN];  // [token][column of the tile]
  alignas(WorkUnit) __shared__ unsigned char unitStorage[sizeof(WorkUnit)];  // WorkUnit has member initializers
  __shared__ bool arrivedLast;
  WorkUnit& sharedUnit = *reinterpret_cast<WorkUnit*>(unitStorage);

  if (p.triggerDependentsAtStart) triggerDependentLaunch();
  const std::uint64_t traceStart = p.trace != nullptr ? detail::globalTimerNs() : 0;
  if (threadIdx.x == 0) {
    // Only a stage that waits needs a ticket: the iteration its semaphore targets count by. Its split-K arrivals
    // count on across runs without one, and a post only adds. A stage that waits for nothing takes the unit its
    // index names in the stage's order, and if it posts, counts itself as started for its consumers' wait-kernels
    // without waiting for the atomic. Why: 250-400 blocks drawing tickets from one counter at once took about 2 us
    // before their first loads (block traces, docs/BENCHMARKS.md session 12). Progress does not need the ticket's
    // order here: a consumer starts only once every block of this stage has started (its wait-kernel, or the
    // programmatic launch triggered at block start), or, without a wait-kernel, only where all the blocks fit at
    // once (wait_kernel_decision.h).
    if (p.input.synchronized()) {
      const WorkUnit hardware = p.stage.hardwareUnit(blockIdx.x);
      sharedUnit = p.stage.acquireWorkUnit(hardware.ticket.tile, hardware.part);
    } else {
      sharedUnit = p.stage.unsynchronizedWorkUnit(blockIdx.x);
      if (p.stage.semaphores != nullptr) p.stage.countBlock();
    }
  }
  __syncthreads();
  const WorkUnit unit = sharedUnit;
  const TileCoord tile = unit.ticket.tile;
  const KBlockRange kBlocks = kBlocksOfPart(unit.part, unit.parts, p.k / kGemvKBlock);
  const int kBegin = kBlocks.begin * kGemvKBlock, kLength = kBlocks.count * kGemvKBlock;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::size_t k = std::size_t(p.k);
  auto rowsOfGroup = [&](int group) {
    return p.w + (std::size_t(tile.x) * kTileN + group * kGroupRows + warp * kRows) * k + kBegin + 8 * lane;
  };

  // 1. The weights need nothing from the producer: the whole slab (staged) or the first loads are in flight during
  // the wait.
  const int vectorsPerRow = kLength / 8;
  const bool staged = p.stageWeights;
  uint4 w[kUnroll][kRows];
  if (staged) {
    const __half* unitRows = p.w + std::size_t(tile.x) * kTileN * k + kBegin;
    for (int i = threadIdx.x; i < kTileN * vectorsPerRow; i += kGemvThreads) {
      const int row = i / vectorsPerRow, j = i % vectorsPerRow;
      detail::copyAsync16(slab + i, unitRows + std::size_t(row) * k + 8 * j);
    }
    detail::commitAsyncCopies();
  } else {
    detail::loadGemvWeights<kRows, kUnroll>(w, rowsOfGroup(0), k, 0, kLength, lane);
  }

  // 2. A's producer tiles: rows [0, m), the unit's k-range.
  if (threadIdx.x == 0) CUSYNC_CHAIN_DELAY(tile.x * 131u + unit.part);  // stress builds: a slow consumer
  if (warp == 0 && p.input.synchronized()) {
    ProducerTileRange needed = producerTilesCovering(0, std::uint32_t(p.m), std::uint32_t(kBegin),
                                                     std::uint32_t(kBegin + kLength), p.producerTileRows,
                                                     p.producerTileColumns, p.input.producerGrid);
    while (!needed.empty())
      needed.xBegin = warpWaitPostedColumns(p.input, needed, 0, unit.ticket.iteration, p.stage, tile);
  }
  if (p.waitForPriorGrid) waitForPriorGrids();
  __syncthreads();  // warp 0's acquire, for every thread's reads of A
  const std::uint64_t traceWaited = p.trace != nullptr ? detail::globalTimerNs() : 0;

  // 3. The tokens' k-range (from L2: A was written by other SMs during this launch's lifetime), then the rows.
  const int vectorsPerToken = kLength / 8;
  for (int i = threadIdx.x; i < kTokens * vectorsPerToken; i += kGemvThreads) {
    const int token = i / vectorsPerToken, j = i % vectorsPerToken;
    activations[i] = __ldcg(reinterpret_cast<const uint4*>(p.a + std::size_t(token) * k + kBegin) + j);
  }
  if (staged) detail::waitAsyncCopies();  // this thread's copies; the barrier makes every thread's visible
  __syncthreads();

  const int steps = (kLength + kGemvStep - 1) / kGemvStep;
#pragma unroll 1
  for (int group = 0; group < kGroups; ++group) {
    const __half* rows = rowsOfGroup(group);
    float acc[kRows][kTokens] = {};
#pragma unroll 1
    for (int step = 0; step < steps; step += kUnroll) {
      if (staged)
        detail::loadStagedGemvWeights<kRows, kUnroll>(w, slab, group * kGroupRows + warp * kRows, vectorsPerRow, step,
                                                      kLength, lane);
      else if (group != 0 || step != 0)
        detail::loadGemvWeights<kRows, kUnroll>(w, rows, k, step, kLength, lane);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if ((step + u) * kGemvStep + 8 * lane >= kLength) continue;  // past the k-range: this lane has no data
#pragma unroll
        for (int t = 0; t < kTokens; ++t) {
          const uint4 x = activations[t * vectorsPerToken + (step + u) * 32 + lane];
#pragma unroll
          for (int r = 0; r < kRows; ++r) acc[r][t] = detail::dot8(acc[r][t], w[u][r], x);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int t = 0; t < kTokens; ++t) {
        const float v = detail::warpSum(acc[r][t]);
        if (lane == 0) tileSums[t * kTileN + group * kGroupRows + warp * kRows + r] = v;
      }
  }
  __syncthreads();

  // 4. Split-K by last arrival.
  const std::uint32_t parts = unit.parts;
  const std::uint32_t linear = linearIndex(tile, p.stage.grid);
  constexpr int kSlot = kGemvMaxTokens * kTileN;  // floats per part's slot
  if (parts > 1) {
    float* mine = p.splitPartials + (std::size_t(linear) * parts + unit.part) * kSlot;
    for (int i = threadIdx.x; i < kTokens * kTileN; i += kGemvThreads) __stcg(mine + i, tileSums[i]);
    __syncthreads();  // every thread's partials before thread 0's release below
    if (threadIdx.x == 0) {
      __threadfence();
      const std::uint32_t before = atomicAdd(p.splitArrivals + linear, 1u);
      arrivedLast = before + 1u == parts;
      // The last part takes the count back to 0 (as split_k_reduction.hpp does): every part of this run has
      // arrived, and the next run's parts come after this launch, so the counter never grows and never wraps. (Counting
      // on across runs and testing a multiple of `parts` breaks at the 32-bit wrap unless `parts` is a power of two.)
      if (arrivedLast) atomicSub(p.splitArrivals + linear, parts);
      __threadfence();                             // acquire: the other parts' partials before our reads
    }
    __syncthreads();
    if (!arrivedLast) {  // a later part finishes the tile
      if (p.trace != nullptr && threadIdx.x == 0)
        recordBlockTrace(p.trace, p.traceStage, tile.x, traceStart, traceWaited);
      return;
    }
    const float* slots = p.splitPartials + std::size_t(linear) * parts * kSlot;
    for (int i = threadIdx.x; i < kTokens * kTileN; i += kGemvThreads) {
      float sum = 0.0f;
      for (std::uint32_t q = 0; q < parts; ++q) sum += __ldcg(slots + std::size_t(q) * kSlot + i);
      tileSums[i] = sum;  // this thread's own entry: no barrier needed before the store below reads it
    }
  }

  // 5. Store and post.
  for (int i = threadIdx.x; i < kTokens * kTileN; i += kGemvThreads) {
    const int token = i / kTileN, column = i % kTileN;
    p.d[std::size_t(token) * p.n + std::size_t(tile.x) * kTileN + column] = __float2half(tileSums[i]);
  }
  if (threadIdx.x == 0) CUSYNC_CHAIN_DELAY(tile.x * 7u + 3u);  // stress builds: a slow producer, before its post
  __syncthreads();  // every thread's stores before thread 0's release
  if (threadIdx.x == 0) p.stage.template postThread<OutputPolicy>(tile);
  if (p.trace != nullptr && threadIdx.x == 0)
    recordBlockTrace(p.trace, p.traceStage, tile.x, traceStart, traceWaited);
}

}  // namespace cusync
