// A header generated at build time by cusync_generated_policies(), used the way a kernel uses it: the names the
// GEMM kernels of the MLP example refer to, evaluated on the grids of one batch size.
#include "gpt3_mlp.h"

#include <catch2/catch.hpp>

#include <type_traits>

namespace mlp = cusync::generated::gpt3_mlp;

TEST_CASE("The build-time MLP header provides TileSync, RowSync, orders and W/T constants", "[generated]") {
  // M = 256 (two row tiles): g1 has 4*12288/(8*128) = 48 columns, g2 has 12288/128 = 96.
  cusync::GridShape g1{48, 2, 1}, g2{96, 2, 1};
  STATIC_REQUIRE(mlp::parameters::H == 12288);
  CHECK(mlp::Dep_dep_g1_RowSync::semaphoreCount(g1) == 2);
  CHECK(mlp::Dep_dep_g1_RowSync::sem({47, 1, 0}, g1) == 1);
  CHECK(mlp::Dep_dep_g1_RowSync::value({0, 1, 0}, g1) == 48);
  CHECK(mlp::Dep_dep_g1_TileSync::semaphoreCount(g1) == 96);
  CHECK(mlp::Dep_dep_g1_TileSync::sem({47, 1, 0}, g1) == 95);
  CHECK(mlp::Dep_dep_g1_TileSync::value({47, 1, 0}, g1) == 1);
  CHECK(mlp::Order_g1_RowMajor::index({1, 1, 0}, g1) == 49);
  CHECK(mlp::Order_g2_RowMajor::index({1, 1, 0}, g2) == 97);
  // M = 256: 96 + 192 tiles, more than two waves of 132. M = 128: 48 + 96, more than one wave, within two.
  CHECK_FALSE(mlp::Optimizations_dep::canAvoidCustomOrder(g2, g1));
  cusync::GridShape g1Small{48, 1, 1}, g2Small{96, 1, 1};
  CHECK_FALSE(mlp::Optimizations_dep::canAvoidWaitKernel(g2Small, g1Small));
  CHECK(mlp::Optimizations_dep::canAvoidCustomOrder(g2Small, g1Small));
  // The constants are for the -D M=512 the header was generated with: 4 row tiles, 576 tiles.
  STATIC_REQUIRE_FALSE(mlp::Optimizations_dep::avoidWaitKernel);
  STATIC_REQUIRE_FALSE(mlp::Optimizations_dep::avoidCustomOrder);
  STATIC_REQUIRE(mlp::Optimizations_dep::slots == 132);
}
