// The attention stage of the attention chain (QKV GEMM -> attention -> output GEMM), one kernel per phase, both
// tile-synchronized with cusync: a block first waits for the QKV tiles its head reads (one thread, then a barrier,
// under the policy its InputView names: StridedSync from examples/attention/attention_{decode,prompt}.dep for
// head-wide QKV tiles, RowSync for the prompt's narrower ones; qkv_head_tiles.h says which tiles), computes
// its head tile of T and posts it for the output GEMM. Device code (fp16 in, fp32 accumulation); the host side is
// attention_chain.h.
//
// Layouts (row-major throughout):
//   QKV [tokens, 3 * heads * 128]: Q of head h in columns [h*128, (h+1)*128), K at + heads*128, V at + 2*heads*128;
//       token row b*S + i is token i of sequence b.
//   K and V caches [B, heads, capacity, 128]: position p of sequence b, head h at ((b*heads + h)*capacity + p)*128.
//   T [tokens, heads * 128]: head h in columns [h*128, (h+1)*128).
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/async_copy.cuh"
#include "cusync/block_sync.cuh"
#include "cusync/block_trace.cuh"
#include "cusync/stage_view.cuh"
#include "cusync/stress_delay.cuh"
#include "cusync/typed_stage_view.cuh"
#include "qkv_head_tiles.h"

namespace cusync::examples::attention {

inline constexpr int kHeadDim = 128;  // both models; one head is one 128-wide column tile of QKV and of T

// Scores are kept in the log2 domain: q.k / sqrt(128) * log2(e), so that exp2f is the exponential.
inline constexpr float kScoreScaleLog2 = 0.08838834764831845f * 1.4426950408889634f;

namespace detail {

// One thread waits for the QKV tiles holding part `part` (0: Q, 1: K, 2: V) of `head` in token row `tokenRow`'s row
// tile, skipping a semaphore it already saw satisfied in this tile (under StridedSync the Q, K and V tiles of a head
// share one semaphore, under RowSync every tile of the row: one spin, not three or six).
template <class Policy>
__device__ void waitForHeadPart(const InputView<Policy>& input, SatisfiedSemaphoreCache<4>& seen,
                                const QkvHeadTiles& tiles, std::uint32_t part, std::uint32_t head,
                                std::uint32_t tokenRow, const TileTicket& self, const StageView& stage) {
  tiles.forEach(part, head, tokenRow, [&](TileCoord producerTile) {
    waitThreadCached(input, seen, producerTile, self.iteration, stage, self.tile);
  });
}

__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Max or sum over a block of `Warps` warps; every thread gets the result. `scratch` holds Warps floats.
template <int Warps, bool Max>
__device__ float blockReduce(float v, float* scratch) {
  v = Max ? warpMax(v) : warpSum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < Warps ? scratch[lane] : (Max ? -INFINITY : 0.0f);
  return Max ? warpMax(v) : warpSum(v);
}

// ---- PTX wrappers for the prompt kernel (sm_80+: cp.async, ldmatrix, mma.sync m16n8k16) -------------------------

using ::cusync::detail::commitAsyncCopies;  // cusync/async_copy.cuh
using ::cusync::detail::copyAsync16;
using ::cusync::detail::sharedAddress;
using ::cusync::detail::waitAsyncCopiesPending;

// Four 8x8 fp16 matrices: thread t supplies the address of row t % 8 of matrix t / 8, and receives element pair
// (lane/4, 2*(lane%4) + {0,1}) of each: the A operand of mma.m16n8k16 from a row-major [m][k] tile, or two B operands
// from a [n][k] tile (K's rows for Q K^T).
__device__ __forceinline__ void loadMatrixX4(std::uint32_t (&r)[4], const void* rowAddress) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(sharedAddress(rowAddress)));
}

// Four 8x8 fp16 matrices, transposed: thread t supplies the address of row t % 8 of matrix t / 8, and receives
// element pair (2*(lane%4) + {0,1}, lane/4) of each, i.e. the B operand of mma.m16n8k16 from a row-major [k][n] tile.
__device__ __forceinline__ void loadMatrixX4Transposed(std::uint32_t (&r)[4], const void* rowAddress) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(sharedAddress(rowAddress)));
}

// D = A B + D for one 16x8x16 step, fp16 operands, fp32 accumulators. Fragment layouts (PTX ISA, "Matrix Fragments
// for mma.m16n8k16"), with g = lane/4 and t = lane%4:
//   A (16x16, row-major): a[0] = (g, 2t..2t+1), a[1] = (g+8, 2t..), a[2] = (g, 2t+8..), a[3] = (g+8, 2t+8..)
//   B (16x8, [k][n]):     b[0] = (k = 2t..2t+1, n = g), b[1] = (k = 2t+8.., n = g)
//   C (16x8, fp32):       c[0..1] = (g, 2t..2t+1), c[2..3] = (g+8, 2t..2t+1)
__device__ __forceinline__ void mma16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ std::uint32_t packHalves(float low, float high) {
  const __half2 h = __floats2half2_rn(low, high);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}
__device__ __forceinline__ std::uint32_t loadShared32(const __half* p) {
  return *reinterpret_cast<const std::uint32_t*>(p);
}

