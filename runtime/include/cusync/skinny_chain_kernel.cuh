// A chain of skinny GEMMs (M <= 8 tokens) executed by one persistent launch: every block draws work units of every
// stage from the chain's queue (chain_queue.h), and a unit of a consumer stage waits only for the producer tiles its
// k-range reads (TileSync, as the spec proves). Device code; the host side is examples/mlp/skinny_mlp.cuh.
//
// Each stage computes D[m, :] = act(A[m, k] W[n, k]^T) with W a Linear layer's weights. A tile is kTileN weight rows
// (output features) by all m tokens; a unit is one split-K part of a tile, k-blocks of skinny::kKStep. The block's
// warps split the unit's k-range into contiguous slices and stream their weight rows, and the tokens' activations
// (from L2), through registers into mma.sync (skinny_mma.cuh). No shared memory stages operands, so no barrier
// stands between a unit's draw and its first loads. Partial sums of the warps
// meet in shared memory; partial sums of split-K parts meet in a zeroed fp32 buffer by atomic addition, and the
// part that arrives last applies the activation, writes D, zeroes the buffer for the next run and posts the tile.
//
// Why not the CUTLASS fused chain at these M: its 64-row wgmma tiles carry mostly empty activation rows beside the
// weights in every shared-memory stage, and each split-K part pays a CUTLASS epilogue and fix-up (3.9 us of tail per
// unit at the median, session 6); at GPT-3 M = 1 it streamed the weights at 2.69 TB/s of 3.10 (docs/BENCHMARKS.md).
//
// Progress: chain_queue.h's argument, with one ticket drawn ahead (chain_queue.cuh, drawChainTicket). A unit waits
// (in warp 0, before any load of its activations) only for tiles of an earlier stage, hence of smaller tickets, and
// then finishes without waiting for anything drawn later: the split-K last arrival only counts, never waits.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/chain_queue.cuh"
#include "cusync/producer_range_wait.cuh"
#include "cusync/producer_tile_range.hpp"
#include "cusync/skinny_mma.cuh"
#include "cusync/split_k_range.h"
#include "cusync/stage_view.cuh"

namespace cusync {

enum class SkinnyActivation : std::uint32_t {
  Identity,
  Gelu,          // exact (erf) GELU, as CUTLASS's and the reference's
  PairedSwiGlu,  // tile rows [0, kTileN/2) are gate rows, [kTileN/2, kTileN) the up rows of the same outputs
};

// One GEMM of the chain.
struct SkinnyGemm {
  const __half* a = nullptr;  // [m, k], row-major
  const __half* w = nullptr;  // [n, k], row-major (a Linear layer's weights; paired gate/up rows for PairedSwiGlu)
  __half* d = nullptr;        // [m, n] ([m, n / 2] for PairedSwiGlu), row-major
  float* partials = nullptr;  // [m, n] fp32, zero before a run (and left zero after it); null when unsplit
  std::uint32_t* arrivals = nullptr;  // one per tile, counting parts up across runs; null when unsplit
  int n = 0, k = 0;
  SkinnyActivation activation = SkinnyActivation::Identity;
};

inline constexpr int kSkinnyChainStages = 2;
inline constexpr int kSkinnyWarps = 8;

template <class Policy>
struct SkinnyChainParams {
  int m = 0;
  SkinnyGemm gemms[kSkinnyChainStages];
  StageView stages[kSkinnyChainStages];
  ChainQueueView queue;
  InputView<Policy> gemm0Output;           // stage 1's wait on stage 0; unsynchronized when stream-ordered
  std::uint32_t producerColumnsPerTile = 0;  // columns of D that one stage-0 tile writes
};

namespace detail {

__device__ __forceinline__ float skinnyGelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }
__device__ __forceinline__ float skinnySilu(float v) { return v / (1.0f + __expf(-v)); }

// Writes the finished tile sums[row][token] (kTileN x kTokens floats in shared memory) through the activation.
template <int kTileN>
__device__ void storeSkinnyTile(const SkinnyGemm& g, int m, std::uint32_t tileX, const float* sums) {
  if (g.activation == SkinnyActivation::PairedSwiGlu) {
    constexpr int kHalf = kTileN / 2;
    const int outputs = g.n / 2;
    for (int i = threadIdx.x; i < kHalf * skinny::kTokens; i += blockDim.x) {
      const int row = i / skinny::kTokens, token = i % skinny::kTokens;
      if (token >= m) continue;
      const float gate = sums[row * skinny::kTokens + token];
      const float up = sums[(row + kHalf) * skinny::kTokens + token];
      g.d[std::size_t(token) * outputs + tileX * kHalf + row] = __float2half(skinnySilu(gate) * up);
    }
    return;
  }
  for (int i = threadIdx.x; i < kTileN * skinny::kTokens; i += blockDim.x) {
    const int row = i / skinny::kTokens, token = i % skinny::kTokens;
    if (token >= m) continue;
    float v = sums[row * skinny::kTokens + token];
    if (g.activation == SkinnyActivation::Gelu) v = skinnyGelu(v);
    g.d[std::size_t(token) * g.n + tileX * kTileN + row] = __float2half(v);
  }
}

}  // namespace detail

