// What a kernel receives to take part in tile synchronization: a view of its own stage and one view per producer
// it reads. Views are plain structs passed by value as kernel parameters (they are also __grid_constant__-safe).
// Device functions here are called by ONE thread (the one that issues loads, or thread 0); block-level
// wrappers live in block_sync.cuh.
#pragma once

#include <cstdint>

#include "cusync/part_order.h"
#include "cusync/semaphore.cuh"
#include "cusync/split_k_range.h"
#include "cusync/stream_k_split.h"
#include "cusync/tile.h"

namespace cusync {

inline constexpr int kStageNameCapacity = 24;

// Which tile a block computes and in which iteration (launch) of its stage.
struct TileTicket {
  TileCoord tile;
  std::uint32_t iteration;  // 0 for the first launch of the stage, 1 for the second, ...
};

// A block's share of a tile when several blocks compute one tile (split-K): the tile, and which part.
inline constexpr std::uint32_t kNoWorkLeft = 0xffffffffu;  // `part` of the unit that stops a persistent block
inline constexpr std::uint32_t kNotAStreamKChunk = 0xffffffffu;
struct WorkUnit {
  TileTicket ticket;
  std::uint32_t part;        // in [0, parts), or kNoWorkLeft (persistent kernels only)
  std::uint32_t parts = 1;   // parts of this unit's tile: the stage's blocksPerTile, or 1 for its whole tiles
  // The tile's k-blocks this unit reduces; a count of 0 means the balanced range of `part` of `parts`
  // (split_k_range.h), which every unit but a stream-K fragment has.
  KBlockRange kRange{0, 0};
  // Stream-K (stream_k_split.h): the chunk this unit is (as drawn, before it is cut into fragments) or belongs to
  // (a fragment), and where in its group's k-blocks the fragment begins (where the chunk's next fragment ends).
  std::uint32_t streamKChunk = kNotAStreamKChunk;
  std::uint32_t streamKBegin = 0;
  __host__ __device__ bool hasWork() const { return part != kNoWorkLeft; }
  __host__ __device__ bool isStreamK() const { return streamKChunk != kNotAStreamKChunk; }
  __host__ __device__ KBlockRange kBlocks(int kBlocksOfTile) const {
    return kRange.count != 0 ? kRange : kBlocksOfPart(part, parts, kBlocksOfTile);
  }
};

// A stage's device state: its grid, its tile counter, its tile order and the semaphores it posts to.
struct StageView {
  GridShape grid;
  unsigned long long* tileCounter = nullptr;       // tickets taken, over all launches of the stage (64 bits: stage.cuh)
  const std::uint32_t* tileOfOrderIndex = nullptr; // inverse tile order (linear tile ids); null = row-major
  std::uint32_t* semaphores = nullptr;             // the stage's output semaphores; null = nobody waits on it
  char name[kStageNameCapacity] = {};

  bool hardwareOrder = false;                      // "avoid custom order": a block computes its own blockIdx
  std::uint32_t blocksPerTile = 1;                 // blocks sharing one tile (split-K); the counter counts blocks
  PartOrder partOrder = PartOrder::PartsOfATileTogether;  // how the parts of the tiles follow each other
  // Split-K of the last partial wave only: the first `wholeTiles` tiles of the stage's order run unsplit, one
  // unit each, before the split units of the others (0: every tile split). A GEMM of 144 tiles on 132 SMs then
  // runs 132 whole tiles and 12 tiles in 11 parts: 1.09 tile-times instead of two (what Stream-K's data-parallel
  // + stream-K hybrid does, with split-K's last-arrival reduction).
  std::uint32_t wholeTiles = 0;
  // Persistent kernels: the number of blocks launched, each taking work units until the launch has none left.
  // 0: one block per work unit. Every persistent block draws exactly one ticket past the launch's last unit (the
  // one that tells it to stop), so a launch spans workUnits() + persistentBlocks tickets; counting those keeps
  // the next launch's tickets its own.
  std::uint32_t persistentBlocks = 0;
  // Clusters of `clusterRows` blocks along M (one-unit-per-block kernels; 1: none). The stage's order then lists the
  // tiles of each cluster back to back, (x, rows*y' + r) for r < rows (Stage::setClusterTileOrder), so consecutive
  // blocks, which the hardware groups into one cluster, share a column and its weight (B) tiles by TMA multicast.
  std::uint32_t clusterRows = 1;
  // Stream-K (stream_k_split.h; persistent kernels only, blocksPerTile 1): the tiles after the first `wholeTiles`
  // of the order are cut into `streamKChunks` units of equal k-block counts (0: no stream-K). A ticket then draws a
  // whole chunk, which the kernel cuts into its fragments (nextStreamKFragment). `streamKBlocks`: k-blocks per tile;
  // `streamKGroups`: StreamKRegion::groups; `streamKSlots`: partial slots per tile (the most parts a tile has).
  std::uint32_t streamKChunks = 0;
  std::int32_t streamKBlocks = 0;
  std::uint32_t streamKGroups = 1;
  std::uint32_t streamKSlots = 0;
  // Persistent kernels: block b takes the units at launch indices b, b + persistentBlocks, b + 2 persistentBlocks,
  // ... (CUTLASS's static persistent schedule) instead of drawing a ticket per unit. A ticket's round trip (an
  // atomic behind every other block's on one counter, then the order table) sat before each unit's first load and
  // left the math warps waiting for data at every tile boundary (docs/BENCHMARKS.md, issue 14, session 17). A block
  // then draws one ticket per launch, for the iteration its waits need and for consumers' wait-kernels, which count
  // started blocks (ticketsPerLaunch). Progress: a unit waits only for tiles of earlier stages, never for a unit
  // of its own stage, so which block computes it does not matter. Applies only with persistentBlocks != 0.
  bool staticUnits = false;