// Every thread of the block, after its stores of one part of a tile: counts the part in the tile's arrival
// `counter` (release: a barrier, then one thread's acq_rel add) and returns true in the block whose part arrives
// last (acquire), which finishes the tile. Every launch adds `parts`, so the last part of launch `iteration` sees
// parts * (iteration + 1) (exact modulo 2^32) and the counter needs no reset. No part waits for another, so a split
// adds no progress hazard in any order of the parts.
__device__ inline bool blockArrivesLast(std::uint32_t* counter, std::uint32_t parts, std::uint32_t iteration) {
  __shared__ std::uint32_t last;
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t previous;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(previous) : "l"(counter) : "memory");
    last = previous + 1 == parts * (iteration + 1);
  }
  __syncthreads();
  return last;
}

}  // namespace detail

// ==== Token generation ==========================================================================================
//
// Tile (x = head, y = sequence b) of the stage, split over the cache into `parts` blocks (the stage's blocks per
// tile): part p takes keys [p*chunk, min(S'+1, (p+1)*chunk)) of the S' cached keys and the new one (key S', read
// from QKV). Each part waits for the tile's q, k and v, computes its keys' scores, their maximum m, l = sum of
// exp(score - m) and o = sum exp(score - m) v; the part that arrives last combines them (flash-decoding) into T's
// row and posts the tile. The part holding key S' appends k and v to the caches: nobody reads position S' from the
// cache in this launch (parts read the new key from QKV), so the append races with nothing.

inline constexpr int kDecodeThreads = 128;  // one thread per head dimension in the V pass
inline constexpr int kDecodeMaxChunk = 512; // keys per part at most (the scores live in shared memory)
inline constexpr int kDecodeKeyBatch = 8;   // keys whose loads a thread has in flight at once

struct DecodeAttentionArgs {
  const __half* qkv = nullptr;
  __half* t = nullptr;
  __half* kCache = nullptr;
  __half* vCache = nullptr;
  std::uint32_t heads = 0;
  std::uint32_t cached = 0;         // S'
  std::uint32_t cacheCapacity = 0;  // positions per (sequence, head) in the caches, > S'
  std::uint32_t qkvTileRows = 0;    // rows of a QKV GEMM tile
  std::uint32_t parts = 1;          // blocks per tile (the stage's blocksPerTile)
  float* partialOutputs = nullptr;  // tiles * parts * 128 (parts > 1)
  float* partialMaxSum = nullptr;   // tiles * parts * 2
  std::uint32_t* arrivals = nullptr;  // one per tile, zeroed once; counts up across launches
  bool triggerDependents = false;   // a PDL producer: let the output GEMM launch once every block is resident
  // ... or once every block has its q, k and v (after its wait): the output GEMM's blocks then start (and load
  // their weights) while the attention computes, not while the QKV GEMM's last tiles still stream.
  bool triggerAfterWait = false;
  bool waitForPriorGrid = false;    // PDL grid sync: griddepcontrol.wait (the whole QKV GEMM) before reading
  BlockTrace* trace = nullptr;      // diagnostics: a record per block at trace[blockIdx.x] (block_trace.h)
  std::uint32_t traceStage = 0;
};

namespace detail {

// The scores of a step's keys, a half-warp per key: each lane's 16-byte slice of key i (8 head dimensions) dotted with
// its 8 query values, summed over the half-warp by shuffles within each half. Every lane of the warp calls it.
__device__ __forceinline__ void halfWarpScores(const float (&qSlice)[8], const uint4 (&keys)[kDecodeKeyBatch],
                                               float (&score)[kDecodeKeyBatch]) {
#pragma unroll
  for (int i = 0; i < kDecodeKeyBatch; ++i) {
    const __half2* h = reinterpret_cast<const __half2*>(&keys[i]);
    score[i] = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(h[k]);
      score[i] += f.x * qSlice[2 * k] + f.y * qSlice[2 * k + 1];
    }
  }
#pragma unroll
  for (int offset = 8; offset > 0; offset /= 2)
#pragma unroll
    for (int i = 0; i < kDecodeKeyBatch; ++i) score[i] += __shfl_xor_sync(0xffffffffu, score[i], offset);
}

