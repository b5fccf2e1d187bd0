#include <cusync/analysis/isl_model.h>
#include <cusync/analysis/stage_graph.h>
#include <cusync/dsl/print.h>

#include "expression_lowering.h"
#include "parameter_products.h"
#include "sampling.h"

#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <set>
#include <tuple>
#include <stdexcept>

namespace cusync::analysis {
namespace {

using detail::ExpressionLowering;
using detail::LoweringFailed;
using detail::LoweringScope;
using detail::describeParameters;
using detail::sampleParameters;

struct ContextDeleter {
  void operator()(isl_ctx* ctx) const { isl_ctx_free(ctx); }
};

constexpr const char* kExtentNames[] = {"x", "y", "z"};

// A tile of the runtime is indexed with 32 bits (GridShape); larger grids cannot run.
constexpr std::int64_t kMaxTilesPerGrid = std::numeric_limits<std::int32_t>::max();

// A map { domain -> tuple[f0, f1, ...] } from one pw_aff per output dimension.
isl::map mapFromCoordinates(const std::vector<isl::pw_aff>& coordinates, const spec::Grid& grid) {
  isl_map* map = isl_map_from_pw_aff(coordinates.at(0).copy());
  for (std::size_t i = 1; i < coordinates.size(); ++i) {
    map = isl_map_flat_range_product(map, isl_map_from_pw_aff(coordinates[i].copy()));
  }
  for (std::size_t i = 0; i < grid.dimensions.size(); ++i) {
    map = isl_map_set_dim_name(map, isl_dim_out, static_cast<unsigned>(i), grid.dimensions[i].c_str());
  }
  map = isl_map_set_tuple_name(map, isl_dim_out, grid.name.c_str());
  return isl::manage(map);
}

std::string valText(const isl::val& value) {
  char* raw = isl_val_to_str(value.get());
  std::string out = raw ? raw : "?";
  free(raw);
  return out;
}

std::string parameterSetText(const isl::set& parameters) {
  char* raw = isl_set_to_str(parameters.get());
  std::string out = raw ? raw : "?";
  free(raw);
  return out;
}

}  // namespace

struct IslModel::State {
  std::unique_ptr<isl_ctx, ContextDeleter> context;  // declared first: destroyed after every isl object below
  spec::Spec spec;
  std::vector<std::string> symbolic;
  ParameterValues values;
  isl::set parameterContext;
  std::vector<GridModel> grids;
  std::vector<DependencyModel> dependencies;

  const GridModel* findGrid(std::string_view name) const {
    for (const auto& g : grids) {
      if (g.grid.name == name) return &g;
    }
    return nullptr;
  }
};

namespace {

class ModelBuilder {
 public:
  ModelBuilder(IslModel::State& state, const ModelOptions& options, dsl::Diagnostics& diagnostics)
      : state_(state), options_(options), diagnostics_(diagnostics) {}

  bool build() {
    for (const auto& d : state_.spec.dimensions) declaredDimensions_.insert(d.name);
    checkNames();
    bindParameterValues();
    if (diagnostics_.hasErrors()) return false;
    detail::ParameterProducts products =
        detail::findParameterProducts(isl::ctx(state_.context.get()), state_.spec, state_.values, state_.symbolic);
    std::size_t firstProduct = state_.symbolic.size();
    for (const auto& product : products.supported) {
      state_.values[product.name] = detail::productValue(isl::ctx(state_.context.get()), state_.spec, state_.values,
                                                         state_.symbolic, product);
      state_.symbolic.push_back(product.name);
    }
    lowering_.emplace(isl::ctx(state_.context.get()), state_.spec, state_.values, state_.symbolic, diagnostics_);
    for (std::size_t i = 0; i < products.supported.size(); ++i)
      lowering_->defineProduct(products.supported[i].name, static_cast<int>(firstProduct + i));
    for (const auto& [name, why] : products.refusals) lowering_->refuseProduct(name, why);
    buildContext();
    for (std::size_t i = 0; i < products.supported.size() && !diagnostics_.hasErrors(); ++i)
      guarded([&] {
        state_.parameterContext = state_.parameterContext.intersect(detail::productDefinition(
            *lowering_, parameterScope("product", {}), products.supported[i], static_cast<int>(firstProduct + i)));
      });
    if (diagnostics_.hasErrors()) return false;
    for (std::size_t g = 0; g < state_.spec.grids.size(); ++g) guarded([&] { buildGrid(g); });
    if (diagnostics_.hasErrors()) return false;
    for (const auto& dependency : state_.spec.dependencies) guarded([&] { buildDependency(dependency); });
    if (state_.spec.dependencies.empty()) {
      diagnostics_.error({}, "the spec declares no dependency (Dep); there is nothing to synchronize");
    }
    // Cycles deadlock whatever the relations say, so a spec with one has no model to check policies against.
    if (!diagnostics_.hasErrors()) checkStageGraph(state_.spec, diagnostics_);
    return !diagnostics_.hasErrors();
  }