  CUSYNC_HOST_DEVICE bool takesStaticUnits() const { return staticUnits && persistentBlocks != 0; }
  CUSYNC_HOST_DEVICE StreamKRegion streamKRegion() const {
    return StreamKRegion{grid.tileCount() - wholeTiles, streamKChunks, streamKBlocks, streamKGroups};
  }
  CUSYNC_HOST_DEVICE std::uint32_t workUnits() const {
    if (streamKChunks != 0) return wholeTiles + streamKChunks;
    return tileUnits();
  }
  // The units of a launch without stream-K chunks: the whole tiles, then every part of the split ones.
  CUSYNC_HOST_DEVICE std::uint32_t tileUnits() const {
    return wholeTiles + (grid.tileCount() - wholeTiles) * blocksPerTile;
  }
  // The partial slots a split tile has in the stage's split-K buffers (split_k_reduction.hpp).
  CUSYNC_HOST_DEVICE std::uint32_t partialSlotsPerTile(std::uint32_t parts) const {
    return streamKChunks != 0 ? streamKSlots : parts;
  }
  // Parts of the tile at `orderIndex` in the stage's order.
  CUSYNC_HOST_DEVICE std::uint32_t partsOfTile(std::uint32_t orderIndex) const {
    return orderIndex < wholeTiles ? 1u : blocksPerTile;
  }
  CUSYNC_HOST_DEVICE std::uint32_t ticketsPerLaunch() const {
    return takesStaticUnits() ? persistentBlocks : workUnits() + persistentBlocks;
  }
  // Tickets of a launch drawn once every one of its units is owned by a started block (what a consumer's wait-kernel
  // waits for): the units' own tickets, or with static units every block's one ticket.
  CUSYNC_HOST_DEVICE std::uint32_t ticketsOnceEveryUnitIsTaken() const {
    return takesStaticUnits() ? persistentBlocks : workUnits();
  }

  // The place of the unit at `index` of a launch: the whole tiles first, then the split ones' parts in the part
  // order.
  CUSYNC_HOST_DEVICE UnitSlot slotAt(std::uint32_t index) const {
    if (index < wholeTiles) return UnitSlot{index, 0u};
    const UnitSlot split = unitSlot(index - wholeTiles, grid.tileCount() - wholeTiles, blocksPerTile, partOrder);
    return UnitSlot{wholeTiles + split.orderIndex, split.part};
  }

