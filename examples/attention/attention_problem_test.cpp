// Host tests of what attention_example decides on the CPU before any GPU work: which shapes it refuses, how token
// generation splits a head's keys, the GEMMs' split-K, the properties of the generated StridedSync policies the
// attention kernels rely on (the Q, K and V tiles of one head in one row tile share a semaphore, posted three times),
// which QKV tiles hold a head (qkv_head_tiles.h) for head-wide and narrow tiles, and the decode attention form chosen
// per shape (decode_attention_form.h).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "attention_policies.h"
#include "attention_problem.h"
#include "decode_attention_form.h"
#include "qkv_head_tiles.h"

using namespace cusync;
using namespace cusync::examples::attention;

namespace {

AttentionProblem decode(ModelShape shape, int batch, int cached) { return {shape, Phase::Decode, batch, 1, cached}; }
AttentionProblem prompt(ModelShape shape, int batch, int sequence) {
  return {shape, Phase::Prompt, batch, sequence, 0};
}

// Every head's Q, K and V tiles of a row share one semaphore of the QKV grid, which three tiles post to; heads and
// rows have semaphores of their own.
template <class Policy>
void checkStrided(std::uint32_t heads, std::uint32_t rows) {
  const GridShape grid{3 * heads, rows, 1};
  std::set<std::uint32_t> semaphores;
  for (std::uint32_t y = 0; y < rows; ++y)
    for (std::uint32_t head = 0; head < heads; ++head) {
      const std::uint32_t q = Policy::sem(TileCoord{head, y, 0}, grid);
      CHECK(Policy::sem(TileCoord{head + heads, y, 0}, grid) == q);
      CHECK(Policy::sem(TileCoord{head + 2 * heads, y, 0}, grid) == q);
      for (std::uint32_t part = 0; part < 3; ++part)
        CHECK(Policy::value(TileCoord{head + part * heads, y, 0}, grid) == 3);
      CHECK(q < Policy::semaphoreCount(grid));
      semaphores.insert(q);
    }
  CHECK(semaphores.size() == std::size_t(heads) * rows);
}

}  // namespace

TEST_CASE("attention_example refuses the shapes its kernels cannot run", "[attention]") {
  CHECK_FALSE(whyNotRunnable(decode(kGpt3, 1, 1024)));
  CHECK_FALSE(whyNotRunnable(decode(kLlama, 64, 1)));
  CHECK(whyNotRunnable(decode(kGpt3, 65, 1024)));
  CHECK(whyNotRunnable(decode(kGpt3, 1, 0)));
  CHECK(whyNotRunnable(AttentionProblem{kGpt3, Phase::Decode, 1, 2, 1024}));
  CHECK_FALSE(whyNotRunnable(prompt(kGpt3, 4, 512)));
  CHECK_FALSE(whyNotRunnable(prompt(kLlama, 1, 2048)));
  CHECK_FALSE(whyNotRunnable(prompt(kGpt3, 2, 1024)));
  CHECK_FALSE(whyNotRunnable(prompt(kGpt3, 2, 2048)));
  CHECK(whyNotRunnable(prompt(kGpt3, 1, 500)));
  CHECK(whyNotRunnable(prompt(kGpt3, 16, 512)));
  CHECK(whyNotRunnable(prompt(kGpt3, 4, 2048)));
  CHECK(whyNotRunnable(AttentionProblem{kGpt3, Phase::Prompt, 1, 512, 3}));
}

TEST_CASE("prompt processing refuses a sequence length attention_prompt.dep has no dependency for", "[attention]") {
  for (int sequence : {128, 256, 384, 640, 768, 1536, 4096}) {
    const auto why = whyNotRunnable(prompt(kGpt3, 1, sequence));
    REQUIRE(why);
    CHECK(why->find("S = 512, 1024, 2048") != std::string::npos);
  }
}