 private:
  template <typename Step>
  void guarded(Step step) {
    try {
      step();
    } catch (const LoweringFailed&) {
      // already reported
    } catch (const isl::exception& error) {
      diagnostics_.error({}, fmt::format("internal error from isl: {}", error.what()));
    }
  }

  // Names are unique across all declarations (the parser and C++ scoping guarantee it for one scope; nested C++
  // scopes could shadow).
  void checkNames() {
    std::map<std::string, spec::SourceLocation> seen;
    auto see = [&](const std::string& name, const spec::SourceLocation& location) {
      auto [it, inserted] = seen.emplace(name, location);
      if (!inserted) {
        auto& d = diagnostics_.error(location, fmt::format("redeclaration of '{}'", name));
        d.notes.push_back(fmt::format("previously declared at {}:{}:{}", it->second.file, it->second.line,
                                      it->second.column));
      }
    };
    const auto& spec = state_.spec;
    for (const auto& p : spec.parameters) see(p.name, p.location);
    for (const auto& d : spec.dimensions) see(d.name, d.location);
    for (const auto& g : spec.grids) see(g.name, g.location);
    for (const auto& d : spec.dependencies) see(d.name, d.location);
  }

  void bindParameterValues() {
    for (const auto& [name, value] : options_.overrides) {
      bool known = false;
      for (const auto& p : state_.spec.parameters) known = known || p.name == name;
      if (!known) {
        std::string declared;
        for (const auto& p : state_.spec.parameters) declared += (declared.empty() ? "" : ", ") + p.name;
        diagnostics_.error({}, fmt::format("-D {}={}: the spec declares no parameter '{}' (it declares: {})", name,
                                           value, name, declared.empty() ? "none" : declared));
      }
    }
    for (const auto& p : state_.spec.parameters) {
      auto it = options_.overrides.find(p.name);
      state_.values[p.name] = it != options_.overrides.end() ? it->second : p.defaultValue;
      if (p.symbolic && !options_.bindSymbolicParameters) state_.symbolic.push_back(p.name);
    }
  }

  isl::space parameterSpace() const { return lowering_->setSpace("", {}); }

  LoweringScope parameterScope(std::string role, spec::SourceLocation fallback) const {
    return LoweringScope{parameterSpace(), {}, std::move(role), 0, std::move(fallback)};
  }

  // The constraints of the symbolic parameters; each must also hold for the parameter's own value.
  void buildContext() {
    isl::set context = isl::set::universe(parameterSpace()).params();
    ParameterValues exampleValues = state_.values;
    for (const auto& parameter : state_.spec.parameters) {
      for (const auto& constraint : parameter.constraints) {
        guarded([&] {
          auto scope = parameterScope("constraint", constraint.location);
          isl::pw_aff lhs = lowering_->lower(constraint.lhs, scope);
          isl::pw_aff rhs = lowering_->lower(constraint.rhs, scope);
          isl::set holds;
          switch (constraint.relation) {
            case spec::Constraint::Relation::Less: holds = lhs.lt_set(rhs); break;
            case spec::Constraint::Relation::LessEqual: holds = lhs.le_set(rhs); break;
            case spec::Constraint::Relation::Equal: holds = lhs.eq_set(rhs); break;
            case spec::Constraint::Relation::GreaterEqual: holds = lhs.ge_set(rhs); break;
            case spec::Constraint::Relation::Greater: holds = lhs.gt_set(rhs); break;
          }
          holds = holds.params();
          if (fixParameters(holds, exampleValues).is_empty()) {
            ParameterValues shown;
            for (const auto& p : state_.spec.parameters) {
              if (p.symbolic) shown[p.name] = state_.values[p.name];
            }
            diagnostics_.error(constraint.location,
                               fmt::format("constraint '{}' does not hold for {}", dsl::toString(constraint),
                                           describeParameters(shown)));
          }
          context = context.intersect(holds);
        });
      }
    }
    state_.parameterContext = context;
  }