// One part's (m, l, o) in a single pass over its keys [begin, end) (the kernel's one-pass form): every warp takes 16
// consecutive keys per step, a half-warp per key and each lane a 16-byte slice of it (8 head dimensions), and loads
// the key's and the value's slices together, kDecodeKeyBatch keys of each per half-warp in flight. Each half-warp
// keeps an online softmax (its running maximum, sum and output for its lanes' dimensions); the block's 8 half-warps
// are combined through shared memory. Why: the two-pass form waits for the keys, reduces the maximum and the sum
// over the block (barriers), then waits for the values: three round trips to memory and four barriers per part,
// where this takes one round trip (at most 64 keys a part, as at S' <= 1024 with 17 parts) and one barrier.
// `q`: the block's query in shared memory, scaled by kScoreScaleLog2. Returns, in every thread, the part's maximum
// m (-inf for an empty part), l = sum exp2(score - m) (0 then) and, in `o`, thread d's dimension of
// sum exp2(score - m) v. Run by all kDecodeThreads threads; every lane of a warp runs the same iterations, so the
// shuffles are converged.
template <class KeyRow, class ValueRow>
__device__ void decodePartInOnePass(const float* q, std::uint32_t begin, std::uint32_t end, KeyRow keyRow,
                                    ValueRow valueRow, float& m, float& l, float& o) {
  static_assert(kDecodeThreads == kHeadDim, "thread d combines head dimension d");
  constexpr int kHalfWarps = kDecodeThreads / 16;
  __shared__ float halfOutputs[kHalfWarps][kHeadDim];
  __shared__ float halfMax[kHalfWarps], halfSum[kHalfWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, slice = lane % 16, half = threadIdx.x / 16;
  float qSlice[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) qSlice[i] = q[slice * 8 + i];
  float runningMax = -INFINITY, runningSum = 0.0f, out[8] = {};
  constexpr std::uint32_t kKeysPerWarpStep = 2 * kDecodeKeyBatch;
  for (std::uint32_t base = begin + warp * kKeysPerWarpStep; base < end;
       base += (kDecodeThreads / 32) * kKeysPerWarpStep) {
    uint4 keyRaw[kDecodeKeyBatch], valueRaw[kDecodeKeyBatch];
#pragma unroll
    for (int i = 0; i < kDecodeKeyBatch; ++i) {
      const std::uint32_t j = base + 2 * i + lane / 16;
      keyRaw[i] = j < end ? *reinterpret_cast<const uint4*>(keyRow(j) + slice * 8) : make_uint4(0, 0, 0, 0);
      valueRaw[i] = j < end ? *reinterpret_cast<const uint4*>(valueRow(j) + slice * 8) : make_uint4(0, 0, 0, 0);
    }
    float score[kDecodeKeyBatch];
    halfWarpScores(qSlice, keyRaw, score);
    // No key of this half-warp in the step (its first is past `end`): nothing to add, and no shuffle follows (the
    // warp's next step starts past `end` too). Tested on the key, not on the maximum: fmaxf drops a NaN score.
    if (base + lane / 16 >= end) continue;
    float batchMax = -INFINITY;
#pragma unroll
    for (int i = 0; i < kDecodeKeyBatch; ++i)
      if (base + 2 * i + lane / 16 < end) batchMax = fmaxf(batchMax, score[i]);
    const float newMax = fmaxf(runningMax, batchMax);
    const float rescale = exp2f(runningMax - newMax);  // 0 while runningMax is -inf
    runningSum *= rescale;
#pragma unroll
    for (int c = 0; c < 8; ++c) out[c] *= rescale;
#pragma unroll
    for (int i = 0; i < kDecodeKeyBatch; ++i) {
      const float p = base + 2 * i + lane / 16 < end ? exp2f(score[i] - newMax) : 0.0f;
      runningSum += p;
      const __half2* v = reinterpret_cast<const __half2*>(&valueRaw[i]);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __half22float2(v[k]);
        out[2 * k] += p * f.x;
        out[2 * k + 1] += p * f.y;
      }
    }
    runningMax = newMax;
  }
#pragma unroll
  for (int c = 0; c < 8; ++c) halfOutputs[half][slice * 8 + c] = out[c];
  if (slice == 0) {
    halfMax[half] = runningMax;
    halfSum[half] = runningSum;
  }
  __syncthreads();
  m = -INFINITY;
#pragma unroll
  for (int h = 0; h < kHalfWarps; ++h) m = fmaxf(m, halfMax[h]);
  l = 0.0f;
  o = 0.0f;
#pragma unroll
  for (int h = 0; h < kHalfWarps; ++h) {
    const float weight = halfMax[h] == -INFINITY ? 0.0f : exp2f(halfMax[h] - m);  // an empty half-warp adds nothing
    l += weight * halfSum[h];
    o += weight * halfOutputs[h][threadIdx.x];
  }
}

}  // namespace detail