TEST_CASE("token generation splits a head's keys into parts of at most 512 keys, about eight blocks per SM",
          "[attention]") {
  for (ModelShape shape : {kGpt3, kLlama})
    for (int batch : {1, 2, 4, 64})
      for (int cached : {1, 63, 64, 512, 1024, 2048, 65535}) {
        const AttentionProblem p = decode(shape, batch, cached);
        const std::uint32_t parts = decodeParts(p, 132, 512);
        const std::uint32_t keys = std::uint32_t(cached) + 1;
        INFO(shape.name << " B=" << batch << " S'=" << cached << ": " << parts << " parts");
        REQUIRE(parts >= 1);
        CHECK((keys + parts - 1) / parts <= 512);  // a part's scores fit its shared memory
        if (keys <= 512 * parts && parts > 1) CHECK((keys + parts - 2) / (parts - 1) >= 64);  // not split finer
      }
  // GPT-3, B = 1, S' = 1024: 12 heads want 22 parts for two blocks per SM; 64 keys per part at least gives 17.
  CHECK(decodeParts(decode(kGpt3, 1, 1024), 132, 512, 2) == 17);
  CHECK(decodeParts(decode(kGpt3, 4, 2048), 132, 512, 2) == 6);
  // The default, eight blocks per SM, splits finer (8 x 132 / 48 tiles), still at least 64 keys a part (17 parts of
  // 1025 keys).
  CHECK(decodeParts(decode(kGpt3, 4, 2048), 132, 512) == 22);
  CHECK(decodeParts(decode(kGpt3, 1, 1024), 132, 512) == 17);
}

TEST_CASE("the automatic decode attention form is one-pass exactly where each part's keys take one step",
          "[attention]") {
  // The parts the one-pass form gets at 5 blocks per SM on 132 SMs (its occupancy at 96 registers): one step of 64
  // keys at B = 1, at GPT-3 B = 4 only at S' = 512 (1024: 14 parts of 74 keys), at LLaMA B = 4 up to S' = 1024
  // (2048: 21 parts of 98); the shapes of two or more steps are those where session 34 measured it slower than the
  // two-pass form.
  auto automatic = [](ModelShape shape, int batch, int cached) {
    const AttentionProblem p = decode(shape, batch, cached);
    return decodeUsesOnePass(DecodeAttentionForm::Automatic, std::uint32_t(cached) + 1, decodeParts(p, 132, 512, 5));
  };
  for (int cached : {512, 1024, 2048}) {
    CHECK(automatic(kGpt3, 1, cached));
    CHECK(automatic(kLlama, 1, cached));
  }
  CHECK(automatic(kGpt3, 4, 512));
  CHECK_FALSE(automatic(kGpt3, 4, 1024));
  CHECK_FALSE(automatic(kGpt3, 4, 2048));
  CHECK(automatic(kLlama, 4, 512));
  CHECK(automatic(kLlama, 4, 1024));
  CHECK_FALSE(automatic(kLlama, 4, 2048));
  // The boundary: 64 keys a part is one step, 65 two.
  CHECK(decodeUsesOnePass(DecodeAttentionForm::Automatic, 640, 10));
  CHECK_FALSE(decodeUsesOnePass(DecodeAttentionForm::Automatic, 641, 10));
  // The explicit forms whatever the shape.
  CHECK(decodeUsesOnePass(DecodeAttentionForm::OnePass, 100000, 1));
  CHECK_FALSE(decodeUsesOnePass(DecodeAttentionForm::TwoPass, 1, 1));

  DecodeAttentionForm form = DecodeAttentionForm::TwoPass;
  CHECK(parseDecodeAttentionForm("auto", form));
  CHECK(form == DecodeAttentionForm::Automatic);
  CHECK(parseDecodeAttentionForm("one-pass", form));
  CHECK(form == DecodeAttentionForm::OnePass);
  CHECK_FALSE(parseDecodeAttentionForm("onepass", form));
  CHECK(form == DecodeAttentionForm::OnePass);  // untouched
}

