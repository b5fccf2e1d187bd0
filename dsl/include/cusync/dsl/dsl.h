// The C++-embedded dependency DSL: the cuSync paper's Figure 5 notation as C++ types.
//
//   cusync::dsl::SpecRecorder recorder("mlp");
//   {
//     using namespace cusync::dsl;
//     Param H = 12288, TileN = 128;
//     Symbolic M = 1024;
//     Where(M >= 128);
//     Dim x, y;
//     Grid g1(x, y, H/(8*TileN), M/128);
//     ...
//     Dep dep({g2, Tile(x, y)}, {g1, ForAll(Tile(x, y), x, Range(g1.x))});
//   }
//   cusync::spec::Spec spec = recorder.spec();
//
// Every declaration records itself into the innermost live SpecRecorder, in declaration order, producing the same
// IR the .dep parser produces for the same text (a .dep file can be #included inside a function).
//
// Names: C++ gives an object no access to its own name, so each declaration captures std::source_location and
// reads its declarator back from the source file (the file must be readable at run time, as it is for the
// .dep files and tests). The recorded location of a named declaration is its name's, exactly as the parser's.
// Anonymous parts (expressions, tiles, ranges) carry the location of the enclosing declaration.
//
// Arithmetic on integers alone is plain C++ (folded by the compiler, truncating division); as soon as a parameter,
// dimension or grid extent is involved it builds an expression, where `/` and `%` mean floor division and modulo
// as in isl. Checks of meaning (affinity, extents, bounds) happen in the analysis, as for parsed specs.
#pragma once

#include <cusync/dsl/diagnostic.h>
#include <cusync/dsl/limits.h>
#include <cusync/dsl/spec.h>

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

namespace cusync::dsl {

// Collects the declarations made while it is alive (recorders nest; the innermost one records).
class SpecRecorder {
 public:
  explicit SpecRecorder(std::string specName);
  ~SpecRecorder();
  SpecRecorder(const SpecRecorder&) = delete;
  SpecRecorder& operator=(const SpecRecorder&) = delete;

  const spec::Spec& spec() const { return spec_; }
  // Errors found while recording (a name that cannot be read back, a constraint without a symbolic parameter).
  const Diagnostics& diagnostics() const { return diagnostics_; }

  // Used by the declarations below.
  static SpecRecorder& current();
  spec::SourceLocation locate(const std::source_location& where, std::string& name);
  spec::Spec& mutableSpec() { return spec_; }
  Diagnostics& mutableDiagnostics() { return diagnostics_; }

 private:
  spec::Spec spec_;
  Diagnostics diagnostics_;
  SpecRecorder* enclosing_;
};

// An integer expression under construction.
class Term {
 public:
  Term(std::int64_t constant);  // NOLINT(google-explicit-constructor): `8*TileN` needs the conversion
  explicit Term(spec::Expr expr) : expr_(std::move(expr)) {}
  const spec::Expr& expr() const { return expr_; }

 private:
  spec::Expr expr_;
};

Term operator+(const Term& a, const Term& b);
Term operator-(const Term& a, const Term& b);
Term operator*(const Term& a, const Term& b);
Term operator/(const Term& a, const Term& b);
Term operator%(const Term& a, const Term& b);
Term operator-(const Term& a);
Term operator+(const Term& a);
// `min(a, b)`, `max(a, b)`: to clip a Range bound to a grid or an image. Found by ADL and by `using namespace
// cusync::dsl`; they build an expression even for two integers, as the parser does.
Term min(const Term& a, const Term& b);
Term max(const Term& a, const Term& b);

// `B >= 1`: a constraint on symbolic parameters, given to Where.
class Comparison {
 public:
  explicit Comparison(spec::Constraint constraint) : constraint_(std::move(constraint)) {}
  const spec::Constraint& constraint() const { return constraint_; }

 private:
  spec::Constraint constraint_;
};

Comparison operator<(const Term& a, const Term& b);
Comparison operator<=(const Term& a, const Term& b);
Comparison operator==(const Term& a, const Term& b);
Comparison operator>=(const Term& a, const Term& b);
Comparison operator>(const Term& a, const Term& b);

// `Param H = 12288;` a concrete parameter with its default value.
class Param {
 public:
  Param(std::int64_t defaultValue,  // NOLINT(google-explicit-constructor): `Param H = 12288;`
        std::source_location where = std::source_location::current());
  Param(const Param&) = delete;
  Param& operator=(const Param&) = delete;
  operator Term() const;  // NOLINT(google-explicit-constructor)
  const std::string& name() const { return name_; }

 protected:
  Param(std::int64_t defaultValue, bool symbolic, std::source_location where);