// `kOnePass`: the part's softmax in one pass over its keys and values (detail::decodePartInOnePass), else in two
// (the keys' scores, the block's maximum and sum, then the values).
template <class InputPolicy, class OutputPolicy, bool kOnePass = false>
__global__ void __launch_bounds__(kDecodeThreads)
    decodeAttentionKernel(TypedStageView<OutputPolicy> stage, InputView<InputPolicy> qkvInput,
                          DecodeAttentionArgs args) {
  if (args.triggerDependents && !args.triggerAfterWait) triggerDependentLaunch();
  const std::uint64_t traceStart = args.trace != nullptr ? ::cusync::detail::globalTimerNs() : 0;
  if (args.waitForPriorGrid) waitForPriorGrids();
  __shared__ float q[kHeadDim];

  const StageView& view = stage.untyped;
  const WorkUnit unit = blockAcquireWorkUnit(view);
  const std::uint32_t head = unit.ticket.tile.x, sequence = unit.ticket.tile.y;
  const std::uint32_t qkvColumns = 3 * args.heads * kHeadDim;
  const QkvHeadTiles tiles{args.heads, args.qkvTileRows, kHeadDim};  // token generation: head-wide QKV tiles
  const std::size_t cacheBase = (std::size_t(sequence) * args.heads + head) * args.cacheCapacity * kHeadDim;
  const std::uint32_t keys = args.cached + 1;
  const std::uint32_t chunk = (keys + args.parts - 1) / args.parts;
  const std::uint32_t begin = min(keys, unit.part * chunk), end = min(keys, begin + chunk);

  // Wait for the q, k and v tiles (one thread), then the barrier extends its acquire to the block.
  if (threadIdx.x == 0) {
    CUSYNC_CHAIN_DELAY(head * 37u + unit.part);  // stress builds: a slow consumer, before its wait
    SatisfiedSemaphoreCache<4> seen;
    for (std::uint32_t part = 0; part < 3; ++part)
      detail::waitForHeadPart(qkvInput, seen, tiles, part, head, sequence, unit.ticket, view);
  }
  __syncthreads();
  const std::uint64_t traceWaited = args.trace != nullptr ? ::cusync::detail::globalTimerNs() : 0;
  // Progress holds either way: the QKV GEMM waits for nothing, so every block here gets past its wait.
  if (args.triggerDependents && args.triggerAfterWait) triggerDependentLaunch();

  const __half* qkvRow = args.qkv + std::size_t(sequence) * qkvColumns;
  const __half* newKey = qkvRow + (args.heads + head) * kHeadDim;
  const __half* newValue = qkvRow + (2 * args.heads + head) * kHeadDim;
  const __half* keyCache = args.kCache + cacheBase;
  const __half* valueCache = args.vCache + cacheBase;
  auto keyRow = [&](std::uint32_t j) { return j < args.cached ? keyCache + std::size_t(j) * kHeadDim : newKey; };
  auto valueRow = [&](std::uint32_t j) {
    return j < args.cached ? valueCache + std::size_t(j) * kHeadDim : newValue;
  };

  const int d = threadIdx.x;  // this thread's head dimension in the q load and the V pass

  q[d] = __half2float(qkvRow[head * kHeadDim + d]) * kScoreScaleLog2;
  if (begin <= args.cached && args.cached < end) {  // the part holding the new key appends it
    args.kCache[cacheBase + std::size_t(args.cached) * kHeadDim + d] = newKey[d];
    args.vCache[cacheBase + std::size_t(args.cached) * kHeadDim + d] = newValue[d];
  }
  __syncthreads();

  float m, l, o;  // the part's maximum score, sum of exp2(score - m) and thread d's dimension of the weighted values
  if constexpr (kOnePass) {
    detail::decodePartInOnePass(q, begin, end, keyRow, valueRow, m, l, o);
  } else {
    __shared__ float scores[kDecodeMaxChunk];
    __shared__ float scratch[kDecodeThreads / 32];
    __shared__ float warpOutputs[kDecodeThreads / 32][kHeadDim];
    // Scores: a half-warp per key, each lane a 16-byte slice of it, kDecodeKeyBatch keys per half-warp in flight
    // (the loads are issued before any is used: a key is one DRAM round trip). Every lane runs the same iterations,
    // so that the shuffles are converged.
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, slice = lane % 16;
    float qSlice[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) qSlice[i] = q[slice * 8 + i];
    constexpr std::uint32_t kKeysPerWarpStep = 2 * kDecodeKeyBatch;
    for (std::uint32_t base = begin + warp * kKeysPerWarpStep; base < end;
         base += (kDecodeThreads / 32) * kKeysPerWarpStep) {
      uint4 raw[kDecodeKeyBatch];
#pragma unroll
      for (int i = 0; i < kDecodeKeyBatch; ++i) {
        const std::uint32_t j = base + 2 * i + lane / 16;
        raw[i] = j < end ? *reinterpret_cast<const uint4*>(keyRow(j) + slice * 8) : make_uint4(0, 0, 0, 0);
      }
      float dot[kDecodeKeyBatch];
      detail::halfWarpScores(qSlice, raw, dot);
#pragma unroll
      for (int i = 0; i < kDecodeKeyBatch; ++i) {
        const std::uint32_t j = base + 2 * i + lane / 16;
        if (j < end && slice == 0) scores[j - begin] = dot[i];
      }
    }
    __syncthreads();

    float localMax = -INFINITY;
    for (std::uint32_t j = threadIdx.x; j < end - begin; j += kDecodeThreads) localMax = fmaxf(localMax, scores[j]);
    m = detail::blockReduce<kDecodeThreads / 32, true>(localMax, scratch);
    float localSum = 0.0f;
    for (std::uint32_t j = threadIdx.x; j < end - begin; j += kDecodeThreads) {
      const float p = exp2f(scores[j] - m);
      scores[j] = p;
      localSum += p;
    }
    l = detail::blockReduce<kDecodeThreads / 32, false>(localSum, scratch);  // its barriers publish p

    // o = sum p_j v_j: warp w takes keys begin + w, + 4, ...; a lane four head dimensions (8 bytes, a warp a whole
    // 256-byte row), kDecodeKeyBatch keys in flight; the warps' sums are added through shared memory.
    float partial[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (std::uint32_t base = begin + warp; base < end; base += (kDecodeThreads / 32) * kDecodeKeyBatch) {
      uint2 raw[kDecodeKeyBatch];
      float p[kDecodeKeyBatch];
#pragma unroll
      for (int i = 0; i < kDecodeKeyBatch; ++i) {
        const std::uint32_t j = base + i * (kDecodeThreads / 32);
        raw[i] = j < end ? *reinterpret_cast<const uint2*>(valueRow(j) + lane * 4) : make_uint2(0, 0);
        p[i] = j < end ? scores[j - begin] : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < kDecodeKeyBatch; ++i) {
        const __half2* h = reinterpret_cast<const __half2*>(&raw[i]);
        const float2 low = __half22float2(h[0]), high = __half22float2(h[1]);
        partial[0] += p[i] * low.x;
        partial[1] += p[i] * low.y;
        partial[2] += p[i] * high.x;
        partial[3] += p[i] * high.y;
      }
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) warpOutputs[warp][lane * 4 + c] = partial[c];
    __syncthreads();
    o = 0.0f;
#pragma unroll
    for (int w = 0; w < kDecodeThreads / 32; ++w) o += warpOutputs[w][d];
  }

  const std::uint32_t tileIndex = linearIndex(unit.ticket.tile, view.grid);
  __half* tRow = args.t + std::size_t(sequence) * args.heads * kHeadDim + head * kHeadDim;
  if (args.parts > 1) {
    // Publish this part (release), count it; the last part to arrive (acquire) combines all of them. No part waits
    // for another, so the split adds no progress hazard in any order of the parts.
    const std::size_t slot = std::size_t(tileIndex) * args.parts + unit.part;
    __stcg(args.partialOutputs + slot * kHeadDim + d, o);
    if (threadIdx.x == 0) {
      __stcg(args.partialMaxSum + 2 * slot, m);
      __stcg(args.partialMaxSum + 2 * slot + 1, l);
    }
    if (!detail::blockArrivesLast(args.arrivals + tileIndex, args.parts, unit.ticket.iteration)) {
      if (args.trace != nullptr && threadIdx.x == 0)
        recordBlockTrace(args.trace, args.traceStage, head, traceStart, traceWaited);
      return;
    }
    float combinedMax = -INFINITY;
    for (std::uint32_t p = 0; p < args.parts; ++p)
      combinedMax = fmaxf(combinedMax, __ldcg(args.partialMaxSum + 2 * (std::size_t(tileIndex) * args.parts + p)));
    float sum = 0.0f, out = 0.0f;
    for (std::uint32_t p = 0; p < args.parts; ++p) {
      const std::size_t other = std::size_t(tileIndex) * args.parts + p;
      const float weight = exp2f(__ldcg(args.partialMaxSum + 2 * other) - combinedMax);  // 0 for an empty part
      sum += weight * __ldcg(args.partialMaxSum + 2 * other + 1);
      out += weight * __ldcg(args.partialOutputs + other * kHeadDim + d);
    }
    tRow[d] = __float2half(out / sum);
  } else {
    tRow[d] = __float2half(o / l);
  }
  // Every thread's store of the row, a barrier, then one thread's release under the stage's policy.
  if (threadIdx.x == 0) CUSYNC_CHAIN_DELAY(head * 11u + sequence);  // stress builds: a slow producer, before its post
  blockPost<OutputPolicy>(view, unit.ticket.tile);
  if (args.trace != nullptr && threadIdx.x == 0)
    recordBlockTrace(args.trace, args.traceStage, head, traceStart, traceWaited);
}

// ==== Prompt processing =========================================================================================
//
// Tile (x = head, y = row tile of 128 queries) of the stage: causal flash attention (online softmax, FlashAttention-2
// work split: each warp owns 16 query rows) over the keys of its sequence up to its own last query, in blocks of 64
// keys, K and V double-buffered with cp.async. A tile is one block of 8 warps, or two blocks of 4 warps
// (QueryRows = 64, the stage's blocksPerTile = 2), each the tile's first or second 64 queries: twice the blocks where
// a prompt has fewer tiles than the GPU has SMs (GPT-3 at 512 tokens: 48), and a finer grain for the causal
// imbalance elsewhere. The second of the two to finish posts the tile.
//
// A block first waits (one thread, then a barrier) for its Q tile, and before it issues the loads of each key block
// for the K and V tiles of that block's QKV row tile: it waits for exactly the tiles it reads, under any policy.
// Under StridedSync the Q tile shares its semaphore with the K and V tiles of the tile's own row, the last row it
// reads, so in practice the first wait is the one that spins (the QKV GEMM's grouped order produces rows in order)
// and the later ones find their semaphores posted. The diagonal key blocks (the block's own rows) are appended to
// the caches (S' = 0: positions [0, S)).

inline constexpr int kPromptQueries = 128;  // rows of a tile (the spec's)
inline constexpr int kPromptKeys = 64;
inline constexpr int kPromptRowStride = kHeadDim + 8;  // halves; the padding makes every fragment load conflict-free
// A block of `QueryRows` queries: one warp per 16.
constexpr int promptThreads(int queryRows) { return queryRows / 16 * 32; }
constexpr int promptSharedBytes(int queryRows) {
  return (queryRows + 2 * 2 * kPromptKeys) * kPromptRowStride * int(sizeof(__half));
}

struct PromptAttentionArgs {
  const __half* qkv = nullptr;
  __half* t = nullptr;
  __half* kCache = nullptr;
  __half* vCache = nullptr;
  std::uint32_t heads = 0;
  std::uint32_t sequenceLength = 0;  // S, a multiple of 128
  std::uint32_t cacheCapacity = 0;   // >= S
  std::uint32_t qkvTileRows = 0;     // rows of a QKV GEMM tile
  std::uint32_t qkvTileColumns = 0;  // columns of a QKV GEMM tile: 128 (one head) or narrower (qkv_head_tiles.h)
  std::uint32_t* arrivals = nullptr;  // two blocks per tile: one per tile, zeroed once; counts up across launches
  bool triggerDependents = false;
  bool waitForPriorGrid = false;     // PDL grid sync: griddepcontrol.wait (the whole QKV GEMM) before reading
};

namespace detail {

// Issues the 16-byte copies of `rows` rows of 128 halves (global row stride `globalStride`) into shared rows of
// kPromptRowStride, spread over the block's `Threads` threads.
template <int Rows, int Threads>
__device__ void copyRowsAsync(__half* shared, const __half* global, std::size_t globalStride) {
  constexpr int kChunksPerRow = kHeadDim / 8;
  for (int i = threadIdx.x; i < Rows * kChunksPerRow; i += Threads) {
    const int row = i / kChunksPerRow, chunk = i % kChunksPerRow;
    copyAsync16(shared + row * kPromptRowStride + chunk * 8, global + row * globalStride + chunk * 8);
  }
}

// Copies `Rows` shared rows to a cache (rows of 128 halves, contiguous), spread over the block's `Threads` threads.
template <int Rows, int Threads>
__device__ void storeRows(__half* cache, const __half* shared) {
  constexpr int kChunksPerRow = kHeadDim / 8;
  for (int i = threadIdx.x; i < Rows * kChunksPerRow; i += Threads) {
    const int row = i / kChunksPerRow, chunk = i % kChunksPerRow;
    *reinterpret_cast<uint4*>(cache + row * kHeadDim + chunk * 8) =
        *reinterpret_cast<const uint4*>(shared + row * kPromptRowStride + chunk * 8);
  }
}

}  // namespace detail

template <class InputPolicy, class OutputPolicy, int QueryRows = kPromptQueries>
__global__ void __launch_bounds__(promptThreads(QueryRows))
    promptAttentionKernel(TypedStageView<OutputPolicy> stage, InputView<InputPolicy> qkvInput,
                          PromptAttentionArgs args) {
  static_assert(QueryRows == kPromptQueries || QueryRows == kPromptQueries / 2, "a tile is one block or two");
  constexpr int kThreads = promptThreads(QueryRows);
  constexpr std::uint32_t kParts = kPromptQueries / QueryRows;
  if (args.triggerDependents) triggerDependentLaunch();
  if (args.waitForPriorGrid) waitForPriorGrids();
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  // Q, then two buffers each of K and V (by arithmetic, not an array of pointers a runtime index would put in
  // local memory).
  __half* qShared = reinterpret_cast<__half*>(sharedBytes);
  constexpr int kBlockHalves = kPromptKeys * kPromptRowStride;
  auto kShared = [&](int buffer) { return qShared + QueryRows * kPromptRowStride + buffer * kBlockHalves; };
  auto vShared = [&](int buffer) { return kShared(2) + buffer * kBlockHalves; };

  const StageView& view = stage.untyped;
  const WorkUnit unit = blockAcquireWorkUnit(view);
  const TileTicket self = unit.ticket;
  const std::uint32_t head = self.tile.x;
  const std::uint32_t firstQuery = self.tile.y * kPromptQueries + unit.part * QueryRows;  // token row
  const std::uint32_t sequence = firstQuery / args.sequenceLength;
  const std::uint32_t sequenceStart = sequence * args.sequenceLength;              // token row of position 0
  const std::uint32_t firstPosition = firstQuery - sequenceStart;                  // position of the first query
  const std::uint32_t keyBlocks = (firstPosition + QueryRows) / kPromptKeys;       // causal: up to the diagonal
  const std::size_t qkvColumns = std::size_t(3) * args.heads * kHeadDim;
  const QkvHeadTiles tiles{args.heads, args.qkvTileRows, args.qkvTileColumns};
  SatisfiedSemaphoreCache<4> seen;  // thread 0's

  auto keyRowOf = [&](std::uint32_t block) { return sequenceStart + block * kPromptKeys; };
  // One thread waits for the K and V tiles of key block `block` (and, first, the Q tile); the barrier publishes it.
  auto waitForKeyBlock = [&](std::uint32_t block, bool withQueries) {
    if (threadIdx.x == 0) {
      if (withQueries) detail::waitForHeadPart(qkvInput, seen, tiles, 0, head, firstQuery, self, view);
      detail::waitForHeadPart(qkvInput, seen, tiles, 1, head, keyRowOf(block), self, view);
      detail::waitForHeadPart(qkvInput, seen, tiles, 2, head, keyRowOf(block), self, view);
    }
    __syncthreads();
  };
  auto loadKeyBlock = [&](std::uint32_t block, int buffer) {
    const __half* rows = args.qkv + std::size_t(keyRowOf(block)) * qkvColumns;
    detail::copyRowsAsync<kPromptKeys, kThreads>(kShared(buffer), rows + (args.heads + head) * kHeadDim, qkvColumns);
    detail::copyRowsAsync<kPromptKeys, kThreads>(vShared(buffer), rows + (2 * args.heads + head) * kHeadDim,
                                                 qkvColumns);
  };

  waitForKeyBlock(0, true);
  detail::copyRowsAsync<QueryRows, kThreads>(qShared, args.qkv + std::size_t(firstQuery) * qkvColumns + head * kHeadDim,
                                             qkvColumns);
  loadKeyBlock(0, 0);
  detail::commitAsyncCopies();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int warpRow = warp * 16;  // this warp's first query row in the tile
  float o[kHeadDim / 8][4] = {};  // O accumulators: 16 n-tiles of 8 head dimensions
  // How Q K^T reads its operands. Measured on the H100 (docs/BENCHMARKS.md, session 7 call 9): keeping the warp's Q
  // fragments in registers and loading K with ldmatrix made the 8-warp block 5-15% faster at 1024-4096 tokens and
  // the 4-warp one 5-30% slower, so only the 8-warp block does it.
  constexpr bool kKeepQueriesInRegisters = QueryRows == kPromptQueries;
  std::uint32_t qFragments[kHeadDim / 16][4];  // the warp's Q rows as A operands, loaded at the first key block
  float rowMax[2] = {-INFINITY, -INFINITY}, rowSum[2] = {0.0f, 0.0f};  // rows g and g + 8

  for (std::uint32_t block = 0; block < keyBlocks; ++block) {
    const int buffer = block % 2;
    if (block + 1 < keyBlocks) {
      waitForKeyBlock(block + 1, false);  // its barrier also retires the last reads of the buffer refilled here
      loadKeyBlock(block + 1, buffer ^ 1);
      detail::commitAsyncCopies();
      detail::waitAsyncCopiesPending<1>();
    } else {
      detail::waitAsyncCopiesPending<0>();
    }
    __syncthreads();
    const __half* kTile = kShared(buffer);
    const __half* vTile = vShared(buffer);

    // The diagonal key blocks are this tile's own rows: append them to the caches (S' = 0).
    const std::uint32_t keyPosition = keyRowOf(block) - sequenceStart;
    if (keyPosition >= firstPosition) {
      const std::size_t cacheRow = ((std::size_t(sequence) * args.heads + head) * args.cacheCapacity + keyPosition);
      detail::storeRows<kPromptKeys, kThreads>(args.kCache + cacheRow * kHeadDim, kTile);
      detail::storeRows<kPromptKeys, kThreads>(args.vCache + cacheRow * kHeadDim, vTile);
    }

    // S = Q K^T for the warp's 16 rows and the block's 64 keys: 8 n-tiles of 8 keys.
    float s[kPromptKeys / 8][4] = {};
    if constexpr (kKeepQueriesInRegisters) {
      // The warp's Q fragments, once (Q arrived with the first key block): A operands of its 16 rows for the 8
      // k-steps of 16 head dimensions. ldmatrix: lanes 0-15 address rows 0-15 at dimension 0, lanes 16-31 at 8.
      if (block == 0)
#pragma unroll
        for (int kStep = 0; kStep < kHeadDim / 16; ++kStep)
          detail::loadMatrixX4(qFragments[kStep],
                               qShared + (warpRow + lane % 16) * kPromptRowStride + kStep * 16 + (lane / 16) * 8);
      // One ldmatrix gives the B operands of two n-tiles: lanes 0-7 address keys n*8.. at dimension 0, 8-15 the
      // same keys at 8, 16-31 the next n-tile's keys.
#pragma unroll
      for (int kStep = 0; kStep < kHeadDim / 16; ++kStep) {
#pragma unroll
        for (int n = 0; n < kPromptKeys / 8; n += 2) {
          std::uint32_t b[4];
          detail::loadMatrixX4(b, kTile + (n * 8 + lane % 8 + (lane / 16) * 8) * kPromptRowStride + kStep * 16 +
                                      ((lane / 8) % 2) * 8);
          detail::mma16816(s[n], qFragments[kStep], b[0], b[1]);
          detail::mma16816(s[n + 1], qFragments[kStep], b[2], b[3]);
        }
      }
    } else {
      // Fragments straight from shared memory, two 32-bit loads per operand pair.
#pragma unroll
      for (int kStep = 0; kStep < kHeadDim / 16; ++kStep) {
        const __half* qRow = qShared + (warpRow + g) * kPromptRowStride + kStep * 16 + 2 * t;
        const std::uint32_t a[4] = {detail::loadShared32(qRow), detail::loadShared32(qRow + 8 * kPromptRowStride),
                                    detail::loadShared32(qRow + 8),
                                    detail::loadShared32(qRow + 8 * kPromptRowStride + 8)};
#pragma unroll
        for (int n = 0; n < kPromptKeys / 8; ++n) {
          const __half* kRow = kTile + (n * 8 + g) * kPromptRowStride + kStep * 16 + 2 * t;
          detail::mma16816(s[n], a, detail::loadShared32(kRow), detail::loadShared32(kRow + 8));
        }
      }
    }

    // Causal mask (only the diagonal blocks reach past a query) and the online softmax, per row g and g + 8.
    const bool diagonal = keyPosition + kPromptKeys > firstPosition;
    float blockMax[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < kPromptKeys / 8; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int half = i / 2;
        const std::uint32_t query = firstPosition + warpRow + g + 8 * half;
        const std::uint32_t key = keyPosition + n * 8 + 2 * t + i % 2;
        float v = s[n][i] * kScoreScaleLog2;
        if (diagonal && key > query) v = -INFINITY;
        s[n][i] = v;
        blockMax[half] = fmaxf(blockMax[half], v);
      }
    float correction[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      // The four threads of a quad hold the same two rows.
      blockMax[half] = fmaxf(blockMax[half], __shfl_xor_sync(0xffffffffu, blockMax[half], 1));
      blockMax[half] = fmaxf(blockMax[half], __shfl_xor_sync(0xffffffffu, blockMax[half], 2));
      const float newMax = fmaxf(rowMax[half], blockMax[half]);  // finite: key 0 is in the first block of every row
      correction[half] = exp2f(rowMax[half] - newMax);
      rowMax[half] = newMax;
      rowSum[half] *= correction[half];
    }
#pragma unroll
    for (int n = 0; n < kPromptKeys / 8; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float p = exp2f(s[n][i] - rowMax[i / 2]);
        s[n][i] = p;
        rowSum[i / 2] += p;  // this thread's columns; the quad's partial sums are added at the end
      }
#pragma unroll
    for (int n = 0; n < kHeadDim / 8; ++n) {
      o[n][0] *= correction[0];
      o[n][1] *= correction[0];
      o[n][2] *= correction[1];
      o[n][3] *= correction[1];
    }

    // O += P V: P's accumulator layout is the A operand of the next MMA (two 8-key n-tiles per 16-key k-step).
#pragma unroll
    for (int kStep = 0; kStep < kPromptKeys / 16; ++kStep) {
      const std::uint32_t a[4] = {detail::packHalves(s[2 * kStep][0], s[2 * kStep][1]),
                                  detail::packHalves(s[2 * kStep][2], s[2 * kStep][3]),
                                  detail::packHalves(s[2 * kStep + 1][0], s[2 * kStep + 1][1]),
                                  detail::packHalves(s[2 * kStep + 1][2], s[2 * kStep + 1][3])};
#pragma unroll
      for (int n = 0; n < kHeadDim / 8; n += 2) {
        // Matrices: keys +0 and +8 of head dimensions n*8, then the same of (n+1)*8.
        const int matrix = lane / 8, row = lane % 8;
        const __half* address =
            vTile + (kStep * 16 + row + 8 * (matrix % 2)) * kPromptRowStride + (n + matrix / 2) * 8;
        std::uint32_t b[4];
        detail::loadMatrixX4Transposed(b, address);
        detail::mma16816(o[n], a, b[0], b[1]);
        detail::mma16816(o[n + 1], a, b[2], b[3]);
      }
    }
    __syncthreads();  // every warp is done with this buffer before it is refilled
  }

  // T = O / l, rows g and g + 8 of the warp, two head dimensions per store.
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    rowSum[half] += __shfl_xor_sync(0xffffffffu, rowSum[half], 1);
    rowSum[half] += __shfl_xor_sync(0xffffffffu, rowSum[half], 2);
  }
  const std::size_t tColumns = std::size_t(args.heads) * kHeadDim;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    __half* tRow = args.t + std::size_t(firstQuery + warpRow + g + 8 * half) * tColumns + head * kHeadDim;
    const float inverse = 1.0f / rowSum[half];
#pragma unroll
    for (int n = 0; n < kHeadDim / 8; ++n)
      *reinterpret_cast<__half2*>(tRow + n * 8 + 2 * t) =
          __floats2half2_rn(o[n][2 * half] * inverse, o[n][2 * half + 1] * inverse);
  }
  // Two blocks per tile: the second to finish its half posts the tile for both.
  if constexpr (kParts > 1)
    if (!detail::blockArrivesLast(args.arrivals + linearIndex(self.tile, view.grid), kParts, self.iteration)) return;
  blockPost<OutputPolicy>(view, self.tile);
}

