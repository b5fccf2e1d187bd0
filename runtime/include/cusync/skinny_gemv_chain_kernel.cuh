// The skinny chain at one token (M = 1) as a GEMV streamed through registers: the same chain, queue, units, split-K
// and posts as skinny_chain_kernel.cuh, with the shape bench/mlp/gemv_probe.cu found fastest on the H100 (session 8,
// call 10: 2.9-2.98 TB/s, 0.95-0.98 of a one-pass read of the same weights): small blocks' worth of registers so
// that kBlocksPerSm blocks of 8 warps share an SM, each warp owning kTileN / 8 whole rows of its tile and loading
// 512 contiguous bytes of a row per instruction, kUnroll such loads per row in flight, and the unit's slice of the
// token's activations staged once in shared memory. Device code; host side in examples/mlp/skinny_mlp.cuh.
//
// Per unit: warp 0 waits for a consumer unit's producer tiles; the block stages the activations, streams its rows
// (fp32 FMAs on the CUDA cores), sums each row across its lanes, and finishes the tile as the ring kernel does
// (detail::finishSkinnyTile). Progress: the ring kernel's argument (one ticket drawn ahead, waits only for earlier
// stages, nothing waits for a later ticket).
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/paired_weight_rows.h"
#include "cusync/skinny_chain_kernel.cuh"
#include "cusync/stage_view.cuh"

namespace cusync {

namespace detail {
__device__ __forceinline__ void blockBarrier() { __syncthreads(); }
}  // namespace detail

// The first W row of warp `warp`'s kTileN / kSkinnyConsumerWarps contiguous rows of tile `tile`.
template <int kTileN>
__device__ std::uint32_t warpFirstWeightRow(const SkinnyGemm& gemm, TileCoord tile, int warp) {
  constexpr int kRows = kTileN / kSkinnyConsumerWarps;
  // The warp's kRows rows are contiguous in W: a paired SwiGLU group holds whole halves of tiles, and kRows divides
  // kTileN / 2.
  static_assert((kTileN / 2) % kRows == 0, "a warp's rows within one half of a paired tile");
  return gemm.activation == SkinnyActivation::PairedSwiGlu && gemm.pairedGroupRows != 0
             ? pairedWeightRow(tile.x, std::uint32_t(warp * kRows), kTileN / 2, gemm.pairedGroupRows)
             : tile.x * kTileN + std::uint32_t(warp * kRows);
}

// Asks L2 to prefetch the first p.consumerL2PrefetchBytes of each weight row of a stage-1 unit (lane r of each warp
// its r-th row), by bulk prefetches that need no registers and no shared memory. Run by the whole block.
template <class Policy, int kTileN>
__device__ void prefetchConsumerWeights(const SkinnyChainParams<Policy>& p, TileCoord tile, std::uint32_t part) {
  constexpr int kRows = kTileN / kSkinnyConsumerWarps;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (p.consumerL2PrefetchBytes == 0 || lane >= kRows) return;
  const SkinnyGemm& gemm = p.gemms[1];
  const detail::SkinnyKRange k = detail::skinnyUnitKRange(p, 1, part);
  const std::uint32_t bytes = min(p.consumerL2PrefetchBytes, std::uint32_t(k.length) * 2u) & ~15u;
  const __half* row = gemm.w + std::size_t(warpFirstWeightRow<kTileN>(gemm, tile, warp) + lane) * gemm.k + k.begin;
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  if (bytes > 0)
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(row), "r"(bytes) : "memory");
#endif
}

// One unit of the GEMV: stage `s`'s tile `tile`, k-part `part`, in `iteration` of the chain. Run by the whole block
// (8 warps); `activations` holds the unit's k-range of the token (dynamic shared memory). `waitedAt` (thread 0's,
// for a block trace): set to the time the unit's wait for its producer tiles was over.
template <class Policy, int kTileN, int kUnroll>
__device__ void skinnyGemvUnit(const SkinnyChainParams<Policy>& p, std::uint32_t s, TileCoord tile,
                               std::uint32_t part, std::uint32_t iteration, uint4* activations, float* tileSums,
                               bool& arrivedLast, std::uint64_t* waitedAt = nullptr) {
  static_assert(kTileN % kSkinnyConsumerWarps == 0, "whole rows per warp");
  constexpr int kRows = kTileN / kSkinnyConsumerWarps;
  constexpr int kStep = 32 * 8;  // k per warp load: 32 lanes x 8 halves
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const SkinnyGemm& gemm = p.gemms[s];
  const detail::SkinnyKRange k = detail::skinnyUnitKRange(p, s, part);
  const int kBegin = k.begin, kLength = k.length;
  if (threadIdx.x == 0) CUSYNC_CHAIN_DELAY(tile.x * 31u + part);  // stress builds: a slow unit, before its wait
  if (s == 1 && warp == 0) detail::warpWaitForKRange(p, k, iteration, tile);
  __syncthreads();  // after warp 0's wait (acquire) and after the previous unit's reads of `activations`
  if (waitedAt != nullptr && threadIdx.x == 0) *waitedAt = detail::globalTimerNs();
  // From L2: a consumer's activations were written by other SMs in this launch.
  for (int i = threadIdx.x; i < kLength / 8; i += blockDim.x)
    activations[i] = __ldcg(reinterpret_cast<const uint4*>(gemm.a + kBegin) + i);
  __syncthreads();

  const __half* rows =
      gemm.w + std::size_t(warpFirstWeightRow<kTileN>(gemm, tile, warp)) * gemm.k + kBegin + 8 * lane;
  float acc[kRows] = {};
  const int steps = kLength / kStep;  // whole 256-k steps; a short last one follows
  int step = 0;
  for (; step + kUnroll <= steps; step += kUnroll) {
    uint4 w[kUnroll][kRows];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        w[u][r] = __ldcs(reinterpret_cast<const uint4*>(rows + std::size_t(r) * gemm.k + (step + u) * kStep));
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint4 x = activations[(step + u) * 32 + lane];
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = detail::dot8(acc[r], w[u][r], x);
    }
  }
  for (; step * kStep < kLength; ++step) {
    if (step * kStep + 8 * lane >= kLength) continue;  // the short last step: lanes past the k-range idle
    const uint4 x = activations[step * 32 + lane];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      acc[r] = detail::dot8(acc[r], __ldcs(reinterpret_cast<const uint4*>(rows + std::size_t(r) * gemm.k + step * kStep)),
                            x);
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float v = detail::warpSum(acc[r]);
    if (lane == 0) tileSums[(warp * kRows + r) * skinny::kTokens] = v;
  }
  __syncthreads();
  detail::finishSkinnyTile<Policy, kTileN>(p, s, tile, 1, tileSums, arrivedLast, detail::blockBarrier);
}

