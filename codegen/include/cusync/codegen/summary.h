// Summaries of a Generation: a short human-readable one (stdout, and the policy part of --check) and a
// machine-readable JSON one (--json). Both are deterministic. Host-only header.
#pragma once

#include <cusync/codegen/generation.h>

#include <string>

namespace cusync::codegen {

// One line per proven policy and order, then the rejected candidates with their reasons, then W/T per stage.
std::string textSummary(const Generation& generation);

// {"spec": ..., "parameters": {...}, "symbolicParameters": [...], "policies": [...], "rejected": [...],
//  "tileOrders": [...], "optimizations": [...]}; every policy and order with its proof (scope, statement) or
// failure (reason, counterexample). A non-empty `checkText` (cusyncgen --check's summary) becomes the string
// field "check", so stdout stays one JSON document.
std::string jsonSummary(const Generation& generation, const std::string& checkText = "");

}  // namespace cusync::codegen
