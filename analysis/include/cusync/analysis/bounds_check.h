// The bounds check: every producer tile a consumer tile reads lies inside the producer grid, R(Dom(C)) ⊆ Dom(P),
// for the concrete parameter values and, for symbolic parameters, for every value their constraints allow.
#pragma once

#include <cusync/analysis/isl_model.h>
#include <cusync/dsl/diagnostic.h>

#include <cstddef>
#include <string>
#include <vector>

namespace cusync::analysis {

// One tile set of one producer that reads outside its grid, with the first counterexample.
struct BoundsViolation {
  std::string dependency;
  std::string producerGrid;
  std::size_t producerIndex = 0;  // into Dependency::producers
  std::size_t tileSetIndex = 0;   // into ProducerTiles::tiles
  TilePair example;               // a consumer tile and the out-of-range producer tile it reads
  ParameterValues parameters;     // values of the symbolic parameters for the example (empty if none)
  spec::SourceLocation location;  // of the tile set (or the dependency, for specs without locations)
};

// Checks every tile set of every producer of every dependency. Each violation is also reported to `diagnostics`
// as an error naming the dependency, at the tile set's location, with the counterexample in notes.
std::vector<BoundsViolation> checkBounds(const IslModel& model, dsl::Diagnostics& diagnostics);

}  // namespace cusync::analysis
