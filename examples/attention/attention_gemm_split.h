// The split-K of the attention chain's hooked GEMMs: which splits are worth trying for a GEMM (splitCandidates) and
// the state a split stage needs (GemmSplit). Shared by the chain (attention_chain.h) and bench/attention/
// gemm_shape_probe, which times each GEMM alone with the splits the chain would try: a probe that compares tile
// shapes unsplit misjudges them (session 15: 96-column QKV tiles beat unsplit head-wide ones by 12-22% alone and
// gained nothing in the chains, where the head-wide GEMM splits its last wave). Host header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <cuda_runtime.h>

#include "attention_gemms.h"
#include "attention_problem.h"
#include "common/device_buffers.cuh"
#include "cusync/part_order.h"
#include "cusync/stage.cuh"

namespace cusync::examples::attention {

// The split-K choices worth trying for a GEMM of `gemm`'s tiles over an M x N output with K = `k`: in prompt
// processing those that shorten the last wave (every tile split: waveBalancingSplits; the last wave's tiles only:
// lastWaveSplits), in token generation (one row tile, few tiles, long K) as many parts as fill one wave and two
// (gemmSplitCandidates).
inline std::vector<SplitChoice> splitCandidates(const AttentionGemm& gemm, Phase phase, int m, int n, int k,
                                                int multiprocessors) {
  // A GEMM in clusters splits whole clusters (both blocks take the same k-range): the waves are counted in clusters.
  if (gemm.pingpong) return {SplitChoice{1, 0}};  // unsplit: a part that stores nothing would unpair the groups
  if (gemm.columnGroups > 1) {  // a whole-rows GEMV: its column groups, never a k-range split
    SplitChoice groups{gemm.columnGroups, 0};
    groups.columnGroups = true;
    return {groups};
  }
  const std::uint32_t rows = std::uint32_t(gemm.clusterRows);
  const std::uint32_t slots = std::uint32_t(multiprocessors) * std::uint32_t(gemm.maxActiveBlocksPerSm()) / rows;
  const std::uint32_t tiles = gemm.tileGrid(m, n).tileCount() / rows;
  const int kBlocks = k / gemm.tile.k;
  std::vector<SplitChoice> choices;
  for (std::uint32_t parts : phase == Phase::Prompt ? waveBalancingSplits(tiles, kBlocks, slots)
                                                    : gemmSplitCandidates(tiles, kBlocks, slots))
    choices.push_back({parts, 0});
  // The last wave's splits once more with the parts summed in L2: the last arrival's read then does not grow with
  // the parts (the 11-part split's last arrivals read 10 partials otherwise). The lean persistent kernel sums none.
  if (phase == Phase::Prompt)
    for (bool accumulate : {false, true})
      for (const SplitChoice& choice : lastWaveSplits(tiles, kBlocks, slots)) {
        if (accumulate && gemm.lean) continue;
        SplitChoice split{choice.parts, choice.wholeTiles * rows};
        split.accumulate = accumulate;
        choices.push_back(split);
      }
  // Stream-K runs on the persistent GEMM, whose blocks take several units (rows is 1 there: no clusters). The QKV
  // GEMM's chunks go in groups of row tiles: its weights exceed L2, and its order is free (it waits for nothing).
  if (phase == Phase::Prompt && gemm.persistent && !gemm.lean)  // the lean persistent kernel runs no stream-K
    for (const SplitChoice& choice :
         streamKSplits(tiles, kBlocks, slots, gemm.tileGrid(m, n).y, gemm.role == GemmRole::Qkv))
      choices.push_back(choice);
  return choices;
}

// The split-K state of a GEMM stage: fp32 partials and one zeroed arrival counter per tile.
struct GemmSplit {
  std::unique_ptr<DeviceBuffer<float>> partials;
  std::unique_ptr<DeviceBuffer<std::uint32_t>> arrivals;
  bool accumulate = false;
  GemmSplit(Stage& stage, const GemmTileShape& tile, SplitChoice split, PartOrder partOrder) {
    const std::uint32_t parts = split.parts;
    stage.setStreamK(0, 0);  // (the stage may have run stream-K before)
    stage.setBlocksPerTile(parts);
    // A tile's column groups back to back: the tile is posted when its last group arrives, so tiles complete in the
    // stage's order; every tile's first group first would post them all at the end.
    stage.setPartOrder(split.columnGroups ? PartOrder::PartsOfATileTogether : partOrder);
    stage.setWholeTiles(split.wholeTiles);
    // Groups of row tiles reduce the same k-blocks of consecutive tiles at once: with the rows of a column
    // consecutive (column-major order), those share their weight k-blocks in L2 (stream_k_split.h).
    if (split.isStreamK() && split.streamKGroups > 1) stage.setGroupedTileOrder(stage.grid().y);
    stage.setStreamK(split.streamKChunks, split.streamKBlocks, split.streamKGroups);
    // The slots the kernels index (StageView::partialSlotsPerTile), so that host and device agree.
    const std::uint32_t slots = stage.view().partialSlotsPerTile(parts);
    if (slots <= 1) return;
    arrivals = std::make_unique<DeviceBuffer<std::uint32_t>>(stage.grid().tileCount());
    CUSYNC_CUDA_CHECK(cudaMemset(arrivals->get(), 0, arrivals->bytes()));
    if (split.columnGroups) return;  // arrivals only: each group stores its own columns
    partials = std::make_unique<DeviceBuffer<float>>(std::size_t(stage.grid().tileCount()) * slots * tile.m * tile.n);
    // Summed parts start from zero; the last arrival zeroes its slot again for the next launch.
    accumulate = split.accumulate;
    if (accumulate) CUSYNC_CUDA_CHECK(cudaMemset(partials->get(), 0, partials->bytes()));
  }
  void applyTo(GemmLaunchArgs& args) const {
    args.splitPartials = partials ? partials->get() : nullptr;
    args.splitArrivals = arrivals ? arrivals->get() : nullptr;
    args.splitAccumulate = accumulate;
  }
};

}  // namespace cusync::examples::attention
