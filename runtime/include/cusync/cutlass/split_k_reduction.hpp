// Split-K without waiting, shared by every hooked sm90 GEMM kernel (one tile per block, persistent, fused chain).
// Device code; needs CUTLASS/CuTe.
//
// P work units share a tile, each over its own k-range. Each writes its fp32 partial accumulators in the MMA
// fragment's own order (the reader is the same math thread index of another block with the same fragment layout,
// so no layout mapping is needed) and counts itself in the tile's arrival counter (release). The unit that arrives
// last (acquire) adds the other partials, runs the epilogue and posts the tile. No unit ever waits for another
// part, so split-K adds no deadlock hazard, in any queue order of the parts.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

namespace cusync::cutlass_sm90 {

// Where a split stage keeps its partials: tileCount * parts * TileM * TileN floats, and one arrival counter per
// tile (zeroed once). The last arrival of a launch takes the parts back off the counter (an atomic subtraction), so
// between launches it is 0 and needs no reset (graph replays), for any number of parts and launches. That assumes
// what split-K needs anyway for its partials: every part of a tile in one launch arrives before any part of that
// tile in the next (the stage's next launch is stream-ordered after this one's last consumer, which read every
// tile). Counting every arrival ever and testing for a multiple of the parts, as these kernels did until session
// 13, breaks at the 32-bit wrap unless the parts are a power of two: after 2^32 / parts launches (a day of serving
// a 100 us chain at 5 parts), a tile would be finished by the wrong part, before its other partials were written.

// A tile's partials take `slotsPerTile` slots (0: one per part). Stream-K tiles have different part counts, and
// take the most any of them has (StageView::partialSlotsPerTile).
//
// `accumulate`: instead of each part writing its own slot for the last arrival to read back one by one, the parts
// add theirs into the tile's first slot with vector reductions in L2 (red.global.add.v4.f32, fire and forget), and
// the last arrival reads that one slot and zeroes it for the next launch. Its read no longer grows with the parts
// (the deterministic read of 10 partials of a 128 x 128 tile took about 20 us of the QKV GEMM's tail at 512 tokens,
// docs/BENCHMARKS.md, issue 14, sessions 15-16), at the price of a summation order that varies from run to run: the
// result is not bitwise reproducible. The slot must be zero before the first launch (GemmSplit zeroes it).
struct SplitKBuffers {
  float* partials = nullptr;
  std::uint32_t* arrivals = nullptr;
  std::uint32_t slotsPerTile = 0;
  bool accumulate = false;
};

// Adds four floats at `address` (16-byte aligned) in L2, without a result.
CUTLASS_DEVICE void reduceAddFourInL2(float* address, float a, float b, float c, float d) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(address), "f"(a), "f"(b), "f"(c), "f"(d)
               : "memory");
#else
  atomicAdd(address, a), atomicAdd(address + 1, b), atomicAdd(address + 2, c), atomicAdd(address + 3, d);
#endif
}

// Loads a thread keeps in flight while it adds another part's partial: the largest divisor of its accumulator count
// up to 64. Above 128 accumulators (256 x 192 tiles: 192) the loads stay one at a time: ptxas hoists every chunk's
// loads (the accumulators must stay in registers, so the chunks are unrolled) and spilled about 1.7 KB in the fused
// chain's 256 x 192 kernel, against 0.3 KB one at a time.
constexpr int reductionChunk(int fragment) {
  if (fragment > 128) return 1;
  for (int chunk = 64; chunk > 1; --chunk)
    if (fragment % chunk == 0) return chunk;
  return 1;
}

