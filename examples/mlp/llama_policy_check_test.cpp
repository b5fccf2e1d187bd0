// Host tests of what the LLaMA example decides on the CPU: which GEMM-1 tiles a SwiGLU tile waits for (against a
// brute-force walk over every element it reads), and the startup policy checks (that they pass for every grid the
// benchmark can use and catch a wrong policy).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <tuple>

#include "llama_policy_check.h"
#include "swiglu_geometry.h"

using namespace cusync;
using namespace cusync::examples;

namespace {

constexpr std::uint32_t kIntermediate = 2752;  // F/8 of LLaMA 65B

using TileSet = std::set<std::tuple<std::uint32_t, std::uint32_t>>;

TileSet visited(const SwiGluGeometry& g, TileCoord tile) {
  TileSet tiles;
  g.forEachProducerTile(tile, [&](TileCoord p) { tiles.insert({p.x, p.y}); });
  return tiles;
}

// The GEMM-1 tiles holding any element S tile `tile` reads, element by element.
TileSet bruteForce(const SwiGluGeometry& g, TileCoord tile) {
  TileSet tiles;
  for (std::uint32_t row = tile.y * g.tileRows; row < std::min((tile.y + 1) * g.tileRows, g.m); ++row)
    for (std::uint32_t column = tile.x * g.tileColumns;
         column < std::min((tile.x + 1) * g.tileColumns, g.intermediate); ++column) {
      tiles.insert({column / g.producerTileColumns, row / g.producerTileRows});
      tiles.insert({(g.intermediate + column) / g.producerTileColumns, row / g.producerTileRows});
    }
  return tiles;
}

SwiGluGeometry geometry(std::uint32_t m, std::uint32_t gemmRows, std::uint32_t gemmColumns, std::uint32_t columns) {
  SwiGluGeometry g;
  g.m = m;
  g.intermediate = kIntermediate;
  g.tileRows = gemmRows;
  g.tileColumns = columns;
  g.producerTileRows = gemmRows;
  g.producerTileColumns = gemmColumns;
  return g;
}

GridShape gemm1Grid(std::uint32_t m, std::uint32_t rows, std::uint32_t columns) {
  return GridShape{(2 * kIntermediate + columns - 1) / columns, (m + rows - 1) / rows, 1};
}

// A RowSync that expects one post too few per row: a consumer could pass before the last tile of the row posted.
struct ShortRowSync {
  static constexpr const char* name = "ShortRowSync";
  static constexpr std::uint32_t semaphoreCount(GridShape g) { return g.y; }
  static constexpr std::uint32_t sem(TileCoord t, GridShape) { return t.y; }
  static constexpr std::uint32_t value(TileCoord, GridShape g) { return g.x - 1; }
};

}  // namespace

TEST_CASE("a SwiGLU tile waits for exactly the GEMM-1 tiles holding its gate and up elements", "[llama]") {
  for (std::uint32_t gemmColumns : {64u, 128u, 256u})
    for (std::uint32_t columns : {64u, 128u, 96u})
      for (std::uint32_t m : {1u, 200u}) {
        const SwiGluGeometry g = geometry(m, 64, gemmColumns, columns);
        const GridShape gs = g.grid();
        for (std::uint32_t linear = 0; linear < gs.tileCount(); ++linear) {
          const TileCoord t = tileAtLinear(linear, gs);
          INFO("GEMM-1 tile width " << gemmColumns << ", S tile width " << columns << ", M " << m << ", S tile "
                                    << describeTile(t));
          REQUIRE(visited(g, t) == bruteForce(g, t));
        }
      }
}

TEST_CASE("with 128-wide S and GEMM-1 tiles the up columns straddle two GEMM-1 tiles", "[llama]") {
  const SwiGluGeometry g = geometry(1, 128, 128, 128);
  // S tile 0: gate columns [0, 128) = GEMM-1 tile 0; up columns [2752, 2880) = tiles 21 ([2688, 2816)) and 22.
  CHECK(visited(g, TileCoord{0, 0, 0}) == TileSet{{0, 0}, {21, 0}, {22, 0}});
  // The last S tile is partial: gate [2688, 2752) in tile 21, up [5440, 5504) in tile 42.
  CHECK(g.grid().x == 22);
  CHECK(visited(g, TileCoord{21, 0, 0}) == TileSet{{21, 0}, {42, 0}});
}

TEST_CASE("the startup checks pass on every grid the benchmark can use", "[llama]") {
  namespace gpt3 = cusync::generated::gpt3_mlp;
  namespace llama = cusync::generated::llama_mlp;
  const std::tuple<std::uint32_t, std::uint32_t> gemmTiles[] = {{64, 64}, {64, 128}, {128, 64}, {128, 128}, {128, 256}};
  for (std::uint32_t m : {1u, 8u, 64u, 129u, 1000u, 4096u})
    for (auto [rows, gemmColumns] : gemmTiles)
      for (std::uint32_t columns : {64u, 128u}) {
        const SwiGluGeometry g = geometry(m, rows, gemmColumns, columns);
        const GridShape g1 = gemm1Grid(m, rows, gemmColumns);
        INFO("M " << m << ", GEMM tile " << rows << "x" << gemmColumns << ", S tile width " << columns);
        CHECK(checkLlamaPolicies<gpt3::Dep_dep_g1_TileSync, llama::Dep_down_gs_TileSync>(g, g1).empty());
        CHECK(checkLlamaPolicies<gpt3::Dep_dep_g1_RowSync, llama::Dep_down_gs_RowSync>(g, g1).empty());
      }
}

TEST_CASE("the startup checks catch a policy that differs or is wrong", "[llama]") {
  namespace gpt3 = cusync::generated::gpt3_mlp;
  namespace llama = cusync::generated::llama_mlp;
  const SwiGluGeometry g = geometry(256, 128, 128, 64);
  const GridShape g1 = gemm1Grid(256, 128, 128);
  // GEMM 2 compiled with TileSync but paired with the spec's RowSync: they differ on the first count.
  const auto mismatch = checkLlamaPolicies<gpt3::Dep_dep_g1_TileSync, llama::Dep_down_gs_RowSync>(g, g1);
  REQUIRE(mismatch.size() == 1);
  CHECK_THAT(mismatch[0], Catch::Contains("semaphoreCount 86 vs 2"));
  // A policy whose value undercounts the tiles of its semaphore.
  const std::string wrong = checkPolicyOnGrid<ShortRowSync>(g.grid(), std::vector<bool>(g.grid().tileCount(), true));
  CHECK_THAT(wrong, Catch::Contains("expects 42 posts on semaphore 0, which 43 tiles post to"));
  // A GEMM-1 grid too small for what the SwiGLU tiles read.
  std::string error;
  gateUpTilesRead(g, GridShape{g1.x - 1, g1.y, 1}, error);
  CHECK_THAT(error, Catch::Contains("outside grid 42x2x1"));
}
