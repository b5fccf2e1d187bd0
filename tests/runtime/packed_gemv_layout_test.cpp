// packedGemvSource (cusync/packed_gemv_layout.h): the packed GEMV's weight copy holds every element of W exactly once,
// zeros only past K, each lane's 16 bytes where the kernel's fragment order needs them, and a paired SwiGLU block's
// rows 0-3 gate rows and rows 4-7 the up rows of the same outputs.
#include <cstdint>
#include <map>
#include <utility>

#include <catch2/catch.hpp>

#include "cusync/packed_gemv_layout.h"

namespace {
// Counts how often each (row, 8-element chunk) of W [n, k] is a source; returns the vectors past K.
std::size_t countSources(int n, int k, std::uint32_t pairedGroupRows,
                         std::map<std::pair<std::uint32_t, int>, int>& seen) {
  std::size_t pastK = 0;
  for (std::size_t i = 0; i < cusync::packedGemvVectors(n, k, cusync::kPackedGemvRows); ++i) {
    const cusync::PackedGemvSource source = cusync::packedGemvSource(i, k, pairedGroupRows, cusync::kPackedGemvRows);
    REQUIRE(source.row < std::uint32_t(n));
    REQUIRE(source.k % 8 == 0);
    if (source.k >= k) {
      ++pastK;
      continue;
    }
    ++seen[{source.row, source.k}];
  }
  return pastK;
}
}  // namespace

TEST_CASE("The packed copy holds every 16 bytes of W once, zeros only in a short last share", "[packed_gemv]") {
  for (const auto& [n, k] : {std::pair{16, 512}, std::pair{24, 2752}, std::pair{8, 8}, std::pair{32, 776}}) {
    std::map<std::pair<std::uint32_t, int>, int> seen;
    const std::size_t pastK = countSources(n, k, 0, seen);
    CHECK(seen.size() == std::size_t(n) * std::size_t(k / 8));
    for (const auto& [where, count] : seen) CHECK(count == 1);
    // K = 2752 = 10 shares of 256 and 192: the last share's 64 k past K, per row.
    CHECK(pastK == std::size_t(n) * std::size_t(cusync::packedGemvShares(k, cusync::kPackedGemvRows) * 256 - k) / 8);
  }
}

TEST_CASE("A lane's packed vector is its fragment's 8 halves: row g, k = 256 share + 32 q + 8 t", "[packed_gemv]") {
  constexpr int kK = 1024;  // 4 shares
  const int shares = cusync::packedGemvShares(kK, cusync::kPackedGemvRows);
  for (std::uint32_t block : {0u, 3u})
    for (int share = 0; share < shares; ++share)
      for (int q = 0; q < 8; ++q)
        for (int lane = 0; lane < 32; ++lane) {
          const std::size_t index = ((std::size_t(block) * shares + share) * 8 + q) * 32 + lane;
          const cusync::PackedGemvSource source = cusync::packedGemvSource(index, kK, 0, cusync::kPackedGemvRows);
          CHECK(source.row == block * 8 + std::uint32_t(lane / 4));
          CHECK(source.k == 256 * share + 32 * q + 8 * (lane % 4));
        }
}

TEST_CASE("A paired block packs the gate rows of its 4 outputs, then their up rows", "[packed_gemv]") {
  // W1 paired per 16 rows (the examples' skinny layout): rows [32 j, 32 j + 16) gate rows of outputs [16 j, 16 j + 16),
  // rows [32 j + 16, 32 j + 32) their up rows. Block b holds outputs [4 b, 4 b + 4).
  constexpr std::uint32_t kGroup = 16;
  constexpr int kIntermediate = 64, kK = 256;
  std::map<std::pair<std::uint32_t, int>, int> seen;
  countSources(2 * kIntermediate, kK, kGroup, seen);
  CHECK(seen.size() == std::size_t(2 * kIntermediate) * (kK / 8));
  for (std::uint32_t block = 0; block < kIntermediate / 4; ++block)
    for (int g = 0; g < 8; ++g) {
      const std::uint32_t output = block * 4 + std::uint32_t(g % 4);
      const std::uint32_t gate = 2 * kGroup * (output / kGroup) + output % kGroup;
      const std::size_t index = std::size_t(block) * cusync::packedGemvShares(kK, cusync::kPackedGemvRows) * 256 + 4 * g;  // q 0, lane (g, 0)
      CHECK(cusync::packedGemvSource(index, kK, kGroup, cusync::kPackedGemvRows).row == (g < 4 ? gate : gate + kGroup));
    }
}

TEST_CASE("16-row blocks pack rows g and g + 8 of a step side by side, 128 k per share, every element once",
          "[packed_gemv]") {
  constexpr int kRows = 16, kK = 2752;  // 22 shares of 128, the last 64 k past K
  CHECK(cusync::packedGemvShareK(kRows) == 128);
  const int shares = cusync::packedGemvShares(kK, kRows);
  CHECK(shares == 22);
  std::map<std::pair<std::uint32_t, int>, int> seen;
  std::size_t pastK = 0;
  for (std::size_t i = 0; i < cusync::packedGemvVectors(48, kK, kRows); ++i) {
    const cusync::PackedGemvSource source = cusync::packedGemvSource(i, kK, 0, kRows);
    const int lane = int(i % 32), position = int(i / 32 % 8), q = position / 2, h = position % 2;
    const std::size_t blockShare = i / 256;
    const int share = int(blockShare % shares), block = int(blockShare / shares);
    REQUIRE(source.row == std::uint32_t(block * 16 + lane / 4 + 8 * h));
    REQUIRE(source.k == 128 * share + 32 * q + 8 * (lane % 4));
    if (source.k >= kK) ++pastK;
    else ++seen[{source.row, source.k}];
  }
  CHECK(seen.size() == std::size_t(48) * (kK / 8));
  for (const auto& [where, count] : seen) CHECK(count == 1);
  CHECK(pastK == std::size_t(48) * (shares * 128 - kK) / 8);
  // Paired (groups of 16 gate rows): block b's rows 0-7 are the gate rows of outputs 8 b .. 8 b + 7, rows 8-15 their
  // up rows, so lane (g, t) holds an output's gate row (h = 0) and its up row (h = 1).
  for (std::uint32_t block = 0; block < 4; ++block)
    for (int g = 0; g < 8; ++g) {
      const std::uint32_t output = block * 8 + std::uint32_t(g);
      const std::uint32_t gate = 32 * (output / 16) + output % 16;
      const std::size_t first = std::size_t(block) * shares * 256 + 4 * std::size_t(g);
      CHECK(cusync::packedGemvSource(first, kK, 16, kRows).row == gate);
      CHECK(cusync::packedGemvSource(first + 32, kK, 16, kRows).row == gate + 16);
    }
}