  void buildGrid(std::size_t index) {
    const spec::Grid& grid = state_.spec.grids[index];
    GridModel model;
    model.grid = grid;
    if (grid.dimensions.empty() || grid.dimensions.size() > 3 || grid.extents.size() != grid.dimensions.size()) {
      diagnostics_.error(grid.location, fmt::format("grid '{}' has {} dimensions and {} extents; a grid has 1 to 3 "
                                                    "dimensions and one extent per dimension",
                                                    grid.name, grid.dimensions.size(), grid.extents.size()));
      throw LoweringFailed{};
    }
    std::set<std::string> used;
    for (const auto& dimension : grid.dimensions) {
      if (!declaredDimensions_.count(dimension)) {
        diagnostics_.error(grid.location, fmt::format("grid '{}' uses undeclared dimension '{}'", grid.name,
                                                      dimension));
        throw LoweringFailed{};
      }
      if (!used.insert(dimension).second) {
        diagnostics_.error(grid.location, fmt::format("grid '{}' lists dimension '{}' twice", grid.name, dimension));
        throw LoweringFailed{};
      }
    }

    isl::space space = lowering_->setSpace(grid.name, grid.dimensions);
    isl::set domain = isl::set::universe(space);
    for (std::size_t i = 0; i < grid.extents.size(); ++i) {
      std::string role = fmt::format("extent of grid '{}'", grid.name);
      auto scope = parameterScope(role, grid.location);
      scope.visibleGrids = index;
      isl::pw_aff extent = lowering_->lower(grid.extents[i], scope);
      checkPositive(extent, grid, i);
      model.extents.push_back(extent);
      model.extentValues.push_back(ExpressionLowering::constantValue(extent));
      LoweringScope gridScope{space, {}, role, index, grid.location};
      isl::pw_aff extentOnGrid = lowering_->lower(grid.extents[i], gridScope);
      isl_local_space* local = isl_local_space_from_space(space.copy());
      isl::pw_aff coordinate =
          isl::manage(isl_pw_aff_from_aff(isl_aff_var_on_domain(local, isl_dim_set, static_cast<unsigned>(i))));
      isl::pw_aff zero = isl::manage(isl_pw_aff_from_aff(
          isl_aff_zero_on_domain(isl_local_space_from_space(space.copy()))));
      domain = domain.intersect(coordinate.ge_set(zero)).intersect(coordinate.lt_set(extentOnGrid));
    }
    checkTileCount(model);
    model.domain = domain;
    state_.grids.push_back(std::move(model));
  }

  isl::pw_aff parameterConstant(std::int64_t value) const {
    isl::space parameters = parameterSpace();
    return isl::manage(isl_pw_aff_from_aff(isl_aff_val_on_domain(
        isl_local_space_from_space(parameters.copy()), isl_val_int_from_si(state_.context.get(), value))));
  }

