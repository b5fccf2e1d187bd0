// Picking concrete points out of isl sets for counterexamples: the smallest parameter values first, then the
// lexicographically first tile, so a reported example is the one a person would look at first.
#pragma once

#include <cusync/analysis/isl_model.h>

#include <isl/cpp.h>

#include <optional>
#include <string>
#include <vector>

namespace cusync::analysis::detail {

// Values of the named parameters at a point of `parameterSet` (a params set), lexicographically smallest when the
// set is bounded below. Empty when `names` is empty or the set is empty.
ParameterValues sampleParameters(const isl::set& parameterSet, const std::vector<std::string>& names);

// The lexicographically smallest point of a parameter-free set, or any point if it is unbounded below;
// nullopt if empty.
std::optional<isl::point> firstPoint(const isl::set& set);

// "M = 64, B = 2"
std::string describeParameters(const ParameterValues& values);

}  // namespace cusync::analysis::detail
