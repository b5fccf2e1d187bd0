// What the skinny chains refuse, and why (SkinnyMlpChain::whyNot, skinny_mlp.cuh): token counts past a path's
// limit, widths that are not whole 32-row tiles, K that is not whole 32-deep k-blocks, more split parts than
// k-blocks, and the whole-rows GEMV's limits (one token, unsplit, whole blocks); the MLP shapes the benchmarks run are
// accepted. Host logic, compiled by nvcc because the header holds the kernels; nothing runs on a GPU.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <string>

#include "gpt3_mlp_skinny.h"
#include "llama_mlp_skinny.h"
#include "skinny_mlp.cuh"

using namespace cusync;
using namespace cusync::examples;

namespace {
using GeluPolicy = cusync::generated::gpt3_mlp_skinny::Dep_dep_g1_TileSync;
using SwiGluPolicy = cusync::generated::llama_mlp_skinny::Dep_dep_g1_TileSync;
using Mma = SkinnyMlpChain<GeluPolicy, SkinnyPath::MmaRing, 4>;
using Gemv = SkinnyMlpChain<GeluPolicy, SkinnyPath::GemvPdl, 4>;
using SwiGluGemv = SkinnyMlpChain<SwiGluPolicy, SkinnyPath::GemvPdl, 4>;

bool says(const std::string& why, const std::string& part) { return why.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("The benchmarks' MLP shapes are accepted on every path that takes their token count", "[skinny]") {
  for (const FusedSplit split : {FusedSplit{1, 1}, FusedSplit{8, 4}, FusedSplit{4, 4}}) {
    CHECK(Mma::whyNot(1, 12288, 6144, false, split).empty());
    CHECK(Mma::whyNot(8, 12288, 6144, false, split).empty());
    CHECK(Gemv::whyNot(1, 12288, 6144, false, split).empty());
    CHECK(SwiGluGemv::whyNot(1, 8192, 2752, true, split).empty());
  }
}

TEST_CASE("Token counts past a path's limit are refused with the limit named", "[skinny]") {
  CHECK(says(Gemv::whyNot(2, 12288, 6144, false, {}), "M = 2 is outside 1..1"));
  CHECK(says(Mma::whyNot(9, 12288, 6144, false, {}), "M = 9 is outside 1..8"));
  CHECK(says(Mma::whyNot(0, 12288, 6144, false, {}), "M = 0 is outside 1..8"));
}

TEST_CASE("Widths that are not whole 32-row tiles are refused", "[skinny]") {
  // GEMM 1 of the paired SwiGLU has 2 x intermediate rows: 2 x 2760 = 5520 is not a multiple of 32.
  CHECK(says(SwiGluGemv::whyNot(1, 8192, 2760, true, {}), "not multiples of the tile's 32 rows"));
  CHECK(says(Gemv::whyNot(1, 12300, 6144, false, {}), "not multiples of the tile's 32 rows"));
}

TEST_CASE("K that is not whole 32-deep k-blocks is refused", "[skinny]") {
  // The paired SwiGLU's GEMM 1 has 2 x 2768 = 5536 = 32 x 173 rows (whole tiles), but GEMM 2's K = 2768 = 32 x 86.5.
  CHECK(says(SwiGluGemv::whyNot(1, 8192, 2768, true, {}), "must be multiples of 32"));
}

TEST_CASE("More split parts than k-blocks are refused", "[skinny]") {
  // GPT-3's GEMM 2 has K = 6144: 192 k-blocks of 32.
  CHECK(Gemv::whyNot(1, 12288, 6144, false, {1, 192}).empty());
  CHECK(says(Gemv::whyNot(1, 12288, 6144, false, {1, 193}), "more parts than k-blocks"));
  CHECK(says(Gemv::whyNot(1, 12288, 6144, false, {385, 1}), "more parts than k-blocks"));
}

TEST_CASE("Gate/up pairing groups other than per tile run only on the GEMV paths, in multiples of half a tile",
          "[skinny]") {
  using SwiGluRing = SkinnyMlpChain<SwiGluPolicy, SkinnyPath::GemvRing, 4>;
  // The PyTorch op's layout: 64 gate rows, then their 64 up rows (2752 = 43 x 64).
  CHECK(SwiGluGemv::whyNot(1, 8192, 2752, true, {}, 64).empty());
  CHECK(SwiGluGemv::whyNot(1, 8192, 2752, true, {}, 16).empty());  // per tile, the examples' layout
  CHECK(says(SwiGluRing::whyNot(1, 8192, 2752, true, {}, 64), "read a paired tile as one box"));
  CHECK(SwiGluRing::whyNot(1, 8192, 2752, true, {}, 16).empty());
  CHECK(says(SwiGluGemv::whyNot(1, 8192, 2752, true, {}, 24), "must be a multiple of 16"));
  CHECK(says(SwiGluGemv::whyNot(1, 8192, 2752, true, {}, 128), "divides the intermediate size 2752"));
  // GELU has no pairing: the argument does not matter.
  CHECK(Gemv::whyNot(1, 12288, 6144, false, {}, 64).empty());
}

TEST_CASE("The whole-rows GEMV runs one token, unsplit, over widths of whole blocks and K of whole 16-byte loads",
          "[skinny]") {
  using Rows = SkinnyMlpChain<GeluPolicy, SkinnyPath::GemvRows, 4>;
  using SwiGluRows = SkinnyMlpChain<SwiGluPolicy, SkinnyPath::GemvRows, 4>;
  CHECK(Rows::whyNot(1, 12288, 6144, false, {}).empty());
  CHECK(SwiGluRows::whyNot(1, 8192, 2752, true, {}).empty());
  CHECK(SwiGluRows::whyNot(1, 8192, 2752, true, {}, 64).empty());  // the PyTorch op's pairing
  CHECK(says(Rows::whyNot(2, 12288, 6144, false, {}), "M = 2 is outside 1..1"));
  CHECK(says(Rows::whyNot(1, 12288, 6144, false, {2, 1}), "does not split K"));
  CHECK(says(Rows::whyNot(1, 12288, 6144, false, {1, 2}), "does not split K"));
  // A GELU block writes 4 outputs; a paired SwiGLU block 2 (its 4 rows are 2 gate and 2 up rows).
  CHECK(says(Rows::whyNot(1, 12288, 6146, false, {}), "not multiples of a block's 4 and 4 outputs"));
  CHECK(says(SwiGluRows::whyNot(1, 8192, 2753, true, {}), "not multiples of a block's 2 and 4 outputs"));
  CHECK(says(SwiGluRows::whyNot(1, 8194, 2752, true, {}), "not multiples of a block's 2 and 4 outputs"));
  CHECK(says(Rows::whyNot(1, 12292, 6144, false, {}), "K must be a multiple of 8"));
  // Its pairing groups follow the GEMV paths' rule.
  CHECK(says(SwiGluRows::whyNot(1, 8192, 2752, true, {}, 128), "divides the intermediate size 2752"));
}

TEST_CASE("The tensor-core whole-rows GEMV runs 1-8 tokens, unsplit, over widths of whole 8-row blocks", "[skinny]") {
  using RowsMma = SkinnyMlpChain<GeluPolicy, SkinnyPath::GemvRowsMma, 2>;
  using SwiGluRowsMma = SkinnyMlpChain<SwiGluPolicy, SkinnyPath::GemvRowsMma, 2>;
  for (int m : {1, 2, 3, 4, 5, 8}) {
    CHECK(RowsMma::whyNot(m, 12288, 6144, false, {}).empty());
    CHECK(SwiGluRowsMma::whyNot(m, 8192, 2752, true, {}).empty());
    CHECK(SwiGluRowsMma::whyNot(m, 8192, 2752, true, {}, 64).empty());  // the PyTorch op's pairing
  }
  CHECK(says(RowsMma::whyNot(9, 12288, 6144, false, {}), "M = 9 is outside 1..8"));
  CHECK(says(RowsMma::whyNot(2, 12288, 6144, false, {2, 1}), "does not split K"));
  // A GELU block writes 8 outputs; a paired SwiGLU block 4 (its 8 rows are 4 gate and 4 up rows).
  CHECK(says(RowsMma::whyNot(2, 12288, 6148, false, {}), "not multiples of a block's 8 and 8 outputs"));
  CHECK(says(SwiGluRowsMma::whyNot(2, 8192, 2754, true, {}), "not multiples of a block's 4 and 8 outputs"));
  // A paired block's 4 outputs divide 2756, whose rows are then no whole number of 16-byte loads.
  CHECK(says(SwiGluRowsMma::whyNot(2, 8192, 2756, true, {}), "K must be a multiple of 8"));
  CHECK(RowsMma::configName() == "gemv_rows_mma_p2");
}

TEST_CASE("The packed GEMV runs 1-16 tokens, unsplit, over widths of whole 16-row blocks", "[skinny]") {
  using Packed = SkinnyMlpChain<GeluPolicy, SkinnyPath::GemvPackedMma16, 3>;
  using SwiGluPacked = SkinnyMlpChain<SwiGluPolicy, SkinnyPath::GemvPackedMma16, 4>;
  STATIC_REQUIRE(Packed::kPacked && Packed::kRows && Packed::kLaunchPerGemm);
  // One token tile (8 B columns) up to 8 tokens, two up to 16.
  STATIC_REQUIRE(packed16GemvTokenTiles(1) == 1);
  STATIC_REQUIRE(packed16GemvTokenTiles(8) == 1);
  STATIC_REQUIRE(packed16GemvTokenTiles(9) == 2);
  STATIC_REQUIRE(packed16GemvTokenTiles(16) == 2);
  // Whole shares per load with one token tile, half shares with two (their registers).
  STATIC_REQUIRE(packed16GemvStepsPerLoad(1) == 4);
  STATIC_REQUIRE(packed16GemvStepsPerLoad(2) == 2);
  for (int m : {1, 2, 3, 4, 5, 8, 9, 13, 16}) {
    CHECK(Packed::whyNot(m, 12288, 6144, false, {}).empty());
    CHECK(SwiGluPacked::whyNot(m, 8192, 2752, true, {}).empty());
    CHECK(SwiGluPacked::whyNot(m, 8192, 2752, true, {}, 64).empty());  // the PyTorch op's pairing
  }
  CHECK(says(Packed::whyNot(17, 12288, 6144, false, {}), "M = 17 is outside 1..16"));
  CHECK(says(Packed::whyNot(2, 12288, 6144, false, {2, 1}), "does not split K"));
  // A GELU block writes 16 outputs, a paired SwiGLU block 8: H = 1032 (the op's test shape) and I = 2792 are refused,
  // which python/cusync/tuning.py's _packed_gemv_runs mirrors.
  CHECK(says(Packed::whyNot(2, 1032, 2784, false, {}), "not multiples of a block's 16 and 16 outputs"));
  CHECK(says(Packed::whyNot(2, 1024, 2792, false, {}), "not multiples of a block's 16 and 16 outputs"));
  CHECK(says(SwiGluPacked::whyNot(2, 1032, 2752, true, {}), "not multiples of a block's 8 and 16 outputs"));
  // I = 2792 is whole paired blocks of 8 outputs but not whole default pairing groups of 16: W1's last group would be
  // cut short (every whole-rows path reads the pairing the same way).
  CHECK(says(SwiGluPacked::whyNot(2, 8192, 2792, true, {}), "pairing groups of 16 rows do not divide"));
  CHECK(says(SkinnyMlpChain<SwiGluPolicy, SkinnyPath::GemvRowsMma, 2>::whyNot(2, 8192, 2792, true, {}),
             "pairing groups of 16 rows do not divide"));
  CHECK(SwiGluPacked::whyNot(2, 8192, 2784, true, {}).empty());
  CHECK(Packed::configName() == "gemv_packed_mma16_p3");
  CHECK(SwiGluPacked::configName() == "gemv_packed_mma16_p4");
}

TEST_CASE("Packing refuses, before any launch, weights that are not whole blocks of its height", "[skinny]") {
  // No device memory is touched: the sizes are checked first (packed_gemv_pack.cuh).
  const auto refusal = [](int n, int k, std::uint32_t groupRows, int rows) {
    try {
      packGemvWeights(nullptr, nullptr, n, k, groupRows, nullptr, rows);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  CHECK(says(refusal(1032, 1024, 0, 16), "W is 1032 x 1024"));
  CHECK(says(refusal(1024, 1028, 0, 16), "K in multiples of 8"));
  CHECK(says(refusal(1024, 1024, 4, 16), "pairing groups of 4"));
  CHECK(says(refusal(1024, 1024, 0, 32), "blocks of 32 rows"));
  // 5584 paired rows (I = 2792) are no whole number of groups of 16 gate and 16 up rows: the last group's up rows
  // would be read past W (the review of session 31 found packing reading rows 5584-5591).
  CHECK(says(refusal(5584, 8192, 16, 16), "that W's rows fill whole"));
}