  // The runtime counts a grid's tiles in 32 bits (GridShape::tileCount, a stage's tickets) and generated functions
  // compute in std::uint32_t, while isl computes with unbounded integers: a grid must have at most
  // kMaxTilesPerGrid tiles for every admissible parameter value, or what is proven is not what runs. The count is
  // exact when at most one extent depends on a symbolic parameter (it is then affine); otherwise isl cannot
  // multiply the extents, and the product of their maxima bounds it.
  void checkTileCount(const GridModel& model) {
    const spec::Grid& grid = model.grid;
    std::vector<isl::val> maxima;
    int varying = 0;
    for (std::size_t i = 0; i < model.extents.size(); ++i) {
      isl::pw_aff extent = model.extents[i].intersect_params(state_.parameterContext);
      isl::val maximum = extent.max_val();
      if (maximum.is_infty()) {
        const spec::Expr& expr = grid.extents[i];
        auto& d = diagnostics_.error(
            ExpressionLowering::locationOf(expr, grid.location),
            fmt::format("{} extent of grid '{}' ({}) has no upper bound for the admissible parameter values; the "
                        "runtime counts a grid's tiles in 32 bits (at most {}), so bound the symbolic parameters "
                        "it uses with Where(...)",
                        kExtentNames[i], grid.name, dsl::toString(expr), kMaxTilesPerGrid));
        d.notes.push_back(fmt::format("admissible: {}", parameterSetText(state_.parameterContext)));
        throw LoweringFailed{};
      }
      maxima.push_back(maximum);
      varying += isl_pw_aff_is_cst(model.extents[i].get()) == isl_bool_true ? 0 : 1;
    }
    isl::val limit(isl::ctx(state_.context.get()), kMaxTilesPerGrid);
    isl::val largest = maxima.front();
    for (std::size_t i = 1; i < maxima.size(); ++i) largest = largest.mul(maxima[i]);
    if (largest.le(limit)) return;
    std::vector<std::string> notes;
    if (varying <= 1) {
      isl::pw_aff count = model.extents.front();
      for (std::size_t i = 1; i < model.extents.size(); ++i) count = count.mul(model.extents[i]);
      count = count.intersect_params(state_.parameterContext);
      largest = count.max_val();
      if (largest.le(limit)) return;
      ParameterValues example =
          sampleParameters(count.gt_set(parameterConstant(kMaxTilesPerGrid)).params(), state_.symbolic);
      if (!example.empty()) notes.push_back(fmt::format("with {}", describeParameters(example)));
    } else {
      notes.push_back("isl cannot multiply two extents that depend on symbolic parameters; the count is bounded by "
                      "the product of the extents' maxima, so bound the parameters so that this product fits");
    }
    for (std::size_t i = 0; i < maxima.size(); ++i)
      notes.push_back(fmt::format("{} extent {} is at most {}", kExtentNames[i], dsl::toString(grid.extents[i]),
                                  valText(maxima[i])));
    auto& d = diagnostics_.error(grid.location,
                                 fmt::format("grid '{}' {} up to {} tiles for the admissible parameter values; the "
                                             "runtime counts a grid's tiles in 32 bits (at most {})",
                                             grid.name, varying <= 1 ? "has" : "may have", valText(largest),
                                             kMaxTilesPerGrid));
    d.notes = std::move(notes);
    throw LoweringFailed{};
  }

  // Extents must be >= 1 for every admissible parameter value; otherwise one counterexample is reported.
  void checkPositive(const isl::pw_aff& extent, const spec::Grid& grid, std::size_t dimension) {
    isl::space parameters = parameterSpace();
    isl::pw_aff one = isl::manage(isl_pw_aff_from_aff(
        isl_aff_val_on_domain(isl_local_space_from_space(parameters.copy()), isl_val_one(state_.context.get()))));
    isl::set bad = extent.lt_set(one).params().intersect(state_.parameterContext);
    if (bad.is_empty()) return;
    ParameterValues example = sampleParameters(bad, state_.symbolic);
    isl::pw_aff atExample = extent;
    std::string value = "< 1";
    if (!example.empty()) {
      isl::set point = fixParameters(isl::set::universe(parameterSpace()), example);
      isl::pw_aff fixed = isl::manage(isl_pw_aff_intersect_params(extent.copy(), point.copy()));
      isl::val v = fixed.max_val();
      if (auto asInt = detail::toInt64(v)) value = std::to_string(*asInt);
    } else if (auto asInt = ExpressionLowering::constantValue(extent)) {
      value = std::to_string(*asInt);
    }
    const spec::Expr& expr = grid.extents[dimension];
    auto& d = diagnostics_.error(ExpressionLowering::locationOf(expr, grid.location),
                                 fmt::format("{} extent of grid '{}' is {} ({} = {}); extents must be at least 1",
                                             kExtentNames[dimension], grid.name,
                                             value == "< 1" ? "not positive" : value, dsl::toString(expr), value));
    if (!example.empty()) d.notes.push_back(fmt::format("with {}", describeParameters(example)));
    throw LoweringFailed{};
  }

  const GridModel& gridOf(const std::string& name, const spec::SourceLocation& location, std::string_view role) {
    if (const GridModel* grid = state_.findGrid(name)) return *grid;
    diagnostics_.error(location, fmt::format("{} grid '{}' is not declared", role, name));
    throw LoweringFailed{};
  }