TEST_CASE("split-K parts fit one wave and keep four k-blocks each", "[attention]") {
  CHECK(gemmSplitParts(36, 96, 132) == 3);  // GPT-3 QKV at B <= 64: 36 tiles of 64 x 128, K = 12288
  CHECK(gemmSplitParts(96, 12, 132) == 1);  // GPT-3 output: 96 tiles, K = 1536
  CHECK(gemmSplitParts(64, 8, 132) == 2);   // LLaMA output: 64 tiles, K = 1024
  CHECK(gemmSplitParts(200, 96, 132) == 1);
}

TEST_CASE("split-K candidates fill one wave and two, distinct, and none where the kernel does not fit",
          "[attention]") {
  CHECK(gemmSplitCandidates(36, 96, 132) == std::vector<std::uint32_t>{3, 7});  // GPT-3 QKV, 64 x 128 x 128
  CHECK(gemmSplitCandidates(96, 12, 132) == std::vector<std::uint32_t>{1, 2});  // GPT-3 output
  CHECK(gemmSplitCandidates(64, 8, 132) == std::vector<std::uint32_t>{2});      // LLaMA output: 4 k-blocks a part
  CHECK(gemmSplitCandidates(36, 96, 0).empty());
}

TEST_CASE("a whole-rows GEMV's column groups are no split-K: their kind is unsplit and they equal no k-range split",
          "[attention]") {
  SplitChoice groups{16, 0};
  groups.columnGroups = true;
  const SplitChoice kRanges{16, 0};
  CHECK(std::string(splitKindName(groups)) == "unsplit");
  CHECK(std::string(splitKindName(kRanges)) == "every-tile");
  CHECK_FALSE(groups == kRanges);
  CHECK(groups == groups);
}

TEST_CASE("prompt split-K candidates are the parts that shorten the last wave by 5% or more", "[attention]") {
  CHECK(splitWaveTime(144, 1, 132) == 2.0);
  CHECK(splitWaveTime(144, 4, 132) == 1.25);
  // GPT-3 QKV at 512 tokens, 144 tiles of 128 x 128, K = 12288: 2, 1.5, 1.33, 1.25, (1.2: 4%), 1.17, (1.14), (1.125)
  CHECK(waveBalancingSplits(144, 192, 132) == std::vector<std::uint32_t>{1, 2, 3, 4, 6});
  // LLaMA QKV at 512 tokens, 96 tiles (0.73 waves): only four parts (0.75) beat one; eight (0.75) ties it.
  CHECK(waveBalancingSplits(96, 128, 132) == std::vector<std::uint32_t>{1, 4});
  // A whole number of waves gains nothing from splitting.
  CHECK(waveBalancingSplits(264, 192, 132) == std::vector<std::uint32_t>{1});
  // GPT-3 output at 512 tokens, 192 tiles of 256 x 128 and 24 k-blocks: at most three parts of eight k-blocks.
  CHECK(waveBalancingSplits(192, 24, 132) == std::vector<std::uint32_t>{1, 2});
  CHECK(waveBalancingSplits(144, 192, 0).empty());
}

TEST_CASE("last-wave splits keep the full waves whole and split the rest to fill the slots", "[attention]") {
  // GPT-3 QKV at 512 tokens: 144 tiles of 128 x 128 on 132 slots, 192 k-blocks: 12 tiles left, 11 parts each.
  CHECK(lastWaveSplits(144, 192, 132) == std::vector<SplitChoice>{{11, 132}, {5, 132}});
  // 1024 tokens: 288 tiles, 24 left after two waves: 5 parts (120 units), and 2.
  CHECK(lastWaveSplits(288, 192, 132) == std::vector<SplitChoice>{{5, 264}, {2, 264}});
  // 2048 tokens: 48 left: two parts; half of that is no split.
  CHECK(lastWaveSplits(576, 192, 132) == std::vector<SplitChoice>{{2, 528}});
  // Few k-blocks cap the parts: 24 k-blocks keep at most 3 parts of 8.
  CHECK(lastWaveSplits(144, 24, 132) == std::vector<SplitChoice>{{3, 132}});
  // Nothing to gain: one wave or less, whole waves, no slots.
  CHECK(lastWaveSplits(96, 128, 132).empty());
  CHECK(lastWaveSplits(264, 192, 132).empty());
  CHECK(lastWaveSplits(144, 192, 0).empty());
  // A last wave of more than half the slots cannot be split in two: nothing.
  CHECK(lastWaveSplits(132 + 100, 192, 132).empty());
}

