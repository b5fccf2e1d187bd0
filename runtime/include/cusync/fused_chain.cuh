// The host side of a fused chain: the stages one persistent launch executes, the queue their units are drawn from
// (chain_queue.cuh), and the checks that make the queue's progress argument hold. Host code; include from a .cu
// file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cusync/chain_queue.cuh"
#include "cusync/error.h"
#include "cusync/stage.cuh"

namespace cusync {

// One stage of a fused chain and how its split-K parts are queued.
struct ChainStage {
  const Stage* stage;
  PartOrder partOrder = PartOrder::PartsOfATileTogether;
  bool queued = true;  // false: this launch runs none of the stage's units (a stream-ordered launch of one GEMM)
  // Drawn by clusters (FusedChain's clusterRows > 1): the order of the stage's cluster grid (device table of linear
  // cluster-tile ids by order index, owned by the caller; null = row-major).
  const std::uint32_t* clusterTileOfOrderIndex = nullptr;
};

class FusedChain {
 public:
  // `stages` in the chain's order: a stage may only wait for stages listed before it (the kernel's contract; the
  // queue then serves every producer unit before any unit that waits for it). `persistentBlocks`: the launch's
  // grid in drawers (blocks, or clusters of `clusterRows` blocks along M), each drawing units until it draws its
  // stop ticket.
  FusedChain(std::vector<ChainStage> stages, std::uint32_t persistentBlocks, std::uint32_t clusterRows = 1)
      : stages_(std::move(stages)), persistentBlocks_(persistentBlocks), clusterRows_(clusterRows) {
    if (clusterRows_ != 1 && clusterRows_ != 2)
      throw Error("cusync: a fused chain is drawn by single blocks or clusters of 2, not " +
                  std::to_string(clusterRows_));
    if (stages_.empty() || stages_.size() > std::size_t(kMaxChainStages))
      throw Error("cusync: a fused chain has 1 to " + std::to_string(kMaxChainStages) + " stages, not " +
                  std::to_string(stages_.size()));
    if (persistentBlocks_ == 0) throw Error("cusync: a fused chain needs at least one persistent block");
    for (const ChainStage& s : stages_) {
      if (s.stage == nullptr) throw Error("cusync: a fused chain stage is null");
      if (s.stage->view().hardwareOrder)
        throw Error("cusync: stage '" + s.stage->name() +
                    "' uses hardware order; a fused chain's units come from its queue, never from blockIdx");
      if (s.stage->view().staticUnits)
        throw Error("cusync: stage '" + s.stage->name() +
                    "' uses static units; a fused chain's units come from its queue, in ticket order");
    }
    CUSYNC_CUDA_CHECK(cudaMalloc(&counter_, sizeof(*counter_)));
    CUSYNC_CUDA_CHECK(cudaMemset(counter_, 0, sizeof(*counter_)));
  }
  FusedChain(const FusedChain&) = delete;
  FusedChain& operator=(const FusedChain&) = delete;
  ~FusedChain() { cudaFree(counter_); }

  ChainQueueView queue() const { return describeQueue(stages_, persistentBlocks_, counter_, clusterRows_); }
  std::vector<StageView> stageViews() const {
    std::vector<StageView> views;
    for (const ChainStage& s : stages_) views.push_back(s.stage->view());
    return views;
  }
  std::uint32_t persistentBlocks() const { return persistentBlocks_; }  // drawers: blocks, or clusters
  std::uint32_t clusterRows() const { return clusterRows_; }

  // The queue a launch draws from, without device state (host-testable): stage s's units take tickets
  // [firstTicket[s], firstTicket[s + 1]).
  static ChainQueueView describeQueue(const std::vector<ChainStage>& stages, std::uint32_t persistentBlocks,
                                      unsigned long long* counter, std::uint32_t clusterRows = 1) {
    ChainQueueView q;
    q.ticketCounter = counter;
    q.stageCount = std::uint32_t(stages.size());
    q.persistentBlocks = persistentBlocks;
    q.clusterRows = clusterRows;
    std::uint64_t next = 0;
    for (std::size_t s = 0; s < stages.size(); ++s) {
      q.firstTicket[s] = std::uint32_t(next);
      q.partOrder[s] = stages[s].partOrder;
      q.clusterTileOfOrderIndex[s] = stages[s].clusterTileOfOrderIndex;
      const StageView v = stages[s].stage->view();
      if (v.wholeTiles != 0)  // the queue's layout (chain_queue.h) splits every tile of a stage alike
        throw Error("cusync: stage '" + stages[s].stage->name() + "' of a fused chain has whole tiles");
      if (stages[s].queued) next += std::uint64_t(clusterGrid(v.grid, clusterRows).tileCount()) * v.blocksPerTile;
    }
    if (next + persistentBlocks > UINT32_MAX / 2)
      throw Error("cusync: a fused chain launch of " + std::to_string(next) +
                  " units is too large for its 32-bit queue indices");
    q.firstTicket[stages.size()] = std::uint32_t(next);
    return q;
  }

 private:
  std::vector<ChainStage> stages_;
  std::uint32_t persistentBlocks_;
  std::uint32_t clusterRows_;
  unsigned long long* counter_ = nullptr;
};

}  // namespace cusync