  void checkCoordinateCount(const spec::Tile& tile, const spec::Grid& grid, const spec::SourceLocation& fallback,
                            std::string_view role) {
    if (tile.coordinates.size() == grid.dimensions.size()) return;
    std::string dimensions;
    for (const auto& d : grid.dimensions) dimensions += (dimensions.empty() ? "" : ", ") + d;
    diagnostics_.error(tile.location.line > 0 ? tile.location : fallback,
                       fmt::format("{} tile {} has {} coordinate(s) but grid '{}' has {} dimension(s) ({})", role,
                                   dsl::toString(tile), tile.coordinates.size(), grid.name, grid.dimensions.size(),
                                   dimensions));
    throw LoweringFailed{};
  }

  // The dimension variables of one dependency: the declared dimensions its tiles, ForAlls and ranges mention, in
  // declaration order. Only these, not every declared Dim: isl's spaces and constraints are dense in their
  // variables, so a space over all n declared dimensions per dependency made memory grow as n^2 (10^5 names: 24 GB).
  std::vector<std::string> dimensionNames(const spec::Dependency& dependency) const {
    std::set<std::string> mentioned;
    auto visit = [&](auto&& self, const spec::Expr& e) -> void {
      if (e.kind == spec::Expr::Kind::Dimension) mentioned.insert(e.name);
      for (const auto& operand : e.operands) self(self, operand);
    };
    for (const auto& c : dependency.consumerTile.coordinates) visit(visit, c);
    for (const auto& producer : dependency.producers)
      for (const auto& tileSet : producer.tiles) {
        for (const auto& c : tileSet.tile.coordinates) visit(visit, c);
        for (const auto& ranged : tileSet.ranges) {
          mentioned.insert(ranged.dimension);
          visit(visit, ranged.range.lower);
          visit(visit, ranged.range.upper);
        }
      }
    std::vector<std::string> names;
    for (const auto& d : state_.spec.dimensions)
      if (mentioned.count(d.name)) names.push_back(d.name);
    return names;
  }

  void buildDependency(const spec::Dependency& dependency) {
    DependencyModel model;
    model.dependency = dependency;
    const GridModel& consumer = gridOf(dependency.consumerGrid, dependency.location, "consumer");
    checkCoordinateCount(dependency.consumerTile, consumer.grid, dependency.location, "consumer");
    if (dependency.producers.empty()) {
      diagnostics_.error(dependency.location, fmt::format("dependency '{}' has no producer", dependency.name));
      throw LoweringFailed{};
    }

    // The dimension variables, bound by the consumer tile: V = [x, y, ...] -> consumer tile.
    std::vector<std::string> variables = dimensionNames(dependency);
    LoweringScope variableScope{lowering_->setSpace("", variables), {}, "tile coordinate",
                                state_.spec.grids.size(), dependency.location};
    for (std::size_t i = 0; i < variables.size(); ++i) variableScope.dimensions[variables[i]] = static_cast<int>(i);
    std::vector<isl::pw_aff> consumerCoordinates;
    for (const auto& c : dependency.consumerTile.coordinates) {
      consumerCoordinates.push_back(lowering_->lower(c, variableScope));
    }
    isl::map consumerMap = mapFromCoordinates(consumerCoordinates, consumer.grid);

    for (const auto& producer : dependency.producers) {
      const GridModel& producerGrid = gridOf(producer.grid, producer.location, "producer");
      ProducerModel producerModel;
      producerModel.producer = producer;
      if (producer.tiles.empty()) {
        diagnostics_.error(producer.location, fmt::format("producer '{}' lists no tile", producer.grid));
        throw LoweringFailed{};
      }
      isl::map relation;
      for (const auto& tileSet : producer.tiles) {
        isl::map variablesToProducer = tileSetMap(tileSet, producerGrid.grid, variables, dependency, consumerMap,
                                                  consumer.domain);
        isl::map tileRelation =
            consumerMap.reverse().apply_range(variablesToProducer).intersect_domain(consumer.domain);
        producerModel.tileSetRelations.push_back(tileRelation);
        relation = relation.is_null() ? tileRelation : relation.unite(tileRelation);
      }
      producerModel.relation = relation.coalesce();
      model.producers.push_back(std::move(producerModel));
    }
    state_.dependencies.push_back(std::move(model));
  }

