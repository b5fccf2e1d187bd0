#include <cusync/analysis/stage_graph.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cusync::analysis {
namespace {

// One "consumer waits on producer" edge, with the dependency that states it.
struct WaitEdge {
  std::size_t consumer = 0, producer = 0;  // indices into spec.grids
  const spec::Dependency* dependency = nullptr;
  const spec::ProducerTiles* producerTiles = nullptr;
};

spec::SourceLocation locationOf(const WaitEdge& edge) {
  if (edge.dependency->location.line > 0) return edge.dependency->location;
  return edge.producerTiles->location;
}

std::string where(const spec::SourceLocation& location) {
  if (location.line == 0) return "";
  return fmt::format(" at {}:{}:{}", location.file, location.line, location.column);
}

// Strongly connected components (Tarjan), iterative so that specs with very many grids cannot overflow the stack.
// Returns the component index of every grid.
std::vector<std::size_t> components(std::size_t gridCount, const std::vector<std::vector<const WaitEdge*>>& out) {
  constexpr std::size_t kUnvisited = static_cast<std::size_t>(-1);
  std::vector<std::size_t> index(gridCount, kUnvisited), low(gridCount, 0), component(gridCount, kUnvisited);
  std::vector<bool> onStack(gridCount, false);
  std::vector<std::size_t> stack;
  std::size_t nextIndex = 0, nextComponent = 0;
  struct Frame {
    std::size_t grid, edge;
  };
  for (std::size_t root = 0; root < gridCount; ++root) {
    if (index[root] != kUnvisited) continue;
    std::vector<Frame> frames{{root, 0}};
    index[root] = low[root] = nextIndex++;
    stack.push_back(root);
    onStack[root] = true;
    while (!frames.empty()) {
      Frame& frame = frames.back();
      std::size_t grid = frame.grid;
      if (frame.edge < out[grid].size()) {
        std::size_t next = out[grid][frame.edge++]->producer;
        if (index[next] == kUnvisited) {
          index[next] = low[next] = nextIndex++;
          stack.push_back(next);
          onStack[next] = true;
          frames.push_back({next, 0});
        } else if (onStack[next]) {
          low[grid] = std::min(low[grid], index[next]);
        }
        continue;
      }
      if (low[grid] == index[grid]) {
        std::size_t member;
        do {
          member = stack.back();
          stack.pop_back();
          onStack[member] = false;
          component[member] = nextComponent;
        } while (member != grid);
        ++nextComponent;
      }
      frames.pop_back();
      if (!frames.empty()) low[frames.back().grid] = std::min(low[frames.back().grid], low[grid]);
    }
  }
  return component;
}

// The cycle that starts with `first`: `first`, then a shortest path (breadth-first) from its producer back to its
// consumer, which exists because both lie in one strongly connected component.
std::vector<const WaitEdge*> cycleStartingWith(const WaitEdge& first, const std::vector<std::size_t>& component,
                                               const std::vector<std::vector<const WaitEdge*>>& out) {
  std::map<std::size_t, const WaitEdge*> reachedBy;
  std::vector<std::size_t> frontier{first.producer};
  reachedBy.emplace(first.producer, nullptr);
  while (!frontier.empty() && reachedBy.count(first.consumer) == 0) {
    std::vector<std::size_t> next;
    for (std::size_t grid : frontier)
      for (const WaitEdge* edge : out[grid])
        if (component[edge->producer] == component[first.consumer] && reachedBy.emplace(edge->producer, edge).second)
          next.push_back(edge->producer);
    frontier = std::move(next);
  }
  std::vector<const WaitEdge*> path;
  for (const WaitEdge* edge = reachedBy.at(first.consumer); edge != nullptr; edge = reachedBy.at(edge->consumer))
    path.push_back(edge);
  std::reverse(path.begin(), path.end());
  path.insert(path.begin(), &first);
  return path;
}

void reportSelfDependency(const WaitEdge& edge, const spec::Spec& spec, dsl::Diagnostics& diagnostics) {
  const std::string& grid = spec.grids[edge.consumer].name;
  auto& d = diagnostics.error(
      locationOf(edge),
      fmt::format("dependency '{}' makes tiles of grid '{}' wait on tiles of '{}' itself: intra-grid dependencies "
                  "(wavefronts) are not supported",
                  edge.dependency->name, grid, grid));
  d.notes.push_back(fmt::format("cycle: {} -> {} (a stage that waits on tiles of its own launch)", grid, grid));
  d.notes.push_back("a stage may only wait on stages launched before it; a wavefront within one grid needs an "
                    "ordering of its tiles that the compiler does not prove yet");
}

void reportCycle(const std::vector<const WaitEdge*>& cycle, const spec::Spec& spec, dsl::Diagnostics& diagnostics) {
  std::string path = spec.grids[cycle.front()->consumer].name;
  for (const WaitEdge* edge : cycle) path += " -> " + spec.grids[edge->producer].name;
  auto& d = diagnostics.error(locationOf(*cycle.front()),
                              fmt::format("dependency cycle between grids: {} (each waits on the next); the stages "
                                          "would deadlock",
                                          path));
  for (const WaitEdge* edge : cycle)
    d.notes.push_back(fmt::format("{} waits on {} through dependency '{}'{}", spec.grids[edge->consumer].name,
                                  spec.grids[edge->producer].name, edge->dependency->name,
                                  where(locationOf(*edge))));
  d.notes.push_back("a stage may only wait on stages launched before it: every tile of the cycle's first stage "
                    "waits, directly or not, for tiles that are produced only after it");
}

}  // namespace

bool checkStageGraph(const spec::Spec& spec, dsl::Diagnostics& diagnostics) {
  std::map<std::string, std::size_t, std::less<>> gridIndex;
  for (std::size_t g = 0; g < spec.grids.size(); ++g) gridIndex.emplace(spec.grids[g].name, g);
  std::vector<WaitEdge> edges;
  for (const spec::Dependency& dependency : spec.dependencies) {
    auto consumer = gridIndex.find(dependency.consumerGrid);
    if (consumer == gridIndex.end()) continue;
    for (const spec::ProducerTiles& producer : dependency.producers) {
      auto producerGrid = gridIndex.find(producer.grid);
      if (producerGrid == gridIndex.end()) continue;
      edges.push_back({consumer->second, producerGrid->second, &dependency, &producer});
    }
  }
  std::vector<std::vector<const WaitEdge*>> out(spec.grids.size());
  bool acyclic = true;
  for (const WaitEdge& edge : edges) {
    if (edge.consumer == edge.producer) {
      reportSelfDependency(edge, spec, diagnostics);
      acyclic = false;
    } else {
      out[edge.consumer].push_back(&edge);
    }
  }
  std::vector<std::size_t> component = components(spec.grids.size(), out);
  std::vector<bool> reported(spec.grids.size(), false);
  // Walk dependencies in declaration order, so the cycle is reported at the first dependency on it.
  for (const WaitEdge& edge : edges) {
    if (edge.consumer == edge.producer || component[edge.consumer] != component[edge.producer]) continue;
    if (reported[component[edge.consumer]]) continue;
    reported[component[edge.consumer]] = true;
    acyclic = false;
    reportCycle(cycleStartingWith(edge, component, out), spec, diagnostics);
  }
  return acyclic;
}

}  // namespace cusync::analysis
