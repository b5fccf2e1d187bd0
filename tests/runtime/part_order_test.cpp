// The map from a work unit's index to its tile (order index) and split-K part (part_order.h), shared by a stage's
// tickets and a fused chain's queue: both orders visit every (tile, part) once, in the order each names.
#include <cstdint>
#include <set>
#include <utility>

#include <catch2/catch.hpp>

#include "cusync/part_order.h"

using namespace cusync;

TEST_CASE("both part orders visit every tile part exactly once", "[part-order]") {
  for (PartOrder order : {PartOrder::PartsOfATileTogether, PartOrder::KRangesInTurn})
    for (std::uint32_t tiles : {1u, 7u, 144u})
      for (std::uint32_t parts : {1u, 2u, 5u}) {
        std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
        for (std::uint32_t i = 0; i < tiles * parts; ++i) {
          const UnitSlot slot = unitSlot(i, tiles, parts, order);
          REQUIRE(slot.orderIndex < tiles);
          REQUIRE(slot.part < parts);
          seen.insert({slot.orderIndex, slot.part});
        }
        REQUIRE(seen.size() == std::size_t(tiles) * parts);
      }
}

TEST_CASE("parts together finish a tile before the next; k-ranges in turn give every tile its first part first",
          "[part-order]") {
  // 4 tiles, 3 parts.
  CHECK(unitSlot(4, 4, 3, PartOrder::PartsOfATileTogether).orderIndex == 1);
  CHECK(unitSlot(4, 4, 3, PartOrder::PartsOfATileTogether).part == 1);
  CHECK(unitSlot(4, 4, 3, PartOrder::KRangesInTurn).orderIndex == 0);
  CHECK(unitSlot(4, 4, 3, PartOrder::KRangesInTurn).part == 1);
  for (std::uint32_t i = 0; i < 4; ++i) CHECK(unitSlot(i, 4, 3, PartOrder::KRangesInTurn).part == 0);
  // Unsplit, both are the tile order itself.
  for (std::uint32_t i = 0; i < 4; ++i) {
    CHECK(unitSlot(i, 4, 1, PartOrder::PartsOfATileTogether).orderIndex == i);
    CHECK(unitSlot(i, 4, 1, PartOrder::KRangesInTurn).orderIndex == i);
  }
}