  // { V[x, y, ...] -> P[p] : p is a tile of the set for these variable values }. Ranged dimensions get their own
  // variables (appended after V), constrained to their range and then projected out.
  // Range bounds may use the dimensions the consumer tile binds (Range(4*x, 4*x + 4): consumer tile x reads a block
  // of four), read with the consumer's binding even for the dimension the ForAll rebinds; `consumerMap` and
  // `consumerDomain` say which variable values are consumer tiles, for the emptiness check.
  isl::map tileSetMap(const spec::TileSet& tileSet, const spec::Grid& grid, const std::vector<std::string>& variables,
                      const spec::Dependency& dependency, const isl::map& consumerMap,
                      const isl::set& consumerDomain) {
    spec::SourceLocation location = tileSet.location.line > 0 ? tileSet.location : dependency.location;
    checkCoordinateCount(tileSet.tile, grid, location, "producer");
    std::vector<std::string> names = variables;
    std::map<std::string, int> bindings;
    for (std::size_t i = 0; i < variables.size(); ++i) bindings[variables[i]] = static_cast<int>(i);
    const std::map<std::string, int> consumerBindings = bindings;
    std::set<std::string> ranged;
    for (const auto& r : tileSet.ranges) {
      if (bindings.count(r.dimension) == 0) {
        diagnostics_.error(location, fmt::format("ForAll ranges over undeclared dimension '{}'", r.dimension));
        throw LoweringFailed{};
      }
      if (!ranged.insert(r.dimension).second) {
        diagnostics_.error(location, fmt::format("ForAll ranges over dimension '{}' twice in one tile set",
                                                 r.dimension));
        throw LoweringFailed{};
      }
      bindings[r.dimension] = static_cast<int>(names.size());
      names.push_back(r.dimension + "'");
    }
    isl::space space = lowering_->setSpace("", names);
    LoweringScope scope{space, bindings, "tile coordinate", state_.spec.grids.size(), location};

    isl::set ranges = isl::set::universe(space);
    for (std::size_t j = 0; j < tileSet.ranges.size(); ++j) {
      const auto& r = tileSet.ranges[j];
      spec::SourceLocation rangeLocation = r.range.location.line > 0 ? r.range.location : location;
      LoweringScope boundScope{space, consumerBindings, "range bound", state_.spec.grids.size(), rangeLocation};
      isl::pw_aff lower = lowering_->lower(r.range.lower, boundScope);
      isl::pw_aff upper = lowering_->lower(r.range.upper, boundScope);
      checkNonEmpty(r, rangeLocation, lower, upper, variables.size(), tileSet.ranges.size(), consumerMap,
                    consumerDomain);
      int position = static_cast<int>(variables.size() + j);
      isl::pw_aff variable = isl::manage(isl_pw_aff_from_aff(isl_aff_var_on_domain(
          isl_local_space_from_space(space.copy()), isl_dim_set, static_cast<unsigned>(position))));
      ranges = ranges.intersect(variable.ge_set(lower)).intersect(variable.lt_set(upper));
    }
    std::vector<isl::pw_aff> coordinates;
    for (const auto& c : tileSet.tile.coordinates) coordinates.push_back(lowering_->lower(c, scope));
    isl::map map = mapFromCoordinates(coordinates, grid).intersect_domain(ranges);
    return isl::manage(isl_map_project_out(map.release(), isl_dim_in, static_cast<unsigned>(variables.size()),
                                           static_cast<unsigned>(tileSet.ranges.size())));
  }