// kTileN: weight rows per tile (a multiple of 16); kUnroll: k-steps whose loads a warp issues before their math;
// kOneTokenGemv: M = 1 only, on the CUDA cores with whole-warp row loads instead of mma.sync.
template <class Policy, int kTileN, int kUnroll, bool kOneTokenGemv = false>
__global__ void __launch_bounds__(kSkinnyWarps * 32, 2)
    skinnyChainKernel(const __grid_constant__ SkinnyChainParams<Policy> p) {
  static_assert(kTileN % 16 == 0, "a tile is whole groups of 16 weight rows");
  constexpr int kRowGroups = kTileN / 16;
  __shared__ float warpSums[kSkinnyWarps * kTileN * skinny::kTokens];  // [warp][row][token]
  __shared__ float tileSums[kTileN * skinny::kTokens];                 // [row][token]
  __shared__ unsigned long long currentTicket;
  __shared__ bool arrivedLast;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, q = lane % 4;
  const int m = p.m;

  if (threadIdx.x == 0) currentTicket = drawChainTicket(p.queue);
  __syncthreads();
  unsigned long long ticket = currentTicket;
  for (;;) {
    const ChainUnit unit = chainUnitOfTicket(p.queue, p.stages, ticket);
    if (!unit.hasWork()) break;
    unsigned long long nextTicket = 0;
    if (threadIdx.x == 0) nextTicket = drawChainTicket(p.queue);  // used only at the end: its round trip is hidden

    const std::uint32_t s = unit.stage;
    const SkinnyGemm& gemm = p.gemms[s];
    const StageView& stage = p.stages[s];
    const TileCoord tile = unit.unit.ticket.tile;
    const std::uint32_t parts = stage.blocksPerTile;
    const KBlockRange range = kBlocksOfPart(unit.unit.part, parts, gemm.k / skinny::kKStep);
    const int kBegin = range.begin * skinny::kKStep, kLength = range.count * skinny::kKStep;

    // A consumer unit waits for the producer tiles its k-range reads (warp 0, whole k-range at once).
    if (s == 1 && warp == 0 && p.gemm0Output.synchronized()) {
      ProducerTileRange needed = producerTilesCovering(0, std::uint32_t(m), std::uint32_t(kBegin),
                                                       std::uint32_t(kBegin + kLength), skinny::kTokens,
                                                       p.producerColumnsPerTile, p.gemm0Output.producerGrid);
      while (!needed.empty())
        needed.xBegin =
            warpWaitPostedColumns(p.gemm0Output, needed, 0, unit.unit.ticket.iteration, stage, tile);
    }
    if (s == 1) __syncthreads();  // the other warps read the activations only after warp 0's wait

    if constexpr (kOneTokenGemv) {
      // One token: a warp owns kTileN / kSkinnyWarps whole rows of the tile over the unit's k-range, each lane
      // 16 bytes of a row per step, so one warp load reads 512 contiguous bytes of one row (the mma path reads 64
      // bytes of each of 8 rows); fp32 FMAs on the CUDA cores, then a shuffle sum per row. Steps of 256 k; the
      // last step of a unit is masked where its k-range is not a multiple of 256.
      constexpr int kRows = kTileN / kSkinnyWarps;
      constexpr int kStep = 32 * 8;
      const __half* rowBase = gemm.w + std::size_t(tile.x * kTileN + warp * kRows) * gemm.k + kBegin + 8 * lane;
      const __half* token = gemm.a + kBegin + 8 * lane;
      float acc[kRows] = {};
      struct Batch {
        uint4 w[kUnroll][kRows];
        uint4 x[kUnroll];
      };
      const int steps = (kLength + kStep - 1) / kStep;
      auto load = [&](Batch& b, int at) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const bool inside = (at + u) * kStep + 8 * lane < kLength;
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            b.w[u][r] = inside ? skinny::loadWeights(rowBase + std::size_t(r) * gemm.k + (at + u) * kStep)
                               : make_uint4(0, 0, 0, 0);
          b.x[u] = inside ? __ldcg(reinterpret_cast<const uint4*>(token + (at + u) * kStep)) : make_uint4(0, 0, 0, 0);
        }
      };
      auto multiply = [&](const Batch& b) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const __half2* x = reinterpret_cast<const __half2*>(&b.x[u]);
#pragma unroll
          for (int r = 0; r < kRows; ++r) {
            const __half2* w = reinterpret_cast<const __half2*>(&b.w[u][r]);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const float2 wf = __half22float2(w[j]), xf = __half22float2(x[j]);
              acc[r] = fmaf(wf.x, xf.x, fmaf(wf.y, xf.y, acc[r]));
            }
          }
        }
      };
      int step = 0;
      if (steps >= kUnroll) {
        Batch current;
        load(current, 0);
        for (; step + 2 * kUnroll <= steps; step += kUnroll) {
          Batch next;
          load(next, step + kUnroll);
          multiply(current);
          current = next;
        }
        multiply(current);
        step += kUnroll;
      }
      for (; step < steps; ++step) {  // fewer than kUnroll steps left: one at a time, masked past the range
        if (step * kStep + 8 * lane >= kLength) continue;
        const uint4 xv = __ldcg(reinterpret_cast<const uint4*>(token + step * kStep));
        const __half2* x = reinterpret_cast<const __half2*>(&xv);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const uint4 wv = skinny::loadWeights(rowBase + std::size_t(r) * gemm.k + step * kStep);
          const __half2* w = reinterpret_cast<const __half2*>(&wv);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const float2 wf = __half22float2(w[j]), xf = __half22float2(x[j]);
            acc[r] = fmaf(wf.x, xf.x, fmaf(wf.y, xf.y, acc[r]));
          }
        }
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        float v = acc[r];
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
        if (lane == 0) tileSums[(warp * kRows + r) * skinny::kTokens] = v;
      }
      __syncthreads();
    } else {
      // This warp's contiguous slice of the unit's k-steps.
      const int steps = kLength / skinny::kKStep;
      const int stepBegin = warp * steps / kSkinnyWarps, stepEnd = (warp + 1) * steps / kSkinnyWarps;
      float acc[kRowGroups][4] = {};
      const __half* rows[kRowGroups][2];
  #pragma unroll
      for (int r = 0; r < kRowGroups; ++r)
  #pragma unroll
        for (int h = 0; h < 2; ++h)
          rows[r][h] = gemm.w + std::size_t(tile.x * kTileN + r * 16 + h * 8 + g) * gemm.k + kBegin + 8 * q;
      // Token g's activations, from L2: a consumer's were written by other SMs in this launch, so L1 may hold stale
      // lines. Lanes of tokens past m multiply zeros.
      const bool tokenPresent = g < m;
      const __half* tokenRow = gemm.a + std::size_t(tokenPresent ? g : 0) * gemm.k + kBegin + 8 * q;
      auto tokensAt = [&](int step) {
        return tokenPresent ? __ldcg(reinterpret_cast<const uint4*>(tokenRow + step * skinny::kKStep))
                            : make_uint4(0, 0, 0, 0);
      };
      // Software-pipelined: batch i + 1's loads are issued before batch i's mma, so a warp always has a batch of
      // weights in flight (session 8, call 1: loading a batch only after the previous one's mma, the chain streamed
      // GPT-3's weights at 2.1 TB/s at M = 1).
      struct Batch {
        uint4 w[kUnroll][kRowGroups][2];
        uint4 tokens[kUnroll];
      };
      auto load = [&](Batch& b, int at) {
  #pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
  #pragma unroll
          for (int r = 0; r < kRowGroups; ++r)
  #pragma unroll
            for (int h = 0; h < 2; ++h) b.w[u][r][h] = skinny::loadWeights(rows[r][h] + (at + u) * skinny::kKStep);
          b.tokens[u] = tokensAt(at + u);
        }
      };
      auto multiply = [&](const Batch& b) {
  #pragma unroll
        for (int u = 0; u < kUnroll; ++u)
  #pragma unroll
          for (int r = 0; r < kRowGroups; ++r) skinny::mmaStep(acc[r], b.w[u][r][0], b.w[u][r][1], b.tokens[u]);
      };
      int step = stepBegin;
      if (step + kUnroll <= stepEnd) {
        Batch current;
        load(current, step);
        for (; step + 2 * kUnroll <= stepEnd; step += kUnroll) {
          Batch next;
          load(next, step + kUnroll);
          multiply(current);
          current = next;
        }
        multiply(current);
        step += kUnroll;
      }
      for (; step < stepEnd; ++step) {
        const uint4 tokens = tokensAt(step);
  #pragma unroll
        for (int r = 0; r < kRowGroups; ++r)
          skinny::mmaStep(acc[r], skinny::loadWeights(rows[r][0] + step * skinny::kKStep),
                          skinny::loadWeights(rows[r][1] + step * skinny::kKStep), tokens);
      }

      // The warps' partial sums meet in shared memory: [warp][row][token] (the previous unit's readers of these
      // buffers passed the barrier at the end of its loop).
      {
        const skinny::AccumulatorPlace place = skinny::accumulatorPlace(lane);
        float* mine = warpSums + warp * kTileN * skinny::kTokens;
  #pragma unroll
        for (int r = 0; r < kRowGroups; ++r) {
          const int row = r * 16 + place.row;
          mine[row * skinny::kTokens + place.token] = acc[r][0];
          mine[row * skinny::kTokens + place.token + 1] = acc[r][1];
          mine[(row + 8) * skinny::kTokens + place.token] = acc[r][2];
          mine[(row + 8) * skinny::kTokens + place.token + 1] = acc[r][3];
        }
      }
      __syncthreads();
      for (int i = threadIdx.x; i < kTileN * skinny::kTokens; i += blockDim.x) {
        float sum = 0.0f;
  #pragma unroll
        for (int w = 0; w < kSkinnyWarps; ++w) sum += warpSums[w * kTileN * skinny::kTokens + i];
        tileSums[i] = sum;
      }
      __syncthreads();
    }

    bool tileComplete = true;
    if (parts > 1) {
      // Split-K: add this part into the fp32 buffer; the part that arrives last finishes the tile.
      for (int i = threadIdx.x; i < kTileN * skinny::kTokens; i += blockDim.x) {
        const int row = i / skinny::kTokens, token = i % skinny::kTokens;
        if (token < m) atomicAdd(gemm.partials + std::size_t(token) * gemm.n + tile.x * kTileN + row, tileSums[i]);
      }
      __syncthreads();  // every thread's additions happen before thread 0's release below
      if (threadIdx.x == 0) {
        __threadfence();
        const std::uint32_t before = atomicAdd(gemm.arrivals + tile.x, 1u);
        arrivedLast = (before + 1u) % parts == 0u;  // the counters count on across runs, parts per run
        __threadfence();                             // acquire: the other parts' additions before our reads
      }
      __syncthreads();
      tileComplete = arrivedLast;
      if (tileComplete) {
        for (int i = threadIdx.x; i < kTileN * skinny::kTokens; i += blockDim.x) {
          const int row = i / skinny::kTokens, token = i % skinny::kTokens;
          if (token >= m) continue;
          float* partial = gemm.partials + std::size_t(token) * gemm.n + tile.x * kTileN + row;
          tileSums[i] = __ldcg(partial);
          __stcg(partial, 0.0f);  // zero again for the next run (kernel boundaries order it before that run)
        }
        __syncthreads();
      }
    }
    if (tileComplete) {
      detail::storeSkinnyTile<kTileN>(gemm, m, tile.x, tileSums);
      __syncthreads();  // every store of the tile before the post
      if (threadIdx.x == 0) stage.postThread<Policy>(tile);
    }

    if (threadIdx.x == 0) currentTicket = nextTicket;
    __syncthreads();
    ticket = currentTicket;
  }
}

}  // namespace cusync
