// Parameter sets as the conditions a reader expects in comments and summaries. Host-only header.
#pragma once

#include <isl/cpp.h>

#include <string>

namespace cusync::codegen {

// A parameter set as a readable condition: "[M] -> { : 0 < M <= 4096 }" becomes "0 < M <= 4096", disjuncts are
// joined with " or ", the universe is "any value", the empty set "no value".
std::string parameterCondition(const isl::set& parameters);

}  // namespace cusync::codegen
