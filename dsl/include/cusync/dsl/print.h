// Spec IR back to notation text, for messages, summaries and generated-code comments.
#pragma once

#include <cusync/dsl/spec.h>

#include <string>

namespace cusync::dsl {

// `4*H/(8*TileN)`, `g1.x`, `x + 1`: C++ precedence, minimal parentheses.
std::string toString(const spec::Expr& expr);
// `Tile(x, y)`
std::string toString(const spec::Tile& tile);
// `Range(0, g1.x)` is printed as `Range(g1.x)`.
std::string toString(const spec::Range& range);
// `ForAll(Tile(x, y), x, Range(g1.x))`, or the tile when nothing is ranged.
std::string toString(const spec::TileSet& tileSet);
// `M >= 128`
std::string toString(const spec::Constraint& constraint);

}  // namespace cusync::dsl
