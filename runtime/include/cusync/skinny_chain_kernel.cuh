// A chain of skinny GEMMs (M <= 8 tokens) executed by one persistent launch: every block draws work units of every
// stage from the chain's queue (chain_queue.h), and a unit of a consumer stage waits only for the producer tiles its
// k-range reads (TileSync, as the spec proves). Device code; the host side is examples/mlp/skinny_mlp.cuh.
//
// Each stage computes D[m, :] = act(A[m, k] W[n, k]^T) with W a Linear layer's weights. A tile is kTileN weight rows
// (output features) by all m tokens; a unit is one split-K part of a tile, k-blocks of skinny::kKStep.
//
// Warp roles. One producer warp draws the units, waits for a consumer unit's producer tiles, and streams each unit
// in chunks of kSkinnyChunk k (kTileN weight rows and the m token rows) into a ring of shared-memory slots by bulk
// copies (bulk_copy_ring.cuh): the bytes in flight cost no registers, so a block keeps kSlots chunks loading.
// kSkinnyConsumerWarps consumer warps multiply each chunk: with mma.sync, weight rows on its M side and tokens on its
// N side (skinny_mma.cuh), or, for one token, on the CUDA cores with each warp owning whole rows. A consumer warp
// releases a slot as soon as it has read it, so the producer streams the next unit's chunks while the consumers
// finish a unit: partial sums of the warps meet in shared memory; partial sums of split-K parts meet in a zeroed fp32
// buffer by atomic addition, and the part that arrives last applies the activation, writes D, zeroes the buffer for
// the next run and posts the tile.
//
// Why not the CUTLASS fused chain at these M: its 64-row wgmma tiles carry mostly empty activation rows beside the
// weights in every shared-memory stage, and each split-K part pays a CUTLASS epilogue and fix-up (3.9 us of tail per
// unit at the median, session 6); at GPT-3 M = 1 it streamed the weights at 2.69 TB/s of 3.10 (docs/BENCHMARKS.md).
//
// Progress: chain_queue.h's argument, with one ticket drawn ahead (chain_queue.cuh, drawChainTicket). A unit waits
// (in the producer warp, before any copy of its activations) only for tiles of an earlier stage, hence of smaller
// tickets. The producer may wait while the consumers still finish the previous unit; that unit's chunks are all
// delivered, so its consumers finish without the producer, and nothing the block does waits for a later ticket: the
// split-K last arrival only counts, never waits.
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda_fp16.h>

#include "cusync/block_trace.cuh"
#include "cusync/bulk_copy_ring.cuh"
#include "cusync/chain_queue.cuh"
#include "cusync/fast_silu.cuh"
#include "cusync/gelu.cuh"
#include "cusync/half_dot.cuh"
#include "cusync/producer_range_wait.cuh"
#include "cusync/producer_tile_range.hpp"
#include "cusync/skinny_mma.cuh"
#include "cusync/split_k_range.h"
#include "cusync/stage_view.cuh"
#include "cusync/stress_delay.cuh"
#include "cusync/tile_arrival.cuh"