  // A ForAll over an empty range would make a consumer read nothing: certainly a spec mistake. Checked for every
  // consumer tile and admissible parameter value; the example names both.
  void checkNonEmpty(const spec::TileSet::RangedDimension& r, const spec::SourceLocation& location,
                     const isl::pw_aff& lower, const isl::pw_aff& upper, std::size_t variableCount,
                     std::size_t rangedCount, const isl::map& consumerMap, const isl::set& consumerDomain) {
    isl::set empty = isl::manage(isl_set_project_out(upper.le_set(lower).release(), isl_dim_set,
                                                     static_cast<unsigned>(variableCount),
                                                     static_cast<unsigned>(rangedCount)));
    isl::set consumers = consumerMap.intersect_domain(empty).range().intersect(consumerDomain)
                             .intersect_params(state_.parameterContext);
    if (consumers.is_empty()) return;
    auto& d = diagnostics_.error(location, fmt::format("{} over '{}' is empty", dsl::toString(r.range), r.dimension));
    ParameterValues example = sampleParameters(consumers.params(), state_.symbolic);
    isl::set atExample = fixParameters(consumers, example);
    if (auto point = detail::firstPoint(atExample)) {
      ConcreteTile tile;
      const char* grid = isl_set_get_tuple_name(atExample.get());
      tile.grid = grid ? grid : "";
      for (int i = 0; i < static_cast<int>(isl_set_dim(atExample.get(), isl_dim_set)); ++i)
        tile.coordinates.push_back(
            detail::toInt64(isl::manage(isl_point_get_coordinate_val(point->get(), isl_dim_set, i))).value_or(0));
      d.notes.push_back(fmt::format("for consumer tile {}", tile.toString()));
    }
    if (!example.empty()) d.notes.push_back(fmt::format("with {}", describeParameters(example)));
    throw LoweringFailed{};
  }

