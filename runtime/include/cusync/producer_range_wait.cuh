// Waiting for the producer tiles a consumer work unit reads, k-block by k-block, with one round trip to memory per
// unit in the common case instead of one per producer tile. Device code, run by the one thread that issues the
// consumer's loads.
//
// Why: a wait is an acquire load that travels to L2 and back (about a microsecond) before the thread may issue the
// TMA load it guards. A GEMM unit that reads a new producer tile every k-block or two then spends as long in waits
// as the tensor cores spend on a k-block: measured on the H100 (GPT-3 MLP, 128x128x64 tiles, M = 4096), the fused
// chain ran 14% slower than the same kernel without waits. Here the waiting thread reads the semaphores of the
// unit's k-range ahead with relaxed loads, several in flight at once (one round trip), keeps the prefix of columns it
// found posted, and orders them with one acquire fence; only a tile not yet posted is spun on (with the watchdog).
// It reads one batch per call, not the whole unit: each round trip stalls the thread that issues the loads, and a
// unit whose first A load waited for the look-ahead over all its columns (6 round trips at M = 4096, 256x128x64
// tiles) took 19% longer in the fused chain than without waits (chain_trace.h); later batches are read while the
// pipeline still holds several k-blocks, so their round trips are hidden.
//
// Memory order (PTX): relaxed loads that observe the producers' releases, followed by `fence.acq_rel.gpu`, form the
// acquire pattern, so the producers' stores happen before everything this thread does after the fence; the proxy
// fence then orders them before its TMA (async proxy) loads. A column is marked posted only after that fence.
#pragma once

#include <cstdint>

#include "cusync/producer_tile_range.hpp"
#include "cusync/semaphore.cuh"
#include "cusync/stage_view.cuh"

namespace cusync {

namespace detail {
__device__ __forceinline__ std::uint32_t loadRelaxed(const std::uint32_t* address) {
  std::uint32_t value;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ void fenceAcquireRelease() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
}  // namespace detail

template <class Policy>
class ProducerRangeWait {
 public:
  // `unit`: every producer tile the unit reads over its whole k-range (rows fixed, columns in k order), in batch z.
  // `knownPostedEnd`: columns [unit.xBegin, knownPostedEnd) are already known posted and ordered before this
  // thread's loads (warpPollPostedColumns, then fenceProxyAsyncGlobal by this thread); 0 when nothing is known.
  __device__ ProducerRangeWait(const InputView<Policy>& input, ProducerTileRange unit, std::uint32_t z,
                               std::uint32_t iteration, std::uint32_t knownPostedEnd = 0)
      : input_(input), unit_(unit), z_(z), iteration_(iteration),
        postedEnd_(knownPostedEnd > unit.xBegin ? (knownPostedEnd < unit.xEnd ? knownPostedEnd : unit.xEnd)
                                                : unit.xBegin) {}

  // Returns once every producer tile in `needed` (columns within the unit's, as its k-blocks advance) is posted, its
  // data ordered before the caller's next loads, TMA included.
  __device__ void waitFor(const ProducerTileRange& needed, const StageView& consumer, TileCoord consumerTile) {
    if (!input_.synchronized() || needed.empty() || needed.xEnd <= postedEnd_) return;
    // needed lies within the unit's columns; the second condition only guards against a caller breaking that.
    while (needed.xEnd > postedEnd_ && postedEnd_ < unit_.xEnd) {
      TileCoord blocking;
      if (!pollAhead(blocking)) {
        // The first tile not yet posted: spin on it alone (acquire, watchdog), then look ahead again.
        const std::uint32_t semaphore = Policy::sem(blocking, input_.producerGrid);
        spinUntilReached(input_.producerSemaphores + semaphore, target(blocking),
                         WaitReport{consumer.name, consumerTile, blocking, semaphore});
      }
    }
    detail::fenceAcquireRelease();
    fenceProxyAsyncGlobal();
  }