// Publishes this part's accumulators; returns true in the unit that arrives last, after adding every other part's
// accumulators into its own (accumulating: after reading back the sum of every part's). Called by all
// `NumMmaThreads` math threads. Accumulators of rows at or past the problem's M (`rowsInTile` counts the rest) are
// neither written nor read: the epilogue never stores them, and at small M (the case split-K is for) they are nearly
// all of the tile, e.g. 63 of 64 rows at M = 1.
template <class TiledMma, class TileShape, int NumMmaThreads, class Accumulators>
CUTLASS_DEVICE bool reduceSplitPartials(SplitKBuffers buffers, std::uint32_t tileIndex, std::uint32_t part,
                                        std::uint32_t parts, Accumulators& accumulators, int mma_thread_idx,
                                        std::uint32_t& lastArrival, int rowsInTile) {
  constexpr int kFragment = decltype(cute::size(accumulators))::value;
  // The tile row of each of this thread's accumulators, from the MMA's own partitioning of the tile.
  auto rowsOfFragment = TiledMma{}.get_thread_slice(mma_thread_idx).partition_C(
      cute::make_identity_tensor(cute::take<0, 2>(TileShape{})));
  static_assert(decltype(cute::size(rowsOfFragment))::value == kFragment, "one coordinate per accumulator");
  auto rowIsInProblem = [&](int i) { return cute::get<0>(rowsOfFragment(i)) < rowsInTile; };
  const std::uint32_t slots = buffers.slotsPerTile != 0 ? buffers.slotsPerTile : parts;
  auto partials = [&](std::uint32_t p) {
    return buffers.partials + (std::size_t(tileIndex) * slots + p) * kFragment * NumMmaThreads;
  };
  const bool fullTile = rowsInTile >= int(cute::size<0>(TileShape{}));
  // Accumulating: accumulators 4j..4j+3 of a thread lie together, (j * NumMmaThreads + thread) * 4, so that each
  // group of four is one vector reduction and a warp's reductions cover 512 contiguous bytes.
  static_assert(kFragment % 4 == 0, "accumulators come in groups of four");
  auto accumulated = [&](int i) {
    return partials(0) + (std::size_t(i / 4) * NumMmaThreads + mma_thread_idx) * 4 + i % 4;
  };
  float* mine = partials(part);
  if (buffers.accumulate) {
    // Every part adds its accumulators before it counts itself (which part is last is known only from the count,
    // and the count's release must follow the additions), so the last one reads back the whole sum, its own
    // included. Rows past the problem's M hold zeros (TMA fills them so) and are left out of partial tiles.
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kFragment; i += 4) {
      if (fullTile) {
        reduceAddFourInL2(accumulated(i), accumulators(i), accumulators(i + 1), accumulators(i + 2),
                          accumulators(i + 3));
      } else {
        CUTLASS_PRAGMA_UNROLL
        for (int j = i; j < i + 4; ++j)
          if (rowIsInProblem(j)) atomicAdd(accumulated(j), accumulators(j));
      }
    }
  } else {
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kFragment; ++i)
      if (rowIsInProblem(i)) __stcg(mine + i * NumMmaThreads + mma_thread_idx, accumulators(i));
  }
  // Release: every thread's partial stores, then one thread's counted arrival. Acquire in the last unit: the
  // arrival read-modify-write sees every earlier part's release; the barrier extends it to all math threads.
  cutlass::arch::NamedBarrier::sync(NumMmaThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
  if (mma_thread_idx == 0) {
    std::uint32_t previous;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                 : "=r"(previous)
                 : "l"(buffers.arrivals + tileIndex)
                 : "memory");
    lastArrival = previous + 1 == parts;
    // Every part of this launch has arrived, so nothing else touches the counter until the next launch.
    if (lastArrival) atomicSub(buffers.arrivals + tileIndex, parts);
  }
  cutlass::arch::NamedBarrier::sync(NumMmaThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
  if (!lastArrival) return false;
  if (buffers.accumulate) {
    // The sum of every part, read in vectors of four, then the slot zeroed for the next launch (stream-ordered
    // after this launch's consumers, which read the tile only after its post, which follows these stores).
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kFragment; i += 4) {
      const float4 sum = __ldcg(reinterpret_cast<const float4*>(accumulated(i)));
      accumulators(i) = sum.x, accumulators(i + 1) = sum.y, accumulators(i + 2) = sum.z, accumulators(i + 3) = sum.w;
      __stcg(reinterpret_cast<float4*>(accumulated(i)), make_float4(0.f, 0.f, 0.f, 0.f));
    }
    return true;
  }
  // The reads come in chunks of kChunk loads per thread, all issued before the first add. Loading and adding one
  // accumulator at a time behind the per-row test (as until session 15) left only a few loads in flight: the last
  // part of a 128 x 128 tile took 26-32 us from its last MMA to its post with 4 partials to add (about 9 GB/s an
  // SM), while its whole-tile neighbours took 1.3 us; in chunks, 7.8-8.8 us (block traces, docs/BENCHMARKS.md,
  // issue 14, session 15). Full tiles (every row in the problem, the prompt shapes) load without the test.
  constexpr int kChunk = reductionChunk(kFragment);
  for (std::uint32_t p = 0; p < parts; ++p) {
    if (p == part) continue;
    const float* other = partials(p) + mma_thread_idx;
    if constexpr (kChunk == 1) {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kFragment; ++i)
        if (rowIsInProblem(i)) accumulators(i) += __ldcg(other + i * NumMmaThreads);
    } else {
      CUTLASS_PRAGMA_UNROLL
      for (int first = 0; first < kFragment; first += kChunk) {
        float values[kChunk];
        if (fullTile) {
          CUTLASS_PRAGMA_UNROLL
          for (int j = 0; j < kChunk; ++j) values[j] = __ldcg(other + (first + j) * NumMmaThreads);
        } else {
          CUTLASS_PRAGMA_UNROLL
          for (int j = 0; j < kChunk; ++j)
            values[j] = rowIsInProblem(first + j) ? __ldcg(other + (first + j) * NumMmaThreads) : 0.0f;
        }
        CUTLASS_PRAGMA_UNROLL
        for (int j = 0; j < kChunk; ++j) accumulators(first + j) += values[j];
      }
    }
  }
  return true;
}

}  // namespace cusync::cutlass_sm90
