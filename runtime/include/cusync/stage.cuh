// The host side of a stage: owns its device state (tile counter, inverse tile order, output semaphores), checks
// how stages are paired, and hands kernels their views. Host code; include from a .cu file (it defines the
// wait-kernel).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "cusync/cluster_tile_order.h"
#include "cusync/error.h"
#include "cusync/grouped_order.h"
#include "cusync/output_policy.h"
#include "cusync/stage_view.cuh"
#include "cusync/typed_stage_view.cuh"

namespace cusync {

// How a consumer stage is kept from running ahead of its producers' blocks (docs/DESIGN.md, Progress).
enum class StageOrdering {
  StreamOrder,           // no tile synchronization: consumer after producer on one stream (the baseline)
  WaitKernel,            // separate streams; a one-thread kernel holds the consumer until all producer blocks run
  ProgrammaticLaunch,    // one stream, programmatic dependent launch; producer blocks trigger at their start (sm_90)
  NoOrdering,            // "avoid wait-kernel": legal only when both grids fit in the waves available
};

class Stage {
 public:
  Stage(std::string name, GridShape grid) : name_(std::move(name)), grid_(grid) {
    if (grid.tileCount() == 0) throw Error("cusync: stage '" + name_ + "' has an empty grid");
    CUSYNC_CUDA_CHECK(cudaMalloc(&counters_, kCounterCount * sizeof(*counters_)));
    CUSYNC_CUDA_CHECK(cudaMemset(counters_, 0, kCounterCount * sizeof(*counters_)));
  }
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;
  Stage(Stage&& other) noexcept { *this = std::move(other); }
  Stage& operator=(Stage&& other) noexcept {
    std::swap(name_, other.name_);
    std::swap(grid_, other.grid_);
    std::swap(counters_, other.counters_);
    std::swap(orderTable_, other.orderTable_);
    std::swap(semaphores_, other.semaphores_);
    std::swap(semaphoreCount_, other.semaphoreCount_);
    std::swap(outputPolicy_, other.outputPolicy_);
    std::swap(hardwareOrder_, other.hardwareOrder_);
    std::swap(blocksPerTile_, other.blocksPerTile_);
    std::swap(partOrder_, other.partOrder_);
    std::swap(wholeTiles_, other.wholeTiles_);
    std::swap(persistentBlocks_, other.persistentBlocks_);
    std::swap(clusterRows_, other.clusterRows_);
    std::swap(streamK_, other.streamK_);
    std::swap(streamKSlots_, other.streamKSlots_);
    std::swap(staticUnits_, other.staticUnits_);
    return *this;
  }
  ~Stage() {
    cudaFree(counters_);
    cudaFree(orderTable_);
    cudaFree(semaphores_);
  }

  const std::string& name() const { return name_; }
  GridShape grid() const { return grid_; }

  // Tabulates the inverse of `Order` (a bijection tile -> [0, tileCount)) so that the b-th ticket yields the tile
  // of order index b. Rejects an order that is not a bijection onto [0, tileCount).
  template <class Order>
  void setTileOrder() {
    std::vector<std::uint32_t> indexOfTile(grid_.tileCount());
    for (std::uint32_t linear = 0; linear < grid_.tileCount(); ++linear)
      indexOfTile[linear] = Order::index(tileAtLinear(linear, grid_), grid_);
    setTileOrder(indexOfTile);
  }
  void setTileOrder(const std::vector<std::uint32_t>& orderIndexOfLinearTile) {
    clusterRows_ = 1;
    writeOrderTable(orderIndexOfLinearTile);
  }

  // Rows of tiles taken `groupRows` at a time, column by column (grouped_order.h): 1 is row-major, the grid's rows
  // or more column-major. A wide GEMM's blocks in flight then share few columns of its weights (L2 reuse).
  void setGroupedTileOrder(std::uint32_t groupRows) {
    if (groupRows == 0) throw Error("cusync: stage '" + name_ + "': a row group holds at least one row");
    std::vector<std::uint32_t> indexOfTile(grid_.tileCount());
    for (std::uint32_t linear = 0; linear < grid_.tileCount(); ++linear)
      indexOfTile[linear] = groupedColumnMajorIndex(tileAtLinear(linear, grid_), grid_, groupRows);
    setTileOrder(indexOfTile);
  }