  // True when every producer tile in `needed` is posted and ordered before the caller's next loads (as after
  // waitFor), found without blocking: it reads one batch ahead (one round trip) and never spins.
  __device__ bool postedWithoutWaiting(const ProducerTileRange& needed) {
    if (!input_.synchronized() || needed.empty() || needed.xEnd <= postedEnd_) return true;
    const std::uint32_t before = postedEnd_;
    TileCoord ignored;
    pollAhead(ignored);
    if (postedEnd_ == before) return false;
    detail::fenceAcquireRelease();
    fenceProxyAsyncGlobal();
    return needed.xEnd <= postedEnd_;
  }

 private:
  static constexpr std::uint32_t kInFlight = 8;  // semaphores read per round trip

  __device__ std::uint32_t target(TileCoord t) const {
    return input_.target(t, iteration_);
  }
  // The i-th tile after the last one known posted, column by column (every row of a column, then the next column).
  __device__ TileCoord tileAfterPosted(std::uint32_t i) const {
    const std::uint32_t rows = unit_.yEnd - unit_.yBegin;
    const std::uint32_t j = postedRows_ + i;
    return TileCoord{postedEnd_ + j / rows, unit_.yBegin + j % rows, z_};
  }

  // Reads up to kInFlight semaphores of the unit not yet known posted, in one round trip, and advances over the
  // prefix found posted. Returns false with the first tile found not posted in `blocking`.
  __device__ bool pollAhead(TileCoord& blocking) {
    const std::uint32_t rows = unit_.yEnd - unit_.yBegin;
    const std::uint32_t remaining = (unit_.xEnd - postedEnd_) * rows - postedRows_;
    const std::uint32_t count = remaining < kInFlight ? remaining : kInFlight;
    std::uint32_t seen[kInFlight];
#pragma unroll
    for (std::uint32_t i = 0; i < kInFlight; ++i)
      if (i < count)
        seen[i] = detail::loadRelaxed(input_.producerSemaphores + Policy::sem(tileAfterPosted(i), input_.producerGrid));
    std::uint32_t posted = 0;
#pragma unroll
    for (std::uint32_t i = 0; i < kInFlight; ++i)
      if (i < count && posted == i && detail::reached(seen[i], target(tileAfterPosted(i)))) ++posted;
    const bool allPosted = posted == count;
    if (!allPosted) blocking = tileAfterPosted(posted);
    const std::uint32_t j = postedRows_ + posted;
    postedEnd_ += j / rows;
    postedRows_ = j % rows;
    return allPosted;
  }

