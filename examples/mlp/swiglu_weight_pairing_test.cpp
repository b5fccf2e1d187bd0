// Host tests of the padded paired SwiGLU layout's sizes (swiglu_weight_pairing.h): the intermediate size a tile runs
// at, and the refusals that come before any copy.
#include <catch2/catch.hpp>

#include <string>

#include "swiglu_weight_pairing.h"

using namespace cusync;
using namespace cusync::examples;

TEST_CASE("pairedIntermediate rounds up to a multiple of half the tile and of 8", "[llama][pairing]") {
  CHECK(pairedIntermediate(2752, 128) == 2752);  // LLaMA-65B's F/8 = 43 x 64: no padding
  CHECK(pairedIntermediate(2752, 256) == 2816);  // 22 x 128
  CHECK(pairedIntermediate(2752, 192) == 2784);  // 29 x 96
  CHECK(pairedIntermediate(2752, 176) == 2816);  // 32 x 88
  CHECK(pairedIntermediate(2752, 88) == 2816);   // 64 x 44, and a multiple of 8 (2772 = 63 x 44 is not)
  CHECK(pairedIntermediate(100, 12) == 120);     // half 6: multiples of 24
  CHECK(pairedIntermediate(1, 256) == 128);
  CHECK_THROWS_WITH(pairedIntermediate(2752, 129), Catch::Contains("129 columns cannot pair"));
  CHECK_THROWS_AS(pairedIntermediate(0, 128), Error);
}

TEST_CASE("the padded pairing refuses a size that is not the padded one, before copying", "[llama][pairing]") {
  // Null pointers: the check must come before any CUDA call.
  CHECK_THROWS_WITH(pairGateUpRowsPadded(nullptr, nullptr, 2752, 2752, 8192, 256, nullptr),
                    Catch::Contains("2752 is not the intermediate size 2752 padded for 256-column tiles"));
  CHECK_THROWS_WITH(pairGateUpRows(nullptr, nullptr, 2752, 8192, 256, nullptr),
                    Catch::Contains("not a multiple of half the tile's columns (128)"));
  CHECK_THROWS_WITH(padWeightColumns(nullptr, nullptr, 8192, 2752, 2048, nullptr),
                    Catch::Contains("cannot pad 2752 columns to 2048"));
}