  // The order for a kernel launched in clusters of `rows` blocks along M (StageView::clusterRows,
  // cluster_tile_order.h): `Order` orders the clusters (void: row-major), and each cluster's tiles follow each other.
  template <class Order = void>
  void setClusterTileOrder(std::uint32_t rows) {
    setClusterTileOrderBy(rows, [](TileCoord cluster, GridShape clusters) {
      if constexpr (std::is_void_v<Order>) return linearIndex(cluster, clusters);
      else return Order::index(cluster, clusters);
    });
  }
  // The same with the clusters' order a callable (cluster tile, cluster grid) -> index.
  template <class ClusterOrderIndex>
  void setClusterTileOrderBy(std::uint32_t rows, ClusterOrderIndex clusterOrderIndex) {
    // Rejects an order that is not a bijection of the cluster grid.
    writeOrderTable(clusterTileOrder(grid_, rows, clusterOrderIndex));
    clusterRows_ = rows;
  }
  std::uint32_t clusterRows() const { return clusterRows_; }

 private:
  void writeOrderTable(const std::vector<std::uint32_t>& orderIndexOfLinearTile) {
    const std::uint32_t tiles = grid_.tileCount();
    if (orderIndexOfLinearTile.size() != tiles)
      throw Error("cusync: tile order of stage '" + name_ + "' has " + std::to_string(orderIndexOfLinearTile.size()) +
                  " entries for " + std::to_string(tiles) + " tiles");
    std::vector<std::uint32_t> tileOfOrderIndex(tiles, UINT32_MAX);
    for (std::uint32_t linear = 0; linear < tiles; ++linear) {
      const std::uint32_t index = orderIndexOfLinearTile[linear];
      if (index >= tiles || tileOfOrderIndex[index] != UINT32_MAX) {
        const TileCoord t = tileAtLinear(linear, grid_);
        throw Error("cusync: tile order of stage '" + name_ + "' is not a bijection onto [0, " +
                    std::to_string(tiles) + "): tile (" + std::to_string(t.x) + "," + std::to_string(t.y) + "," +
                    std::to_string(t.z) + ") maps to " + std::to_string(index) +
                    (index < tiles ? ", which another tile already has" : ", out of range"));
      }
      tileOfOrderIndex[index] = linear;
    }
    if (!orderTable_) CUSYNC_CUDA_CHECK(cudaMalloc(&orderTable_, tiles * sizeof(std::uint32_t)));
    CUSYNC_CUDA_CHECK(
        cudaMemcpy(orderTable_, tileOfOrderIndex.data(), tiles * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  }

 public:

  // Persistent kernels: each block takes a fixed sequence of units instead of a ticket per unit
  // (StageView::staticUnits). For kernels that support it (the persistent GEMMs); others refuse it.
  void useStaticUnits(bool enabled) { staticUnits_ = enabled; }

  // "Avoid custom order": each block computes the tile its own block index names.
  void useHardwareOrder(bool enabled) { hardwareOrder_ = enabled; }

  // Several blocks per tile (split-K): the tile counter then counts blocks, tileCount * blocksPerTile per launch.
  void setBlocksPerTile(std::uint32_t blocks) {
    if (blocks == 0) throw Error("cusync: stage '" + name_ + "' needs at least one block per tile");
    if (blocks != 1 && streamK_.chunks != 0)
      throw Error("cusync: stage '" + name_ + "' runs stream-K chunks, which cut its tiles themselves");
    blocksPerTile_ = blocks;
  }
  std::uint32_t blocksPerTile() const { return blocksPerTile_; }
  // Split only the tiles after the first `tiles` of the stage's order (StageView::wholeTiles; 0: split all).
  void setWholeTiles(std::uint32_t tiles) {
    if (tiles >= grid_.tileCount() && tiles != 0)
      throw Error("cusync: stage '" + name_ + "' has " + std::to_string(grid_.tileCount()) + " tiles, so " +
                  std::to_string(tiles) + " whole ones would leave none to split");
    if (streamK_.chunks != 0 && tiles != wholeTiles_)
      throw Error("cusync: stage '" + name_ + "': set its whole tiles before its stream-K chunks (they cut the rest)");
    wholeTiles_ = tiles;
  }
  std::uint32_t wholeTiles() const { return wholeTiles_; }
  // Stream-K (stream_k_split.h): the tiles after the stage's whole ones (setWholeTiles) cut into `chunks` work units
  // of equal k-block counts in `groups` groups, for a GEMM of `kBlocks` k-blocks per tile; 0 chunks: none. Only a
  // persistent kernel runs them (each chunk may span tiles), and every tile is then one block's (blocksPerTile 1).
  void setStreamK(std::uint32_t chunks, int kBlocks, std::uint32_t groups = 1) {
    if (chunks == 0) {
      streamK_ = StreamKRegion{};
      streamKSlots_ = 0;
      return;
    }
    if (blocksPerTile_ != 1)
      throw Error("cusync: stage '" + name_ + "' splits its tiles in " + std::to_string(blocksPerTile_) +
                  " parts already; stream-K cuts them itself (blocksPerTile must be 1)");
    const StreamKRegion region{grid_.tileCount() - wholeTiles_, chunks, kBlocks, groups};
    if (!region.valid())
      throw Error("cusync: stage '" + name_ + "': " + std::to_string(chunks) + " stream-K chunks in " +
                  std::to_string(groups) + " groups over " + std::to_string(region.tiles) + " tiles of " +
                  std::to_string(kBlocks) + " k-blocks: the groups must divide the tiles and the chunks, and no " +
                  "chunk may be left without k-blocks");
    streamK_ = region;
    streamKSlots_ = region.maxPartsOfATile();
  }
  std::uint32_t streamKChunks() const { return streamK_.chunks; }
  std::uint32_t streamKGroups() const { return streamK_.groups; }
  // How the split-K parts of the tiles follow each other among the work units (part_order.h).
  void setPartOrder(PartOrder order) { partOrder_ = order; }
  PartOrder partOrder() const { return partOrder_; }

  // A persistent kernel runs `blocks` blocks per launch, each taking work units until none is left (0: one block
  // per work unit). Must match the launch's grid: the tickets of a launch are counted with it.
  void setPersistentBlocks(std::uint32_t blocks) { persistentBlocks_ = blocks; }
  std::uint32_t persistentBlocks() const { return persistentBlocks_; }

  // Work units (tile parts) per launch, and the blocks a launch starts (more persistent blocks than units is
  // legal, if wasteful: the extra blocks stop at their first ticket).
  std::uint32_t workUnitsPerLaunch() const { return view().workUnits(); }  // as the device counts them
  std::uint32_t blocksPerLaunch() const { return persistentBlocks_ == 0 ? workUnitsPerLaunch() : persistentBlocks_; }
  // Tickets drawn from the tile counter per launch (see StageView::persistentBlocks): StageView's count, the one
  // acquireWorkUnit divides by, so the host (wait-kernel targets) and the device agree.
  std::uint32_t ticketsPerLaunch() const { return view().ticketsPerLaunch(); }
  std::uint32_t ticketsOnceEveryUnitIsTaken() const { return view().ticketsOnceEveryUnitIsTaken(); }

  // Declares that this stage posts its tiles under `Policy` (allocates and zeroes its semaphores).
  template <class Policy>
  void setOutputPolicy() {
    const std::uint32_t count = Policy::semaphoreCount(grid_);
    cudaFree(semaphores_);
    semaphores_ = nullptr;
    CUSYNC_CUDA_CHECK(cudaMalloc(&semaphores_, count * sizeof(std::uint32_t)));
    CUSYNC_CUDA_CHECK(cudaMemset(semaphores_, 0, count * sizeof(std::uint32_t)));
    semaphoreCount_ = count;
    outputPolicy_ = OutputPolicyTag::of<Policy>();
  }

  // Zeroes counters and semaphores (needed only after a launch was abandoned mid-way; iterations need no reset).
  void reset(cudaStream_t stream = nullptr) {
    CUSYNC_CUDA_CHECK(cudaMemsetAsync(counters_, 0, kCounterCount * sizeof(*counters_), stream));
    if (semaphores_)
      CUSYNC_CUDA_CHECK(cudaMemsetAsync(semaphores_, 0, semaphoreCount_ * sizeof(std::uint32_t), stream));
  }

  // The view for a kernel that posts through it under `Policy`, which must be the policy this stage was given in
  // setOutputPolicy: the kernel then never names the policy again, and a kernel that would post under another
  // policy than consumers wait for is refused here.
  template <class Policy>
  TypedStageView<Policy> view() const {
    if (const auto why = whyViewPolicyDiffers<Policy>(name_, outputPolicy_)) throw Error(*why);
    return TypedStageView<Policy>{view()};
  }

  // The untyped view: for a stage nobody waits on, and for warp-specialized kernels that post from one thread
  // (postThread<Policy>, which the host cannot check).
  StageView view() const {
    StageView v;
    v.grid = grid_;
    v.tileCounter = counters_ + kTileCounter;
    v.tileOfOrderIndex = orderTable_;
    v.semaphores = semaphores_;
    v.hardwareOrder = hardwareOrder_;
    v.blocksPerTile = blocksPerTile_;
    v.partOrder = partOrder_;
    v.wholeTiles = wholeTiles_;
    v.persistentBlocks = persistentBlocks_;
    v.clusterRows = clusterRows_;
    v.streamKChunks = streamK_.chunks;
    v.streamKBlocks = streamK_.kBlocks;
    v.streamKGroups = streamK_.groups;
    v.streamKSlots = streamKSlots_;
    v.staticUnits = staticUnits_;
    std::strncpy(v.name, name_.c_str(), kStageNameCapacity - 1);
    return v;
  }

  // The view a consumer uses to wait on this (producer) stage under `Policy`. The producer must post under the
  // same policy, or consumer targets would not match what producers add: that pairing error is reported here.
  template <class Policy>
  InputView<Policy> inputFor(const Stage& consumer) const {
    if (const auto why = whyInputPolicyDiffers<Policy>(consumer.name_, name_, outputPolicy_)) throw Error(*why);
    return InputView<Policy>{semaphores_, grid_};
  }

  const unsigned long long* tileCounter() const { return counters_ + kTileCounter; }

 private:
  static constexpr int kTileCounter = 0;
  static constexpr int kCounterCount = 1;

  std::string name_;
  GridShape grid_;
  // 64-bit: a launch takes ticketsPerLaunch() tickets, and a 32-bit counter would wrap after 2^32 / that many
  // launches (about a million for a 4096-tile stage), misplacing every work unit after the wrap.
  unsigned long long* counters_ = nullptr;
  std::uint32_t* orderTable_ = nullptr;
  std::uint32_t* semaphores_ = nullptr;
  std::uint32_t semaphoreCount_ = 0;
  OutputPolicyTag outputPolicy_;
  bool hardwareOrder_ = false;
  std::uint32_t blocksPerTile_ = 1;
  PartOrder partOrder_ = PartOrder::PartsOfATileTogether;
  std::uint32_t wholeTiles_ = 0;
  std::uint32_t persistentBlocks_ = 0;
  std::uint32_t clusterRows_ = 1;
  StreamKRegion streamK_;  // its chunks and k-blocks (its tiles follow from the grid and wholeTiles_)
  std::uint32_t streamKSlots_ = 0;
  bool staticUnits_ = false;
};

}  // namespace cusync