  // The first fragment of a drawn stream-K chunk (`drawn.isStreamK()`, as acquireWorkUnit returns it), or the one
  // after fragment `drawn`; a unit without work when the chunk has no more. Its tile is the region tile's in the
  // stage's order, its iteration the chunk's. The fragments come last tile first.
  CUSYNC_HOST_DEVICE WorkUnit nextStreamKFragment(WorkUnit const& drawn) const {
    const StreamKRegion region = streamKRegion();
    const std::uint32_t chunk = drawn.streamKChunk;
    // A chunk runs last tile first (stream_k_split.h): its first fragment ends where the chunk ends.
    const std::uint64_t end = drawn.hasWork() && drawn.kRange.count == 0 ? region.chunkEnd(chunk)
                                                                        : std::uint64_t(drawn.streamKBegin);
    if (!drawn.hasWork() || end <= region.chunkBegin(chunk))
      return WorkUnit{TileTicket{TileCoord{}, drawn.ticket.iteration}, kNoWorkLeft};
    const StreamKFragment f = region.fragmentEndingAt(chunk, end);
    const std::uint32_t orderIndex = wholeTiles + f.regionTile;
    const std::uint32_t linear = tileOfOrderIndex ? tileOfOrderIndex[orderIndex] : orderIndex;
    return WorkUnit{TileTicket{tileAtLinear(linear, grid), drawn.ticket.iteration}, f.part, f.parts, f.kBlocks, chunk,
                    std::uint32_t(end - std::uint64_t(f.kBlocks.count))};
  }

  // The unit at `index` of a launch in the stage's order: tiles in its tile order, their parts in its part order.
  CUSYNC_HOST_DEVICE WorkUnit unitAt(std::uint32_t index, std::uint32_t iteration) const {
    const UnitSlot slot = slotAt(index);
    const std::uint32_t linear = tileOfOrderIndex ? tileOfOrderIndex[slot.orderIndex] : slot.orderIndex;
    return WorkUnit{TileTicket{tileAtLinear(linear, grid), iteration}, slot.part, partsOfTile(slot.orderIndex)};
  }

  // The unit of block `blockIndex` of a one-unit-per-block launch in clusters of `clusterRows` blocks along M
  // (part_order.h's clusterUnitSlot; the stage's order pairs the tiles: Stage::setClusterTileOrder). The iteration
  // is 0 (acquireIteration supplies it).
  CUSYNC_HOST_DEVICE WorkUnit clusterUnitAt(std::uint32_t blockIndex) const {
    const UnitSlot slot =
        clusterUnitSlot(blockIndex, clusterRows, grid.tileCount(), wholeTiles, blocksPerTile, partOrder);
    const std::uint32_t linear = tileOfOrderIndex ? tileOfOrderIndex[slot.orderIndex] : slot.orderIndex;
    return WorkUnit{TileTicket{tileAtLinear(linear, grid), 0u}, slot.part, partsOfTile(slot.orderIndex)};
  }

  // The unit a block of a one-unit-per-block launch computes in hardware order ("avoid custom order"): the one its
  // index names, tiles row-major (not the stage's tile order), parts in the stage's part order.
  CUSYNC_HOST_DEVICE WorkUnit hardwareUnit(std::uint32_t blockIndex) const {
    const UnitSlot slot = slotAt(blockIndex);
    return WorkUnit{TileTicket{tileAtLinear(slot.orderIndex, grid), 0u}, slot.part, partsOfTile(slot.orderIndex)};
  }

  // Takes the next work unit (unitAt the ticket's index); ticket / ticketsPerLaunch() is the launch's iteration. A
  // persistent block calls it until !hasWork(). With `hardwareOrder` the unit is the one the block's own index
  // names (`hardwareTile`, `hardwarePart`: hardwareUnit).
  __device__ WorkUnit acquireWorkUnit(TileCoord hardwareTile, std::uint32_t hardwarePart) const {
    const unsigned long long ticket = atomicAdd(tileCounter, 1ull);
    // The semaphores count in 32 bits, wrap-safe (semaphore.cuh): the iteration is taken modulo 2^32 too.
    const std::uint32_t iteration = std::uint32_t(ticket / ticketsPerLaunch());
    if (hardwareOrder)  // hardware order is row-major: the tile's order index is its linear index
      return WorkUnit{TileTicket{hardwareTile, iteration}, hardwarePart, partsOfTile(linearIndex(hardwareTile, grid))};
    return unitAtLaunchIndex(std::uint32_t(ticket % ticketsPerLaunch()), iteration);
  }

  // The unit at `index` of a launch, whatever the index (acquireWorkUnit's ticket, or a block's static schedule): a
  // unit without work past the launch's last, a whole stream-K chunk (the kernel cuts it: nextStreamKFragment), or
  // unitAt.
  CUSYNC_HOST_DEVICE WorkUnit unitAtLaunchIndex(std::uint32_t index, std::uint32_t iteration) const {
    if (index >= workUnits()) return WorkUnit{TileTicket{TileCoord{}, iteration}, kNoWorkLeft};
    if (streamKChunks != 0 && index >= wholeTiles)
      return WorkUnit{TileTicket{TileCoord{}, iteration}, 0u, 1u, KBlockRange{0, 0}, index - wholeTiles};
    return unitAt(index, iteration);
  }