  InputView<Policy> input_;
  ProducerTileRange unit_;
  std::uint32_t z_;
  std::uint32_t iteration_;
  std::uint32_t postedEnd_;       // columns [unit_.xBegin, postedEnd_) are posted in every row of the unit
  std::uint32_t postedRows_ = 0;  // and the first postedRows_ rows of column postedEnd_
};

// A whole warp reads the semaphores of up to 32 x 2 producer tiles of `unit` at once (one round trip instead of one
// per batch of the single thread that issues loads) and returns, in every lane, the end of the prefix of columns
// posted in every row. Each lane that read completes the acquire pattern with its own fence, and __syncwarp
// orders every lane's view before the others' next operations; the thread that then issues TMA loads still owes
// the proxy fence (fenceProxyAsyncGlobal). Why: the fused chain's consumer units spent 19% longer in their MMA than
// without waits at M = 4096 (chain_trace.h), their load thread polling the unit's 48 producer columns 8 at a time.
template <class Policy>
__device__ std::uint32_t warpPollPostedColumns(const InputView<Policy>& input, ProducerTileRange unit,
                                               std::uint32_t z, std::uint32_t iteration) {
  if (!input.synchronized() || unit.empty()) return unit.xBegin;
  const std::uint32_t lane = threadIdx.x % 32;
  const std::uint32_t rows = unit.yEnd - unit.yBegin;
  const std::uint32_t tiles = (unit.xEnd - unit.xBegin) * rows;
  constexpr std::uint32_t kPerLane = 2;
  bool posted[kPerLane];
#pragma unroll
  for (std::uint32_t j = 0; j < kPerLane; ++j) {
    const std::uint32_t i = lane + 32 * j;
    posted[j] = true;
    if (i < tiles) {
      const TileCoord t{unit.xBegin + i / rows, unit.yBegin + i % rows, z};
      const std::uint32_t seen = detail::loadRelaxed(input.producerSemaphores + Policy::sem(t, input.producerGrid));
      posted[j] = detail::reached(seen, input.target(t, iteration));
    }
  }
#if !defined(CUSYNC_DIAGNOSTIC_NO_POLL_FENCES)  // diagnostic builds only: bounds what the fences cost (unsound)
  detail::fenceAcquireRelease();
#endif
  // The first tile (column by column, all rows of a column) not posted, or not read.
  std::uint32_t firstMissing = tiles < 32 * kPerLane ? tiles : 32 * kPerLane;
#pragma unroll
  for (std::uint32_t j = 0; j < kPerLane; ++j) {
    const unsigned missing = __ballot_sync(0xffffffffu, !posted[j]);
    if (missing != 0) {
      const std::uint32_t index = 32 * j + std::uint32_t(__ffs(missing) - 1);
      if (index < firstMissing) firstMissing = index;
    }
  }
  __syncwarp();
  return unit.xBegin + firstMissing / rows;
}

// The whole warp waits until every producer tile of `unit` is posted, polling all of them per round trip
// (warpPollPostedColumns) with the spin back-off between rounds; returns the end of the prefix of columns posted
// in every row, which is unit.xEnd unless the unit reads more tiles than one poll covers (then the caller waits for
// the rest k-block by k-block). The same acquire pattern and the same proxy-fence duty as warpPollPostedColumns.
// Why: a unit drawn before its producer row is complete otherwise waits k-block by k-block on one thread (spin on the
// first missing tile, then look ahead a batch at a time); at M = 256 every GEMM-2 unit of the fused chain drawn
// before GEMM 1's single wave ended took that path. With CUSYNC_WAIT_TIMEOUT_NS, a wait past it prints the waiting
// stage, its tile and the first producer tile missing, and traps.
template <class Policy>
__device__ std::uint32_t warpWaitPostedColumns(const InputView<Policy>& input, ProducerTileRange unit, std::uint32_t z,
                                               std::uint32_t iteration, const StageView& consumer,
                                               TileCoord consumerTile) {
  std::uint32_t postedEnd = warpPollPostedColumns(input, unit, z, iteration);
  const std::uint32_t rows = unit.yEnd - unit.yBegin;
  const std::uint32_t coveredColumns = rows == 0 ? 0 : (32u * 2u) / rows;  // columns one poll reads in full
  const std::uint32_t reachable = unit.xBegin + coveredColumns < unit.xEnd ? unit.xBegin + coveredColumns : unit.xEnd;
#if defined(CUSYNC_WAIT_TIMEOUT_NS)
  const std::uint64_t start = detail::globalTimerNs();
#endif
  while (postedEnd < reachable) {
    if (CUSYNC_SPIN_SLEEP_NS > 0) __nanosleep(CUSYNC_SPIN_SLEEP_NS);
    postedEnd = warpPollPostedColumns(input, unit, z, iteration);
#if defined(CUSYNC_WAIT_TIMEOUT_NS)
    if (detail::globalTimerNs() - start > CUSYNC_WAIT_TIMEOUT_NS) {
      if (threadIdx.x % 32 == 0)
        printf("cusync watchdog: stage '%s' tile (%u,%u,%u) block %u waited %llu ns for its whole k-range: producer "
               "column %u (rows %u..%u) not posted\n",
               consumer.name, consumerTile.x, consumerTile.y, consumerTile.z, blockIdx.x,
               static_cast<unsigned long long>(CUSYNC_WAIT_TIMEOUT_NS), postedEnd, unit.yBegin, unit.yEnd - 1);
      __trap();
    }
#endif
  }
  return postedEnd;
}

}  // namespace cusync
