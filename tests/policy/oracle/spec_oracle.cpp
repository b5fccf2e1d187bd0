#include "spec_oracle.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>

namespace cusync::oracle {
namespace {

std::int64_t floorDivide(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

const spec::Grid& gridNamed(const spec::Spec& spec, const std::string& name) {
  for (const spec::Grid& grid : spec.grids)
    if (grid.name == name) return grid;
  throw std::runtime_error("oracle: no grid " + name);
}

std::string tileText(const std::vector<std::int64_t>& c) {
  std::string out = "(";
  for (std::size_t i = 0; i < c.size(); ++i) out += (i ? ", " : "") + std::to_string(c[i]);
  return out + ")";
}

std::string tileText(TileCoord t) { return tileText(std::vector<std::int64_t>{t.x, t.y, t.z}); }

}  // namespace

std::int64_t evaluate(const spec::Expr& e, const spec::Spec& spec, const Values& parameters,
                      const Values& dimensions) {
  using Kind = spec::Expr::Kind;
  auto operand = [&](std::size_t i) { return evaluate(e.operands.at(i), spec, parameters, dimensions); };
  switch (e.kind) {
    case Kind::Constant: return e.value;
    case Kind::Parameter: return parameters.at(e.name);
    case Kind::Dimension: {
      auto it = dimensions.find(e.name);
      if (it == dimensions.end()) throw std::runtime_error("oracle: dimension " + e.name + " is not bound");
      return it->second;
    }
    case Kind::GridExtent:
      return evaluate(gridNamed(spec, e.name).extents.at(static_cast<std::size_t>(e.dimensionIndex)), spec,
                      parameters);
    case Kind::Add: return operand(0) + operand(1);
    case Kind::Sub: return operand(0) - operand(1);
    case Kind::Mul: return operand(0) * operand(1);
    case Kind::Neg: return -operand(0);
    case Kind::Min: return std::min(operand(0), operand(1));
    case Kind::Max: return std::max(operand(0), operand(1));
    case Kind::FloorDiv:
    case Kind::Mod: {
      std::int64_t a = operand(0), b = operand(1);
      if (b == 0) throw std::runtime_error("oracle: division by zero");
      std::int64_t q = floorDivide(a, b);
      return e.kind == Kind::FloorDiv ? q : a - b * q;
    }
  }
  throw std::runtime_error("oracle: unknown expression kind");
}

GridShape shapeOf(const spec::Spec& spec, const std::string& name, const Values& parameters) {
  const spec::Grid& grid = gridNamed(spec, name);
  std::uint32_t extents[3] = {1, 1, 1};
  for (std::size_t d = 0; d < grid.extents.size(); ++d) {
    std::int64_t value = evaluate(grid.extents[d], spec, parameters);
    if (value < 1 || value > 0xffffffffLL) throw std::runtime_error("oracle: extent out of range in grid " + name);
    extents[d] = static_cast<std::uint32_t>(value);
  }
  return GridShape{extents[0], extents[1], extents[2]};
}

std::vector<Read> readsOf(const spec::Spec& spec, const spec::Dependency& dependency, std::size_t producerIndex,
                          const Values& parameters) {
  const spec::Grid& consumerGrid = gridNamed(spec, dependency.consumerGrid);
  const spec::ProducerTiles& producer = dependency.producers.at(producerIndex);
  const spec::Grid& producerGrid = gridNamed(spec, producer.grid);
  GridShape consumerShape = shapeOf(spec, consumerGrid.name, parameters);
  GridShape producerShape = shapeOf(spec, producerGrid.name, parameters);
  std::vector<std::string> bound;
  for (const spec::Expr& c : dependency.consumerTile.coordinates) {
    if (c.kind != spec::Expr::Kind::Dimension || std::count(bound.begin(), bound.end(), c.name))
      throw std::runtime_error("oracle: consumer tile coordinates must be distinct dimensions");
    bound.push_back(c.name);
  }
  std::vector<Read> reads;
  for (std::uint32_t z = 0; z < consumerShape.z; ++z)
    for (std::uint32_t y = 0; y < consumerShape.y; ++y)
      for (std::uint32_t x = 0; x < consumerShape.x; ++x) {
        Read read{TileCoord{x, y, z}, {}, {}};
        std::uint32_t c[3] = {x, y, z};
        Values dimensions;
        for (std::size_t d = 0; d < bound.size(); ++d) dimensions[bound[d]] = c[d];
        std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> seen;
        for (const spec::TileSet& tiles : producer.tiles) {
          // Range bounds are read with the consumer's binding; each ForAll then rebinds its dimension.
          std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
          for (const auto& ranged : tiles.ranges)
            ranges.emplace_back(evaluate(ranged.range.lower, spec, parameters, dimensions),
                                evaluate(ranged.range.upper, spec, parameters, dimensions));
          std::vector<std::int64_t> at;
          for (const auto& range : ranges) at.push_back(range.first);
          auto empty = std::any_of(ranges.begin(), ranges.end(), [](const auto& r) { return r.first >= r.second; });
          while (!empty) {
            Values rebound = dimensions;
            for (std::size_t r = 0; r < ranges.size(); ++r) rebound[tiles.ranges[r].dimension] = at[r];
            std::vector<std::int64_t> p;
            for (const spec::Expr& e : tiles.tile.coordinates) p.push_back(evaluate(e, spec, parameters, rebound));
            std::int64_t extent[3] = {producerShape.x, producerShape.y, producerShape.z};
            bool inside = true;
            for (std::size_t d = 0; d < p.size(); ++d) inside = inside && p[d] >= 0 && p[d] < extent[d];
            if (!inside) {
              read.outOfGrid.push_back(p);
            } else {
              p.resize(3, 0);
              TileCoord t{static_cast<std::uint32_t>(p[0]), static_cast<std::uint32_t>(p[1]),
                          static_cast<std::uint32_t>(p[2])};
              if (seen.insert({t.x, t.y, t.z}).second) read.producers.push_back(t);
            }
            // Next point of the ranges' box, innermost ForAll fastest.
            std::size_t r = 0;
            for (; r < ranges.size(); ++r) {
              if (++at[r] < ranges[r].second) break;
              at[r] = ranges[r].first;
            }
            if (r == ranges.size()) break;
          }
        }
        reads.push_back(std::move(read));
      }
  return reads;
}

std::vector<std::string> checkPolicy(const PolicyUnderTest& policy, GridShape grid, const std::vector<Read>& reads) {
  std::vector<std::string> failures;
  auto fail = [&](std::string text) {
    if (failures.size() < 5) failures.push_back(policy.name + ": " + std::move(text));
  };
  const std::uint32_t count = policy.semaphoreCount(grid);
  std::map<std::uint32_t, std::vector<TileCoord>> tilesOf;
  for (std::uint32_t z = 0; z < grid.z; ++z)
    for (std::uint32_t y = 0; y < grid.y; ++y)
      for (std::uint32_t x = 0; x < grid.x; ++x) {
        TileCoord t{x, y, z};
        std::uint32_t s = policy.sem(t, grid);
        if (s >= count) fail("sem" + tileText(t) + " = " + std::to_string(s) + " is outside [0, " +
                             std::to_string(count) + ")");
        tilesOf[s].push_back(t);
      }
  std::set<std::uint32_t> waited;
  for (const Read& read : reads) {
    for (const auto& outside : read.outOfGrid)
      fail("consumer tile " + tileText(read.consumer) + " reads producer tile " + tileText(outside) +
           ", outside the producer grid");
    for (TileCoord p : read.producers) {
      std::uint32_t s = policy.sem(p, grid), v = policy.value(p, grid);
      if (v != tilesOf[s].size())
        fail("consumer tile " + tileText(read.consumer) + " waits on semaphore " + std::to_string(s) + " of tile " +
             tileText(p) + " for value " + std::to_string(v) + ", but " + std::to_string(tilesOf[s].size()) +
             " producer tiles post to it");
      waited.insert(s);
    }
  }
  for (std::uint32_t s : waited) {
    std::set<std::uint32_t> ranks;
    for (TileCoord t : tilesOf[s]) {
      std::uint32_t rank = policy.rankInSemaphore(t, grid);
      if (rank >= tilesOf[s].size() || !ranks.insert(rank).second)
        fail("rankInSemaphore" + tileText(t) + " = " + std::to_string(rank) + " is repeated or outside [0, " +
             std::to_string(tilesOf[s].size()) + ")");
    }
  }
  return failures;
}

std::vector<std::string> checkOrder(const std::string& name,
                                    const std::function<std::uint32_t(TileCoord, GridShape)>& index, GridShape grid) {
  std::vector<std::string> failures;
  const std::uint64_t tiles = std::uint64_t{grid.x} * grid.y * grid.z;
  std::vector<bool> taken(tiles, false);
  for (std::uint32_t z = 0; z < grid.z; ++z)
    for (std::uint32_t y = 0; y < grid.y; ++y)
      for (std::uint32_t x = 0; x < grid.x; ++x) {
        std::uint32_t i = index({x, y, z}, grid);
        if (i >= tiles || taken[i]) {
          if (failures.size() < 5)
            failures.push_back(name + ": index" + tileText(TileCoord{x, y, z}) + " = " + std::to_string(i) +
                               (i >= tiles ? " is outside [0, tileCount)" : " is taken by another tile"));
        } else {
          taken[i] = true;
        }
      }
  return failures;
}

namespace {

bool holds(const spec::Constraint& c, const spec::Spec& spec, const Values& values) {
  std::int64_t l = evaluate(c.lhs, spec, values), r = evaluate(c.rhs, spec, values);
  switch (c.relation) {
    case spec::Constraint::Relation::Less: return l < r;
    case spec::Constraint::Relation::LessEqual: return l <= r;
    case spec::Constraint::Relation::Equal: return l == r;
    case spec::Constraint::Relation::GreaterEqual: return l >= r;
    case spec::Constraint::Relation::Greater: return l > r;
  }
  return false;
}

// Bounds of a symbolic parameter from its constraints of the form `P op constant`.
std::pair<std::int64_t, std::int64_t> boxOf(const spec::Parameter& p, const spec::Spec& spec, const Values& values) {
  std::int64_t low = p.defaultValue, high = p.defaultValue;
  bool hasLow = false, hasHigh = false;
  for (const spec::Constraint& c : p.constraints) {
    if (c.lhs.kind != spec::Expr::Kind::Parameter || c.lhs.name != p.name) continue;
    std::int64_t r = 0;
    try {
      r = evaluate(c.rhs, spec, values);
    } catch (const std::exception&) {
      continue;  // mentions another symbolic parameter
    }
    using R = spec::Constraint::Relation;
    if (c.relation == R::GreaterEqual || c.relation == R::Greater || c.relation == R::Equal) {
      std::int64_t b = c.relation == R::Greater ? r + 1 : r;
      low = hasLow ? std::max(low, b) : b;
      hasLow = true;
    }
    if (c.relation == R::LessEqual || c.relation == R::Less || c.relation == R::Equal) {
      std::int64_t b = c.relation == R::Less ? r - 1 : r;
      high = hasHigh ? std::min(high, b) : b;
      hasHigh = true;
    }
  }
  return {low, high};
}

}  // namespace

std::vector<Values> admissibleValues(const spec::Spec& spec, std::size_t limit) {
  Values defaults;
  std::vector<const spec::Parameter*> symbolic;
  for (const spec::Parameter& p : spec.parameters) {
    defaults[p.name] = p.defaultValue;
    if (p.symbolic) symbolic.push_back(&p);
  }
  std::vector<std::vector<std::int64_t>> candidates;
  std::size_t combinations = 1;
  for (const spec::Parameter* p : symbolic) {
    auto [low, high] = boxOf(*p, spec, defaults);
    candidates.emplace_back();
    std::uint64_t width = static_cast<std::uint64_t>(high - low) + 1;
    combinations = combinations > limit || width > limit ? limit + 1 : combinations * width;
    candidates.back() = {low, high, p->defaultValue, low + (high - low) / 3, low + 2 * (high - low) / 3};
    if (width <= limit) {
      candidates.back().clear();
      for (std::int64_t v = low; v <= high; ++v) candidates.back().push_back(v);
    }
  }
  std::vector<Values> result{defaults};
  if (combinations > limit) {
    // Not every combination: the defaults, then each parameter's candidates with the others at their defaults.
    for (std::size_t i = 0; i < symbolic.size(); ++i)
      for (std::int64_t v : candidates[i]) {
        Values values = defaults;
        values[symbolic[i]->name] = v;
        result.push_back(values);
      }
  } else {
    result.clear();
    std::vector<std::size_t> at(symbolic.size(), 0);
    while (true) {
      Values values = defaults;
      for (std::size_t i = 0; i < symbolic.size(); ++i) values[symbolic[i]->name] = candidates[i][at[i]];
      result.push_back(values);
      std::size_t i = 0;
      for (; i < symbolic.size(); ++i) {
        if (++at[i] < candidates[i].size()) break;
        at[i] = 0;
      }
      if (i == symbolic.size()) break;
    }
  }
  std::vector<Values> admissible;
  result.insert(result.begin(), defaults);  // the given values first: what a proof "for the given values" covers
  for (const Values& values : result) {
    bool ok = true;
    for (const spec::Parameter& p : spec.parameters)
      for (const spec::Constraint& c : p.constraints) ok = ok && holds(c, spec, values);
    if (ok && std::find(admissible.begin(), admissible.end(), values) == admissible.end()) admissible.push_back(values);
  }
  return admissible;
}

}  // namespace cusync::oracle