  // Static units (takesStaticUnits): the `position`-th unit of persistent block `block`, in launch `iteration`.
  CUSYNC_HOST_DEVICE WorkUnit staticUnit(std::uint32_t block, std::uint32_t position, std::uint32_t iteration) const {
    const std::uint64_t index = std::uint64_t(block) + std::uint64_t(position) * persistentBlocks;
    if (index >= workUnits()) return WorkUnit{TileTicket{TileCoord{}, iteration}, kNoWorkLeft};
    return unitAtLaunchIndex(std::uint32_t(index), iteration);
  }
  // staticUnit of a stage without stream-K chunks, for a kernel that runs none (the lean persistent GEMM, whose
  // can_implement refuses them): whole tiles and split-K parts only, so it compiles no chunk arithmetic.
  CUSYNC_HOST_DEVICE WorkUnit staticTileUnit(std::uint32_t block, std::uint32_t position,
                                             std::uint32_t iteration) const {
    const std::uint64_t index = std::uint64_t(block) + std::uint64_t(position) * persistentBlocks;
    if (index >= tileUnits()) return WorkUnit{TileTicket{TileCoord{}, iteration}, kNoWorkLeft};
    return unitAt(std::uint32_t(index), iteration);
  }

  // The unit of a block whose stage neither posts nor waits (a stream-ordered launch): nothing depends on which
  // block computes which tile, and no semaphore target needs the iteration, so the block takes a unit without the
  // ticket's atomic (a round trip to L2 before the first load, behind every other block's atomic on the same
  // counter): the unit at index blockIndex. The hardware starts blocks in about index order, so the stage's order
  // (grouped for L2 reuse, say) still holds approximately, as it would with tickets. The counter is left alone; a
  // stage that synchronizes in any launch takes tickets in every launch.
  __device__ WorkUnit unsynchronizedWorkUnit(std::uint32_t blockIndex) const { return unitAt(blockIndex, 0u); }

  // A block whose tile its own index fixes in the stage's order (a cluster's block: its cluster peers compute the
  // neighbouring tiles of the order, so the counter cannot choose it) draws a ticket only for the launch's iteration,
  // which its semaphore targets need; the counter still counts every block, for the consumers' wait-kernels.
  __device__ std::uint32_t acquireIteration() const {
    return std::uint32_t(atomicAdd(tileCounter, 1ull) / ticketsPerLaunch());
  }

  // Whether a block of this stage must count itself on the tile counter even where it needs no ticket's tile or
  // iteration: consumers' wait-kernels count started blocks of a stage that posts, and split-K arrivals count by
  // iteration. A block that also waits (its input is synchronized) needs the iteration, so draws a ticket instead.
  CUSYNC_HOST_DEVICE bool countsStartedBlocks() const { return semaphores != nullptr || blocksPerTile > 1; }

  // Hardware order, a block that needs neither its tile nor the iteration from the counter (it posts, it does not
  // wait): counts itself as started, for its consumers' wait-kernels, without waiting for the atomic's result.
  __device__ void countBlock() const { atomicAdd(tileCounter, 1ull); }

  // Takes the next tile of this stage's order (one block per tile). Because the counter spans launches, ticket /
  // tileCount is the launch's iteration number: semaphores never need resetting, graph replays included. With
  // `hardwareOrder` the tile is `hardwareTile`, what the block computes without cusync (its blockIdx, mapped by the
  // kernel), and the counter only yields the iteration. Non-persistent kernels: one call per block.
  __device__ TileTicket acquireTile(TileCoord hardwareTile) const { return acquireWorkUnit(hardwareTile, 0).ticket; }
  __device__ TileTicket acquireTile() const { return acquireTile(TileCoord{blockIdx.x, blockIdx.y, blockIdx.z}); }

  // Posts the completion of `tile` to its semaphore under `Policy`. The caller guarantees that every store of
  // the tile is complete and ordered before this call (block barrier, or bulk-group wait for TMA stores).
  template <class Policy>
  __device__ void postThread(TileCoord tile) const {
    if (semaphores == nullptr) return;
    detail::releaseAdd(semaphores + Policy::sem(tile, grid), 1u);
  }
};

// A consumer's view of one producer stage, synchronized under `Policy`.
template <class Policy>
struct InputView {
  const std::uint32_t* producerSemaphores = nullptr;  // null = no synchronization (stream-ordered variant)
  GridShape producerGrid;

