// The spec IR: what a dependency spec says, independent of how it was written.
//
// Both front ends produce it: the `.dep` parser and the C++-embedded DSL (Dim, Grid, Tile, ForAll, Range, Dep).
// The analysis (isl model, bounds check, policy proofs) and the code generator consume it and nothing else.
// Host-only header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cusync::spec {

// Where a declaration or expression was written. `file` is empty for declarations without a source file.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

// An integer expression over parameters, grid dimensions and grid extents.
// Grid extents and Range bounds may only use parameters, constants and extents; tile coordinates may also use
// dimensions, and must be affine in them (checked by the analysis, not by construction).
// Division is floor division, as in isl. Min and Max (`min(a, b)`, `max(a, b)`) clip a bound to a grid or an image
// (`Range(max(0, y - 1), min(g1.y, y + 2))`); isl models them as piecewise affine functions.
struct Expr {
  enum class Kind { Constant, Parameter, Dimension, GridExtent, Add, Sub, Mul, FloorDiv, Mod, Neg, Min, Max };
  Kind kind = Kind::Constant;
  std::int64_t value = 0;       // Constant
  std::string name;             // Parameter / Dimension name; grid name for GridExtent
  int dimensionIndex = 0;       // GridExtent: which extent of the grid named `name` (0 = x, 1 = y, 2 = z)
  std::vector<Expr> operands;   // Add, Sub, Mul, FloorDiv, Mod, Min, Max: two; Neg: one
  SourceLocation location;
  friend bool operator==(const Expr&, const Expr&) = default;
};

// A relation a symbolic parameter is known to satisfy, e.g. `B >= 1` or `S <= 4096`.
struct Constraint {
  enum class Relation { Less, LessEqual, Equal, GreaterEqual, Greater };
  Expr lhs;
  Relation relation = Relation::GreaterEqual;
  Expr rhs;
  SourceLocation location;
  friend bool operator==(const Constraint&, const Constraint&) = default;
};

// A named integer. Concrete parameters have a value (overridable from the command line); symbolic ones are
// checked for every value satisfying their constraints, and keep `defaultValue` for code generation.
struct Parameter {
  std::string name;
  std::int64_t defaultValue = 0;
  bool symbolic = false;
  std::vector<Constraint> constraints;
  SourceLocation location;
  friend bool operator==(const Parameter&, const Parameter&) = default;
};

// A named dimension variable (`Dim x, y;`). Dimensions are shared by all grids, as in the cuSync paper.
struct Dimension {
  std::string name;
  SourceLocation location;
  friend bool operator==(const Dimension&, const Dimension&) = default;
};

// The tile space of one kernel: { [d0, d1, d2] : 0 <= di < extents[i] }, with 1 to 3 dims.
struct Grid {
  std::string name;
  std::vector<std::string> dimensions;  // names of Dimension declarations, in x, y, z order
  std::vector<Expr> extents;            // one per dimension, over parameters only
  SourceLocation location;
  friend bool operator==(const Grid&, const Grid&) = default;
};

// A tile as an affine function of the dimension variables: one coordinate expression per grid dimension.
struct Tile {
  std::vector<Expr> coordinates;
  SourceLocation location;
  friend bool operator==(const Tile&, const Tile&) = default;
};

// Range(lo, hi): the half-open interval [lo, hi). `Range(e)` is Range(0, e).
struct Range {
  Expr lower;
  Expr upper;
  SourceLocation location;
  friend bool operator==(const Range&, const Range&) = default;
};

// A set of tiles: `tile` with each listed dimension variable rebound to every value of its range
// (ForAll(ForAll(t, x, r1), y, r2) nests). A plain Tile is a TileSet without ranges.
struct TileSet {
  struct RangedDimension {
    std::string dimension;
    Range range;
    friend bool operator==(const RangedDimension&, const RangedDimension&) = default;
  };
  Tile tile;
  std::vector<RangedDimension> ranges;
  SourceLocation location;
  friend bool operator==(const TileSet&, const TileSet&) = default;
};

// The producer side of a dependency: tiles of one producer grid.
struct ProducerTiles {
  std::string grid;
  std::vector<TileSet> tiles;
  SourceLocation location;
  friend bool operator==(const ProducerTiles&, const ProducerTiles&) = default;
};

// Dep({consumerGrid, consumerTile}, {producerGrid, tiles...}, ...): the consumer tile reads all listed producer
// tiles. The dimension variables are bound by the consumer tile; a ForAll rebinds its dimension.
struct Dependency {
  std::string name;
  std::string consumerGrid;
  Tile consumerTile;
  std::vector<ProducerTiles> producers;
  SourceLocation location;
  friend bool operator==(const Dependency&, const Dependency&) = default;
};

struct Spec {
  std::string name;  // the spec file's stem, or the name given to the embedded DSL
  std::vector<Parameter> parameters;
  std::vector<Dimension> dimensions;
  std::vector<Grid> grids;
  std::vector<Dependency> dependencies;
  friend bool operator==(const Spec&, const Spec&) = default;
};

}  // namespace cusync::spec
