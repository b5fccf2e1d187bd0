// The shape of one attention-block run: model, phase, batch, new tokens per sequence and cached tokens, and the
// decisions that follow from it alone (what a malformed combination is, how many parts token generation splits a
// head's keys into). Host header, no CUDA.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "attention_policies.h"
#include "cusync/grouped_order.h"
#include "cusync/tile.h"

namespace cusync::examples::attention {

struct ModelShape {
  Model model;
  const char* name;
  int hidden;  // H
  int heads;   // heads per GPU: H / (8 * 128) under 8-way tensor parallelism
};
inline constexpr ModelShape kGpt3{Model::Gpt3, "gpt3", 12288, 12};
inline constexpr ModelShape kLlama{Model::Llama, "llama", 8192, 8};

struct AttentionProblem {
  ModelShape shape = kGpt3;
  Phase phase = Phase::Decode;
  int batch = 1;     // B
  int sequence = 1;  // S: new tokens per sequence (1 in token generation)
  int cached = 0;    // S': tokens already in the caches (0 in prompt processing)

  int tokens() const { return batch * sequence; }                 // rows of X, QKV, T and Y
  int cacheCapacity() const { return cached + sequence; }        // positions per (sequence, head) in the caches
  int qkvColumns() const { return 3 * shape.heads * 128; }        // 3H/8
  int tColumns() const { return shape.heads * 128; }              // H/8
  const char* phaseName() const { return phase == Phase::Decode ? "decode" : "prompt"; }
};

// Why `p` cannot run, or nullopt: what the kernels cannot run, or a shape no proof covers. Token generation: S = 1,
// S' >= 1, B <= 64 (one GEMM row tile, the range attention_decode.dep is proven for). Prompt processing: S' = 0,
// S one of the sequence lengths attention_prompt.dep has a dependency for (kProvenPromptSequences; each a multiple
// of 128, the attention stage's query tile and the GEMMs' row tile), B*S <= 4096 (the spec's Rows <= 32).
inline std::optional<std::string> whyNotRunnable(const AttentionProblem& p) {
  if (p.phase == Phase::Decode) {
    if (p.sequence != 1) return "token generation (--phase decode) takes one new token per sequence: --seq 1";
    if (p.cached < 1 || p.cached > 65535) return "--cache: token generation needs 1 to 65535 cached tokens";
    if (p.batch > 64) return "--batch: token generation runs at most 64 sequences (one 64-row GEMM tile)";
  } else {
    if (p.cached != 0) return "prompt processing (--phase prompt) starts with an empty cache: --cache 0";
    const bool proven = std::find(std::begin(kProvenPromptSequences), std::end(kProvenPromptSequences),
                                  std::int64_t(p.sequence)) != std::end(kProvenPromptSequences);
    if (!proven) {
      std::string lengths;
      for (std::int64_t s : kProvenPromptSequences) lengths += (lengths.empty() ? "" : ", ") + std::to_string(s);
      return "--seq: attention_prompt.dep proves the prompt dependency only for S = " + lengths + " tokens per " +
             "sequence, not " + std::to_string(p.sequence);
    }
    if (p.tokens() > 4096) return "--batch x --seq: prompt processing runs at most 4096 tokens (the proven range)";
  }
  return std::nullopt;
}

// Token generation: parts a head's S'+1 keys are split into, each a block of the attention stage. Enough blocks
// for `blocksPerSm` per SM (each block keeps a few keys' loads in flight, so more blocks stream the cache faster:
// 8 instead of 2 took GPT-3's stage at B = 4, S' = 2048 from 27.6 to 24.7 us on the H100, docs/BENCHMARKS.md session
// 12), at least 64 keys per part (fewer only re-read q), at most kMaxKeysPerPart keys per part (its scores live in
// shared memory).
inline constexpr std::uint32_t kDecodeBlocksPerSm = 8;
// The output GEMM's tile order: rows of tiles taken this many at a time, column by column (grouped_order.h); 1 is
// row-major. Measured in the chains on the H100 (docs/BENCHMARKS.md, issue 14, session 14 call 1): column-major (16
// covers every prompt shape's rows up to 2048 tokens) took GPT-3's synchronized chains 2-11% faster (its output
// GEMM has 96 column tiles of 128: row-major streams the whole weight for each row of tiles), and LLaMA's 1-8%
// slower (64 column tiles; K = 1024). A one-row grid (token generation) is row-major either way.
inline constexpr std::uint32_t defaultOutputGroupRows(Model model) { return model == Model::Gpt3 ? 16 : 1; }
inline std::uint32_t decodeParts(const AttentionProblem& p, int multiprocessors, std::uint32_t maxKeysPerPart,
                                 std::uint32_t blocksPerSm = kDecodeBlocksPerSm) {
  const std::uint32_t keys = std::uint32_t(p.cached) + 1;
  const std::uint32_t tiles = std::uint32_t(p.batch) * std::uint32_t(p.shape.heads);
  const std::uint32_t wanted = (blocksPerSm * std::uint32_t(multiprocessors) + tiles - 1) / tiles;
  const std::uint32_t fewest = (keys + maxKeysPerPart - 1) / maxKeysPerPart;
  const std::uint32_t most = std::max(1u, (keys + 63) / 64);
  return std::max(fewest, std::min(wanted, most));
}

// Split-K parts of a GEMM of `tiles` tiles and `kBlocks` k-blocks over `slots` block slots: as many as still fit
// in one wave, keeping at least 4 k-blocks per part.
inline std::uint32_t gemmSplitParts(std::uint32_t tiles, int kBlocks, std::uint32_t slots) {
  return std::max(1u, std::min(slots / std::max(tiles, 1u), std::uint32_t(std::max(kBlocks / 4, 1))));
}

// The split-K parts worth timing: those filling one wave (gemmSplitParts) and two (more parts stream more of the
// weights at once, at the price of a second wave and more partials), distinct, fewest first.
inline std::vector<std::uint32_t> gemmSplitCandidates(std::uint32_t tiles, int kBlocks, std::uint32_t slots) {
  if (slots == 0) return {};  // the kernel does not fit on this device
  const std::uint32_t oneWave = gemmSplitParts(tiles, kBlocks, slots);
  const std::uint32_t twoWaves = gemmSplitParts(tiles, kBlocks, 2 * slots);
  return twoWaves == oneWave ? std::vector<std::uint32_t>{oneWave} : std::vector<std::uint32_t>{oneWave, twoWaves};
}

// Prompt processing: a GEMM of several waves' worth of tiles loses the idle slots of its last wave, e.g. GPT-3's
// QKV GEMM at 512 tokens has 144 tiles of 128 x 128 on 132 SMs, so two rounds for 1.09 waves of work. Cutting each
// tile into P split-K parts makes the rounds P times shorter: ceil(tiles * P / slots) / P tile-times (2, 1.5,
// 1.33, 1.25 for P = 1..4 there). The candidates are the parts that shorten that estimate by at least 5% over
// every fewer number of parts, up to kMaxBalancingParts and keeping kMinKBlocksPerBalancingPart k-blocks a part;
// which one wins depends on what the estimate leaves out (the last arrival reads P - 1 partials), so each is timed.
inline constexpr std::uint32_t kMaxBalancingParts = 8;
inline constexpr int kMinKBlocksPerBalancingPart = 8;
inline double splitWaveTime(std::uint32_t tiles, std::uint32_t parts, std::uint32_t slots) {
  const std::uint32_t units = tiles * parts;
  return double((units + slots - 1) / slots) / double(parts);
}
inline std::vector<std::uint32_t> waveBalancingSplits(std::uint32_t tiles, int kBlocks, std::uint32_t slots) {
  if (slots == 0) return {};  // the kernel does not fit on this device
  std::vector<std::uint32_t> parts{1};
  double best = splitWaveTime(tiles, 1, slots);
  for (std::uint32_t p = 2; p <= kMaxBalancingParts && kBlocks / int(p) >= kMinKBlocksPerBalancingPart; ++p) {
    const double time = splitWaveTime(tiles, p, slots);
    if (time <= 0.95 * best) {
      parts.push_back(p);
      best = time;
    }
  }
  return parts;
}

// The QKV GEMM's tile order over its grid (3 * heads column tiles: Q of every head, then K, then V; x fastest):
// the three tiles of one head in one row tile, which share a StridedSync semaphore, back to back (Q, K, V), and
// those (head, row) groups taken `groupRows` rows at a time, head by head (grouped_order.h). groupRows 1 is the
// spec's order (attention_prompt.dep's Order_qkv*_GroupedBy_StridedSync, row by row; attention_problem_test checks
// they are equal), more keeps fewer heads' weight columns in flight (L2 reuse; the hooked QKV GEMM alone was
// 7-18% faster column-major at GPT-3's 2048 tokens, docs/BENCHMARKS.md session 13 call 7). The QKV stage waits for
// nothing, so any order is free of deadlock; the order decides which head tiles the attention stage can start
// first.
inline std::uint32_t qkvGroupedIndex(TileCoord tile, GridShape grid, std::uint32_t groupRows) {
  const std::uint32_t heads = grid.x / 3;
  const TileCoord headTile{tile.x % heads, tile.y, tile.z};
  return groupedColumnMajorIndex(headTile, GridShape{heads, grid.y, grid.z}, groupRows) * 3 + tile.x / heads;
}

// Prompt processing: the kernel of the attention stage. CutlassFmha: CUTLASS's Hopper flash attention (TMA loads,
// wgmma, warp-specialized; attention_fmha_kernel.cuh), built where the nvidia-cutlass package ships it. FlashMma:
// this example's mma.sync flash attention (attention_kernels.cuh). On the H100 at GPT-3's 2048 tokens CUTLASS's
// kernel alone ran at 237 TFLOP/s and the mma.sync one at about 110 (docs/BENCHMARKS.md, issue 14, session 14).
enum class PromptAttentionKernel { FlashMma, CutlassFmha };
inline const char* promptAttentionKernelName(PromptAttentionKernel kernel) {
  return kernel == PromptAttentionKernel::CutlassFmha ? "cutlass-fmha" : "mma";
}

// Prompt processing: blocks per attention tile of 128 queries when the command line leaves it to the example. Two
// blocks of 64 queries where the tiles fill at most half the SMs (GPT-3 at 512 tokens: 48 tiles), else one of 128.
// Measured on the H100 (docs/BENCHMARKS.md, session 7 calls 5 and 9): two blocks made the attention stage 27-44%
// faster at 32-64 tiles, and the 8-warp block was the faster one from 96 tiles up.
inline std::uint32_t promptAttentionBlocks(std::uint32_t tiles, int multiprocessors) {
  return 2 * tiles <= std::uint32_t(multiprocessors) ? 2u : 1u;
}

// A GEMM's split-K choice: `parts` per split tile, and the tiles of the stage's order left whole before them (0:
// every tile split; StageView::wholeTiles). Or stream-K (persistent GEMMs): the tiles after the whole ones cut into
// `streamKChunks` units of equal k-block counts in `streamKGroups` groups, for tiles of `streamKBlocks` k-blocks
// (Stage::setStreamK; groups of more than one need the stage's tiles in column-major order, which GemmSplit sets).
struct SplitChoice {
  std::uint32_t parts = 1;
  std::uint32_t wholeTiles = 0;
  std::uint32_t streamKChunks = 0;
  int streamKBlocks = 0;
  std::uint32_t streamKGroups = 1;
  // The parts add into one slot in L2 and the last reads the sum (SplitKBuffers::accumulate): a read that does
  // not grow with the parts, and a result that is not bitwise reproducible.
  bool accumulate = false;
  // The parts are a tile's column groups, each over the whole of K, not k-ranges (a whole-rows GEMV stage,
  // AttentionGemm::columnGroups): no partials, only the tile's arrival counter.
  bool columnGroups = false;
  bool isStreamK() const { return streamKChunks != 0; }
  bool operator==(const SplitChoice& o) const {
    return parts == o.parts && wholeTiles == o.wholeTiles && streamKChunks == o.streamKChunks &&
           streamKBlocks == o.streamKBlocks && streamKGroups == o.streamKGroups && accumulate == o.accumulate &&
           columnGroups == o.columnGroups;
  }
};

// The kind of a split choice, as attention_example's --split-kinds names it.
inline const char* splitKindName(const SplitChoice& split) {
  if (split.isStreamK()) return "stream-k";
  if (split.parts <= 1 || split.columnGroups) return "unsplit";  // column groups split no k-range
  if (split.accumulate) return split.wholeTiles != 0 ? "last-wave-sum" : "every-tile-sum";
  return split.wholeTiles != 0 ? "last-wave" : "every-tile";
}

// Prompt processing with a persistent GEMM of `slots` blocks: stream-K with one chunk per block over the last
// partial wave and one full wave before it (Stream-K's "data-parallel + one stream-K wave" hybrid: every chunk then
// holds one to two tiles' k-blocks, so a tile has at most two parts and its last arrival adds one partial), or over
// every tile when they are fewer than the blocks (a tile then has up to three parts). GPT-3's QKV GEMM at 512 tokens:
// 144 tiles, each block 1.09 tiles of k-blocks, against 132 whole tiles and 12 in 11 parts (lastWaveSplits). None
// where the tiles fill whole waves, or where a chunk would get less than kMinKBlocksPerStreamKChunk k-blocks.
// `groupRows`: deal the region to groups of row tiles (stream_k_split.h) of up to 8 rows, the most that divides the
// grid's `rows`, the chunks, the whole tiles and the region's tiles, so that the row tiles of one weight column
// reduce the same k-blocks at once (in column-major order). For a GEMM whose weight L2 cannot hold (GPT-3's QKV:
// 113 MB) and whose order is free (the QKV stage waits for nothing).
inline constexpr int kMinKBlocksPerStreamKChunk = 4;
inline std::vector<SplitChoice> streamKSplits(std::uint32_t tiles, int kBlocks, std::uint32_t slots,
                                              std::uint32_t rows, bool groupRows) {
  if (slots == 0 || tiles % slots == 0) return {};
  const std::uint32_t waves = tiles / slots;
  const std::uint32_t whole = waves == 0 ? 0 : (waves - 1) * slots;
  if (std::uint64_t(tiles - whole) * std::uint64_t(kBlocks) < std::uint64_t(slots) * kMinKBlocksPerStreamKChunk)
    return {};
  SplitChoice choice;
  choice.wholeTiles = whole;
  choice.streamKChunks = slots;
  choice.streamKBlocks = kBlocks;
  if (groupRows)
    for (std::uint32_t groups : {8u, 4u, 2u})
      if (rows % groups == 0 && slots % groups == 0 && whole % groups == 0 && (tiles - whole) % groups == 0) {
        choice.streamKGroups = groups;
        break;
      }
  return {choice};
}

// Prompt processing, several waves of tiles with a partial last one: run the full waves' tiles whole and split
// only the last wave's R tiles, into as many parts as the slots hold (at most kMaxLastWaveParts, keeping
// kMinKBlocksPerBalancingPart k-blocks a part), and into half as many (fewer partials for the last arrival to
// read). GPT-3's QKV GEMM at 512 tokens: 132 whole tiles, then 12 in 11 parts, 1.09 tile-times instead of 2.
// None where the tiles fill whole waves or less than one.
inline constexpr std::uint32_t kMaxLastWaveParts = 16;
inline std::vector<SplitChoice> lastWaveSplits(std::uint32_t tiles, int kBlocks, std::uint32_t slots) {
  if (slots == 0 || tiles <= slots || tiles % slots == 0) return {};
  const std::uint32_t last = tiles % slots;
  const std::uint32_t fit = std::min({slots / last, kMaxLastWaveParts,
                                      std::uint32_t(std::max(kBlocks / kMinKBlocksPerBalancingPart, 1))});
  std::vector<SplitChoice> choices;
  for (std::uint32_t parts : {fit, fit / 2})
    if (parts >= 2 && (choices.empty() || choices.back().parts != parts)) choices.push_back({parts, tiles - last});
  return choices;
}

// Prompt processing: the order in which the attention stage takes its head tiles (grid: heads x query-row tiles of
// `queriesPerTile` rows, B sequences of S tokens one after another). Causal attention makes a tile's work grow
// with its position in the sequence (the tile at position p reads p + queriesPerTile keys), so in row order the
// longest tiles start last, in the last wave, and set the stage's end; longest first (largest position first,
// then sequence, then head) starts them in the first wave, as longest-processing-time scheduling does. Returns
// the order index of each tile by row-major linear index (Stage::setTileOrder).
enum class AttentionOrder { Rows, LongestFirst };
inline std::vector<std::uint32_t> promptAttentionOrder(AttentionOrder order, std::uint32_t heads, std::uint32_t rows,
                                                       std::uint32_t rowsPerSequence) {
  std::vector<std::uint32_t> linearOfIndex(std::size_t(heads) * rows);
  for (std::uint32_t i = 0; i < linearOfIndex.size(); ++i) linearOfIndex[i] = i;
  if (order == AttentionOrder::LongestFirst) {
    auto key = [&](std::uint32_t linear) {  // (position descending, sequence, head)
      const std::uint32_t row = linear / heads, head = linear % heads;
      return std::make_tuple(rowsPerSequence - 1 - row % rowsPerSequence, row / rowsPerSequence, head);
    };
    std::sort(linearOfIndex.begin(), linearOfIndex.end(),
              [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  }
  std::vector<std::uint32_t> indexOfLinear(linearOfIndex.size());
  for (std::uint32_t i = 0; i < linearOfIndex.size(); ++i) indexOfLinear[linearOfIndex[i]] = i;
  return indexOfLinear;
}

}  // namespace cusync::examples::attention