// ==== Reference =================================================================================================
//
// Plain fp32 attention, one block per (token, head): every score, the softmax and the weighted sum in fp32, from
// the fp16 QKV and the caches as they were before the chain ran (keys [0, S') from the caches, the new ones from
// QKV), causal within the new tokens. Used to check every variant; not timed.

inline constexpr int kReferenceThreads = 128;

template <int = 0>
__global__ void __launch_bounds__(kReferenceThreads)
    referenceAttentionKernel(const __half* qkv, const __half* kCache, const __half* vCache, __half* t,
                             std::uint32_t heads, std::uint32_t sequenceLength, std::uint32_t cached,
                             std::uint32_t cacheCapacity) {
  extern __shared__ float referenceScores[];
  __shared__ float q[kHeadDim];
  __shared__ float scratch[kReferenceThreads / 32];
  const std::uint32_t token = blockIdx.x, head = blockIdx.y;
  const std::uint32_t sequence = token / sequenceLength, position = cached + token % sequenceLength;
  const std::size_t qkvColumns = std::size_t(3) * heads * kHeadDim;
  const std::size_t cacheBase = (std::size_t(sequence) * heads + head) * cacheCapacity * kHeadDim;
  auto row = [&](std::uint32_t j, bool value) -> const __half* {
    if (j < cached) return (value ? vCache : kCache) + cacheBase + std::size_t(j) * kHeadDim;
    const std::size_t qkvRow = std::size_t(sequence) * sequenceLength + (j - cached);
    return qkv + qkvRow * qkvColumns + ((value ? 2 : 1) * heads + head) * kHeadDim;
  };
  q[threadIdx.x] = __half2float(qkv[std::size_t(token) * qkvColumns + head * kHeadDim + threadIdx.x]);
  __syncthreads();
  const std::uint32_t keys = position + 1;
  float localMax = -INFINITY;
  for (std::uint32_t j = threadIdx.x; j < keys; j += kReferenceThreads) {
    const __half* k = row(j, false);
    float dot = 0.0f;
    for (int i = 0; i < kHeadDim; ++i) dot += q[i] * __half2float(k[i]);
    referenceScores[j] = dot * 0.08838834764831845f;  // 1 / sqrt(128)
    localMax = fmaxf(localMax, referenceScores[j]);
  }
  const float m = detail::blockReduce<kReferenceThreads / 32, true>(localMax, scratch);
  float localSum = 0.0f;
  for (std::uint32_t j = threadIdx.x; j < keys; j += kReferenceThreads) {
    referenceScores[j] = expf(referenceScores[j] - m);
    localSum += referenceScores[j];
  }
  const float l = detail::blockReduce<kReferenceThreads / 32, false>(localSum, scratch);
  float out = 0.0f;
  for (std::uint32_t j = 0; j < keys; ++j) out += referenceScores[j] * __half2float(row(j, true)[threadIdx.x]);
  t[std::size_t(token) * heads * kHeadDim + head * kHeadDim + threadIdx.x] = __float2half(out / l);
}

}  // namespace cusync::examples::attention
