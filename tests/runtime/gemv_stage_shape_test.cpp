// What the hooked GEMV stage refuses (gemv_stage_shape.h), on the host before any launch: each refusal names what is
// wrong, and the attention chain's token-generation shapes pass.
#include <catch2/catch.hpp>

#include "cusync/gemv_stage_shape.h"

namespace {
// GPT-3's QKV GEMM at one token, split in 14 parts (the attention chain's first candidate).
cusync::GemvStageProblem gpt3Qkv() {
  cusync::GemvStageProblem p;
  p.m = 1;
  p.n = 4608;
  p.k = 12288;
  p.tileN = 128;
  p.gridRows = 1;
  p.parts = 14;
  p.splitBuffers = true;
  return p;
}
bool mentions(const std::string& why, const std::string& what) { return why.find(what) != std::string::npos; }
}  // namespace

TEST_CASE("the GEMV stage runs the attention chain's token-generation GEMMs", "[gemv]") {
  for (int m = 1; m <= cusync::kGemvMaxTokens; ++m) {
    cusync::GemvStageProblem p = gpt3Qkv();
    p.m = m;
    CHECK(cusync::whyNotGemvStage(p).empty());
    p.n = 8192;  // LLaMA's output GEMM: K = 1024, 16 k-blocks, unsplit
    p.k = 1024;
    p.parts = 1;
    p.splitBuffers = false;
    CHECK(cusync::whyNotGemvStage(p).empty());
  }
}

TEST_CASE("the GEMV stage refuses what its kernel cannot run, saying what", "[gemv]") {
  cusync::GemvStageProblem p = gpt3Qkv();
  p.m = cusync::kGemvMaxTokens + 1;
  CHECK(mentions(cusync::whyNotGemvStage(p), "M = 5"));
  p = gpt3Qkv();
  p.m = 0;
  CHECK(mentions(cusync::whyNotGemvStage(p), "M = 0"));
  p = gpt3Qkv();
  p.gridRows = 2;
  CHECK(mentions(cusync::whyNotGemvStage(p), "one row tile"));
  p = gpt3Qkv();
  p.n = 4608 + 64;
  CHECK(mentions(cusync::whyNotGemvStage(p), "N = 4672"));
  p = gpt3Qkv();
  p.k = 12288 + 32;
  CHECK(mentions(cusync::whyNotGemvStage(p), "K = 12320"));
  p = gpt3Qkv();
  p.parts = 12288 / cusync::kGemvKBlock + 1;
  CHECK(mentions(cusync::whyNotGemvStage(p), "split-K parts"));
  p = gpt3Qkv();
  p.splitBuffers = false;
  CHECK(mentions(cusync::whyNotGemvStage(p), "partials"));
  p = gpt3Qkv();
  p.wholeTiles = 10;
  CHECK(mentions(cusync::whyNotGemvStage(p), "whole tiles"));
  p = gpt3Qkv();
  p.persistentBlocks = 132;
  CHECK(mentions(cusync::whyNotGemvStage(p), "persistent"));
}

TEST_CASE("a GEMV part stages at most its longest k-range", "[gemv]") {
  // 192 k-blocks in 14 parts: 13 or 14 each (kBlocksOfPart), so 14 x 64 k at most.
  CHECK(cusync::gemvLongestPart(12288, 14) == 14 * cusync::kGemvKBlock);
  CHECK(cusync::gemvLongestPart(12288, 1) == 12288);
  CHECK(cusync::gemvLongestPart(1024, 16) == cusync::kGemvKBlock);
}

TEST_CASE("the whole-rows GEMV stage runs a tile as its column groups and refuses anything else", "[gemv]") {
  // GPT-3's QKV GEMM as 16 column groups of 8 per 128-wide tile, each over the whole of K.
  cusync::GemvStageProblem p = gpt3Qkv();
  p.m = 4;
  p.parts = 16;
  p.columnGroups = 16;
  p.splitBuffers = false;  // no partials: each group stores its own columns
  p.arrivalCounters = true;
  CHECK(cusync::whyNotGemvStage(p).empty());
  p.k = 1000;  // not a multiple of a k-block: whole rows do not care, 16-byte rows do
  CHECK(cusync::whyNotGemvStage(p).empty());
  p.k = 1004;
  CHECK(mentions(cusync::whyNotGemvStage(p), "multiple of 8"));
  p.k = 12288;
  p.parts = 14;  // a k-range split is not a column-group split
  CHECK(mentions(cusync::whyNotGemvStage(p), "16 column groups, the stage has 14 parts"));
  p.parts = 16;
  p.arrivalCounters = false;
  CHECK(mentions(cusync::whyNotGemvStage(p), "arrival counters"));
  p.arrivalCounters = true;
  p.wholeTiles = 3;
  CHECK(mentions(cusync::whyNotGemvStage(p), "whole tiles"));
  p.wholeTiles = 0;
  p.m = cusync::kGemvMaxTokens + 1;
  CHECK(mentions(cusync::whyNotGemvStage(p), "M = 5"));
}