TEST_CASE("stream-K cuts the last partial wave and one full wave before it into one chunk per block",
          "[attention]") {
  // GPT-3 QKV at 512 tokens: 144 tiles (4 rows), all in the region (one wave and a bit), 132 chunks of 192 k-block
  // tiles, in groups of the 4 row tiles.
  CHECK(streamKSplits(144, 192, 132, 4, true) == std::vector<SplitChoice>{{1, 0, 132, 192, 4}});
  CHECK(streamKSplits(144, 192, 132, 4, false) == std::vector<SplitChoice>{{1, 0, 132, 192, 1}});
  // 1024 tokens: 288 tiles in 8 rows; the first wave whole, 156 tiles in the region; 8 groups would not divide the
  // 132 chunks, 4 do.
  CHECK(streamKSplits(288, 192, 132, 8, true) == std::vector<SplitChoice>{{1, 132, 132, 192, 4}});
  // 2048 tokens: 576 tiles; three waves whole, 180 tiles in the region.
  CHECK(streamKSplits(576, 192, 132, 16, true) == std::vector<SplitChoice>{{1, 396, 132, 192, 4}});
  // Fewer tiles than blocks (LLaMA QKV at 512 tokens): every tile in the region.
  CHECK(streamKSplits(96, 128, 132, 4, true) == std::vector<SplitChoice>{{1, 0, 132, 128, 4}});
  // Rows the groups cannot divide: no groups.
  CHECK(streamKSplits(144, 192, 132, 3, true) == std::vector<SplitChoice>{{1, 0, 132, 192, 1}});
  // Nothing to balance: whole waves; no slots; chunks of fewer than 4 k-blocks (3 tiles of 8 over 132 blocks).
  CHECK(streamKSplits(264, 192, 132, 8, true).empty());
  CHECK(streamKSplits(144, 192, 0, 4, true).empty());
  CHECK(streamKSplits(3, 8, 132, 1, true).empty());
}

TEST_CASE("prompt attention tiles split in two blocks only where they fill at most half the SMs", "[attention]") {
  CHECK(promptAttentionBlocks(48, 132) == 2);   // GPT-3, 512 tokens
  CHECK(promptAttentionBlocks(64, 132) == 2);   // LLaMA, 1024 tokens
  CHECK(promptAttentionBlocks(66, 132) == 2);
  CHECK(promptAttentionBlocks(67, 132) == 1);
  CHECK(promptAttentionBlocks(96, 132) == 1);   // GPT-3, 1024 tokens
  CHECK(promptAttentionBlocks(192, 132) == 1);  // GPT-3, 2048 tokens
}

TEST_CASE("longest first orders prompt attention tiles by position in the sequence, last position first",
          "[attention]") {
  // 2 heads, 2 sequences of 3 row tiles: linear index = row * heads + head.
  const std::vector<std::uint32_t> longest = promptAttentionOrder(AttentionOrder::LongestFirst, 2, 6, 3);
  auto indexOf = [&](std::uint32_t row, std::uint32_t head) { return longest[row * 2 + head]; };
  CHECK(indexOf(2, 0) == 0);  // sequence 0's last row tile, head 0, first
  CHECK(indexOf(2, 1) == 1);
  CHECK(indexOf(5, 0) == 2);  // then sequence 1's last row tile
  CHECK(indexOf(1, 0) == 4);
  CHECK(indexOf(3, 1) == 11);  // sequence 1's first row tile, head 1, last
  std::vector<std::uint32_t> sorted = longest;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t i = 0; i < sorted.size(); ++i) CHECK(sorted[i] == i);  // a bijection
  const std::vector<std::uint32_t> rows = promptAttentionOrder(AttentionOrder::Rows, 2, 6, 3);
  for (std::uint32_t i = 0; i < rows.size(); ++i) CHECK(rows[i] == i);
}