// The persistent chain: every block draws units of both stages from the chain's queue.
template <class Policy, int kTileN, int kUnroll, int kBlocksPerSm>
__global__ void __launch_bounds__(kSkinnyConsumerWarps * 32, kBlocksPerSm)
    skinnyGemvChainKernel(const __grid_constant__ SkinnyChainParams<Policy> p) {
  extern __shared__ uint4 activations[];
  __shared__ float tileSums[kTileN * skinny::kTokens];
  __shared__ unsigned long long currentTicket;
  __shared__ bool arrivedLast;
  if (threadIdx.x == 0) currentTicket = drawChainTicket(p.queue);
  __syncthreads();
  unsigned long long ticket = currentTicket;
  for (;;) {
    const ChainUnit unit = chainUnitOfTicket(p.queue, p.stages, ticket);
    if (!unit.hasWork()) break;
    unsigned long long nextTicket = 0;
    if (threadIdx.x == 0) nextTicket = drawChainTicket(p.queue);  // used only at the end: its round trip is hidden
    skinnyGemvUnit<Policy, kTileN, kUnroll>(p, unit.stage, unit.unit.ticket.tile, unit.unit.part,
                                            unit.unit.ticket.iteration, activations, tileSums, arrivedLast);
    if (threadIdx.x == 0) currentTicket = nextTicket;
    __syncthreads();
    ticket = currentTicket;
  }
}

// One stage per launch, one unit per block in hardware order (the unit the block's index names, the stage's part
// order), the classic cusync arrangement: stage 1 is launched with programmatic dependent launch and waits tile by
// tile. Why: bench/mlp/gemv_probe.cu (session 8, call 11) streamed the same GEMV 8-12% slower from a persistent
// grid drawing tickets than from blocks the hardware schedules, at every split.
// Progress: every block triggers the dependent launch first, so stage 1's blocks start only once every stage-0
// block is resident or done; stage 0 waits for nothing, so every tile stage 1 waits for gets posted.
template <class Policy, int kTileN, int kUnroll, int kBlocksPerSm>
__global__ void __launch_bounds__(kSkinnyConsumerWarps * 32, kBlocksPerSm)
    skinnyGemvStageKernel(const __grid_constant__ SkinnyChainParams<Policy> p, std::uint32_t s) {
  extern __shared__ uint4 activations[];
  __shared__ float tileSums[kTileN * skinny::kTokens];
  __shared__ std::uint32_t iteration;
  __shared__ bool arrivedLast;
  BlockTrace* const trace = p.traces[s];
  std::uint64_t traceStart = 0, traceWaited = 0;  // thread 0's, for the block trace
  if (trace != nullptr && threadIdx.x == 0) traceStart = detail::globalTimerNs();
  triggerDependentLaunch();
  const StageView& stage = p.stages[s];
  const WorkUnit unit = stage.hardwareUnit(blockIdx.x);
  if (s == 1) prefetchConsumerWeights<Policy, kTileN>(p, unit.ticket.tile, unit.part);  // reads nothing of stage 0
  // The whole-grid wait: the PDL grid-sync baseline, and the PyTorch op's wait when every stage-1 unit reads every
  // stage-0 tile (python/csrc/gemv_mlp_plan.h).
  if (s == 1 && p.secondWaitsForWholeGrid) waitForPriorGrids();
  // A waiting stage's semaphore targets need the launch's iteration: its tile counter counts every block.
  if (threadIdx.x == 0)
    iteration = s == 1 && p.gemm0Output.synchronized()
                    ? stage.acquireWorkUnit(unit.ticket.tile, unit.part).ticket.iteration
                    : 0u;
  __syncthreads();
  skinnyGemvUnit<Policy, kTileN, kUnroll>(p, s, unit.ticket.tile, unit.part, iteration, activations, tileSums,
                                          arrivedLast, trace != nullptr ? &traceWaited : nullptr);
  if (trace != nullptr && threadIdx.x == 0)
    recordBlockTrace(trace, s, unit.ticket.tile.x, traceStart, traceWaited, 0, unit.part);
}

}  // namespace cusync
