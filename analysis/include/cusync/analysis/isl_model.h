// The isl model of a spec: each grid an isl set of tiles, each dependency an isl relation consumer tile -> producer
// tile. Every check the compiler makes (bounds, policy soundness, tile-order bijectivity) is a question about these.
//
// STABLE API (other components build on it; change only additively):
//   - ModelOptions, IslModel::build, IslModel's accessors listed below, GridModel, ProducerModel, DependencyModel,
//     ConcreteTile, TilePair, ParameterValues, and the helper functions at the bottom of this file.
//   - The shape of the isl objects:
//       * isl parameters are exactly the symbolic spec parameters, named as in the spec, in declaration order
//         (`symbolicParameters()`); concrete parameters are folded into constants.
//       * grid domain:  { G[d0, ..., dn-1] : 0 <= di < extent_i }  with tuple name = grid name, set dims named after
//         the grid's Dimension names (x, y, z in the bundled specs), n = 1..3 as declared. Not intersected with
//         context(); intersect when you need "for all admissible parameters".
//       * dependency relation (per producer):  { C[c] -> P[p] : c in Dom(C), p read by c }  with domain tuple = the
//         consumer grid's name and range tuple = the producer grid's name. The range is NOT clipped to Dom(P): that
//         is exactly what the bounds check tests. After a successful bounds check, range ⊆ Dom(P).
//       * context(): a parameter set holding the constraints of the symbolic parameters (universe if none).
//   - Errors: build() returns std::nullopt and appends located diagnostics; it never throws for spec errors.
// Not stable: the private members, and the text format of toString() (meant for humans and tests' messages).
#pragma once

#include <cusync/dsl/diagnostic.h>
#include <cusync/dsl/spec.h>

#include <isl/cpp.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cusync::analysis {

// Parameter name -> integer value.
using ParameterValues = std::map<std::string, std::int64_t, std::less<>>;

struct ModelOptions {
  // `-D NAME=VALUE`: replaces a parameter's default value (concrete or symbolic). Unknown names are an error.
  ParameterValues overrides;
  // true: symbolic parameters are bound to their (overridden) default value like concrete ones, so every set is
  // a finite, parameter-free set that can be enumerated. false: they stay isl parameters constrained by context().
  bool bindSymbolicParameters = false;
};

// One tile of one grid with concrete coordinates, in the grid's dimension order (x, y, z).
struct ConcreteTile {
  std::string grid;
  std::vector<std::int64_t> coordinates;
  std::string toString() const;  // e.g. "g1[47, 3]"
  friend bool operator==(const ConcreteTile&, const ConcreteTile&) = default;
  friend auto operator<=>(const ConcreteTile&, const ConcreteTile&) = default;
};

// A consumer tile and a producer tile it reads (a point of a dependency relation).
struct TilePair {
  ConcreteTile consumer;
  ConcreteTile producer;
  friend bool operator==(const TilePair&, const TilePair&) = default;
};

struct GridModel {
  spec::Grid grid;                  // the spec's declaration (name, dimensions, extents, location)
  isl::set domain;                  // { G[d...] : 0 <= d_i < extent_i }
  std::vector<isl::pw_aff> extents; // extent_i as an affine function of the symbolic parameters
  // extent_i when it does not depend on a symbolic parameter (always, with bindSymbolicParameters).
  std::vector<std::optional<std::int64_t>> extentValues;
};

struct ProducerModel {
  spec::ProducerTiles producer;      // the spec's producer side (grid name, tile sets, location)
  isl::map relation;                 // union over tileSetRelations
  std::vector<isl::map> tileSetRelations;  // one per spec TileSet, same order; same shape as `relation`
};

struct DependencyModel {
  spec::Dependency dependency;        // the spec's declaration (name, consumer grid and tile, location)
  std::vector<ProducerModel> producers;  // same order as dependency.producers
};

// Owns an isl context and every isl object derived from one Spec. Move-only. All isl objects handed out belong to
// ctx() and must not outlive the model.
class IslModel {
 public:
  // Builds the model. Spec errors (unknown names, wrong number of tile coordinates, non-affine or non-integer
  // expressions, division by zero, extents that are not >= 1 for all admissible parameter values, empty ranges,
  // unsatisfiable constraints, unknown -D names, cycles and self-dependencies in the stage graph: stage_graph.h) are
  // appended to `diagnostics` with their source location; then the result is std::nullopt. The bounds check is separate (bounds_check.h), so a model can show violations.
  static std::optional<IslModel> build(const spec::Spec& spec, const ModelOptions& options,
                                       dsl::Diagnostics& diagnostics);

  IslModel(IslModel&&) noexcept;
  IslModel& operator=(IslModel&&) noexcept;
  IslModel(const IslModel&) = delete;
  IslModel& operator=(const IslModel&) = delete;
  ~IslModel();

  isl::ctx ctx() const;
  const spec::Spec& spec() const;

  // Symbolic parameters that are isl parameters in this model (empty with bindSymbolicParameters).
  const std::vector<std::string>& symbolicParameters() const;
  // The value each parameter has in this model: concrete ones (and bound symbolic ones) as used; symbolic ones
  // their default (after overrides), which code generation uses as the example value.
  const ParameterValues& parameterValues() const;
  // Constraints of the symbolic parameters as a parameter set.
  isl::set context() const;

  const std::vector<GridModel>& grids() const;
  const GridModel& grid(std::string_view name) const;  // precondition: the grid exists (throws std::out_of_range)
  const std::vector<DependencyModel>& dependencies() const;
  const DependencyModel& dependency(std::string_view name) const;  // throws std::out_of_range if absent

  // Points back to tiles. The point must come from a set/map of this model whose tuples are grid names.
  ConcreteTile tileOf(const isl::point& pointOfGridSet) const;
  TilePair tilePairOf(const isl::point& pointOfWrappedRelation) const;  // point of relation.wrap()
  // The parameter values of a point (empty when the model has no symbolic parameters).
  ParameterValues parameterValuesOf(const isl::point& point) const;

  // Human-readable dump of every grid set and dependency relation (isl syntax).
  std::string toString() const;

  struct State;  // opaque: the implementation's storage

 private:
  explicit IslModel(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Every tile of a bounded, parameter-free grid set, in lexicographic order (x outermost, as isl orders tuples).
std::vector<ConcreteTile> tilesOf(const IslModel& model, const isl::set& gridSet);
// Every (consumer, producer) pair of a bounded, parameter-free relation, in lexicographic order.
std::vector<TilePair> tilePairsOf(const IslModel& model, const isl::map& relation);
// Fixes the named isl parameters of `set` to the given values (others stay parameters).
isl::set fixParameters(isl::set set, const ParameterValues& values);
isl::map fixParameters(isl::map map, const ParameterValues& values);

}  // namespace cusync::analysis
