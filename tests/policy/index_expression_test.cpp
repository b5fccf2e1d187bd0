// Index expressions: folding, C++ text, evaluation.
#include <cusync/codegen/index_expression.h>

#include <catch2/catch.hpp>

using namespace cusync::codegen;

TEST_CASE("Index expressions fold constants and neutral operands", "[index]") {
  CHECK(constant(2) + constant(3) == constant(5));
  CHECK(coordinate(0) + constant(0) == coordinate(0));
  CHECK(constant(1) * extent(1) == extent(1));
  CHECK(constant(0) * extent(1) == constant(0));
  CHECK(floorDiv(coordinate(0), 1) == coordinate(0));
  CHECK(mod(coordinate(0), 1) == constant(0));
  CHECK(mod(constant(-1), 3) == constant(2));
}

TEST_CASE("Index expressions print as C++ and evaluate like it on tiles inside the grid", "[index]") {
  IndexExpression strided = floorDiv(extent(0) - constant(1) - mod(coordinate(0), 4), 4) + constant(1);
  CHECK(toCpp(strided, "tile", "grid") == "((((grid.x - 1u) - (tile.x % 4u)) / 4u) + 1u)");
  std::int64_t extents[3] = {10, 1, 1};
  for (std::int64_t x = 0; x < 10; ++x) {
    std::int64_t tile[3] = {x, 0, 0};
    // Tiles x, x+4, x+8 < 10 share a residue: 3 of them for residues 0 and 1, 2 for residues 2 and 3.
    CHECK(evaluate(strided, tile, extents) == (x % 4 < 2 ? 3 : 2));
  }
  IndexExpression block = min(constant(4), extent(0) - constant(4) * floorDiv(coordinate(0), 4));
  std::int64_t last[3] = {9, 0, 0};
  CHECK(evaluate(block, last, extents) == 2);
}
