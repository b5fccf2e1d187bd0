// Facts about each dependency that the policy generator and `cusyncgen --check` need: how many producer tiles one
// consumer tile reads (in total and along each producer dimension), and which dimensions its ForAlls range over.
//
// Computed on a parameter-free model (ModelOptions::bindSymbolicParameters = true) by enumerating every
// (consumer, producer) tile pair of each relation, so the counts are exact for those parameter values; the formula
// states the count for other values where it is derivable from the spec (product of range lengths per tile set).
#pragma once

#include <cusync/analysis/isl_model.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cusync::analysis {

struct RangedDimensionFacts {
  std::string dimension;                          // the Dim a ForAll ranges over
  spec::Range range;                              // as written
  std::optional<std::int64_t> lower, upper;       // its bounds at the model's parameter values
  std::vector<std::size_t> producerDimensions;    // producer grid dims whose coordinate uses this Dim
};

struct TileSetFacts {
  spec::TileSet tileSet;
  std::vector<RangedDimensionFacts> ranged;
};

struct ProducerFacts {
  std::string grid;
  std::vector<TileSetFacts> tileSets;
  // Distinct producer tiles read by one consumer tile, minimum and maximum over all consumer tiles.
  std::int64_t minTilesPerConsumer = 0;
  std::int64_t maxTilesPerConsumer = 0;
  // Per producer grid dimension: distinct coordinates along it read by one consumer tile (min and max).
  std::vector<std::int64_t> minTilesAlong;
  std::vector<std::int64_t> maxTilesAlong;
  // The count as a spec expression (e.g. "g1.x", "2"), when it holds exactly for the enumerated values (tile sets
  // that overlap or ForAlls whose tiles coincide make it inexact; then it is empty).
  std::string tilesPerConsumerFormula;
  // false when the relation had more than kMaxEnumeratedPairs pairs: the counts above are then unset (0), the
  // formula is the spec's (unchecked), and notCountedReason says so.
  bool counted = true;
  std::string notCountedReason;
  bool uniform() const { return minTilesPerConsumer == maxTilesPerConsumer; }
};

struct DependencyFacts {
  std::string dependency;
  std::string consumerGrid;
  std::int64_t consumerTiles = 0;
  std::vector<ProducerFacts> producers;
};

// Precondition: `model` has no symbolic parameters (throws std::invalid_argument otherwise). A relation with more
// than kMaxEnumeratedPairs tile pairs is not counted (ProducerFacts::counted): these are statistics, and no
// header or proof depends on them, so large real grids (GPT-3 at M = 65536) never fail because of them.
inline constexpr std::int64_t kMaxEnumeratedPairs = 2'000'000;  // a few seconds of isl enumeration
std::vector<DependencyFacts> computeDependencyFacts(const IslModel& model);

// Evaluates a parameter/extent expression (no dimensions) at the model's parameter values with floor semantics;
// nullopt if it uses a dimension or a symbolic parameter of a symbolic model.
std::optional<std::int64_t> evaluate(const spec::Expr& expr, const IslModel& model);

}  // namespace cusync::analysis