  __device__ bool synchronized() const { return producerSemaphores != nullptr; }

  // The count a producer tile's semaphore reaches once the tile is complete in `iteration`: the one place a wait's
  // target is computed.
  CUSYNC_HOST_DEVICE std::uint32_t target(TileCoord producerTile, std::uint32_t iteration) const {
    return Policy::value(producerTile, producerGrid) * (iteration + 1u);
  }

  // Spins until the producer tile the caller is about to read has been posted in `iteration`.
  __device__ void waitThread(TileCoord producerTile, std::uint32_t iteration, const StageView& consumer,
                             TileCoord consumerTile) const {
    if (producerSemaphores == nullptr) return;
#if defined(CUSYNC_WAIT_TIMEOUT_NS)
    // Debug builds: a tile outside the producer grid has a semaphore that is never posted (or none at all), so the
    // wait would spin until the watchdog; say what is wrong at once instead.
    if (!producerGrid.contains(producerTile)) {
      printf("cusync: stage '%s' tile (%u,%u,%u) waits for producer tile (%u,%u,%u) outside the producer grid "
             "(%u,%u,%u)\n",
             consumer.name, consumerTile.x, consumerTile.y, consumerTile.z, producerTile.x, producerTile.y,
             producerTile.z, producerGrid.x, producerGrid.y, producerGrid.z);
      __trap();
    }
#endif
    const std::uint32_t semaphore = Policy::sem(producerTile, producerGrid);
    spinUntilReached(producerSemaphores + semaphore, target(producerTile, iteration),
                     WaitReport{consumer.name, consumerTile, producerTile, semaphore});
  }
};

// Remembers the last semaphores a thread saw satisfied within one tile, so a RowSync consumer waits once per row
// rather than once per k-step. Reset it when the thread moves to a new tile.
template <int Capacity = 4>
struct SatisfiedSemaphoreCache {
  std::uint32_t entries[Capacity];
  int count = 0;
  int next = 0;

  __device__ bool contains(std::uint32_t semaphore) const {
#pragma unroll
    for (int i = 0; i < Capacity; ++i)
      if (i < count && entries[i] == semaphore) return true;
    return false;
  }
  __device__ void insert(std::uint32_t semaphore) {
    entries[next] = semaphore;
    next = (next + 1) % Capacity;
    count = count < Capacity ? count + 1 : Capacity;
  }
  __device__ void clear() { count = next = 0; }
};

// waitThread, skipping semaphores this tile has already seen satisfied.
template <class Policy, int Capacity>
__device__ void waitThreadCached(const InputView<Policy>& input, SatisfiedSemaphoreCache<Capacity>& cache,
                                 TileCoord producerTile, std::uint32_t iteration, const StageView& consumer,
                                 TileCoord consumerTile) {
  if (!input.synchronized()) return;
  const std::uint32_t semaphore = Policy::sem(producerTile, input.producerGrid);
  if (cache.contains(semaphore)) return;
  input.waitThread(producerTile, iteration, consumer, consumerTile);
  cache.insert(semaphore);
}

// Programmatic dependent launch (sm_90): lets the next kernel on the stream, launched with programmatic stream
// serialization, start once every block of this grid has executed this (or exited). cusync triggers at block
// start so that a consumer block can only run once all producer blocks are resident: its spins then always wait
// for blocks that are running or done (progress).
__device__ __forceinline__ void triggerDependentLaunch() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The PDL grid-sync baseline's wait: the whole previous grid on the stream has completed and its writes are
// visible, when this grid was launched with programmatic stream serialization (sm_90 only; there is no
// programmatic launch below sm_90, so nothing to wait for).
__device__ __forceinline__ void waitForPriorGrids() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// After an acquire, makes producer data written through the generic proxy visible to TMA loads (async proxy).
__device__ __forceinline__ void fenceProxyAsyncGlobal() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
}

// Completes this thread's outstanding TMA (bulk async-group) stores: their global writes are performed, not just
// their shared-memory sources read. Required before posting a tile stored by TMA.
__device__ __forceinline__ void completeBulkStores() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

}  // namespace cusync
