// Index expressions: the small integer language every generated function is written in.
//
// A policy's `sem`, `value` and `semaphoreCount`, and a tile order's `index`, are each one IndexExpression over the
// producer tile's coordinates and the producer grid's extents. The same expression is lowered three ways, so what
// is proven is what is emitted:
//   - to an isl piecewise quasi-affine function (the prover),
//   - to C++ text (the header emitter),
//   - to an integer for one tile (the CPU simulation).
// Host-only header.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <isl/cpp.h>

namespace cusync::codegen {

struct IndexExpression {
  enum class Kind { Constant, Coordinate, Extent, Add, Sub, Mul, FloorDiv, Mod, Min };
  Kind kind = Kind::Constant;
  std::int64_t value = 0;  // Constant
  int dimension = 0;       // Coordinate, Extent: 0 = x, 1 = y, 2 = z
  std::vector<IndexExpression> operands;
  friend bool operator==(const IndexExpression&, const IndexExpression&) = default;
};

// Constructors fold constants and drop neutral operands (0 + e, 1 * e), so emitted code stays readable.
IndexExpression constant(std::int64_t value);
IndexExpression coordinate(int dimension);  // the tile's coordinate along `dimension`
IndexExpression extent(int dimension);      // the grid's extent along `dimension`
IndexExpression operator+(IndexExpression a, IndexExpression b);
IndexExpression operator-(IndexExpression a, IndexExpression b);
IndexExpression operator*(IndexExpression a, IndexExpression b);
IndexExpression floorDiv(IndexExpression a, std::int64_t divisor);  // divisor >= 1
IndexExpression mod(IndexExpression a, std::int64_t divisor);       // divisor >= 1, result in [0, divisor)
IndexExpression min(IndexExpression a, IndexExpression b);

bool isConstant(const IndexExpression& e);

// `e` with every Coordinate(d) replaced by coordinates[d] and every Extent(d) by extents[d]: evaluates an order of
// one grid at a point computed on another (the chain orders).
IndexExpression substitute(const IndexExpression& e, const IndexExpression coordinates[3],
                           const IndexExpression extents[3]);

// C++ text over `tile.x`... and `grid.x`... (the names passed in), unsigned 32-bit arithmetic. Callers guarantee
// that no subtraction goes negative on tiles inside the grid (every formula here is written that way).
std::string toCpp(const IndexExpression& e, const std::string& tileName, const std::string& gridName);

// The value for one tile of a grid with the given extents (coordinates/extents beyond the grid's rank: 0 / 1).
std::int64_t evaluate(const IndexExpression& e, const std::int64_t coordinates[3], const std::int64_t extents[3]);

// Thrown when an expression is not quasi-affine over the grid's dimensions and isl parameters (a product of two
// non-constant factors). The prover then falls back to concrete parameter values.
struct NotAffine : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What isl needs to lower an expression on one grid: the grid's domain space and its extents as functions on it.
struct IslGridContext {
  isl::space domainSpace;                    // { G[d0, ...] }
  std::vector<isl::pw_aff> extentsOnDomain;  // extent_i, as a function on domainSpace (constant in the dims)
  int rank = 0;
  isl::set domain;  // the grid's tiles (optional): a factor constant on them counts as constant in a product
};

// Lowers `e` to a piecewise quasi-affine function on the grid's domain space. Throws NotAffine.
isl::pw_aff toIsl(const IndexExpression& e, const IslGridContext& grid);

}  // namespace cusync::codegen