 private:
  std::string name_;
};

// `Symbolic M = 1024;` a parameter checked for all values satisfying its constraints (1024 is its example value).
class Symbolic : public Param {
 public:
  Symbolic(std::int64_t defaultValue,  // NOLINT(google-explicit-constructor)
           std::source_location where = std::source_location::current());
};

// `Where(M >= 128, M <= 8192);` constraints, each attached to the latest-declared symbolic parameter it mentions.
void Where(const Comparison& c1, std::source_location where = std::source_location::current());
void Where(const Comparison& c1, const Comparison& c2, std::source_location where = std::source_location::current());
void Where(const Comparison& c1, const Comparison& c2, const Comparison& c3,
           std::source_location where = std::source_location::current());
void Where(const Comparison& c1, const Comparison& c2, const Comparison& c3, const Comparison& c4,
           std::source_location where = std::source_location::current());

// `Dim x, y;` a dimension variable.
class Dim {
 public:
  Dim(std::source_location where = std::source_location::current());  // NOLINT: `Dim x;`
  Dim(const Dim&) = delete;
  Dim& operator=(const Dim&) = delete;
  operator Term() const;  // NOLINT(google-explicit-constructor)
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// `Grid g1(x, y, X, Y);` 1 to 3 dimensions, then one extent per dimension. g1.x, g1.y, g1.z are its extents.
class Grid {
 public:
  Grid(const Dim& d0, const Term& e0, std::source_location where = std::source_location::current());
  Grid(const Dim& d0, const Dim& d1, const Term& e0, const Term& e1,
       std::source_location where = std::source_location::current());
  Grid(const Dim& d0, const Dim& d1, const Dim& d2, const Term& e0, const Term& e1, const Term& e2,
       std::source_location where = std::source_location::current());
  Grid(const Grid&) = delete;
  Grid& operator=(const Grid&) = delete;
  const std::string& name() const { return name_; }

 private:
  void record(std::vector<const Dim*> dimensions, std::vector<Term> extents, const std::source_location& where);
  std::string name_;

 public:
  // Declared after name_: they are built from it.
  Term x{0}, y{0}, z{0};
};

// `Tile(x, y)`: one coordinate per grid dimension, affine in the dimensions.
class Tile {
 public:
  Tile(const Term& c0, std::source_location where = std::source_location::current());
  Tile(const Term& c0, const Term& c1, std::source_location where = std::source_location::current());
  Tile(const Term& c0, const Term& c1, const Term& c2, std::source_location where = std::source_location::current());
  const spec::Tile& tile() const { return tile_; }

 private:
  spec::Tile tile_;
};

// `Range(hi)` = [0, hi), `Range(lo, hi)` = [lo, hi).
class Range {
 public:
  Range(const Term& upper);  // NOLINT(google-explicit-constructor)
  Range(const Term& lower, const Term& upper);
  const spec::Range& range() const { return range_; }

 private:
  spec::Range range_;
};

class ForAll;

// A tile or ForAll where a set of tiles is expected; default-constructed = absent (an unused optional argument).
class TileSetArgument {
 public:
  TileSetArgument() = default;
  TileSetArgument(const Tile& tile);      // NOLINT(google-explicit-constructor)
  TileSetArgument(const ForAll& forAll);  // NOLINT(google-explicit-constructor)
  bool present() const { return present_; }
  const spec::TileSet& tileSet() const { return set_; }

 private:
  spec::TileSet set_;
  bool present_ = false;
};

// `ForAll(tiles, x, Range(lo, hi))`: the tiles with dimension x rebound to every value in [lo, hi).
class ForAll {
 public:
  ForAll(const TileSetArgument& tiles, const Dim& dimension, const Range& range,
         std::source_location where = std::source_location::current());
  const spec::TileSet& tileSet() const { return set_; }

 private:
  spec::TileSet set_;
};

// `{g2, Tile(x, y)}`: the consumer side of a Dep.
class ConsumerTile {
 public:
  ConsumerTile(const Grid& grid, const Tile& tile);
  const std::string& grid() const { return grid_; }
  const spec::Tile& tile() const { return tile_; }

 private:
  std::string grid_;
  spec::Tile tile_;
};

// `{g1, tiles...}`: one producer of a Dep with up to kMaxTileSetsPerProducer tiles or ForAlls.
class ProducerTiles {
 public:
  ProducerTiles() = default;  // absent
  ProducerTiles(const Grid& grid, const TileSetArgument& t0, const TileSetArgument& t1 = {},
                const TileSetArgument& t2 = {}, const TileSetArgument& t3 = {}, const TileSetArgument& t4 = {},
                const TileSetArgument& t5 = {}, const TileSetArgument& t6 = {}, const TileSetArgument& t7 = {});
  bool present() const { return !producer_.grid.empty(); }
  const spec::ProducerTiles& producer() const { return producer_; }

 private:
  spec::ProducerTiles producer_;
};
static_assert(kMaxTileSetsPerProducer == 8, "ProducerTiles' constructor takes kMaxTileSetsPerProducer tiles");

// `Dep dep({g2, cons}, {g1, tiles...}, ...)`: the consumer tile reads all listed producer tiles.
class Dep {
 public:
  Dep(const ConsumerTile& consumer, const ProducerTiles& p0, const ProducerTiles& p1 = {},
      const ProducerTiles& p2 = {}, const ProducerTiles& p3 = {},
      std::source_location where = std::source_location::current());
  Dep(const Dep&) = delete;
  Dep& operator=(const Dep&) = delete;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};
static_assert(kMaxProducersPerDependency == 4, "Dep's constructor takes kMaxProducersPerDependency producers");

}  // namespace cusync::dsl
