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

struct SplitKBuffers {
  float* partials = nullptr;
  std::uint32_t* arrivals = nullptr;
};

// Publishes this part's accumulators; returns true in the unit that arrives last, after adding every other part's
// accumulators into its own. Called by all `NumMmaThreads` math threads. Accumulators of rows at or past the
// problem's M (`rowsInTile` counts the rest) are neither written nor read: the epilogue never stores them, and at
// small M (the case split-K is for) they are nearly all of the tile, e.g. 63 of 64 rows at M = 1.
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
  auto partials = [&](std::uint32_t p) {
    return buffers.partials + (std::size_t(tileIndex) * parts + p) * kFragment * NumMmaThreads;
  };
  float* mine = partials(part);
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < kFragment; ++i)
    if (rowIsInProblem(i)) __stcg(mine + i * NumMmaThreads + mma_thread_idx, accumulators(i));
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
  for (std::uint32_t p = 0; p < parts; ++p) {
    if (p == part) continue;
    const float* other = partials(p);
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kFragment; ++i)
      if (rowIsInProblem(i)) accumulators(i) += __ldcg(other + i * NumMmaThreads + mma_thread_idx);
  }
  return true;
}

}  // namespace cusync::cutlass_sm90