namespace cusync {

enum class SkinnyActivation : std::uint32_t {
  Identity,
  Gelu,          // GELU (gelu.cuh: the tanh form unless CUSYNC_GELU_ERF), as the CUTLASS epilogues and the reference
  PairedSwiGlu,  // tile rows [0, kTileN/2) are gate rows, [kTileN/2, kTileN) the up rows of the same outputs
};

// One GEMM of the chain.
struct SkinnyGemm {
  const __half* a = nullptr;  // [m, k], row-major
  const __half* w = nullptr;  // [n, k], row-major (a Linear layer's weights; paired gate/up rows for PairedSwiGlu)
  __half* d = nullptr;        // [m, n] ([m, n / 2] for PairedSwiGlu), row-major
  float* partials = nullptr;  // [m, n] fp32, zero before a run (and left zero after it); null when unsplit
  std::uint32_t* arrivals = nullptr;  // one per tile, zero between runs (the last part resets it); null when unsplit
  int n = 0, k = 0;
  SkinnyActivation activation = SkinnyActivation::Identity;
  // PairedSwiGlu: W pairs groups of this many gate rows with the up rows of the same outputs (paired_weight_rows.h);
  // 0: per tile (kTileN / 2), the layout the TMA ring paths need (a tile's rows contiguous in W).
  std::uint32_t pairedGroupRows = 0;
};

inline constexpr int kSkinnyChainStages = 2;
inline constexpr int kSkinnyConsumerWarps = 8;
inline constexpr int kSkinnyThreads = (kSkinnyConsumerWarps + 1) * 32;  // consumers, then the producer warp
inline constexpr int kSkinnyChunk = 256;                                // k per slot

// What the producer tells the consumers about a slot's chunk.
struct SkinnySlotHeader {
  std::uint32_t stage, tileX, kValid;  // kValid: k of this chunk (the last one of a unit may be short)
  std::uint32_t flags;
  static constexpr std::uint32_t kFirst = 1, kLast = 2, kStop = 4;
};

// Bytes of one slot: header, kTileN weight rows, kTokens token rows (dense rows of kSkinnyChunk halves, as the TMA
// boxes land).
template <int kTileN>
CUSYNC_HOST_DEVICE constexpr int skinnySlotBytes() {
  return 128 + (kTileN + skinny::kTokens) * kSkinnyChunk * 2;
}
template <int kTileN, int kSlots>
CUSYNC_HOST_DEVICE constexpr int skinnySharedBytes() {
  return kSlots * skinnySlotBytes<kTileN>();
}

template <class Policy>
struct SkinnyChainParams {
  int m = 0;
  SkinnyGemm gemms[kSkinnyChainStages];
  StageView stages[kSkinnyChainStages];
  ChainQueueView queue;
  InputView<Policy> gemm0Output;           // stage 1's wait on stage 0; unsynchronized when stream-ordered
  std::uint32_t producerColumnsPerTile = 0;  // columns of D that one stage-0 tile writes
  // PDL grid sync (launch-per-stage kernels only): stage 1, launched with PDL and unsynchronized, waits for the whole
  // stage-0 grid (griddepcontrol.wait) instead of tile by tile. The examples' baseline, and the PyTorch op's wait when
  // every stage-1 unit reads every stage-0 tile.
  bool secondWaitsForWholeGrid = false;
  // The launch-per-stage GEMV only: bytes of each of its weight rows (from the start of its k-range) that a stage-1
  // block asks L2 to prefetch before it waits for stage 0, so that the weights, which depend on nothing, stream
  // while it waits; 0: none.
  std::uint32_t consumerL2PrefetchBytes = 0;
  // The launch-per-stage GEMV only, diagnostics: a record per block of stage s at traces[s][blockIdx.x]
  // (block_trace.h); null: none.
  BlockTrace* traces[kSkinnyChainStages] = {};
  // TMA descriptors per stage (tensor_map.h): W in boxes of kTileN rows x kSkinnyChunk, A in boxes of kTokens rows x
  // kSkinnyChunk (the token rows past m arrive as zeros).
  CUtensorMap weightMaps[kSkinnyChainStages];
  CUtensorMap activationMaps[kSkinnyChainStages];
};

namespace detail {

// The consumer warps' barrier (named barrier 1; the producer warp never takes part).
__device__ __forceinline__ void consumerBarrier() {
  asm volatile("bar.sync 1, %0;" ::"n"(kSkinnyConsumerWarps * 32) : "memory");
}

// Writes the finished tile sums[row][token] (kTileN x kTokens floats in shared memory) through the activation; run by
// the consumer threads.
template <int kTileN>
__device__ void storeSkinnyTile(const SkinnyGemm& g, int m, std::uint32_t tileX, const float* sums) {
  constexpr int kConsumers = kSkinnyConsumerWarps * 32;
  if (g.activation == SkinnyActivation::PairedSwiGlu) {
    constexpr int kHalf = kTileN / 2;
    const int outputs = g.n / 2;
    for (int i = threadIdx.x; i < kHalf * skinny::kTokens; i += kConsumers) {
      const int row = i / skinny::kTokens, token = i % skinny::kTokens;
      if (token >= m) continue;
      const float gate = sums[row * skinny::kTokens + token];
      const float up = sums[(row + kHalf) * skinny::kTokens + token];
      g.d[std::size_t(token) * outputs + tileX * kHalf + row] = __float2half(fastSilu(gate) * up);
    }
    return;
  }
  for (int i = threadIdx.x; i < kTileN * skinny::kTokens; i += kConsumers) {
    const int row = i / skinny::kTokens, token = i % skinny::kTokens;
    if (token >= m) continue;
    float v = sums[row * skinny::kTokens + token];
    if (g.activation == SkinnyActivation::Gelu) v = geluFast(v);
    g.d[std::size_t(token) * g.n + tileX * kTileN + row] = __float2half(v);
  }
}

// The k-range [begin, begin + length) that part `part` of a stage-`s` tile reduces: kBlocksOfPart's balanced split
// of the GEMM's 32-deep k-blocks, the split the consumer's waits and the producer's reductions agree on.
struct SkinnyKRange {
  int begin, length;
};
template <class Policy>
__device__ SkinnyKRange skinnyUnitKRange(const SkinnyChainParams<Policy>& p, std::uint32_t s, std::uint32_t part) {
  const KBlockRange range = kBlocksOfPart(part, p.stages[s].blocksPerTile, p.gemms[s].k / skinny::kKStep);
  return {range.begin * skinny::kKStep, range.count * skinny::kKStep};
}

// The whole warp waits until stage 0 has posted every tile whose columns the k-range `k` of a stage-1 unit reads
// (warpWaitPostedColumns, up to 64 tiles per poll), with the acquire pattern in every lane; returns at once when the
// chain is stream-ordered. `tile` names the waiting unit for the watchdog.
template <class Policy>
__device__ void warpWaitForKRange(const SkinnyChainParams<Policy>& p, SkinnyKRange k, std::uint32_t iteration,
                                  TileCoord tile) {
  if (!p.gemm0Output.synchronized()) return;
  ProducerTileRange needed =
      producerTilesCovering(0, std::uint32_t(p.m), std::uint32_t(k.begin), std::uint32_t(k.begin + k.length),
                            skinny::kTokens, p.producerColumnsPerTile, p.gemm0Output.producerGrid);
  while (!needed.empty())
    needed.xBegin = warpWaitPostedColumns(p.gemm0Output, needed, 0, iteration, p.stages[1], tile);
}

// A unit's sums are in tileSums[row][token] (every consumer thread past a barrier): adds them into the split-K
// buffer when the tile is split, and the part that arrives last (or the only one) writes the tile through the
// activation and posts it. Run by the kSkinnyConsumerWarps * 32 threads that `barrier` synchronizes; tileSums and
// arrivedLast (shared) are free again once it returns.
template <class Policy, int kTileN, class Barrier>
__device__ void finishSkinnyTile(const SkinnyChainParams<Policy>& p, std::uint32_t s, TileCoord tile, int m,
                                 float* tileSums, bool& arrivedLast, Barrier barrier) {
  constexpr int kThreads = kSkinnyConsumerWarps * 32;
  const SkinnyGemm& gemm = p.gemms[s];
  const std::uint32_t parts = p.stages[s].blocksPerTile;
  bool tileComplete = true;
  if (parts > 1) {
    // Split-K: add this part into the fp32 buffer; the part that arrives last finishes the tile.
    for (int i = threadIdx.x; i < kTileN * skinny::kTokens; i += kThreads) {
      const int row = i / skinny::kTokens, token = i % skinny::kTokens;
      if (token < m) atomicAdd(gemm.partials + std::size_t(token) * gemm.n + tile.x * kTileN + row, tileSums[i]);
    }
    barrier();  // every thread's additions happen before thread 0's release below
    if (threadIdx.x == 0) arrivedLast = detail::arriveAtTile(gemm.arrivals + tile.x, parts);
    barrier();
    tileComplete = arrivedLast;
    if (tileComplete) {
      for (int i = threadIdx.x; i < kTileN * skinny::kTokens; i += kThreads) {
        const int row = i / skinny::kTokens, token = i % skinny::kTokens;
        if (token >= m) continue;
        float* partial = gemm.partials + std::size_t(token) * gemm.n + tile.x * kTileN + row;
        tileSums[i] = __ldcg(partial);
        __stcg(partial, 0.0f);  // zero again for the next run (kernel boundaries order it before that run)
      }
      barrier();
    }
  }
  if (tileComplete) {
    storeSkinnyTile<kTileN>(gemm, m, tile.x, tileSums);
    barrier();  // every store of the tile before the post
    if (threadIdx.x == 0) {
      CUSYNC_CHAIN_DELAY(tile.x * 7919u + s);  // stress builds: a slow producer
      p.stages[s].template postThread<Policy>(tile);
    }
  }
  barrier();  // tileSums and arrivedLast are read before the caller's next unit writes them
}

}  // namespace detail

// kTileN: weight rows per tile (32: the specs' TileN); kOneTokenGemv: M = 1 only, on the CUDA cores, each consumer
// warp owning kTileN / kSkinnyConsumerWarps whole rows, instead of mma.sync over up to 8 tokens; kSlots: the ring's
// depth (up to 5 slots two blocks fit an SM, more take one block per SM).
template <class Policy, int kTileN, bool kOneTokenGemv, int kSlots>
__global__ void __launch_bounds__(kSkinnyThreads, kSlots <= 5 ? 2 : 1)
    skinnyChainKernel(const __grid_constant__ SkinnyChainParams<Policy> p) {
  static_assert(kTileN == 32, "the consumer warps' split of a slot assumes 32-row tiles");
  extern __shared__ __align__(128) unsigned char slots[];
  __shared__ std::uint64_t full[kSlots], empty[kSlots];
  __shared__ float warpSums[kSkinnyConsumerWarps * kTileN * skinny::kTokens];  // [warp][row][token]
  __shared__ float tileSums[kTileN * skinny::kTokens];                         // [row][token]
  __shared__ bool arrivedLast;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m = p.m;
  constexpr int kSlotBytes = skinnySlotBytes<kTileN>();
  auto headerOf = [&](int slot) { return reinterpret_cast<SkinnySlotHeader*>(slots + slot * kSlotBytes); };
  auto weightsOf = [&](int slot) { return reinterpret_cast<__half*>(slots + slot * kSlotBytes + 128); };
  auto tokensOf = [&](int slot) { return weightsOf(slot) + kTileN * kSkinnyChunk; };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kSlots; ++s) {
      ring::init(&full[s], 1);
      ring::init(&empty[s], kSkinnyConsumerWarps);
    }
    ring::fenceInit();
  }
  __syncthreads();

  if (warp == kSkinnyConsumerWarps) {
    // The producer warp: draws units, waits for their producer tiles, streams their chunks.
    int slot = 0;
    std::uint32_t emptyParity = 1;  // a fresh `empty` barrier's previous phase counts as completed
    unsigned long long ticket = 0;
    if (lane == 0) ticket = drawChainTicket(p.queue);
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    auto nextSlot = [&]() {
      if (++slot == kSlots) {
        slot = 0;
        emptyParity ^= 1u;
      }
    };
    for (;;) {
      const ChainUnit unit = chainUnitOfTicket(p.queue, p.stages, ticket);
      if (!unit.hasWork()) {
        if (lane == 0) {
          ring::wait(&empty[slot], emptyParity);
          headerOf(slot)->flags = SkinnySlotHeader::kStop;
          ring::arrive(&full[slot]);
        }
        break;
      }
      unsigned long long nextTicket = 0;
      if (lane == 0) nextTicket = drawChainTicket(p.queue);  // needed only after this unit's copies are issued
      const std::uint32_t s = unit.stage;
      const TileCoord tile = unit.unit.ticket.tile;
      const detail::SkinnyKRange k = detail::skinnyUnitKRange(p, s, unit.unit.part);
      const int kBegin = k.begin, kLength = k.length;
      if (lane == 0) CUSYNC_CHAIN_DELAY(unit.queueIndex);  // stress builds: a unit drawn early, or a slow consumer
      if (s == 1 && p.gemm0Output.synchronized()) {
        detail::warpWaitForKRange(p, k, unit.unit.ticket.iteration, tile);
        fenceProxyAsyncGlobal();  // the producers' generic stores before this thread's bulk copies
      }
      if (lane == 0) {
        for (int c = 0; c < kLength; c += kSkinnyChunk) {
          const int valid = kLength - c < kSkinnyChunk ? kLength - c : kSkinnyChunk;
          ring::wait(&empty[slot], emptyParity);
          SkinnySlotHeader* h = headerOf(slot);
          h->stage = s;
          h->tileX = tile.x;
          h->kValid = std::uint32_t(valid);
          h->flags = (c == 0 ? SkinnySlotHeader::kFirst : 0u) |
                     (c + kSkinnyChunk >= kLength ? SkinnySlotHeader::kLast : 0u);
          // Whole boxes: a short last chunk also brings k past the unit's range, which the consumers skip.
          ring::arriveExpectingBytes(&full[slot], (kTileN + skinny::kTokens) * kSkinnyChunk * 2);
          ring::copyBox(weightsOf(slot), &p.weightMaps[s], kBegin + c, int(tile.x) * kTileN, &full[slot]);
          ring::copyBox(tokensOf(slot), &p.activationMaps[s], kBegin + c, 0, &full[slot]);
          nextSlot();
        }
      }
      // Every lane tracks the ring position (only lane 0 used it).
      slot = __shfl_sync(0xffffffffu, slot, 0);
      emptyParity = __shfl_sync(0xffffffffu, emptyParity, 0);
      ticket = __shfl_sync(0xffffffffu, nextTicket, 0);
    }
    return;
  }

  // The consumer warps.
  int slot = 0;
  std::uint32_t fullParity = 0;
  const int g = lane / 4, q = lane % 4;
  constexpr int kRowsPerWarp = kTileN / kSkinnyConsumerWarps;  // the one-token path's rows of a warp
  // The mma path: warp w multiplies row group w % 2 (16 rows) over k-quarter w / 2 of each slot.
  const int rowGroup = warp % 2, quarter = warp / 2;
  constexpr int kQuarter = kSkinnyChunk / 4;
  float acc[4] = {};  // mma: rows g, g + 8 of the warp's row group x tokens 2q, 2q + 1; one token: the warp's rows
  for (;;) {
    ring::wait(&full[slot], fullParity);
    const SkinnySlotHeader h = *headerOf(slot);
    if (h.flags & SkinnySlotHeader::kStop) break;
    if (h.flags & SkinnySlotHeader::kFirst) acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
    const __half* weights = weightsOf(slot);
    const __half* tokens = tokensOf(slot);
    if constexpr (kOneTokenGemv) {
      // Lane l: k [8l, 8l + 8) of each of the warp's rows: 512 contiguous bytes of a row per warp load.
      if (8 * lane < int(h.kValid)) {
        const uint4 x = *reinterpret_cast<const uint4*>(tokens + 8 * lane);
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r)
          acc[r] = detail::dot8(
              acc[r], *reinterpret_cast<const uint4*>(weights + (warp * kRowsPerWarp + r) * kSkinnyChunk + 8 * lane),
              x);
      }
    } else {
#pragma unroll
      for (int step = 0; step < kQuarter / skinny::kKStep; ++step) {
        const int k = quarter * kQuarter + step * skinny::kKStep + 8 * q;
        if (quarter * kQuarter + step * skinny::kKStep >= int(h.kValid)) break;
        const uint4 rowG = *reinterpret_cast<const uint4*>(weights + (rowGroup * 16 + g) * kSkinnyChunk + k);
        const uint4 rowG8 = *reinterpret_cast<const uint4*>(weights + (rowGroup * 16 + g + 8) * kSkinnyChunk + k);
        const uint4 x = *reinterpret_cast<const uint4*>(tokens + g * kSkinnyChunk + k);  // zeros past m
        skinny::mmaStep(acc, rowG, rowG8, x);
      }
    }
    __syncwarp();
    if (lane == 0) ring::arrive(&empty[slot]);  // the slot's data is in registers: the producer may refill it
    if (++slot == kSlots) {
      slot = 0;
      fullParity ^= 1u;
    }
    if (!(h.flags & SkinnySlotHeader::kLast)) continue;

    // The unit's last chunk: its sums over the warps into tileSums[row][token].
    const std::uint32_t s = h.stage;
    const TileCoord tile{h.tileX, 0, 0};
    if constexpr (kOneTokenGemv) {
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const float v = detail::warpSum(acc[r]);
        if (lane == 0) tileSums[(warp * kRowsPerWarp + r) * skinny::kTokens] = v;
      }
      detail::consumerBarrier();
    } else {
      const skinny::AccumulatorPlace place = skinny::accumulatorPlace(lane);
      float* mine = warpSums + warp * kTileN * skinny::kTokens;
      const int row = rowGroup * 16 + place.row;
      mine[row * skinny::kTokens + place.token] = acc[0];
      mine[row * skinny::kTokens + place.token + 1] = acc[1];
      mine[(row + 8) * skinny::kTokens + place.token] = acc[2];
      mine[(row + 8) * skinny::kTokens + place.token + 1] = acc[3];
      detail::consumerBarrier();
      for (int i = threadIdx.x; i < kTileN * skinny::kTokens; i += kSkinnyConsumerWarps * 32) {
        const int group = (i / skinny::kTokens) / 16;  // the row group: summed over the warps that own it
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < kSkinnyConsumerWarps; ++w)
          if (w % 2 == group) sum += warpSums[w * kTileN * skinny::kTokens + i];
        tileSums[i] = sum;
      }
      detail::consumerBarrier();
    }

    detail::finishSkinnyTile<Policy, kTileN>(p, s, tile, m, tileSums, arrivedLast, detail::consumerBarrier);
  }
}

}  // namespace cusync