  IslModel::State& state_;
  std::set<std::string, std::less<>> declaredDimensions_;
  const ModelOptions& options_;
  dsl::Diagnostics& diagnostics_;
  std::optional<ExpressionLowering> lowering_;
};

}  // namespace

std::string ConcreteTile::toString() const {
  std::string out = grid + "[";
  for (std::size_t i = 0; i < coordinates.size(); ++i) out += (i ? ", " : "") + std::to_string(coordinates[i]);
  return out + "]";
}

std::optional<IslModel> IslModel::build(const spec::Spec& spec, const ModelOptions& options,
                                        dsl::Diagnostics& diagnostics) {
  auto state = std::make_unique<State>();
  state->context.reset(isl_ctx_alloc());
  // Errors surface as C++ exceptions (isl's C++ interface) or null results, never as an abort.
  isl_options_set_on_error(state->context.get(), ISL_ON_ERROR_CONTINUE);
  state->spec = spec;
  ModelBuilder builder(*state, options, diagnostics);
  bool ok = false;
  try {
    ok = builder.build();
  } catch (const isl::exception& error) {
    diagnostics.error({}, fmt::format("internal error from isl: {}", error.what()));
  }
  if (!ok) return std::nullopt;
  return IslModel(std::move(state));
}

IslModel::IslModel(std::unique_ptr<State> state) : state_(std::move(state)) {}
IslModel::IslModel(IslModel&&) noexcept = default;
IslModel& IslModel::operator=(IslModel&&) noexcept = default;
IslModel::~IslModel() = default;

isl::ctx IslModel::ctx() const { return isl::ctx(state_->context.get()); }
const spec::Spec& IslModel::spec() const { return state_->spec; }
const std::vector<std::string>& IslModel::symbolicParameters() const { return state_->symbolic; }
const ParameterValues& IslModel::parameterValues() const { return state_->values; }
isl::set IslModel::context() const { return state_->parameterContext; }
const std::vector<GridModel>& IslModel::grids() const { return state_->grids; }
const std::vector<DependencyModel>& IslModel::dependencies() const { return state_->dependencies; }

const GridModel& IslModel::grid(std::string_view name) const {
  if (const GridModel* grid = state_->findGrid(name)) return *grid;
  throw std::out_of_range(fmt::format("no grid '{}' in the model", name));
}

const DependencyModel& IslModel::dependency(std::string_view name) const {
  for (const auto& d : state_->dependencies) {
    if (d.dependency.name == name) return d;
  }
  throw std::out_of_range(fmt::format("no dependency '{}' in the model", name));
}

namespace {

std::string text(const isl::set& set) {
  char* raw = isl_set_to_str(set.get());
  std::string out = raw ? raw : "";
  free(raw);
  return out;
}

std::string text(const isl::map& map) {
  char* raw = isl_map_to_str(map.get());
  std::string out = raw ? raw : "";
  free(raw);
  return out;
}

std::int64_t coordinate(const isl::point& point, isl_dim_type type, int position) {
  auto value = detail::toInt64(isl::manage(isl_point_get_coordinate_val(point.get(), type, position)));
  if (!value) throw std::out_of_range("tile coordinate does not fit in 64 bits");
  return *value;
}

}  // namespace

ConcreteTile IslModel::tileOf(const isl::point& point) const {
  isl_space* space = isl_point_get_space(point.get());
  ConcreteTile tile;
  const char* name = isl_space_get_tuple_name(space, isl_dim_set);
  tile.grid = name ? name : "";
  isl_size dimensions = isl_space_dim(space, isl_dim_set);
  isl_space_free(space);
  for (int i = 0; i < dimensions; ++i) tile.coordinates.push_back(coordinate(point, isl_dim_set, i));
  return tile;
}

TilePair IslModel::tilePairOf(const isl::point& point) const {
  isl_space* wrapped = isl_point_get_space(point.get());
  isl_space* space = isl_space_unwrap(wrapped);
  TilePair pair;
  const char* consumer = isl_space_get_tuple_name(space, isl_dim_in);
  const char* producer = isl_space_get_tuple_name(space, isl_dim_out);
  pair.consumer.grid = consumer ? consumer : "";
  pair.producer.grid = producer ? producer : "";
  isl_size in = isl_space_dim(space, isl_dim_in);
  isl_size out = isl_space_dim(space, isl_dim_out);
  isl_space_free(space);
  for (int i = 0; i < in; ++i) pair.consumer.coordinates.push_back(coordinate(point, isl_dim_set, i));
  for (int i = 0; i < out; ++i) pair.producer.coordinates.push_back(coordinate(point, isl_dim_set, in + i));
  return pair;
}

ParameterValues IslModel::parameterValuesOf(const isl::point& point) const {
  ParameterValues values;
  isl_space* space = isl_point_get_space(point.get());
  isl_size count = isl_space_dim(space, isl_dim_param);
  for (int i = 0; i < count; ++i) {
    const char* name = isl_space_get_dim_name(space, isl_dim_param, static_cast<unsigned>(i));
    values[name ? name : ""] = coordinate(point, isl_dim_param, i);
  }
  isl_space_free(space);
  return values;
}

std::string IslModel::toString() const {
  std::string out;
  out += fmt::format("context: {}\n", text(state_->parameterContext));
  for (const auto& g : state_->grids) out += fmt::format("grid {}: {}\n", g.grid.name, text(g.domain));
  for (const auto& d : state_->dependencies) {
    for (const auto& p : d.producers) {
      out += fmt::format("dependency {} ({} -> {}): {}\n", d.dependency.name, d.dependency.consumerGrid,
                         p.producer.grid, text(p.relation));
    }
  }
  return out;
}

std::vector<ConcreteTile> tilesOf(const IslModel& model, const isl::set& gridSet) {
  std::vector<ConcreteTile> tiles;
  gridSet.foreach_point([&](isl::point point) { tiles.push_back(model.tileOf(point)); });
  std::sort(tiles.begin(), tiles.end(), [](const ConcreteTile& a, const ConcreteTile& b) {
    return a.coordinates < b.coordinates;
  });
  return tiles;
}

std::vector<TilePair> tilePairsOf(const IslModel& model, const isl::map& relation) {
  std::vector<TilePair> pairs;
  relation.wrap().foreach_point([&](isl::point point) { pairs.push_back(model.tilePairOf(point)); });
  std::sort(pairs.begin(), pairs.end(), [](const TilePair& a, const TilePair& b) {
    return std::tie(a.consumer.coordinates, a.producer.coordinates) <
           std::tie(b.consumer.coordinates, b.producer.coordinates);
  });
  return pairs;
}

isl::set fixParameters(isl::set set, const ParameterValues& values) {
  isl_set* raw = set.release();
  for (const auto& [name, value] : values) {
    int position = isl_set_find_dim_by_name(raw, isl_dim_param, name.c_str());
    if (position >= 0) raw = isl_set_fix_val(raw, isl_dim_param, static_cast<unsigned>(position),
                                          isl_val_int_from_si(isl_set_get_ctx(raw), value));
  }
  return isl::manage(raw);
}

isl::map fixParameters(isl::map map, const ParameterValues& values) {
  isl_map* raw = map.release();
  for (const auto& [name, value] : values) {
    int position = isl_map_find_dim_by_name(raw, isl_dim_param, name.c_str());
    if (position >= 0) raw = isl_map_fix_val(raw, isl_dim_param, static_cast<unsigned>(position),
                                          isl_val_int_from_si(isl_map_get_ctx(raw), value));
  }
  return isl::manage(raw);
}

}  // namespace cusync::analysis
