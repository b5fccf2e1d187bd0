// The human-readable summary `cusyncgen --check` prints: parameters, grids (extents, tile counts), dependencies
// (producer tiles per consumer tile, ranged dimensions) and the verdict.
#pragma once

#include "checked_spec.h"

#include <string>

namespace cusync::cusyncgen {

std::string checkSummary(const CheckedSpec& checked);

// How one consumer tile reads a producer, in words: "1 row of g1.x = 48 tiles", "2 tiles (2 along x)", "1 tile".
std::string describeTilesPerConsumer(const analysis::ProducerFacts& producer, const analysis::GridModel& grid);

}  // namespace cusync::cusyncgen
