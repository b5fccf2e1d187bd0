// The independent oracle: a brute-force checker of generated policies and tile orders that knows only the spec IR
// and the functions a header emits (compiled by the host compiler), nothing of cusyncgen's isl model or of its
// index-expression evaluator. It has its own evaluator of spec expressions (floor division, min and max, as spec.h
// defines them), enumerates every consumer tile and the producer tiles it reads straight from the Tile/ForAll/Range
// declarations, and checks, policy by policy, at concrete parameter values:
//   - every producer tile the consumer reads lies inside the producer grid;
//   - sem(p) lies in [0, semaphoreCount) for every producer tile;
//   - for every semaphore a consumer waits on (sem(p) of a tile p it reads): value(p) == the number of producer
//     tiles mapping to it, so the wait passes exactly when every one of them, p included, has posted;
//   - rankInSemaphore is a bijection from the tiles of each waited semaphore onto [0, value);
// and that every tile order is a bijection onto [0, tileCount).
// Values are computed as the emitted C++ computes them (std::uint32_t); grid shapes come from this evaluator.
#pragma once

#include <cusync/dsl/spec.h>
#include <cusync/tile.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cusync::oracle {

using Values = std::map<std::string, std::int64_t>;  // parameter name -> value

// Evaluates a spec expression with floor division, modulo, min and max; dimension values come from `dimensions`.
// Throws std::runtime_error on what the spec language does not define (unknown names, division by zero).
std::int64_t evaluate(const spec::Expr& e, const spec::Spec& spec, const Values& parameters,
                      const Values& dimensions = {});

// The extents of a grid at the given parameter values (1 beyond its rank).
GridShape shapeOf(const spec::Spec& spec, const std::string& grid, const Values& parameters);

// Every consumer tile of a dependency with the producer tiles it reads from producer `producerIndex`, enumerated
// from the declarations. Precondition: the consumer tile's coordinates are distinct dimension names (as in
// every bundled and generated spec), so a consumer tile binds them directly.
struct Read {
  TileCoord consumer;
  std::vector<TileCoord> producers;
  std::vector<std::vector<std::int64_t>> outOfGrid;  // producer coordinates outside the producer grid
};
std::vector<Read> readsOf(const spec::Spec& spec, const spec::Dependency& dependency, std::size_t producerIndex,
                          const Values& parameters);

// A policy as its header emits it.
struct PolicyUnderTest {
  std::string name;
  std::function<std::uint32_t(GridShape)> semaphoreCount;
  std::function<std::uint32_t(TileCoord, GridShape)> sem, value, rankInSemaphore;
};

// What is wrong, one line each (empty: the policy is sound for these reads at these values).
std::vector<std::string> checkPolicy(const PolicyUnderTest& policy, GridShape producerGrid,
                                     const std::vector<Read>& reads);

std::vector<std::string> checkOrder(const std::string& name,
                                    const std::function<std::uint32_t(TileCoord, GridShape)>& index, GridShape grid);

// Every admissible value combination of the symbolic parameters, when there are at most `limit` (the constraints
// evaluated by this evaluator over the box of each parameter's bounds, read from its <=/>= constraints against
// constants); otherwise the default values plus the bounds' corners. Concrete parameters keep their values. The
// given (default) values come first: they are what a proof "for the given values only" covers.
std::vector<Values> admissibleValues(const spec::Spec& spec, std::size_t limit);

}  // namespace cusync::oracle