TEST_CASE("the generated StridedSync policies group the Q, K and V tiles of each head", "[attention]") {
  for (std::uint32_t rows : {1u, 2u}) {
    checkStrided<Policies<Model::Gpt3, Phase::Decode>::QkvStrided>(12, rows);
    checkStrided<Policies<Model::Llama, Phase::Decode>::QkvStrided>(8, rows);
  }
  for (std::uint32_t rows : {4u, 16u, 32u}) {
    checkStrided<Policies<Model::Gpt3, Phase::Prompt>::QkvStrided>(12, rows);
    checkStrided<Policies<Model::Llama, Phase::Prompt>::QkvStrided>(8, rows);
  }
}

TEST_CASE("the QKV order in groups of one row is the spec's proven grouped order; others are bijections keeping a "
          "head's Q, K and V together", "[attention]") {
  for (std::uint32_t rows : {4u, 16u, 32u}) {
    const GridShape gpt3{36, rows, 1}, llama{24, rows, 1};
    for (std::uint32_t linear = 0; linear < gpt3.tileCount(); ++linear) {
      const TileCoord t = tileAtLinear(linear, gpt3);
      CHECK(qkvGroupedIndex(t, gpt3, 1) == Policies<Model::Gpt3, Phase::Prompt>::QkvOrder::index(t, gpt3));
    }
    for (std::uint32_t linear = 0; linear < llama.tileCount(); ++linear) {
      const TileCoord t = tileAtLinear(linear, llama);
      CHECK(qkvGroupedIndex(t, llama, 1) == Policies<Model::Llama, Phase::Prompt>::QkvOrder::index(t, llama));
    }
    for (std::uint32_t groupRows : {2u, 3u, 16u, 64u}) {
      std::set<std::uint32_t> indices;
      for (std::uint32_t linear = 0; linear < gpt3.tileCount(); ++linear) {
        const TileCoord t = tileAtLinear(linear, gpt3);
        const std::uint32_t index = qkvGroupedIndex(t, gpt3, groupRows);
        CHECK(index < gpt3.tileCount());
        indices.insert(index);
        // Q, K and V of one head and row are consecutive, Q first.
        CHECK(index % 3 == t.x / 12);
        CHECK(qkvGroupedIndex(TileCoord{t.x % 12, t.y, 0}, gpt3, groupRows) == index - t.x / 12);
      }
      CHECK(indices.size() == gpt3.tileCount());
    }
  }
  // Column-major (a group of every row): head 0's rows first, in row order.
  const GridShape grid{36, 16, 1};
  CHECK(qkvGroupedIndex(TileCoord{0, 1, 0}, grid, 16) == 3);
  CHECK(qkvGroupedIndex(TileCoord{1, 0, 0}, grid, 16) == 3 * 16);
}

