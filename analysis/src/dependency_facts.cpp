#include <cusync/analysis/dependency_facts.h>
#include <cusync/dsl/print.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace cusync::analysis {
namespace {

std::int64_t floorDivide(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

bool mentions(const spec::Expr& expr, const std::string& dimension) {
  if (expr.kind == spec::Expr::Kind::Dimension && expr.name == dimension) return true;
  for (const auto& operand : expr.operands) {
    if (mentions(operand, dimension)) return true;
  }
  return false;
}

// "g1.x", "(hi - lo)", "1"
std::string lengthFormula(const spec::Range& range) {
  bool fromZero = range.lower.kind == spec::Expr::Kind::Constant && range.lower.value == 0;
  if (fromZero) return dsl::toString(range.upper);
  return fmt::format("({} - {})", dsl::toString(range.upper), dsl::toString(range.lower));
}

struct Formula {
  std::string text;
  std::optional<std::int64_t> value;
};

// Sum over tile sets of the product of their range lengths: the count when tile sets are disjoint and each ForAll
// produces distinct tiles (checked against the enumeration by the caller).
Formula tilesPerConsumerFormula(const std::vector<TileSetFacts>& tileSets) {
  std::int64_t constantPart = 0;
  std::vector<std::string> terms;
  std::optional<std::int64_t> total = 0;
  for (const auto& t : tileSets) {
    std::vector<std::string> factors;
    std::optional<std::int64_t> product = 1;
    for (const auto& r : t.ranged) {
      factors.push_back(lengthFormula(r.range));
      if (product && r.lower && r.upper) {
        product = *product * std::max<std::int64_t>(0, *r.upper - *r.lower);
      } else {
        product.reset();
      }
    }
    if (total && product) {
      total = *total + *product;
    } else {
      total.reset();
    }
    if (factors.empty()) {
      ++constantPart;
    } else {
      std::string term;
      for (const auto& f : factors) term += (term.empty() ? "" : "*") + f;
      terms.push_back(term);
    }
  }
  if (constantPart > 0 || terms.empty()) terms.push_back(std::to_string(constantPart));
  std::string text;
  for (const auto& t : terms) text += (text.empty() ? "" : " + ") + t;
  return {text, total};
}

}  // namespace

std::optional<std::int64_t> evaluate(const spec::Expr& expr, const IslModel& model) {
  using Kind = spec::Expr::Kind;
  switch (expr.kind) {
    case Kind::Constant: return expr.value;
    case Kind::Parameter: {
      for (const auto& s : model.symbolicParameters()) {
        if (s == expr.name) return std::nullopt;
      }
      auto it = model.parameterValues().find(expr.name);
      if (it == model.parameterValues().end()) return std::nullopt;
      return it->second;
    }
    case Kind::Dimension: return std::nullopt;
    case Kind::GridExtent: {
      for (const auto& g : model.grids()) {
        if (g.grid.name == expr.name && expr.dimensionIndex >= 0 &&
            expr.dimensionIndex < static_cast<int>(g.extentValues.size())) {
          return g.extentValues[static_cast<std::size_t>(expr.dimensionIndex)];
        }
      }
      return std::nullopt;
    }
    case Kind::Neg: {
      auto v = expr.operands.size() == 1 ? evaluate(expr.operands[0], model) : std::nullopt;
      return v ? std::optional<std::int64_t>(-*v) : std::nullopt;
    }
    default: break;
  }
  if (expr.operands.size() != 2) return std::nullopt;
  auto a = evaluate(expr.operands[0], model);
  auto b = evaluate(expr.operands[1], model);
  if (!a || !b) return std::nullopt;
  switch (expr.kind) {
    case Kind::Add: return *a + *b;
    case Kind::Sub: return *a - *b;
    case Kind::Mul: return *a * *b;
    case Kind::FloorDiv: return *b == 0 ? std::nullopt : std::optional<std::int64_t>(floorDivide(*a, *b));
    case Kind::Mod: return *b == 0 ? std::nullopt : std::optional<std::int64_t>(*a - *b * floorDivide(*a, *b));
    case Kind::Min: return std::min(*a, *b);
    case Kind::Max: return std::max(*a, *b);
    default: return std::nullopt;
  }
}

std::vector<DependencyFacts> computeDependencyFacts(const IslModel& model) {
  if (!model.symbolicParameters().empty()) {
    throw std::invalid_argument("computeDependencyFacts needs a model with symbolic parameters bound");
  }
  std::vector<DependencyFacts> result;
  for (const auto& dependency : model.dependencies()) {
    DependencyFacts facts;
    facts.dependency = dependency.dependency.name;
    facts.consumerGrid = dependency.dependency.consumerGrid;
    const GridModel& consumer = model.grid(facts.consumerGrid);
    std::int64_t consumerTiles = 1;
    for (const auto& e : consumer.extentValues) consumerTiles *= e.value_or(0);
    facts.consumerTiles = consumerTiles;

    for (const auto& producer : dependency.producers) {
      ProducerFacts p;
      p.grid = producer.producer.grid;
      const GridModel& producerGrid = model.grid(p.grid);
      for (const auto& tileSet : producer.producer.tiles) {
        TileSetFacts t;
        t.tileSet = tileSet;
        for (const auto& r : tileSet.ranges) {
          RangedDimensionFacts ranged;
          ranged.dimension = r.dimension;
          ranged.range = r.range;
          ranged.lower = evaluate(r.range.lower, model);
          ranged.upper = evaluate(r.range.upper, model);
          for (std::size_t d = 0; d < tileSet.tile.coordinates.size(); ++d) {
            if (mentions(tileSet.tile.coordinates[d], r.dimension)) ranged.producerDimensions.push_back(d);
          }
          t.ranged.push_back(std::move(ranged));
        }
        p.tileSets.push_back(std::move(t));
      }

      // Enumerate every pair once, grouped by consumer tile: distinct producer tiles and coordinates per dim.
      std::size_t dimensions = producerGrid.grid.dimensions.size();
      struct PerConsumer {
        std::set<std::vector<std::int64_t>> tiles;
        std::vector<std::set<std::int64_t>> along;
      };
      std::map<std::vector<std::int64_t>, PerConsumer> perConsumer;
      std::int64_t pairs = 0;
      struct TooManyPairs {};
      try {
        // The spec's own count bounds the pairs (tile sets may overlap, never exceed it): skip hopeless
        // enumerations at once instead of after kMaxEnumeratedPairs points.
        Formula bound = tilesPerConsumerFormula(p.tileSets);
        if (bound.value && *bound.value > 0 && consumerTiles > kMaxEnumeratedPairs / *bound.value) throw TooManyPairs{};
        producer.relation.wrap().foreach_point([&](isl::point point) {
        if (++pairs > kMaxEnumeratedPairs) throw TooManyPairs{};
        TilePair pair = model.tilePairOf(point);
        auto& entry = perConsumer[pair.consumer.coordinates];
        if (entry.along.empty()) entry.along.resize(dimensions);
        for (std::size_t d = 0; d < dimensions && d < pair.producer.coordinates.size(); ++d) {
          entry.along[d].insert(pair.producer.coordinates[d]);
        }
        entry.tiles.insert(std::move(pair.producer.coordinates));
        });
      } catch (const TooManyPairs&) {
        // The counts are statistics (--check), not part of any proof or header: skip them, say so, go on.
        p.counted = false;
        p.notCountedReason = fmt::format("not counted: too many (consumer, producer) tile pairs at these "
                                         "parameter values (the limit is {})",
                                         kMaxEnumeratedPairs);
        Formula formula = tilesPerConsumerFormula(p.tileSets);
        p.tilesPerConsumerFormula = formula.text;
        facts.producers.push_back(std::move(p));
        continue;
      }
      p.minTilesAlong.assign(dimensions, 0);
      p.maxTilesAlong.assign(dimensions, 0);
      bool first = true;
      for (const auto& [consumerTile, entry] : perConsumer) {
        auto count = static_cast<std::int64_t>(entry.tiles.size());
        p.minTilesPerConsumer = first ? count : std::min(p.minTilesPerConsumer, count);
        p.maxTilesPerConsumer = first ? count : std::max(p.maxTilesPerConsumer, count);
        for (std::size_t d = 0; d < dimensions; ++d) {
          auto along = static_cast<std::int64_t>(entry.along[d].size());
          p.minTilesAlong[d] = first ? along : std::min(p.minTilesAlong[d], along);
          p.maxTilesAlong[d] = first ? along : std::max(p.maxTilesAlong[d], along);
        }
        first = false;
      }
      // Consumer tiles reading nothing (possible only with empty relations) count as 0.
      if (static_cast<std::int64_t>(perConsumer.size()) < consumerTiles) p.minTilesPerConsumer = 0;

      Formula formula = tilesPerConsumerFormula(p.tileSets);
      if (p.uniform() && formula.value && *formula.value == p.maxTilesPerConsumer) {
        p.tilesPerConsumerFormula = formula.text;
      }
      facts.producers.push_back(std::move(p));
    }
    result.push_back(std::move(facts));
  }
  return result;
}

}  // namespace cusync::analysis
