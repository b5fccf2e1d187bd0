// The consumer side of the sm_80 hooked GEMM: before a block issues the cp.async loads of an A k-tile, it waits
// until every producer tile that k-tile reads has been posted. Device code; free of CUTLASS.
//
// Every thread of the block calls it with the same arguments (the multistage mainloop has no producer warp: all
// threads issue cp.async). One thread spins (InputView::waitThread, an ld.acquire loop); a block barrier then
// extends its acquire to the other threads, whose cp.async reads (generic proxy, unlike TMA) are ordered after
// the barrier. The barrier is taken only when a semaphore was actually waited on: each thread keeps an identical
// copy of the cache of satisfied semaphores, so all threads agree, without communicating, on whether there is a
// barrier. A RowSync consumer thus synchronizes once per producer row; a TileSync consumer once per producer tile
// its k-range enters (every producerTileColumns / TileK k-tiles).
#pragma once

#include <cstdint>

#include "cusync/producer_tile_range.hpp"
#include "cusync/stage_view.cuh"

namespace cusync::cutlass_sm80 {

// Where the A operand of a consumer GEMM comes from: the output of a producer stage with its own tile shape
// (producer_tile_range.hpp maps rows and columns of A to producer tiles).
template <class InputPolicy>
struct ProducedOperandA {
  InputView<InputPolicy> input;           // producer semaphores; unsynchronized when null
  std::uint32_t producerTileRows = 0;     // producer tile M (rows of A per producer tile)
  std::uint32_t producerTileColumns = 0;  // producer tile N (columns of A per producer tile)
  // PDL-only baseline: wait for the whole previous grid (griddepcontrol.wait, sm_90) before the first A load.
  bool waitForPriorGrid = false;
};

// The block-collective wait of one consumer tile, over its k-tiles.
template <class InputPolicy, int CacheCapacity = 4>
class BlockWaitForA {
 public:
  // `rowBegin`, `rowEnd`: the rows of A this tile reads that exist (rowEnd <= M).
  __device__ BlockWaitForA(const ProducedOperandA<InputPolicy>& produced, const TileTicket& ticket,
                           const StageView& consumer, std::uint32_t rowBegin, std::uint32_t rowEnd)
      : produced_(produced), ticket_(ticket), consumer_(consumer), rowBegin_(rowBegin), rowEnd_(rowEnd) {}

  // Waits for the producer tiles covering columns [columnBegin, columnEnd) of this tile's rows. Called by every
  // thread of the block, before any of them issues a load of those columns.
  __device__ void operator()(std::uint32_t columnBegin, std::uint32_t columnEnd) {
    if (produced_.waitForPriorGrid && !priorGridWaited_) {
      waitForPriorGrids();  // every thread: each one's own loads are then ordered after the prior grid
      priorGridWaited_ = true;
    }
    if (!produced_.input.synchronized()) return;
    const GridShape grid = produced_.input.producerGrid;
    const ProducerTileRange tiles =
        producerTilesCovering(rowBegin_, rowEnd_, columnBegin, columnEnd, produced_.producerTileRows,
                              produced_.producerTileColumns, grid);
    bool waited = false;
    for (std::uint32_t y = tiles.yBegin; y < tiles.yEnd; ++y) {
      for (std::uint32_t x = tiles.xBegin; x < tiles.xEnd; ++x) {
        const TileCoord producerTile{x, y, ticket_.tile.z};
        const std::uint32_t semaphore = InputPolicy::sem(producerTile, grid);
        if (seen_.contains(semaphore)) continue;
        if (threadIdx.x == 0) produced_.input.waitThread(producerTile, ticket_.iteration, consumer_, ticket_.tile);
        seen_.insert(semaphore);
        waited = true;
      }
    }
    if (waited) __syncthreads();  // uniform: every thread's cache made the same decisions
  }

 private:
  const ProducedOperandA<InputPolicy>& produced_;
  TileTicket ticket_;
  const StageView& consumer_;
  std::uint32_t rowBegin_, rowEnd_;
  SatisfiedSemaphoreCache<CacheCapacity> seen_;
  bool priorGridWaited_ = false;
};

}  // namespace cusync::cutlass_sm80