TEST_CASE("a head's Q, K and V lie in exactly the QKV tiles qkv_head_tiles.h names, head-wide, narrow and wide",
          "[attention]") {
  for (std::uint32_t heads : {12u, 8u}) {
    const std::uint32_t qkvColumns = 3 * heads * 128;
    for (std::uint32_t tileColumns : {128u, std::uint32_t(kNarrowQkvTileN), std::uint32_t(kWideQkvTileN)}) {
      if (tileColumns == std::uint32_t(kWideQkvTileN) && heads != 12) continue;  // wide tiles: GPT-3 only
      const QkvHeadTiles tiles{heads, 128, tileColumns};
      REQUIRE(qkvColumns % tileColumns == 0);
      for (std::uint32_t part = 0; part < 3; ++part)
        for (std::uint32_t head = 0; head < heads; ++head) {
          const std::uint32_t begin = (part * heads + head) * 128, end = begin + 128;  // the head's columns
          const std::uint32_t first = tiles.firstColumn(part, head), last = tiles.lastColumn(part, head);
          INFO("heads " << heads << ", tiles of " << tileColumns << ", part " << part << ", head " << head);
          // The first tile holds the head's first column, the last its last one: the tiles cover it, none is spare.
          CHECK(first * tileColumns <= begin);
          CHECK(begin < (first + 1) * tileColumns);
          CHECK(last * tileColumns <= end - 1);
          CHECK(end - 1 < (last + 1) * tileColumns);
          CHECK(last < qkvColumns / tileColumns);
          if (tileColumns == 128) CHECK((first == part * heads + head && last == first));
          std::vector<TileCoord> visited;
          tiles.forEach(part, head, 300, [&](TileCoord t) { visited.push_back(t); });
          REQUIRE(visited.size() == last - first + 1);
          for (std::uint32_t i = 0; i < visited.size(); ++i) {
            CHECK(visited[i].x == first + i);
            CHECK(visited[i].y == 2);  // token row 300 lies in row tile 2
          }
        }
    }
  }
}

TEST_CASE("narrow and wide QKV tiles post under RowSync: every tile of a row counts toward the row's one semaphore",
          "[attention]") {
  for (std::uint32_t rows : {4u, 32u}) {
    const GridShape gpt3{std::uint32_t(3 * 12 * 128 / kNarrowQkvTileN), rows, 1};
    const GridShape llama{std::uint32_t(3 * 8 * 128 / kNarrowQkvTileN), rows, 1};
    using Gpt3 = QkvPolicies<Model::Gpt3, Phase::Prompt, QkvTiling::Narrow>::Producer;
    using Llama = QkvPolicies<Model::Llama, Phase::Prompt, QkvTiling::Narrow>::Producer;
    for (std::uint32_t y = 0; y < rows; ++y) {
      for (std::uint32_t x = 0; x < gpt3.x; ++x) {
        CHECK(Gpt3::sem(TileCoord{x, y, 0}, gpt3) == y);
        CHECK(Gpt3::value(TileCoord{x, y, 0}, gpt3) == gpt3.x);
      }
      for (std::uint32_t x = 0; x < llama.x; ++x) {
        CHECK(Llama::sem(TileCoord{x, y, 0}, llama) == y);
        CHECK(Llama::value(TileCoord{x, y, 0}, llama) == llama.x);
      }
    }
    // GPT-3's 144-column tiles: 32 per row.
    const GridShape wide{std::uint32_t(3 * 12 * 128 / kWideQkvTileN), rows, 1};
    using Wide = QkvPolicies<Model::Gpt3, Phase::Prompt, QkvTiling::Wide>::Producer;
    CHECK(wide.x == 32);
    for (std::uint32_t y = 0; y < rows; ++y)
      for (std::uint32_t x = 0; x < wide.x; ++x) {
        CHECK(Wide::sem(TileCoord{x, y, 0}, wide) == y);
        CHECK(Wide::value(TileCoord{x, y, 0}, wide) == wide.x);
      }
  }
}

TEST_CASE("the QKV tiling follows the GEMM's tile width", "[attention]") {
  CHECK(qkvTilingOf(128) == QkvTiling::HeadWide);
  CHECK(qkvTilingOf(kNarrowQkvTileN) == QkvTiling::Narrow);
  CHECK(qkvTilingOf(kWideQkvTileN) == QkvTiling::Wide);
  CHECK(kNarrowQkvTileN == 96);
  CHECK(kWideQkvTileN == 144);
}

